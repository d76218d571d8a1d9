// die_by_signal: the guest's first process dies of SIGSEGV, so sentry-run must exit 128+11.
//
// A shell cannot test this under the sandbox: there the shell is PID 1 of its PID namespace, and
// Linux drops a signal with a default action that PID 1 sends itself (`kill -KILL $$` does
// nothing). A fault is different: the kernel forces SIGSEGV even on init. Natively the status
// is 139 too, so the expectation is the same on both sides.
#include <stdio.h>
#include <sys/resource.h>

int main(void) {
  struct rlimit no_core = {0, 0};
  setrlimit(RLIMIT_CORE, &no_core);  // no core file when run by hand; failure does not matter
  printf("die_by_signal: writing to address 0\n");
  fflush(stdout);
  *(volatile int*)0 = 1;
  printf("die_by_signal: still alive?\n");
  return 0;
}
