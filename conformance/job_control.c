// Process groups, sessions and job control: setpgid/getpgid/setsid/getsid
// with their EPERM/EACCES rules, waitid by group, SIGCHLD, default signal
// actions, stop/continue as seen by wait, and kill() to groups and errors.
//
// Child mode "block FD" waits for EOF on FD (used to have an exec'd child).

#include "common.h"

#include <signal.h>

static int child_main(int argc, char **argv) {
  if (strcmp(argv[1], "block") == 0 && argc == 3) {
    char c;
    while (read(atoi(argv[2]), &c, 1) > 0) {
    }
    _exit(0);
  }
  fprintf(stderr, "unknown child mode %s\n", argv[1]);
  _exit(2);
}

// Returns a pid that certainly does not exist right now (a reaped child's;
// pids are not reused that quickly).
static pid_t dead_pid(void) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) _exit(0);
  CHECK_EXIT(pid, 0);
  return pid;
}

static void set_disposition(int sig, void (*handler)(int)) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = handler;
  CHECK_OK(sigaction(sig, &sa, NULL));
}

static void unblock_all(void) {
  sigset_t none;
  sigemptyset(&none);
  CHECK_OK(sigprocmask(SIG_SETMASK, &none, NULL));
}

static volatile sig_atomic_t got_count;
static volatile int got_signo, got_code, got_pid, got_status;

static void chld_handler(int sig, siginfo_t *si, void *uc) {
  (void)uc;
  got_signo = sig;
  got_code = si->si_code;
  got_pid = si->si_pid;
  got_status = si->si_status;
  got_count++;
}

// --- process groups and sessions ---

// Forks a child that exits with `code` once the pipe read end hits EOF.
// If pgid >= 0 the child is moved into process group pgid (0: a new group
// led by the child) from both sides, so neither order of execution races.
static pid_t fork_waiter(int rd, int wr, pid_t pgid, int code) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    close(wr);
    if (pgid >= 0) CHECK_OK(setpgid(0, pgid));
    char c;
    while (read(rd, &c, 1) > 0) {
    }
    _exit(code);
  }
  if (pgid >= 0) CHECK_OK(setpgid(pid, pgid == 0 ? pid : pgid));
  return pid;
}

TEST(waitid_pgid_and_all) {
  int p[2];
  CHECK_OK(pipe(p));
  pid_t a = fork_waiter(p[0], p[1], 0, 21);
  pid_t b = fork_waiter(p[0], p[1], a, 22);
  pid_t c = fork_waiter(p[0], p[1], -1, 23);
  CHECK_EQ(getpgid(a), a);
  CHECK_EQ(getpgid(b), a);
  CHECK_EQ(getpgid(c), getpgrp());
  close(p[0]);
  close(p[1]);

  int got_a = 0, got_b = 0;
  for (int i = 0; i < 2; i++) {
    siginfo_t info;
    memset(&info, 0, sizeof(info));
    CHECK_OK(waitid(P_PGID, a, &info, WEXITED));
    if (info.si_pid == a) {
      CHECK_EQ(info.si_status, 21);
      got_a++;
    } else {
      CHECK_EQ(info.si_pid, b);
      CHECK_EQ(info.si_status, 22);
      got_b++;
    }
  }
  CHECK_EQ(got_a, 1);
  CHECK_EQ(got_b, 1);
  // c is still a child but not in that group.
  siginfo_t info;
  CHECK_ERRNO(waitid(P_PGID, a, &info, WEXITED | WNOHANG), ECHILD);
  memset(&info, 0, sizeof(info));
  CHECK_OK(waitid(P_ALL, 0, &info, WEXITED));
  CHECK_EQ(info.si_pid, c);
  CHECK_EQ(info.si_status, 23);
}

