#include "netstack/stack.h"

#include <linux/netlink.h>
#include <netinet/in.h>

#include <algorithm>

#include "absl/strings/str_format.h"
#include "netstack/netlink.h"
#include "netstack/unix.h"

namespace sentry::netstack {

// ---- AF_UNIX names ----

Result<void> UnixNames::BindAbstract(const std::string& name, std::weak_ptr<UnixSocket> s) {
  absl::MutexLock l(&mu_);
  auto it = abstract_.find(name);
  if (it != abstract_.end() && !it->second.expired()) return Errno(EADDRINUSE);
  abstract_[name] = std::move(s);
  return Ok();
}

void UnixNames::BindPath(const NameKey& key, std::weak_ptr<UnixSocket> s) {
  if (paths_owner_ != this) return paths_owner_->BindPath(key, std::move(s));
  absl::MutexLock l(&mu_);
  std::erase_if(paths_, [](const auto& kv) { return kv.second.expired(); });
  paths_[key] = std::move(s);
}

void UnixNames::Unbind(const std::string& abstract_name, const UnixSocket* s) {
  // Released after mu_: should it be the last reference, the socket's destructor calls
  // Unbind, which takes mu_.
  std::shared_ptr<UnixSocket> held;
  absl::MutexLock l(&mu_);
  auto it = abstract_.find(abstract_name);
  if (it == abstract_.end()) return;
  held = it->second.lock();
  if (!held || held.get() == s) abstract_.erase(it);
}

std::shared_ptr<UnixSocket> UnixNames::FindAbstract(const std::string& name) {
  absl::MutexLock l(&mu_);
  auto it = abstract_.find(name);
  return it == abstract_.end() ? nullptr : it->second.lock();
}

std::shared_ptr<UnixSocket> UnixNames::FindPath(const NameKey& key) {
  if (paths_owner_ != this) return paths_owner_->FindPath(key);
  absl::MutexLock l(&mu_);
  auto it = paths_.find(key);
  return it == paths_.end() ? nullptr : it->second.lock();
}

Result<std::string> UnixNames::Autobind(std::weak_ptr<UnixSocket> s) {
  absl::MutexLock l(&mu_);
  for (uint32_t i = 0; i < 0x100000; i++) {
    std::string n = absl::StrFormat("%05x", next_auto_);
    next_auto_ = (next_auto_ + 1) & 0xfffff;
    auto it = abstract_.find(n);
    if (it != abstract_.end() && !it->second.expired()) continue;
    abstract_[n] = s;
    return n;
  }
  return Errno(ENOSPC);
}

// ---- Making sockets ----

namespace {

// The protocol a (family, type, protocol) triple means, or the errno Linux gives.
Result<int> InetProtocol(int type, int protocol) {
  switch (type) {
    case SOCK_STREAM:
      if (protocol != 0 && protocol != IPPROTO_TCP) return Errno(EPROTONOSUPPORT);
      return IPPROTO_TCP;
    case SOCK_DGRAM:
      // UDP-Lite behaves as UDP here (loopback never corrupts a byte, so partial checksum
      // coverage changes nothing) with its own ports. Ping sockets are made by the caller.
      if (protocol == IPPROTO_UDPLITE) return IPPROTO_UDPLITE;
      if (protocol != 0 && protocol != IPPROTO_UDP) return Errno(EPROTONOSUPPORT);
      return IPPROTO_UDP;
    case SOCK_RAW:
      // Raw ICMP sockets are made by the caller. Other raw sockets would put the guest's
      // own packets on the host's network: never offered. Linux's errnos for any caller
      // come first (protocol 0 has no raw socket, past IPPROTO_MAX is invalid); then EPERM,
      // what a caller without CAP_NET_RAW gets, even for one with it: that is the error
      // tools such as iputils ping fall back on (to ping sockets).
      if (protocol < 0 || protocol >= IPPROTO_MAX) return Errno(EINVAL);
      if (protocol == 0) return Errno(EPROTONOSUPPORT);
      return Errno(EPERM);
    case SOCK_SEQPACKET:
    case SOCK_RDM:
      return Errno(ESOCKTNOSUPPORT);
    default:
      return Errno(EINVAL);
  }
}

}  // namespace

std::shared_ptr<Stack> Stack::NewNamespace(Stack& parent) {
  // The constructor is private (namespaces are made only here), so no make_shared.
  return std::shared_ptr<Stack>(new Stack(&parent.unix_names_));
}

uint64_t Stack::NextIno() {
  static std::atomic<uint64_t> next{20000};
  return next.fetch_add(1);
}

Result<void> Stack::SetLoopbackUp(bool up) {
  if (!configurable_) return Errno(EPERM);
  if (up) lo_v4_.store(true, std::memory_order_release);
  lo_up_.store(up, std::memory_order_release);
  return Ok();
}

std::pair<uint32_t, uint32_t> Stack::PingGroupRange() const {
  uint64_t r = ping_range_.load(std::memory_order_acquire);
  return {static_cast<uint32_t>(r >> 32), static_cast<uint32_t>(r)};
}

bool Stack::InPingGroupRange(uint32_t gid) const {
  auto [low, high] = PingGroupRange();
  return gid >= low && gid <= high;
}

Result<void> Stack::SetPingGroupRange(uint64_t low, uint64_t high) {
  constexpr uint64_t kGidMax = 0xfffffffeu;  // GID_T_MAX: (gid_t)-1 is never valid
  if (low > kGidMax || high > kGidMax) return Errno(EINVAL);
  if (high < low) low = 1, high = 0;
  ping_range_.store((low << 32) | high, std::memory_order_release);
  return Ok();
}

void Stack::Register(Socket* s) {
  absl::MutexLock l(&sockets_mu_);
  sockets_.insert(s);
}

void Stack::Unregister(Socket* s) {
  absl::MutexLock l(&sockets_mu_);
  sockets_.erase(s);
}

std::string Stack::ProcNet(const std::string& name) {
  std::string out;
  int family = name.ends_with("6") ? AF_INET6 : AF_INET;
  int type = name.starts_with("tcp") ? SOCK_STREAM : SOCK_DGRAM;
  if (name == "unix") {
    out = "Num       RefCount Protocol Flags    Type St Inode Path\n";
  } else if (type == SOCK_STREAM) {
    out =
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
        "timeout inode\n";
  } else {
    out =
        "   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
        "timeout inode ref pointer drops\n";
  }
  absl::MutexLock l(&sockets_mu_);
  std::vector<Socket*> sorted(sockets_.begin(), sockets_.end());
  std::sort(sorted.begin(), sorted.end(), [](Socket* a, Socket* b) { return a->ino() < b->ino(); });
  int slot = 0;
  for (Socket* s : sorted) {
    if (name == "unix") {
      if (auto* u = dynamic_cast<UnixSocket*>(s)) out += u->ProcLine();
    } else if (s->family() == family && s->type() == type) {
      if (auto* i = dynamic_cast<InetSocket*>(s)) out += i->ProcLine(slot++);
    }
  }
  return out;
}

Result<vfs::FileRef> Stack::NewSocket(int family, int type, int protocol, const Ucred& owner,
                                      bool net_raw) {
  int flags = (type & SOCK_NONBLOCK) ? O_NONBLOCK : 0;
  int kind = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
  switch (family) {
    case AF_UNIX:
      if (kind != SOCK_STREAM && kind != SOCK_DGRAM && kind != SOCK_SEQPACKET) {
        return Errno(kind == SOCK_RAW || kind == SOCK_RDM ? EPROTONOSUPPORT : ESOCKTNOSUPPORT);
      }
      if (protocol != 0 && protocol != AF_UNIX) return Errno(EPROTONOSUPPORT);
      return vfs::FileRef(std::make_shared<UnixSocket>(*this, kind, flags, owner));
    case AF_INET:
    case AF_INET6: {
      int icmp = family == AF_INET ? int{IPPROTO_ICMP} : int{IPPROTO_ICMPV6};
      if (kind == SOCK_DGRAM && protocol == icmp) {
        // Linux's ping_init_sock: the caller's group must be in net.ipv4.ping_group_range
        // (supplementary groups, which Linux also tries, are not consulted here).
        if (!InPingGroupRange(owner.gid)) return Errno(EACCES);
        return vfs::FileRef(std::make_shared<PingSocket>(*this, family, kind, flags, owner));
      }
      if (kind == SOCK_RAW && protocol == icmp && net_raw) {
        auto s = std::make_shared<PingSocket>(*this, family, kind, flags, owner);
        raw_icmp_.Add(s);
        return vfs::FileRef(std::move(s));
      }
      int proto = SENTRY_TRY(InetProtocol(kind, protocol));
      return vfs::FileRef(std::make_shared<InetSocket>(*this, family, kind, proto, flags, owner));
    }
    case AF_NETLINK:
      if (kind != SOCK_RAW && kind != SOCK_DGRAM) return Errno(ESOCKTNOSUPPORT);
      if (protocol != NETLINK_ROUTE) return Errno(EPROTONOSUPPORT);
      // Every netlink socket of a process gets its tgid as port id: uniqueness only matters
      // for messages between sockets, which this kernel-side-only netlink never sends.
      return vfs::FileRef(std::make_shared<NetlinkSocket>(*this, kind, protocol, flags, owner.pid));
    case AF_PACKET:
      return Errno(EPERM);  // needs CAP_NET_RAW
    default:
      return Errno(EAFNOSUPPORT);
  }
}

Result<std::pair<vfs::FileRef, vfs::FileRef>> Stack::NewPair(int family, int type, int protocol,
                                                             const Ucred& owner) {
  int flags = (type & SOCK_NONBLOCK) ? O_NONBLOCK : 0;
  int kind = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (family != AF_UNIX) {
    if (family == AF_INET || family == AF_INET6) {
      SENTRY_TRY(InetProtocol(kind, protocol));
      return Errno(EOPNOTSUPP);
    }
    return Errno(EAFNOSUPPORT);
  }
  if (kind != SOCK_STREAM && kind != SOCK_DGRAM && kind != SOCK_SEQPACKET) {
    return Errno(kind == SOCK_RAW || kind == SOCK_RDM ? EPROTONOSUPPORT : ESOCKTNOSUPPORT);
  }
  if (protocol != 0 && protocol != AF_UNIX) return Errno(EPROTONOSUPPORT);
  auto a = std::make_shared<UnixSocket>(*this, kind, flags, owner);
  auto b = std::make_shared<UnixSocket>(*this, kind, flags, owner);
  UnixSocket::Pair(a, b, owner);
  return std::make_pair(vfs::FileRef(a), vfs::FileRef(b));
}

}  // namespace sentry::netstack
