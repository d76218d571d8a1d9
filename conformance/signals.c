// Signal delivery: sigaction flags and siginfo, SA_RESTART, masking while
// a handler runs, nesting, pending sets and delivery order, coalescing vs.
// queueing, sigsuspend/pause/sigtimedwait, ignored signals, fork, and which
// thread takes a process-directed signal.
//
// Faults and signal frames are in signal_faults.c; default actions, job
// control and kill() rules in job_control.c. Signals sent "later" come from
// a helper thread (no timers here).

#include "common.h"

#include <pthread.h>
#include <signal.h>

// --- helpers ---

static void set_handler(int sig, void (*fn)(int, siginfo_t *, void *),
                        int flags, const sigset_t *mask) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = fn;
  sa.sa_flags = SA_SIGINFO | flags;
  if (mask != NULL) {
    sa.sa_mask = *mask;
  } else {
    sigemptyset(&sa.sa_mask);
  }
  CHECK_OK(sigaction(sig, &sa, NULL));
}

static void set_disposition(int sig, void (*handler)(int)) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = handler;
  CHECK_OK(sigaction(sig, &sa, NULL));
}

static sigset_t sigset_of(int a, int b) {
  sigset_t s;
  sigemptyset(&s);
  if (a > 0) sigaddset(&s, a);
  if (b > 0) sigaddset(&s, b);
  return s;
}

static void unblock_all(void) {
  sigset_t none;
  sigemptyset(&none);
  CHECK_OK(sigprocmask(SIG_SETMASK, &none, NULL));
}

static sigset_t current_mask(void) {
  sigset_t m;
  CHECK_OK(sigprocmask(SIG_BLOCK, NULL, &m));
  return m;
}

static sigset_t pending_set(void) {
  sigset_t p;
  CHECK_OK(sigpending(&p));
  return p;
}

static int tgkill_self(pid_t tid, int sig) {
  return (int)syscall(SYS_tgkill, getpid(), tid, sig);
}

// What the generic SA_SIGINFO handler saw.
static volatile sig_atomic_t got_count;
static volatile int got_signo, got_code, got_pid, got_uid, got_value;
static volatile pid_t got_tid;

static void info_handler(int sig, siginfo_t *si, void *uc) {
  (void)uc;
  got_signo = sig;
  got_code = si->si_code;
  got_pid = si->si_pid;
  got_uid = (int)si->si_uid;
  got_value = si->si_value.sival_int;
  got_tid = (pid_t)syscall(SYS_gettid);
  got_count++;
}

static void reset_got(void) {
  got_count = 0;
  got_signo = got_code = got_pid = got_uid = got_value = -1;
  got_tid = -1;
}

// A thread that sends `sig` to thread `target` every `period_ms`, at most
// `times` times or until *stop is set, then writes one byte to `fd` (if
// fd >= 0).
struct sender {
  pid_t target;
  int sig;
  int period_ms;
  int times;
  volatile int stop;
  int fd;
  pthread_t thread;
};

static void *sender_main(void *arg) {
  struct sender *s = (struct sender *)arg;
  for (int i = 0; i < s->times && !s->stop; i++) {
    conf_sleep_ms(s->period_ms);
    if (s->stop) break;
    CHECK_OK(tgkill_self(s->target, s->sig));
  }
  if (s->fd >= 0) CHECK_EQ(write(s->fd, "x", 1), 1);
  return NULL;
}

static void start_sender(struct sender *s, int sig, int period_ms, int times,
                         int fd) {
  s->target = conf_gettid();
  s->sig = sig;
  s->period_ms = period_ms;
  s->times = times;
  s->stop = 0;
  s->fd = fd;
  CHECK_EQ(pthread_create(&s->thread, NULL, sender_main, s), 0);
}

static void stop_sender(struct sender *s) {
  s->stop = 1;
  CHECK_EQ(pthread_join(s->thread, NULL), 0);
}

// --- siginfo from the different senders ---

