// Seccomp as a guest uses it (libseccomp, Docker's default profile, browser sandboxes):
// strict mode, filters with each action (ERRNO, TRAP with its SIGSYS, KILL_PROCESS,
// KILL_THREAD, LOG, ALLOW), their precedence, argument and instruction-pointer checks, the
// program checks (EINVAL for bad programs, EACCES without no_new_privs), inheritance over fork
// and execve, TSYNC, PR_GET_SECCOMP and /proc/self/status. Every case runs in a child: filters
// cannot be removed.
#include "common.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>

#define NR_OFF offsetof(struct seccomp_data, nr)
#define ARCH_OFF offsetof(struct seccomp_data, arch)
#define ARG0_OFF offsetof(struct seccomp_data, args[0])

static long install(struct sock_filter *insns, int n, unsigned flags) {
  struct sock_fprog prog = {(unsigned short)n, insns};
  return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
}

// A filter that answers `action` to syscall `nr` and allows everything else.
static long install_for(int nr, unsigned action) {
  struct sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, NR_OFF),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, action),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  return install(f, 4, 0);
}

static void no_new_privs(void) { CHECK_OK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)); }

// Runs `fn` in a child and returns its wait status.
static int in_child(void (*fn)(void)) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    fn();
    _exit(0);
  }
  int status;
  CHECK_EQ(waitpid(pid, &status, 0), pid);
  return status;
}

static void strict_then_getpid(void) {
  CHECK_OK(prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0));
  const char msg[] = "";
  if (write(-1, msg, 0) != -1) syscall(SYS_exit, 3);  // write is allowed (EBADF here)
  syscall(SYS_getpid);
  syscall(SYS_exit, 4);
}

static void strict_then_exit(void) {
  CHECK_OK(syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 0, NULL));
  syscall(SYS_exit, 7);
}

TEST(strict_mode) {
  int st = in_child(strict_then_getpid);
  CHECK(WIFSIGNALED(st));
  CHECK_EQ(WTERMSIG(st), SIGKILL);
  st = in_child(strict_then_exit);
  CHECK(WIFEXITED(st));
  CHECK_EQ(WEXITSTATUS(st), 7);
  CHECK_ERRNO(syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 1, NULL), EINVAL);
}

static void errno_child(void) {
  no_new_privs();
  CHECK_OK(install_for(SYS_getuid, SECCOMP_RET_ERRNO | 13));
  CHECK_ERRNO(syscall(SYS_getuid), 13);
  CHECK(getpid() > 0);
  CHECK_OK(install_for(SYS_getgid, SECCOMP_RET_ERRNO | 5000));
  CHECK_ERRNO(syscall(SYS_getgid), 4095);
  CHECK_OK(install_for(SYS_geteuid, SECCOMP_RET_ERRNO | 0));
  CHECK_EQ(syscall(SYS_geteuid), 0);
  CHECK_EQ(prctl(PR_GET_SECCOMP, 0, 0, 0, 0), 2);
  char buf[4096];
  conf_get_file("/proc/self/status", buf, sizeof(buf));
  CHECK(strstr(buf, "\nSeccomp:\t2\n") != NULL);
  CHECK(strstr(buf, "\nSeccomp_filters:\t3\n") != NULL);
  CHECK(strstr(buf, "\nNoNewPrivs:\t1\n") != NULL);
}

TEST(errno_action) { CHECK_EQ(in_child(errno_child), 0); }

static volatile int trap_signo, trap_code, trap_syscall, trap_errno;
static volatile unsigned trap_arch;
static void on_sigsys(int sig, siginfo_t *si, void *uc) {
  (void)uc;
  trap_signo = sig;
  trap_code = si->si_code;
  trap_syscall = si->si_syscall;
  trap_arch = si->si_arch;
  trap_errno = si->si_errno;
}

static void trap_child(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = on_sigsys;
  sa.sa_flags = SA_SIGINFO;
  CHECK_OK(sigaction(SIGSYS, &sa, NULL));
  no_new_privs();
  CHECK_OK(install_for(SYS_getuid, SECCOMP_RET_TRAP | 42));
  // The handler sees the call as made; the syscall, not run, returns its own number.
  CHECK_EQ(syscall(SYS_getuid), SYS_getuid);
  CHECK_EQ(trap_signo, SIGSYS);
  CHECK_EQ(trap_code, 1);  // SYS_SECCOMP
  CHECK_EQ(trap_syscall, SYS_getuid);
  CHECK_EQ(trap_arch, AUDIT_ARCH_X86_64);
  CHECK_EQ(trap_errno, 42);
}

TEST(trap_action) { CHECK_EQ(in_child(trap_child), 0); }

static void kill_process_child(void) {
  signal(SIGSYS, SIG_IGN);  // a kill is not caught, blocked or ignored
  no_new_privs();
  CHECK_OK(install_for(SYS_getuid, SECCOMP_RET_KILL_PROCESS));
  syscall(SYS_getuid);
  _exit(9);
}

