// syslog(2): the kernel log, as a sandbox sees it: its own, and empty (nothing the host kernel
// logs is shown to a guest).
//
// Access follows Linux with kernel.dmesg_restrict=1 (Debian's default): every action needs
// CAP_SYSLOG (EPERM otherwise), so unprivileged programs see what they would on such a host.
// For the privileged, the log is an empty ring of Linux's default size (CONFIG_LOG_BUF_SHIFT
// 17): reads return nothing, SYSLOG_ACTION_READ waits (interruptibly) for messages that never
// come, and the console controls are accepted without effect.
#include "sentry/kernel/access.h"
#include "syscalls/common.h"

namespace sentry::syscalls {
namespace {

enum Action {
  kClose = 0,
  kOpen = 1,
  kRead = 2,
  kReadAll = 3,
  kReadClear = 4,
  kClear = 5,
  kConsoleOff = 6,
  kConsoleOn = 7,
  kConsoleLevel = 8,
  kSizeUnread = 9,
  kSizeBuffer = 10,
};

constexpr int kLogBufLen = 1 << 17;
constexpr uint64_t kTaskSizeMax = (uint64_t{1} << 47) - 4096;

// The buffer checks of the read actions; `len` 0 reads nothing.
Result<void> CheckReadBuffer(GuestAddr buf, int len) {
  if (buf.IsNull() || len < 0) return Errno(EINVAL);
  if (len == 0) return Ok();
  if (buf.value() > kTaskSizeMax || static_cast<uint64_t>(len) > kTaskSizeMax - buf.value()) {
    return Errno(EFAULT);
  }
  return Ok();
}

}  // namespace

Result<uint64_t> SysSyslog(Task& t, int type, GuestAddr buf, int len) {
  {
    absl::MutexLock l(&t.kernel().mu());
    if (!kernel::MayUseSyslog(t.tg())) return Errno(EPERM);
  }
  switch (type) {
    case kClose:
    case kOpen:
    case kClear:
    case kConsoleOff:
    case kConsoleOn:
    case kSizeUnread:
      return 0;
    case kRead:
      SENTRY_TRY(CheckReadBuffer(buf, len));
      if (len == 0) return 0;
      for (;;) SENTRY_TRY(t.Wait());  // until a signal: nothing is ever logged
    case kReadAll:
    case kReadClear:
      SENTRY_TRY(CheckReadBuffer(buf, len));
      return 0;
    case kConsoleLevel:
      if (len < 1 || len > 8) return Errno(EINVAL);
      return 0;
    case kSizeBuffer:
      return kLogBufLen;
    default:
      return Errno(EINVAL);
  }
}

}  // namespace sentry::syscalls
