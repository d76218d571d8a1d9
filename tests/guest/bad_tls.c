// clone(CLONE_SETTLS) and arch_prctl(ARCH_SET_FS/GS) with a TLS base the CPU cannot hold
// (non-canonical or at/above TASK_SIZE_MAX) fail with EPERM and change nothing; the process
// carries on. Prints one line per case and "bad_tls done"; run natively and under sentry-run,
// the two outputs must be equal (bad_tls.sh).
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <errno.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const uint64_t kBad[] = {
    0x8000000000000000ull,  // non-canonical
    0x0000800000000000ull,  // just past the user half
    0x00007ffffffff000ull,  // TASK_SIZE_MAX itself
    0xffffffffffffffffull,
};

static void Report(const char* what, uint64_t tls, long r, int err) {
  printf("%s(%#llx) = %ld %s\n", what, (unsigned long long)tls, r,
         r < 0 ? strerrorname_np(err) : "");
  fflush(stdout);
}

int main(void) {
  for (size_t i = 0; i < sizeof(kBad) / sizeof(kBad[0]); i++) {
    uint64_t tls = kBad[i];
    // A fork-like clone: if it ever succeeded, the child exits at once.
    errno = 0;
    long r = syscall(SYS_clone, CLONE_SETTLS | SIGCHLD, 0, 0, 0, tls);
    if (r == 0) _exit(42);
    Report("clone", tls, r, errno);
    if (r > 0) waitpid((pid_t)r, NULL, 0);
    errno = 0;
    r = syscall(SYS_arch_prctl, ARCH_SET_FS, tls);
    Report("arch_prctl_set_fs", tls, r, errno);
    errno = 0;
    r = syscall(SYS_arch_prctl, ARCH_SET_GS, tls);
    Report("arch_prctl_set_gs", tls, r, errno);
  }
  // The TLS base is unchanged (errno, a TLS variable, worked all along).
  uint64_t fs = 0;
  syscall(SYS_arch_prctl, ARCH_GET_FS, &fs);
  printf("fs base kept: %s\n", fs != 0 && fs < 0x00007ffffffff000ull ? "yes" : "no");
  // A thread with a bad TLS: refused before any thread exists.
  static char stack[65536];
  errno = 0;
  long r = syscall(SYS_clone,
                   CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
                       CLONE_SYSVSEM | CLONE_SETTLS,
                   stack + sizeof(stack), 0, 0, 0x8000000000000000ull);
  if (r == 0) syscall(SYS_exit, 0);
  Report("clone_thread", 0x8000000000000000ull, r, errno);
  // clone3 takes the same path.
  struct clone_args ca;
  memset(&ca, 0, sizeof(ca));
  ca.flags = CLONE_SETTLS;
  ca.exit_signal = SIGCHLD;
  ca.tls = 0x8000000000000000ull;
  errno = 0;
  r = syscall(SYS_clone3, &ca, sizeof(ca));
  if (r == 0) _exit(42);
  Report("clone3", ca.tls, r, errno);
  if (r > 0) waitpid((pid_t)r, NULL, 0);
  printf("bad_tls done\n");
  return 0;
}