TEST(setpgid_getpgid) {
  CHECK_EQ(getpgid(0), getpgrp());
  CHECK_EQ(getpgid(getpid()), getpgrp());
  pid_t gone = dead_pid();
  CHECK_ERRNO(getpgid(gone), ESRCH);
  CHECK_ERRNO(setpgid(gone, 0), ESRCH);
  CHECK_ERRNO(setpgid(0, -1), EINVAL);

  int p[2];
  CHECK_OK(pipe(p));
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    close(p[1]);
    CHECK_OK(setpgid(0, 0));
    CHECK_EQ(getpgid(0), getpid());
    CHECK_EQ(getpgrp(), getpid());
    // Joining a group that does not exist in our session is refused.
    CHECK_ERRNO(setpgid(0, gone), EPERM);
    // Moving back into the parent's group is allowed (same session).
    CHECK_OK(setpgid(0, getpgid(getppid())));
    CHECK_EQ(getpgrp(), getpgid(getppid()));
    char c;
    CHECK_EQ(read(p[0], &c, 1), 0);
    _exit(0);
  }
  close(p[0]);
  close(p[1]);
  CHECK_EXIT(pid, 0);

  // Once a child has exec'd, its parent may no longer change its group.
  CHECK_OK(pipe(p));
  pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    close(p[1]);
    char fd[16];
    snprintf(fd, sizeof(fd), "%d", p[0]);
    execl(conf_self, conf_self, "block", fd, (char *)NULL);
    _exit(127);
  }
  close(p[0]);
  // We cannot tell directly when the exec has happened, so poll: moving the
  // child into the group it is already in succeeds (a no-op) until the
  // exec, and fails with EACCES from then on.
  int64_t deadline = conf_now_ns(CLOCK_MONOTONIC) + 5000000000LL;
  for (;;) {
    errno = 0;
    int r = setpgid(pid, getpgrp());
    if (r == -1) {
      CHECK_EQ(errno, EACCES);
      break;
    }
    CHECK(conf_now_ns(CLOCK_MONOTONIC) < deadline);
    conf_sleep_ms(1);
  }
  close(p[1]);
  CHECK_EXIT(pid, 0);
}

TEST(setsid_getsid) {
  pid_t gone = dead_pid();
  CHECK_ERRNO(getsid(gone), ESRCH);
  // 0 when our session leader lives outside this PID namespace (CI runners).
  CHECK(getsid(0) >= 0);

  int ready[2], done[2];
  CHECK_OK(pipe(ready));
  CHECK_OK(pipe(done));
  pid_t parent_pgrp = getpgrp();
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    close(ready[0]);
    close(done[1]);
    CHECK_EQ(setsid(), getpid());
    CHECK_EQ(getsid(0), getpid());
    CHECK_EQ(getpgrp(), getpid());
    // Already a session (and group) leader.
    CHECK_ERRNO(setsid(), EPERM);
    // The parent's group belongs to another session now.
    CHECK_ERRNO(setpgid(0, parent_pgrp), EPERM);
    CHECK_EQ(write(ready[1], "r", 1), 1);
    char c;
    CHECK_EQ(read(done[0], &c, 1), 0);
    _exit(0);
  }
  close(ready[1]);
  close(done[0]);
  char c;
  CHECK_EQ(read(ready[0], &c, 1), 1);
  CHECK_EQ(getsid(pid), pid);
  CHECK_EQ(getpgid(pid), pid);
  // A session leader's group cannot be changed, by anyone.
  CHECK_ERRNO(setpgid(pid, pid), EPERM);
  close(done[1]);
  close(ready[0]);
  CHECK_EXIT(pid, 0);

  // A process group leader cannot create a session.
  pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    CHECK_OK(setpgid(0, 0));
    CHECK_ERRNO(setsid(), EPERM);
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
}

// --- signals and children ---

