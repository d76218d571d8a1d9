// pidfds: pidfd_open, polling for exit, pidfd_send_signal, pidfd_getfd,
// waitid(P_PIDFD), CLONE_PIDFD (clone and clone3), /proc/self/fd and fdinfo,
// and their errors.
#include "common.h"

#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/mman.h>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

static int pidfd_open(pid_t pid, unsigned flags) {
  return (int)syscall(SYS_pidfd_open, pid, flags);
}
static int pidfd_send_signal(int fd, int sig, siginfo_t *info, unsigned flags) {
  return (int)syscall(SYS_pidfd_send_signal, fd, sig, info, flags);
}
static int pidfd_getfd(int fd, int target, unsigned flags) {
  return (int)syscall(SYS_pidfd_getfd, fd, target, flags);
}

// A child that waits until `gate` (a pipe's read end) reports EOF, then exits
// with `code`.
static pid_t gated_child(int gate[2], int code) {
  CHECK_OK(pipe(gate));
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    close(gate[1]);
    char c;
    while (read(gate[0], &c, 1) == -1 && errno == EINTR) {
    }
    _exit(code);
  }
  CHECK_OK(close(gate[0]));
  return pid;
}

static short poll_one(int fd, int timeout_ms) {
  struct pollfd p = {fd, POLLIN, 0};
  int n = poll(&p, 1, timeout_ms);
  CHECK(n >= 0);
  return n == 0 ? 0 : p.revents;
}

TEST(open_and_flags) {
  int fd = pidfd_open(getpid(), 0);
  CHECK(fd >= 0);
  CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
  CHECK_EQ(fcntl(fd, F_GETFL) & (O_ACCMODE | O_NONBLOCK), O_RDWR);
  char c;
  CHECK_ERRNO(read(fd, &c, 1), EINVAL);
  CHECK_ERRNO(write(fd, &c, 1), EINVAL);
  CHECK_OK(close(fd));
  fd = pidfd_open(getpid(), O_NONBLOCK);  // PIDFD_NONBLOCK
  CHECK(fd >= 0);
  CHECK_EQ(fcntl(fd, F_GETFL) & (O_ACCMODE | O_NONBLOCK), O_RDWR | O_NONBLOCK);
  CHECK_OK(close(fd));
  CHECK_ERRNO(pidfd_open(getpid(), 1), EINVAL);
  CHECK_ERRNO(pidfd_open(0, 0), EINVAL);
  CHECK_ERRNO(pidfd_open(-1, 0), EINVAL);
  // A reaped child's pid names nothing.
  int gate[2];
  pid_t pid = gated_child(gate, 0);
  CHECK_OK(close(gate[1]));
  CHECK_EXIT(pid, 0);
  CHECK_ERRNO(pidfd_open(pid, 0), ESRCH);
}

static void *park(void *arg) {
  int *p = (int *)arg;
  char c;
  while (read(p[0], &c, 1) == -1 && errno == EINTR) {
  }
  return NULL;
}

TEST(open_thread_is_enoent) {
  int p[2];
  CHECK_OK(pipe(p));
  pthread_t th;
  CHECK_EQ(pthread_create(&th, NULL, park, p), 0);
  // The thread's tid is not a process: pidfd_open wants a thread-group leader.
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
  CHECK_ERRNO(pidfd_open(tid, 0), ENOENT);  // EINVAL before Linux 6.9
  CHECK_OK(close(p[1]));
  CHECK_EQ(pthread_join(th, NULL), 0);
  CHECK_OK(close(p[0]));
}

TEST(proc_fd_and_fdinfo) {
  int gate[2];
  pid_t pid = gated_child(gate, 0);
  int fd = pidfd_open(pid, 0);
  CHECK(fd >= 0);
  char path[64], buf[4096];
  snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
  ssize_t n = readlink(path, buf, sizeof(buf) - 1);
  CHECK(n > 0);
  buf[n] = '\0';
  CHECK(strcmp(buf, "anon_inode:[pidfd]") == 0);
  snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
  conf_get_file(path, buf, sizeof(buf));
  char *line = strstr(buf, "\nPid:\t");
  CHECK(line != NULL);
  CHECK_EQ(atoi(line + 6), pid);
  CHECK(strstr(buf, "flags:\t02000002\n") != NULL);
  CHECK_OK(close(gate[1]));
  CHECK_EXIT(pid, 0);
  // Reaped: the pid is gone.
  conf_get_file(path, buf, sizeof(buf));
  line = strstr(buf, "\nPid:\t");
  CHECK(line != NULL);
  CHECK_EQ(atoi(line + 6), -1);
  CHECK_OK(close(fd));
}

