// syscall_loop OP ITERATIONS: times ITERATIONS round trips of one system call and prints
// "ns_per_op N". The clock runs inside the program, so sandbox start-up is not counted.
//
// OP is one of:
//   getpid      the cheapest call: no arguments, no guest memory touched
//   read_zero   read(2) of 1 byte from /dev/zero: an fd lookup and a 1-byte copy-out
//   stat        stat(2) of PATH (default /etc/passwd): a path walk and a struct copy-out
//   open_close  open(2) + close(2) of PATH: a path walk and an fd-table insert and removal
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const char* path = "/etc/passwd";
static int zero_fd = -1;

static int DoGetpid(void) { return syscall(SYS_getpid) > 0 ? 0 : -1; }

static int DoReadZero(void) {
  char c;
  return read(zero_fd, &c, 1) == 1 ? 0 : -1;
}

static int DoStat(void) {
  struct stat st;
  return stat(path, &st);
}

static int DoOpenClose(void) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  return close(fd);
}

static double NowNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s getpid|read_zero|stat|open_close ITERATIONS [PATH]\n", argv[0]);
    return 2;
  }
  if (argc > 3) path = argv[3];
  long n = atol(argv[2]);
  int (*op)(void) = NULL;
  if (strcmp(argv[1], "getpid") == 0) op = DoGetpid;
  if (strcmp(argv[1], "read_zero") == 0) op = DoReadZero;
  if (strcmp(argv[1], "stat") == 0) op = DoStat;
  if (strcmp(argv[1], "open_close") == 0) op = DoOpenClose;
  if (op == NULL || n <= 0) {
    fprintf(stderr, "%s: bad operation or count\n", argv[0]);
    return 2;
  }
  zero_fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
  if (zero_fd < 0) {
    perror("/dev/zero");
    return 1;
  }
  // Warm up: first calls fault in pages and fill caches on both sides of the sandbox.
  for (int i = 0; i < 100; i++) op();
  double start = NowNs();
  for (long i = 0; i < n; i++) {
    if (op() != 0) {
      fprintf(stderr, "%s: %s failed at iteration %ld\n", argv[0], argv[1], i);
      return 1;
    }
  }
  printf("ns_per_op %.1f\n", (NowNs() - start) / n);
  return 0;
}
