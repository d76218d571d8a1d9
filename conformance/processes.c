// Process life cycle: fork, exec, exit status, wait4/waitid, vfork, prctl
// names, PDEATHSIG and re-parenting, execve errors and shebang scripts.
// (Threads are in threads.c, process groups and sessions in
// job_control.c.)
//
// Child modes: the program re-executes itself as "PROG <mode> args..." when
// a case needs a fresh image (see child_main).

#include "common.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>  // memfd_create
#include <sys/prctl.h>

extern char **environ;

// --- child modes (run after a re-exec) ---

static int child_main(int argc, char **argv) {
  const char *mode = argv[1];
  if (strcmp(mode, "exit") == 0) {
    CHECK_EQ(argc, 3);
    _exit(atoi(argv[2]));
  }
  if (strcmp(mode, "args") == 0) {
    // execve must pass argv and envp through exactly, empty strings too.
    CHECK_EQ(argc, 5);
    CHECK(strcmp(argv[2], "a b") == 0);
    CHECK(strcmp(argv[3], "") == 0);
    CHECK(strcmp(argv[4], "c") == 0);
    CHECK(argv[5] == NULL);
    int n = 0;
    while (environ[n] != NULL) n++;
    CHECK_EQ(n, 2);
    CHECK(getenv("CONF_A") != NULL && strcmp(getenv("CONF_A"), "1") == 0);
    CHECK(getenv("CONF_B") != NULL && strcmp(getenv("CONF_B"), "two") == 0);
    _exit(0);
  }
  if (strcmp(mode, "exec-sig") == 0) {
    // Caught signals are reset to SIG_DFL by exec; ignored ones stay
    // ignored; the signal mask is inherited.
    struct sigaction sa;
    CHECK_OK(sigaction(SIGUSR1, NULL, &sa));
    CHECK(sa.sa_handler == SIG_DFL);
    CHECK_OK(sigaction(SIGUSR2, NULL, &sa));
    CHECK(sa.sa_handler == SIG_IGN);
    sigset_t mask;
    CHECK_OK(sigprocmask(SIG_BLOCK, NULL, &mask));
    CHECK(sigismember(&mask, SIGINT));
    CHECK(!sigismember(&mask, SIGUSR1));
    _exit(0);
  }
  if (strcmp(mode, "script-arg") == 0) {
    // Started as the interpreter of a "#!PROG script-arg" script:
    // argv = {PROG, "script-arg", <script path>, original argv[1..]}.
    CHECK_EQ(argc, 4);
    const char *interp = getenv("CONF_INTERP");
    CHECK(interp != NULL && strcmp(argv[0], interp) == 0);
    CHECK(strncmp(argv[2], "/dev/fd/", 8) == 0);
    CHECK(strcmp(argv[3], "extra") == 0);
    _exit(44);
  }
  fprintf(stderr, "unknown child mode %s\n", mode);
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

static void noop_handler(int sig) { (void)sig; }

// --- cases ---

TEST(fork_exit_status) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) _exit(42);
  int st = conf_wait(pid);
  CHECK(WIFEXITED(st));
  CHECK(!WIFSIGNALED(st));
  CHECK_EQ(WEXITSTATUS(st), 42);

  // Only the low 8 bits of the exit code survive.
  pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) _exit(256 + 3);
  CHECK_EXIT(pid, 3);
}

TEST(fork_killed_status) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    kill(getpid(), SIGTERM);
    _exit(99);  // Not reached: SIGTERM's default action terminates.
  }
  int st = conf_wait(pid);
  CHECK(WIFSIGNALED(st));
  CHECK(!WIFEXITED(st));
  CHECK_EQ(WTERMSIG(st), SIGTERM);
}

TEST(fork_ids) {
  pid_t parent = getpid();
  CHECK_EQ(conf_gettid(), parent);  // The main thread's tid is the pid.
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    CHECK(getpid() != parent);
    CHECK_EQ(getppid(), parent);
    CHECK_EQ(conf_gettid(), getpid());
    // The child starts in the parent's process group and session.
    CHECK_EQ(getpgrp(), getpgid(parent));
    CHECK_EQ(getsid(0), getsid(parent));
    _exit(0);
  }
  CHECK(pid != parent);
  CHECK_EXIT(pid, 0);
}