TEST(poll_on_exit) {
  int gate[2];
  pid_t pid = gated_child(gate, 0);
  int fd = pidfd_open(pid, 0);
  CHECK(fd >= 0);
  CHECK_EQ(poll_one(fd, 0), 0);
  int ep = epoll_create1(EPOLL_CLOEXEC);
  CHECK(ep >= 0);
  struct epoll_event ev = {.events = EPOLLIN, .data.u32 = 7};
  CHECK_OK(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
  CHECK_EQ(epoll_wait(ep, &ev, 1, 0), 0);
  CHECK_OK(close(gate[1]));
  // Readable once the process has exited, before anyone reaps it.
  CHECK(poll_one(fd, 10000) & POLLIN);
  CHECK_EQ(epoll_wait(ep, &ev, 1, 10000), 1);
  CHECK_EQ(ev.data.u32, 7);
  CHECK(ev.events & EPOLLIN);
  CHECK_EXIT(pid, 0);
  CHECK(poll_one(fd, 0) & POLLIN);
  CHECK_OK(close(ep));
  CHECK_OK(close(fd));
}

// The leader leaves with pthread_exit; another thread keeps the process alive.
static void *linger(void *arg) {
  int fd = *(int *)arg;
  char c;
  while (read(fd, &c, 1) == -1 && errno == EINTR) {
  }
  _exit(5);
}

TEST(poll_waits_for_whole_group) {
  int gate[2];
  CHECK_OK(pipe(gate));
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    close(gate[1]);
    static int rd;
    rd = gate[0];
    pthread_t th;
    if (pthread_create(&th, NULL, linger, &rd) != 0) _exit(99);
    pthread_exit(NULL);
  }
  CHECK_OK(close(gate[0]));
  int fd = pidfd_open(pid, 0);
  CHECK(fd >= 0);
  conf_sleep_ms(50);  // the leader is gone by now, most likely
  CHECK_EQ(poll_one(fd, 0), 0);
  CHECK_OK(close(gate[1]));
  CHECK(poll_one(fd, 10000) & POLLIN);
  CHECK_EXIT(pid, 5);
  CHECK_OK(close(fd));
}

static volatile sig_atomic_t got_code, got_value, got_sig;
static void on_usr1(int sig, siginfo_t *si, void *uc) {
  (void)uc;
  got_sig = sig;
  got_code = si->si_code;
  got_value = si->si_value.sival_int;
}

TEST(send_signal) {
  int gate[2];
  pid_t pid = gated_child(gate, 0);
  int fd = pidfd_open(pid, 0);
  CHECK(fd >= 0);
  CHECK_ERRNO(pidfd_send_signal(fd, SIGTERM, NULL, 0x100), EINVAL);
  CHECK_ERRNO(pidfd_send_signal(-1, SIGTERM, NULL, 0), EBADF);
  CHECK_ERRNO(pidfd_send_signal(gate[1], SIGTERM, NULL, 0), EBADF);
  CHECK_ERRNO(pidfd_send_signal(fd, 65, NULL, 0), EINVAL);
  CHECK_OK(pidfd_send_signal(fd, 0, NULL, 0));
  siginfo_t si;
  memset(&si, 0, sizeof(si));
  si.si_signo = SIGUSR1;
  si.si_code = SI_QUEUE;
  CHECK_ERRNO(pidfd_send_signal(fd, SIGTERM, &si, 0), EINVAL);  // signo mismatch
  si.si_signo = SIGTERM;
  si.si_code = SI_USER;  // only the kernel may claim that, for another process
  CHECK_ERRNO(pidfd_send_signal(fd, SIGTERM, &si, 0), EPERM);
  si.si_code = SI_TKILL;
  CHECK_ERRNO(pidfd_send_signal(fd, SIGTERM, &si, 0), EPERM);
  CHECK_ERRNO(pidfd_send_signal(fd, SIGTERM, (siginfo_t *)8, 0), EFAULT);
  CHECK_OK(pidfd_send_signal(fd, SIGTERM, NULL, 0));
  CHECK_KILLED(pid, SIGTERM);
  // Reaped: nothing left to signal.
  CHECK_ERRNO(pidfd_send_signal(fd, SIGTERM, NULL, 0), ESRCH);
  CHECK_ERRNO(pidfd_send_signal(fd, 0, NULL, 0), ESRCH);
  CHECK_OK(close(gate[1]));
  CHECK_OK(close(fd));
}

