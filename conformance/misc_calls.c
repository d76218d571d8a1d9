// Small system calls: membarrier, sync_file_range, preadv2/pwritev2 (offset
// -1 and the RWF_* flags), syslog (as root, and EPERM for other users as
// with dmesg_restrict=1), kcmp.
#include "common.h"

#include <linux/kcmp.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/uio.h>

static int membarrier_(int cmd, unsigned flags, int cpu) {
  return (int)syscall(SYS_membarrier, cmd, flags, cpu);
}
static int kcmp_(pid_t a, pid_t b, int type, unsigned long x, unsigned long y) {
  return (int)syscall(SYS_kcmp, a, b, type, x, y);
}
static long syslog_(int type, char *buf, int len) { return syscall(SYS_syslog, type, buf, len); }

TEST(membarrier_query_and_errors) {
  int q = membarrier_(MEMBARRIER_CMD_QUERY, 0, 0);
  CHECK(q >= 0);
  CHECK_EQ(q & 0x1ff, 0x1ff);  // every command up to the RSEQ pair (Linux 5.10 .. 6.2: all)
  CHECK_ERRNO(membarrier_(MEMBARRIER_CMD_QUERY, 1, 0), EINVAL);
  CHECK_ERRNO(membarrier_(MEMBARRIER_CMD_GLOBAL, 1, 0), EINVAL);
  CHECK_ERRNO(membarrier_(1 << 20, 0, 0), EINVAL);
  CHECK_ERRNO(membarrier_(-1, 0, 0), EINVAL);
  CHECK_OK(membarrier_(MEMBARRIER_CMD_GLOBAL, 0, 0));
  CHECK_OK(membarrier_(MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0));
  CHECK_OK(membarrier_(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0));
}

static void *spin_until(void *arg) {
  volatile int *stop = (volatile int *)arg;
  while (!*stop) {
  }
  return NULL;
}

TEST(membarrier_private_needs_registration) {
  CHECK_ERRNO(membarrier_(MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0), EPERM);
  CHECK_ERRNO(membarrier_(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0), EPERM);
  CHECK_ERRNO(membarrier_(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, 0, 0), EPERM);
  CHECK_ERRNO(membarrier_(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, 2, 0), EINVAL);
  CHECK_OK(membarrier_(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0));
  CHECK_OK(membarrier_(MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0));
  CHECK_ERRNO(membarrier_(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0), EPERM);
  CHECK_OK(membarrier_(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0));
  CHECK_OK(membarrier_(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ, 0, 0));
  // With another thread running, the barrier has something to do.
  static volatile int stop;
  pthread_t th;
  CHECK_EQ(pthread_create(&th, NULL, spin_until, (void *)&stop), 0);
  CHECK_OK(membarrier_(MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0));
  CHECK_OK(membarrier_(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0));
  CHECK_OK(membarrier_(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, 0, 0));
  CHECK_OK(membarrier_(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, MEMBARRIER_CMD_FLAG_CPU, 0));
  CHECK_OK(membarrier_(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, MEMBARRIER_CMD_FLAG_CPU, 100000));
  stop = 1;
  CHECK_EQ(pthread_join(th, NULL), 0);
}

static int memfd_with(const char *s) {
  int fd = memfd_create("misc", 0);
  CHECK(fd >= 0);
  conf_write_full(fd, s, strlen(s));
  return fd;
}

TEST(sync_file_range_checks) {
  int fd = memfd_with("data");
  CHECK_OK(sync_file_range(fd, 0, 0, 0));
  CHECK_OK(sync_file_range(fd, 0, 4, SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
                                         SYNC_FILE_RANGE_WAIT_AFTER));
  CHECK_OK(sync_file_range(fd, 100, 100, SYNC_FILE_RANGE_WRITE));
  CHECK_ERRNO(sync_file_range(fd, 0, 0, 8), EINVAL);
  CHECK_ERRNO(sync_file_range(fd, -1, 0, 0), EINVAL);
  CHECK_ERRNO(sync_file_range(fd, 0, -1, 0), EINVAL);
  CHECK_ERRNO(sync_file_range(fd, INT64_MAX, 10, 0), EINVAL);
  CHECK_ERRNO(sync_file_range(-1, 0, 0, 8), EBADF);
  int p[2];
  CHECK_OK(pipe(p));
  CHECK_ERRNO(sync_file_range(p[0], 0, 0, 0), ESPIPE);
  CHECK_ERRNO(sync_file_range(p[0], 0, 0, 8), EINVAL);
  CHECK_OK(close(p[0]));
  CHECK_OK(close(p[1]));
  CHECK_OK(close(fd));
}