static void kill_thread_single_child(void) {
  no_new_privs();
  CHECK_OK(install_for(SYS_getuid, SECCOMP_RET_KILL_THREAD));
  syscall(SYS_getuid);
  _exit(9);
}

static void *getuid_thread(void *arg) {
  (void)arg;
  syscall(SYS_getuid);
  return (void *)1;  // never reached
}

static void kill_thread_child(void) {
  no_new_privs();
  CHECK_OK(install_for(SYS_getuid, SECCOMP_RET_KILL_THREAD));
  pthread_t th;
  CHECK_EQ(pthread_create(&th, NULL, getuid_thread, NULL), 0);
  // The thread dies alone; its exit clears its tid as any thread's does.
  void *ret = NULL;
  CHECK_EQ(pthread_join(th, &ret), 0);
  CHECK(ret != (void *)1);
}

TEST(kill_actions) {
  int st = in_child(kill_process_child);
  CHECK(WIFSIGNALED(st));
  CHECK_EQ(WTERMSIG(st), SIGSYS);
  st = in_child(kill_thread_single_child);
  CHECK(WIFSIGNALED(st));
  CHECK_EQ(WTERMSIG(st), SIGSYS);
  CHECK_EQ(in_child(kill_thread_child), 0);
}

static void precedence_child(void) {
  no_new_privs();
  CHECK_OK(install_for(SYS_getuid, SECCOMP_RET_ERRNO | 1));
  CHECK_OK(install_for(SYS_getuid, SECCOMP_RET_ERRNO | 2));
  CHECK_ERRNO(syscall(SYS_getuid), 2);  // same action: the newest filter's
  CHECK_OK(install_for(SYS_getuid, SECCOMP_RET_LOG));
  CHECK_OK(install_for(SYS_getuid, SECCOMP_RET_ALLOW));
  CHECK_ERRNO(syscall(SYS_getuid), 2);  // ERRNO outranks LOG and ALLOW
  CHECK_OK(install_for(SYS_getgid, SECCOMP_RET_LOG));
  CHECK(syscall(SYS_getgid) >= 0);
  // An action Linux does not know kills the process.
  CHECK_OK(install_for(SYS_getegid, 0x00010000));
  syscall(SYS_getegid);
  _exit(9);
}

TEST(precedence) {
  int st = in_child(precedence_child);
  CHECK(WIFSIGNALED(st));
  CHECK_EQ(WTERMSIG(st), SIGSYS);
}

static void args_child(void) {
  no_new_privs();
  // dup(100) fails with EMLINK; dup of anything else runs. Only on x86-64 (the arch word).
  struct sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARCH_OFF),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, NR_OFF),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_dup, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_OFF),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 100, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EMLINK),
      // The data is 64 bytes long (LEN), the scratch memory works, ALU ops too.
      BPF_STMT(BPF_LD | BPF_W | BPF_LEN, 0),
      BPF_STMT(BPF_ST, 3),
      BPF_STMT(BPF_LDX | BPF_MEM, 3),
      BPF_STMT(BPF_MISC | BPF_TXA, 0),
      BPF_STMT(BPF_ALU | BPF_RSH | BPF_K, 3),
      BPF_STMT(BPF_ALU | BPF_MUL | BPF_K, 3),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 24, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EIO),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  CHECK_OK(install(f, (int)(sizeof(f) / sizeof(f[0])), 0));
  CHECK_ERRNO(dup(100), EMLINK);
  int fd = dup(1);
  CHECK(fd >= 0);
  close(fd);
  CHECK(getpid() > 0);
}

TEST(arguments_and_programs) { CHECK_EQ(in_child(args_child), 0); }

static void bad_programs_child(void) {
  no_new_privs();
  struct sock_filter ret_allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  CHECK_ERRNO(install(&ret_allow, 0, 0), EINVAL);
  static struct sock_filter big[4097];
  for (int i = 0; i < 4097; i++) big[i] = ret_allow;
  CHECK_ERRNO(install(big, 4097, 0), EINVAL);
  CHECK_OK(install(big, 4096, 0));
  struct sock_filter half[] = {BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 0), ret_allow};
  CHECK_ERRNO(install(half, 2, 0), EINVAL);
  struct sock_filter past[] = {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 64), ret_allow};
  CHECK_ERRNO(install(past, 2, 0), EINVAL);
  struct sock_filter unaligned[] = {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 2), ret_allow};
  CHECK_ERRNO(install(unaligned, 2, 0), EINVAL);
  struct sock_filter far[] = {BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 5, 0), ret_allow};
  CHECK_ERRNO(install(far, 2, 0), EINVAL);
  struct sock_filter ja[] = {BPF_STMT(BPF_JMP | BPF_JA, 1), ret_allow};
  CHECK_ERRNO(install(ja, 2, 0), EINVAL);
  struct sock_filter no_ret[] = {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0)};
  CHECK_ERRNO(install(no_ret, 1, 0), EINVAL);
  struct sock_filter unset_mem[] = {BPF_STMT(BPF_LD | BPF_MEM, 2), ret_allow};
  CHECK_ERRNO(install(unset_mem, 2, 0), EINVAL);
  struct sock_filter div0[] = {BPF_STMT(BPF_ALU | BPF_DIV | BPF_K, 0), ret_allow};
  CHECK_ERRNO(install(div0, 2, 0), EINVAL);
  struct sock_filter shift[] = {BPF_STMT(BPF_ALU | BPF_LSH | BPF_K, 32), ret_allow};
  CHECK_ERRNO(install(shift, 2, 0), EINVAL);
  struct sock_filter mod[] = {BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, 3), ret_allow};
  CHECK_ERRNO(install(mod, 2, 0), EINVAL);
  CHECK_ERRNO(syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, (void *)8), EFAULT);
  CHECK_ERRNO(syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0x1000, (void *)8), EINVAL);
  CHECK_ERRNO(syscall(SYS_seccomp, 99, 0, NULL), EINVAL);
  unsigned action = SECCOMP_RET_ALLOW;
  CHECK_OK(syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action));
  action = SECCOMP_RET_KILL_PROCESS;
  CHECK_OK(syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action));
  action = 0x12340000;
  CHECK_ERRNO(syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action), EOPNOTSUPP);
  // A filter mode cannot become strict.
  CHECK_ERRNO(syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 0, NULL), EINVAL);
}

