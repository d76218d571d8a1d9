// eventfd (counter and semaphore semantics, overflow, short reads, poll),
// timerfd (one-shot, periodic, absolute, gettime, disarm, errors) and
// signalfd (reading blocked signals, consuming them, siginfo fields, poll).
//
// Creates no files.

#include "common.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>

#define MS 1000000LL

static uint64_t read_u64(int fd) {
  uint64_t v = 0;
  CHECK_EQ(read(fd, &v, sizeof(v)), 8);
  return v;
}

static void write_u64(int fd, uint64_t v) {
  CHECK_EQ(write(fd, &v, sizeof(v)), 8);
}

static short poll_events(int fd, short events) {
  struct pollfd p = {fd, events, 0};
  CHECK(poll(&p, 1, 0) >= 0);
  return p.revents;
}

static int64_t its_ns(struct timespec ts) {
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static struct timespec ns_ts(int64_t ns) {
  struct timespec ts = {(time_t)(ns / 1000000000LL),
                        (long)(ns % 1000000000LL)};
  return ts;
}

// --- eventfd ---

TEST(eventfd_counter) {
  int fd = eventfd(5, EFD_NONBLOCK);
  CHECK(fd >= 0);
  CHECK_EQ(read_u64(fd), 5);  // The initial value.
  uint64_t v;
  CHECK_ERRNO(read(fd, &v, sizeof(v)), EAGAIN);  // Zero: nothing to read.
  write_u64(fd, 3);
  write_u64(fd, 4);
  CHECK_EQ(read_u64(fd), 7);  // Writes add up; a read takes all.
  CHECK_ERRNO(read(fd, &v, sizeof(v)), EAGAIN);
  // Sizes: reads and writes need 8 bytes; more is fine, less is not.
  char buf[16];
  CHECK_ERRNO(read(fd, buf, 4), EINVAL);
  CHECK_ERRNO(write(fd, buf, 4), EINVAL);
  write_u64(fd, 2);
  memset(buf, 0, sizeof(buf));
  CHECK_EQ(read(fd, buf, sizeof(buf)), 8);
  memcpy(&v, buf, 8);
  CHECK_EQ(v, 2);
  // Writing 0 is allowed and changes nothing.
  write_u64(fd, 0);
  CHECK_ERRNO(read(fd, &v, sizeof(v)), EAGAIN);
  CHECK_ERRNO(eventfd(0, O_RDWR), EINVAL);
  CHECK_OK(close(fd));
}

TEST(eventfd_overflow) {
  int fd = eventfd(0, EFD_NONBLOCK);
  CHECK(fd >= 0);
  // The largest count is 0xfffffffffffffffe.
  uint64_t v = 0xffffffffffffffffULL;
  CHECK_ERRNO(write(fd, &v, sizeof(v)), EINVAL);
  write_u64(fd, 0xfffffffffffffffeULL);
  v = 1;
  CHECK_ERRNO(write(fd, &v, sizeof(v)), EAGAIN);
  CHECK_EQ(poll_events(fd, POLLIN | POLLOUT), POLLIN);
  CHECK_EQ(read_u64(fd), 0xfffffffffffffffeULL);
  CHECK_EQ(poll_events(fd, POLLIN | POLLOUT), POLLOUT);
  write_u64(fd, 0xfffffffffffffff0ULL);
  write_u64(fd, 0xe);
  CHECK_ERRNO(write(fd, &v, sizeof(v)), EAGAIN);
  CHECK_OK(close(fd));
}

TEST(eventfd_semaphore) {
  int fd = eventfd(3, EFD_SEMAPHORE | EFD_NONBLOCK | EFD_CLOEXEC);
  CHECK(fd >= 0);
  CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
  CHECK_EQ(read_u64(fd), 1);
  CHECK_EQ(read_u64(fd), 1);
  CHECK_EQ(read_u64(fd), 1);
  uint64_t v;
  CHECK_ERRNO(read(fd, &v, sizeof(v)), EAGAIN);
  write_u64(fd, 2);
  CHECK_EQ(read_u64(fd), 1);
  CHECK_EQ(poll_events(fd, POLLIN), POLLIN);
  CHECK_EQ(read_u64(fd), 1);
  CHECK_EQ(poll_events(fd, POLLIN), 0);
  CHECK_OK(close(fd));
}

static void *post_later(void *arg) {
  conf_sleep_ms(20);
  write_u64(*(int *)arg, 42);
  return NULL;
}

TEST(eventfd_blocking_read) {
  int fd = eventfd(0, 0);
  CHECK(fd >= 0);
  pthread_t t;
  CHECK_EQ(pthread_create(&t, NULL, post_later, &fd), 0);
  CHECK_EQ(read_u64(fd), 42);
  CHECK_EQ(pthread_join(t, NULL), 0);
  // Shared across fork: the child's write wakes the parent.
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    conf_sleep_ms(10);
    write_u64(fd, 9);
    _exit(0);
  }
  CHECK_EQ(read_u64(fd), 9);
  CHECK_EXIT(pid, 0);
  CHECK_OK(close(fd));
}

