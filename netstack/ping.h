// ICMP echo ("ping") sockets: socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP) and
// socket(AF_INET6, SOCK_DGRAM, IPPROTO_ICMPV6), the unprivileged echo sockets Linux offers to
// callers whose group is in net.ipv4.ping_group_range. The guest writes an echo request (an
// ICMP header and payload, no IP header); the kernel puts the socket's ident (its "port")
// in the id field, and recvmsg returns the echo reply the same way.
//
// On the sandbox's loopback (127/8, ::1, the wildcard) the Sentry answers the request itself.
// Under --net=host an echo to an address the egress policy allows goes through a host ping
// socket of the Sentry's (the host rewrites the id to its own ident; the reply's id is put
// back to the guest's). Raw sockets stay refused (netstack/stack.cc).
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>

#include "netstack/inet.h"
#include "netstack/socket.h"

namespace sentry::netstack {

// net.ipv4.ping_group_range of the sandbox's first network namespace: every group. The
// sandbox's ids are its own (root inside is nobody outside), and an echo leaves only under
// --net=host, through the policy, so there is nothing the host's narrower default ("1 0":
// nobody) would protect here. A namespace made inside starts with Linux's "1 0".
inline constexpr uint32_t kPingGroupLow = 0;
inline constexpr uint32_t kPingGroupHigh = 2147483647;

// The idents in use, per family (Linux keeps one table for both; a v4 and a v6 socket with
// the same ident never see each other's replies, so one per family changes nothing visible).
// As on Linux, ping sockets start with SO_REUSEADDR on, and sockets that all have it share
// an ident.
class PingIdents {
 public:
  // Takes `ident`, or a free one when 0. EADDRINUSE if a holder or the caller does not
  // reuse; EAGAIN if no ident is free.
  Result<uint16_t> Take(bool v6, uint16_t ident, bool reuse);
  void Release(bool v6, uint16_t ident, bool reuse);

 private:
  struct Holders {
    int count = 0;
    int exclusive = 0;  // holders without SO_REUSEADDR
  };
  absl::Mutex mu_;
  std::map<std::pair<bool, uint16_t>, Holders> used_ ABSL_GUARDED_BY(mu_);
  uint16_t next_ ABSL_GUARDED_BY(mu_) = 1;
};

class PingSocket final : public Socket, public std::enable_shared_from_this<PingSocket> {
 public:
  PingSocket(Stack& stack, int family, int flags, const Ucred& owner);
  ~PingSocket() override;

  Result<void> Bind(std::span<const uint8_t> addr, PathOps& paths) override;
  Result<void> Listen(int, const Ucred&) override { return Errno(EOPNOTSUPP); }
  Result<vfs::FileRef> Accept(Caller&, bool) override { return Errno(EOPNOTSUPP); }
  Result<void> Connect(Caller& c, std::span<const uint8_t> addr, PathOps& paths) override;
  Result<void> Shutdown(int how) override;
  Result<SockAddr> SockName() override;
  Result<SockAddr> PeerName() override;
  Result<size_t> Send(Caller& c, SendRequest& req, PathOps& paths) override;
  Result<RecvResult> Recv(Caller& c, std::span<uint8_t> dst, int flags) override;
  Result<std::vector<uint8_t>> GetOption(int level, int name) override;
  Result<void> SetOption(int level, int name, std::span<const uint8_t> val) override;
  EventMask Readiness(EventMask mask) override;
  size_t InQueue() override;

 private:
  struct Reply {
    std::vector<uint8_t> data;  // ICMP header and payload
    InetAddr from;
    int ttl = 64;
  };
  bool v6() const { return family_ == AF_INET6; }
  // The guest's sockaddr as an address of this socket's family (EINVAL / EAFNOSUPPORT).
  Result<InetAddr> ParseAddr(std::span<const uint8_t> addr);
  SockAddr Format(const InetAddr& a) const;
  // Whether `dst` is the sandbox's own; if not: ENETUNREACH under --net=none, EPERM (and
  // the denial line) when the egress policy refuses it.
  Result<bool> Local(const InetAddr& dst, const char* what);
  Result<void> AutobindLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(smu_);
  // The reply the sandbox's loopback gives to `request` (already checked) from `dst`.
  void AnswerLocally(std::vector<uint8_t> request, const InetAddr& dst);
  Result<size_t> SendHost(std::span<const uint8_t> request, const InetAddr& dst);
  // One reply from the host socket, with the guest's ident; nullopt when none is waiting.
  std::optional<Result<RecvResult>> RecvHost(std::span<uint8_t> dst, int flags)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(smu_);
  std::vector<IpCmsg> Cmsgs(int ttl) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(smu_);

  uint16_t ident_ ABSL_GUARDED_BY(smu_) = 0;  // host order; 0 until bound
  bool bound_ ABSL_GUARDED_BY(smu_) = false;
  bool bound_reuse_ ABSL_GUARDED_BY(smu_) = false;  // SO_REUSEADDR when the ident was taken
  InetAddr local_ ABSL_GUARDED_BY(smu_);
  std::optional<InetAddr> peer_ ABSL_GUARDED_BY(smu_);
  bool shut_rd_ ABSL_GUARDED_BY(smu_) = false;
  bool shut_wr_ ABSL_GUARDED_BY(smu_) = false;
  std::deque<Reply> rx_ ABSL_GUARDED_BY(smu_);
  size_t rx_bytes_ ABSL_GUARDED_BY(smu_) = 0;
  // IPPROTO_IP / IPPROTO_IPV6 options as set (IP_RECVTTL, IP_RECVERR, IP_TTL...).
  std::map<std::pair<int, int>, int> int_opts_ ABSL_GUARDED_BY(smu_);
  // --net=host: the host ping socket, made on the first echo that leaves. Kept until
  // destruction, so a pointer taken under smu_ stays valid while the caller holds the socket.
  std::unique_ptr<HostLink> host_ ABSL_GUARDED_BY(smu_);
};

// The Internet checksum (RFC 1071) of `data`, continuing from `sum`.
uint16_t InetChecksum(std::span<const uint8_t> data, uint32_t sum = 0);

}  // namespace sentry::netstack