TEST(exec_200_children_no_zombies) {
  enum { kChildren = 200 };
  pid_t pids[kChildren];
  for (int i = 0; i < kChildren; i++) {
    pids[i] = fork();
    CHECK(pids[i] >= 0);
    if (pids[i] == 0) {
      char code[16];
      snprintf(code, sizeof(code), "%d", i % 250);
      execl(conf_self, conf_self, "exit", code, (char *)NULL);
      _exit(127);
    }
  }
  int seen[kChildren] = {0};
  for (int n = 0; n < kChildren; n++) {
    int st;
    pid_t r = waitpid(-1, &st, 0);
    CHECK(r > 0);
    int idx = -1;
    for (int i = 0; i < kChildren; i++) {
      if (pids[i] == r) idx = i;
    }
    CHECK(idx >= 0);
    CHECK(!seen[idx]);
    seen[idx] = 1;
    CHECK(WIFEXITED(st));
    CHECK_EQ(WEXITSTATUS(st), idx % 250);
  }
  // Every child was reaped exactly once: nothing is left to wait for.
  CHECK_ERRNO(waitpid(-1, NULL, WNOHANG), ECHILD);
  CHECK_ERRNO(waitpid(-1, NULL, 0), ECHILD);
}

TEST(execve_args_env) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    char *argv[] = {(char *)conf_self, "args", "a b", "", "c", NULL};
    char *envp[] = {"CONF_A=1", "CONF_B=two", NULL};
    execve(conf_self, argv, envp);
    _exit(127);
  }
  CHECK_EXIT(pid, 0);
}

TEST(execve_signal_state) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = noop_handler;
    CHECK_OK(sigaction(SIGUSR1, &sa, NULL));
    sa.sa_handler = SIG_IGN;
    CHECK_OK(sigaction(SIGUSR2, &sa, NULL));
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    CHECK_OK(sigprocmask(SIG_BLOCK, &mask, NULL));
    execl(conf_self, conf_self, "exec-sig", (char *)NULL);
    _exit(127);
  }
  CHECK_EXIT(pid, 0);
}

static volatile int vfork_flag;

TEST(vfork_child_runs_first) {
  vfork_flag = 0;
  pid_t pid = vfork();
  CHECK(pid >= 0);
  if (pid == 0) {
    // The parent is suspended until we _exit, so it must see this store.
    vfork_flag = 1;
    _exit(7);
  }
  CHECK_EQ(vfork_flag, 1);
  CHECK_EXIT(pid, 7);

  // The same across an exec: the parent resumes once the child has exec'd.
  char *argv[] = {(char *)conf_self, "exit", "8", NULL};
  pid = vfork();
  CHECK(pid >= 0);
  if (pid == 0) {
    vfork_flag = 2;
    execve(conf_self, argv, environ);
    _exit(127);
  }
  CHECK_EQ(vfork_flag, 2);
  CHECK_EXIT(pid, 8);
}

TEST(wait4_rusage) {
  int p[2];
  CHECK_OK(pipe(p));
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    close(p[1]);
    char c;
    CHECK_EQ(read(p[0], &c, 1), 0);
    // Burn ~30ms of CPU so the parent sees it in the child's rusage.
    while (conf_now_ns(CLOCK_PROCESS_CPUTIME_ID) < 30 * 1000000LL) {
    }
    _exit(5);
  }
  close(p[0]);
  int st = -1;
  struct rusage ru;
  // Still running (blocked on the pipe): WNOHANG reports nothing.
  CHECK_EQ(wait4(pid, &st, WNOHANG, &ru), 0);
  close(p[1]);
  memset(&ru, 0, sizeof(ru));
  CHECK_EQ(wait4(pid, &st, 0, &ru), pid);
  CHECK(WIFEXITED(st));
  CHECK_EQ(WEXITSTATUS(st), 5);
  long long cpu_us = (long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) *
                         1000000 +
                     ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
  CHECK(cpu_us >= 20000);
  CHECK(cpu_us < 2000000);
  // Waiting for something that is not (or no longer) our child.
  CHECK_ERRNO(waitpid(pid, &st, 0), ECHILD);
  CHECK_ERRNO(wait4(dead_pid(), &st, 0, NULL), ECHILD);
  if (getppid() > 1) CHECK_ERRNO(wait4(getppid(), &st, 0, NULL), ECHILD);
}

