// epoll_create, epoll_create1, epoll_ctl, epoll_wait, epoll_pwait, epoll_pwait2.
#include <sys/epoll.h>

#include <climits>

#include "syscalls/common.h"
#include "vfs/epoll.h"

namespace sentry::syscalls {
namespace {

constexpr int kMaxEvents = INT_MAX / sizeof(struct epoll_event);

// Waits on `epfd` and copies the events out. Never restarted: a signal gives EINTR, as Linux.
Result<uint64_t> EpollWait(Task& t, int epfd, GuestAddr events, int maxevents,
                           absl::Time deadline, GuestAddr sigmask = GuestAddr(0)) {
  if (maxevents <= 0 || maxevents > kMaxEvents) return Errno(EINVAL);
  auto f = SENTRY_TRY(GetFile(t, epfd));
  auto* ep = dynamic_cast<vfs::Epoll*>(f.get());
  if (!ep) return Errno(EINVAL);
  SENTRY_TRY(SetTemporarySignalMask(t, sigmask));
  auto r = ep->Wait(t, maxevents, deadline);
  if (!r.ok()) return r.error() == kERESTARTSYS ? Errno(EINTR) : r.error();
  if (r->empty()) return 0;
  SENTRY_TRY(t.CopyOutBytes(events, {reinterpret_cast<const uint8_t*>(r->data()),
                                     r->size() * sizeof(struct epoll_event)}));
  return r->size();
}

absl::Time DeadlineFromMs(int timeout_ms) {
  if (timeout_ms < 0) return absl::InfiniteFuture();
  return absl::Now() + absl::Milliseconds(timeout_ms);
}

}  // namespace

Result<uint64_t> SysEpollCreate1(Task& t, int flags) {
  if (flags & ~EPOLL_CLOEXEC) return Errno(EINVAL);
  return t.fds().Add(vfs::NewEpoll(), flags & EPOLL_CLOEXEC, 0, NofileLimit(t));
}

Result<uint64_t> SysEpollCreate(Task& t, int size) {
  if (size <= 0) return Errno(EINVAL);
  return SysEpollCreate1(t, 0);
}

Result<uint64_t> SysEpollCtl(Task& t, int epfd, int op, int fd, GuestAddr event) {
  // Checked in Linux's order: the event, both fds, pollability, then the epoll instance.
  struct epoll_event ev {};
  if (op != EPOLL_CTL_DEL) ev = SENTRY_TRY(t.CopyIn<struct epoll_event>(event));
  auto epf = SENTRY_TRY(GetFile(t, epfd));
  auto file = SENTRY_TRY(GetFile(t, fd));
  if (!vfs::EpollCanWatch(*file)) return Errno(EPERM);
  auto* ep = dynamic_cast<vfs::Epoll*>(epf.get());
  if (!ep || epf == file) return Errno(EINVAL);
  switch (op) {
    case EPOLL_CTL_ADD:
      SENTRY_TRY(ep->Add(fd, file, ev));
      return 0;
    case EPOLL_CTL_MOD:
      SENTRY_TRY(ep->Modify(fd, file, ev));
      return 0;
    case EPOLL_CTL_DEL:
      SENTRY_TRY(ep->Delete(fd, file));
      return 0;
    default:
      return Errno(EINVAL);
  }
}

Result<uint64_t> SysEpollWait(Task& t, int epfd, GuestAddr events, int maxevents, int timeout) {
  return EpollWait(t, epfd, events, maxevents, DeadlineFromMs(timeout));
}

Result<uint64_t> SysEpollPwait(Task& t, int epfd, GuestAddr events, int maxevents, int timeout,
                               GuestAddr sigmask, size_t sigsetsize) {
  if (!sigmask.IsNull() && sigsetsize != sizeof(abi::SigSet)) return Errno(EINVAL);
  return EpollWait(t, epfd, events, maxevents, DeadlineFromMs(timeout), sigmask);
}

Result<uint64_t> SysEpollPwait2(Task& t, int epfd, GuestAddr events, int maxevents,
                                GuestAddr timeout, GuestAddr sigmask, size_t sigsetsize) {
  if (!sigmask.IsNull() && sigsetsize != sizeof(abi::SigSet)) return Errno(EINVAL);
  absl::Time deadline = absl::InfiniteFuture();
  if (!timeout.IsNull()) deadline = absl::Now() + SENTRY_TRY(CopyInDuration(t, timeout));
  return EpollWait(t, epfd, events, maxevents, deadline, sigmask);
}

}  // namespace sentry::syscalls
