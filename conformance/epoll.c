// epoll: level- and edge-triggered readiness on pipes, EPOLLONESHOT and
// re-arming, EPOLLOUT/EPOLLHUP/EPOLLERR, timeouts, epoll_ctl errors,
// epoll_pwait's signal mask, eventfd and timerfd members, nested epoll
// sets, and registrations that belong to the open file, not the fd.
//
// Creates no files (its only regular file is its own binary, read-only).

#include "common.h"

#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>

static int make_epoll(void) {
  int ep = epoll_create1(EPOLL_CLOEXEC);
  CHECK(ep >= 0);
  return ep;
}

static void add(int ep, int fd, uint32_t events, uint64_t tag) {
  struct epoll_event ev;
  memset(&ev, 0, sizeof(ev));
  ev.events = events;
  ev.data.u64 = tag;
  CHECK_OK(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
}

static void mod(int ep, int fd, uint32_t events, uint64_t tag) {
  struct epoll_event ev;
  memset(&ev, 0, sizeof(ev));
  ev.events = events;
  ev.data.u64 = tag;
  CHECK_OK(epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev));
}

// epoll_wait with timeout 0 for at most one event; returns the count and
// stores the event.
static int poll1(int ep, struct epoll_event *ev) {
  memset(ev, 0, sizeof(*ev));
  int n = epoll_wait(ep, ev, 1, 0);
  CHECK(n >= 0);
  return n;
}

static void expect_event(int ep, uint64_t tag, uint32_t events) {
  struct epoll_event ev;
  CHECK_EQ(poll1(ep, &ev), 1);
  CHECK_EQ(ev.data.u64, tag);
  CHECK_EQ(ev.events, events);
}

static void expect_none(int ep) {
  struct epoll_event ev;
  CHECK_EQ(poll1(ep, &ev), 0);
}

static void close_pair(int p[2]) {
  CHECK_OK(close(p[0]));
  CHECK_OK(close(p[1]));
}

// --- cases ---

TEST(level_triggered_pipe) {
  int ep = make_epoll();
  int p[2];
  CHECK_OK(pipe(p));
  add(ep, p[0], EPOLLIN, 0x1234567890abcdefULL);
  expect_none(ep);
  CHECK_EQ(write(p[1], "ab", 2), 2);
  expect_event(ep, 0x1234567890abcdefULL, EPOLLIN);
  // Reported again and again while data remains.
  expect_event(ep, 0x1234567890abcdefULL, EPOLLIN);
  char c;
  CHECK_EQ(read(p[0], &c, 1), 1);
  expect_event(ep, 0x1234567890abcdefULL, EPOLLIN);
  CHECK_EQ(read(p[0], &c, 1), 1);
  expect_none(ep);
  close_pair(p);
  CHECK_OK(close(ep));
}

TEST(edge_triggered_pipe) {
  int ep = make_epoll();
  int p[2];
  CHECK_OK(pipe(p));
  add(ep, p[0], EPOLLIN | EPOLLET, 7);
  expect_none(ep);
  CHECK_EQ(write(p[1], "abc", 3), 3);
  expect_event(ep, 7, EPOLLIN);
  // Reported once, even though data remains.
  expect_none(ep);
  char buf[8];
  CHECK_EQ(read(p[0], buf, 1), 1);
  expect_none(ep);
  CHECK_EQ(read(p[0], buf, sizeof(buf)), 2);
  expect_none(ep);
  // New data is a new edge.
  CHECK_EQ(write(p[1], "d", 1), 1);
  expect_event(ep, 7, EPOLLIN);
  expect_none(ep);
  // EPOLL_CTL_MOD re-evaluates: data present is reported again.
  mod(ep, p[0], EPOLLIN | EPOLLET, 8);
  expect_event(ep, 8, EPOLLIN);
  expect_none(ep);
  close_pair(p);
  CHECK_OK(close(ep));
}

TEST(oneshot_and_rearm) {
  int ep = make_epoll();
  int p[2];
  CHECK_OK(pipe(p));
  add(ep, p[0], EPOLLIN | EPOLLONESHOT, 1);
  CHECK_EQ(write(p[1], "x", 1), 1);
  expect_event(ep, 1, EPOLLIN);
  // Disabled after one report, whatever happens.
  expect_none(ep);
  CHECK_EQ(write(p[1], "y", 1), 1);
  expect_none(ep);
  // Still registered: ADD is refused, MOD re-arms.
  struct epoll_event ev = {EPOLLIN, {.u64 = 1}};
  CHECK_ERRNO(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev), EEXIST);
  mod(ep, p[0], EPOLLIN | EPOLLONESHOT, 2);
  expect_event(ep, 2, EPOLLIN);
  expect_none(ep);
  // Re-armed without ONESHOT: level-triggered again.
  mod(ep, p[0], EPOLLIN, 3);
  expect_event(ep, 3, EPOLLIN);
  expect_event(ep, 3, EPOLLIN);
  close_pair(p);
  CHECK_OK(close(ep));
}

