#include "platform/stub/fd_channel.h"

#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <span>

#include "platform/stub/stub_control.h"
#include "sentry/base/host_fds.h"
#include "sentry/base/status.h"

namespace sentry::platform {

namespace {

// What Lend writes at Layout::kStubScratch for the stub's recvmsg: a msghdr whose pointers
// are stub addresses inside this same block (the stub is x86-64 like the Sentry, so the host
// layouts match).
struct Scratch {
  struct msghdr msg;
  struct iovec iov;
  uint64_t seq;
  alignas(struct cmsghdr) uint8_t control[CMSG_SPACE(sizeof(int))];
};
static_assert(sizeof(Scratch) <= Layout::kStubBatchTable - Layout::kStubScratch);

void* StubPtr(size_t offset) { return reinterpret_cast<void*>(Layout::kStubScratch + offset); }

// Closes every fd an SCM_RIGHTS message brought into the Sentry.
void CloseReceived(struct msghdr& msg) {
  for (struct cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < n; i++) {
      int fd;
      memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
      close(fd);
    }
  }
}

}  // namespace

absl::StatusOr<std::shared_ptr<FdChannel>> FdChannel::Create() {
  int sv[2];
  if (RetryOnFdShortage([&] { return socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv); }) !=
      0) {
    return ErrnoStatus("socketpair (stub fd channel)");
  }
  return std::shared_ptr<FdChannel>(new FdChannel(sv[0], sv[1]));
}

FdChannel::~FdChannel() {
  close(sentry_end_);
  close(stub_end_);
}

void FdChannel::Drain() {
  for (;;) {
    uint64_t seq;
    struct iovec iov = {&seq, sizeof(seq)};
    alignas(struct cmsghdr) uint8_t control[CMSG_SPACE(16 * sizeof(int))];
    struct msghdr msg {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    if (recvmsg(stub_end_, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) < 0) return;
    CloseReceived(msg);
  }
}

Result<int> FdChannel::Lend(StubInjector& via, AddressSpace& mem, int host_fd) {
  absl::MutexLock l(&mu_);
  uint64_t seq = next_seq_++;

  // The Sentry's half: queue `host_fd` for the stubs.
  {
    struct iovec iov = {&seq, sizeof(seq)};
    alignas(struct cmsghdr) uint8_t control[CMSG_SPACE(sizeof(int))] = {};
    struct msghdr msg {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &host_fd, sizeof(int));
    if (sendmsg(sentry_end_, &msg, MSG_DONTWAIT | MSG_NOSIGNAL) != sizeof(seq)) {
      Drain();
      return Errno(EOPNOTSUPP);
    }
  }

  // The stub's half. The scratch page is rewritten every time: guest code may have scribbled
  // on it, which can only spoil this transfer (it is checked below), never reach the Sentry.
  Scratch s{};
  s.iov = {StubPtr(offsetof(Scratch, seq)), sizeof(s.seq)};
  s.msg.msg_iov = static_cast<struct iovec*>(StubPtr(offsetof(Scratch, iov)));
  s.msg.msg_iovlen = 1;
  s.msg.msg_control = StubPtr(offsetof(Scratch, control));
  s.msg.msg_controllen = sizeof(s.control);
  auto bytes = [&s]() { return std::span<uint8_t>(reinterpret_cast<uint8_t*>(&s), sizeof(s)); };
  if (mem.WriteMemory(GuestAddr(Layout::kStubScratch), bytes()) != sizeof(s)) {
    Drain();
    return Errno(EOPNOTSUPP);
  }
  Result<int64_t> n = via.StubSyscall(SYS_recvmsg, kStubChannelFd, Layout::kStubScratch,
                                      MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  if (!n.ok() || *n < 0) {
    Drain();
    if (!n.ok()) return n.error();
    return Errno(EOPNOTSUPP);
  }

  // Read the result back once and validate it: it sits in memory the guest can write.
  if (mem.ReadMemory(GuestAddr(Layout::kStubScratch), bytes()) != sizeof(s)) {
    Drain();
    return Errno(EOPNOTSUPP);
  }
  int fd = -1;
  struct cmsghdr c;
  memcpy(&c, s.control, sizeof(c));
  if (c.cmsg_len == CMSG_LEN(sizeof(int)) && c.cmsg_level == SOL_SOCKET &&
      c.cmsg_type == SCM_RIGHTS) {
    memcpy(&fd, s.control + CMSG_LEN(0), sizeof(fd));  // CMSG_LEN(0): where the data starts
  }
  bool good = *n == sizeof(seq) && s.seq == seq && !(s.msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) &&
              fd >= 0 && fd != kStubChannelFd;
  if (!good) {
    // A stale message (ours is then still queued) or a scribbled result: give up on this
    // transfer. An fd that did arrive is closed; the guest cannot use it either way.
    if (fd >= 0 && fd != kStubChannelFd) (void)via.StubSyscall(SYS_close, fd);
    Drain();
    return Errno(EOPNOTSUPP);
  }
  return fd;
}

}  // namespace sentry::platform
