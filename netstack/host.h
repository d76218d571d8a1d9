// Host sockets behind guest sockets, for --net=host: a guest TCP socket that connects to an
// address outside the sandbox, or a UDP socket that sends there, gets a host socket of the
// Sentry's (made only after the egress policy allowed the destination) and relays through it.
//
// A host socket is always nonblocking. One Sentry thread watches every host socket with an
// edge-triggered host epoll and notifies the guest socket's WaitQueue, so that guest poll,
// epoll and blocking calls wait on the queue as they do for sandbox-internal sockets.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <span>

#include "netstack/inet.h"
#include "sentry/base/wait_queue.h"

namespace sentry::netstack {

class HostLink {
 public:
  // A nonblocking host socket for a destination of `dst`'s family (IPv4-mapped addresses
  // get an AF_INET socket), watched for `queue`. `protocol` is 0 (TCP, UDP) or, for ping
  // sockets, IPPROTO_ICMP / IPPROTO_ICMPV6 with SOCK_DGRAM.
  static Result<std::unique_ptr<HostLink>> Open(const InetAddr& dst, int type, WaitQueue* queue,
                                                int protocol = 0);
  // --publish: a host socket listening on `local` (the wildcard of its family and the host
  // port), SO_REUSEADDR as servers set it; EADDRINUSE when the host port is taken.
  static Result<std::unique_ptr<HostLink>> Listen(const InetAddr& local, bool v6only, int backlog,
                                                  WaitQueue* queue);
  // A host socket of `type` bound to `local` (SO_REUSEADDR); EADDRINUSE when taken.
  static Result<std::unique_ptr<HostLink>> Bound(const InetAddr& local, int type, bool v6only,
                                                 WaitQueue* queue);
  // Takes over a connected host socket (from AcceptFd), watched for `queue`.
  static Result<std::unique_ptr<HostLink>> Adopt(int fd, bool v4, WaitQueue* queue);
  ~HostLink();
  HostLink(const HostLink&) = delete;
  HostLink& operator=(const HostLink&) = delete;

  int fd() const { return fd_; }
  // One pending connection of a listening socket: a nonblocking, close-on-exec fd and the
  // remote address; EAGAIN if none waits.
  Result<int> AcceptFd(InetAddr* peer);
  // The host socket's own address.
  Result<InetAddr> LocalAddr();
  bool v4() const { return v4_; }
  // Starts a connection: Ok if it completed, EINPROGRESS if pending, or the failure.
  Result<void> Connect(const InetAddr& dst);
  // One nonblocking send or receive (flags are MSG_*; MSG_DONTWAIT and MSG_NOSIGNAL are
  // added). EAGAIN when it would block.
  Result<size_t> Send(std::span<const uint8_t> data, int flags, const InetAddr* to);
  // `ttl`, if given, receives the IP_TTL / IPV6_HOPLIMIT control message's value (when the
  // socket asked for it with SetIntOption).
  Result<size_t> Recv(std::span<uint8_t> dst, int flags, InetAddr* from, size_t* length,
                      int* msg_flags, int* ttl = nullptr);
  Result<void> SetIntOption(int level, int name, int value);
  // The host's poll events now.
  EventMask Readiness();
  // SO_ERROR of the host socket, cleared.
  int TakeError();
  Result<void> Shutdown(int how);
  size_t InQueue();
  size_t OutQueue();

 private:
  HostLink(int fd, bool v4) : fd_(fd), v4_(v4) {}

  const int fd_;
  const bool v4_;
  uint64_t watch_id_ = 0;
};

// `dst` as a host sockaddr of the family `v4` says; the length.
socklen_t HostSockaddr(const InetAddr& dst, bool v4, struct sockaddr_storage* out);
// A host sockaddr as an InetAddr.
InetAddr FromHostSockaddr(const struct sockaddr_storage& ss);

}  // namespace sentry::netstack