TEST(send_signal_zombie) {
  int gate[2];
  pid_t pid = gated_child(gate, 0);
  int fd = pidfd_open(pid, 0);
  CHECK(fd >= 0);
  CHECK_OK(close(gate[1]));
  CHECK(poll_one(fd, 10000) & POLLIN);
  // Exited but not reaped: the signal goes nowhere, without an error.
  CHECK_OK(pidfd_send_signal(fd, SIGKILL, NULL, 0));
  CHECK_EXIT(pid, 0);
  CHECK_OK(close(fd));
}

TEST(send_signal_siginfo) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = on_usr1;
  sa.sa_flags = SA_SIGINFO;
  CHECK_OK(sigaction(SIGUSR1, &sa, NULL));
  int rep[2];
  CHECK_OK(pipe(rep));
  // Blocked until the child waits in sigsuspend: a signal taken between a check of got_sig
  // and pause() would leave the child asleep for good.
  sigset_t usr1, old;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  CHECK_OK(sigprocmask(SIG_BLOCK, &usr1, &old));
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    while (!got_sig) sigsuspend(&old);
    int out[2] = {got_code, got_value};
    conf_write_full(rep[1], out, sizeof(out));
    _exit(0);
  }
  int fd = pidfd_open(pid, 0);
  CHECK(fd >= 0);
  siginfo_t si;
  memset(&si, 0, sizeof(si));
  si.si_signo = SIGUSR1;
  si.si_code = SI_QUEUE;
  si.si_value.sival_int = 4242;
  CHECK_OK(pidfd_send_signal(fd, SIGUSR1, &si, 0));
  int in[2];
  conf_read_full(rep[0], in, sizeof(in));
  CHECK_EQ(in[0], SI_QUEUE);
  CHECK_EQ(in[1], 4242);
  CHECK_EXIT(pid, 0);
  CHECK_OK(sigprocmask(SIG_SETMASK, &old, NULL));
  // To itself, a process may claim any code.
  int self = pidfd_open(getpid(), 0);
  CHECK(self >= 0);
  got_sig = 0;
  si.si_code = SI_USER;
  si.si_value.sival_int = 7;
  CHECK_OK(pidfd_send_signal(self, SIGUSR1, &si, 0));
  CHECK_EQ(got_sig, SIGUSR1);
  CHECK_EQ(got_code, SI_USER);
  got_sig = 0;
  CHECK_OK(pidfd_send_signal(self, SIGUSR1, NULL, 0));
  CHECK_EQ(got_sig, SIGUSR1);
  CHECK_EQ(got_code, SI_USER);
  signal(SIGUSR1, SIG_DFL);
  CHECK_OK(close(self));
  CHECK_OK(close(fd));
  CHECK_OK(close(rep[0]));
  CHECK_OK(close(rep[1]));
}