TEST(siginfo_kill_tkill_queue) {
  set_handler(SIGUSR1, info_handler, 0, NULL);
  // A signal sent to ourselves, unblocked, is delivered before kill returns.
  reset_got();
  CHECK_OK(kill(getpid(), SIGUSR1));
  CHECK_EQ(got_count, 1);
  CHECK_EQ(got_signo, SIGUSR1);
  CHECK_EQ(got_code, SI_USER);
  CHECK_EQ(got_pid, getpid());
  CHECK_EQ(got_uid, getuid());

  reset_got();
  CHECK_OK(tgkill_self(conf_gettid(), SIGUSR1));
  CHECK_EQ(got_count, 1);
  CHECK_EQ(got_code, SI_TKILL);
  CHECK_EQ(got_pid, getpid());

  reset_got();
  union sigval v = {.sival_int = 1234};
  CHECK_OK(sigqueue(getpid(), SIGUSR1, v));
  CHECK_EQ(got_count, 1);
  CHECK_EQ(got_code, SI_QUEUE);
  CHECK_EQ(got_pid, getpid());
  CHECK_EQ(got_value, 1234);
  set_disposition(SIGUSR1, SIG_DFL);
}

// --- SA_RESTART ---

TEST(sa_restart_resumes_read) {
  int p[2];
  CHECK_OK(pipe(p));
  // A real-time signal, so that none of the three is lost to coalescing if
  // we are slow to run.
  set_handler(SIGRTMIN, info_handler, SA_RESTART, NULL);
  reset_got();
  got_count = 0;
  // Three signals 20ms apart, then the data: the read is interrupted by the
  // handler and transparently restarted, and finally returns the byte.
  struct sender s;
  start_sender(&s, SIGRTMIN, 20, 3, p[1]);
  char c = 0;
  CHECK_EQ(read(p[0], &c, 1), 1);
  CHECK_EQ(c, 'x');
  stop_sender(&s);
  CHECK_EQ(got_count, 3);

  // nanosleep is never restarted, SA_RESTART or not.
  start_sender(&s, SIGRTMIN, 20, 1, -1);
  struct timespec req = {5, 0}, rem = {0, 0};
  CHECK_ERRNO(nanosleep(&req, &rem), EINTR);
  CHECK(rem.tv_sec > 0 && rem.tv_sec <= 5);
  stop_sender(&s);
  set_disposition(SIGRTMIN, SIG_DFL);
  close(p[0]);
  close(p[1]);
}

TEST(no_restart_read_eintr) {
  int p[2];
  CHECK_OK(pipe(p));
  set_handler(SIGUSR1, info_handler, 0, NULL);
  reset_got();
  got_count = 0;
  // Keep signalling until the read gives up; a signal that lands before
  // the read starts just runs the handler, a later one interrupts it.
  struct sender s;
  start_sender(&s, SIGUSR1, 20, 1000, -1);
  char c;
  CHECK_ERRNO(read(p[0], &c, 1), EINTR);
  stop_sender(&s);
  CHECK(got_count >= 1);
  set_disposition(SIGUSR1, SIG_DFL);
  close(p[0]);
  close(p[1]);
}

// --- sigaction and sigprocmask bookkeeping ---

TEST(sigaction_round_trip) {
  struct sigaction sa, old;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = info_handler;
  sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  sigaddset(&sa.sa_mask, SIGUSR2);
  sigaddset(&sa.sa_mask, SIGRTMIN + 3);
  // SIGKILL and SIGSTOP cannot be masked: the kernel drops them.
  sigaddset(&sa.sa_mask, SIGKILL);
  sigaddset(&sa.sa_mask, SIGSTOP);
  CHECK_OK(sigaction(SIGUSR1, &sa, &old));
  CHECK(old.sa_handler == SIG_DFL);
  memset(&old, 0, sizeof(old));
  CHECK_OK(sigaction(SIGUSR1, NULL, &old));
  CHECK(old.sa_sigaction == info_handler);
  int want = SA_SIGINFO | SA_RESTART | SA_ONSTACK | SA_NODEFER;
  CHECK_EQ(old.sa_flags & want, want);
  CHECK(sigismember(&old.sa_mask, SIGUSR2));
  CHECK(sigismember(&old.sa_mask, SIGRTMIN + 3));
  CHECK(!sigismember(&old.sa_mask, SIGKILL));
  CHECK(!sigismember(&old.sa_mask, SIGSTOP));
  CHECK(!sigismember(&old.sa_mask, SIGUSR1));
  // Setting returns the previous action.
  set_disposition(SIGUSR1, SIG_IGN);
  CHECK_OK(sigaction(SIGUSR1, &sa, &old));
  CHECK(old.sa_handler == SIG_IGN);
  set_disposition(SIGUSR1, SIG_DFL);
  CHECK_ERRNO(syscall(SYS_rt_sigaction, SIGUSR1, NULL, &old, 16), EINVAL);
}

