// rseq(2): the registration rules and the signal-delivery restart are in
// sentry/kernel/rseq.{h,cc}; the host kernel does the rest on the guest's host thread.
#include "sentry/kernel/rseq.h"

#include "syscalls/common.h"

namespace sentry::syscalls {

Result<uint64_t> SysRseq(Task& t, uint64_t area, uint32_t len, int flags, uint32_t sig) {
  SENTRY_TRY(kernel::RseqSyscall(t, area, len, flags, sig));
  return 0;
}

}  // namespace sentry::syscalls
