// Advisory file locks: flock (per open file), POSIX record locks (per
// process: F_SETLK/F_SETLKW/F_GETLK, byte ranges, splitting and merging,
// release on any close, deadlock detection) and OFD locks (per open file,
// F_OFD_SETLK/F_OFD_GETLK).
//
// Works in its own scratch directory under /tmp (conf_tmpdir). Children
// report through their exit status and pipes; nothing relies on timing
// except that a blocked waiter is given a moment before we check it is
// still blocked (which it must be either way).

#include "common.h"

#include <poll.h>
#include <sys/file.h>

static int open_rw(const char *path) {
  int fd = open(path, O_RDWR | O_CREAT, 0644);
  CHECK(fd >= 0);
  return fd;
}

static int set_lock(int fd, int cmd, short type, off_t start, off_t len) {
  struct flock fl;
  memset(&fl, 0, sizeof(fl));
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = start;
  fl.l_len = len;
  return fcntl(fd, cmd, &fl);
}

// F_GETLK (or F_OFD_GETLK) for a write lock on [start, start+len).
static struct flock get_lock(int fd, int cmd, off_t start, off_t len) {
  struct flock fl;
  memset(&fl, 0, sizeof(fl));
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  fl.l_start = start;
  fl.l_len = len;
  CHECK_OK(fcntl(fd, cmd, &fl));
  return fl;
}

// Waits (up to 5 s) for one byte on fd and returns it; -1 on timeout.
static int read_byte(int fd, int timeout_ms) {
  struct pollfd p = {fd, POLLIN, 0};
  int r = poll(&p, 1, timeout_ms);
  CHECK(r >= 0);
  if (r == 0) return -1;
  char c;
  CHECK_EQ(read(fd, &c, 1), 1);
  return c;
}

// --- flock ---

TEST(flock_exclusive_and_shared) {
  int a = open_rw("fl");
  int b = open_rw("fl");
  CHECK_OK(flock(a, LOCK_EX));
  CHECK_OK(flock(a, LOCK_EX));  // Again on the same open file: fine.
  CHECK_ERRNO(flock(b, LOCK_EX | LOCK_NB), EWOULDBLOCK);
  CHECK_ERRNO(flock(b, LOCK_SH | LOCK_NB), EWOULDBLOCK);
  CHECK_OK(flock(a, LOCK_UN));
  CHECK_OK(flock(b, LOCK_SH | LOCK_NB));
  CHECK_OK(flock(a, LOCK_SH | LOCK_NB));  // Shared with shared.
  // A conversion is not atomic: the old lock is dropped first, and stays
  // dropped when the new one cannot be had. So after b's failed upgrade,
  // a holds the only lock and can upgrade.
  CHECK_ERRNO(flock(b, LOCK_EX | LOCK_NB), EWOULDBLOCK);
  CHECK_OK(flock(a, LOCK_EX | LOCK_NB));
  CHECK_ERRNO(flock(b, LOCK_SH | LOCK_NB), EWOULDBLOCK);
  // Downgrade.
  CHECK_OK(flock(a, LOCK_SH));
  CHECK_OK(flock(b, LOCK_SH | LOCK_NB));
  CHECK_OK(flock(a, LOCK_UN));
  CHECK_OK(flock(b, LOCK_UN));
  CHECK_OK(flock(a, LOCK_UN));  // Unlocking with no lock: fine.
  CHECK_ERRNO(flock(a, LOCK_NB), EINVAL);
  CHECK_ERRNO(flock(a, 0x40), EINVAL);
  CHECK_ERRNO(flock(-1, LOCK_SH), EBADF);
  // Mode does not matter: a read-only fd takes an exclusive lock.
  int r = open("fl", O_RDONLY);
  CHECK(r >= 0);
  CHECK_OK(flock(r, LOCK_EX | LOCK_NB));
  CHECK_OK(close(r));  // Last fd of that open file: released.
  CHECK_OK(flock(a, LOCK_EX | LOCK_NB));
  CHECK_OK(close(a));
  CHECK_OK(close(b));
}