TEST(preadv2_pwritev2) {
  int fd = memfd_with("0123456789");
  char a[3], b[4];
  struct iovec iov[2] = {{a, 3}, {b, 4}};
  CHECK_EQ(preadv2(fd, iov, 2, 2, 0), 7);
  CHECK(memcmp(a, "234", 3) == 0 && memcmp(b, "5678", 4) == 0);
  CHECK_EQ(lseek(fd, 0, SEEK_CUR), 10);  // positional: the offset stays
  // Offset -1: the file offset, which moves.
  CHECK_EQ(lseek(fd, 1, SEEK_SET), 1);
  CHECK_EQ(preadv2(fd, iov, 1, -1, RWF_HIPRI), 3);
  CHECK(memcmp(a, "123", 3) == 0);
  CHECK_EQ(lseek(fd, 0, SEEK_CUR), 4);
  CHECK_ERRNO(preadv2(fd, iov, 1, -2, 0), EINVAL);
  CHECK_ERRNO(preadv2(fd, iov, 1, 0, 0x10000), EOPNOTSUPP);
  CHECK_ERRNO(preadv2(-1, iov, 1, 0, 0), EBADF);
  struct iovec w = {"ab", 2};
  CHECK_EQ(pwritev2(fd, &w, 1, 0, RWF_DSYNC), 2);
  CHECK_EQ(pwritev2(fd, &w, 1, -1, RWF_SYNC), 2);  // at the offset, 4
  CHECK_EQ(lseek(fd, 0, SEEK_CUR), 6);
  char all[16] = {0};
  CHECK_EQ(pread(fd, all, sizeof(all), 0), 10);
  CHECK(memcmp(all, "ab23ab6789", 10) == 0);
  // RWF_APPEND writes at the end whatever the offset says.
  CHECK_EQ(pwritev2(fd, &w, 1, 0, RWF_APPEND), 2);
  CHECK_EQ(lseek(fd, 0, SEEK_CUR), 6);
  CHECK_EQ(pwritev2(fd, &w, 1, -1, RWF_APPEND), 2);
  CHECK_EQ(lseek(fd, 0, SEEK_CUR), 14);
  CHECK_EQ(pread(fd, all, sizeof(all), 0), 14);
  CHECK(memcmp(all, "ab23ab6789abab", 14) == 0);
  CHECK_ERRNO(pwritev2(fd, &w, 1, 0, 0x10000), EOPNOTSUPP);
  CHECK_ERRNO(pwritev2(fd, &w, 1, -3, 0), EINVAL);
  CHECK_OK(close(fd));
  // Pipes: no positions, and RWF_NOWAIT does not wait.
  int p[2];
  CHECK_OK(pipe(p));
  CHECK_ERRNO(preadv2(p[0], iov, 1, 0, 0), ESPIPE);
  CHECK_ERRNO(preadv2(p[0], iov, 1, -1, RWF_NOWAIT), EAGAIN);
  CHECK_EQ(pwritev2(p[1], &w, 1, -1, RWF_NOWAIT), 2);
  CHECK_EQ(preadv2(p[0], iov, 1, -1, RWF_NOWAIT), 2);
  CHECK_ERRNO(preadv2(p[1], iov, 1, -1, 0), EBADF);
  CHECK_OK(close(p[0]));
  CHECK_OK(close(p[1]));
}

TEST(syslog_root) {
  CHECK(syslog_(10, NULL, 0) > 0);  // SYSLOG_ACTION_SIZE_BUFFER
  CHECK(syslog_(9, NULL, 0) >= 0);  // SYSLOG_ACTION_SIZE_UNREAD
  CHECK_OK(syslog_(0, NULL, 0));    // CLOSE
  CHECK_OK(syslog_(1, NULL, 0));    // OPEN
  char buf[64];
  CHECK_EQ(syslog_(3, buf, 0), 0);  // READ_ALL of nothing
  CHECK(syslog_(3, buf, sizeof(buf)) >= 0);
  CHECK_ERRNO(syslog_(3, NULL, 10), EINVAL);
  CHECK_ERRNO(syslog_(3, buf, -1), EINVAL);
  CHECK_ERRNO(syslog_(2, NULL, 10), EINVAL);  // READ
  CHECK_ERRNO(syslog_(8, NULL, 0), EINVAL);   // CONSOLE_LEVEL out of 1..8
  CHECK_ERRNO(syslog_(8, NULL, 9), EINVAL);
  CHECK_ERRNO(syslog_(11, NULL, 0), EINVAL);
  CHECK_ERRNO(syslog_(-1, NULL, 0), EINVAL);
}

