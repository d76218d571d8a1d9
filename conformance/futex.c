// Futexes, raw and through pthreads: wait/wake, requeue, wake_op, bitsets,
// private vs. shared keys, robust lists and set_tid_address.
//
// Races with threads that have not yet gone to sleep are avoided by
// counting the waiters queued on a word (count_waiters) instead of
// sleeping for a while and hoping.

#include "common.h"

#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>

static long futex(uint32_t *uaddr, int op, uint32_t val,
                  const struct timespec *ts, uint32_t *uaddr2, uint32_t val3) {
  return syscall(SYS_futex, uaddr, op, val, ts, uaddr2, val3);
}

// The requeue operations take a count (val2) in the timeout slot.
static long futex_requeue(uint32_t *uaddr, int op, uint32_t nr_wake,
                          uint32_t nr_requeue, uint32_t *uaddr2,
                          uint32_t val3) {
  return syscall(SYS_futex, uaddr, op, nr_wake, (unsigned long)nr_requeue,
                 uaddr2, val3);
}

// Number of tasks queued on *f. FUTEX_CMP_REQUEUE returns how many waiters
// it woke plus requeued; requeueing a word onto itself moves nothing.
// `priv` selects FUTEX_PRIVATE_FLAG, which must match the waiters'.
static long count_waiters(uint32_t *f, int priv) {
  int op = FUTEX_CMP_REQUEUE | (priv ? FUTEX_PRIVATE_FLAG : 0);
  for (;;) {
    uint32_t v = __atomic_load_n(f, __ATOMIC_SEQ_CST);
    long r = futex_requeue(f, op, 0, INT_MAX, f, v);
    if (r == -1 && errno == EAGAIN) continue;  // *f changed under us.
    CHECK(r >= 0);
    return r;
  }
}

static void wait_for_waiters(uint32_t *f, int priv, long n) {
  int64_t deadline = conf_now_ns(CLOCK_MONOTONIC) + 5000000000LL;
  while (count_waiters(f, priv) != n) {
    CHECK(conf_now_ns(CLOCK_MONOTONIC) < deadline);
    conf_sleep_ms(1);
  }
}

// A thread blocked in one futex wait.
struct waiter {
  uint32_t *addr;
  int op;
  uint32_t val;
  uint32_t bitset;
  long ret;
  int err;
  pthread_t thread;
};

static void *waiter_main(void *arg) {
  struct waiter *w = (struct waiter *)arg;
  w->ret = futex(w->addr, w->op, w->val, NULL, NULL, w->bitset);
  w->err = errno;
  return NULL;
}

static void start_waiter(struct waiter *w, uint32_t *addr, int op,
                         uint32_t bitset) {
  w->addr = addr;
  w->op = op;
  w->val = __atomic_load_n(addr, __ATOMIC_SEQ_CST);
  w->bitset = bitset;
  w->ret = -2;
  w->err = 0;
  CHECK_EQ(pthread_create(&w->thread, NULL, waiter_main, w), 0);
}

// Joins the waiter and checks that it was woken (not EAGAIN/EINTR/...).
static void join_woken(struct waiter *w) {
  CHECK_EQ(pthread_join(w->thread, NULL), 0);
  CHECK_EQ(w->ret, 0);
}

// --- cases ---

static pthread_mutex_t counter_mu = PTHREAD_MUTEX_INITIALIZER;
static long counter;

static void *increment_main(void *arg) {
  (void)arg;
  for (int i = 0; i < 100000; i++) {
    pthread_mutex_lock(&counter_mu);
    counter++;
    pthread_mutex_unlock(&counter_mu);
  }
  return NULL;
}

TEST(mutex_counter_8_threads) {
  enum { kThreads = 8 };
  pthread_t t[kThreads];
  counter = 0;
  for (int i = 0; i < kThreads; i++) {
    CHECK_EQ(pthread_create(&t[i], NULL, increment_main, NULL), 0);
  }
  for (int i = 0; i < kThreads; i++) CHECK_EQ(pthread_join(t[i], NULL), 0);
  CHECK_EQ(counter, 800000);
}

TEST(wait_value_mismatch) {
  uint32_t f = 5;
  CHECK_ERRNO(futex(&f, FUTEX_WAIT_PRIVATE, 6, NULL, NULL, 0), EAGAIN);
  CHECK_ERRNO(futex(&f, FUTEX_WAIT, 6, NULL, NULL, 0), EAGAIN);
  // Nobody is waiting: a wake wakes no one.
  CHECK_EQ(futex(&f, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0), 0);
}

