// Signal-driven I/O and leases: F_SETOWN/F_GETOWN, F_SETOWN_EX/F_GETOWN_EX
// (thread, process, process group), F_SETSIG/F_GETSIG, O_ASYNC through
// F_SETFL and FIOASYNC, and the signals (SIGIO, or the F_SETSIG signal with
// si_code, si_band and si_fd) that pipes, FIFOs, ptys and inotify send; files
// without fasync (eventfd) send none. Leases: F_SETLEASE/F_GETLEASE rules,
// lease breaks by another process's open (the holder's signal, EWOULDBLOCK
// for a non-blocking opener, a blocking opener released by the holder or by
// /proc/sys/fs/lease-break-time).
//
// Runs as root in its own scratch directory (conf_tmpdir).
#include "common.h"

#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>

#define USER_UID 1000

static int sigrt_io;  // the F_SETSIG signal of the cases

static void block(int sig) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  CHECK_OK(sigprocmask(SIG_BLOCK, &set, NULL));
}

// Waits up to `ms` for `sig` (blocked); 0 if it did not come.
static int wait_sig(int sig, siginfo_t *si, int ms) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  int r = sigtimedwait(&set, si, &ts);
  if (r < 0) {
    CHECK_EQ(errno, EAGAIN);
    return 0;
  }
  return r;
}

// Forgets pending instances of `sig` left by earlier cases (closing an
// O_ASYNC pipe end's partner signals it, for one).
static void drain(int sig) {
  siginfo_t si;
  while (wait_sig(sig, &si, 0)) {
  }
}

static void set_async(int fd, int owner) {
  CHECK_OK(fcntl(fd, F_SETOWN, owner));
  CHECK_OK(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC));
}

TEST(owner_and_signal_settings) {
  int p[2];
  CHECK_OK(pipe(p));
  CHECK_EQ(fcntl(p[0], F_GETOWN), 0);
  CHECK_EQ(fcntl(p[0], F_GETSIG), 0);
  struct f_owner_ex ex;
  CHECK_OK(fcntl(p[0], F_GETOWN_EX, &ex));
  CHECK_EQ(ex.pid, 0);
  CHECK_OK(fcntl(p[0], F_SETOWN, getpid()));
  CHECK_EQ(fcntl(p[0], F_GETOWN), getpid());
  CHECK_OK(fcntl(p[0], F_GETOWN_EX, &ex));
  CHECK_EQ(ex.type, F_OWNER_PID);
  CHECK_EQ(ex.pid, getpid());
  CHECK_OK(fcntl(p[0], F_SETOWN, -getpgrp()));
  CHECK_EQ(fcntl(p[0], F_GETOWN), -getpgrp());
  CHECK_OK(fcntl(p[0], F_GETOWN_EX, &ex));
  CHECK_EQ(ex.type, F_OWNER_PGRP);
  CHECK_EQ(ex.pid, getpgrp());
  ex.type = F_OWNER_TID;
  ex.pid = conf_gettid();
  CHECK_OK(fcntl(p[0], F_SETOWN_EX, &ex));
  CHECK_EQ(fcntl(p[0], F_GETOWN), conf_gettid());
  ex.type = 7;
  CHECK_ERRNO(fcntl(p[0], F_SETOWN_EX, &ex), EINVAL);
  CHECK_ERRNO(fcntl(p[0], F_SETOWN_EX, NULL), EFAULT);
  CHECK_ERRNO(fcntl(p[0], F_SETOWN, 999999), ESRCH);
  CHECK_OK(fcntl(p[0], F_SETOWN, 0));
  CHECK_EQ(fcntl(p[0], F_GETOWN), 0);
  CHECK_OK(fcntl(p[0], F_SETSIG, SIGUSR1));
  CHECK_EQ(fcntl(p[0], F_GETSIG), SIGUSR1);
  CHECK_OK(fcntl(p[0], F_SETSIG, 64));
  CHECK_ERRNO(fcntl(p[0], F_SETSIG, 65), EINVAL);
  CHECK_ERRNO(fcntl(p[0], F_SETSIG, -1), EINVAL);
  CHECK_OK(fcntl(p[0], F_SETSIG, 0));
  // The settings belong to the open file, shared by dup.
  int d = dup(p[0]);
  CHECK_OK(fcntl(d, F_SETOWN, getpid()));
  CHECK_EQ(fcntl(p[0], F_GETOWN), getpid());
  // Any file has them, regular files too.
  CHECK_OK(fcntl(0, F_GETOWN));
  CHECK_ERRNO(fcntl(99, F_SETOWN, getpid()), EBADF);
  CHECK_OK(close(d));
  CHECK_OK(close(p[0]));
  CHECK_OK(close(p[1]));
}