TEST(flock_follows_the_open_file) {
  int a = open_rw("fl");
  int b = open_rw("fl");
  CHECK_OK(flock(a, LOCK_EX));
  int d = dup(a);
  CHECK(d >= 0);
  CHECK_OK(close(a));  // The dup still holds the open file, and the lock.
  CHECK_ERRNO(flock(b, LOCK_EX | LOCK_NB), EWOULDBLOCK);
  // A forked child shares the open file: its copy keeps the lock after we
  // close ours, and its unlock releases it for everyone.
  int p[2], q[2];
  CHECK_OK(pipe(p));
  CHECK_OK(pipe(q));
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    char c;
    CHECK_EQ(read(p[0], &c, 1), 1);  // Parent closed its fd.
    CHECK_OK(flock(d, LOCK_UN));
    CHECK_EQ(write(q[1], "u", 1), 1);
    CHECK_EQ(read(p[0], &c, 1), 1);
    _exit(0);
  }
  CHECK_OK(close(d));
  CHECK_ERRNO(flock(b, LOCK_EX | LOCK_NB), EWOULDBLOCK);
  CHECK_EQ(write(p[1], "c", 1), 1);
  CHECK_EQ(read_byte(q[0], 5000), 'u');
  CHECK_OK(flock(b, LOCK_EX | LOCK_NB));
  CHECK_EQ(write(p[1], "x", 1), 1);
  CHECK_EXIT(pid, 0);
  CHECK_OK(close(b));
  close(p[0]);
  close(p[1]);
  close(q[0]);
  close(q[1]);
}

TEST(flock_blocks_until_released) {
  int a = open_rw("fl");
  CHECK_OK(flock(a, LOCK_EX));
  int p[2];
  CHECK_OK(pipe(p));
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    int b = open_rw("fl");
    CHECK_EQ(write(p[1], "w", 1), 1);
    CHECK_OK(flock(b, LOCK_EX));
    CHECK_EQ(write(p[1], "g", 1), 1);
    _exit(0);
  }
  CHECK_EQ(read_byte(p[0], 5000), 'w');
  CHECK_EQ(read_byte(p[0], 50), -1);  // Still waiting.
  CHECK_OK(flock(a, LOCK_UN));
  CHECK_EQ(read_byte(p[0], 5000), 'g');
  CHECK_EXIT(pid, 0);
  CHECK_OK(close(a));
  close(p[0]);
  close(p[1]);
}

TEST(flock_and_posix_locks_are_independent) {
  int a = open_rw("fl");
  int b = open_rw("fl");
  CHECK_OK(flock(a, LOCK_EX));
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    int c = open_rw("fl");
    CHECK_OK(set_lock(c, F_SETLK, F_WRLCK, 0, 0));
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
  CHECK_OK(close(a));
  CHECK_OK(close(b));
}

// --- POSIX record locks ---

TEST(getlk_across_fork) {
  int fd = open_rw("pl");
  CHECK_OK(set_lock(fd, F_SETLK, F_WRLCK, 0, 100));
  // Our own locks never conflict with us.
  struct flock fl = get_lock(fd, F_GETLK, 0, 10);
  CHECK_EQ(fl.l_type, F_UNLCK);
  pid_t parent = getpid();
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    // The child inherits the fd, not the lock.
    int c = open_rw("pl");
    struct flock got = get_lock(c, F_GETLK, 10, 5);
    CHECK_EQ(got.l_type, F_WRLCK);
    CHECK_EQ(got.l_pid, parent);
    CHECK_EQ(got.l_pid, getppid());
    CHECK_EQ(got.l_whence, SEEK_SET);
    CHECK_EQ(got.l_start, 0);
    CHECK_EQ(got.l_len, 100);
    CHECK_ERRNO(set_lock(c, F_SETLK, F_WRLCK, 50, 1), EAGAIN);
    CHECK_ERRNO(set_lock(c, F_SETLK, F_RDLCK, 99, 10), EAGAIN);
    CHECK_ERRNO(set_lock(fd, F_SETLK, F_RDLCK, 0, 1), EAGAIN);
    // Outside the range: free.
    got = get_lock(c, F_GETLK, 100, 100);
    CHECK_EQ(got.l_type, F_UNLCK);
    CHECK_OK(set_lock(c, F_SETLK, F_WRLCK, 100, 100));
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
  CHECK_OK(close(fd));
}

