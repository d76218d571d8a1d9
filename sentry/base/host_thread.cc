#include "sentry/base/host_thread.h"

#include <sys/rseq.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <thread>

namespace sentry {

void DropOwnRseq() {
  // glibc registers each thread's rseq area with the host kernel, which then rewrites it on
  // the way back to user space after every switch to the thread: two switches per guest
  // syscall on the seccomp platform, for an area nothing in the Sentry reads (glibc's
  // sched_getcpu falls back to the vDSO once the kernel marks the area unregistered). The
  // length must be the registered one: __rseq_size, or 32 where glibc (Debian 12's 2.36)
  // registers 32 bytes and reports the 20 it uses.
  if (__rseq_size == 0) return;
  void* area = static_cast<char*>(__builtin_thread_pointer()) + __rseq_offset;
  if (syscall(SYS_rseq, area, __rseq_size, RSEQ_FLAG_UNREGISTER, RSEQ_SIG) != 0 &&
      errno == EINVAL) {
    (void)syscall(SYS_rseq, area, 32, RSEQ_FLAG_UNREGISTER, RSEQ_SIG);
  }
}

bool StartHostThread(std::function<void()> fn) {
  // std::thread reports pthread_create's EAGAIN as an exception; nothing else here throws.
  try {
    std::thread([fn = std::move(fn)] {
      DropOwnRseq();
      fn();
    }).detach();
    return true;
  } catch (const std::system_error&) {
    return false;
  }
}

}  // namespace sentry