TEST(sigio_on_pipe_input) {
  block(SIGIO);
  int p[2];
  CHECK_OK(pipe(p));
  set_async(p[0], getpid());
  CHECK(fcntl(p[0], F_GETFL) & O_ASYNC);
  siginfo_t si;
  CHECK_EQ(wait_sig(SIGIO, &si, 20), 0);  // nothing yet
  CHECK_EQ(write(p[1], "a", 1), 1);
  CHECK_EQ(wait_sig(SIGIO, &si, 2000), SIGIO);
  CHECK_EQ(si.si_code, SI_KERNEL);
  // Clearing O_ASYNC stops the signals.
  char c;
  CHECK_EQ(read(p[0], &c, 1), 1);
  CHECK_OK(fcntl(p[0], F_SETFL, 0));
  CHECK_EQ(write(p[1], "b", 1), 1);
  CHECK_EQ(wait_sig(SIGIO, &si, 50), 0);
  CHECK_OK(close(p[0]));
  CHECK_OK(close(p[1]));
}

TEST(setsig_fills_siginfo) {
  block(sigrt_io);
  int p[2];
  CHECK_OK(pipe(p));
  int rfd = fcntl(p[0], F_DUPFD, 20);  // si_fd reports this number
  CHECK_OK(fcntl(rfd, F_SETSIG, sigrt_io));
  set_async(rfd, getpid());
  CHECK_EQ(write(p[1], "a", 1), 1);
  siginfo_t si;
  CHECK_EQ(wait_sig(sigrt_io, &si, 2000), sigrt_io);
  CHECK_EQ(si.si_code, POLL_IN);
  CHECK_EQ(si.si_fd, rfd);
  CHECK_EQ(si.si_band, POLLIN | POLLRDNORM);
  // The writer's side: room after a full pipe was read.
  CHECK_OK(fcntl(p[1], F_SETSIG, sigrt_io));
  CHECK_OK(fcntl(p[1], F_SETFL, O_NONBLOCK));
  static char buf[1 << 16];
  while (write(p[1], buf, sizeof(buf)) > 0) {
  }
  set_async(p[1], getpid());
  while (wait_sig(sigrt_io, &si, 20)) {
  }
  CHECK_OK(fcntl(rfd, F_SETFL, O_NONBLOCK | O_ASYNC));
  while (read(rfd, buf, sizeof(buf)) > 0) {
  }
  CHECK_EQ(errno, EAGAIN);
  CHECK_EQ(wait_sig(sigrt_io, &si, 2000), sigrt_io);
  CHECK_EQ(si.si_code, POLL_OUT);
  CHECK_EQ(si.si_fd, p[1]);
  CHECK_EQ(si.si_band, POLLOUT | POLLWRNORM | POLLWRBAND);
  while (wait_sig(sigrt_io, &si, 20)) {
  }
  // Any read tells the writer, full pipe or not (Linux 6.x's pipe_read).
  CHECK_EQ(write(p[1], "ab", 2), 2);
  CHECK_EQ(wait_sig(sigrt_io, &si, 2000), sigrt_io);  // the reader's POLL_IN
  CHECK_EQ(si.si_code, POLL_IN);
  CHECK_EQ(read(rfd, buf, 1), 1);
  CHECK_EQ(wait_sig(sigrt_io, &si, 2000), sigrt_io);
  CHECK_EQ(si.si_code, POLL_OUT);
  CHECK_EQ(wait_sig(sigrt_io, &si, 50), 0);
  CHECK_OK(close(rfd));
  CHECK_OK(close(p[0]));
  CHECK_OK(close(p[1]));
}