TEST(sigchld_on_child_exit) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = chld_handler;
  sa.sa_flags = SA_SIGINFO;
  CHECK_OK(sigaction(SIGCHLD, &sa, NULL));
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  CHECK_OK(sigprocmask(SIG_BLOCK, &chld, NULL));
  got_count = 0;
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) _exit(3);
  sigset_t none;
  sigemptyset(&none);
  while (got_count == 0) sigsuspend(&none);
  CHECK_EQ(got_signo, SIGCHLD);
  CHECK_EQ(got_code, CLD_EXITED);
  CHECK_EQ(got_pid, pid);
  CHECK_EQ(got_status, 3);
  CHECK_EXIT(pid, 3);
  unblock_all();

  // SIGCHLD set to SIG_IGN: children are reaped automatically, so a wait
  // blocks until they are gone and then fails.
  set_disposition(SIGCHLD, SIG_IGN);
  pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) _exit(0);
  CHECK_ERRNO(waitpid(pid, NULL, 0), ECHILD);
  set_disposition(SIGCHLD, SIG_DFL);
}

// Forks a child that resets `sig` to its default action and sends it to
// itself; returns the child's pid.
static pid_t fork_self_signal(int sig) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    if (sig != SIGKILL) set_disposition(sig, SIG_DFL);
    unblock_all();
    kill(getpid(), sig);
    _exit(0);
  }
  return pid;
}

TEST(default_actions) {
  CHECK_KILLED(fork_self_signal(SIGTERM), SIGTERM);
  CHECK_KILLED(fork_self_signal(SIGUSR1), SIGUSR1);
  CHECK_KILLED(fork_self_signal(SIGKILL), SIGKILL);
  CHECK_KILLED(fork_self_signal(SIGABRT), SIGABRT);  // Core flag irrelevant.
  // Ignored by default.
  CHECK_EXIT(fork_self_signal(SIGCHLD), 0);
  CHECK_EXIT(fork_self_signal(SIGURG), 0);
  CHECK_EXIT(fork_self_signal(SIGWINCH), 0);

  // A real fault with no handler.
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    set_disposition(SIGSEGV, SIG_DFL);
    volatile int *volatile bad = (volatile int *)16;  // Unmapped.
    *bad = 1;
    _exit(0);
  }
  CHECK_KILLED(pid, SIGSEGV);
}

TEST(stop_and_continue) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    for (;;) pause();
  }
  int st;
  CHECK_OK(kill(pid, SIGSTOP));
  CHECK_EQ(waitpid(pid, &st, WUNTRACED), pid);
  CHECK(WIFSTOPPED(st));
  CHECK_EQ(WSTOPSIG(st), SIGSTOP);
  // Nothing more to report while it stays stopped.
  CHECK_EQ(waitpid(pid, &st, WNOHANG | WUNTRACED | WCONTINUED), 0);
  CHECK_OK(kill(pid, SIGCONT));
  CHECK_EQ(waitpid(pid, &st, WCONTINUED), pid);
  CHECK(WIFCONTINUED(st));

  // The same through waitid.
  CHECK_OK(kill(pid, SIGSTOP));
  siginfo_t info;
  memset(&info, 0, sizeof(info));
  CHECK_OK(waitid(P_PID, pid, &info, WSTOPPED));
  CHECK_EQ(info.si_code, CLD_STOPPED);
  CHECK_EQ(info.si_status, SIGSTOP);
  CHECK_EQ(info.si_pid, pid);
  CHECK_OK(kill(pid, SIGCONT));
  memset(&info, 0, sizeof(info));
  CHECK_OK(waitid(P_PID, pid, &info, WCONTINUED));
  CHECK_EQ(info.si_code, CLD_CONTINUED);
  CHECK_EQ(info.si_status, SIGCONT);

  // SIGKILL works on a stopped process.
  CHECK_OK(kill(pid, SIGSTOP));
  CHECK_EQ(waitpid(pid, &st, WUNTRACED), pid);
  CHECK(WIFSTOPPED(st));
  CHECK_OK(kill(pid, SIGKILL));
  CHECK_KILLED(pid, SIGKILL);
}