TEST(wait_timeout) {
  uint32_t f = 0;
  struct timespec ts = {0, 20 * 1000000L};
  int64_t t0 = conf_now_ns(CLOCK_MONOTONIC);
  CHECK_ERRNO(futex(&f, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0), ETIMEDOUT);
  int64_t dt = conf_now_ns(CLOCK_MONOTONIC) - t0;
  CHECK(dt >= 20 * 1000000LL);
  CHECK(dt < 2000000000LL);
  struct timespec bad = {0, 1000000000L};
  CHECK_ERRNO(futex(&f, FUTEX_WAIT_PRIVATE, 0, &bad, NULL, 0), EINVAL);
  struct timespec neg = {-1, 0};
  CHECK_ERRNO(futex(&f, FUTEX_WAIT_PRIVATE, 0, &neg, NULL, 0), EINVAL);
}

TEST(wake_count) {
  enum { kWaiters = 4 };
  static uint32_t f;
  f = 0;
  struct waiter w[kWaiters];
  for (int i = 0; i < kWaiters; i++) {
    start_waiter(&w[i], &f, FUTEX_WAIT_PRIVATE, 0);
  }
  wait_for_waiters(&f, 1, kWaiters);
  // FUTEX_WAKE wakes at most the given number and says how many it woke.
  CHECK_EQ(futex(&f, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0), 1);
  CHECK_EQ(count_waiters(&f, 1), 3);
  CHECK_EQ(futex(&f, FUTEX_WAKE_PRIVATE, 2, NULL, NULL, 0), 2);
  CHECK_EQ(count_waiters(&f, 1), 1);
  CHECK_EQ(futex(&f, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0), 1);
  CHECK_EQ(futex(&f, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0), 0);
  for (int i = 0; i < kWaiters; i++) join_woken(&w[i]);
}

TEST(requeue_and_cmp_requeue) {
  static uint32_t f1, f2;
  f1 = 0;
  f2 = 0;
  struct waiter w[3];
  for (int i = 0; i < 3; i++) start_waiter(&w[i], &f1, FUTEX_WAIT_PRIVATE, 0);
  wait_for_waiters(&f1, 1, 3);
  // Wake one, move one to f2, leave one on f1. The result counts both the
  // woken and the requeued waiters.
  CHECK_EQ(futex_requeue(&f1, FUTEX_REQUEUE_PRIVATE, 1, 1, &f2, 0), 2);
  CHECK_EQ(count_waiters(&f1, 1), 1);
  CHECK_EQ(count_waiters(&f2, 1), 1);
  // CMP_REQUEUE checks *f1 first and does nothing on a mismatch.
  CHECK_ERRNO(futex_requeue(&f1, FUTEX_CMP_REQUEUE_PRIVATE, 0, INT_MAX, &f2,
                            f1 + 1),
              EAGAIN);
  CHECK_EQ(count_waiters(&f1, 1), 1);
  CHECK_EQ(futex_requeue(&f1, FUTEX_CMP_REQUEUE_PRIVATE, 0, INT_MAX, &f2, f1),
           1);
  CHECK_EQ(count_waiters(&f1, 1), 0);
  CHECK_EQ(count_waiters(&f2, 1), 2);
  // Waking f1 finds no one now; the moved waiters are woken through f2.
  CHECK_EQ(futex(&f1, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0), 0);
  CHECK_EQ(futex(&f2, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0), 2);
  for (int i = 0; i < 3; i++) join_woken(&w[i]);
  // A negative count is invalid.
  CHECK_ERRNO(futex_requeue(&f1, FUTEX_CMP_REQUEUE_PRIVATE, (uint32_t)-1, 0,
                            &f2, f1),
              EINVAL);
}

