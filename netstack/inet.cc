#include "netstack/inet.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_format.h"
#include "netstack/dns.h"
#include "netstack/host.h"
#include "netstack/host_interfaces.h"
#include "netstack/stack.h"

namespace sentry::netstack {

namespace {
// The UDP level options Linux knows (udp_lib_setsockopt), at SOL_UDP or SOL_UDPLITE alike
// on either protocol; only UDP-Lite sockets may set the checksum coverages.
constexpr int kUdpliteSendCscov = 10;
constexpr int kUdpliteRecvCscov = 11;
bool UdpOption(int name) {
  switch (name) {
    case 1:    // UDP_CORK
    case 100:  // UDP_ENCAP
    case 101:  // UDP_NO_CHECK6_TX
    case 102:  // UDP_NO_CHECK6_RX
    case 103:  // UDP_SEGMENT
    case 104:  // UDP_GRO
    case kUdpliteSendCscov:
    case kUdpliteRecvCscov:
      return true;
    default:
      return false;
  }
}

constexpr uint16_t kEphemeralLow = 32768;  // net.ipv4.ip_local_port_range
constexpr uint16_t kEphemeralHigh = 60999;
constexpr int kSomaxconn = 4096;
// A loopback TCP connection buffers up to Linux's largest autotuned send buffer
// (tcp_wmem[2]) per direction: fewer wake-ups on bulk transfers, bounded memory.
constexpr size_t kTcpCapacity = 4 << 20;
constexpr size_t kMaxUdpV4 = 65507;
constexpr size_t kMaxUdpV6 = 65527;
// TCP states as /proc/net/tcp numbers them.
constexpr int kTcpEstablished = 1, kTcpClose = 7, kTcpListen = 10;
}  // namespace

// ---- Addresses ----

bool InetAddr::IsV4() const {
  static constexpr uint8_t kPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(ip.data(), kPrefix, 12) == 0;
}

bool InetAddr::IsAny() const {
  std::array<uint8_t, 16> zero{};
  if (ip == zero) return true;
  return IsV4() && ip[12] == 0 && ip[13] == 0 && ip[14] == 0 && ip[15] == 0;
}

bool InetAddr::IsLoopback() const {
  if (IsV4()) return ip[12] == 127;
  std::array<uint8_t, 16> one{};
  one[15] = 1;
  return ip == one;
}

InetAddr InetAddr::V4(uint32_t host_order_ip, uint16_t port) {
  InetAddr a;
  a.ip[10] = a.ip[11] = 0xff;
  uint32_t n = htonl(host_order_ip);
  std::memcpy(&a.ip[12], &n, 4);
  a.port = port;
  return a;
}

InetAddr InetAddr::V6Loopback(uint16_t port) {
  InetAddr a;
  a.ip[15] = 1;
  a.port = port;
  return a;
}

std::string InetAddr::ToString() const {
  char buf[INET6_ADDRSTRLEN];
  if (IsV4()) {
    inet_ntop(AF_INET, &ip[12], buf, sizeof(buf));
    return absl::StrFormat("%s:%u", buf, port);
  }
  inet_ntop(AF_INET6, ip.data(), buf, sizeof(buf));
  return absl::StrFormat("[%s]:%u", buf, port);
}

// ---- Ports ----

bool InetPorts::Overlap(const Binding& a, const Binding& b) {
  // Which kinds of destination each binding takes: IPv4, IPv6.
  auto takes = [](const Binding& x, bool v4) {
    if (!x.v6) return v4;
    if (x.addr.IsAny() && !x.addr.IsV4()) return v4 ? !x.v6only : true;
    return x.addr.IsV4() == v4;
  };
  for (bool v4 : {true, false}) {
    if (!takes(a, v4) || !takes(b, v4)) continue;
    if (a.addr.IsAny() || b.addr.IsAny() || a.addr.SameIp(b.addr)) return true;
  }
  return false;
}

bool InetPorts::Accepts(const Binding& b, const InetAddr& dst, bool from_v6) {
  if (!b.v6 && !dst.IsV4()) return false;
  if (b.v6 && dst.IsV4() && b.v6only) return false;
  (void)from_v6;
  if (b.addr.IsAny()) {
    // A wildcard of the other family: :: takes IPv4 (unless v6only); 0.0.0.0 only IPv4.
    return b.v6 || dst.IsV4();
  }
  return b.addr.SameIp(dst);
}

Result<uint16_t> InetPorts::Bind(int proto, Binding b) {
  // The sockets looked at, released after mu_: should one be the last reference, its
  // destructor calls Unbind, which takes mu_.
  std::vector<std::shared_ptr<InetSocket>> held;
  absl::MutexLock l(&mu_);
  auto free_for = [&](uint16_t port) -> bool {
    auto it = ports_.find({proto, port});
    if (it == ports_.end()) return true;
    for (const Binding& o : it->second) {
      auto s = held.emplace_back(o.socket.lock());
      if (!s) continue;
      if (!Overlap(o, b)) continue;
      if (b.reuseport && o.reuseport && b.uid == o.uid) continue;
      // SO_REUSEADDR on both sides shares a port, except with a TCP listener on it.
      if (b.reuseaddr && o.reuseaddr && (proto != IPPROTO_TCP || !s->listening())) continue;
      return false;
    }
    return true;
  };
  if (b.addr.port == 0) {
    uint32_t span = kEphemeralHigh - kEphemeralLow + 1;
    uint32_t start = rng_() % span;
    bool found = false;
    for (uint32_t i = 0; i < span; i++) {
      uint16_t p = static_cast<uint16_t>(kEphemeralLow + (start + i) % span);
      if (ports_.count({proto, p}) == 0 || free_for(p)) {
        b.addr.port = p;
        found = true;
        break;
      }
    }
    if (!found) return Errno(EADDRINUSE);
  } else if (!free_for(b.addr.port)) {
    return Errno(EADDRINUSE);
  }
  auto& v = ports_[{proto, b.addr.port}];
  std::erase_if(v, [](const Binding& o) { return o.socket.expired(); });
  v.push_back(b);
  return b.addr.port;
}

void InetPorts::Unbind(int proto, uint16_t port, const InetSocket* s) {
  absl::MutexLock l(&mu_);
  auto it = ports_.find({proto, port});
  if (it == ports_.end()) return;
  std::erase_if(it->second, [&](const Binding& o) { return o.raw == s || o.socket.expired(); });
  if (it->second.empty()) ports_.erase(it);
}

std::vector<std::shared_ptr<InetSocket>> InetPorts::Find(int proto, const InetAddr& dst,
                                                         bool from_v6) {
  absl::MutexLock l(&mu_);
  std::vector<std::shared_ptr<InetSocket>> exact, wild;
  auto it = ports_.find({proto, dst.port});
  if (it == ports_.end()) return {};
  for (const Binding& b : it->second) {
    if (!Accepts(b, dst, from_v6)) continue;
    if (auto s = b.socket.lock()) (b.addr.IsAny() ? wild : exact).push_back(std::move(s));
  }
  exact.insert(exact.end(), wild.begin(), wild.end());
  return exact;
}

std::vector<std::shared_ptr<InetSocket>> InetPorts::All(int proto) {
  absl::MutexLock l(&mu_);
  std::vector<std::shared_ptr<InetSocket>> out;
  for (auto& [key, v] : ports_) {
    if (key.first != proto) continue;
    for (const Binding& b : v) {
      if (auto s = b.socket.lock()) out.push_back(std::move(s));
    }
  }
  return out;
}

// ---- Sockets ----

InetSocket::InetSocket(Stack& stack, int family, int type, int protocol, int flags,
                       const Ucred& owner)
    : Socket(stack, family, type, protocol, flags) {
  set_owner_uid(owner.uid);
  if (family == AF_INET) local_ = InetAddr::V4(INADDR_ANY, 0);
  peer_ = local_;
}

InetSocket::~InetSocket() {
  stack_.Unregister(this);  // before any member goes: /proc/net/tcp reads them
  std::shared_ptr<StreamConn> conn;
  std::deque<std::shared_ptr<InetSocket>> pending;
  bool reset;
  int side;
  uint16_t port;
  bool bound;
  {
    absl::MutexLock l(&smu_);
    conn = std::move(conn_);
    side = side_;
    pending.swap(backlog_);
    reset = linger_.l_onoff && linger_.l_linger == 0;
    port = local_.port;
    bound = bound_;
  }
  if (conn) conn->Close(side, reset);
  if (bound) stack_.ports().Unbind(protocol_, port, this);
  for (auto& s : pending) {
    absl::MutexLock l(&s->smu_);
    if (s->conn_) s->conn_->Close(s->side_, true);
    s->conn_.reset();
  }
}

Result<InetAddr> InetSocket::ParseAddr(std::span<const uint8_t> addr, bool for_bind) {
  if (addr.size() < sizeof(sa_family_t)) return Errno(EINVAL);
  sa_family_t family;
  std::memcpy(&family, addr.data(), sizeof(family));
  InetAddr a;
  if (family_ == AF_INET) {
    if (addr.size() < sizeof(struct sockaddr_in)) return Errno(EINVAL);
    struct sockaddr_in sin;
    std::memcpy(&sin, addr.data(), sizeof(sin));
    // Linux takes AF_UNSPEC with INADDR_ANY for bind, for old programs.
    if (family != AF_INET &&
        !(for_bind && family == AF_UNSPEC && sin.sin_addr.s_addr == htonl(INADDR_ANY))) {
      return Errno(EAFNOSUPPORT);
    }
    a = InetAddr::V4(ntohl(sin.sin_addr.s_addr), ntohs(sin.sin_port));
    return a;
  }
  if (addr.size() < 24) return Errno(EINVAL);  // SIN6_LEN_RFC2133
  if (family != AF_INET6) return Errno(family == AF_INET ? EAFNOSUPPORT : EINVAL);
  struct sockaddr_in6 sin6 {};
  std::memcpy(&sin6, addr.data(), std::min(addr.size(), sizeof(sin6)));
  std::memcpy(a.ip.data(), &sin6.sin6_addr, 16);
  a.port = ntohs(sin6.sin6_port);
  a.flowinfo = sin6.sin6_flowinfo;
  a.scope_id = sin6.sin6_scope_id;
  return a;
}

SockAddr InetSocket::Format(const InetAddr& a) const {
  return FormatSockAddr(a, family_ == AF_INET6);
}

SockAddr FormatSockAddr(const InetAddr& a, bool v6) {
  if (!v6) {
    struct sockaddr_in sin {};
    sin.sin_family = AF_INET;
    sin.sin_port = htons(a.port);
    std::memcpy(&sin.sin_addr, &a.ip[12], 4);
    return OptionBytes(sin);
  }
  struct sockaddr_in6 sin6 {};
  sin6.sin6_family = AF_INET6;
  sin6.sin6_port = htons(a.port);
  std::memcpy(&sin6.sin6_addr, a.ip.data(), 16);
  return OptionBytes(sin6);
}

Result<InetAddr> InetSocket::Route(const InetAddr& dst, bool* external) {
  *external = false;
  InetAddr d = dst;
  if (d.IsAny()) {  // connecting to the wildcard reaches this host's loopback
    InetAddr lo = d.IsV4() ? InetAddr::V4(INADDR_LOOPBACK, d.port) : InetAddr::V6Loopback(d.port);
    d.ip = lo.ip;
  }
  if (family_ == AF_INET6 && d.IsV4()) {
    absl::MutexLock l(&smu_);
    if (v6only_) return Errno(ENETUNREACH);
  }
  if (!d.IsLoopback()) {
    if (stack_.mode() != NetMode::kHost) return Errno(ENETUNREACH);
    *external = true;
  } else if (stack_.IsHostLoopback(d)) {
    *external = true;  // the container manager's service on the container's loopback
  } else if (!stack_.loopback_up()) {
    // A namespace whose lo is down has no route to 127/8, and no address ::1 to send from.
    return Errno(d.IsV4() ? ENETUNREACH : EADDRNOTAVAIL);
  }
  return d;
}

int InetSocket::IntOpt(int level, int name, int def) const {
  auto it = int_opts_.find({level, name});
  return it == int_opts_.end() ? def : it->second;
}

void InetSocket::ApplyBuffers() {
  std::shared_ptr<StreamConn> c;
  int side, snd = 0, rcv = 0;
  {
    absl::MutexLock l(&smu_);
    if (!conn_ || dns_tcp_.load()) return;
    c = conn_;
    side = side_;
    if (sndbuf_set_) snd = sndbuf_;
    if (rcvbuf_set_) rcv = rcvbuf_;
  }
  if (snd > 0) c->SetCapacity(side, static_cast<size_t>(snd));      // toward the peer
  if (rcv > 0) c->SetCapacity(1 - side, static_cast<size_t>(rcv));  // toward this socket
}

HostLink* InetSocket::host() {
  absl::MutexLock l(&smu_);
  return host_.get();
}

Result<void> InetSocket::AutobindLocked(const InetAddr& toward) {
  if (bound_) return Ok();
  InetPorts::Binding b;
  b.socket = weak_from_this();
  b.raw = this;
  b.v6 = family_ == AF_INET6;
  b.v6only = v6only_;
  b.reuseaddr = reuseaddr_;
  b.reuseport = reuseport_;
  b.uid = owner_uid();
  if (toward.IsV4()) {
    b.addr = InetAddr::V4(INADDR_LOOPBACK, 0);
  } else {
    b.addr = InetAddr::V6Loopback(0);
  }
  if (local_.IsAny() && toward.IsAny()) b.addr = local_;
  if (!local_.IsAny()) b.addr = local_;
  b.addr.port = 0;
  uint16_t port = SENTRY_TRY(stack_.ports().Bind(protocol_, b));
  local_ = b.addr;
  local_.port = port;
  bound_ = true;
  return Ok();
}

namespace {

// Whether `a` is an IPv4 address of the container's own interfaces (host_interfaces.h), which
// the first stack in host mode lets guest sockets bind to.
bool OnHostInterface(const Stack& stack, const InetAddr& a) {
  if (stack.mode() != NetMode::kHost || !a.IsV4()) return false;
  uint32_t be;
  std::memcpy(&be, a.ip.data() + 12, sizeof(be));
  return IsHostInterfaceV4(be);
}

}  // namespace

Result<void> InetSocket::Bind(std::span<const uint8_t> addr, PathOps&) {
  InetAddr a = SENTRY_TRY(ParseAddr(addr, true));
  if (!a.IsAny() && !a.IsLoopback() && !OnHostInterface(stack_, a)) return Errno(EADDRNOTAVAIL);
  // With lo down, IPv4 still binds 127/8 (Linux's loopback routes stay in the local table)
  // but ::1 is not assigned.
  if (!a.IsV4() && a.IsLoopback() && !stack_.loopback_up()) return Errno(EADDRNOTAVAIL);
  absl::MutexLock l(&smu_);
  if (bound_ || state_ != State::kClosed) return Errno(EINVAL);
  if (family_ == AF_INET6 && a.IsV4() && v6only_) return Errno(EADDRNOTAVAIL);
  InetPorts::Binding b;
  b.socket = weak_from_this();
  b.raw = this;
  b.addr = a;
  b.v6 = family_ == AF_INET6;
  b.v6only = v6only_;
  b.reuseaddr = reuseaddr_;
  b.reuseport = reuseport_;
  b.uid = owner_uid();
  uint16_t port = SENTRY_TRY(stack_.ports().Bind(protocol_, b));
  if (a.port < stack_.UnprivilegedPortStart() && a.port != 0 && owner_uid() != 0) {
    stack_.ports().Unbind(protocol_, port, this);
    return Errno(EACCES);
  }
  // --publish=.../udp: a UDP socket bound on the wildcard address and a published port also
  // gets the host port; what arrives there is received as from any host socket, and replies
  // go out from it (under the egress policy, as every datagram the guest sends).
  std::optional<uint16_t> host_port = stack_.PublishedHostPort(protocol_, port);
  if (host_port && (a.IsAny() || OnHostInterface(stack_, a)) && !host_ &&
      protocol_ == IPPROTO_UDP) {
    InetAddr on = a;
    on.port = *host_port;
    auto link = HostLink::Bound(on, SOCK_DGRAM, v6only_, &queue_);
    if (!link.ok()) {
      stack_.ports().Unbind(protocol_, port, this);
      return link.error();
    }
    host_ = std::move(*link);
  }
  local_ = a;
  local_.port = port;
  bound_ = true;
  return Ok();
}

Result<void> InetSocket::Listen(int backlog, const Ucred&) {
  if (!tcp()) return Errno(EOPNOTSUPP);
  absl::MutexLock l(&smu_);
  if (state_ == State::kConnected) return Errno(EINVAL);
  if (!bound_) SENTRY_TRY(AutobindLocked(family_ == AF_INET ? InetAddr::V4(0, 0) : InetAddr{}));
  if (backlog < 0 || backlog > kSomaxconn) backlog = kSomaxconn;
  // --publish: a wildcard listener on a published port is reachable from the host side too.
  // (A loopback listener stays the sandbox's own.)
  std::optional<uint16_t> host_port = stack_.PublishedHostPort(IPPROTO_TCP, local_.port);
  // So is one on an address of the container's own interfaces (nc -l -s 172.17.0.2).
  if (host_port && (local_.IsAny() || OnHostInterface(stack_, local_)) && !host_) {
    InetAddr on = local_;
    on.port = *host_port;
    host_ = SENTRY_TRY(HostLink::Listen(on, v6only_, backlog, &queue_));
  }
  backlog_max_ = backlog;
  state_ = State::kListening;
  listening_.store(true, std::memory_order_release);
  queue_.Notify(kEventOut);
  return Ok();
}

Result<vfs::FileRef> InetSocket::Accept(Caller& c, bool nonblock) {
  if (!tcp()) return Errno(EOPNOTSUPP);
  using R = Result<vfs::FileRef>;
  return Block<vfs::FileRef>(c, kEventIn, nonblock, [&]() -> std::optional<R> {
    HostLink* h;
    {
      absl::MutexLock l(&smu_);
      if (state_ != State::kListening) return R(Errno(EINVAL));
      if (!backlog_.empty()) {
        std::shared_ptr<InetSocket> s = std::move(backlog_.front());
        backlog_.pop_front();
        queue_.Notify(kEventOut);
        return R(vfs::FileRef(std::move(s)));
      }
      h = host_.get();  // stays valid: host_ lives as long as this socket
    }
    if (!h) return std::nullopt;
    return AcceptHost(*h);
  });
}

std::optional<Result<vfs::FileRef>> InetSocket::AcceptHost(HostLink& h) {
  using R = Result<vfs::FileRef>;
  InetAddr peer;
  Result<int> fd = h.AcceptFd(&peer);
  if (!fd.ok()) {
    if (fd.error() == EAGAIN) return std::nullopt;
    return R(fd.error());
  }
  // Made without any socket lock held: a new socket registers with the stack.
  auto s = std::make_shared<InetSocket>(stack_, family_, SOCK_STREAM, protocol_, 0, Ucred{});
  s->set_owner_uid(owner_uid());
  auto link = HostLink::Adopt(*fd, h.v4(), &s->queue_);
  if (!link.ok()) {
    close(*fd);
    return R(link.error());
  }
  Result<InetAddr> host_local = (*link)->LocalAddr();
  InetAddr local = host_local.ok() ? *host_local : InetAddr{};
  {
    absl::MutexLock l(&smu_);
    local.port = local_.port;  // the guest sees its own port, as behind Docker's -p
  }
  absl::MutexLock l(&s->smu_);
  s->host_ = std::move(*link);
  s->state_ = State::kConnected;
  s->local_ = local;
  s->peer_ = peer;
  return R(vfs::FileRef(std::move(s)));
}

Result<void> InetSocket::Connect(Caller& c, std::span<const uint8_t> addr, PathOps&) {
  if (addr.size() >= sizeof(sa_family_t)) {
    sa_family_t family;
    std::memcpy(&family, addr.data(), sizeof(family));
    if (family == AF_UNSPEC) {  // disconnect
      absl::MutexLock l(&smu_);
      if (tcp() && state_ == State::kListening) return Errno(EINVAL);
      udp_connected_ = false;
      if (state_ == State::kRefused) state_ = State::kClosed;
      return Ok();
    }
  }
  InetAddr dst = SENTRY_TRY(ParseAddr(addr, false));
  if (tcp()) {
    absl::MutexLock l(&smu_);
    if (state_ == State::kConnected) return Errno(EISCONN);
    if (state_ == State::kListening) return Errno(EISCONN);
  }
  bool external;
  InetAddr to = SENTRY_TRY(Route(dst, &external));
  if (tcp()) return external ? ConnectHostTcp(c, to) : ConnectTcp(c, to);
  if (external && to.port != 53) {
    EgressPolicy& policy = *stack_.policy();
    if (std::optional<std::string> why = policy.Denied(to)) {
      policy.ReportDenied("connect", to, *why);
      return Errno(EPERM);
    }
  }
  absl::MutexLock l(&smu_);
  SENTRY_TRY(AutobindLocked(to));
  peer_ = to;
  udp_connected_ = true;
  return Ok();
}

Result<void> InetSocket::ConnectTcp(Caller& c, const InetAddr& dst) {
  InetAddr me;
  bool nonblock = NonBlocking();
  {
    absl::MutexLock l(&smu_);
    SENTRY_TRY(AutobindLocked(dst));
    me = local_;
    if (me.IsAny()) {
      me.ip = dst.IsV4() ? InetAddr::V4(INADDR_LOOPBACK, 0).ip : InetAddr::V6Loopback(0).ip;
    }
  }
  std::shared_ptr<InetSocket> listener;
  for (auto& s : stack_.ports().Find(IPPROTO_TCP, dst, family_ == AF_INET6)) {
    absl::MutexLock l(&s->smu_);
    if (s->state_ == State::kListening) {
      listener = s;
      break;
    }
  }
  if (!listener || dst.port == 0) {
    absl::MutexLock l(&smu_);
    if (!nonblock) return Errno(ECONNREFUSED);
    state_ = State::kRefused;
    error_ = ECONNREFUSED;
    queue_.Notify(kAllEvents);
    return Errno(EINPROGRESS);
  }
  auto server = std::make_shared<InetSocket>(stack_, listener->family_, SOCK_STREAM,
                                             listener->protocol_, 0, Ucred{});
  server->set_owner_uid(listener->owner_uid());
  auto conn = std::make_shared<StreamConn>(false, kTcpCapacity);
  conn->set_accept_after_close(true);
  ScopedWait wait(listener->queue_, c.blocker.waiter(), kEventOut);
  for (;;) {
    {
      absl::MutexLock ll(&listener->smu_);
      if (listener->state_ != State::kListening) return Errno(ECONNREFUSED);
      if (nonblock || listener->backlog_.size() <= static_cast<size_t>(listener->backlog_max_)) {
        {
          absl::MutexLock ls(&server->smu_);
          server->state_ = State::kConnected;
          server->conn_ = conn;
          server->side_ = 1;
          server->local_ = dst;
          server->local_.port = listener->local_.port;
          server->peer_ = me;
          server->bound_ = false;  // shares the listener's port; never in the table
          server->int_opts_ = listener->int_opts_;
          // An accepted socket inherits the listener's buffer sizes, as on Linux.
          server->sndbuf_ = listener->sndbuf_;
          server->rcvbuf_ = listener->rcvbuf_;
          server->sndbuf_set_ = listener->sndbuf_set_;
          server->rcvbuf_set_ = listener->rcvbuf_set_;
        }
        conn->Attach(1, &server->queue_);
        {
          absl::MutexLock l(&smu_);
          if (state_ == State::kConnected) return Errno(EISCONN);
          state_ = State::kConnected;
          conn_ = conn;
          side_ = 0;
          peer_ = dst;
          local_ = me;
          conn->Attach(0, &queue_);
        }
        listener->backlog_.push_back(server);
        listener->queue_.Notify(kEventIn);
        server->ApplyBuffers();
        break;
      }
    }
    SENTRY_TRY(Wait(c.blocker, true));
  }
  ApplyBuffers();
  // Linux answers a nonblocking connect with EINPROGRESS even when loopback completes it
  // at once; the socket is writable right away.
  return nonblock ? Result<void>(Errno(EINPROGRESS)) : Ok();
}

Result<void> InetSocket::ConnectHostTcp(Caller& c, const InetAddr& dst) {
  EgressPolicy& policy = *stack_.policy();
  if (dst.port == 53 && policy.answer_dns) return ConnectDnsTcp(c, dst);
  if (std::optional<std::string> why = policy.Denied(dst)) {
    policy.ReportDenied("connect", dst, *why);
    return Errno(ECONNREFUSED);
  }
  std::unique_ptr<HostLink> link = SENTRY_TRY(HostLink::Open(dst, SOCK_STREAM, &queue_));
  {
    absl::MutexLock l(&smu_);
    int one = 1;
    if (keepalive_) setsockopt(link->fd(), SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    if (IntOpt(IPPROTO_TCP, TCP_NODELAY, 0)) {
      setsockopt(link->fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    }
  }
  Result<void> started = link->Connect(dst);
  if (!started.ok() && started.error() != EINPROGRESS) return started.error();
  HostLink* h;
  {
    absl::MutexLock l(&smu_);
    if (state_ == State::kConnected) return Errno(EISCONN);
    struct sockaddr_storage ss {};
    socklen_t len = sizeof(ss);
    if (getsockname(link->fd(), reinterpret_cast<struct sockaddr*>(&ss), &len) == 0) {
      local_ = FromHostSockaddr(ss);
    }
    host_ = std::move(link);
    h = host_.get();
    state_ = State::kConnected;
    peer_ = dst;
  }
  if (started.ok()) return Ok();
  if (NonBlocking()) return Errno(EINPROGRESS);
  ScopedWait wait(queue_, c.blocker.waiter(), kEventOut | kEventErr | kEventHup);
  while (!(h->Readiness() & (kEventOut | kEventErr | kEventHup))) {
    SENTRY_TRY(Wait(c.blocker, true));
  }
  if (int err = h->TakeError()) {
    absl::MutexLock l(&smu_);
    state_ = State::kClosed;
    return Errno(err);
  }
  return Ok();
}

Result<void> InetSocket::ConnectDnsTcp(Caller& c, const InetAddr& dst) {
  (void)c;
  auto conn = std::make_shared<StreamConn>(false, kTcpCapacity);
  absl::MutexLock l(&smu_);
  if (state_ == State::kConnected) return Errno(EISCONN);
  SENTRY_TRY(AutobindLocked(InetAddr::V4(INADDR_LOOPBACK, 0)));
  state_ = State::kConnected;
  conn_ = conn;
  side_ = 0;
  peer_ = dst;
  dns_tcp_.store(true);
  conn->Attach(0, &queue_);
  return NonBlocking() ? Result<void>(Errno(EINPROGRESS)) : Ok();
}

void InetSocket::PumpDns() {
  std::shared_ptr<StreamConn> c = conn();
  if (!c) return;
  absl::MutexLock l(&dns_mu_);
  auto no_wait = [] { return Result<void>(Errno(EAGAIN)); };
  for (;;) {
    uint8_t buf[4096];
    auto r = c->Recv(1, buf, 0, true, no_wait);
    if (!r.ok() || r->copied == 0) break;
    dns_in_.insert(dns_in_.end(), buf, buf + r->copied);
  }
  while (dns_in_.size() >= 2) {
    size_t len = static_cast<size_t>(dns_in_[0] << 8 | dns_in_[1]);
    if (dns_in_.size() < 2 + len) break;
    std::span<const uint8_t> msg(dns_in_.data() + 2, len);
    if (auto answer = AnswerDnsQuery(msg, *stack_.policy(), false)) {
      std::vector<uint8_t> out = {static_cast<uint8_t>(answer->size() >> 8),
                                  static_cast<uint8_t>(answer->size() & 0xff)};
      out.insert(out.end(), answer->begin(), answer->end());
      Control none;
      (void)c->Send(1, out, none, true, no_wait);
    }
    dns_in_.erase(dns_in_.begin(), dns_in_.begin() + static_cast<ptrdiff_t>(2 + len));
  }
}

Result<size_t> InetSocket::SendHost(Caller& c, HostLink& h, SendRequest& req, const InetAddr* to) {
  ScopedWait wait(queue_, c.blocker.waiter(), kEventOut | kEventErr | kEventHup);
  size_t done = 0;
  for (;;) {
    Result<size_t> n = h.Send(req.data.subspan(done), req.flags, to);
    if (n.ok()) {
      done += *n;
      if (done == req.data.size() || !tcp()) return done;
      continue;
    }
    if (n.error() != EAGAIN) return done ? Result<size_t>(done) : n.error();
    if (NonBlock(req.flags)) return done ? Result<size_t>(done) : Errno(EAGAIN);
    Result<void> w = Wait(c.blocker, true);
    if (!w.ok()) return done ? Result<size_t>(done) : w.error();
  }
}

Result<RecvResult> InetSocket::RecvHostTcp(Caller& c, HostLink& h, std::span<uint8_t> dst,
                                           int flags) {
  ScopedWait wait(queue_, c.blocker.waiter(), kEventIn | kEventErr | kEventHup | kEventRdHup);
  RecvResult out;
  for (;;) {
    size_t length = 0;
    Result<size_t> n = h.Recv(dst.subspan(out.copied), flags, nullptr, &length, nullptr);
    if (n.ok()) {
      out.copied += *n;
      out.length = out.copied;
      bool more = (flags & MSG_WAITALL) && !(flags & MSG_PEEK) && *n > 0 &&
                  out.copied < dst.size();
      if (!more) return out;
      continue;
    }
    if (n.error() != EAGAIN) return out.copied ? Result<RecvResult>(out) : n.error();
    if (NonBlock(flags)) return out.copied ? Result<RecvResult>(out) : Errno(EAGAIN);
    Result<void> w = Wait(c.blocker, false);
    if (!w.ok()) return out.copied ? Result<RecvResult>(out) : w.error();
  }
}

Result<HostLink*> InetSocket::HostUdp(const InetAddr& to) {
  absl::MutexLock l(&smu_);
  if (!host_) host_ = SENTRY_TRY(HostLink::Open(to, SOCK_DGRAM, &queue_));
  if (host_->v4() != to.IsV4()) return Errno(ENETUNREACH);
  return host_.get();
}

Result<void> InetSocket::Shutdown(int how) {
  if (how < SHUT_RD || how > SHUT_RDWR) return Errno(EINVAL);
  bool rd = how != SHUT_WR, wr = how != SHUT_RD;
  std::shared_ptr<StreamConn> conn;
  int side;
  std::deque<std::shared_ptr<InetSocket>> pending;
  {
    absl::MutexLock l(&smu_);
    if (state_ == State::kListening) {
      if (!rd) return Ok();
      // Linux disconnects a listener on SHUT_RD: its accept() callers wake with EINVAL.
      state_ = State::kClosed;
      listening_.store(false, std::memory_order_release);
      pending.swap(backlog_);
      queue_.Notify(kAllEvents);
    } else if (tcp()) {
      if (state_ != State::kConnected) return Errno(ENOTCONN);
      shut_rd_ |= rd;
      shut_wr_ |= wr;
      if (host_) return host_->Shutdown(how);
      conn = conn_;
      side = side_;
    } else {
      if (!udp_connected_) return Errno(ENOTCONN);
      shut_rd_ |= rd;
      shut_wr_ |= wr;
      queue_.Notify(kAllEvents);
      return Ok();
    }
  }
  for (auto& s : pending) {
    absl::MutexLock l(&s->smu_);
    if (s->conn_) s->conn_->Close(s->side_, true);
    s->conn_.reset();
  }
  if (conn) conn->Shutdown(side, rd, wr);
  return Ok();
}

Result<SockAddr> InetSocket::SockName() {
  absl::MutexLock l(&smu_);
  return Format(local_);
}

Result<SockAddr> InetSocket::PeerName() {
  absl::MutexLock l(&smu_);
  if (tcp() ? state_ != State::kConnected : !udp_connected_) return Errno(ENOTCONN);
  return Format(peer_);
}

std::shared_ptr<StreamConn> InetSocket::conn() {
  absl::MutexLock l(&smu_);
  return conn_;
}

Result<size_t> InetSocket::Send(Caller& c, SendRequest& req, PathOps&) {
  if (!tcp()) return SendUdp(c, req);
  if (req.flags & MSG_OOB) return Errno(EOPNOTSUPP);
  std::shared_ptr<StreamConn> conn;
  int side;
  HostLink* h;
  {
    absl::MutexLock l(&smu_);
    if (int e = std::exchange(error_, 0)) return Errno(e);
    if (state_ != State::kConnected) return Errno(EPIPE);
    conn = conn_;
    side = side_;
    h = host_.get();
  }
  req.control = Control();  // TCP carries no ancillary data
  if (h) return SendHost(c, *h, req, nullptr);
  if (!conn) return Errno(EPIPE);
  if (req.data.empty()) return size_t{0};
  ScopedWait wait(queue_, c.blocker.waiter(), kEventOut);
  Result<size_t> sent = conn->Send(side, req.data, req.control, NonBlock(req.flags),
                                   [&] { return Wait(c.blocker, true); });
  if (dns_tcp_.load()) PumpDns();
  return sent;
}

Result<RecvResult> InetSocket::Recv(Caller& c, std::span<uint8_t> dst, int flags) {
  if (!tcp()) return RecvUdp(c, dst, flags);
  if (flags & MSG_OOB) return Errno(EINVAL);
  std::shared_ptr<StreamConn> conn;
  int side;
  HostLink* h;
  {
    absl::MutexLock l(&smu_);
    if (state_ == State::kRefused) {
      state_ = State::kClosed;
      if (int e = std::exchange(error_, 0)) return Errno(e);
    }
    if (state_ != State::kConnected) return Errno(ENOTCONN);
    conn = conn_;
    side = side_;
    h = host_.get();
  }
  if (h) return RecvHostTcp(c, *h, dst, flags);
  if (!conn) return RecvResult{};
  ScopedWait wait(queue_, c.blocker.waiter(), kEventIn);
  auto r = SENTRY_TRY(
      conn->Recv(side, dst, flags, NonBlock(flags), [&] { return Wait(c.blocker, false); }));
  r.msg_flags &= ~MSG_EOR;
  r.control = Control();
  return r;
}

bool InetSocket::DeliverUdp(std::span<const uint8_t> data, const InetAddr& from, const InetAddr& to,
                            int hoplimit, int tclass) {
  absl::MutexLock l(&smu_);
  if (shut_rd_) return false;
  if (udp_connected_ && !(peer_.SameIp(from) && peer_.port == from.port)) return false;
  if (rx_bytes_ + data.size() > static_cast<size_t>(rcvbuf_) && !rx_.empty()) return true;
  Datagram d;
  d.data.assign(data.begin(), data.end());
  d.from = from;
  d.to = to;
  d.hoplimit = hoplimit;
  d.tclass = tclass;
  rx_bytes_ += data.size();
  rx_.push_back(std::move(d));
  queue_.Notify(kEventIn);
  return true;
}

Result<size_t> InetSocket::SendUdp(Caller& c, SendRequest& req) {
  (void)c;
  InetAddr to, from;
  {
    absl::MutexLock l(&smu_);
    if (int e = std::exchange(error_, 0)) return Errno(e);
    if (shut_wr_) return Errno(EPIPE);
    if (req.to.empty() && !udp_connected_) return Errno(EDESTADDRREQ);
  }
  bool external = false;
  if (!req.to.empty()) {
    to = SENTRY_TRY(ParseAddr(req.to, false));
    to = SENTRY_TRY(Route(to, &external));
  } else {
    absl::MutexLock l(&smu_);
    to = peer_;
    external = !to.IsLoopback() || stack_.IsHostLoopback(to);
  }
  if (to.port == 0 && !req.to.empty()) return Errno(EINVAL);
  if (req.data.size() > (family_ == AF_INET ? kMaxUdpV4 : kMaxUdpV6)) return Errno(EMSGSIZE);
  if (external) {
    EgressPolicy& policy = *stack_.policy();
    if (to.port == 53 && policy.answer_dns) {
      // The Sentry's DNS: the answer comes back from where the query went.
      {
        absl::MutexLock l(&smu_);
        SENTRY_TRY(AutobindLocked(InetAddr::V4(INADDR_LOOPBACK, 0)));
        from = local_;
      }
      if (auto answer = AnswerDnsQuery(req.data, policy, true)) {
        DeliverUdp(*answer, to, from, 64, 0);
      }
      return req.data.size();
    }
    if (std::optional<std::string> why = policy.Denied(to)) {
      policy.ReportDenied("send", to, *why);
      return Errno(EPERM);
    }
    HostLink* h = SENTRY_TRY(HostUdp(to));
    return SendHost(c, *h, req, &to);
  }
  bool connected;
  int hoplimit, tclass;
  {
    absl::MutexLock l(&smu_);
    SENTRY_TRY(AutobindLocked(to));
    from = local_;
    connected = udp_connected_ && req.to.empty();
    bool v6 = family_ == AF_INET6;
    hoplimit = req.control.hoplimit >= 0 ? req.control.hoplimit
               : v6                      ? IntOpt(IPPROTO_IPV6, IPV6_UNICAST_HOPS, 64)
                                         : IntOpt(IPPROTO_IP, IP_TTL, 64);
    tclass = req.control.tclass >= 0 ? req.control.tclass
             : v6                    ? IntOpt(IPPROTO_IPV6, IPV6_TCLASS, 0)
                                     : IntOpt(IPPROTO_IP, IP_TOS, 0);
  }
  if (from.IsAny()) {
    from.ip = to.IsV4() ? InetAddr::V4(INADDR_LOOPBACK, 0).ip : InetAddr::V6Loopback(0).ip;
  }
  bool delivered = false;
  for (auto& s : stack_.ports().Find(protocol_, to, family_ == AF_INET6)) {
    if (s->DeliverUdp(req.data, from, to, hoplimit, tclass)) {
      delivered = true;
      break;
    }
  }
  if (!delivered && connected) {
    // The ICMP port-unreachable Linux would get back: the next call reports it.
    absl::MutexLock l(&smu_);
    error_ = ECONNREFUSED;
    queue_.Notify(kEventErr);
  }
  return req.data.size();
}

Result<RecvResult> InetSocket::RecvUdp(Caller& c, std::span<uint8_t> dst, int flags) {
  using R = Result<RecvResult>;
  return Block<RecvResult>(c, kEventIn | kEventErr, NonBlock(flags), [&]() -> std::optional<R> {
    absl::MutexLock l(&smu_);
    if (!rx_.empty()) {
      Datagram& d = rx_.front();
      RecvResult r = CopyDatagram(d.data, dst);
      r.from = Format(d.from);
      r.control.ip = RecvCmsgs(d);
      if (!(flags & MSG_PEEK)) {
        rx_bytes_ -= d.data.size();
        rx_.pop_front();
      }
      return R(std::move(r));
    }
    if (int e = std::exchange(error_, 0)) return R(Errno(e));
    if (shut_rd_) return R(RecvResult{});
    while (host_) {
      RecvResult r;
      InetAddr from;
      Result<size_t> n = host_->Recv(dst, flags, &from, &r.length, &r.msg_flags);
      if (!n.ok()) {
        if (n.error() == EAGAIN) break;
        return R(n.error());
      }
      // A connected socket takes datagrams from its peer only, as Linux's.
      if (udp_connected_ && !(peer_.SameIp(from) && peer_.port == from.port)) {
        if (flags & MSG_PEEK) {
          uint8_t drop;
          (void)host_->Recv({&drop, 1}, 0, nullptr, nullptr, nullptr);
        }
        continue;
      }
      r.copied = *n;
      r.from = Format(from);
      return R(std::move(r));
    }
    return std::nullopt;
  });
}

std::vector<IpCmsg> InetSocket::RecvCmsgs(const Datagram& d) {
  std::vector<IpCmsg> out;
  auto on = [&](int level, int name) { return IntOpt(level, name, 0) != 0; };
  auto add = [&](int level, int type, const auto& v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    out.push_back({level, type, std::vector<uint8_t>(p, p + sizeof(v))});
  };
  if (family_ == AF_INET6) {
    if (on(IPPROTO_IPV6, IPV6_RECVPKTINFO)) {
      struct in6_pktinfo pi {};
      std::memcpy(&pi.ipi6_addr, d.to.ip.data(), 16);
      pi.ipi6_ifindex = 1;
      add(IPPROTO_IPV6, IPV6_PKTINFO, pi);
    }
    if (on(IPPROTO_IPV6, IPV6_RECVHOPLIMIT)) add(IPPROTO_IPV6, IPV6_HOPLIMIT, d.hoplimit);
    if (on(IPPROTO_IPV6, IPV6_RECVTCLASS)) add(IPPROTO_IPV6, IPV6_TCLASS, d.tclass);
    return out;
  }
  if (on(IPPROTO_IP, IP_PKTINFO)) {
    struct in_pktinfo pi {};
    pi.ipi_ifindex = 1;
    std::memcpy(&pi.ipi_spec_dst, &d.to.ip[12], 4);
    std::memcpy(&pi.ipi_addr, &d.to.ip[12], 4);
    add(IPPROTO_IP, IP_PKTINFO, pi);
  }
  if (on(IPPROTO_IP, IP_RECVTTL)) add(IPPROTO_IP, IP_TTL, d.hoplimit);
  if (on(IPPROTO_IP, IP_RECVTOS)) add(IPPROTO_IP, IP_TOS, static_cast<uint8_t>(d.tclass));
  return out;
}

EventMask InetSocket::Readiness(EventMask mask) {
  EventMask m = 0;
  std::shared_ptr<StreamConn> conn;
  int side = 0;
  {
    absl::MutexLock l(&smu_);
    if (error_) m |= kEventErr;
    if (host_) {
      EventMask h = host_->Readiness();
      if (!tcp()) h &= kEventIn | kEventOut | kEventErr;
      m |= h;
    }
    if (!tcp()) {
      if (!rx_.empty()) m |= kEventIn;
      if (shut_rd_) m |= kEventIn | kEventRdHup;
      if (shut_rd_ && shut_wr_) m |= kEventHup;
      m |= kEventOut;
      return m & (mask | kEventHup | kEventErr);
    }
    switch (state_) {
      case State::kListening:
        if (!backlog_.empty()) m |= kEventIn;
        return m & mask;
      case State::kClosed:
        return (m | kEventOut | kEventHup) & (mask | kEventHup | kEventErr);
      case State::kRefused:
        return (m | kEventOut | kEventHup | kEventIn) & (mask | kEventHup | kEventErr);
      case State::kConnected:
        if (host_) return m & (mask | kEventHup | kEventErr);
        conn = conn_;
        side = side_;
        break;
    }
  }
  if (conn) m |= conn->Readiness(side);
  return m & (mask | kEventHup | kEventErr);
}

size_t InetSocket::InQueue() {
  absl::MutexLock l(&smu_);
  if (!tcp()) {
    // The next datagram's size, as Linux: ours first, else the host socket's (a datagram
    // from outside waits there until a recv takes it). glibc's resolver sizes its buffer
    // for the second of its two answers (A and AAAA) by this.
    if (!rx_.empty()) return rx_.front().data.size();
    return host_ ? host_->InQueue() : 0;
  }
  if (host_) return host_->InQueue();
  if (state_ == State::kListening || !conn_) return 0;
  return conn_->InQueue(side_);
}

size_t InetSocket::OutQueue() {
  absl::MutexLock l(&smu_);
  if (tcp() && host_) return host_->OutQueue();
  if (!tcp() || state_ == State::kListening || !conn_) return 0;
  return conn_->OutQueue(side_);
}

Result<std::vector<uint8_t>> InetSocket::GetOption(int level, int name) {
  if (level == SOL_SOCKET) {
    if (name == SO_ACCEPTCONN) {
      absl::MutexLock l(&smu_);
      return OptionBytes(int{state_ == State::kListening});
    }
    if (name == SO_PEERCRED) {
      struct ucred u = {0, static_cast<uid_t>(-1), static_cast<gid_t>(-1)};
      return OptionBytes(u);
    }
    if (name == SO_ERROR) {
      int e = TakeError();
      if (HostLink* h = host(); h && e == 0) e = h->TakeError();
      return OptionBytes(e);
    }
    return Socket::GetOption(level, name);
  }
  absl::MutexLock l(&smu_);
  auto get = [&](int def) { return OptionBytes(IntOpt(level, name, def)); };
  if (level == IPPROTO_TCP) {
    if (!tcp()) return Errno(EOPNOTSUPP);
    switch (name) {
      case TCP_NODELAY:
      case TCP_CORK:
      case TCP_QUICKACK:
      case TCP_DEFER_ACCEPT:
      case TCP_USER_TIMEOUT:
      case TCP_FASTOPEN:
      case TCP_NOTSENT_LOWAT:
        return get(name == TCP_QUICKACK ? 1 : 0);
      case TCP_KEEPIDLE:
        return get(7200);
      case TCP_KEEPINTVL:
        return get(75);
      case TCP_KEEPCNT:
        return get(9);
      case TCP_SYNCNT:
        return get(6);
      case TCP_LINGER2:
        return get(60);
      case TCP_WINDOW_CLAMP:
        return get(0);
      case TCP_MAXSEG:
        return get(state_ == State::kConnected ? 65483 : 536);
      case TCP_CONGESTION: {
        std::string cc = "cubic";
        return std::vector<uint8_t>(cc.begin(), cc.end());
      }
      case TCP_INFO: {
        struct tcp_info ti {};
        ti.tcpi_state = state_ == State::kConnected   ? kTcpEstablished
                        : state_ == State::kListening ? kTcpListen
                                                      : kTcpClose;
        ti.tcpi_snd_mss = 65483;
        ti.tcpi_rcv_mss = 536;
        ti.tcpi_pmtu = 65535;
        return OptionBytes(ti);
      }
      default:
        return Errno(ENOPROTOOPT);
    }
  }
  if (level == IPPROTO_UDP || level == IPPROTO_UDPLITE) {
    if (tcp() || !UdpOption(name)) return Errno(ENOPROTOOPT);
    return OptionBytes(IntOpt(IPPROTO_UDP, name, 0));
  }
  if (level == IPPROTO_IP) {
    if (family_ != AF_INET && name != IP_TOS && name != IP_TTL) return Errno(ENOPROTOOPT);
    switch (name) {
      case IP_TTL:
        return get(64);
      case IP_TOS:
      case IP_PKTINFO:
      case IP_RECVTOS:
      case IP_RECVTTL:
      case IP_RECVERR:
      case IP_FREEBIND:
      case IP_HDRINCL:
      case IP_MULTICAST_LOOP:
      case IP_RECVOPTS:
        return get(name == IP_MULTICAST_LOOP ? 1 : 0);
      case IP_MULTICAST_TTL:
        return get(1);
      case IP_MTU_DISCOVER:
        return get(tcp() ? IP_PMTUDISC_WANT : IP_PMTUDISC_DONT);
      case IP_MTU:
        if (tcp() ? state_ != State::kConnected : !udp_connected_) return Errno(ENOTCONN);
        return OptionBytes(65536);
      default:
        return Errno(ENOPROTOOPT);
    }
  }
  if (level == IPPROTO_IPV6) {
    if (family_ != AF_INET6) return Errno(EOPNOTSUPP);
    switch (name) {
      case IPV6_V6ONLY:
        return OptionBytes(int{v6only_});
      case IPV6_UNICAST_HOPS:
      case IPV6_MULTICAST_HOPS:
        return get(64);
      case IPV6_TCLASS:
      case IPV6_RECVPKTINFO:
      case IPV6_RECVTCLASS:
      case IPV6_RECVERR:
      case IPV6_RECVHOPLIMIT:
        return get(0);
      case IPV6_MULTICAST_LOOP:
        return get(1);
      default:
        return Errno(ENOPROTOOPT);
    }
  }
  return Errno(EOPNOTSUPP);
}

Result<void> InetSocket::SetOption(int level, int name, std::span<const uint8_t> val) {
  if (level == SOL_SOCKET) {
    SENTRY_TRY(Socket::SetOption(level, name, val));
    if (name == SO_SNDBUF || name == SO_RCVBUF) {
      {
        absl::MutexLock l(&smu_);
        (name == SO_SNDBUF ? sndbuf_set_ : rcvbuf_set_) = true;
      }
      ApplyBuffers();
    }
    return Ok();
  }
  if (level == IPPROTO_TCP && name == TCP_CONGESTION) {
    std::string cc(val.begin(), val.end());
    cc = cc.c_str();
    if (cc != "cubic" && cc != "reno") return Errno(ENOENT);
    return Ok();
  }
  // IP options take an int, or for some a single byte.
  int v;
  if (val.size() >= sizeof(int)) {
    std::memcpy(&v, val.data(), sizeof(int));
  } else if (level == IPPROTO_IP && val.size() >= 1) {
    v = val[0];
  } else {
    return Errno(EINVAL);
  }
  absl::MutexLock l(&smu_);
  if (level == IPPROTO_UDP || level == IPPROTO_UDPLITE) {
    // UDP_CORK, UDP_SEGMENT, UDPLITE_{SEND,RECV}_CSCOV...: kept and read back. Only those:
    // every name kept would cost the Sentry memory.
    bool cscov = name == kUdpliteSendCscov || name == kUdpliteRecvCscov;
    if (tcp() || !UdpOption(name) || (cscov && protocol_ != IPPROTO_UDPLITE)) {
      return Errno(ENOPROTOOPT);
    }
    int_opts_[{IPPROTO_UDP, name}] = v;
    return Ok();
  }
  if (level == IPPROTO_TCP) {
    if (!tcp()) return Errno(EOPNOTSUPP);
    switch (name) {
      case TCP_NODELAY:
      case TCP_CORK:
      case TCP_QUICKACK:
        int_opts_[{level, name}] = v != 0;
        return Ok();
      case TCP_KEEPIDLE:
      case TCP_KEEPINTVL:
        if (v < 1 || v > 32767) return Errno(EINVAL);
        int_opts_[{level, name}] = v;
        return Ok();
      case TCP_KEEPCNT:
      case TCP_SYNCNT:
        if (v < 1 || v > 127) return Errno(EINVAL);
        int_opts_[{level, name}] = v;
        return Ok();
      case TCP_USER_TIMEOUT:
      case TCP_DEFER_ACCEPT:
      case TCP_FASTOPEN:
      case TCP_NOTSENT_LOWAT:
      case TCP_LINGER2:
      case TCP_WINDOW_CLAMP:
      case TCP_MAXSEG:
        if (v < 0) return Errno(EINVAL);
        int_opts_[{level, name}] = v;
        return Ok();
      default:
        return Errno(ENOPROTOOPT);
    }
  }
  if (level == IPPROTO_IP) {
    switch (name) {
      case IP_TTL:
        if (v == -1) v = 64;
        if (v < 1 || v > 255) return Errno(EINVAL);
        int_opts_[{level, name}] = v;
        return Ok();
      case IP_TOS:
        int_opts_[{level, name}] = v & 0xfc;
        return Ok();
      case IP_PKTINFO:
      case IP_RECVTOS:
      case IP_RECVTTL:
      case IP_RECVERR:
      case IP_FREEBIND:
      case IP_MULTICAST_LOOP:
      case IP_RECVOPTS:
        int_opts_[{level, name}] = v != 0;
        return Ok();
      case IP_MULTICAST_TTL:
      case IP_MTU_DISCOVER:
        int_opts_[{level, name}] = v;
        return Ok();
      case IP_TRANSPARENT:
      case IP_HDRINCL:
        return Errno(EPERM);
      default:
        return Errno(ENOPROTOOPT);
    }
  }
  if (level == IPPROTO_IPV6) {
    if (family_ != AF_INET6) return Errno(ENOPROTOOPT);
    switch (name) {
      case IPV6_V6ONLY:
        if (bound_) return Errno(EINVAL);
        v6only_ = v != 0;
        return Ok();
      case IPV6_UNICAST_HOPS:
      case IPV6_MULTICAST_HOPS:
        if (v == -1) v = 64;
        if (v < 0 || v > 255) return Errno(EINVAL);
        int_opts_[{level, name}] = v;
        return Ok();
      case IPV6_TCLASS:
      case IPV6_RECVPKTINFO:
      case IPV6_RECVTCLASS:
      case IPV6_RECVERR:
      case IPV6_RECVHOPLIMIT:
      case IPV6_MULTICAST_LOOP:
        int_opts_[{level, name}] = v;
        return Ok();
      default:
        return Errno(ENOPROTOOPT);
    }
  }
  return Errno(ENOPROTOOPT);
}

std::string InetSocket::ProcLine(int slot) {
  absl::MutexLock l(&smu_);
  auto hex = [&](const InetAddr& a) {
    if (family_ == AF_INET) {
      uint32_t n;
      std::memcpy(&n, &a.ip[12], 4);
      return absl::StrFormat("%08X:%04X", n, a.port);
    }
    std::string s;
    for (int i = 0; i < 16; i += 4) {
      uint32_t w;
      std::memcpy(&w, &a.ip[i], 4);
      s += absl::StrFormat("%08X", w);
    }
    return absl::StrFormat("%s:%04X", s, a.port);
  };
  int st = tcp() ? (state_ == State::kConnected   ? kTcpEstablished
                    : state_ == State::kListening ? kTcpListen
                                                  : kTcpClose)
                 : (udp_connected_ ? kTcpEstablished : kTcpClose);
  InetAddr remote = (tcp() ? state_ == State::kConnected : udp_connected_) ? peer_ : InetAddr{};
  if (family_ == AF_INET && !(tcp() ? state_ == State::kConnected : udp_connected_)) {
    remote = InetAddr::V4(0, 0);
  }
  return absl::StrFormat(
      "%4d: %s %s %02X %08X:%08X 00:00000000 00000000 %5u        0 %u 1 0000000000000000\n", slot,
      hex(local_), hex(remote), st, 0, 0, owner_uid(), ino_);
}

}  // namespace sentry::netstack