// --- timerfd ---

TEST(timerfd_one_shot) {
  int fd = timerfd_create(CLOCK_MONOTONIC, 0);
  CHECK(fd >= 0);
  struct itimerspec its = {{0, 0}, ns_ts(20 * MS)};
  int64_t t0 = conf_now_ns(CLOCK_MONOTONIC);
  CHECK_OK(timerfd_settime(fd, 0, &its, NULL));
  CHECK_EQ(read_u64(fd), 1);  // Blocks until it fires.
  CHECK(conf_now_ns(CLOCK_MONOTONIC) - t0 >= 20 * MS);
  // Read resets it; a one-shot timer does not fire again.
  CHECK_OK(fcntl(fd, F_SETFL, O_NONBLOCK));
  uint64_t v;
  CHECK_ERRNO(read(fd, &v, sizeof(v)), EAGAIN);
  struct itimerspec cur;
  CHECK_OK(timerfd_gettime(fd, &cur));
  CHECK_EQ(its_ns(cur.it_value), 0);
  CHECK_EQ(its_ns(cur.it_interval), 0);
  CHECK_OK(close(fd));
}

TEST(timerfd_nonblocking_before_expiry) {
  int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  CHECK(fd >= 0);
  CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
  uint64_t v;
  CHECK_ERRNO(read(fd, &v, sizeof(v)), EAGAIN);  // Never armed.
  struct itimerspec its = {{0, 0}, {10, 0}};
  CHECK_OK(timerfd_settime(fd, 0, &its, NULL));
  CHECK_ERRNO(read(fd, &v, sizeof(v)), EAGAIN);
  CHECK_EQ(poll_events(fd, POLLIN), 0);
  char small[4];
  CHECK_ERRNO(read(fd, small, sizeof(small)), EINVAL);
  CHECK_OK(close(fd));
}

TEST(timerfd_periodic) {
  int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
  CHECK(fd >= 0);
  struct itimerspec its = {ns_ts(10 * MS), ns_ts(10 * MS)};
  int64_t t0 = conf_now_ns(CLOCK_MONOTONIC);
  CHECK_OK(timerfd_settime(fd, 0, &its, NULL));
  conf_sleep_ms(55);
  // Several expirations accumulate into one read, no more than have
  // elapsed.
  uint64_t n = read_u64(fd);
  int64_t elapsed = conf_now_ns(CLOCK_MONOTONIC) - t0;
  CHECK(n >= 2);
  CHECK((int64_t)n <= elapsed / (10 * MS));
  uint64_t v;
  CHECK_ERRNO(read(fd, &v, sizeof(v)), EAGAIN);
  // Still armed: it fires again, and gettime shows the period.
  struct pollfd p = {fd, POLLIN, 0};
  CHECK_EQ(poll(&p, 1, 5000), 1);
  CHECK(read_u64(fd) >= 1);
  struct itimerspec cur;
  CHECK_OK(timerfd_gettime(fd, &cur));
  CHECK_EQ(its_ns(cur.it_interval), 10 * MS);
  CHECK(its_ns(cur.it_value) > 0);
  CHECK(its_ns(cur.it_value) <= 10 * MS);
  CHECK_OK(close(fd));
}