TEST(waitid_exited_and_killed) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) _exit(12);
  siginfo_t info;
  memset(&info, 0, sizeof(info));
  CHECK_OK(waitid(P_PID, pid, &info, WEXITED));
  CHECK_EQ(info.si_signo, SIGCHLD);
  CHECK_EQ(info.si_code, CLD_EXITED);
  CHECK_EQ(info.si_pid, pid);
  CHECK_EQ(info.si_status, 12);
  CHECK_EQ(info.si_uid, getuid());

  pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    for (;;) pause();
  }
  CHECK_OK(kill(pid, SIGKILL));
  memset(&info, 0, sizeof(info));
  CHECK_OK(waitid(P_PID, pid, &info, WEXITED));
  CHECK_EQ(info.si_code, CLD_KILLED);
  CHECK_EQ(info.si_pid, pid);
  CHECK_EQ(info.si_status, SIGKILL);

  // No wait-for option at all, or a bad id type, is invalid.
  CHECK_ERRNO(waitid(P_ALL, 0, &info, 0), EINVAL);
  CHECK_ERRNO(waitid((idtype_t)42, 0, &info, WEXITED), EINVAL);
}

TEST(waitid_wnohang_and_wnowait) {
  int p[2];
  CHECK_OK(pipe(p));
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    close(p[1]);
    char c;
    while (read(p[0], &c, 1) > 0) {
    }
    _exit(13);
  }
  close(p[0]);
  siginfo_t info;
  // A live child and WNOHANG: returns 0 and the kernel zeroes si_signo and
  // si_pid so the caller can tell nothing was reaped.
  memset(&info, 0xff, sizeof(info));
  CHECK_EQ(waitid(P_PID, pid, &info, WEXITED | WNOHANG), 0);
  CHECK_EQ(info.si_pid, 0);
  CHECK_EQ(info.si_signo, 0);
  close(p[1]);

  // WNOWAIT reports the zombie but leaves it waitable.
  for (int i = 0; i < 2; i++) {
    memset(&info, 0, sizeof(info));
    CHECK_OK(waitid(P_PID, pid, &info, WEXITED | WNOWAIT));
    CHECK_EQ(info.si_pid, pid);
    CHECK_EQ(info.si_code, CLD_EXITED);
    CHECK_EQ(info.si_status, 13);
  }
  memset(&info, 0, sizeof(info));
  CHECK_OK(waitid(P_ALL, 0, &info, WEXITED));
  CHECK_EQ(info.si_pid, pid);
  CHECK_EQ(info.si_status, 13);
  CHECK_ERRNO(waitid(P_PID, pid, &info, WEXITED), ECHILD);
}

static void *name_thread(void *arg) {
  (void)arg;
  CHECK_OK(prctl(PR_SET_NAME, "conf-worker"));
  char name[32] = {0};
  CHECK_OK(prctl(PR_GET_NAME, name));
  CHECK(strcmp(name, "conf-worker") == 0);
  return NULL;
}

TEST(prctl_name) {
  char saved[32] = {0};
  CHECK_OK(prctl(PR_GET_NAME, saved));
  CHECK_OK(prctl(PR_SET_NAME, "conf-main"));
  char name[32];
  memset(name, 'x', sizeof(name));
  CHECK_OK(prctl(PR_GET_NAME, name));
  CHECK(strcmp(name, "conf-main") == 0);
  // Names hold 15 characters plus the NUL; longer ones are truncated.
  CHECK_OK(prctl(PR_SET_NAME, "abcdefghijklmnopqrstuvwxyz"));
  memset(name, 'x', sizeof(name));
  CHECK_OK(prctl(PR_GET_NAME, name));
  CHECK(strcmp(name, "abcdefghijklmno") == 0);
  // The name is per thread.
  pthread_t t;
  CHECK_EQ(pthread_create(&t, NULL, name_thread, NULL), 0);
  CHECK_EQ(pthread_join(t, NULL), 0);
  CHECK_OK(prctl(PR_GET_NAME, name));
  CHECK(strcmp(name, "abcdefghijklmno") == 0);
  // A forked child inherits it.
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    char n[32] = {0};
    CHECK_OK(prctl(PR_GET_NAME, n));
    CHECK(strcmp(n, "abcdefghijklmno") == 0);
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
  CHECK_OK(prctl(PR_SET_NAME, saved));
}

