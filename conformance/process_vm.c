// process_vm_readv / process_vm_writev between processes: whole and split
// iovecs, partial transfers at unmapped or read-only pages, EFAULT, ESRCH,
// EPERM for another user's process, EINVAL for bad arguments.
#include "common.h"

#include <sys/mman.h>
#include <sys/uio.h>

static char shared_buf[3 * 4096] __attribute__((aligned(4096)));

// A forked child with a pattern in shared_buf and, at *page, one readable
// page followed by an unmapped one and a read-only one. It reports ready on
// `ready` and exits (0 if shared_buf then holds `expect`) when `gate` closes.
struct kid {
  pid_t pid;
  int gate;
  char *page;
};

static struct kid start_kid(const char *expect) {
  int ready[2], gate[2];
  CHECK_OK(pipe(ready));
  CHECK_OK(pipe(gate));
  char *map = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(map != MAP_FAILED);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    close(ready[0]);
    close(gate[1]);
    for (int i = 0; i < (int)sizeof(shared_buf); i++) shared_buf[i] = (char)('a' + i % 26);
    memset(map, 'P', 4096);
    memset(map + 2 * 4096, 'R', 4096);
    if (munmap(map + 4096, 4096) != 0) _exit(90);
    if (mprotect(map + 2 * 4096, 4096, PROT_READ) != 0) _exit(91);
    if (write(ready[1], "r", 1) != 1) _exit(92);
    char c;
    while (read(gate[0], &c, 1) == -1 && errno == EINTR) {
    }
    if (expect && memcmp(shared_buf, expect, strlen(expect)) != 0) _exit(1);
    _exit(0);
  }
  CHECK_OK(close(ready[1]));
  CHECK_OK(close(gate[0]));
  char c;
  conf_read_full(ready[0], &c, 1);
  CHECK_OK(close(ready[0]));
  CHECK_OK(munmap(map, 3 * 4096));
  struct kid k = {pid, gate[1], map};
  return k;
}

static void finish_kid(struct kid k, int code) {
  CHECK_OK(close(k.gate));
  CHECK_EXIT(k.pid, code);
}

TEST(read_whole) {
  struct kid k = start_kid(NULL);
  char buf[100];
  struct iovec l = {buf, sizeof(buf)};
  struct iovec r = {shared_buf, sizeof(buf)};
  CHECK_EQ(process_vm_readv(k.pid, &l, 1, &r, 1, 0), 100);
  for (int i = 0; i < 100; i++) CHECK_EQ(buf[i], 'a' + i % 26);
  // Our own copy is untouched: this really was the child's memory.
  CHECK_EQ(shared_buf[0], 0);
  finish_kid(k, 0);
}

TEST(read_split_iovecs) {
  struct kid k = start_kid(NULL);
  char a[3], b[10], c[7];
  struct iovec l[3] = {{a, 3}, {b, 10}, {c, 7}};
  struct iovec r[4] = {{shared_buf + 1, 5}, {NULL, 0}, {shared_buf + 30, 4}, {shared_buf + 100, 50}};
  // 20 bytes fit locally: 5 + 4 + the first 11 of the last remote segment.
  CHECK_EQ(process_vm_readv(k.pid, l, 3, r, 4, 0), 20);
  char want[20];
  for (int i = 0; i < 5; i++) want[i] = (char)('a' + (1 + i) % 26);
  for (int i = 0; i < 4; i++) want[5 + i] = (char)('a' + (30 + i) % 26);
  for (int i = 0; i < 11; i++) want[9 + i] = (char)('a' + (100 + i) % 26);
  CHECK(memcmp(a, want, 3) == 0);
  CHECK(memcmp(b, want + 3, 10) == 0);
  CHECK(memcmp(c, want + 13, 7) == 0);
  finish_kid(k, 0);
}

TEST(read_partial_and_efault) {
  struct kid k = start_kid(NULL);
  static char buf[3 * 4096];
  struct iovec l = {buf, sizeof(buf)};
  // Up to the unmapped page.
  struct iovec r = {k.page + 100, 2 * 4096};
  CHECK_EQ(process_vm_readv(k.pid, &l, 1, &r, 1, 0), 4096 - 100);
  CHECK_EQ(buf[0], 'P');
  // Nothing readable at all.
  struct iovec bad = {k.page + 4096, 10};
  CHECK_ERRNO(process_vm_readv(k.pid, &l, 1, &bad, 1, 0), EFAULT);
  // A bad remote segment stops the transfer after the good ones.
  struct iovec two[2] = {{shared_buf, 10}, {k.page + 4096, 10}};
  CHECK_EQ(process_vm_readv(k.pid, &l, 1, two, 2, 0), 10);
  // A bad local buffer.
  struct iovec lbad = {(void *)8, 10};
  CHECK_ERRNO(process_vm_readv(k.pid, &lbad, 1, &r, 1, 0), EFAULT);
  // The read-only page reads fine.
  struct iovec ro = {k.page + 2 * 4096, 16};
  CHECK_EQ(process_vm_readv(k.pid, &l, 1, &ro, 1, 0), 16);
  CHECK_EQ(buf[15], 'R');
  finish_kid(k, 0);
}