TEST(getfd) {
  int gate[2], ready[2];
  CHECK_OK(pipe(ready));
  CHECK_OK(pipe(gate));
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    close(gate[1]);
    int m = memfd_create("getfd", 0);
    if (m < 0 || write(m, "hello", 5) != 5 || dup2(m, 100) != 100) _exit(98);
    close(m);
    if (write(ready[1], "r", 1) != 1) _exit(97);
    char c;
    while (read(gate[0], &c, 1) == -1 && errno == EINTR) {
    }
    // The parent moved our offset through its copy: the same open file.
    _exit(lseek(100, 0, SEEK_CUR) == 2 ? 0 : 1);
  }
  CHECK_OK(close(gate[0]));
  char c;
  conf_read_full(ready[0], &c, 1);
  int fd = pidfd_open(pid, 0);
  CHECK(fd >= 0);
  CHECK_ERRNO(pidfd_getfd(fd, 100, 1), EINVAL);
  CHECK_ERRNO(pidfd_getfd(fd, 101, 0), EBADF);
  CHECK_ERRNO(pidfd_getfd(fd, -1, 0), EBADF);
  CHECK_ERRNO(pidfd_getfd(-1, 100, 0), EBADF);
  CHECK_ERRNO(pidfd_getfd(ready[0], 100, 0), EBADF);
  int got = pidfd_getfd(fd, 100, 0);
  CHECK(got >= 0);
  CHECK_EQ(fcntl(got, F_GETFD), FD_CLOEXEC);
  char buf[8] = {0};
  CHECK_EQ(pread(got, buf, sizeof(buf), 0), 5);
  CHECK(memcmp(buf, "hello", 5) == 0);
  CHECK_EQ(lseek(got, 2, SEEK_SET), 2);
  CHECK_OK(close(gate[1]));
  CHECK(poll_one(fd, 10000) & POLLIN);
  // Exited, not yet reaped: its files are gone.
  CHECK_ERRNO(pidfd_getfd(fd, 100, 0), ESRCH);
  CHECK_EXIT(pid, 0);
  CHECK_ERRNO(pidfd_getfd(fd, 100, 0), ESRCH);
  CHECK_OK(close(got));
  CHECK_OK(close(fd));
  CHECK_OK(close(ready[0]));
  CHECK_OK(close(ready[1]));
}

TEST(getfd_needs_ptrace_access) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    int parent = pidfd_open(getppid(), 0);
    if (parent < 0) _exit(2);
    if (setuid(1000) != 0) _exit(3);
    // Another user's process (ours is root's) is out of reach.
    if (pidfd_getfd(parent, 0, 0) != -1 || errno != EPERM) _exit(4);
    int self = pidfd_open(getpid(), 0);
    int got = pidfd_getfd(self, 0, 0);
    if (got < 0) _exit(5);
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
}

TEST(waitid_pidfd) {
  int gate[2];
  pid_t pid = gated_child(gate, 7);
  int fd = pidfd_open(pid, 0);
  CHECK(fd >= 0);
  int nb = pidfd_open(pid, O_NONBLOCK);
  CHECK(nb >= 0);
  siginfo_t si;
  memset(&si, 0, sizeof(si));
  CHECK_ERRNO(waitid(P_PIDFD, nb, &si, WEXITED), EAGAIN);
  CHECK_OK(waitid(P_PIDFD, nb, &si, WEXITED | WNOHANG));
  CHECK_EQ(si.si_pid, 0);
  CHECK_OK(waitid(P_PIDFD, fd, &si, WEXITED | WNOHANG));
  CHECK_EQ(si.si_pid, 0);
  CHECK_ERRNO(waitid(P_PIDFD, -1, &si, WEXITED), EINVAL);
  CHECK_ERRNO(waitid(P_PIDFD, 999, &si, WEXITED), EBADF);
  CHECK_ERRNO(waitid(P_PIDFD, gate[1], &si, WEXITED), EBADF);
  int self = pidfd_open(getpid(), 0);
  CHECK_ERRNO(waitid(P_PIDFD, self, &si, WEXITED), ECHILD);  // not our child
  CHECK_OK(close(gate[1]));
  CHECK_OK(waitid(P_PIDFD, fd, &si, WEXITED | WNOWAIT));
  CHECK_EQ(si.si_pid, pid);
  CHECK_OK(waitid(P_PIDFD, fd, &si, WEXITED));
  CHECK_EQ(si.si_pid, pid);
  CHECK_EQ(si.si_code, CLD_EXITED);
  CHECK_EQ(si.si_status, 7);
  CHECK_ERRNO(waitid(P_PIDFD, fd, &si, WEXITED), ECHILD);
  CHECK_OK(close(self));
  CHECK_OK(close(nb));
  CHECK_OK(close(fd));
}