TEST(timerfd_gettime_settime_old_value) {
  int fd = timerfd_create(CLOCK_MONOTONIC, 0);
  CHECK(fd >= 0);
  struct itimerspec cur;
  CHECK_OK(timerfd_gettime(fd, &cur));
  CHECK_EQ(its_ns(cur.it_value), 0);
  struct itimerspec its = {{3, 0}, {10, 0}};
  CHECK_OK(timerfd_settime(fd, 0, &its, NULL));
  CHECK_OK(timerfd_gettime(fd, &cur));
  CHECK(its_ns(cur.it_value) > 5000 * MS);  // (Generous: a loaded machine.)
  CHECK(its_ns(cur.it_value) <= 10000 * MS);
  CHECK_EQ(its_ns(cur.it_interval), 3000 * MS);
  // settime returns the previous setting; a zero value disarms.
  struct itimerspec off = {{0, 0}, {0, 0}}, old;
  CHECK_OK(timerfd_settime(fd, 0, &off, &old));
  CHECK(its_ns(old.it_value) > 5000 * MS);
  CHECK_EQ(its_ns(old.it_interval), 3000 * MS);
  CHECK_OK(timerfd_gettime(fd, &cur));
  CHECK_EQ(its_ns(cur.it_value), 0);
  CHECK_EQ(its_ns(cur.it_interval), 0);
  // Errors.
  struct itimerspec bad = {{0, 0}, {0, 1000000000}};
  CHECK_ERRNO(timerfd_settime(fd, 0, &bad, NULL), EINVAL);
  CHECK_ERRNO(timerfd_settime(fd, 0x100, &its, NULL), EINVAL);
  CHECK_ERRNO(timerfd_create(CLOCK_MONOTONIC, 0x1), EINVAL);
  CHECK_ERRNO(timerfd_create(12345, 0), EINVAL);
  CHECK_ERRNO(timerfd_create(CLOCK_PROCESS_CPUTIME_ID, 0), EINVAL);
  int p[2];
  CHECK_OK(pipe(p));
  CHECK_ERRNO(timerfd_settime(p[0], 0, &its, NULL), EINVAL);
  CHECK_ERRNO(timerfd_gettime(p[0], &cur), EINVAL);
  CHECK_OK(close(p[0]));
  CHECK_OK(close(p[1]));
  CHECK_OK(close(fd));
}

TEST(timerfd_absolute) {
  int fd = timerfd_create(CLOCK_MONOTONIC, 0);
  CHECK(fd >= 0);
  int64_t now = conf_now_ns(CLOCK_MONOTONIC);
  struct itimerspec its = {{0, 0}, ns_ts(now + 20 * MS)};
  CHECK_OK(timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL));
  struct itimerspec cur;
  CHECK_OK(timerfd_gettime(fd, &cur));  // Reported relative.
  CHECK(its_ns(cur.it_value) <= 20 * MS);
  CHECK_EQ(read_u64(fd), 1);
  CHECK(conf_now_ns(CLOCK_MONOTONIC) >= now + 20 * MS);
  // An absolute time in the past fires at once.
  its.it_value = ns_ts(now);
  CHECK_OK(timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL));
  CHECK_EQ(poll_events(fd, POLLIN), POLLIN);
  CHECK_EQ(read_u64(fd), 1);
  // With an interval, the missed periods are counted.
  its.it_value = ns_ts(now - 100 * MS);
  its.it_interval = ns_ts(10 * MS);
  CHECK_OK(timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL));
  CHECK(read_u64(fd) >= 10);
  CHECK_OK(close(fd));

  // CLOCK_REALTIME timers work the same way.
  fd = timerfd_create(CLOCK_REALTIME, 0);
  CHECK(fd >= 0);
  struct itimerspec rt = {{0, 0},
                          ns_ts(conf_now_ns(CLOCK_REALTIME) + 10 * MS)};
  CHECK_OK(timerfd_settime(fd, TFD_TIMER_ABSTIME, &rt, NULL));
  CHECK_EQ(read_u64(fd), 1);
  CHECK_OK(close(fd));
}