TEST(epollout_hup_and_err) {
  int ep = make_epoll();
  int p[2];
  CHECK_OK(pipe2(p, O_NONBLOCK));
  add(ep, p[1], EPOLLOUT, 10);
  expect_event(ep, 10, EPOLLOUT);
  // Full: not writable.
  char chunk[4096];
  memset(chunk, 'f', sizeof(chunk));
  while (write(p[1], chunk, sizeof(chunk)) > 0) {
  }
  CHECK_EQ(errno, EAGAIN);
  expect_none(ep);
  // Drained: writable again.
  while (read(p[0], chunk, sizeof(chunk)) > 0) {
  }
  expect_event(ep, 10, EPOLLOUT);
  CHECK_OK(epoll_ctl(ep, EPOLL_CTL_DEL, p[1], NULL));

  // Writer gone: EPOLLHUP, reported although not asked for; with data left
  // also EPOLLIN.
  add(ep, p[0], EPOLLIN, 11);
  CHECK_EQ(write(p[1], "z", 1), 1);
  CHECK_OK(close(p[1]));
  expect_event(ep, 11, EPOLLIN | EPOLLHUP);
  char c;
  CHECK_EQ(read(p[0], &c, 1), 1);
  expect_event(ep, 11, EPOLLHUP);
  // Even with no events requested at all.
  mod(ep, p[0], 0, 12);
  expect_event(ep, 12, EPOLLHUP);
  CHECK_OK(close(p[0]));

  // Reader gone: the write end reports EPOLLERR (and EPOLLOUT).
  CHECK_OK(pipe(p));
  add(ep, p[1], EPOLLOUT, 13);
  CHECK_OK(close(p[0]));
  expect_event(ep, 13, EPOLLOUT | EPOLLERR);
  CHECK_OK(close(p[1]));
  CHECK_OK(close(ep));
}

TEST(timeouts) {
  int ep = make_epoll();
  int p[2];
  CHECK_OK(pipe(p));
  add(ep, p[0], EPOLLIN, 0);
  struct epoll_event ev[4];
  int64_t t0 = conf_now_ns(CLOCK_MONOTONIC);
  CHECK_EQ(epoll_wait(ep, ev, 4, 0), 0);
  CHECK_EQ(epoll_wait(ep, ev, 4, 30), 0);
  CHECK(conf_now_ns(CLOCK_MONOTONIC) - t0 >= 30 * 1000000LL);
  // An empty set with a timeout just sleeps.
  int empty = make_epoll();
  t0 = conf_now_ns(CLOCK_MONOTONIC);
  CHECK_EQ(epoll_wait(empty, ev, 4, 20), 0);
  CHECK(conf_now_ns(CLOCK_MONOTONIC) - t0 >= 20 * 1000000LL);
  CHECK_OK(close(empty));
  close_pair(p);
  CHECK_OK(close(ep));
}

static void *write_later(void *arg) {
  conf_sleep_ms(20);
  CHECK_EQ(write(*(int *)arg, "w", 1), 1);
  return NULL;
}

TEST(blocking_wait_wakes_on_data) {
  int ep = make_epoll();
  int p[2];
  CHECK_OK(pipe(p));
  add(ep, p[0], EPOLLIN, 99);
  pthread_t t;
  CHECK_EQ(pthread_create(&t, NULL, write_later, &p[1]), 0);
  struct epoll_event ev;
  CHECK_EQ(epoll_wait(ep, &ev, 1, 5000), 1);
  CHECK_EQ(ev.data.u64, 99);
  CHECK_EQ(ev.events, EPOLLIN);
  CHECK_EQ(pthread_join(t, NULL), 0);
  close_pair(p);
  CHECK_OK(close(ep));
}

TEST(many_ready_and_maxevents) {
  int ep = make_epoll();
  int p[3][2];
  for (int i = 0; i < 3; i++) {
    CHECK_OK(pipe(p[i]));
    add(ep, p[i][0], EPOLLIN, 100 + i);
    CHECK_EQ(write(p[i][1], "x", 1), 1);
  }
  struct epoll_event ev[8];
  CHECK_EQ(epoll_wait(ep, ev, 2, 0), 2);
  CHECK_EQ(epoll_wait(ep, ev, 8, 0), 3);
  int seen = 0;
  for (int i = 0; i < 3; i++) {
    CHECK(ev[i].data.u64 >= 100 && ev[i].data.u64 < 103);
    seen |= 1 << (ev[i].data.u64 - 100);
    CHECK_EQ(ev[i].events, EPOLLIN);
  }
  CHECK_EQ(seen, 7);
  CHECK_ERRNO(epoll_wait(ep, ev, 0, 0), EINVAL);
  CHECK_ERRNO(syscall(SYS_epoll_wait, ep, ev, -1, 0), EINVAL);
  CHECK_ERRNO(syscall(SYS_epoll_wait, ep, NULL, 1, 0), EFAULT);
  for (int i = 0; i < 3; i++) close_pair(p[i]);
  CHECK_OK(close(ep));
}