// O_ASYNC in f_flags is the file's fasync state, set and cleared only by its
// fasync operation: O_ASYNC given to open(2) shows in F_GETFL but arms
// nothing (Linux never calls fasync at open), and as nothing is armed,
// clearing it (F_SETFL or FIOASYNC) finds nothing to remove and leaves it
// set. FIOASYNC is F_SETFL's twin on a file opened without it.
TEST(o_async_flag_rules) {
  block(SIGIO);
  CHECK_OK(mkfifo("fifo", 0600));
  int fd = open("fifo", O_RDWR | O_ASYNC);
  CHECK(fd >= 0);
  CHECK(fcntl(fd, F_GETFL) & O_ASYNC);
  CHECK_OK(fcntl(fd, F_SETOWN, getpid()));
  siginfo_t si;
  CHECK_EQ(write(fd, "a", 1), 1);
  CHECK_EQ(wait_sig(SIGIO, &si, 50), 0);
  CHECK_OK(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC));
  CHECK_EQ(write(fd, "a", 1), 1);
  CHECK_EQ(wait_sig(SIGIO, &si, 50), 0);
  CHECK_OK(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_ASYNC));
  CHECK(fcntl(fd, F_GETFL) & O_ASYNC);
  int off = 0, on = 1;
  CHECK_OK(ioctl(fd, FIOASYNC, &off));
  CHECK(fcntl(fd, F_GETFL) & O_ASYNC);
  CHECK_OK(close(fd));

  fd = open("fifo", O_RDWR);
  CHECK(fd >= 0);
  CHECK_OK(fcntl(fd, F_SETOWN, getpid()));
  CHECK_OK(ioctl(fd, FIOASYNC, &on));
  CHECK(fcntl(fd, F_GETFL) & O_ASYNC);
  CHECK_EQ(write(fd, "a", 1), 1);
  CHECK_EQ(wait_sig(SIGIO, &si, 2000), SIGIO);
  CHECK_OK(ioctl(fd, FIOASYNC, &off));
  CHECK_EQ(fcntl(fd, F_GETFL) & O_ASYNC, 0);
  CHECK_EQ(write(fd, "a", 1), 1);
  CHECK_EQ(wait_sig(SIGIO, &si, 50), 0);
  CHECK_OK(close(fd));
  CHECK_OK(unlink("fifo"));
}

TEST(pty_and_inotify_signal) {
  block(SIGIO);
  int m = posix_openpt(O_RDWR | O_NOCTTY);
  CHECK(m >= 0);
  CHECK_OK(grantpt(m));
  CHECK_OK(unlockpt(m));
  int s = open(ptsname(m), O_RDWR | O_NOCTTY);
  CHECK(s >= 0);
  set_async(m, getpid());
  siginfo_t si;
  while (wait_sig(SIGIO, &si, 20)) {
  }
  CHECK_EQ(write(s, "x\n", 2), 2);
  CHECK_EQ(wait_sig(SIGIO, &si, 2000), SIGIO);
  CHECK_OK(close(s));
  CHECK_OK(close(m));
  while (wait_sig(SIGIO, &si, 20)) {
  }

  int in = inotify_init1(0);
  CHECK(in >= 0);
  CHECK(inotify_add_watch(in, ".", IN_CREATE) >= 0);
  set_async(in, getpid());
  conf_put_file("created", "", 0644);
  CHECK_EQ(wait_sig(SIGIO, &si, 2000), SIGIO);
  CHECK_OK(close(in));
  CHECK_OK(unlink("created"));
}

