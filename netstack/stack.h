// A network stack: one per guest network namespace (the sandbox's first one belongs to the
// kernel; unshare/clone/setns with CLONE_NEWNET make more, see sentry/kernel/namespaces.h).
// It makes sockets and holds the name spaces they meet in: AF_UNIX abstract names, the
// loopback ports of AF_INET/AF_INET6, and the state of its one interface, lo. AF_UNIX path
// names are file system objects, not per namespace: every stack made from another shares
// its path table (Linux finds a path socket through its inode whatever the namespace).
//
// Lock order: Socket::smu_ -> Stack's registries (UnixNames::mu_, InetPorts::mu_,
// RawIcmpSockets::mu_) -> leaves.
// A registry lock is never held while taking a socket's lock.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "netstack/inet.h"
#include "netstack/ping.h"
#include "netstack/policy.h"
#include "netstack/socket.h"

namespace sentry::netstack {

class UnixSocket;

// Where sandbox traffic may go besides loopback: nowhere (--net=none), or out through host
// sockets under an egress policy (--net=host).
enum class NetMode { kNone, kHost };

// AF_UNIX names: abstract names live here only (never in the host's abstract namespace);
// path names are keyed by the socket inode the bind created, in the table that
// `paths_owner` uses (this one's own when null): all stacks share the first stack's, which
// lives as long as the kernel.
class UnixNames {
 public:
  explicit UnixNames(UnixNames* paths_owner = nullptr)
      : paths_owner_(paths_owner ? paths_owner->paths_owner_ : this) {}

  // EADDRINUSE if a live socket holds the name.
  Result<void> BindAbstract(const std::string& name, std::weak_ptr<UnixSocket> s);
  void BindPath(const NameKey& key, std::weak_ptr<UnixSocket> s);
  void Unbind(const std::string& abstract_name, const UnixSocket* s);
  std::shared_ptr<UnixSocket> FindAbstract(const std::string& name);
  std::shared_ptr<UnixSocket> FindPath(const NameKey& key);
  // An unused abstract name of five hex digits, as Linux's autobind picks; EAGAIN (Linux
  // gives ENOSPC) when all are taken.
  Result<std::string> Autobind(std::weak_ptr<UnixSocket> s);

 private:
  UnixNames* const paths_owner_;
  absl::Mutex mu_;
  std::map<std::string, std::weak_ptr<UnixSocket>> abstract_ ABSL_GUARDED_BY(mu_);
  std::map<NameKey, std::weak_ptr<UnixSocket>> paths_ ABSL_GUARDED_BY(mu_);
  uint32_t next_auto_ ABSL_GUARDED_BY(mu_) = 0;
};

// Sockets keep their stack alive (Socket holds a reference taken through
// weak_from_this), so a namespace's stack lives as long as its last task or socket.
class Stack : public std::enable_shared_from_this<Stack> {
 public:
  // The sandbox's first stack: lo is up, and its configuration is the sandbox's (netlink
  // and ioctl changes are refused, as for a task without CAP_NET_ADMIN).
  Stack() = default;
  // A new network namespace's stack: only lo, down, no routes; traffic never leaves it
  // whatever the sandbox's network mode. AF_UNIX path names are `parent`'s.
  static std::shared_ptr<Stack> NewNamespace(Stack& parent);

  // Chooses the mode, once, before the first guest runs. `policy` is required for kHost.
  void Configure(NetMode mode, std::unique_ptr<EgressPolicy> policy) {
    mode_ = mode;
    policy_ = std::move(policy);
  }

  // socket(2): `type` may carry SOCK_NONBLOCK / SOCK_CLOEXEC (the latter is the caller's).
  // `net_raw`: the caller has CAP_NET_RAW in the user namespace owning this stack's network
  // namespace (raw ICMP sockets).
  Result<vfs::FileRef> NewSocket(int family, int type, int protocol, const Ucred& owner,
                                 bool net_raw);
  // socketpair(2): AF_UNIX only (EOPNOTSUPP for others, as Linux).
  Result<std::pair<vfs::FileRef, vfs::FileRef>> NewPair(int family, int type, int protocol,
                                                        const Ucred& owner);

