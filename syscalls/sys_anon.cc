// Anonymous files: eventfd, eventfd2, timerfd_create/settime/gettime, signalfd, signalfd4,
// memfd_create. (epoll is in sys_epoll.cc.)
#include <linux/memfd.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>

#include "sentry/kernel/signalfd.h"
#include "syscalls/common.h"
#include "vfs/eventfd.h"
#include "vfs/memfd.h"
#include "vfs/timerfd.h"

#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U
#define MFD_EXEC 0x0010U
#endif
#ifndef F_SEAL_EXEC
#define F_SEAL_EXEC 0x0020
#endif

namespace sentry::syscalls {
namespace {

struct ITimerspec {
  abi::Timespec interval;
  abi::Timespec value;
};

constexpr int64_t kNsPerSec = 1000000000;

Result<int64_t> TimespecNs(const abi::Timespec& ts) {
  if (ts.sec < 0 || ts.nsec < 0 || ts.nsec >= kNsPerSec) return Errno(EINVAL);
  if (ts.sec > INT64_MAX / kNsPerSec - 1) return INT64_MAX / 2;  // far enough: never
  return ts.sec * kNsPerSec + ts.nsec;
}

ITimerspec ToITimerspec(const vfs::TimerSpec& s) {
  return {{s.interval_ns / kNsPerSec, s.interval_ns % kNsPerSec},
          {s.value_ns / kNsPerSec, s.value_ns % kNsPerSec}};
}

Result<vfs::TimerFd*> GetTimerFd(const vfs::FileRef& f) {
  auto* tf = dynamic_cast<vfs::TimerFd*>(f.get());
  if (!tf) return Errno(EINVAL);
  return tf;
}

Result<uint64_t> Install(Task& t, vfs::FileRef f, bool cloexec) {
  return t.fds().Add(std::move(f), cloexec, 0, NofileLimit(t));
}

}  // namespace

Result<uint64_t> SysEventfd2(Task& t, uint32_t initval, int flags) {
  if (flags & ~(EFD_CLOEXEC | EFD_NONBLOCK | EFD_SEMAPHORE)) return Errno(EINVAL);
  return Install(t, vfs::NewEventFd(initval, flags), flags & EFD_CLOEXEC);
}

Result<uint64_t> SysEventfd(Task& t, uint32_t initval) { return SysEventfd2(t, initval, 0); }

Result<uint64_t> SysTimerfdCreate(Task& t, int clock, int flags) {
  if (flags & ~(TFD_CLOEXEC | TFD_NONBLOCK)) return Errno(EINVAL);
  if (!vfs::TimerFdClockOk(clock)) return Errno(EINVAL);
  auto f = std::make_shared<vfs::TimerFd>(clock, O_RDWR | (flags & TFD_NONBLOCK));
  return Install(t, std::move(f), flags & TFD_CLOEXEC);
}

Result<uint64_t> SysTimerfdSettime(Task& t, int fd, int flags, GuestAddr new_addr,
                                   GuestAddr old_addr) {
  ITimerspec its = SENTRY_TRY(t.CopyIn<ITimerspec>(new_addr));
  if (flags & ~(TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET)) return Errno(EINVAL);
  vfs::TimerSpec spec;
  spec.interval_ns = SENTRY_TRY(TimespecNs(its.interval));
  spec.value_ns = SENTRY_TRY(TimespecNs(its.value));
  auto f = SENTRY_TRY(GetFile(t, fd));
  vfs::TimerFd* tf = SENTRY_TRY(GetTimerFd(f));
  // Partial: TFD_TIMER_CANCEL_ON_SET is accepted, but the clock is never set, so a read
  // never fails with ECANCELED.
  vfs::TimerSpec old = tf->Set(spec, flags & TFD_TIMER_ABSTIME);
  if (!old_addr.IsNull()) SENTRY_TRY(t.CopyOut(old_addr, ToITimerspec(old)));
  return 0;
}

Result<uint64_t> SysTimerfdGettime(Task& t, int fd, GuestAddr cur_addr) {
  auto f = SENTRY_TRY(GetFile(t, fd));
  vfs::TimerFd* tf = SENTRY_TRY(GetTimerFd(f));
  SENTRY_TRY(t.CopyOut(cur_addr, ToITimerspec(tf->Get())));
  return 0;
}

Result<uint64_t> SysSignalfd4(Task& t, int fd, GuestAddr mask_addr, size_t sizemask, int flags) {
  if (flags & ~(SFD_CLOEXEC | SFD_NONBLOCK)) return Errno(EINVAL);
  if (sizemask != sizeof(abi::SigSet)) return Errno(EINVAL);
  abi::SigSet mask = SENTRY_TRY(t.CopyIn<abi::SigSet>(mask_addr));
  if (fd == -1) {
    auto f = std::make_shared<kernel::SignalFd>(t.kernel(), mask,
                                                O_RDWR | (flags & SFD_NONBLOCK));
    return Install(t, std::move(f), flags & SFD_CLOEXEC);
  }
  auto f = SENTRY_TRY(GetFile(t, fd));
  auto* sf = dynamic_cast<kernel::SignalFd*>(f.get());
  if (!sf) return Errno(EINVAL);
  sf->SetMask(mask);
  return static_cast<uint64_t>(fd);
}

Result<uint64_t> SysSignalfd(Task& t, int fd, GuestAddr mask_addr, size_t sizemask) {
  return SysSignalfd4(t, fd, mask_addr, sizemask, 0);
}

Result<uint64_t> SysMemfdCreate(Task& t, GuestAddr name_addr, unsigned flags) {
  // Partial: MFD_HUGETLB is refused (EINVAL), as a kernel without hugetlbfs does.
  constexpr unsigned kKnown = MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_NOEXEC_SEAL | MFD_EXEC;
  if (flags & ~kKnown) return Errno(EINVAL);
  if ((flags & MFD_NOEXEC_SEAL) && (flags & MFD_EXEC)) return Errno(EINVAL);
  // "memfd:" and the name fit in NAME_MAX.
  constexpr size_t kMaxName = 255 - 6;
  auto name = t.CopyInString(name_addr, kMaxName + 1);
  if (!name.ok()) return name.error() == ENAMETOOLONG ? Errno(EINVAL) : name.error();
  bool sealing = flags & (MFD_ALLOW_SEALING | MFD_NOEXEC_SEAL);
  vfs::FileRef f = SENTRY_TRY(vfs::NewMemfd(*name, sealing, t.VfsContext().creds));
  if (flags & MFD_NOEXEC_SEAL) {
    vfs::SetAttrRequest r;
    r.mask = vfs::kAttrMode;
    r.mode = 0666;
    SENTRY_TRY(f->inode()->SetAttr(r));
    SENTRY_TRY(vfs::AddSeals(f, F_SEAL_EXEC));
  }
  return Install(t, std::move(f), flags & MFD_CLOEXEC);
}

}  // namespace sentry::syscalls
