// RLIMIT_CPU: SIGXCPU at the soft limit of the process's CPU time (the soft
// limit then moves up a second), SIGKILL at the hard limit. Spends about two
// seconds of CPU time.
#include "common.h"

#include <signal.h>

static volatile sig_atomic_t xcpu_seen;
static volatile sig_atomic_t xcpu_code;
static volatile long soft_in_handler;

static void on_xcpu(int sig, siginfo_t *si, void *uc) {
  (void)sig;
  (void)uc;
  struct rlimit rl;
  getrlimit(RLIMIT_CPU, &rl);
  soft_in_handler = (long)rl.rlim_cur;
  xcpu_code = si->si_code;
  xcpu_seen++;
}

static int64_t cpu_ns(void) { return conf_now_ns(CLOCK_PROCESS_CPUTIME_ID); }

TEST(soft_then_hard) {
  int rep[2];
  CHECK_OK(pipe(rep));
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    close(rep[0]);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_xcpu;
    sa.sa_flags = SA_SIGINFO;
    if (sigaction(SIGXCPU, &sa, NULL) != 0) _exit(2);
    struct rlimit rl = {1, 2};
    if (setrlimit(RLIMIT_CPU, &rl) != 0) _exit(3);
    int reported = 0;
    for (;;) {
      if (xcpu_seen && !reported) {
        // SIGXCPU came at the soft limit (about 1 s of CPU time), from the kernel,
        // and the soft limit is now 2.
        long out[3] = {xcpu_code, soft_in_handler, cpu_ns()};
        if (write(rep[1], out, sizeof(out)) != sizeof(out)) _exit(4);
        reported = 1;
      }
      if (cpu_ns() > 10000000000LL) _exit(5);  // never killed
    }
  }
  CHECK_OK(close(rep[1]));
  long got[3];
  conf_read_full(rep[0], got, sizeof(got));
  CHECK_EQ(got[0], SI_KERNEL);
  CHECK_EQ(got[1], 2);
  // Near 1 s; Linux itself has been seen to send it at 0.8 s on a loaded machine (it samples
  // CPU time at ticks), so the bound only rules out a signal long before the limit.
  CHECK(got[2] >= 500000000L);
  CHECK_KILLED(pid, SIGKILL);
  CHECK_OK(close(rep[0]));
}

TEST(default_action_kills) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    struct rlimit rl = {0, RLIM_INFINITY};
    // A soft limit already passed fires at once; SIGXCPU's default action dumps core.
    rl.rlim_cur = 0;
    if (setrlimit(RLIMIT_CPU, &rl) != 0) _exit(3);
    for (;;) {
      if (cpu_ns() > 10000000000LL) _exit(5);
    }
  }
  CHECK_KILLED(pid, SIGXCPU);
}

TEST(inherited_over_fork) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    struct rlimit rl = {1, 1};
    if (setrlimit(RLIMIT_CPU, &rl) != 0) _exit(3);
    // The child's own CPU time counts, from zero: it is killed at the (hard) limit.
    pid_t c = fork();
    if (c == 0) {
      for (;;) {
        if (cpu_ns() > 10000000000LL) _exit(5);
      }
    }
    int st;
    if (waitpid(c, &st, 0) != c) _exit(6);
    _exit(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL ? 0 : 7);
  }
  CHECK_EXIT(pid, 0);
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  RUN(soft_then_hard);
  RUN(default_action_kills);
  RUN(inherited_over_fork);
  PASS("rlimit_cpu");
}
