// sysinfo(2) and personality(2): what a process learns about the system and sets about its
// own execution domain.
#include "sentry/kernel/sysinfo.h"
#include "syscalls/common.h"

namespace sentry::syscalls {

Result<uint64_t> SysSysinfo(Task& t, GuestAddr info) {
  kernel::SysinfoData d = kernel::Sysinfo(t.kernel());
  SENTRY_TRY(t.CopyOut(info, d));
  return 0;
}

// Any value is accepted and kept (Linux has no execution domains left to check against);
// 0xffffffff only asks. The sandbox never randomizes its layout, so ADDR_NO_RANDOMIZE changes
// nothing else.
Result<uint64_t> SysPersonality(Task& t, uint32_t persona) {
  absl::MutexLock l(&t.kernel().mu());
  uint32_t old = t.personality_;
  if (persona != 0xffffffff) t.personality_ = persona;
  return old;
}

}  // namespace sentry::syscalls