TEST(sigprocmask_how) {
  sigset_t a = sigset_of(SIGUSR1, SIGUSR2), b = sigset_of(SIGUSR2, SIGHUP);
  sigset_t old, m;
  CHECK_OK(sigprocmask(SIG_SETMASK, &a, &old));
  CHECK(!sigismember(&old, SIGUSR1));
  CHECK_OK(sigprocmask(SIG_BLOCK, &b, &old));  // Union.
  CHECK(sigismember(&old, SIGUSR1) && !sigismember(&old, SIGHUP));
  m = current_mask();
  CHECK(sigismember(&m, SIGUSR1) && sigismember(&m, SIGUSR2) &&
        sigismember(&m, SIGHUP));
  sigset_t usr2 = sigset_of(SIGUSR2, 0);
  CHECK_OK(sigprocmask(SIG_UNBLOCK, &usr2, NULL));  // Difference.
  m = current_mask();
  CHECK(sigismember(&m, SIGUSR1) && !sigismember(&m, SIGUSR2) &&
        sigismember(&m, SIGHUP));
  CHECK_ERRNO(sigprocmask(12345, &a, NULL), EINVAL);
  // A null set only queries, whatever "how" says.
  CHECK_OK(sigprocmask(SIG_SETMASK, NULL, &old));
  CHECK(sigismember(&old, SIGUSR1));
  unblock_all();
}

TEST(rt_sigqueueinfo_rules) {
  // To ourselves, any negative si_code is passed through as given,
  // including a made-up sender pid.
  set_handler(SIGUSR1, info_handler, 0, NULL);
  reset_got();
  siginfo_t info;
  memset(&info, 0, sizeof(info));
  info.si_signo = SIGUSR1;
  info.si_code = -60;
  info.si_pid = 12345;
  info.si_value.sival_int = 7;
  CHECK_OK(syscall(SYS_rt_sigqueueinfo, getpid(), SIGUSR1, &info));
  CHECK_EQ(got_count, 1);
  CHECK_EQ(got_code, -60);
  CHECK_EQ(got_pid, 12345);
  CHECK_EQ(got_value, 7);
  set_disposition(SIGUSR1, SIG_DFL);

  // To another process, pretending to be kill() (si_code >= 0) or the
  // kernel is refused.
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    for (;;) pause();
  }
  info.si_code = SI_USER;
  CHECK_ERRNO(syscall(SYS_rt_sigqueueinfo, pid, SIGUSR1, &info), EPERM);
  info.si_code = SI_KERNEL;
  CHECK_ERRNO(syscall(SYS_rt_sigqueueinfo, pid, SIGUSR1, &info), EPERM);
  // Signal 0 probes, as kill(pid, 0) does: the child exists, a made-up pid does not.
  info.si_code = SI_QUEUE;
  CHECK_OK(syscall(SYS_rt_sigqueueinfo, pid, 0, &info));
  CHECK_OK(syscall(SYS_rt_tgsigqueueinfo, pid, pid, 0, &info));
  CHECK_ERRNO(syscall(SYS_rt_sigqueueinfo, 0x3ffffff0, 0, &info), ESRCH);
  CHECK_ERRNO(syscall(SYS_rt_sigqueueinfo, pid, -1, &info), EINVAL);
  CHECK_OK(kill(pid, SIGKILL));
  CHECK_KILLED(pid, SIGKILL);
}

// --- masking while a handler runs ---

static volatile int depth, max_depth, blocked_inside;

static void reentry_handler(int sig, siginfo_t *si, void *uc) {
  (void)si;
  (void)uc;
  depth++;
  if (depth > max_depth) max_depth = depth;
  sigset_t m;
  sigprocmask(SIG_BLOCK, NULL, &m);
  blocked_inside = sigismember(&m, sig);
  got_count++;
  if (got_count == 1) tgkill_self((pid_t)syscall(SYS_gettid), sig);
  depth--;
}

