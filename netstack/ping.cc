#include "netstack/ping.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

#include "netstack/host.h"
#include "netstack/stack.h"

namespace sentry::netstack {

namespace {
constexpr size_t kHeader = 8;           // type, code, checksum, id, sequence
constexpr size_t kMaxMessage = 0xffff;  // Linux: EMSGSIZE past this
constexpr int kDefaultTtl = 64;
// Offsets in the ICMP header.
constexpr size_t kIdAt = 4;

// Writes a 16-bit field already in network order.
void Put16(std::vector<uint8_t>& d, size_t at, uint16_t v) { std::memcpy(&d[at], &v, 2); }

}  // namespace

uint32_t IcmpV6PseudoSum(const InetAddr& src, const InetAddr& dst, size_t len) {
  uint32_t sum = 0;
  for (const InetAddr* a : {&src, &dst}) {
    for (size_t i = 0; i < 16; i += 2) sum += (a->ip[i] << 8) | a->ip[i + 1];
  }
  sum += static_cast<uint32_t>(len >> 16) + static_cast<uint32_t>(len & 0xffff);
  sum += IPPROTO_ICMPV6;
  return sum;
}

std::vector<uint8_t> EchoReply(std::vector<uint8_t> request, const InetAddr& from,
                               const InetAddr& to) {
  bool v6 = !from.IsV4();
  request[0] = v6 ? kIcmp6EchoReply : kIcmpEchoReply;
  Put16(request, kIcmpChecksumAt, 0);
  uint32_t pseudo = v6 ? IcmpV6PseudoSum(from, to, request.size()) : 0;
  Put16(request, kIcmpChecksumAt, InetChecksum(request, pseudo));
  return request;
}

uint16_t InetChecksum(std::span<const uint8_t> data, uint32_t sum) {
  size_t i = 0;
  for (; i + 1 < data.size(); i += 2) sum += (data[i] << 8) | data[i + 1];
  if (i < data.size()) sum += data[i] << 8;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return htons(static_cast<uint16_t>(~sum));
}

// ---- Idents ----

Result<uint16_t> PingIdents::Take(bool v6, uint16_t ident, bool reuse) {
  absl::MutexLock l(&mu_);
  if (ident == 0) {
    // Autobind picks an ident nobody holds (Linux's rover).
    for (int i = 0; i < 0xffff && ident == 0; i++) {
      if (used_.count({v6, next_}) == 0) ident = next_;
      next_ = next_ == 0xffff ? 1 : next_ + 1;
    }
    if (ident == 0) return Errno(EAGAIN);
  }
  Holders& h = used_[{v6, ident}];
  if (h.count > 0 && (!reuse || h.exclusive > 0)) return Errno(EADDRINUSE);
  h.count++;
  if (!reuse) h.exclusive++;
  return ident;
}

void PingIdents::Release(bool v6, uint16_t ident, bool reuse) {
  absl::MutexLock l(&mu_);
  auto it = used_.find({v6, ident});
  if (it == used_.end()) return;
  if (!reuse) it->second.exclusive--;
  if (--it->second.count == 0) used_.erase(it);
}

// ---- Sockets ----

PingSocket::PingSocket(Stack& stack, int family, int type, int flags, const Ucred& owner)
    : Socket(stack, family, type, family == AF_INET6 ? int{IPPROTO_ICMPV6} : int{IPPROTO_ICMP},
             flags) {
  set_owner_uid(owner.uid);
  if (family == AF_INET) local_ = InetAddr::V4(INADDR_ANY, 0);
  absl::MutexLock l(&smu_);
  // Linux's ping and raw protocol switch entries have INET_PROTOSW_REUSE.
  reuseaddr_ = true;
}

PingSocket::~PingSocket() {
  stack_.Unregister(this);
  if (raw()) stack_.raw_icmp().Remove(this);
  bool bound, reuse;
  uint16_t ident;
  {
    absl::MutexLock l(&smu_);
    bound = bound_;
    reuse = bound_reuse_;
    ident = ident_;
  }
  if (bound) stack_.ping_idents().Release(v6(), ident, reuse);
}

Result<InetAddr> PingSocket::ParseAddr(std::span<const uint8_t> addr) {
  size_t need = v6() ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
  if (addr.size() < need) return Errno(EINVAL);
  sa_family_t family;
  std::memcpy(&family, addr.data(), sizeof(family));
  if (family != family_) return Errno(EAFNOSUPPORT);
  if (!v6()) {
    struct sockaddr_in sin;
    std::memcpy(&sin, addr.data(), sizeof(sin));
    return InetAddr::V4(ntohl(sin.sin_addr.s_addr), ntohs(sin.sin_port));
  }
  struct sockaddr_in6 sin6;
  std::memcpy(&sin6, addr.data(), sizeof(sin6));
  InetAddr a;
  std::memcpy(a.ip.data(), &sin6.sin6_addr, 16);
  a.port = ntohs(sin6.sin6_port);
  a.scope_id = sin6.sin6_scope_id;
  // An IPv6 ping socket sends ICMPv6 only: an IPv4-mapped destination is not one (Linux
  // refuses it the same way).
  if (a.IsV4()) return Errno(EINVAL);
  return a;
}

SockAddr PingSocket::Format(const InetAddr& a) const { return FormatSockAddr(a, v6()); }

Result<bool> PingSocket::Local(const InetAddr& dst, const char* what) {
  if (dst.IsAny() || dst.IsLoopback()) {
    if (!stack_.loopback_up()) return Errno(dst.IsV4() ? ENETUNREACH : EADDRNOTAVAIL);
    return true;
  }
  if (stack_.mode() != NetMode::kHost) return Errno(ENETUNREACH);
  // An echo has no port: it is checked as port 0, which only rules without a port range
  // (or whose range includes 0) cover.
  InetAddr to = dst;
  to.port = 0;
  EgressPolicy& policy = *stack_.policy();
  if (std::optional<std::string> why = policy.Denied(to)) {
    policy.ReportDenied(what, to, *why);
    return Errno(EPERM);
  }
  return false;
}

Result<void> PingSocket::AutobindLocked() {
  if (bound_) return Ok();
  ident_ = SENTRY_TRY(stack_.ping_idents().Take(v6(), 0, reuseaddr_));
  bound_ = true;
  bound_reuse_ = reuseaddr_;
  return Ok();
}

Result<void> PingSocket::Bind(std::span<const uint8_t> addr, PathOps&) {
  InetAddr a = SENTRY_TRY(ParseAddr(addr));
  // The sandbox has no other address of its own to bind to.
  if (!a.IsAny() && !a.IsLoopback()) return Errno(EADDRNOTAVAIL);
  absl::MutexLock l(&smu_);
  if (raw()) {
    // A raw socket has no ident, and may bind again until it connects (raw_bind).
    if (peer_) return Errno(EINVAL);
    local_ = a;
    local_.port = 0;
    return Ok();
  }
  if (bound_) return Errno(EINVAL);
  ident_ = SENTRY_TRY(stack_.ping_idents().Take(v6(), a.port, reuseaddr_));
  bound_ = true;
  bound_reuse_ = reuseaddr_;
  local_ = a;
  local_.port = 0;
  return Ok();
}

Result<void> PingSocket::Connect(Caller&, std::span<const uint8_t> addr, PathOps&) {
  if (addr.size() >= sizeof(sa_family_t)) {
    sa_family_t family;
    std::memcpy(&family, addr.data(), sizeof(family));
    if (family == AF_UNSPEC) {
      absl::MutexLock l(&smu_);
      peer_.reset();
      return Ok();
    }
  }
  InetAddr dst = SENTRY_TRY(ParseAddr(addr));
  SENTRY_TRY(Local(dst, "connect"));
  absl::MutexLock l(&smu_);
  if (!raw()) SENTRY_TRY(AutobindLocked());
  peer_ = dst;  // getpeername shows the port given, though an echo has none
  return Ok();
}

Result<void> PingSocket::Shutdown(int how) {
  if (how < SHUT_RD || how > SHUT_RDWR) return Errno(EINVAL);
  absl::MutexLock l(&smu_);
  if (!peer_) return Errno(ENOTCONN);
  if (how != SHUT_WR) shut_rd_ = true;
  if (how != SHUT_RD) shut_wr_ = true;
  queue_.Notify(kAllEvents);
  return Ok();
}

Result<SockAddr> PingSocket::SockName() {
  absl::MutexLock l(&smu_);
  InetAddr a = local_;
  a.port = raw() ? protocol_ : ident_;  // a raw socket's "port" is its protocol
  return Format(a);
}

Result<SockAddr> PingSocket::PeerName() {
  absl::MutexLock l(&smu_);
  // Linux's inet_getname: a raw socket connected with port 0 (the usual) looks unconnected.
  if (!peer_ || (raw() && peer_->port == 0)) return Errno(ENOTCONN);
  return Format(*peer_);
}

Result<size_t> PingSocket::Send(Caller&, SendRequest& req, PathOps&) {
  if (raw()) return SendRaw(req);
  // Linux's ping_common_sendmsg checks, in its order.
  if (req.data.size() > kMaxMessage) return Errno(EMSGSIZE);
  if (req.data.size() < kHeader) return Errno(EINVAL);
  if (req.flags & MSG_OOB) return Errno(EOPNOTSUPP);
  uint8_t want = v6() ? kIcmp6EchoRequest : kIcmpEchoRequest;
  if (req.data[0] != want || req.data[1] != 0) return Errno(EINVAL);
  InetAddr dst = SENTRY_TRY(SendDestination(req));
  {
    absl::MutexLock l(&smu_);
    if (shut_wr_) return Errno(EPIPE);
    SENTRY_TRY(AutobindLocked());
  }
  bool local = SENTRY_TRY(Local(dst, "ping"));
  if (!local) return SendHost(req.data, dst);
  AnswerLocally(std::vector<uint8_t>(req.data.begin(), req.data.end()), dst);
  return req.data.size();
}

Result<InetAddr> PingSocket::SendDestination(const SendRequest& req) {
  if (!req.to.empty()) return raw() ? ParseRawDestination(req.to) : ParseAddr(req.to);
  absl::MutexLock l(&smu_);
  if (!peer_) return Errno(EDESTADDRREQ);
  return *peer_;
}

void PingSocket::QueueLocked(Reply reply) {
  if (shut_rd_ || rx_bytes_ + reply.data.size() > static_cast<size_t>(rcvbuf_)) return;
  rx_bytes_ += reply.data.size();
  rx_.push_back(std::move(reply));
  queue_.Notify(kEventIn);
}

void PingSocket::DeliverToRawSockets(const InetAddr& from, const InetAddr& to, int ttl, bool df,
                                     std::vector<uint8_t> message) {
  RawIcmpSockets& raws = stack_.raw_icmp();
  if (v6()) {
    raws.Deliver(family_, IcmpPacket{from, to, std::move(message), 0, ttl});
  } else {
    raws.Deliver(family_, Ipv4IcmpPacket(from, to, ttl, df, message));
  }
}

InetAddr PingSocket::LoopbackSource() {
  absl::MutexLock l(&smu_);
  if (!local_.IsAny()) return local_;
  // Linux's route to any loopback address (or the wildcard) has lo's own as its source.
  return v6() ? InetAddr::V6Loopback(0) : InetAddr::V4(INADDR_LOOPBACK, 0);
}

InetAddr LoopbackDestination(const InetAddr& dst, bool v6) {
  InetAddr to = dst;
  to.port = 0;
  if (to.IsAny()) to = v6 ? InetAddr::V6Loopback(0) : InetAddr::V4(INADDR_LOOPBACK, 0);
  return to;
}

void PingSocket::AnswerLocally(std::vector<uint8_t> msg, const InetAddr& dst) {
  InetAddr from = LoopbackDestination(dst, v6());  // an echo to the wildcard: lo answers
  InetAddr to = LoopbackSource();                  // the bound address, or lo's own
  std::vector<uint8_t> reply;
  {
    absl::MutexLock l(&smu_);
    // The request as it goes on the wire: the ident in the id, the checksum the kernel's.
    Put16(msg, kIdAt, htons(ident_));
    Put16(msg, kIcmpChecksumAt, 0);
    uint32_t pseudo = v6() ? IcmpV6PseudoSum(to, from, msg.size()) : 0;
    Put16(msg, kIcmpChecksumAt, InetChecksum(msg, pseudo));
    reply = EchoReply(msg, from, to);
    QueueLocked(Reply{reply, from, kDefaultTtl});
  }
  // Raw ICMP sockets see both on the wire, as on Linux.
  DeliverToRawSockets(to, from, kDefaultTtl, true, std::move(msg));
  DeliverToRawSockets(from, to, kDefaultTtl, false, std::move(reply));
}

Result<RecvResult> PingSocket::Recv(Caller& c, std::span<uint8_t> dst, int flags) {
  if (flags & MSG_OOB) return Errno(EOPNOTSUPP);
  // The error queue (IP_RECVERR) stays empty: the sandbox's loopback never fails an echo,
  // and host errors are not relayed.
  if (flags & MSG_ERRQUEUE) return Errno(EAGAIN);
  using R = Result<RecvResult>;
  return Block<RecvResult>(c, kEventIn, NonBlock(flags), [&]() -> std::optional<R> {
    absl::MutexLock l(&smu_);
    if (!rx_.empty()) {
      Reply& r = rx_.front();
      RecvResult out = CopyDatagram(r.data, dst);
      out.from = Format(r.from);
      out.control.ip = Cmsgs(r.ttl);
      if (!(flags & MSG_PEEK)) {
        rx_bytes_ -= r.data.size();
        rx_.pop_front();
      }
      return R(std::move(out));
    }
    if (int e = std::exchange(error_, 0)) return R(Errno(e));
    if (shut_rd_) return R(RecvResult{});
    if (host_) return RecvHost(dst, flags);
    return std::nullopt;
  });
}

std::vector<IpCmsg> PingSocket::Cmsgs(int ttl) const {
  std::vector<IpCmsg> out;
  auto on = [&](int level, int name) {
    auto it = int_opts_.find({level, name});
    return it != int_opts_.end() && it->second != 0;
  };
  auto add = [&](int level, int type, int v) { out.push_back({level, type, OptionBytes(v)}); };
  if (v6()) {
    if (on(IPPROTO_IPV6, IPV6_RECVHOPLIMIT)) add(IPPROTO_IPV6, IPV6_HOPLIMIT, ttl);
    if (on(IPPROTO_IPV6, IPV6_RECVTCLASS)) add(IPPROTO_IPV6, IPV6_TCLASS, 0);
    // RFC 2292's spelling, after the others as Linux writes them (busybox ping6 asks so).
    if (on(IPPROTO_IPV6, IPV6_2292HOPLIMIT)) add(IPPROTO_IPV6, IPV6_2292HOPLIMIT, ttl);
    return out;
  }
  if (on(IPPROTO_IP, IP_RECVTTL)) add(IPPROTO_IP, IP_TTL, ttl);
  if (on(IPPROTO_IP, IP_RECVTOS)) {
    out.push_back({IPPROTO_IP, IP_TOS, {0}});  // one byte, as Linux writes it
  }
  return out;
}

Result<std::vector<uint8_t>> PingSocket::GetOption(int level, int name) {
  if (raw() && IsRawOption(level, name)) return GetRawOption(level, name);
  int my_level = v6() ? IPPROTO_IPV6 : IPPROTO_IP;
  if (level == IPPROTO_IP || level == IPPROTO_IPV6) {
    if (level != my_level && !(v6() && level == IPPROTO_IP)) return Errno(ENOPROTOOPT);
    absl::MutexLock l(&smu_);
    auto it = int_opts_.find({level, name});
    if (it != int_opts_.end()) return OptionBytes(it->second);
    bool hops = (level == IPPROTO_IP && name == IP_TTL) ||
                (level == IPPROTO_IPV6 && name == IPV6_UNICAST_HOPS);
    return OptionBytes(hops ? kDefaultTtl : 0);
  }
  return Socket::GetOption(level, name);
}

Result<void> PingSocket::SetOption(int level, int name, std::span<const uint8_t> val) {
  if (raw() && IsRawOption(level, name)) return SetRawOption(level, name, val);
  if (level == IPPROTO_IP || level == IPPROTO_IPV6) {
    if (level == IPPROTO_IPV6 && !v6()) return Errno(ENOPROTOOPT);
    // Linux accepts a single byte for the IP-level flags; an int otherwise.
    int v = 0;
    if (val.size() >= sizeof(int)) {
      v = SENTRY_TRY(OptionInt(val));
    } else if (level == IPPROTO_IP && val.size() == 1) {
      v = val[0];
    } else {
      return Errno(EINVAL);
    }
    absl::MutexLock l(&smu_);
    int_opts_[{level, name}] = v;
    return Ok();
  }
  return Socket::SetOption(level, name, val);
}

EventMask PingSocket::Readiness(EventMask mask) {
  absl::MutexLock l(&smu_);
  EventMask m = kEventOut;
  if (!rx_.empty()) m |= kEventIn;
  if (error_) m |= kEventErr;
  if (host_) m |= host_->Readiness() & (kEventIn | kEventErr);
  if (shut_rd_) m |= kEventIn | kEventRdHup;
  if (shut_rd_ && shut_wr_) m |= kEventHup;
  return m & (mask | kEventHup | kEventErr);
}

size_t PingSocket::InQueue() {
  absl::MutexLock l(&smu_);
  return rx_.empty() ? 0 : rx_.front().data.size();
}

}  // namespace sentry::netstack