TEST(setlkw_blocks_until_released) {
  int fd = open_rw("pl");
  CHECK_OK(set_lock(fd, F_SETLK, F_WRLCK, 0, 10));
  int p[2], q[2];
  CHECK_OK(pipe(p));
  CHECK_OK(pipe(q));
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    int c = open_rw("pl");
    CHECK_EQ(write(p[1], "w", 1), 1);
    CHECK_OK(set_lock(c, F_SETLKW, F_WRLCK, 5, 10));
    CHECK_EQ(write(p[1], "g", 1), 1);
    char x;
    CHECK_EQ(read(q[0], &x, 1), 1);  // Hold it until told.
    _exit(0);
  }
  CHECK_EQ(read_byte(p[0], 5000), 'w');
  CHECK_EQ(read_byte(p[0], 50), -1);  // Blocked behind our lock.
  // Unlocking only part of the overlap is not enough.
  CHECK_OK(set_lock(fd, F_SETLK, F_UNLCK, 0, 6));
  CHECK_EQ(read_byte(p[0], 50), -1);
  CHECK_OK(set_lock(fd, F_SETLK, F_UNLCK, 6, 4));
  CHECK_EQ(read_byte(p[0], 5000), 'g');
  // Now the child's lock shows up for us.
  struct flock fl = get_lock(fd, F_GETLK, 0, 100);
  CHECK_EQ(fl.l_type, F_WRLCK);
  CHECK_EQ(fl.l_pid, pid);
  CHECK_EQ(fl.l_start, 5);
  CHECK_EQ(fl.l_len, 10);
  CHECK_EQ(write(q[1], "x", 1), 1);
  CHECK_EXIT(pid, 0);
  // The child's exit released it.
  fl = get_lock(fd, F_GETLK, 0, 100);
  CHECK_EQ(fl.l_type, F_UNLCK);
  CHECK_OK(close(fd));
  close(p[0]);
  close(p[1]);
  close(q[0]);
  close(q[1]);
}

// Forks a child that checks F_GETLK on [start, start+len) and exits 0 if
// it sees (type, lstart, llen), 1 otherwise.
static void child_sees(short type, off_t start, off_t len, off_t lstart,
                       off_t llen) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    int c = open_rw("pl");
    struct flock fl = get_lock(c, F_GETLK, start, len);
    CHECK_EQ(fl.l_type, type);
    if (type != F_UNLCK) {
      CHECK_EQ(fl.l_start, lstart);
      CHECK_EQ(fl.l_len, llen);
      CHECK_EQ(fl.l_pid, getppid());
    }
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
}

TEST(byte_ranges_split_and_merge) {
  int fd = open_rw("pl");
  // Non-overlapping ranges of two processes both succeed.
  CHECK_OK(set_lock(fd, F_SETLK, F_WRLCK, 0, 10));
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    int c = open_rw("pl");
    CHECK_OK(set_lock(c, F_SETLK, F_WRLCK, 10, 10));
    CHECK_ERRNO(set_lock(c, F_SETLK, F_WRLCK, 9, 1), EAGAIN);
    // Read locks share with read locks only.
    _exit(0);
  }
  CHECK_EXIT(pid, 0);

  // Adjacent locks of one owner merge.
  CHECK_OK(set_lock(fd, F_SETLK, F_WRLCK, 10, 10));
  child_sees(F_WRLCK, 15, 1, 0, 20);
  // Unlocking the middle splits it.
  CHECK_OK(set_lock(fd, F_SETLK, F_UNLCK, 5, 10));
  child_sees(F_WRLCK, 0, 7, 0, 5);
  child_sees(F_UNLCK, 5, 10, 0, 0);
  child_sees(F_WRLCK, 12, 100, 15, 5);
  // Changing the type of part of a range splits it too.
  CHECK_OK(set_lock(fd, F_SETLK, F_RDLCK, 0, 2));
  pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    int c = open_rw("pl");
    CHECK_OK(set_lock(c, F_SETLK, F_RDLCK, 0, 2));  // Shared: fine.
    CHECK_ERRNO(set_lock(c, F_SETLK, F_RDLCK, 2, 1), EAGAIN);
    CHECK_ERRNO(set_lock(c, F_SETLK, F_WRLCK, 1, 1), EAGAIN);
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
  // l_len 0 means "to the end of file, however far it grows".
  CHECK_OK(set_lock(fd, F_SETLK, F_UNLCK, 0, 0));
  CHECK_OK(set_lock(fd, F_SETLK, F_WRLCK, 1000, 0));
  child_sees(F_WRLCK, 1LL << 40, 1, 1000, 0);
  child_sees(F_UNLCK, 0, 1000, 0, 0);
  // A negative length covers the bytes before l_start.
  CHECK_OK(set_lock(fd, F_SETLK, F_UNLCK, 0, 0));
  CHECK_OK(set_lock(fd, F_SETLK, F_WRLCK, 50, -10));
  child_sees(F_WRLCK, 0, 100, 40, 10);
  CHECK_OK(set_lock(fd, F_SETLK, F_UNLCK, 0, 0));
  child_sees(F_UNLCK, 0, 0, 0, 0);
  // Errors.
  CHECK_ERRNO(set_lock(fd, F_SETLK, 42, 0, 1), EINVAL);
  CHECK_ERRNO(set_lock(fd, F_SETLK, F_WRLCK, -1, 1), EINVAL);
  int ro = open("pl", O_RDONLY);
  CHECK(ro >= 0);
  CHECK_ERRNO(set_lock(ro, F_SETLK, F_WRLCK, 0, 1), EBADF);
  CHECK_OK(set_lock(ro, F_SETLK, F_RDLCK, 0, 1));
  CHECK_OK(close(ro));
  int wo = open("pl", O_WRONLY);
  CHECK(wo >= 0);
  CHECK_ERRNO(set_lock(wo, F_SETLK, F_RDLCK, 0, 1), EBADF);
  CHECK_OK(close(wo));
  CHECK_OK(close(fd));
}