TEST(handler_masks_own_signal_unless_nodefer) {
  // Default: the signal is blocked in its handler, so re-raising it there
  // leaves it pending until the handler returns (no nesting).
  set_handler(SIGUSR1, reentry_handler, 0, NULL);
  got_count = 0;
  depth = max_depth = 0;
  CHECK_OK(tgkill_self(conf_gettid(), SIGUSR1));
  CHECK_EQ(got_count, 2);
  CHECK_EQ(max_depth, 1);
  CHECK_EQ(blocked_inside, 1);

  // SA_NODEFER: not blocked, the second delivery nests inside the first.
  set_handler(SIGUSR1, reentry_handler, SA_NODEFER, NULL);
  got_count = 0;
  depth = max_depth = 0;
  CHECK_OK(tgkill_self(conf_gettid(), SIGUSR1));
  CHECK_EQ(got_count, 2);
  CHECK_EQ(max_depth, 2);
  CHECK_EQ(blocked_inside, 0);
  set_disposition(SIGUSR1, SIG_DFL);
}

static volatile int usr2_blocked_inside;

static void mask_handler(int sig, siginfo_t *si, void *uc) {
  (void)sig;
  (void)si;
  (void)uc;
  sigset_t m;
  sigprocmask(SIG_BLOCK, NULL, &m);
  usr2_blocked_inside = sigismember(&m, SIGUSR2);
  // Changing the mask here only lasts until the handler returns.
  sigset_t more = sigset_of(SIGINT, SIGHUP);
  sigprocmask(SIG_BLOCK, &more, NULL);
  got_count++;
}

TEST(sa_mask_and_mask_restored) {
  sigset_t extra = sigset_of(SIGUSR2, 0);
  set_handler(SIGUSR1, mask_handler, 0, &extra);
  sigset_t before = sigset_of(SIGTERM, 0);
  CHECK_OK(sigprocmask(SIG_SETMASK, &before, NULL));
  got_count = 0;
  CHECK_OK(kill(getpid(), SIGUSR1));
  CHECK_EQ(got_count, 1);
  CHECK_EQ(usr2_blocked_inside, 1);
  sigset_t after = current_mask();
  CHECK(sigismember(&after, SIGTERM));
  CHECK(!sigismember(&after, SIGUSR2));
  CHECK(!sigismember(&after, SIGINT));
  CHECK(!sigismember(&after, SIGHUP));
  CHECK(!sigismember(&after, SIGUSR1));
  unblock_all();
  set_disposition(SIGUSR1, SIG_DFL);
}

TEST(sa_resethand) {
  set_handler(SIGUSR1, info_handler, SA_RESETHAND, NULL);
  reset_got();
  CHECK_OK(kill(getpid(), SIGUSR1));
  CHECK_EQ(got_count, 1);
  struct sigaction sa;
  CHECK_OK(sigaction(SIGUSR1, NULL, &sa));
  CHECK(sa.sa_handler == SIG_DFL);
}

static void nested_usr2(int sig, siginfo_t *si, void *uc);

static char nest_log[8];
static volatile int nest_len;

static void nested_usr1(int sig, siginfo_t *si, void *uc) {
  (void)sig;
  (void)si;
  (void)uc;
  nest_log[nest_len++] = 'a';
  tgkill_self((pid_t)syscall(SYS_gettid), SIGUSR2);
  nest_log[nest_len++] = 'b';
}

static void nested_usr2(int sig, siginfo_t *si, void *uc) {
  (void)sig;
  (void)si;
  (void)uc;
  nest_log[nest_len++] = '2';
}

TEST(nested_handlers) {
  set_handler(SIGUSR1, nested_usr1, 0, NULL);
  set_handler(SIGUSR2, nested_usr2, 0, NULL);
  nest_len = 0;
  memset(nest_log, 0, sizeof(nest_log));
  CHECK_OK(kill(getpid(), SIGUSR1));
  CHECK(strcmp(nest_log, "a2b") == 0);
  set_disposition(SIGUSR1, SIG_DFL);
  set_disposition(SIGUSR2, SIG_DFL);
}

// --- pending signals ---

static int order_log[16];
static volatile int order_len;
static int order_val[16];

static void order_handler(int sig, siginfo_t *si, void *uc) {
  (void)uc;
  if (order_len < 16) {
    order_val[order_len] = si->si_code == SI_QUEUE ? si->si_value.sival_int : 0;
    order_log[order_len++] = sig;
  }
}