TEST(eventfd_sends_nothing) {
  block(SIGIO);
  int e = eventfd(0, 0);
  CHECK(e >= 0);
  // Without a fasync operation F_SETFL cannot even set the flag.
  set_async(e, getpid());
  CHECK_EQ(fcntl(e, F_GETFL) & O_ASYNC, 0);
  uint64_t one = 1;
  CHECK_EQ(write(e, &one, 8), 8);
  siginfo_t si;
  CHECK_EQ(wait_sig(SIGIO, &si, 50), 0);
  // FIOASYNC wants a file that can signal.
  int on = 1;
  CHECK_ERRNO(ioctl(e, FIOASYNC, &on), ENOTTY);
  CHECK_OK(close(e));
}

// The owner can be another process, a process group or one thread.
static int tid_pipe[2];
static volatile pid_t waiter_tid;
static void *thread_waits(void *arg) {
  (void)arg;
  waiter_tid = conf_gettid();
  siginfo_t si;
  CHECK_EQ(wait_sig(SIGIO, &si, 3000), SIGIO);
  return NULL;
}

TEST(other_owners) {
  block(SIGIO);
  int p[2];
  CHECK_OK(pipe(p));
  int ready[2];
  CHECK_OK(pipe(ready));
  pid_t child = fork();
  CHECK(child >= 0);
  if (child == 0) {
    CHECK_OK(setpgid(0, 0));
    CHECK_EQ(write(ready[1], "r", 1), 1);
    siginfo_t si;
    CHECK_EQ(wait_sig(SIGIO, &si, 3000), SIGIO);  // as the process
    CHECK_EQ(wait_sig(SIGIO, &si, 3000), SIGIO);  // as its group
    _exit(0);
  }
  char c;
  CHECK_EQ(read(ready[0], &c, 1), 1);
  set_async(p[0], child);
  CHECK_EQ(write(p[1], "a", 1), 1);
  CHECK_EQ(read(p[0], &c, 1), 1);
  conf_sleep_ms(20);
  CHECK_OK(fcntl(p[0], F_SETOWN, -child));
  CHECK_EQ(write(p[1], "a", 1), 1);
  CHECK_EXIT(child, 0);
  siginfo_t si;
  CHECK_EQ(wait_sig(SIGIO, &si, 50), 0);  // none came here
  CHECK_EQ(read(p[0], &c, 1), 1);

  tid_pipe[0] = p[0];
  pthread_t th;
  CHECK_EQ(pthread_create(&th, NULL, thread_waits, NULL), 0);
  while (waiter_tid == 0) conf_sleep_ms(1);
  struct f_owner_ex ex = {F_OWNER_TID, waiter_tid};
  CHECK_OK(fcntl(p[0], F_SETOWN_EX, &ex));
  CHECK_EQ(write(p[1], "a", 1), 1);
  CHECK_EQ(pthread_join(th, NULL), 0);
  CHECK_EQ(wait_sig(SIGIO, &si, 50), 0);
  CHECK_OK(close(p[0]));
  CHECK_OK(close(p[1]));
}

// --- Leases ---

