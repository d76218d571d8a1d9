// NETLINK_ROUTE sockets: enough for getifaddrs, if_nameindex, `ip addr`, `ip link` and
// `ip route` to see the stack's one interface, lo (127.0.0.1/8 and ::1/128 while it is up).
// The changes offered are lo up/down (`ip link set lo up`) and re-adding lo's own
// addresses, in a network namespace's own stack, for a caller with CAP_NET_ADMIN. Other changes,
// and any change to the sandbox's first stack, get EPERM, as for a task without CAP_NET_ADMIN;
// other protocols are not offered (EPROTONOSUPPORT).
#pragma once

#include <deque>

#include "netstack/socket.h"

namespace sentry::netstack {

class NetlinkSocket final : public Socket {
 public:
  NetlinkSocket(Stack& stack, int type, int protocol, int flags, int32_t default_port);

  Result<void> Bind(std::span<const uint8_t> addr, PathOps& paths) override;
  Result<void> Listen(int, const Ucred&) override { return Errno(EOPNOTSUPP); }
  Result<vfs::FileRef> Accept(Caller&, bool) override { return Errno(EOPNOTSUPP); }
  Result<void> Connect(Caller& c, std::span<const uint8_t> addr, PathOps& paths) override;
  Result<void> Shutdown(int) override { return Errno(EOPNOTSUPP); }
  Result<SockAddr> SockName() override;
  Result<SockAddr> PeerName() override;
  Result<size_t> Send(Caller& c, SendRequest& req, PathOps& paths) override;
  Result<RecvResult> Recv(Caller& c, std::span<uint8_t> dst, int flags) override;
  Result<std::vector<uint8_t>> GetOption(int level, int name) override;
  Result<void> SetOption(int level, int name, std::span<const uint8_t> val) override;
  EventMask Readiness(EventMask mask) override;
  size_t InQueue() override;

 private:
  // Answers one request message; appends the reply messages to `out`.
  void Answer(const uint8_t* msg, size_t len, bool net_admin, std::vector<uint8_t>& out);
  // RTM_NEWLINK / RTM_SETLINK of lo: 0 or the errno for the reply.
  int SetLink(const uint8_t* msg, size_t len, bool net_admin);
  // RTM_NEWADDR of lo's own loopback address: 0 or the errno for the reply.
  int AddLoopbackAddress(const uint8_t* msg, size_t len, bool net_admin);

  const int32_t default_port_;
  int32_t port_ ABSL_GUARDED_BY(smu_) = 0;
  uint32_t groups_ ABSL_GUARDED_BY(smu_) = 0;
  // Replies not yet read, at most rcvbuf_ bytes of them (more are dropped with ENOBUFS).
  std::deque<std::vector<uint8_t>> rx_ ABSL_GUARDED_BY(smu_);
  size_t rx_bytes_ ABSL_GUARDED_BY(smu_) = 0;
};

}  // namespace sentry::netstack