  // Socket inode numbers, unique across every stack (sockfs is one file system).
  static uint64_t NextIno();
  // lo's IFF_UP. While it is down, loopback addresses are unreachable (ENETUNREACH for
  // IPv4, EADDRNOTAVAIL for ::1, as Linux) and netlink lists no addresses.
  bool loopback_up() const { return lo_up_.load(std::memory_order_acquire); }
  // Whether lo has 127.0.0.1: assigned when lo first comes up and kept when it goes down,
  // as Linux keeps it (::1 comes and goes with IFF_UP).
  bool loopback_v4_assigned() const { return lo_v4_.load(std::memory_order_acquire); }
  // Sets lo up or down: EPERM on the sandbox's first stack (see the constructor).
  Result<void> SetLoopbackUp(bool up);
  // Assigns 127.0.0.1 to lo (RTM_NEWADDR of lo's own address): EPERM on the first stack.
  Result<void> AddLoopbackV4() {
    if (!configurable_) return Errno(EPERM);
    lo_v4_.store(true, std::memory_order_release);
    return Ok();
  }
  // net.ipv4.ping_group_range: who may make ping sockets.
  std::pair<uint32_t, uint32_t> PingGroupRange() const;
  bool InPingGroupRange(uint32_t gid) const;
  // As Linux: EINVAL past GID_T_MAX; a range whose low end is above its high end means
  // nobody ("1 0").
  Result<void> SetPingGroupRange(uint64_t low, uint64_t high);
  // net.ipv4.ip_unprivileged_port_start: binding a port below it takes root (1024 by
  // default; Docker sets 0 in a container's namespace). EINVAL outside 0..65535.
  int UnprivilegedPortStart() const { return unpriv_port_start_.load(std::memory_order_relaxed); }
  Result<void> SetUnprivilegedPortStart(int64_t port) {
    if (port < 0 || port > 65535) return Errno(EINVAL);
    unpriv_port_start_.store(static_cast<int>(port), std::memory_order_relaxed);
    return Ok();
  }

  // Every live socket, for the /proc/net tables.
  void Register(Socket* s);
  void Unregister(Socket* s);
  // The body of /proc/net/NAME for NAME in unix, tcp, tcp6, udp, udp6 (header included).
  std::string ProcNet(const std::string& name);
  UnixNames& unix_names() { return unix_names_; }
  InetPorts& ports() { return ports_; }
  PingIdents& ping_idents() { return ping_idents_; }
  RawIcmpSockets& raw_icmp() { return raw_icmp_; }
  NetMode mode() const { return mode_; }
  // --publish (kHost only): (IPPROTO_TCP or IPPROTO_UDP, guest port) -> host port. A guest
  // TCP listener or UDP socket bound on the wildcard address and a published port also
  // listens on (is bound to) the host port. Set before the first guest runs, read-only after.
  using PublishMap = std::map<std::pair<int, uint16_t>, uint16_t>;
  void SetPublished(PublishMap published) { published_ = std::move(published); }
  // Every port is published on itself (an OCI container in a network namespace of its own,
  // whose ports Docker's -p or a CNI plugin forward from outside).
  void SetPublishAll(bool all) { publish_all_ = all; }
  std::optional<uint16_t> PublishedHostPort(int protocol, uint16_t guest_port) const {
    if (mode_ != NetMode::kHost) return std::nullopt;
    if (publish_all_) return guest_port;
    auto it = published_.find({protocol, guest_port});
    if (it == published_.end()) return std::nullopt;
    return it->second;
  }
  EgressPolicy* policy() const { return policy_.get(); }
  // Loopback addresses and ports (kHost only) that lead to the namespace the Sentry runs in
  // instead of the sandbox's own lo: what a container manager serves on the container's
  // loopback (Docker's embedded DNS, 127.0.0.11:53, behind its DNAT rules there). Set before
  // the first guest runs, read-only after.
  void SetHostLoopback(std::vector<InetAddr> addrs) { host_loopback_ = std::move(addrs); }
  bool IsHostLoopback(const InetAddr& a) const {
    if (mode_ != NetMode::kHost) return false;
    for (const InetAddr& h : host_loopback_) {
      if (h.SameIp(a) && h.port == a.port) return true;
    }
    return false;
  }

 private:
  explicit Stack(UnixNames* unix_paths) : configurable_(true), unix_names_(unix_paths) {
    lo_up_ = false;
    lo_v4_ = false;
    ping_range_ = uint64_t{1} << 32;  // "1 0"
  }

  NetMode mode_ = NetMode::kNone;
  std::unique_ptr<EgressPolicy> policy_;
  PublishMap published_;
  bool publish_all_ = false;
  std::vector<InetAddr> host_loopback_;
  const bool configurable_ = false;  // a namespace's own stack, not the sandbox's
  std::atomic<bool> lo_up_{true};
  std::atomic<bool> lo_v4_{true};
  // ping_group_range as (low << 32 | high), one word so that readers see a consistent pair.
  std::atomic<int> unpriv_port_start_{1024};
  std::atomic<uint64_t> ping_range_{(uint64_t{kPingGroupLow} << 32) | kPingGroupHigh};
  UnixNames unix_names_;
  absl::Mutex sockets_mu_;  // taken before any socket's smu_, never after
  std::set<Socket*> sockets_ ABSL_GUARDED_BY(sockets_mu_);
  InetPorts ports_;
  PingIdents ping_idents_;
  RawIcmpSockets raw_icmp_;
};

}  // namespace sentry::netstack