TEST(clone_pidfd) {
  int fd = -1;
  long r = syscall(SYS_clone, CLONE_PIDFD | SIGCHLD, 0, &fd, 0, 0);
  CHECK(r >= 0);
  if (r == 0) _exit(3);
  CHECK(fd >= 0);
  CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
  CHECK(poll_one(fd, 10000) & POLLIN);
  siginfo_t si;
  memset(&si, 0, sizeof(si));
  CHECK_OK(waitid(P_PIDFD, fd, &si, WEXITED));
  CHECK_EQ(si.si_pid, r);
  CHECK_EQ(si.si_status, 3);
  CHECK_OK(close(fd));
  // In clone() the pidfd goes where the parent tid would: not both.
  CHECK_ERRNO(syscall(SYS_clone, CLONE_PIDFD | CLONE_PARENT_SETTID | SIGCHLD, 0, &fd, 0, 0),
              EINVAL);
  CHECK_ERRNO(syscall(SYS_clone, CLONE_PIDFD | CLONE_DETACHED | SIGCHLD, 0, &fd, 0, 0), EINVAL);
  CHECK_ERRNO(syscall(SYS_clone, CLONE_PIDFD | SIGCHLD, 0, (int *)8, 0, 0), EFAULT);
}

TEST(clone3_pidfd) {
  struct clone_args args;
  memset(&args, 0, sizeof(args));
  int fd = -1;
  pid_t ptid = 0;
  args.flags = CLONE_PIDFD | CLONE_PARENT_SETTID;
  args.pidfd = (uint64_t)(uintptr_t)&fd;
  args.parent_tid = (uint64_t)(uintptr_t)&ptid;
  args.exit_signal = SIGCHLD;
  long r = syscall(SYS_clone3, &args, sizeof(args));
  CHECK(r >= 0);
  if (r == 0) _exit(4);
  CHECK(fd >= 0);
  CHECK_EQ(ptid, r);
  siginfo_t si;
  memset(&si, 0, sizeof(si));
  CHECK_OK(waitid(P_PIDFD, fd, &si, WEXITED));
  CHECK_EQ(si.si_pid, r);
  CHECK_EQ(si.si_status, 4);
  CHECK_OK(close(fd));
  // The same memory for both is refused.
  args.parent_tid = args.pidfd;
  CHECK_ERRNO(syscall(SYS_clone3, &args, sizeof(args)), EINVAL);
  args.parent_tid = (uint64_t)(uintptr_t)&ptid;
  CHECK_ERRNO(syscall(SYS_clone3, &args, 32), EINVAL);  // below CLONE_ARGS_SIZE_VER0
  char big[4096 + 8];
  memset(big, 0, sizeof(big));
  CHECK_ERRNO(syscall(SYS_clone3, big, sizeof(big)), E2BIG);
  args.exit_signal = 65;
  CHECK_ERRNO(syscall(SYS_clone3, &args, sizeof(args)), EINVAL);
  args.exit_signal = SIGCHLD;
  args.flags = CLONE_PIDFD | CLONE_DETACHED;
  CHECK_ERRNO(syscall(SYS_clone3, &args, sizeof(args)), EINVAL);
  args.flags = 0;
  args.stack_size = 4096;  // a size without a stack
  CHECK_ERRNO(syscall(SYS_clone3, &args, sizeof(args)), EINVAL);
}

#define PIDFD_THREAD_ O_EXCL  // Linux 6.9

static int raw_exit_thread(void *arg) {
  int fd = *(int *)arg;
  char c;
  while (read(fd, &c, 1) == -1 && errno == EINTR) {
  }
  syscall(SYS_exit, 0);
  return 0;
}