TEST(pdeathsig_on_parent_death) {
  // We become a subreaper so that the orphaned grandchild is re-parented
  // to us (not to some init we cannot see) and we can reap it.
  CHECK_OK(prctl(PR_SET_CHILD_SUBREAPER, 1));
  int ready[2], res[2];
  CHECK_OK(pipe(ready));
  CHECK_OK(pipe(res));
  pid_t top = getpid();
  pid_t mid = fork();
  CHECK(mid >= 0);
  if (mid == 0) {
    pid_t me = getpid();
    pid_t g = fork();
    CHECK(g >= 0);
    if (g == 0) {
      sigset_t set;
      sigemptyset(&set);
      sigaddset(&set, SIGUSR1);
      CHECK_OK(sigprocmask(SIG_BLOCK, &set, NULL));
      CHECK_OK(prctl(PR_SET_PDEATHSIG, SIGUSR1));
      int sig = -1;
      CHECK_OK(prctl(PR_GET_PDEATHSIG, &sig));
      CHECK_EQ(sig, SIGUSR1);
      CHECK_EQ(getppid(), me);  // mid waits for "r", so it is alive.
      CHECK_EQ(write(ready[1], "r", 1), 1);
      struct timespec ts = {5, 0};
      siginfo_t info;
      CHECK_EQ(sigtimedwait(&set, &info, &ts), SIGUSR1);
      pid_t now = getppid();
      CHECK(now != me);
      CHECK_EQ(write(res[1], &now, sizeof(now)), (ssize_t)sizeof(now));
      _exit(0);
    }
    char c;
    CHECK_EQ(read(ready[0], &c, 1), 1);
    _exit(0);  // The grandchild's parent dies here.
  }
  close(ready[0]);
  close(ready[1]);
  close(res[1]);
  CHECK_EXIT(mid, 0);
  pid_t newparent = 0;
  conf_read_full(res[0], &newparent, sizeof(newparent));
  CHECK_EQ(newparent, top);
  close(res[0]);
  // The grandchild is our child now.
  int st;
  pid_t r = waitpid(-1, &st, 0);
  CHECK(r > 0 && r != mid);
  CHECK(WIFEXITED(st));
  CHECK_EQ(WEXITSTATUS(st), 0);
  CHECK_ERRNO(waitpid(-1, NULL, WNOHANG), ECHILD);
  CHECK_OK(prctl(PR_SET_CHILD_SUBREAPER, 0));

  // The death signal is not inherited by fork.
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    CHECK_OK(prctl(PR_SET_PDEATHSIG, SIGHUP));
    pid_t g = fork();
    CHECK(g >= 0);
    if (g == 0) {
      int sig = -1;
      CHECK_OK(prctl(PR_GET_PDEATHSIG, &sig));
      CHECK_EQ(sig, 0);
      _exit(0);
    }
    CHECK_EXIT(g, 0);
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
  CHECK_ERRNO(prctl(PR_SET_PDEATHSIG, 12345), EINVAL);
}

