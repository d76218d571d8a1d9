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
  // get an AF_INET socket), watched for `queue`.
  static Result<std::unique_ptr<HostLink>> Open(const InetAddr& dst, int type, WaitQueue* queue);
  ~HostLink();
  HostLink(const HostLink&) = delete;
  HostLink& operator=(const HostLink&) = delete;

  int fd() const { return fd_; }
  bool v4() const { return v4_; }
  // Starts a connection: Ok if it completed, EINPROGRESS if pending, or the failure.
  Result<void> Connect(const InetAddr& dst);
  // One nonblocking send or receive (flags are MSG_*; MSG_DONTWAIT and MSG_NOSIGNAL are
  // added). EAGAIN when it would block.
  Result<size_t> Send(std::span<const uint8_t> data, int flags, const InetAddr* to);
  Result<size_t> Recv(std::span<uint8_t> dst, int flags, InetAddr* from, size_t* length,
                      int* msg_flags);
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
