// seccomp(2): the filters, their checks and their actions are in sentry/kernel/seccomp.{h,cc}.
#include "sentry/kernel/seccomp.h"

#include "syscalls/common.h"

namespace sentry::syscalls {

Result<uint64_t> SysSeccomp(Task& t, unsigned op, unsigned flags, GuestAddr args) {
  return kernel::SeccompSyscall(t, op, flags, args.value());
}

}  // namespace sentry::syscalls