TEST(wake_op) {
  static uint32_t f1, f2;
  f1 = 0;
  f2 = 0;
  struct waiter a, b;
  start_waiter(&a, &f1, FUTEX_WAIT_PRIVATE, 0);
  start_waiter(&b, &f2, FUTEX_WAIT_PRIVATE, 0);
  wait_for_waiters(&f1, 1, 1);
  wait_for_waiters(&f2, 1, 1);
  // Atomically: old = *f2; *f2 = 5; wake 1 on f1; if (old == 0) wake 1 on
  // f2. Returns the total woken.
  uint32_t op = FUTEX_OP(FUTEX_OP_SET, 5, FUTEX_OP_CMP_EQ, 0);
  CHECK_EQ(futex_requeue(&f1, FUTEX_WAKE_OP_PRIVATE, 1, 1, &f2, op), 2);
  CHECK_EQ(f2, 5);
  join_woken(&a);
  join_woken(&b);

  // The operation happens even when nobody is woken.
  op = FUTEX_OP(FUTEX_OP_ADD, 1, FUTEX_OP_CMP_GT, 100);
  CHECK_EQ(futex_requeue(&f1, FUTEX_WAKE_OP_PRIVATE, 1, 1, &f2, op), 0);
  CHECK_EQ(f2, 6);
  op = FUTEX_OP((FUTEX_OP_OR | FUTEX_OP_OPARG_SHIFT), 3, FUTEX_OP_CMP_EQ, 0);
  CHECK_EQ(futex_requeue(&f1, FUTEX_WAKE_OP_PRIVATE, 1, 1, &f2, op), 0);
  CHECK_EQ(f2, 6 | 8);
  op = FUTEX_OP(FUTEX_OP_ANDN, 2, FUTEX_OP_CMP_EQ, 0);
  CHECK_EQ(futex_requeue(&f1, FUTEX_WAKE_OP_PRIVATE, 1, 1, &f2, op), 0);
  CHECK_EQ(f2, 12);
  op = FUTEX_OP(FUTEX_OP_XOR, 1, FUTEX_OP_CMP_EQ, 0);
  CHECK_EQ(futex_requeue(&f1, FUTEX_WAKE_OP_PRIVATE, 1, 1, &f2, op), 0);
  CHECK_EQ(f2, 13);

  // A false comparison leaves the f2 waiter asleep.
  start_waiter(&b, &f2, FUTEX_WAIT_PRIVATE, 0);
  wait_for_waiters(&f2, 1, 1);
  op = FUTEX_OP(FUTEX_OP_ADD, 1, FUTEX_OP_CMP_LT, 0);
  CHECK_EQ(futex_requeue(&f1, FUTEX_WAKE_OP_PRIVATE, 1, 1, &f2, op), 0);
  CHECK_EQ(f2, 14);
  CHECK_EQ(count_waiters(&f2, 1), 1);
  CHECK_EQ(futex(&f2, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0), 1);
  join_woken(&b);
}

TEST(wait_wake_bitset) {
  static uint32_t f;
  f = 0;
  struct waiter w;
  start_waiter(&w, &f, FUTEX_WAIT_BITSET_PRIVATE, 0x1);
  wait_for_waiters(&f, 1, 1);
  // Only wakes whose bitset intersects the waiter's count.
  CHECK_EQ(futex(&f, FUTEX_WAKE_BITSET_PRIVATE, INT_MAX, NULL, NULL, 0x2), 0);
  CHECK_EQ(count_waiters(&f, 1), 1);
  CHECK_EQ(futex(&f, FUTEX_WAKE_BITSET_PRIVATE, INT_MAX, NULL, NULL, 0x3), 1);
  join_woken(&w);
  // A plain FUTEX_WAKE matches any bitset.
  start_waiter(&w, &f, FUTEX_WAIT_BITSET_PRIVATE, 0x80);
  wait_for_waiters(&f, 1, 1);
  CHECK_EQ(futex(&f, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0), 1);
  join_woken(&w);

  CHECK_ERRNO(futex(&f, FUTEX_WAIT_BITSET_PRIVATE, 0, NULL, NULL, 0), EINVAL);
  CHECK_ERRNO(futex(&f, FUTEX_WAKE_BITSET_PRIVATE, 1, NULL, NULL, 0), EINVAL);

  // WAIT_BITSET timeouts are absolute: CLOCK_MONOTONIC by default,
  // CLOCK_REALTIME with FUTEX_CLOCK_REALTIME.
  int64_t t0 = conf_now_ns(CLOCK_MONOTONIC);
  int64_t end = t0 + 20 * 1000000LL;
  struct timespec abs = {end / 1000000000LL, end % 1000000000LL};
  CHECK_ERRNO(futex(&f, FUTEX_WAIT_BITSET_PRIVATE, 0, &abs, NULL,
                    FUTEX_BITSET_MATCH_ANY),
              ETIMEDOUT);
  CHECK(conf_now_ns(CLOCK_MONOTONIC) >= end);
  struct timespec past;
  CHECK_OK(clock_gettime(CLOCK_REALTIME, &past));
  past.tv_sec -= 1;
  t0 = conf_now_ns(CLOCK_MONOTONIC);
  CHECK_ERRNO(futex(&f, FUTEX_WAIT_BITSET_PRIVATE | FUTEX_CLOCK_REALTIME, 0,
                    &past, NULL, FUTEX_BITSET_MATCH_ANY),
              ETIMEDOUT);
  CHECK(conf_now_ns(CLOCK_MONOTONIC) - t0 < 1000000000LL);
}

