// The sandbox's network stack: one per kernel. It makes sockets and holds the name spaces
// they meet in: AF_UNIX abstract and path names, and the loopback ports of AF_INET/AF_INET6.
//
// Lock order: Socket::smu_ -> Stack's registries (UnixNames::mu_, InetPorts::mu_) -> leaves.
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
// path names are keyed by the socket inode the bind created.
class UnixNames {
 public:
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
  absl::Mutex mu_;
  std::map<std::string, std::weak_ptr<UnixSocket>> abstract_ ABSL_GUARDED_BY(mu_);
  std::map<NameKey, std::weak_ptr<UnixSocket>> paths_ ABSL_GUARDED_BY(mu_);
  uint32_t next_auto_ ABSL_GUARDED_BY(mu_) = 0;
};

class Stack {
 public:
  Stack() = default;
  // Chooses the mode, once, before the first guest runs. `policy` is required for kHost.
  void Configure(NetMode mode, std::unique_ptr<EgressPolicy> policy) {
    mode_ = mode;
    policy_ = std::move(policy);
  }

  // socket(2): `type` may carry SOCK_NONBLOCK / SOCK_CLOEXEC (the latter is the caller's).
  Result<vfs::FileRef> NewSocket(int family, int type, int protocol, const Ucred& owner);
  // socketpair(2): AF_UNIX only (EOPNOTSUPP for others, as Linux).
  Result<std::pair<vfs::FileRef, vfs::FileRef>> NewPair(int family, int type, int protocol,
                                                        const Ucred& owner);

  uint64_t NextIno() { return next_ino_.fetch_add(1); }
  // Every live socket, for the /proc/net tables.
  void Register(Socket* s);
  void Unregister(Socket* s);
  // The body of /proc/net/NAME for NAME in unix, tcp, tcp6, udp, udp6 (header included).
  std::string ProcNet(const std::string& name);
  UnixNames& unix_names() { return unix_names_; }
  InetPorts& ports() { return ports_; }
  PingIdents& ping_idents() { return ping_idents_; }
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

 private:
  NetMode mode_ = NetMode::kNone;
  std::unique_ptr<EgressPolicy> policy_;
  PublishMap published_;
  bool publish_all_ = false;
  std::atomic<uint64_t> next_ino_{20000};
  UnixNames unix_names_;
  absl::Mutex sockets_mu_;  // taken before any socket's smu_, never after
  std::set<Socket*> sockets_ ABSL_GUARDED_BY(sockets_mu_);
  InetPorts ports_;
  PingIdents ping_idents_;
};

}  // namespace sentry::netstack