TEST(syslog_unprivileged) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    CHECK_OK(setuid(1000));
    CHECK_ERRNO(syslog_(10, NULL, 0), EPERM);
    char buf[16];
    CHECK_ERRNO(syslog_(3, buf, sizeof(buf)), EPERM);
    CHECK_ERRNO(syslog_(11, NULL, 0), EPERM);
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
}

static void *park(void *arg) {
  int fd = *(int *)arg;
  char c;
  while (read(fd, &c, 1) == -1 && errno == EINTR) {
  }
  return NULL;
}

TEST(kcmp_files_and_resources) {
  pid_t me = getpid();
  int a = memfd_with("a"), b = memfd_with("b");
  int a2 = dup(a);
  CHECK_EQ(kcmp_(me, me, KCMP_FILE, a, a2), 0);
  int ab = kcmp_(me, me, KCMP_FILE, a, b);
  CHECK(ab == 1 || ab == 2);
  CHECK_EQ(kcmp_(me, me, KCMP_FILE, b, a), 3 - ab);  // a consistent order
  CHECK_ERRNO(kcmp_(me, me, KCMP_FILE, a, 999), EBADF);
  CHECK_ERRNO(kcmp_(me, me, 100, 0, 0), EINVAL);
  CHECK_ERRNO(kcmp_(me, -5, KCMP_VM, 0, 0), ESRCH);
  for (int type = KCMP_VM; type <= KCMP_SIGHAND; type++) CHECK_EQ(kcmp_(me, me, type, 0, 0), 0);
  int gate[2];
  CHECK_OK(pipe(gate));
  // A thread shares everything with us.
  pthread_t th;
  CHECK_EQ(pthread_create(&th, NULL, park, &gate[0]), 0);
  pid_t tid = -1;
  char path[64];
  for (int i = 0; i < 1000 && tid < 0; i++) {
    for (pid_t cand = conf_gettid() + 1; cand < conf_gettid() + 64; cand++) {
      snprintf(path, sizeof(path), "/proc/self/task/%d", cand);
      if (access(path, F_OK) == 0) {
        tid = cand;
        break;
      }
    }
  }
  CHECK(tid > 0);
  for (int type = KCMP_VM; type <= KCMP_SIGHAND; type++) CHECK_EQ(kcmp_(me, tid, type, 0, 0), 0);
  // A forked child shares the open files, not the tables.
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    close(gate[1]);
    char c;
    while (read(gate[0], &c, 1) == -1 && errno == EINTR) {
    }
    _exit(0);
  }
  CHECK_EQ(kcmp_(me, pid, KCMP_FILE, a, a), 0);
  CHECK(kcmp_(me, pid, KCMP_FILE, a, b) != 0);
  for (int type = KCMP_VM; type <= KCMP_SIGHAND; type++) CHECK(kcmp_(me, pid, type, 0, 0) > 0);
  CHECK_OK(close(gate[1]));
  CHECK_EQ(pthread_join(th, NULL), 0);
  CHECK_EXIT(pid, 0);
  CHECK_OK(close(gate[0]));
  pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    CHECK_OK(setuid(1000));
    CHECK_ERRNO(kcmp_(getpid(), me, KCMP_VM, 0, 0), EPERM);
    CHECK_EQ(kcmp_(getpid(), getpid(), KCMP_VM, 0, 0), 0);
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
  CHECK_OK(close(a));
  CHECK_OK(close(a2));
  CHECK_OK(close(b));
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  RUN(membarrier_query_and_errors);
  RUN(membarrier_private_needs_registration);
  RUN(sync_file_range_checks);
  RUN(preadv2_pwritev2);
  RUN(syslog_root);
  RUN(syslog_unprivileged);
  RUN(kcmp_files_and_resources);
  PASS("misc_calls");
}