TEST(write) {
  struct kid k = start_kid("HELLOworld");
  char h[] = "HEL", w[] = "LOworld";
  struct iovec l[2] = {{h, 3}, {w, 7}};
  struct iovec r[2] = {{shared_buf, 6}, {shared_buf + 6, 4}};
  CHECK_EQ(process_vm_writev(k.pid, l, 2, r, 2, 0), 10);
  // Read-only and unmapped pages refuse writes.
  struct iovec ro = {k.page + 2 * 4096, 3};
  CHECK_ERRNO(process_vm_writev(k.pid, l, 1, &ro, 1, 0), EFAULT);
  struct iovec um = {k.page + 4096, 3};
  CHECK_ERRNO(process_vm_writev(k.pid, l, 1, &um, 1, 0), EFAULT);
  static char big[4096 + 100];
  struct iovec lb = {big, sizeof(big)};
  struct iovec rb = {k.page, sizeof(big)};
  CHECK_EQ(process_vm_writev(k.pid, &lb, 1, &rb, 1, 0), 4096);
  finish_kid(k, 0);
}

TEST(errors) {
  struct kid k = start_kid(NULL);
  char buf[16];
  struct iovec l = {buf, sizeof(buf)};
  struct iovec r = {shared_buf, sizeof(buf)};
  CHECK_ERRNO(process_vm_readv(k.pid, &l, 1, &r, 1, 1), EINVAL);
  CHECK_ERRNO(process_vm_readv(k.pid, &l, 1025, &r, 1, 0), EINVAL);
  CHECK_ERRNO(process_vm_readv(k.pid, &l, 1, &r, 1025, 0), EINVAL);
  CHECK_ERRNO(process_vm_readv(k.pid, (struct iovec *)8, 1, &r, 1, 0), EFAULT);
  CHECK_ERRNO(process_vm_readv(k.pid, &l, 1, (struct iovec *)8, 1, 0), EFAULT);
  struct iovec neg = {buf, (size_t)-1};
  CHECK_ERRNO(process_vm_readv(k.pid, &neg, 1, &r, 1, 0), EINVAL);
  CHECK_ERRNO(process_vm_readv(k.pid, &l, 1, &neg, 1, 0), EINVAL);
  // Nothing to move: 0, whoever the pid names.
  struct iovec empty = {buf, 0};
  CHECK_EQ(process_vm_readv(-5, &empty, 1, &r, 1, 0), 0);
  CHECK_EQ(process_vm_readv(k.pid, &l, 1, &empty, 1, 0), 0);
  CHECK_EQ(process_vm_readv(k.pid, &l, 0, &r, 1, 0), 0);
  finish_kid(k, 0);
  CHECK_ERRNO(process_vm_readv(k.pid, &l, 1, &r, 1, 0), ESRCH);
  CHECK_ERRNO(process_vm_writev(k.pid, &l, 1, &r, 1, 0), ESRCH);
}

TEST(zombie_is_esrch) {
  int p[2];
  CHECK_OK(pipe(p));
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) _exit(0);
  siginfo_t si;
  CHECK_OK(waitid(P_PID, pid, &si, WEXITED | WNOWAIT));
  char buf[16];
  struct iovec l = {buf, sizeof(buf)};
  struct iovec r = {shared_buf, sizeof(buf)};
  CHECK_ERRNO(process_vm_readv(pid, &l, 1, &r, 1, 0), ESRCH);
  CHECK_EXIT(pid, 0);
  CHECK_OK(close(p[0]));
  CHECK_OK(close(p[1]));
}

TEST(own_process_and_threads) {
  strcpy(shared_buf, "mine");
  char buf[5];
  struct iovec l = {buf, 5};
  struct iovec r = {shared_buf, 5};
  CHECK_EQ(process_vm_readv(getpid(), &l, 1, &r, 1, 0), 5);
  CHECK(strcmp(buf, "mine") == 0);
  memset(shared_buf, 0, sizeof(shared_buf));
}

TEST(eperm_for_other_user) {
  pid_t parent = getpid();
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    if (setuid(1000) != 0) _exit(2);
    char buf[4];
    struct iovec l = {buf, 4};
    struct iovec r = {shared_buf, 4};
    if (process_vm_readv(parent, &l, 1, &r, 1, 0) != -1 || errno != EPERM) _exit(3);
    if (process_vm_writev(parent, &l, 1, &r, 1, 0) != -1 || errno != EPERM) _exit(4);
    if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) != 4) _exit(5);
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  RUN(read_whole);
  RUN(read_split_iovecs);
  RUN(read_partial_and_efault);
  RUN(write);
  RUN(errors);
  RUN(zombie_is_esrch);
  RUN(own_process_and_threads);
  RUN(eperm_for_other_user);
  PASS("process_vm");
}
