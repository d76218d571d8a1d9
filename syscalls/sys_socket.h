// What the socket handlers (sys_socket.cc, sys_socket_msg.cc) share.
#pragma once

#include <utility>
#include <vector>

#include "netstack/socket.h"
#include "syscalls/common.h"

namespace sentry::syscalls {

// AF_UNIX path names as the calling task sees the file tree.
class TaskPaths final : public netstack::PathOps {
 public:
  explicit TaskPaths(Task& t) : t_(t) {}
  Result<netstack::NameKey> BindNode(const std::string& path) override;
  Result<netstack::NameKey> Lookup(const std::string& path) override;

 private:
  Task& t_;
};

// The calling task as a socket operation needs it: how it blocks, who it is.
struct Caller : netstack::Caller {
  explicit Caller(Task& t);
};

// The network stack of the caller's network namespace, where its new sockets go.
netstack::Stack& NetStack(Task& t);

// The socket `fd` names: EBADF, or ENOTSOCK for other files.
Result<std::pair<vfs::FileRef, netstack::Socket*>> GetSocket(Task& t, int fd);
// A guest socket address (EINVAL past sizeof(struct sockaddr_storage) or below 0).
Result<std::vector<uint8_t>> CopyInAddr(Task& t, GuestAddr addr, int len);
// Writes an address back as getsockname does: as much as the guest's *len_addr allows,
// then the full length into *len_addr. Nothing when len_addr is null.
Result<void> CopyOutAddr(Task& t, const std::vector<uint8_t>& a, GuestAddr addr,
                         GuestAddr len_addr);

// Socket ioctls beyond FIONREAD: SIOCOUTQ and the SIOCGIF* queries of the loopback interface.
// ENOTTY for anything else.
Result<uint64_t> SocketIoctl(Task& t, vfs::FileDescription& f, uint64_t cmd, uint64_t arg);

}  // namespace sentry::syscalls
