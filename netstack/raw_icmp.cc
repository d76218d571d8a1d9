// Raw ICMP sockets (netstack/ping.h): what Linux's raw_sendmsg and rawv6_sendmsg accept,
// loopback delivery to every raw ICMP socket of the namespace, ICMP_FILTER / ICMP6_FILTER.
#include <arpa/inet.h>
#include <linux/icmp.h>  // ICMP_FILTER
#include <netinet/icmp6.h>
#include <netinet/in.h>

#include <atomic>
#include <cstring>

#include "netstack/ping.h"
#include "netstack/stack.h"

namespace sentry::netstack {

namespace {
constexpr size_t kIpv4Header = 20;
constexpr size_t kMaxDatagram = 0xffff;  // Linux: EMSGSIZE past this (IPv4: header included)
constexpr int kDefaultTtl = 64;
// Linux's filters read a struct icmphdr (IPv4) or ICMPv6's type, code and checksum; a
// raw ICMP socket never receives a shorter message.
constexpr size_t kFilteredV4 = 8, kFilteredV6 = 4;
constexpr size_t kEchoHeader = 8;  // type, code, checksum, id, sequence

// IPv4 header ids, one counter for the sandbox (Linux's are per destination: both just
// have to change from one datagram to the next).
std::atomic<uint16_t> next_ip_id{1};

bool IsEchoRequest(std::span<const uint8_t> msg, bool v6) {
  return msg.size() >= kEchoHeader && msg[0] == (v6 ? kIcmp6EchoRequest : kIcmpEchoRequest) &&
         msg[1] == 0;
}

// The bits of a filter option: Linux copies what the caller gives, up to the struct's size,
// over the start of the current value.
template <size_t N>
void CopyFilter(std::array<uint32_t, N>& filter, std::span<const uint8_t> val) {
  std::memcpy(filter.data(), val.data(), std::min(val.size(), sizeof(filter)));
}
}  // namespace

IcmpPacket Ipv4IcmpPacket(const InetAddr& src, const InetAddr& dst, int ttl, bool df,
                          std::span<const uint8_t> message) {
  IcmpPacket p{src, dst, std::vector<uint8_t>(kIpv4Header), kIpv4Header, ttl};
  p.src.port = p.dst.port = 0;
  std::vector<uint8_t>& h = p.datagram;
  h[0] = 0x45;  // version 4, five words of header
  uint16_t total = htons(static_cast<uint16_t>(kIpv4Header + message.size()));
  uint16_t id = htons(next_ip_id.fetch_add(1, std::memory_order_relaxed));
  std::memcpy(&h[2], &total, 2);
  std::memcpy(&h[4], &id, 2);
  h[6] = df ? 0x40 : 0;  // Don't Fragment
  h[8] = static_cast<uint8_t>(ttl);
  h[9] = IPPROTO_ICMP;
  std::memcpy(&h[12], &src.ip[12], 4);  // IPv4-mapped: the address is the last four bytes
  std::memcpy(&h[16], &dst.ip[12], 4);
  uint16_t sum = InetChecksum(h);
  std::memcpy(&h[10], &sum, 2);
  h.insert(h.end(), message.begin(), message.end());
  return p;
}

// ---- The namespace's raw sockets ----

void RawIcmpSockets::Add(const std::shared_ptr<PingSocket>& s) {
  absl::MutexLock l(&mu_);
  sockets_[s.get()] = s;
}

void RawIcmpSockets::Remove(const PingSocket* s) {
  absl::MutexLock l(&mu_);
  sockets_.erase(s);
}

void RawIcmpSockets::Deliver(int family, const IcmpPacket& packet) {
  // Taken under mu_, delivered after: DeliverRaw takes the receiver's smu_, and the last
  // reference, if it is dropped here, runs a destructor that takes mu_.
  std::vector<std::shared_ptr<PingSocket>> receivers;
  {
    absl::MutexLock l(&mu_);
    for (const auto& [raw, weak] : sockets_) {
      std::shared_ptr<PingSocket> s = weak.lock();
      if (s && s->family() == family) receivers.push_back(std::move(s));
    }
  }
  for (const std::shared_ptr<PingSocket>& s : receivers) s->DeliverRaw(packet);
}

void PingSocket::DeliverRaw(const IcmpPacket& packet) {
  absl::MutexLock l(&smu_);
  if (RawAccepts(packet)) QueueLocked(Reply{packet.datagram, packet.src, packet.ttl});
}

bool PingSocket::RawAccepts(const IcmpPacket& packet) const {
  // Linux's raw_v4_match / raw_v6_match: the bound address is the destination, the
  // connected one the source.
  if (shut_rd_) return false;
  if (!local_.IsAny() && !local_.SameIp(packet.dst)) return false;
  if (peer_ && !peer_->IsAny() && !peer_->SameIp(packet.src)) return false;
  std::span<const uint8_t> msg = packet.message();
  if (msg.size() < (v6() ? kFilteredV6 : kFilteredV4)) return false;
  uint8_t type = msg[0];
  if (v6()) return (icmp6_filter_[type >> 5] & (1u << (type & 31))) == 0;
  return type >= 32 || (icmp_filter_ & (1u << type)) == 0;
}

// ---- Sending ----

Result<InetAddr> PingSocket::ParseRawDestination(std::span<const uint8_t> addr) {
  sa_family_t family = AF_UNSPEC;
  if (addr.size() >= sizeof(family)) std::memcpy(&family, addr.data(), sizeof(family));
  if (!v6()) {
    if (family != AF_UNSPEC) return ParseAddr(addr);
    // raw_sendmsg takes AF_UNSPEC for AF_INET.
    std::vector<uint8_t> copy(addr.begin(), addr.end());
    family = AF_INET;
    std::memcpy(copy.data(), &family, sizeof(family));
    return ParseAddr(copy);
  }
  if (addr.size() >= sizeof(struct sockaddr_in6) && family == AF_INET6) {
    struct sockaddr_in6 sin6;
    std::memcpy(&sin6, addr.data(), sizeof(sin6));
    // An ICMPv6 raw socket has no IPv4 route (ParseAddr's EINVAL is the ping socket's).
    if (IN6_IS_ADDR_V4MAPPED(&sin6.sin6_addr)) return Errno(ENETUNREACH);
  }
  InetAddr a = SENTRY_TRY(ParseAddr(addr));
  // rawv6_sendmsg: a port is a protocol, and must be the socket's when given.
  if (a.port != 0 && a.port != protocol_) return Errno(EINVAL);
  return a;
}

Result<size_t> PingSocket::SendRaw(SendRequest& req) {
  // raw_sendmsg / rawv6_sendmsg, in their order.
  if (req.data.size() > (v6() ? kMaxDatagram : kMaxDatagram - kIpv4Header)) {
    return Errno(EMSGSIZE);
  }
  if (req.flags & MSG_OOB) return Errno(EOPNOTSUPP);
  InetAddr dst = SENTRY_TRY(SendDestination(req));
  {
    absl::MutexLock l(&smu_);
    if (shut_wr_) return Errno(EPIPE);
  }
  // Linux reads the type and code first (EFAULT when the buffer has none), and IPv6 needs
  // room for the checksum it writes.
  if (req.data.size() < 2) return Errno(EFAULT);
  if (v6() && req.data.size() < kIcmpChecksumAt + 2) return Errno(EINVAL);
  bool local = SENTRY_TRY(Local(dst, "ping"));
  if (local) {
    SendRawLocally(std::vector<uint8_t>(req.data.begin(), req.data.end()), dst);
    return req.data.size();
  }
  if (!IsEchoRequest(req.data, v6())) {
    // Only echoes leave, through a host ping socket: there is no host raw socket to carry
    // anything else.
    InetAddr to = dst;
    to.port = 0;
    stack_.policy()->ReportDenied("raw icmp", to, "only echo requests leave the sandbox");
    return Errno(EPERM);
  }
  {
    absl::MutexLock l(&smu_);
    std::memcpy(&host_id_, &req.data[4], 2);
  }
  return SendHost(req.data, dst);
}

void PingSocket::SendRawLocally(std::vector<uint8_t> msg, const InetAddr& dst) {
  InetAddr to = LoopbackDestination(dst, v6());
  InetAddr from = LoopbackSource();
  int ttl = kDefaultTtl;
  {
    absl::MutexLock l(&smu_);
    auto it = int_opts_.find(v6() ? std::pair{int{IPPROTO_IPV6}, int{IPV6_UNICAST_HOPS}}
                                  : std::pair{int{IPPROTO_IP}, int{IP_TTL}});
    if (it != int_opts_.end() && it->second > 0) ttl = it->second;
  }
  bool valid = true;
  if (v6()) {
    // The kernel's checksum, always (IPV6_CHECKSUM is fixed at 2 for ICMPv6).
    std::memset(&msg[kIcmpChecksumAt], 0, 2);
    uint16_t sum = InetChecksum(msg, IcmpV6PseudoSum(from, to, msg.size()));
    std::memcpy(&msg[kIcmpChecksumAt], &sum, 2);
  } else {
    // The guest's checksum: Linux's icmp_rcv drops (does not answer) a wrong one, which raw
    // sockets still see.
    valid = InetChecksum(msg) == 0;
  }
  DeliverToRawSockets(from, to, ttl, true, msg);
  // Other types have no answer here (Linux answers timestamps too; nothing else).
  if (!valid || !IsEchoRequest(msg, v6())) return;
  DeliverToRawSockets(to, from, kDefaultTtl, false, EchoReply(std::move(msg), to, from));
}

// ---- Options ----

bool PingSocket::IsRawOption(int level, int name) {
  switch (level) {
    case SOL_RAW:
    case IPPROTO_ICMPV6:
      return true;
    case IPPROTO_IP:
      return name == IP_HDRINCL;
    case IPPROTO_IPV6:
      return name == IPV6_HDRINCL || name == IPV6_CHECKSUM;
    default:
      return false;
  }
}

Result<std::vector<uint8_t>> PingSocket::GetRawOption(int level, int name) {
  // IPv6 has its raw options at SOL_RAW too (do_rawv6_getsockopt).
  bool v6_raw_level = v6() && (level == SOL_RAW || level == IPPROTO_IPV6);
  absl::MutexLock l(&smu_);
  if (!v6() && level == SOL_RAW && name == ICMP_FILTER) return OptionBytes(icmp_filter_);
  if (v6() && level == IPPROTO_ICMPV6 && name == ICMP6_FILTER) return OptionBytes(icmp6_filter_);
  if (v6_raw_level && name == IPV6_CHECKSUM) return OptionBytes(int{kIcmpChecksumAt});
  if (v6_raw_level && name == IPV6_HDRINCL) return OptionBytes(0);
  if (!v6() && level == IPPROTO_IP && name == IP_HDRINCL) return OptionBytes(0);
  return Errno(ENOPROTOOPT);
}

Result<void> PingSocket::SetRawOption(int level, int name, std::span<const uint8_t> val) {
  if (!v6() && level == SOL_RAW && name == ICMP_FILTER) {
    std::array<uint32_t, 1> filter;
    absl::MutexLock l(&smu_);
    filter[0] = icmp_filter_;
    CopyFilter(filter, val);
    icmp_filter_ = filter[0];
    return Ok();
  }
  if (v6() && level == IPPROTO_ICMPV6 && name == ICMP6_FILTER) {
    absl::MutexLock l(&smu_);
    CopyFilter(icmp6_filter_, val);
    return Ok();
  }
  bool hdrincl = (!v6() && level == IPPROTO_IP && name == IP_HDRINCL) ||
                 (v6() && (level == SOL_RAW || level == IPPROTO_IPV6) && name == IPV6_HDRINCL);
  bool checksum = v6() && (level == SOL_RAW || level == IPPROTO_IPV6) && name == IPV6_CHECKSUM;
  if (!hdrincl && !checksum) return Errno(ENOPROTOOPT);
  int v = 0;
  if (level == IPPROTO_IP && val.size() == 1) {
    v = val[0];
  } else {
    v = SENTRY_TRY(OptionInt(val));
  }
  // IPV6_CHECKSUM: RFC 3542 forbids it at IPPROTO_IPV6 on ICMPv6 sockets (EINVAL); at
  // SOL_RAW Linux would move the offset, which stays at 2 here (busybox ping6 sets 2).
  if (checksum) {
    if (level == IPPROTO_IPV6 || v != static_cast<int>(kIcmpChecksumAt)) return Errno(EINVAL);
    return Ok();
  }
  // IP_HDRINCL / IPV6_HDRINCL: the guest would write the IP header itself, which only a
  // host raw socket could send as written. Off is accepted.
  if (v != 0) return Errno(ENOPROTOOPT);
  return Ok();
}

}  // namespace sentry::netstack