TEST(orphan_reparented) {
  CHECK_OK(prctl(PR_SET_CHILD_SUBREAPER, 1));
  int isset = 0;
  CHECK_OK(prctl(PR_GET_CHILD_SUBREAPER, &isset));
  CHECK_EQ(isset, 1);
  int res[2];
  CHECK_OK(pipe(res));
  pid_t mid = fork();
  CHECK(mid >= 0);
  if (mid == 0) {
    pid_t me = getpid();
    pid_t g = fork();
    CHECK(g >= 0);
    if (g == 0) {
      // No synchronisation with the parent: it exits whenever it likes and
      // we must eventually see a different parent.
      int64_t deadline = conf_now_ns(CLOCK_MONOTONIC) + 5000000000LL;
      while (getppid() == me) {
        CHECK(conf_now_ns(CLOCK_MONOTONIC) < deadline);
        conf_sleep_ms(1);
      }
      pid_t now = getppid();
      CHECK_EQ(write(res[1], &now, sizeof(now)), (ssize_t)sizeof(now));
      _exit(17);
    }
    _exit(0);
  }
  close(res[1]);
  CHECK_EXIT(mid, 0);
  pid_t now = 0;
  conf_read_full(res[0], &now, sizeof(now));
  close(res[0]);
  CHECK_EQ(now, getpid());
  int st;
  pid_t r = waitpid(-1, &st, 0);
  CHECK(r > 0 && r != mid);
  CHECK(WIFEXITED(st));
  CHECK_EQ(WEXITSTATUS(st), 17);
  CHECK_OK(prctl(PR_SET_CHILD_SUBREAPER, 0));
}

TEST(exec_host_binaries) {
  // Dynamically linked host programs: the kernel loads the ELF interpreter
  // (ld.so) named in the binary, which loads libc from the host.
  struct {
    const char *path;
    char *argv[4];
    int status;
  } runs[] = {
      {"/bin/true", {"true", NULL}, 0},
      {"/bin/false", {"false", NULL}, 1},
      {"/bin/sh", {"sh", "-c", "exit 7", NULL}, 7},
  };
  for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
      execv(runs[i].path, runs[i].argv);
      _exit(127);
    }
    CHECK_EXIT(pid, runs[i].status);
  }
}

TEST(execve_errors) {
  char *argv[] = {"x", NULL};
  CHECK_ERRNO(execve("/nonexistent/conf-missing", argv, environ), ENOENT);
  CHECK_ERRNO(execve("", argv, environ), ENOENT);
  // A regular file without any execute bit, even for root.
  CHECK_ERRNO(execve("/etc/passwd", argv, environ), EACCES);
  // Not regular files.
  CHECK_ERRNO(execve("/", argv, environ), EACCES);
  CHECK_ERRNO(execve("/dev/null", argv, environ), EACCES);
  CHECK_ERRNO(execve("/etc/passwd/x", argv, environ), ENOTDIR);
  const char *volatile bad_path = (const char *)8;  // Unmapped.
  CHECK_ERRNO(execve(bad_path, argv, environ), EFAULT);
}

TEST(shebang_script) {
  // The script lives in a memfd (no file is written anywhere); its
  // interpreter is this very program, which checks the argv layout the
  // kernel builds: {interpreter, optional arg, script path, argv[1..]}.
  char script[300];
  int n = snprintf(script, sizeof(script), "#!%s script-arg\n", conf_self);
  CHECK(n > 0 && n < 200);  // Well under the kernel's 256-byte limit.
  int fd = memfd_create("conf-script", 0);
  CHECK(fd >= 0);
  conf_write_full(fd, script, (size_t)n);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    char *argv[] = {"ignored-argv0", "extra", NULL};
    char env[256];
    snprintf(env, sizeof(env), "CONF_INTERP=%s", conf_self);
    char *envp[] = {env, NULL};
    syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
    _exit(127);
  }
  CHECK_EXIT(pid, 44);
  close(fd);
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  if (argc > 1) return child_main(argc, argv);
  RUN(fork_exit_status);
  RUN(fork_killed_status);
  RUN(fork_ids);
  RUN(exec_200_children_no_zombies);
  RUN(execve_args_env);
  RUN(execve_signal_state);
  RUN(vfork_child_runs_first);
  RUN(wait4_rusage);
  RUN(waitid_exited_and_killed);
  RUN(waitid_wnohang_and_wnowait);
  RUN(prctl_name);
  RUN(pdeathsig_on_parent_death);
  RUN(orphan_reparented);
  RUN(exec_host_binaries);
  RUN(execve_errors);
  RUN(shebang_script);
  PASS("processes");
  return 0;
}
