// --net=host: echoes that leave the sandbox, through a host ping socket of the Sentry's.
#include <netinet/in.h>

#include <cstring>

#include "netstack/host.h"
#include "netstack/ping.h"
#include "netstack/stack.h"

namespace sentry::netstack {

namespace {
// Puts `id` (network order) in an echo message's id field, updating the checksum for the
// changed field (RFC 1624, eqn. 3), which also keeps ICMPv6's pseudo-header part right.
void RestoreId(std::vector<uint8_t>& msg, uint16_t id) {
  uint16_t old_id, sum;
  std::memcpy(&old_id, &msg[4], 2);
  std::memcpy(&sum, &msg[2], 2);
  uint32_t s = static_cast<uint16_t>(~sum) + static_cast<uint16_t>(~old_id) + id;
  while (s >> 16) s = (s & 0xffff) + (s >> 16);
  sum = static_cast<uint16_t>(~s);
  std::memcpy(&msg[4], &id, 2);
  std::memcpy(&msg[2], &sum, 2);
}
}  // namespace

Result<size_t> PingSocket::SendHost(std::span<const uint8_t> request, const InetAddr& dst) {
  HostLink* h = nullptr;
  int err = 0;
  {
    absl::MutexLock l(&smu_);
    if (!host_) {
      auto link =
          HostLink::Open(dst, SOCK_DGRAM, &queue_, v6() ? int{IPPROTO_ICMPV6} : int{IPPROTO_ICMP});
      if (link.ok()) {
        host_ = std::move(*link);
        // The reply's TTL, for the guest's IP_RECVTTL / IPV6_RECVHOPLIMIT.
        (void)host_->SetIntOption(v6() ? IPPROTO_IPV6 : IPPROTO_IP,
                                  v6() ? IPV6_RECVHOPLIMIT : IP_RECVTTL, 1);
      } else {
        err = link.error().code();
      }
    }
    h = host_.get();
  }
  if (err == EACCES || err == EPERM) {
    // The host's net.ipv4.ping_group_range (in the Sentry's network namespace) leaves out
    // the Sentry's group: the guest gets what a refused destination gets.
    InetAddr to = dst;
    to.port = 0;
    stack_.policy()->ReportDenied("ping", to,
                                  "the host's net.ipv4.ping_group_range refuses the Sentry");
    return Errno(EPERM);
  }
  if (err != 0) return Errno(err);
  if (raw()) LearnHostSource(dst);
  return h->Send(request, 0, &dst);
}

void PingSocket::LearnHostSource(const InetAddr& dst) {
  {
    absl::MutexLock l(&smu_);
    if (host_source_for_ && host_source_for_->SameIp(dst)) return;
  }
  // What the host's routing picks: the address of a UDP socket connected to `dst` (which
  // sends nothing). The wildcard if there is none.
  InetAddr source = v6() ? InetAddr{} : InetAddr::V4(INADDR_ANY, 0);
  auto probe = HostLink::Open(dst, SOCK_DGRAM, &queue_);
  if (probe.ok() && (*probe)->Connect(dst).ok()) {
    if (Result<InetAddr> local = (*probe)->LocalAddr(); local.ok()) source = *local;
  }
  source.port = 0;
  absl::MutexLock l(&smu_);
  host_source_ = source;
  host_source_for_ = dst;
}

std::optional<Result<RecvResult>> PingSocket::RecvHost(std::span<uint8_t> dst, int flags) {
  using R = Result<RecvResult>;
  for (;;) {
    std::vector<uint8_t> msg(0x10000);
    InetAddr from;
    size_t length = 0;
    int msg_flags = 0, ttl = 64;
    Result<size_t> n = host_->Recv(msg, flags & MSG_PEEK, &from, &length, &msg_flags, &ttl);
    if (!n.ok()) {
      if (n.error() == EAGAIN) return std::nullopt;
      return R(n.error());
    }
    msg.resize(*n);
    from.port = 0;
    // The host put its own ident in the id; the guest expects its own ident (a ping
    // socket) or the id it sent (a raw one).
    if (msg.size() >= 8) RestoreId(msg, raw() ? host_id_ : htons(ident_));
    if (raw()) {
      IcmpPacket packet = v6() ? IcmpPacket{from, host_source_, msg, 0, ttl}
                               : Ipv4IcmpPacket(from, host_source_, ttl, false, msg);
      if (!RawAccepts(packet)) {
        // Filtered out: gone, even when the guest only peeked.
        if (flags & MSG_PEEK) (void)host_->Recv(msg, 0, &from, &length, &msg_flags);
        continue;
      }
      msg = std::move(packet.datagram);
    }
    RecvResult out = CopyDatagram(msg, dst);
    out.from = Format(from);
    out.control.ip = Cmsgs(ttl);
    return R(std::move(out));
  }
}

}  // namespace sentry::netstack