TEST(bad_programs) { CHECK_EQ(in_child(bad_programs_child), 0); }

static void unprivileged_child(void) {
  CHECK_OK(setgid(65534));
  CHECK_OK(setuid(65534));
  CHECK_ERRNO(install_for(SYS_getuid, SECCOMP_RET_ERRNO | 1), EACCES);
  no_new_privs();
  CHECK_OK(install_for(SYS_getuid, SECCOMP_RET_ERRNO | 1));
}

static void root_without_nnp_child(void) {
  CHECK_OK(install_for(SYS_getuid, SECCOMP_RET_ERRNO | 1));
  CHECK_ERRNO(syscall(SYS_getuid), 1);
}

TEST(privileges) {
  if (geteuid() != 0) return;
  CHECK_EQ(in_child(unprivileged_child), 0);
  CHECK_EQ(in_child(root_without_nnp_child), 0);
}

static void inherit_child(void) {
  no_new_privs();
  CHECK_OK(install_for(SYS_getuid, SECCOMP_RET_ERRNO | 3));
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    CHECK_ERRNO(syscall(SYS_getuid), 3);
    execl(conf_self, conf_self, "exec-check", (char *)NULL);
    _exit(99);
  }
  CHECK_EXIT(pid, 0);
}

TEST(inherited_over_fork_and_exec) { CHECK_EQ(in_child(inherit_child), 0); }

static volatile int thread_go, thread_errno;
static void *tsync_thread(void *arg) {
  (void)arg;
  while (!thread_go) {
  }
  thread_errno = syscall(SYS_getuid) == -1 ? errno : 0;
  return NULL;
}

static void *own_filter_thread(void *arg) {
  (void)arg;
  CHECK_OK(install_for(SYS_getgid, SECCOMP_RET_ERRNO | 2));
  while (!thread_go) {
  }
  return NULL;
}

static void tsync_child(void) {
  no_new_privs();
  pthread_t th;
  CHECK_EQ(pthread_create(&th, NULL, tsync_thread, NULL), 0);
  struct sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, NR_OFF),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getuid, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 6),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  CHECK_OK(install(f, 4, SECCOMP_FILTER_FLAG_TSYNC));
  thread_go = 1;
  CHECK_EQ(pthread_join(th, NULL), 0);
  CHECK_EQ(thread_errno, 6);
  // A thread with a filter of its own cannot be synchronized: its tid comes back.
  thread_go = 0;
  CHECK_EQ(pthread_create(&th, NULL, own_filter_thread, NULL), 0);
  usleep(100 * 1000);
  long r = install(f, 4, SECCOMP_FILTER_FLAG_TSYNC);
  CHECK(r > 0);
  CHECK_ERRNO(install(f, 4, SECCOMP_FILTER_FLAG_TSYNC | SECCOMP_FILTER_FLAG_TSYNC_ESRCH), ESRCH);
  thread_go = 1;
  CHECK_EQ(pthread_join(th, NULL), 0);
}

TEST(tsync) { CHECK_EQ(in_child(tsync_child), 0); }

int main(int argc, char **argv) {
  conf_init(argc, argv);
  if (argc == 2 && strcmp(argv[1], "exec-check") == 0) {
    // After execve in a filtered process: the filter holds.
    CHECK_ERRNO(syscall(SYS_getuid), 3);
    CHECK_EQ(prctl(PR_GET_SECCOMP, 0, 0, 0, 0), 2);
    return 0;
  }
  RUN(strict_mode);
  RUN(errno_action);
  RUN(trap_action);
  RUN(kill_actions);
  RUN(precedence);
  RUN(arguments_and_programs);
  RUN(bad_programs);
  RUN(privileges);
  RUN(inherited_over_fork_and_exec);
  RUN(tsync);
  PASS("seccomp_filter");
}