TEST(pending_delivered_in_order_on_unblock) {
  const int sigs[4] = {SIGUSR1, SIGUSR2, SIGRTMIN, SIGRTMIN + 1};
  sigset_t all;
  sigemptyset(&all);
  for (int i = 0; i < 4; i++) sigaddset(&all, sigs[i]);
  // Each handler blocks the other three, so one signal is delivered per
  // return to user mode and the order is observable.
  for (int i = 0; i < 4; i++) set_handler(sigs[i], order_handler, 0, &all);
  CHECK_OK(sigprocmask(SIG_BLOCK, &all, NULL));
  order_len = 0;
  CHECK_OK(kill(getpid(), SIGRTMIN + 1));
  CHECK_OK(kill(getpid(), SIGUSR2));
  CHECK_OK(kill(getpid(), SIGRTMIN));
  CHECK_OK(kill(getpid(), SIGUSR1));
  CHECK_EQ(order_len, 0);
  sigset_t p = pending_set();
  for (int i = 0; i < 4; i++) CHECK(sigismember(&p, sigs[i]));
  CHECK(!sigismember(&p, SIGTERM));

  // The raw syscall agrees, and insists on the kernel's sigset size.
  uint64_t raw = 0;
  CHECK_OK(syscall(SYS_rt_sigpending, &raw, 8));
  for (int i = 0; i < 4; i++) CHECK(raw & (1ULL << (sigs[i] - 1)));
  CHECK_ERRNO(syscall(SYS_rt_sigpending, &raw, 16), EINVAL);
  CHECK_ERRNO(syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &raw, 16), EINVAL);

  CHECK_OK(sigprocmask(SIG_UNBLOCK, &all, NULL));
  // Lowest signal number first.
  CHECK_EQ(order_len, 4);
  for (int i = 0; i < 4; i++) CHECK_EQ(order_log[i], sigs[i]);
  p = pending_set();
  for (int i = 0; i < 4; i++) CHECK(!sigismember(&p, sigs[i]));
  for (int i = 0; i < 4; i++) set_disposition(sigs[i], SIG_DFL);
}

TEST(standard_coalesce_realtime_queue) {
  sigset_t both = sigset_of(SIGUSR1, SIGRTMIN);
  set_handler(SIGUSR1, order_handler, 0, &both);
  set_handler(SIGRTMIN, order_handler, 0, &both);
  CHECK_OK(sigprocmask(SIG_BLOCK, &both, NULL));
  order_len = 0;
  for (int i = 1; i <= 3; i++) {
    CHECK_OK(kill(getpid(), SIGUSR1));
    union sigval v = {.sival_int = i * 10};
    CHECK_OK(sigqueue(getpid(), SIGRTMIN, v));
  }
  CHECK_OK(sigprocmask(SIG_UNBLOCK, &both, NULL));
  // SIGUSR1 was pending once; the three SIGRTMIN stay queued in order.
  CHECK_EQ(order_len, 4);
  CHECK_EQ(order_log[0], SIGUSR1);
  for (int i = 1; i <= 3; i++) {
    CHECK_EQ(order_log[i], SIGRTMIN);
    CHECK_EQ(order_val[i], i * 10);
  }
  set_disposition(SIGUSR1, SIG_DFL);
  set_disposition(SIGRTMIN, SIG_DFL);
}

TEST(sigsuspend_and_pause) {
  set_handler(SIGUSR1, info_handler, 0, NULL);
  sigset_t usr1 = sigset_of(SIGUSR1, 0);
  CHECK_OK(sigprocmask(SIG_BLOCK, &usr1, NULL));
  reset_got();
  struct sender s;
  start_sender(&s, SIGUSR1, 20, 1, -1);
  // sigsuspend swaps in the given mask, waits for a handler, then puts the
  // old mask back.
  sigset_t none;
  sigemptyset(&none);
  CHECK_ERRNO(sigsuspend(&none), EINTR);
  CHECK_EQ(got_count, 1);
  CHECK_EQ(got_code, SI_TKILL);
  sigset_t m = current_mask();
  CHECK(sigismember(&m, SIGUSR1));
  stop_sender(&s);
  unblock_all();

  reset_got();
  start_sender(&s, SIGUSR1, 20, 1, -1);
  CHECK_ERRNO(pause(), EINTR);
  CHECK_EQ(got_count, 1);
  stop_sender(&s);
  set_disposition(SIGUSR1, SIG_DFL);
}