TEST(lease_rules) {
  conf_put_file("leased", "data", 0644);
  int r = open("leased", O_RDONLY);
  CHECK(r >= 0);
  CHECK_EQ(fcntl(r, F_GETLEASE), F_UNLCK);
  CHECK_OK(fcntl(r, F_SETLEASE, F_RDLCK));
  CHECK_EQ(fcntl(r, F_GETLEASE), F_RDLCK);
  // A second reader may share a read lease, not take a write lease.
  int r2 = open("leased", O_RDONLY);
  CHECK(r2 >= 0);
  CHECK_OK(fcntl(r2, F_SETLEASE, F_RDLCK));
  CHECK_ERRNO(fcntl(r2, F_SETLEASE, F_WRLCK), EAGAIN);
  CHECK_OK(fcntl(r2, F_SETLEASE, F_UNLCK));
  // Upgrading needs no other open file (O_PATH ones do not count).
  CHECK_OK(fcntl(r, F_SETLEASE, F_UNLCK));
  CHECK_ERRNO(fcntl(r, F_SETLEASE, F_WRLCK), EAGAIN);  // r2 still reads
  CHECK_OK(close(r2));
  int path = open("leased", O_PATH);
  CHECK(path >= 0);
  CHECK_OK(fcntl(r, F_SETLEASE, F_WRLCK));
  CHECK_OK(close(path));
  CHECK_EQ(fcntl(r, F_GETLEASE), F_WRLCK);
  CHECK_OK(fcntl(r, F_SETLEASE, F_UNLCK));
  CHECK_EQ(fcntl(r, F_GETLEASE), F_UNLCK);
  // Any writer (the caller's own open included) rules out a read lease.
  int w = open("leased", O_WRONLY);
  CHECK(w >= 0);
  CHECK_ERRNO(fcntl(r, F_SETLEASE, F_RDLCK), EAGAIN);
  CHECK_ERRNO(fcntl(w, F_SETLEASE, F_RDLCK), EAGAIN);
  CHECK_ERRNO(fcntl(r, F_SETLEASE, F_WRLCK), EAGAIN);
  CHECK_OK(close(r));
  CHECK_OK(fcntl(w, F_SETLEASE, F_WRLCK));
  CHECK_EQ(fcntl(w, F_GETLEASE), F_WRLCK);
  CHECK_ERRNO(fcntl(w, F_SETLEASE, 7), EINVAL);
  CHECK_OK(close(w));
  // Only regular files; only their owner (or CAP_LEASE).
  int d = open(".", O_RDONLY);
  CHECK_ERRNO(fcntl(d, F_SETLEASE, F_RDLCK), EINVAL);
  CHECK_OK(close(d));
  int p[2];
  CHECK_OK(pipe(p));
  CHECK_ERRNO(fcntl(p[0], F_SETLEASE, F_RDLCK), EINVAL);
  CHECK_EQ(fcntl(p[0], F_GETLEASE), F_UNLCK);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    CHECK_OK(setgroups(0, NULL));
    CHECK_OK(setgid(USER_UID));
    CHECK_OK(setuid(USER_UID));
    int fd = open("leased", O_RDONLY);
    CHECK(fd >= 0);
    CHECK_ERRNO(fcntl(fd, F_SETLEASE, F_RDLCK), EACCES);
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
  CHECK_OK(unlink("leased"));
}

// Opens `path` with `flags` in a child: exits 0 if it opened, the errno
// otherwise.
static pid_t open_in_child(const char *path, int flags) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    int fd = open(path, flags);
    _exit(fd >= 0 ? 0 : errno);
  }
  return pid;
}