TEST(timerfd_rearm_resets_count) {
  int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
  CHECK(fd >= 0);
  struct itimerspec its = {{0, 0}, {0, 1}};
  CHECK_OK(timerfd_settime(fd, 0, &its, NULL));
  struct pollfd p = {fd, POLLIN, 0};
  CHECK_EQ(poll(&p, 1, 5000), 1);
  // Re-arming discards the expirations not yet read.
  its.it_value.tv_sec = 10;
  its.it_value.tv_nsec = 0;
  CHECK_OK(timerfd_settime(fd, 0, &its, NULL));
  uint64_t v;
  CHECK_ERRNO(read(fd, &v, sizeof(v)), EAGAIN);
  CHECK_OK(close(fd));
}

// --- signalfd ---

static sigset_t mask_of(int a, int b) {
  sigset_t s;
  sigemptyset(&s);
  if (a) sigaddset(&s, a);
  if (b) sigaddset(&s, b);
  return s;
}

TEST(signalfd_reads_and_consumes) {
  sigset_t set = mask_of(SIGUSR1, SIGUSR2);
  CHECK_OK(sigprocmask(SIG_BLOCK, &set, NULL));
  int fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  CHECK(fd >= 0);
  CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
  struct signalfd_siginfo si;
  CHECK_EQ(sizeof(si), 128);
  CHECK_ERRNO(read(fd, &si, sizeof(si)), EAGAIN);
  CHECK_EQ(poll_events(fd, POLLIN), 0);

  CHECK_OK(raise(SIGUSR1));
  CHECK_EQ(poll_events(fd, POLLIN), POLLIN);
  memset(&si, 0, sizeof(si));
  CHECK_EQ(read(fd, &si, sizeof(si)), 128);
  CHECK_EQ(si.ssi_signo, SIGUSR1);
  CHECK_EQ(si.ssi_code, SI_TKILL);  // raise() is tgkill.
  CHECK_EQ(si.ssi_pid, getpid());
  CHECK_EQ(si.ssi_uid, getuid());
  // Consumed: no longer pending, nothing more to read.
  sigset_t pending;
  CHECK_OK(sigpending(&pending));
  CHECK(!sigismember(&pending, SIGUSR1));
  CHECK_ERRNO(read(fd, &si, sizeof(si)), EAGAIN);
  CHECK_EQ(poll_events(fd, POLLIN), 0);

  // kill(): SI_USER. Several pending signals come out lowest first, as
  // many as fit; a standard signal sent twice is pending once.
  CHECK_OK(kill(getpid(), SIGUSR2));
  CHECK_OK(kill(getpid(), SIGUSR1));
  CHECK_OK(kill(getpid(), SIGUSR1));
  struct signalfd_siginfo two[3];
  CHECK_EQ(read(fd, two, sizeof(two)), 256);
  CHECK_EQ(two[0].ssi_signo, SIGUSR1);
  CHECK_EQ(two[0].ssi_code, SI_USER);
  CHECK_EQ(two[1].ssi_signo, SIGUSR2);
  CHECK_ERRNO(read(fd, &si, sizeof(si)), EAGAIN);
  // sigqueue: the value arrives.
  union sigval val;
  val.sival_int = 4242;
  CHECK_OK(sigqueue(getpid(), SIGUSR1, val));
  CHECK_EQ(read(fd, &si, sizeof(si)), 128);
  CHECK_EQ(si.ssi_code, SI_QUEUE);
  CHECK_EQ(si.ssi_int, 4242);
  // A buffer too small for one.
  CHECK_OK(raise(SIGUSR1));
  char small[64];
  CHECK_ERRNO(read(fd, small, sizeof(small)), EINVAL);
  CHECK_EQ(read(fd, &si, sizeof(si)), 128);
  // Signals outside the fd's mask are not read (but stay pending).
  sigset_t only1 = mask_of(SIGUSR1, 0);
  CHECK_EQ(signalfd(fd, &only1, 0), fd);  // Updates the mask in place.
  CHECK_OK(raise(SIGUSR2));
  CHECK_ERRNO(read(fd, &si, sizeof(si)), EAGAIN);
  CHECK_OK(sigpending(&pending));
  CHECK(sigismember(&pending, SIGUSR2));
  struct timespec zero = {0, 0};
  sigset_t usr2 = mask_of(SIGUSR2, 0);
  CHECK_EQ(sigtimedwait(&usr2, NULL, &zero), SIGUSR2);
  CHECK_OK(close(fd));
  CHECK_OK(sigprocmask(SIG_UNBLOCK, &set, NULL));
}