TEST(kill_process_group) {
  // kill(0, sig) reaches every member of the caller's group, itself too.
  pid_t leader = fork();
  CHECK(leader >= 0);
  if (leader == 0) {
    CHECK_OK(setpgid(0, 0));
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    CHECK_OK(sigprocmask(SIG_BLOCK, &usr1, NULL));
    int ready[2];
    CHECK_OK(pipe(ready));
    pid_t me = getpid();
    pid_t kids[2];
    for (int i = 0; i < 2; i++) {
      kids[i] = fork();
      CHECK(kids[i] >= 0);
      if (kids[i] == 0) {
        CHECK_EQ(write(ready[1], "r", 1), 1);
        siginfo_t info;
        struct timespec five = {5, 0};
        CHECK_EQ(sigtimedwait(&usr1, &info, &five), SIGUSR1);
        CHECK_EQ(info.si_pid, me);
        CHECK_EQ(info.si_code, SI_USER);
        _exit(10 + i);
      }
    }
    char c;
    for (int i = 0; i < 2; i++) CHECK_EQ(read(ready[0], &c, 1), 1);
    CHECK_OK(kill(0, SIGUSR1));
    siginfo_t info;
    struct timespec five = {5, 0};
    CHECK_EQ(sigtimedwait(&usr1, &info, &five), SIGUSR1);
    for (int i = 0; i < 2; i++) CHECK_EXIT(kids[i], 10 + i);
    _exit(0);
  }
  CHECK_EXIT(leader, 0);

  // kill(-pgid, sig) from outside the group.
  pid_t a = fork();
  CHECK(a >= 0);
  if (a == 0) {
    setpgid(0, 0);
    for (;;) pause();
  }
  CHECK_OK(setpgid(a, a));
  pid_t b = fork();
  CHECK(b >= 0);
  if (b == 0) {
    setpgid(0, a);
    for (;;) pause();
  }
  CHECK_OK(setpgid(b, a));
  CHECK_OK(kill(-a, SIGTERM));
  CHECK_KILLED(a, SIGTERM);
  CHECK_KILLED(b, SIGTERM);
  CHECK_ERRNO(kill(-a, SIGTERM), ESRCH);  // The group is gone.
}

TEST(kill_errors) {
  pid_t gone = fork();
  CHECK(gone >= 0);
  if (gone == 0) _exit(0);
  CHECK_EXIT(gone, 0);
  CHECK_ERRNO(kill(gone, SIGTERM), ESRCH);
  CHECK_ERRNO(kill(gone, 0), ESRCH);
  CHECK_OK(kill(getpid(), 0));  // Signal 0: existence check only.
  CHECK_ERRNO(kill(getpid(), 65), EINVAL);
  CHECK_ERRNO(kill(getpid(), -1), EINVAL);
  CHECK_ERRNO(syscall(SYS_tgkill, getpid(), gone, SIGUSR1), ESRCH);
  CHECK_ERRNO(syscall(SYS_tgkill, 0, conf_gettid(), SIGUSR1), EINVAL);
  CHECK_OK(syscall(SYS_tgkill, getpid(), conf_gettid(), 0));
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = SIG_DFL;
  CHECK_ERRNO(sigaction(0, &sa, NULL), EINVAL);
  CHECK_ERRNO(sigaction(65, &sa, NULL), EINVAL);
  union sigval v = {.sival_int = 0};
  CHECK_ERRNO(sigqueue(gone, SIGUSR1, v), ESRCH);
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  if (argc > 1) return child_main(argc, argv);
  RUN(setpgid_getpgid);
  RUN(setsid_getsid);
  RUN(waitid_pgid_and_all);
  RUN(sigchld_on_child_exit);
  RUN(default_actions);
  RUN(stop_and_continue);
  RUN(kill_process_group);
  RUN(kill_errors);
  PASS("job_control");
  return 0;
}