TEST(shared_futex_across_fork) {
  uint32_t *word = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  CHECK(word != MAP_FAILED);
  *word = 0;
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    struct timespec ts = {5, 0};
    long r = futex(word, FUTEX_WAIT, 0, &ts, NULL, 0);
    CHECK_EQ(r, 0);
    CHECK_EQ(*word, 1);
    _exit(0);
  }
  // The child's waiter is keyed on the shared page, so it is visible from
  // here with shared ops...
  wait_for_waiters(word, 0, 1);
  // ...but not with private ones, which are keyed on our own mm.
  CHECK_EQ(count_waiters(word, 1), 0);
  CHECK_EQ(futex(word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0), 0);
  __atomic_store_n(word, 1, __ATOMIC_SEQ_CST);
  CHECK_EQ(futex(word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0), 1);
  CHECK_EXIT(pid, 0);
  CHECK_OK(munmap(word, 4096));
}

static void noop_handler(int sig) { (void)sig; }

static volatile int stop_kicking;

static void *kicker_main(void *arg) {
  pid_t target = *(pid_t *)arg;
  while (!stop_kicking) {
    conf_sleep_ms(10);
    if (!stop_kicking) syscall(SYS_tgkill, getpid(), target, SIGUSR1);
  }
  return NULL;
}

TEST(wait_interrupted_by_signal) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = noop_handler;  // No SA_RESTART.
  CHECK_OK(sigaction(SIGUSR1, &sa, NULL));
  uint32_t f = 0;
  pid_t me = conf_gettid();
  stop_kicking = 0;
  pthread_t t;
  CHECK_EQ(pthread_create(&t, NULL, kicker_main, &me), 0);
  CHECK_ERRNO(futex(&f, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0), EINTR);
  stop_kicking = 1;
  CHECK_EQ(pthread_join(t, NULL), 0);
  sa.sa_handler = SIG_DFL;
  CHECK_OK(sigaction(SIGUSR1, &sa, NULL));
}

static pthread_mutex_t cond_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int cond_ready, cond_go, cond_woke;

static void *cond_main(void *arg) {
  (void)arg;
  pthread_mutex_lock(&cond_mu);
  cond_ready++;
  while (!cond_go) pthread_cond_wait(&cond, &cond_mu);
  cond_woke++;
  pthread_mutex_unlock(&cond_mu);
  return NULL;
}

TEST(pthread_cond_broadcast_and_timeout) {
  enum { kThreads = 5 };
  pthread_t t[kThreads];
  cond_ready = cond_go = cond_woke = 0;
  for (int i = 0; i < kThreads; i++) {
    CHECK_EQ(pthread_create(&t[i], NULL, cond_main, NULL), 0);
  }
  for (;;) {
    pthread_mutex_lock(&cond_mu);
    int ready = cond_ready;
    pthread_mutex_unlock(&cond_mu);
    if (ready == kThreads) break;
    conf_sleep_ms(1);
  }
  pthread_mutex_lock(&cond_mu);
  cond_go = 1;
  CHECK_EQ(pthread_cond_broadcast(&cond), 0);
  pthread_mutex_unlock(&cond_mu);
  for (int i = 0; i < kThreads; i++) CHECK_EQ(pthread_join(t[i], NULL), 0);
  CHECK_EQ(cond_woke, kThreads);

  struct timespec deadline;
  CHECK_OK(clock_gettime(CLOCK_REALTIME, &deadline));
  deadline.tv_nsec += 10 * 1000000L;
  if (deadline.tv_nsec >= 1000000000L) {
    deadline.tv_sec++;
    deadline.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&cond_mu);
  CHECK_EQ(pthread_cond_timedwait(&cond, &cond_mu, &deadline), ETIMEDOUT);
  pthread_mutex_unlock(&cond_mu);
}

static void *volatile thread_robust_head;

static void *robust_query_main(void *arg) {
  (void)arg;
  struct robust_list_head *head = NULL;
  size_t len = 0;
  CHECK_OK(syscall(SYS_get_robust_list, 0, &head, &len));
  thread_robust_head = head;
  return NULL;
}

