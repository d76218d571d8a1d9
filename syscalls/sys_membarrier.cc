// membarrier(2), with Linux 6.1's commands and answers.
//
// A guest thread runs on some host CPU in its stub, so a barrier on every thread of the guest
// process is a barrier on every host CPU that may be running one: the host's
// MEMBARRIER_CMD_GLOBAL (an RCU grace period: each CPU passes through the kernel, which is a
// full barrier and, on x86, serializes the core). The private commands use it too, which is
// more than they promise and never less.
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "syscalls/common.h"

namespace sentry::syscalls {
namespace {

// Linux 6.1's MEMBARRIER_CMD_BITMASK on x86-64: every command up to the RSEQ pair (no
// MEMBARRIER_CMD_GET_REGISTRATIONS, which came in 6.3). RSEQ's barrier is a plain private
// barrier: it does not restart the rseq critical sections of threads running meanwhile.
constexpr int kSupported =
    MEMBARRIER_CMD_GLOBAL | MEMBARRIER_CMD_GLOBAL_EXPEDITED |
    MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED | MEMBARRIER_CMD_PRIVATE_EXPEDITED |
    MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED | MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE |
    MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE | MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ |
    MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ;

Result<uint64_t> HostBarrier() {
  if (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) != 0) return Errno(errno);
  return 0;
}

// A private barrier: refused (EPERM) unless the process registered for it; needed only when
// another thread could be running the process's code.
Result<uint64_t> PrivateBarrier(Task& t, int registration) {
  if (!(t.mm().membarrier_registered() & registration)) return Errno(EPERM);
  size_t threads;
  {
    absl::MutexLock l(&t.kernel().mu());
    threads = t.tg().tasks.size();
  }
  return threads > 1 ? HostBarrier() : Result<uint64_t>(0);
}

}  // namespace

Result<uint64_t> SysMembarrier(Task& t, int cmd, unsigned flags, int cpu_id) {
  (void)cpu_id;  // MEMBARRIER_CMD_FLAG_CPU narrows the barrier; a wider one is still correct
  if (cmd == MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ) {
    if (flags != 0 && flags != MEMBARRIER_CMD_FLAG_CPU) return Errno(EINVAL);
  } else if (flags != 0) {
    return Errno(EINVAL);
  }
  switch (cmd) {
    case MEMBARRIER_CMD_QUERY:
      return kSupported;
    case MEMBARRIER_CMD_GLOBAL:
    case MEMBARRIER_CMD_GLOBAL_EXPEDITED:
      return HostBarrier();
    case MEMBARRIER_CMD_PRIVATE_EXPEDITED:
      return PrivateBarrier(t, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED);
    case MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE:
      return PrivateBarrier(t, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE);
    case MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ:
      return PrivateBarrier(t, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ);
    case MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED:
    case MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED:
    case MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE:
    case MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ:
      t.mm().add_membarrier_registration(static_cast<uint32_t>(cmd));
      return 0;
    default:
      return Errno(EINVAL);
  }
}

}  // namespace sentry::syscalls