TEST(sigtimedwait_timeout_and_pending) {
  sigset_t usr1 = sigset_of(SIGUSR1, 0);
  CHECK_OK(sigprocmask(SIG_BLOCK, &usr1, NULL));
  siginfo_t info;
  struct timespec zero = {0, 0};
  CHECK_ERRNO(sigtimedwait(&usr1, &info, &zero), EAGAIN);
  struct timespec ten_ms = {0, 10 * 1000000L};
  int64_t t0 = conf_now_ns(CLOCK_MONOTONIC);
  CHECK_ERRNO(sigtimedwait(&usr1, &info, &ten_ms), EAGAIN);
  CHECK(conf_now_ns(CLOCK_MONOTONIC) - t0 >= 10 * 1000000LL);
  struct timespec bad = {0, 1000000000L};
  CHECK_ERRNO(sigtimedwait(&usr1, &info, &bad), EINVAL);

  // Already pending: taken at once, with its siginfo, and no longer pending.
  CHECK_OK(kill(getpid(), SIGUSR1));
  memset(&info, 0, sizeof(info));
  struct timespec five = {5, 0};
  CHECK_EQ(sigtimedwait(&usr1, &info, &five), SIGUSR1);
  CHECK_EQ(info.si_signo, SIGUSR1);
  CHECK_EQ(info.si_code, SI_USER);
  CHECK_EQ(info.si_pid, getpid());
  sigset_t p = pending_set();
  CHECK(!sigismember(&p, SIGUSR1));

  // Arriving later, from another thread, with a value.
  union sigval v = {.sival_int = 77};
  CHECK_OK(sigqueue(getpid(), SIGUSR1, v));
  memset(&info, 0, sizeof(info));
  CHECK_EQ(sigwaitinfo(&usr1, &info), SIGUSR1);
  CHECK_EQ(info.si_code, SI_QUEUE);
  CHECK_EQ(info.si_value.sival_int, 77);

  // The raw syscall: glibc's wrapper rewrites SI_TKILL to SI_USER.
  struct sender s;
  start_sender(&s, SIGUSR1, 20, 1, -1);
  memset(&info, 0, sizeof(info));
  CHECK_EQ(syscall(SYS_rt_sigtimedwait, &usr1, &info, &five, 8), SIGUSR1);
  CHECK_EQ(info.si_code, SI_TKILL);
  CHECK_EQ(info.si_pid, getpid());
  stop_sender(&s);
  unblock_all();
}


TEST(fork_signal_state) {
  // The child inherits handlers and the mask but not pending signals.
  set_handler(SIGUSR2, info_handler, 0, NULL);
  sigset_t usr1 = sigset_of(SIGUSR1, 0);
  CHECK_OK(sigprocmask(SIG_BLOCK, &usr1, NULL));
  CHECK_OK(kill(getpid(), SIGUSR1));
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    sigset_t p = pending_set();
    CHECK(!sigismember(&p, SIGUSR1));
    sigset_t m = current_mask();
    CHECK(sigismember(&m, SIGUSR1));
    struct sigaction sa;
    CHECK_OK(sigaction(SIGUSR2, NULL, &sa));
    CHECK(sa.sa_sigaction == info_handler);
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
  sigset_t p = pending_set();
  CHECK(sigismember(&p, SIGUSR1));
  set_disposition(SIGUSR1, SIG_IGN);  // Discards the pending one.
  unblock_all();
  set_disposition(SIGUSR1, SIG_DFL);
  set_disposition(SIGUSR2, SIG_DFL);
}

