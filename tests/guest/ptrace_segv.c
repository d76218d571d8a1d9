// A program that dies of SIGSEGV two frames deep, for gdb under the sandbox
// (ptrace_tools.sh). Built with -g -O0 so the frames and the argument show.
#include <stdio.h>

static int crash(int *p) { return *p; }

int main(void) {
  puts("about to crash");
  fflush(stdout);
  return crash((int *)0);
}