TEST(lease_break) {
  block(sigrt_io);
  block(SIGIO);
  drain(sigrt_io);
  drain(SIGIO);
  conf_put_file("lf", "data", 0644);
  int fd = open("lf", O_RDONLY);
  CHECK(fd >= 0);
  CHECK_OK(fcntl(fd, F_SETSIG, sigrt_io));
  CHECK_OK(fcntl(fd, F_SETLEASE, F_RDLCK));
  // The setter became the owner.
  CHECK_EQ(fcntl(fd, F_GETOWN), getpid());
  // Readers do not break a read lease.
  CHECK_EXIT(open_in_child("lf", O_RDONLY), 0);
  // A non-blocking writer breaks it and gets EWOULDBLOCK; the holder hears.
  CHECK_EXIT(open_in_child("lf", O_WRONLY | O_NONBLOCK), EWOULDBLOCK);
  siginfo_t si;
  CHECK_EQ(wait_sig(sigrt_io, &si, 2000), sigrt_io);
  CHECK_EQ(si.si_code, POLL_MSG);
  CHECK_EQ(si.si_fd, fd);
  CHECK_EQ(fcntl(fd, F_GETLEASE), F_UNLCK);  // what the break leaves
  // A blocking writer waits until the holder lets go.
  pid_t opener = open_in_child("lf", O_WRONLY);
  conf_sleep_ms(20);
  CHECK_OK(fcntl(fd, F_SETLEASE, F_UNLCK));
  CHECK_EXIT(opener, 0);
  while (wait_sig(sigrt_io, &si, 20)) {
  }
  // A write lease is downgraded for a reader, and SIGIO goes without F_SETSIG.
  CHECK_OK(fcntl(fd, F_SETSIG, 0));
  CHECK_OK(fcntl(fd, F_SETLEASE, F_WRLCK));
  opener = open_in_child("lf", O_RDONLY);
  CHECK_EQ(wait_sig(SIGIO, &si, 2000), SIGIO);
  CHECK_EQ(fcntl(fd, F_GETLEASE), F_RDLCK);
  CHECK_OK(fcntl(fd, F_SETLEASE, F_RDLCK));
  CHECK_EXIT(opener, 0);
  CHECK_EQ(fcntl(fd, F_GETLEASE), F_RDLCK);
  CHECK_OK(fcntl(fd, F_SETLEASE, F_UNLCK));
  // truncate(2) breaks a lease as an open for writing does.
  CHECK_OK(fcntl(fd, F_SETLEASE, F_RDLCK));
  pid_t tr = fork();
  CHECK(tr >= 0);
  if (tr == 0) _exit(truncate("lf", 2) == 0 ? 0 : errno);
  CHECK_EQ(wait_sig(SIGIO, &si, 2000), SIGIO);
  CHECK_EQ(fcntl(fd, F_GETLEASE), F_UNLCK);
  CHECK_OK(fcntl(fd, F_SETLEASE, F_UNLCK));
  CHECK_EXIT(tr, 0);
  struct stat st;
  CHECK_OK(stat("lf", &st));
  CHECK_EQ(st.st_size, 2);
  CHECK_OK(close(fd));
  CHECK_OK(unlink("lf"));
}

// A blocked opener takes the lease away once lease-break-time has passed (1 s
// here: the unit is seconds, and 0 means no limit at all).
static void lease_break_time_child(void) {
  conf_put_file("/proc/sys/fs/lease-break-time", "1\n", 0644);
  conf_put_file("lt", "data", 0644);
  int fd = open("lt", O_RDONLY);
  CHECK(fd >= 0);
  CHECK_OK(fcntl(fd, F_SETLEASE, F_RDLCK));
  CHECK_EXIT(open_in_child("lt", O_WRONLY), 0);
  siginfo_t si;
  CHECK_EQ(wait_sig(SIGIO, &si, 2000), SIGIO);
  CHECK_EQ(fcntl(fd, F_GETLEASE), F_UNLCK);
  CHECK_OK(close(fd));
  CHECK_OK(unlink("lt"));
}

TEST(lease_break_time) {
  block(SIGIO);
  drain(SIGIO);
  char old[32];
  int n = (int)conf_get_file("/proc/sys/fs/lease-break-time", old, sizeof(old));
  CHECK(n > 0);
  CHECK_EQ(atoi(old), 45);
  // In a child, so that the old value comes back even if a check fails.
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    lease_break_time_child();
    _exit(0);
  }
  int status;
  CHECK_EQ(waitpid(pid, &status, 0), pid);
  conf_put_file("/proc/sys/fs/lease-break-time", old, 0644);
  CHECK_EQ(status, 0);
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  sigrt_io = SIGRTMIN + 1;
  conf_tmpdir("async_io");
  CHECK_OK(chmod(".", 0755));
  RUN(owner_and_signal_settings);
  RUN(sigio_on_pipe_input);
  RUN(setsig_fills_siginfo);
  RUN(o_async_flag_rules);
  RUN(pty_and_inotify_signal);
  RUN(eventfd_sends_nothing);
  RUN(other_owners);
  RUN(lease_rules);
  RUN(lease_break);
  RUN(lease_break_time);
  conf_tmpdir_remove();
  PASS("async_io");
  return 0;
}