TEST(robust_list_syscalls) {
  // glibc registers a robust list head for every thread at start-up.
  struct robust_list_head *glibc_head = NULL;
  size_t len = 0;
  CHECK_OK(syscall(SYS_get_robust_list, 0, &glibc_head, &len));
  CHECK(glibc_head != NULL);
  CHECK_EQ(len, sizeof(struct robust_list_head));

  struct robust_list_head mine;
  mine.list.next = &mine.list;
  mine.futex_offset = 0;
  mine.list_op_pending = NULL;
  CHECK_ERRNO(syscall(SYS_set_robust_list, &mine, sizeof(mine) - 1), EINVAL);
  CHECK_OK(syscall(SYS_set_robust_list, &mine, sizeof(mine)));
  struct robust_list_head *got = NULL;
  CHECK_OK(syscall(SYS_get_robust_list, 0, &got, &len));
  CHECK(got == &mine);
  CHECK_OK(syscall(SYS_set_robust_list, glibc_head, sizeof(mine)));
  CHECK_OK(syscall(SYS_get_robust_list, getpid(), &got, &len));
  CHECK(got == glibc_head);

  // Other threads have their own.
  pthread_t t;
  CHECK_EQ(pthread_create(&t, NULL, robust_query_main, NULL), 0);
  CHECK_EQ(pthread_join(t, NULL), 0);
  CHECK(thread_robust_head != NULL);
  CHECK(thread_robust_head != glibc_head);

  pid_t gone = fork();
  CHECK(gone >= 0);
  if (gone == 0) _exit(0);
  CHECK_EXIT(gone, 0);
  CHECK_ERRNO(syscall(SYS_get_robust_list, gone, &got, &len), ESRCH);
}

TEST(set_tid_address_returns_tid) {
  // Done in a child: it replaces glibc's clear_child_tid pointer.
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    static int dummy;
    CHECK_EQ(syscall(SYS_set_tid_address, &dummy), conf_gettid());
    CHECK_EQ(syscall(SYS_set_tid_address, NULL), getpid());
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
}

TEST(robust_mutex_owner_death) {
  pthread_mutex_t *mu = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  CHECK(mu != MAP_FAILED);
  pthread_mutexattr_t attr;
  CHECK_EQ(pthread_mutexattr_init(&attr), 0);
  CHECK_EQ(pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED), 0);
  CHECK_EQ(pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST), 0);
  CHECK_EQ(pthread_mutex_init(mu, &attr), 0);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    CHECK_EQ(pthread_mutex_lock(mu), 0);
    _exit(0);  // Dies holding it.
  }
  CHECK_EXIT(pid, 0);
  // The kernel walked the dead owner's robust list: the lock word (the
  // first int of glibc's mutex) now says "owner died" and no owner tid.
  uint32_t word = __atomic_load_n((uint32_t *)mu, __ATOMIC_SEQ_CST);
  CHECK_EQ(word, FUTEX_OWNER_DIED);
  CHECK_EQ(pthread_mutex_lock(mu), EOWNERDEAD);
  CHECK_EQ(pthread_mutex_consistent(mu), 0);
  CHECK_EQ(pthread_mutex_unlock(mu), 0);
  CHECK_EQ(pthread_mutex_lock(mu), 0);
  CHECK_EQ(*(uint32_t *)mu & FUTEX_TID_MASK, (uint32_t)conf_gettid());
  CHECK_EQ(pthread_mutex_unlock(mu), 0);
  CHECK_EQ(pthread_mutex_destroy(mu), 0);
  CHECK_OK(munmap(mu, 4096));
}

TEST(futex_errors) {
  static uint32_t words[2];
  char *unaligned = (char *)&words[0] + 1;
  CHECK_ERRNO(futex((uint32_t *)unaligned, FUTEX_WAIT_PRIVATE, 0, NULL, NULL,
                    0),
              EINVAL);
  CHECK_ERRNO(futex(NULL, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0), EFAULT);
  CHECK_ERRNO(futex(&words[0], 99, 0, NULL, NULL, 0), ENOSYS);
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  RUN(mutex_counter_8_threads);
  RUN(wait_value_mismatch);
  RUN(wait_timeout);
  RUN(wake_count);
  RUN(requeue_and_cmp_requeue);
  RUN(wake_op);
  RUN(wait_wake_bitset);
  RUN(shared_futex_across_fork);
  RUN(wait_interrupted_by_signal);
  RUN(pthread_cond_broadcast_and_timeout);
  RUN(robust_list_syscalls);
  RUN(set_tid_address_returns_tid);
  RUN(robust_mutex_owner_death);
  RUN(futex_errors);
  PASS("futex");
  return 0;
}