TEST(thread_pidfd) {
  int p[2];
  CHECK_OK(pipe(p));
  pthread_t th;
  CHECK_EQ(pthread_create(&th, NULL, park, p), 0);
  pid_t tid = -1;
  char path[64], buf[4096];
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
  int fd = pidfd_open(tid, PIDFD_THREAD_);
  CHECK(fd >= 0);
  CHECK(fcntl(fd, F_GETFL) & O_EXCL);
  CHECK_EQ(poll_one(fd, 0), 0);
  siginfo_t si;
  CHECK_ERRNO(waitid(P_PIDFD, fd, &si, WEXITED | WNOHANG), ECHILD);  // a thread, not a child
  int got = pidfd_getfd(fd, p[0], 0);
  CHECK(got >= 0);
  CHECK_OK(close(got));
  CHECK_OK(pidfd_send_signal(fd, 0, NULL, 0));
  snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
  conf_get_file(path, buf, sizeof(buf));
  CHECK_EQ(atoi(strstr(buf, "\nPid:\t") + 6), tid);
  CHECK_OK(close(p[1]));
  CHECK_EQ(pthread_join(th, NULL), 0);
  // A thread is gone once it has exited. pthread_join returns at the kernel's clear of the
  // thread's tid, a moment before the thread is released: the host itself may still say
  // POLLIN alone then (CI saw it natively), so wait up to 10 s for the state to settle.
  short ev = poll_one(fd, 10000);
  for (int i = 0; i < 1000 && ev == POLLIN; i++) {
    conf_sleep_ms(10);
    ev = poll_one(fd, 0);
  }
  CHECK_EQ(ev, POLLIN | POLLHUP);
  CHECK_ERRNO(pidfd_send_signal(fd, 0, NULL, 0), ESRCH);
  CHECK_ERRNO(pidfd_getfd(fd, 0, 0), ESRCH);
  conf_get_file(path, buf, sizeof(buf));
  CHECK_EQ(atoi(strstr(buf, "\nPid:\t") + 6), -1);
  CHECK_OK(close(fd));
  CHECK_OK(close(p[0]));
  // A thread pidfd of a child's leader: readable at exit, waitable, POLLHUP once reaped.
  int gate[2];
  pid_t pid = gated_child(gate, 6);
  fd = pidfd_open(pid, PIDFD_THREAD_);
  CHECK(fd >= 0);
  CHECK_OK(close(gate[1]));
  CHECK_EQ(poll_one(fd, 10000), POLLIN);
  memset(&si, 0, sizeof(si));
  CHECK_OK(waitid(P_PIDFD, fd, &si, WEXITED));
  CHECK_EQ(si.si_pid, pid);
  CHECK_EQ(si.si_status, 6);
  CHECK_EQ(poll_one(fd, 0), POLLIN | POLLHUP);
  CHECK_OK(close(fd));
  // CLONE_PIDFD with CLONE_THREAD: the new thread's pidfd.
  CHECK_OK(pipe(p));
  static char stack[64 * 1024];
  int tfd = -1;
  int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
              CLONE_PIDFD;
  CHECK(clone(raw_exit_thread, stack + sizeof(stack), flags, &p[0], &tfd) > 0);
  CHECK(tfd >= 0);
  CHECK_EQ(poll_one(tfd, 0), 0);
  CHECK_OK(close(p[1]));
  CHECK_EQ(poll_one(tfd, 10000), POLLIN | POLLHUP);
  CHECK_OK(close(tfd));
  CHECK_OK(close(p[0]));
}

static void on_usr1_plain(int sig) { (void)sig; }

TEST(clone3_clear_sighand) {
  CHECK(signal(SIGUSR1, on_usr1_plain) != SIG_ERR);
  CHECK(signal(SIGUSR2, SIG_IGN) != SIG_ERR);
  struct clone_args args;
  memset(&args, 0, sizeof(args));
  args.flags = 1ULL << 32;  // CLONE_CLEAR_SIGHAND
  args.exit_signal = SIGCHLD;
  long r = syscall(SYS_clone3, &args, sizeof(args));
  CHECK(r >= 0);
  if (r == 0) {
    // Handlers are back to the default; ignored signals stay ignored.
    struct sigaction a, b;
    if (sigaction(SIGUSR1, NULL, &a) != 0 || sigaction(SIGUSR2, NULL, &b) != 0) _exit(2);
    _exit(a.sa_handler == SIG_DFL && b.sa_handler == SIG_IGN ? 0 : 1);
  }
  CHECK_EXIT(r, 0);
  args.flags |= CLONE_SIGHAND | CLONE_VM;  // both: refused
  CHECK_ERRNO(syscall(SYS_clone3, &args, sizeof(args)), EINVAL);
  signal(SIGUSR1, SIG_DFL);
  signal(SIGUSR2, SIG_DFL);
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  signal(SIGPIPE, SIG_IGN);
  RUN(open_and_flags);
  RUN(open_thread_is_enoent);
  RUN(proc_fd_and_fdinfo);
  RUN(poll_on_exit);
  RUN(poll_waits_for_whole_group);
  RUN(send_signal);
  RUN(send_signal_zombie);
  RUN(send_signal_siginfo);
  RUN(getfd);
  RUN(getfd_needs_ptrace_access);
  RUN(waitid_pidfd);
  RUN(clone_pidfd);
  RUN(clone3_pidfd);
  RUN(clone3_clear_sighand);
  RUN(thread_pidfd);
  PASS("pidfd");
}