TEST(posix_lock_released_on_any_close) {
  int fd = open_rw("pl");
  CHECK_OK(set_lock(fd, F_SETLK, F_WRLCK, 0, 0));
  child_sees(F_WRLCK, 0, 1, 0, 0);
  // Opening and closing the same file through another descriptor drops
  // every lock this process holds on it.
  int other = open("pl", O_RDONLY);
  CHECK(other >= 0);
  CHECK_OK(close(other));
  child_sees(F_UNLCK, 0, 0, 0, 0);
  // Same with a dup.
  CHECK_OK(set_lock(fd, F_SETLK, F_WRLCK, 0, 0));
  child_sees(F_WRLCK, 0, 1, 0, 0);
  int d = dup(fd);
  CHECK(d >= 0);
  CHECK_OK(close(d));
  child_sees(F_UNLCK, 0, 0, 0, 0);
  // Closing a descriptor of a different file does nothing.
  CHECK_OK(set_lock(fd, F_SETLK, F_WRLCK, 0, 0));
  int unrelated = open_rw("unrelated");
  CHECK_OK(close(unrelated));
  child_sees(F_WRLCK, 0, 1, 0, 0);
  CHECK_OK(close(fd));
  child_sees(F_UNLCK, 0, 0, 0, 0);
  CHECK_OK(unlink("unrelated"));
}

TEST(posix_deadlock_detected) {
  int fd = open_rw("pl");
  CHECK_OK(set_lock(fd, F_SETLK, F_WRLCK, 0, 1));  // A
  int p[2], q[2];
  CHECK_OK(pipe(p));
  CHECK_OK(pipe(q));
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    int c = open_rw("pl");
    CHECK_OK(set_lock(c, F_SETLK, F_WRLCK, 1, 1));  // B
    CHECK_EQ(write(p[1], "b", 1), 1);
    // Wait for A. Either this waits (and the parent's request for B is
    // the one refused), or the parent is already waiting for B and this
    // is refused; then give up B so that the parent gets it.
    int r = set_lock(c, F_SETLKW, F_WRLCK, 0, 1);
    char verdict = '?';
    if (r == 0) {
      verdict = 'L';
    } else if (errno == EDEADLK) {
      verdict = 'D';
      CHECK_OK(set_lock(c, F_SETLK, F_UNLCK, 1, 1));
    }
    CHECK_EQ(write(p[1], &verdict, 1), 1);
    char x;
    CHECK_EQ(read(q[0], &x, 1), 1);
    _exit(0);
  }
  CHECK_EQ(read_byte(p[0], 5000), 'b');
  conf_sleep_ms(20);  // Usually lets the child start waiting for A.
  int r = set_lock(fd, F_SETLKW, F_WRLCK, 1, 1);
  int e = errno;
  int deadlocks = 0;
  if (r == -1) {
    // The child was waiting: we are refused, give up A, the child gets it.
    CHECK_EQ(e, EDEADLK);
    deadlocks++;
    CHECK_OK(set_lock(fd, F_SETLK, F_UNLCK, 0, 1));
    CHECK_EQ(read_byte(p[0], 5000), 'L');
  } else {
    // We waited for B: the child was refused and gave B up.
    CHECK_EQ(read_byte(p[0], 5000), 'D');
    deadlocks++;
  }
  CHECK_EQ(write(q[1], "x", 1), 1);
  CHECK_EXIT(pid, 0);
  CHECK_EQ(deadlocks, 1);
  CHECK_OK(close(fd));
  close(p[0]);
  close(p[1]);
  close(q[0]);
  close(q[1]);
}

// --- OFD locks ---