TEST(ctl_errors) {
  int ep = make_epoll();
  int p[2];
  CHECK_OK(pipe(p));
  struct epoll_event ev = {EPOLLIN, {.u64 = 0}};
  CHECK_OK(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev));
  CHECK_ERRNO(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev), EEXIST);
  CHECK_ERRNO(epoll_ctl(ep, EPOLL_CTL_DEL, p[1], NULL), ENOENT);
  CHECK_ERRNO(epoll_ctl(ep, EPOLL_CTL_MOD, p[1], &ev), ENOENT);
  CHECK_ERRNO(epoll_ctl(ep, EPOLL_CTL_ADD, ep, &ev), EINVAL);
  CHECK_ERRNO(epoll_ctl(ep, 42, p[0], &ev), EINVAL);
  CHECK_ERRNO(epoll_ctl(ep, EPOLL_CTL_ADD, 9999, &ev), EBADF);
  CHECK_ERRNO(epoll_ctl(9999, EPOLL_CTL_ADD, p[0], &ev), EBADF);
  // The first fd must be an epoll instance.
  CHECK_ERRNO(epoll_ctl(p[1], EPOLL_CTL_ADD, p[0], &ev), EINVAL);
  // Regular files cannot be polled this way.
  int file = open(conf_self, O_RDONLY);
  CHECK(file >= 0);
  CHECK_ERRNO(epoll_ctl(ep, EPOLL_CTL_ADD, file, &ev), EPERM);
  CHECK_OK(close(file));
  // EPOLLEXCLUSIVE only with ADD.
  ev.events = EPOLLIN | EPOLLEXCLUSIVE;
  CHECK_ERRNO(epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev), EINVAL);
  ev.events = EPOLLIN;
  CHECK_OK(epoll_ctl(ep, EPOLL_CTL_DEL, p[0], NULL));
  CHECK_ERRNO(epoll_ctl(ep, EPOLL_CTL_DEL, p[0], NULL), ENOENT);
  // Creation errors.
  CHECK_ERRNO(epoll_create(0), EINVAL);
  CHECK_ERRNO(epoll_create(-1), EINVAL);
  CHECK_ERRNO(epoll_create1(O_NONBLOCK), EINVAL);
  int e2 = epoll_create(1);
  CHECK(e2 >= 0);
  CHECK_EQ(fcntl(e2, F_GETFD), 0);
  CHECK_EQ(fcntl(ep, F_GETFD), FD_CLOEXEC);
  CHECK_OK(close(e2));
  // epoll_wait on a non-epoll fd.
  CHECK_ERRNO(epoll_wait(p[0], &ev, 1, 0), EINVAL);
  close_pair(p);
  CHECK_OK(close(ep));
}

static volatile sig_atomic_t usr1_count;
static void on_usr1(int sig) {
  (void)sig;
  usr1_count++;
}

TEST(epoll_pwait_signal_mask) {
  int ep = make_epoll();
  int p[2];
  CHECK_OK(pipe(p));
  add(ep, p[0], EPOLLIN, 0);
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_usr1;
  CHECK_OK(sigaction(SIGUSR1, &sa, NULL));
  sigset_t usr1, none;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  sigemptyset(&none);
  CHECK_OK(sigprocmask(SIG_BLOCK, &usr1, NULL));
  usr1_count = 0;
  CHECK_OK(kill(getpid(), SIGUSR1));
  struct epoll_event ev;
  // Keeping it blocked: a plain timeout.
  CHECK_EQ(epoll_pwait(ep, &ev, 1, 10, &usr1), 0);
  CHECK_EQ(epoll_pwait(ep, &ev, 1, 10, NULL), 0);
  CHECK_EQ(usr1_count, 0);
  // Unblocked for the wait only: interrupted, the handler ran.
  CHECK_ERRNO(epoll_pwait(ep, &ev, 1, 5000, &none), EINTR);
  CHECK_EQ(usr1_count, 1);
  // Our mask is back: still blocked.
  sigset_t cur;
  CHECK_OK(sigprocmask(SIG_BLOCK, NULL, &cur));
  CHECK(sigismember(&cur, SIGUSR1));
  // A ready fd wins over nothing pending.
  CHECK_EQ(write(p[1], "x", 1), 1);
  CHECK_EQ(epoll_pwait(ep, &ev, 1, 5000, &none), 1);
  CHECK_OK(sigprocmask(SIG_UNBLOCK, &usr1, NULL));
  sa.sa_handler = SIG_DFL;
  CHECK_OK(sigaction(SIGUSR1, &sa, NULL));
  close_pair(p);
  CHECK_OK(close(ep));
}