TEST(signalfd_queues_realtime_signals) {
  int sig = SIGRTMIN + 1;
  sigset_t set = mask_of(sig, 0);
  CHECK_OK(sigprocmask(SIG_BLOCK, &set, NULL));
  int fd = signalfd(-1, &set, SFD_NONBLOCK);
  CHECK(fd >= 0);
  union sigval val;
  for (int i = 0; i < 3; i++) {
    val.sival_int = 10 + i;
    CHECK_OK(sigqueue(getpid(), sig, val));
  }
  struct signalfd_siginfo si[4];
  CHECK_EQ(read(fd, si, sizeof(si)), 3 * 128);
  for (int i = 0; i < 3; i++) {
    CHECK_EQ(si[i].ssi_signo, sig);
    CHECK_EQ(si[i].ssi_int, 10 + i);  // In order.
  }
  CHECK_OK(close(fd));
  CHECK_OK(sigprocmask(SIG_UNBLOCK, &set, NULL));
}

TEST(signalfd_blocking_and_errors) {
  sigset_t set = mask_of(SIGUSR1, 0);
  CHECK_OK(sigprocmask(SIG_BLOCK, &set, NULL));
  int fd = signalfd(-1, &set, 0);
  CHECK(fd >= 0);
  // A blocking read waits for a signal sent by a child.
  pid_t parent = getpid();
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    conf_sleep_ms(20);
    CHECK_OK(kill(parent, SIGUSR1));
    _exit(0);
  }
  struct signalfd_siginfo si;
  CHECK_EQ(read(fd, &si, sizeof(si)), 128);
  CHECK_EQ(si.ssi_signo, SIGUSR1);
  CHECK_EQ(si.ssi_pid, pid);
  CHECK_EXIT(pid, 0);
  // A SIGCHLD was also sent but is not in the mask: not read here.
  CHECK_OK(fcntl(fd, F_SETFL, O_NONBLOCK));
  CHECK_ERRNO(read(fd, &si, sizeof(si)), EAGAIN);
  // Errors.
  CHECK_ERRNO(signalfd(-1, &set, 0x1), EINVAL);
  int p[2];
  CHECK_OK(pipe(p));
  CHECK_ERRNO(signalfd(p[0], &set, 0), EINVAL);
  CHECK_OK(close(p[0]));
  CHECK_OK(close(p[1]));
  CHECK_ERRNO(syscall(SYS_signalfd4, -1, &set, 4, 0), EINVAL);  // sizemask.
  CHECK_OK(close(fd));
  CHECK_OK(sigprocmask(SIG_UNBLOCK, &set, NULL));
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  RUN(eventfd_counter);
  RUN(eventfd_overflow);
  RUN(eventfd_semaphore);
  RUN(eventfd_blocking_read);
  RUN(timerfd_one_shot);
  RUN(timerfd_nonblocking_before_expiry);
  RUN(timerfd_periodic);
  RUN(timerfd_gettime_settime_old_value);
  RUN(timerfd_absolute);
  RUN(timerfd_rearm_resets_count);
  RUN(signalfd_reads_and_consumes);
  RUN(signalfd_queues_realtime_signals);
  RUN(signalfd_blocking_and_errors);
  PASS("eventfd_timers");
  return 0;
}