TEST(ofd_locks) {
  int a = open_rw("ol");
  int b = open_rw("ol");
  CHECK_OK(set_lock(a, F_OFD_SETLK, F_WRLCK, 0, 10));
  // Two open files in one process conflict (unlike POSIX locks).
  CHECK_ERRNO(set_lock(b, F_OFD_SETLK, F_WRLCK, 5, 1), EAGAIN);
  CHECK_ERRNO(set_lock(b, F_OFD_SETLK, F_RDLCK, 0, 1), EAGAIN);
  struct flock fl = get_lock(b, F_OFD_GETLK, 0, 100);
  CHECK_EQ(fl.l_type, F_WRLCK);
  CHECK_EQ(fl.l_pid, -1);
  CHECK_EQ(fl.l_start, 0);
  CHECK_EQ(fl.l_len, 10);
  // The owning open file sees no conflict with itself.
  fl = get_lock(a, F_OFD_GETLK, 0, 100);
  CHECK_EQ(fl.l_type, F_UNLCK);
  // They also conflict with classic POSIX locks of the same process.
  CHECK_ERRNO(set_lock(b, F_SETLK, F_WRLCK, 0, 1), EAGAIN);
  fl = get_lock(b, F_GETLK, 0, 1);
  CHECK_EQ(fl.l_type, F_WRLCK);
  CHECK_EQ(fl.l_pid, -1);
  // Closing another fd of the file does not release an OFD lock...
  CHECK_OK(close(b));
  int c = open_rw("ol");
  CHECK_ERRNO(set_lock(c, F_OFD_SETLK, F_WRLCK, 0, 1), EAGAIN);
  // ... nor does closing a dup of the owner; the last close does.
  int d = dup(a);
  CHECK(d >= 0);
  CHECK_OK(close(d));
  CHECK_ERRNO(set_lock(c, F_OFD_SETLK, F_WRLCK, 0, 1), EAGAIN);
  CHECK_OK(close(a));
  CHECK_OK(set_lock(c, F_OFD_SETLK, F_WRLCK, 0, 1));
  // A POSIX lock seen through F_OFD_GETLK reports its process.
  CHECK_OK(set_lock(c, F_OFD_SETLK, F_UNLCK, 0, 0));
  int e = open_rw("ol");
  CHECK_OK(set_lock(e, F_SETLK, F_WRLCK, 20, 5));
  fl = get_lock(c, F_OFD_GETLK, 0, 100);
  CHECK_EQ(fl.l_type, F_WRLCK);
  CHECK_EQ(fl.l_pid, getpid());
  CHECK_EQ(fl.l_start, 20);
  // l_pid must be 0 on input.
  struct flock bad;
  memset(&bad, 0, sizeof(bad));
  bad.l_type = F_RDLCK;
  bad.l_whence = SEEK_SET;
  bad.l_len = 1;
  bad.l_pid = 1;
  CHECK_ERRNO(fcntl(c, F_OFD_SETLK, &bad), EINVAL);
  CHECK_ERRNO(fcntl(c, F_OFD_GETLK, &bad), EINVAL);
  CHECK_OK(close(e));
  // An OFD lock is shared with a forked child (same open file) and
  // survives our close while the child holds the file.
  CHECK_OK(set_lock(c, F_OFD_SETLK, F_WRLCK, 0, 0));
  int p[2], q[2];
  CHECK_OK(pipe(p));
  CHECK_OK(pipe(q));
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    char x;
    CHECK_EQ(read(p[0], &x, 1), 1);
    _exit(0);  // Closes the last reference.
  }
  CHECK_OK(close(c));
  int f = open_rw("ol");
  CHECK_ERRNO(set_lock(f, F_OFD_SETLK, F_WRLCK, 0, 1), EAGAIN);
  CHECK_EQ(write(p[1], "x", 1), 1);
  CHECK_EXIT(pid, 0);
  CHECK_OK(set_lock(f, F_OFD_SETLK, F_WRLCK, 0, 1));
  CHECK_OK(close(f));
  close(p[0]);
  close(p[1]);
  close(q[0]);
  close(q[1]);
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  umask(022);
  conf_tmpdir("file_locks");
  RUN(flock_exclusive_and_shared);
  RUN(flock_follows_the_open_file);
  RUN(flock_blocks_until_released);
  RUN(flock_and_posix_locks_are_independent);
  RUN(getlk_across_fork);
  RUN(setlkw_blocks_until_released);
  RUN(byte_ranges_split_and_merge);
  RUN(posix_lock_released_on_any_close);
  RUN(posix_deadlock_detected);
  RUN(ofd_locks);
  conf_tmpdir_remove();
  PASS("file_locks");
  return 0;
}