TEST(eventfd_member) {
  int ep = make_epoll();
  int efd = eventfd(0, EFD_NONBLOCK);
  CHECK(efd >= 0);
  add(ep, efd, EPOLLIN | EPOLLOUT, 5);
  expect_event(ep, 5, EPOLLOUT);
  uint64_t v = 3;
  CHECK_EQ(write(efd, &v, sizeof(v)), 8);
  expect_event(ep, 5, EPOLLIN | EPOLLOUT);
  CHECK_EQ(read(efd, &v, sizeof(v)), 8);
  CHECK_EQ(v, 3);
  expect_event(ep, 5, EPOLLOUT);
  // At the maximum count it is not writable.
  v = 0xfffffffffffffffeULL;
  CHECK_EQ(write(efd, &v, sizeof(v)), 8);
  expect_event(ep, 5, EPOLLIN);
  CHECK_OK(close(efd));
  CHECK_OK(close(ep));
}

TEST(timerfd_member) {
  int ep = make_epoll();
  int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
  CHECK(tfd >= 0);
  add(ep, tfd, EPOLLIN, 6);
  expect_none(ep);
  struct itimerspec its = {{0, 0}, {10, 0}};
  CHECK_OK(timerfd_settime(tfd, 0, &its, NULL));
  expect_none(ep);  // Armed, not expired.
  its.it_value.tv_sec = 0;
  its.it_value.tv_nsec = 20 * 1000000;
  CHECK_OK(timerfd_settime(tfd, 0, &its, NULL));
  struct epoll_event ev;
  CHECK_EQ(epoll_wait(ep, &ev, 1, 5000), 1);
  CHECK_EQ(ev.data.u64, 6);
  CHECK_EQ(ev.events, EPOLLIN);
  uint64_t n;
  CHECK_EQ(read(tfd, &n, sizeof(n)), 8);
  CHECK_EQ(n, 1);
  expect_none(ep);
  CHECK_OK(close(tfd));
  CHECK_OK(close(ep));
}

TEST(nested_epoll) {
  int inner = make_epoll();
  int outer = make_epoll();
  int p[2];
  CHECK_OK(pipe(p));
  add(inner, p[0], EPOLLIN, 1);
  add(outer, inner, EPOLLIN, 2);
  expect_none(outer);
  CHECK_EQ(write(p[1], "x", 1), 1);
  expect_event(outer, 2, EPOLLIN);
  expect_event(inner, 1, EPOLLIN);
  // Loops are refused.
  struct epoll_event ev = {EPOLLIN, {.u64 = 0}};
  CHECK_ERRNO(epoll_ctl(inner, EPOLL_CTL_ADD, outer, &ev), ELOOP);
  close_pair(p);
  CHECK_OK(close(outer));
  CHECK_OK(close(inner));
}

TEST(registration_belongs_to_the_open_file) {
  int ep = make_epoll();
  int p[2];
  CHECK_OK(pipe(p));
  add(ep, p[0], EPOLLIN, 77);
  // Closing the only fd removes the registration.
  CHECK_OK(close(p[0]));
  expect_none(ep);
  CHECK_OK(close(p[1]));

  // With a dup still open, closing the registered fd number does not:
  // events keep coming with the old tag, but that fd number is gone.
  CHECK_OK(pipe(p));
  add(ep, p[0], EPOLLIN, 78);
  int d = dup(p[0]);
  CHECK(d >= 0);
  CHECK_OK(close(p[0]));
  CHECK_EQ(write(p[1], "y", 1), 1);
  expect_event(ep, 78, EPOLLIN);
  CHECK_ERRNO(epoll_ctl(ep, EPOLL_CTL_DEL, p[0], NULL), EBADF);
  // The dup is a different fd: not registered under its number.
  CHECK_ERRNO(epoll_ctl(ep, EPOLL_CTL_DEL, d, NULL), ENOENT);
  CHECK_OK(close(d));
  expect_none(ep);
  CHECK_OK(close(p[1]));
  CHECK_OK(close(ep));
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  RUN(level_triggered_pipe);
  RUN(edge_triggered_pipe);
  RUN(oneshot_and_rearm);
  RUN(epollout_hup_and_err);
  RUN(timeouts);
  RUN(blocking_wait_wakes_on_data);
  RUN(many_ready_and_maxevents);
  RUN(ctl_errors);
  RUN(epoll_pwait_signal_mask);
  RUN(eventfd_member);
  RUN(timerfd_member);
  RUN(nested_epoll);
  RUN(registration_belongs_to_the_open_file);
  PASS("epoll");
  return 0;
}