TEST(ignored_signals) {
  set_disposition(SIGUSR1, SIG_IGN);
  CHECK_OK(kill(getpid(), SIGUSR1));  // Still alive.
  sigset_t p = pending_set();
  CHECK(!sigismember(&p, SIGUSR1));
  // A blocked signal is queued even if ignored (the disposition may change
  // before it is unblocked)...
  sigset_t usr1 = sigset_of(SIGUSR1, 0);
  CHECK_OK(sigprocmask(SIG_BLOCK, &usr1, NULL));
  CHECK_OK(kill(getpid(), SIGUSR1));
  p = pending_set();
  CHECK(sigismember(&p, SIGUSR1));
  // ...and setting SIG_IGN discards it.
  set_disposition(SIGUSR1, SIG_IGN);
  p = pending_set();
  CHECK(!sigismember(&p, SIGUSR1));
  unblock_all();
  set_disposition(SIGUSR1, SIG_DFL);

  // SIGKILL and SIGSTOP can be neither caught, ignored nor blocked.
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = SIG_IGN;
  CHECK_ERRNO(sigaction(SIGKILL, &sa, NULL), EINVAL);
  CHECK_ERRNO(sigaction(SIGSTOP, &sa, NULL), EINVAL);
  CHECK_OK(sigaction(SIGKILL, NULL, &sa));  // Querying is fine.
  sigset_t ks = sigset_of(SIGKILL, SIGSTOP);
  sigaddset(&ks, SIGUSR2);
  CHECK_OK(sigprocmask(SIG_BLOCK, &ks, NULL));
  sigset_t m = current_mask();
  CHECK(sigismember(&m, SIGUSR2));
  CHECK(!sigismember(&m, SIGKILL));
  CHECK(!sigismember(&m, SIGSTOP));
  unblock_all();
}

static volatile int thread_ready;
static volatile pid_t thread_tid;

static void *unblocked_thread(void *arg) {
  (void)arg;
  sigset_t usr1 = sigset_of(SIGUSR1, 0);
  CHECK_EQ(pthread_sigmask(SIG_UNBLOCK, &usr1, NULL), 0);
  thread_tid = conf_gettid();
  thread_ready = 1;
  int64_t deadline = conf_now_ns(CLOCK_MONOTONIC) + 5000000000LL;
  while (got_count == 0) {
    CHECK(conf_now_ns(CLOCK_MONOTONIC) < deadline);
    conf_sleep_ms(1);
  }
  return NULL;
}

TEST(process_signal_goes_to_unblocked_thread) {
  set_handler(SIGUSR1, info_handler, 0, NULL);
  sigset_t usr1 = sigset_of(SIGUSR1, 0);
  CHECK_OK(sigprocmask(SIG_BLOCK, &usr1, NULL));
  reset_got();
  thread_ready = 0;
  pthread_t t;
  CHECK_EQ(pthread_create(&t, NULL, unblocked_thread, NULL), 0);
  while (!thread_ready) conf_sleep_ms(1);
  CHECK_OK(kill(getpid(), SIGUSR1));
  CHECK_EQ(pthread_join(t, NULL), 0);
  CHECK_EQ(got_count, 1);
  // The main thread blocks it, so only the other thread can take it.
  CHECK_EQ(got_tid, thread_tid);
  unblock_all();
  set_disposition(SIGUSR1, SIG_DFL);
}

// A zombie keeps its pid until it is reaped: kill() succeeds (delivering nothing), for the
// pid and for its process group; after the reap, ESRCH.
TEST(kill_zombie) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    setpgid(0, 0);
    _exit(3);
  }
  siginfo_t si;
  memset(&si, 0, sizeof(si));
  CHECK_OK(waitid(P_PID, pid, &si, WEXITED | WNOWAIT));
  CHECK_OK(kill(pid, 0));
  CHECK_OK(kill(pid, SIGTERM));
  CHECK_OK(kill(-pid, SIGTERM));
  CHECK_EXIT(pid, 3);
  CHECK_ERRNO(kill(pid, 0), ESRCH);
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  RUN(siginfo_kill_tkill_queue);
  RUN(kill_zombie);
  RUN(sa_restart_resumes_read);
  RUN(no_restart_read_eintr);
  RUN(sigaction_round_trip);
  RUN(sigprocmask_how);
  RUN(rt_sigqueueinfo_rules);
  RUN(handler_masks_own_signal_unless_nodefer);
  RUN(sa_mask_and_mask_restored);
  RUN(sa_resethand);
  RUN(nested_handlers);
  RUN(pending_delivered_in_order_on_unblock);
  RUN(standard_coalesce_realtime_queue);
  RUN(sigsuspend_and_pause);
  RUN(sigtimedwait_timeout_and_pending);
  RUN(fork_signal_state);
  RUN(ignored_signals);
  RUN(process_signal_goes_to_unblocked_thread);
  PASS("signals");
  return 0;
}
