// No guest operation may hang where Linux returns. Each case runs one
// blocking primitive in a forked child while a thread or another process
// does the releasing action a little later: pipe reads and writes whose other
// end closes mid-call, futex waits woken by private and shared wakes, poll
// and epoll on every kind of file, select and the timeouts of each wait,
// waitid variants, sigtimedwait, timerfd, eventfd, FIFO opens, pty reads,
// flock and F_SETLKW, semop, mq_receive/mq_send, splice, and reads that a
// signal interrupts (EINTR) or restarts (SA_RESTART).
//
// A watchdog turns a hang into a report instead of a stuck test: the child
// arms alarm() with a handler that prints "HANG <case>", and the parent kills
// a child that is still there after a few seconds (a hang no signal can
// interrupt) and prints the same. Every case runs even if an earlier one
// failed; the program fails if any did. (alarm here is the watchdog, not a
// subject: timers.c covers it.)
//
// Works in its own scratch directory (conf_tmpdir) for the FIFO and lock
// cases.
#include "common.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <mqueue.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/select.h>
#include <sys/sem.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <linux/futex.h>
#include <termios.h>

#define DELAY_MS 10
#define WATCHDOG_S 3

static const char *current_case;
static int failures;

static void on_watchdog(int sig) {
  (void)sig;
  char line[128];
  int n = snprintf(line, sizeof(line), "HANG %s\n", current_case);
  (void)!write(1, line, n);
  _exit(3);
}

// Runs `fn` in a child with the watchdog armed; reports "ok", "HANG" or
// "FAIL" for it.
static void run_case(const char *name, void (*fn)(void)) {
  current_case = name;
  fflush(stdout);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    // Background shells may leave signals ignored; the cases need defaults.
    for (int s = 1; s < NSIG; s++) signal(s, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGALRM, on_watchdog);
    signal(SIGPIPE, SIG_IGN);
    alarm(WATCHDOG_S);
    fn();
    _exit(0);
  }
  int status = 0;
  int64_t deadline = conf_now_ns(CLOCK_MONOTONIC) + (WATCHDOG_S + 2) * 1000000000LL;
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    CHECK(r >= 0);
    if (r == pid) break;
    if (conf_now_ns(CLOCK_MONOTONIC) > deadline) {
      kill(pid, SIGKILL);
      CHECK_EQ(waitpid(pid, &status, 0), pid);
      printf("HANG %s (unkillable by its watchdog)\n", name);
      failures++;
      return;
    }
    conf_sleep_ms(2);
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    printf("ok %s\n", name);
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == 3) {
    failures++;  // the child printed its HANG line
  } else {
    printf("FAIL %s (status 0x%x)\n", name, status);
    failures++;
  }
}

// --- Releasing actions, done by a thread after DELAY_MS ---

struct later {
  void (*action)(long);
  long arg;
};

static void *later_thread(void *p) {
  struct later *l = p;
  conf_sleep_ms(DELAY_MS);
  l->action(l->arg);
  return NULL;
}

static void after_delay(void (*action)(long), long arg) {
  static struct later slots[8];
  static int next;
  struct later *l = &slots[next++ % 8];
  l->action = action;
  l->arg = arg;
  pthread_t th;
  CHECK_EQ(pthread_create(&th, NULL, later_thread, l), 0);
  CHECK_EQ(pthread_detach(th), 0);
}

static void do_close(long fd) { CHECK_OK(close((int)fd)); }
static void do_write_byte(long fd) { CHECK_EQ(write((int)fd, "x", 1), 1); }
static void do_eventfd_add(long fd) {
  uint64_t one = 1;
  CHECK_EQ(write((int)fd, &one, 8), 8);
}
static void do_eventfd_take(long fd) {
  uint64_t v;
  CHECK_EQ(read((int)fd, &v, 8), 8);
}
static void do_drain(long fd) {
  static char buf[1 << 16];
  CHECK(read((int)fd, buf, sizeof(buf)) > 0);
}
static void do_kill_self(long sig) { CHECK_OK(kill(getpid(), (int)sig)); }
// To the main thread only: a process-directed signal may go to any thread
// that does not block it, the sender included.
static pid_t main_tid;
static void do_kill_main(long sig) {
  CHECK_OK(syscall(SYS_tgkill, getpid(), main_tid, (int)sig));
}
static void do_remove_sem(long id) { CHECK_OK(semctl((int)id, 0, IPC_RMID)); }
static void on_usr1(int sig);
static void do_create_file(long unused) {
  (void)unused;
  conf_put_file("created", "", 0644);
}
static void do_kill_child_cont(long pid) { CHECK_OK(kill((pid_t)pid, SIGCONT)); }

static int pipe_capacity(int fd) {
  int cap = fcntl(fd, F_GETPIPE_SZ);
  CHECK(cap > 0);
  return cap;
}

static void fill_pipe(int wfd) {
  int fl = fcntl(wfd, F_GETFL);
  CHECK_OK(fcntl(wfd, F_SETFL, fl | O_NONBLOCK));
  static char buf[4096];
  while (write(wfd, buf, sizeof(buf)) > 0) {
  }
  CHECK_EQ(errno, EAGAIN);
  CHECK_OK(fcntl(wfd, F_SETFL, fl));
}

// --- Pipes ---

static void pipe_read_writer_closes(void) {
  int p[2];
  CHECK_OK(pipe(p));
  after_delay(do_close, p[1]);
  char c;
  CHECK_EQ(read(p[0], &c, 1), 0);
}

static void pipe_write_reader_closes(void) {
  int p[2];
  CHECK_OK(pipe(p));
  fill_pipe(p[1]);
  after_delay(do_close, p[0]);
  char c = 'x';
  CHECK_ERRNO(write(p[1], &c, 1), EPIPE);
}

// The reader takes some of a write too big for the pipe, then goes away: the
// write returns what went in (gVisor's BlockPartialWriteClosed).
static int partial_fd;
static void read_some_then_close(long fd) {
  static char buf[8192];
  CHECK_EQ(read((int)fd, buf, sizeof(buf)), (long)sizeof(buf));
  conf_sleep_ms(DELAY_MS);
  CHECK_OK(close((int)fd));
}
static void pipe_partial_write_reader_closes(void) {
  int p[2];
  CHECK_OK(pipe(p));
  partial_fd = p[0];
  int cap = pipe_capacity(p[1]);
  size_t len = 2 * (size_t)cap;
  char *buf = calloc(1, len);
  after_delay(read_some_then_close, p[0]);
  long n = write(p[1], buf, len);
  CHECK_EQ(n, cap + 8192);
  free(buf);
}

static void pipe_write_after_shrink(void) {
  int p[2];
  CHECK_OK(pipe2(p, O_NONBLOCK));
  CHECK_EQ(fcntl(p[1], F_SETPIPE_SZ, 4096), 4096);
  static char buf[16384];
  CHECK_EQ(write(p[1], buf, sizeof(buf)), 4096);
  CHECK_ERRNO(write(p[1], buf, 1), EAGAIN);
  CHECK_EQ(read(p[0], buf, sizeof(buf)), 4096);
  CHECK_EQ(write(p[1], buf, 100), 100);
  // Blocking now: the reader makes room later.
  CHECK_OK(fcntl(p[1], F_SETFL, 0));
  CHECK_EQ(write(p[1], buf, 4096 - 100), 4096 - 100);
  after_delay(do_drain, p[0]);
  CHECK_EQ(write(p[1], buf, 4096), 4096);
}

// An open /proc/PID/fdinfo/N file does not keep the pipe end N open.
static void pipe_closed_with_fdinfo_open(void) {
  int p[2];
  CHECK_OK(pipe(p));
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", p[1]);
  int info = open(path, O_RDONLY);
  CHECK(info >= 0);
  after_delay(do_close, p[1]);
  char c;
  CHECK_EQ(read(p[0], &c, 1), 0);
  CHECK_OK(close(info));
}

// --- poll and epoll on every kind of file ---

static void poll_wait(int fd, short events, short want) {
  struct pollfd pfd = {fd, events, 0};
  CHECK_EQ(poll(&pfd, 1, -1), 1);
  CHECK_EQ(pfd.revents & want, want);
}

static void poll_rdnorm_only(void) {
  int p[2];
  CHECK_OK(pipe(p));
  after_delay(do_write_byte, p[1]);
  poll_wait(p[0], POLLRDNORM, POLLRDNORM);
  struct pollfd pfd = {p[0], POLLRDNORM, 0};
  CHECK_EQ(poll(&pfd, 1, 0), 1);
  CHECK_EQ(pfd.revents, POLLRDNORM);
}

static void poll_wrnorm_only(void) {
  int p[2];
  CHECK_OK(pipe(p));
  fill_pipe(p[1]);
  struct pollfd pfd = {p[1], POLLWRNORM, 0};
  CHECK_EQ(poll(&pfd, 1, 0), 0);
  after_delay(do_drain, p[0]);
  poll_wait(p[1], POLLWRNORM, POLLWRNORM);
  CHECK_EQ(poll(&pfd, 1, 0), 1);
  CHECK_EQ(pfd.revents, POLLWRNORM);
}

static void poll_hup_when_writer_closes(void) {
  int p[2];
  CHECK_OK(pipe(p));
  after_delay(do_close, p[1]);
  poll_wait(p[0], POLLIN, POLLHUP);
}

static void epoll_wait_one(int fd, uint32_t events) {
  int ep = epoll_create1(0);
  CHECK(ep >= 0);
  struct epoll_event ev = {.events = events, .data.fd = fd};
  CHECK_OK(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
  struct epoll_event out;
  CHECK_EQ(epoll_wait(ep, &out, 1, -1), 1);
  CHECK_EQ(out.data.fd, fd);
  CHECK(out.events & events);
  CHECK_OK(close(ep));
}

static void epoll_pipe(void) {
  int p[2];
  CHECK_OK(pipe(p));
  after_delay(do_write_byte, p[1]);
  epoll_wait_one(p[0], EPOLLIN);
}

static void epoll_pipe_writer(void) {
  int p[2];
  CHECK_OK(pipe(p));
  fill_pipe(p[1]);
  after_delay(do_drain, p[0]);
  epoll_wait_one(p[1], EPOLLOUT);
}

static void epoll_eventfd(void) {
  int e = eventfd(0, 0);
  CHECK(e >= 0);
  after_delay(do_eventfd_add, e);
  epoll_wait_one(e, EPOLLIN);
  poll_wait(e, POLLIN, POLLIN);
}

static int armed_timerfd(void) {
  int t = timerfd_create(CLOCK_MONOTONIC, 0);
  CHECK(t >= 0);
  struct itimerspec its = {{0, 0}, {0, DELAY_MS * 1000000L}};
  CHECK_OK(timerfd_settime(t, 0, &its, NULL));
  return t;
}

static void epoll_timerfd(void) {
  int t = armed_timerfd();
  epoll_wait_one(t, EPOLLIN);
  int t2 = armed_timerfd();
  poll_wait(t2, POLLIN, POLLIN);
}

static void epoll_signalfd(void) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  CHECK_OK(sigprocmask(SIG_BLOCK, &set, NULL));
  int s = signalfd(-1, &set, 0);
  CHECK(s >= 0);
  after_delay(do_kill_self, SIGUSR1);
  epoll_wait_one(s, EPOLLIN);
  struct signalfd_siginfo si;
  CHECK_EQ(read(s, &si, sizeof(si)), (long)sizeof(si));
  CHECK_EQ(si.ssi_signo, SIGUSR1);
  after_delay(do_kill_self, SIGUSR1);
  poll_wait(s, POLLIN, POLLIN);
}

static int open_pty(int *slave) {
  int m = posix_openpt(O_RDWR | O_NOCTTY);
  CHECK(m >= 0);
  CHECK_OK(grantpt(m));
  CHECK_OK(unlockpt(m));
  *slave = open(ptsname(m), O_RDWR | O_NOCTTY);
  CHECK(*slave >= 0);
  return m;
}

static void epoll_pty(void) {
  int s;
  int m = open_pty(&s);
  after_delay(do_write_byte, s);
  epoll_wait_one(m, EPOLLIN);
  char c;
  CHECK_EQ(read(m, &c, 1), 1);
  // The other way: the slave sees a line the master types.
  struct termios t;
  CHECK_OK(tcgetattr(s, &t));
  cfmakeraw(&t);
  CHECK_OK(tcsetattr(s, TCSANOW, &t));
  after_delay(do_write_byte, m);
  epoll_wait_one(s, EPOLLIN);
  poll_wait(s, POLLIN, POLLIN);
}

static void epoll_inotify_and_nested_epoll(void) {
  int in = inotify_init1(0);
  CHECK(in >= 0);
  CHECK(inotify_add_watch(in, ".", IN_CREATE) >= 0);
  int inner = epoll_create1(0);
  CHECK(inner >= 0);
  struct epoll_event ev = {.events = EPOLLIN, .data.fd = in};
  CHECK_OK(epoll_ctl(inner, EPOLL_CTL_ADD, in, &ev));
  after_delay(do_create_file, 0);
  // The outer epoll waits on the inner one, which waits on inotify.
  epoll_wait_one(inner, EPOLLIN);
  poll_wait(in, POLLIN | POLLRDNORM, POLLIN | POLLRDNORM);
  CHECK_OK(unlink("created"));
}

static void pty_master_read_slave_closes(void) {
  int s;
  int m = open_pty(&s);
  after_delay(do_close, s);
  char c;
  CHECK_ERRNO(read(m, &c, 1), EIO);
  poll_wait(m, POLLIN, POLLHUP);
}

// --- eventfd and timerfd reads and writes ---

static void eventfd_read_blocks(void) {
  int e = eventfd(0, 0);
  CHECK(e >= 0);
  after_delay(do_eventfd_add, e);
  uint64_t v;
  CHECK_EQ(read(e, &v, 8), 8);
  CHECK_EQ(v, 1);
}

static void eventfd_write_blocks(void) {
  int e = eventfd(0, 0);
  CHECK(e >= 0);
  uint64_t big = 0xfffffffffffffffeULL;  // the largest count
  CHECK_EQ(write(e, &big, 8), 8);
  after_delay(do_eventfd_take, e);
  uint64_t one = 1;
  CHECK_EQ(write(e, &one, 8), 8);
}

static void timerfd_read_blocks(void) {
  int t = armed_timerfd();
  uint64_t n;
  CHECK_EQ(read(t, &n, 8), 8);
  CHECK_EQ(n, 1);
}

// --- futexes ---

static void *futex_waker(void *p) {
  int *word = p;
  conf_sleep_ms(DELAY_MS);
  __atomic_store_n(word, 1, __ATOMIC_SEQ_CST);
  syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
  return NULL;
}

static void futex_private_wake(void) {
  static int word;
  pthread_t th;
  CHECK_EQ(pthread_create(&th, NULL, futex_waker, &word), 0);
  while (__atomic_load_n(&word, __ATOMIC_SEQ_CST) == 0) {
    long r = syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
    CHECK(r == 0 || errno == EAGAIN || errno == EINTR);
  }
  CHECK_EQ(pthread_join(th, NULL), 0);
}

// Two processes wait on a MAP_SHARED word; a third process wakes them, one
// FUTEX_WAKE each.
static void futex_shared_two_wakes(void) {
  int *word = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  CHECK(word != MAP_FAILED);
  pid_t waiters[2];
  for (int i = 0; i < 2; i++) {
    waiters[i] = fork();
    CHECK(waiters[i] >= 0);
    if (waiters[i] == 0) {
      while (__atomic_load_n(&word[0], __ATOMIC_SEQ_CST) == 0) {
        __atomic_fetch_add(&word[1], 1, __ATOMIC_SEQ_CST);
        long r = syscall(SYS_futex, &word[0], FUTEX_WAIT, 0, NULL, NULL, 0);
        CHECK(r == 0 || errno == EAGAIN || errno == EINTR);
      }
      _exit(0);
    }
  }
  // Both have announced themselves (they may not be asleep yet: then their
  // FUTEX_WAIT sees the new value and returns EAGAIN).
  while (__atomic_load_n(&word[1], __ATOMIC_SEQ_CST) < 2) conf_sleep_ms(1);
  conf_sleep_ms(DELAY_MS);
  pid_t waker = fork();
  CHECK(waker >= 0);
  if (waker == 0) {
    __atomic_store_n(&word[0], 1, __ATOMIC_SEQ_CST);
    CHECK(syscall(SYS_futex, &word[0], FUTEX_WAKE, 1, NULL, NULL, 0) >= 0);
    CHECK(syscall(SYS_futex, &word[0], FUTEX_WAKE, 1, NULL, NULL, 0) >= 0);
    _exit(0);
  }
  CHECK_EXIT(waker, 0);
  CHECK_EXIT(waiters[0], 0);
  CHECK_EXIT(waiters[1], 0);
}

// --- waitid without WEXITED ---

// A child that stops after DELAY_MS and, once continued, exits with `code`
// when its parent writes to `*go` (so that its exit cannot overtake the
// report of its continuation).
static pid_t stopping_child(int code, int *go) {
  int p[2];
  CHECK_OK(pipe(p));
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    conf_sleep_ms(DELAY_MS);
    raise(SIGSTOP);
    char c;
    CHECK_EQ(read(p[0], &c, 1), 1);
    _exit(code);
  }
  CHECK_OK(close(p[0]));
  *go = p[1];
  return pid;
}

static void waitid_stopped_continued(void) {
  int go;
  pid_t pid = stopping_child(7, &go);
  siginfo_t si;
  memset(&si, 0, sizeof(si));
  CHECK_OK(waitid(P_PID, pid, &si, WSTOPPED | WNOWAIT));
  CHECK_EQ(si.si_code, CLD_STOPPED);
  memset(&si, 0, sizeof(si));
  CHECK_OK(waitid(P_PID, pid, &si, WSTOPPED));
  CHECK_EQ(si.si_code, CLD_STOPPED);
  CHECK_EQ(si.si_status, SIGSTOP);
  CHECK_EQ(si.si_pid, pid);
  // Once reported, the stop is not reported again.
  memset(&si, 0, sizeof(si));
  CHECK_OK(waitid(P_PID, pid, &si, WSTOPPED | WNOHANG));
  CHECK_EQ(si.si_pid, 0);
  after_delay(do_kill_child_cont, pid);
  memset(&si, 0, sizeof(si));
  CHECK_OK(waitid(P_PID, pid, &si, WCONTINUED | WNOWAIT));
  CHECK_EQ(si.si_code, CLD_CONTINUED);
  memset(&si, 0, sizeof(si));
  CHECK_OK(waitid(P_PID, pid, &si, WCONTINUED));
  CHECK_EQ(si.si_code, CLD_CONTINUED);
  after_delay(do_write_byte, go);
  // WEXITED with WNOWAIT leaves a zombie the next wait reaps.
  memset(&si, 0, sizeof(si));
  CHECK_OK(waitid(P_PID, pid, &si, WEXITED | WNOWAIT));
  CHECK_EQ(si.si_code, CLD_EXITED);
  CHECK_EQ(si.si_status, 7);
  CHECK_EXIT(pid, 7);
}

// A child that stops only later: waitid(WSTOPPED) must wait for it.
static void waitid_waits_for_stop(void) {
  int go;
  pid_t pid = stopping_child(0, &go);
  int status;
  CHECK_EQ(waitpid(pid, &status, WUNTRACED), pid);
  CHECK(WIFSTOPPED(status));
  CHECK_OK(kill(pid, SIGCONT));
  CHECK_EQ(waitpid(pid, &status, WCONTINUED), pid);
  CHECK(WIFCONTINUED(status));
  CHECK_EQ(write(go, "x", 1), 1);
  CHECK_EXIT(pid, 0);
  // Nothing left to wait for.
  siginfo_t si;
  CHECK_ERRNO(waitid(P_ALL, 0, &si, WEXITED), ECHILD);
}

// A wait for stops or continues alone ends with ECHILD when the child exits
// instead: a zombie will never stop again.
static void waitid_stop_child_exits(void) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    conf_sleep_ms(DELAY_MS);
    _exit(5);
  }
  siginfo_t si;
  CHECK_ERRNO(waitid(P_PID, pid, &si, WSTOPPED | WCONTINUED), ECHILD);
  CHECK_EXIT(pid, 5);
}

// --- Signals and timers ---

static void sigtimedwait_times_out(void) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR2);
  CHECK_OK(sigprocmask(SIG_BLOCK, &set, NULL));
  struct timespec ts = {0, DELAY_MS * 1000000L};
  CHECK_ERRNO(sigtimedwait(&set, NULL, &ts), EAGAIN);
  struct timespec zero = {0, 0};
  CHECK_ERRNO(sigtimedwait(&set, NULL, &zero), EAGAIN);
}

static void sigtimedwait_gets_signal(void) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR2);
  CHECK_OK(sigprocmask(SIG_BLOCK, &set, NULL));
  after_delay(do_kill_self, SIGUSR2);
  struct timespec ts = {WATCHDOG_S + 5, 0};
  siginfo_t si;
  CHECK_EQ(sigtimedwait(&set, &si, &ts), SIGUSR2);
  CHECK_EQ(si.si_signo, SIGUSR2);
  // From another process this time, with no timeout at all.
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    conf_sleep_ms(DELAY_MS);
    CHECK_OK(kill(getppid(), SIGUSR2));
    _exit(0);
  }
  CHECK_EQ(sigwaitinfo(&set, &si), SIGUSR2);
  CHECK_EQ(si.si_pid, pid);
  CHECK_EXIT(pid, 0);
}

static void posix_timer_signal_wait(void) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGRTMIN);
  CHECK_OK(sigprocmask(SIG_BLOCK, &set, NULL));
  struct sigevent sev;
  memset(&sev, 0, sizeof(sev));
  sev.sigev_notify = SIGEV_SIGNAL;
  sev.sigev_signo = SIGRTMIN;
  timer_t tid;
  CHECK_OK(timer_create(CLOCK_MONOTONIC, &sev, &tid));
  struct itimerspec its = {{0, 0}, {0, DELAY_MS * 1000000L}};
  CHECK_OK(timer_settime(tid, 0, &its, NULL));
  siginfo_t si;
  CHECK_EQ(sigwaitinfo(&set, &si), SIGRTMIN);
  CHECK_EQ(si.si_code, SI_TIMER);
  struct timespec ts = {0, DELAY_MS * 1000000L};
  CHECK_OK(nanosleep(&ts, NULL));
  CHECK_OK(clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL));
}

// --- FIFOs ---

static void open_fifo_later(long mode) {
  int fd = open("fifo", (int)mode);
  CHECK(fd >= 0);
  conf_sleep_ms(DELAY_MS);
  CHECK_OK(close(fd));
}

static void fifo_open_waits_for_partner(void) {
  unlink("fifo");
  CHECK_OK(mkfifo("fifo", 0600));
  // Non-blocking opens never wait: a reader opens at once, a writer with no
  // reader gets ENXIO.
  CHECK_ERRNO(open("fifo", O_WRONLY | O_NONBLOCK), ENXIO);
  int r = open("fifo", O_RDONLY | O_NONBLOCK);
  CHECK(r >= 0);
  int w = open("fifo", O_WRONLY | O_NONBLOCK);
  CHECK(w >= 0);
  CHECK_OK(close(w));
  CHECK_OK(close(r));
  // A lone reader waits for a writer; a lone writer for a reader.
  after_delay(open_fifo_later, O_WRONLY);
  r = open("fifo", O_RDONLY);
  CHECK(r >= 0);
  char c;
  CHECK_EQ(read(r, &c, 1), 0);  // the writer came and went
  CHECK_OK(close(r));
  after_delay(open_fifo_later, O_RDONLY);
  w = open("fifo", O_WRONLY);
  CHECK(w >= 0);
  CHECK_OK(close(w));
  // O_RDWR is both ends and never waits.
  int rw = open("fifo", O_RDWR);
  CHECK(rw >= 0);
  CHECK_OK(close(rw));
  // From another process: the reader's open returns once the writer's does.
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    conf_sleep_ms(DELAY_MS);
    int fd = open("fifo", O_WRONLY);
    CHECK(fd >= 0);
    CHECK_EQ(write(fd, "y", 1), 1);
    _exit(0);
  }
  r = open("fifo", O_RDONLY);
  CHECK(r >= 0);
  CHECK_EQ(read(r, &c, 1), 1);
  CHECK_EQ(c, 'y');
  CHECK_EXIT(pid, 0);
  CHECK_EQ(read(r, &c, 1), 0);
  CHECK_OK(close(r));
  CHECK_OK(unlink("fifo"));
}

// A blocked FIFO open is interrupted by a signal with a handler (EINTR
// without SA_RESTART).
static void on_usr1(int sig) { (void)sig; }
static void fifo_open_interrupted(void) {
  unlink("fifo2");
  CHECK_OK(mkfifo("fifo2", 0600));
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_usr1;
  CHECK_OK(sigaction(SIGUSR1, &sa, NULL));
  main_tid = conf_gettid();
  after_delay(do_kill_main, SIGUSR1);
  CHECK_ERRNO(open("fifo2", O_RDONLY), EINTR);
  CHECK_OK(unlink("fifo2"));
}


// --- Locks, IPC, select, splice, signals interrupting reads ---

static void unlock_flock(long fd) { CHECK_OK(flock((int)fd, LOCK_UN)); }

static void flock_waits_for_unlock(void) {
  conf_put_file("locked", "", 0644);
  int a = open("locked", O_RDONLY);
  int b = open("locked", O_RDONLY);
  CHECK(a >= 0 && b >= 0);
  CHECK_OK(flock(a, LOCK_EX));
  CHECK_ERRNO(flock(b, LOCK_EX | LOCK_NB), EWOULDBLOCK);
  after_delay(unlock_flock, a);
  CHECK_OK(flock(b, LOCK_EX));
  CHECK_OK(unlink("locked"));
}

static void setlkw_waits_for_other_process(void) {
  conf_put_file("rec", "0123456789", 0644);
  int fd = open("rec", O_RDWR);
  CHECK(fd >= 0);
  int ready[2];
  CHECK_OK(pipe(ready));
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 5};
    CHECK_OK(fcntl(fd, F_SETLK, &fl));
    CHECK_EQ(write(ready[1], "r", 1), 1);
    conf_sleep_ms(DELAY_MS);
    _exit(0);  // exiting drops the lock
  }
  char c;
  CHECK_EQ(read(ready[0], &c, 1), 1);
  struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 2, .l_len = 1};
  CHECK_OK(fcntl(fd, F_SETLKW, &fl));
  CHECK_EXIT(pid, 0);
  CHECK_OK(unlink("rec"));
}

static void select_and_pselect(void) {
  int p[2];
  CHECK_OK(pipe(p));
  after_delay(do_write_byte, p[1]);
  fd_set rd;
  FD_ZERO(&rd);
  FD_SET(p[0], &rd);
  CHECK_EQ(select(p[0] + 1, &rd, NULL, NULL, NULL), 1);
  CHECK(FD_ISSET(p[0], &rd));
  char c;
  CHECK_EQ(read(p[0], &c, 1), 1);
  // Timeouts end the waits with nothing ready.
  FD_ZERO(&rd);
  FD_SET(p[0], &rd);
  struct timeval tv = {0, DELAY_MS * 1000};
  CHECK_EQ(select(p[0] + 1, &rd, NULL, NULL, &tv), 0);
  struct timespec ts = {0, DELAY_MS * 1000000L};
  FD_SET(p[0], &rd);
  CHECK_EQ(pselect(p[0] + 1, &rd, NULL, NULL, &ts, NULL), 0);
  struct pollfd pfd = {p[0], POLLIN, 0};
  CHECK_EQ(ppoll(&pfd, 1, &ts, NULL), 0);
  int ep = epoll_create1(0);
  struct epoll_event ev = {.events = EPOLLIN, .data.fd = p[0]};
  CHECK_OK(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev));
  CHECK_EQ(epoll_wait(ep, &ev, 1, DELAY_MS), 0);
}

static void splice_waits_for_data(void) {
  int in[2], out[2];
  CHECK_OK(pipe(in));
  CHECK_OK(pipe(out));
  after_delay(do_write_byte, in[1]);
  CHECK_EQ(splice(in[0], NULL, out[1], NULL, 16, 0), 1);
  after_delay(do_close, in[1]);
  CHECK_EQ(splice(in[0], NULL, out[1], NULL, 16, 0), 0);
}

static void semop_waits_for_post(void) {
  int id = semget(IPC_PRIVATE, 1, 0600);
  CHECK(id >= 0);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    conf_sleep_ms(DELAY_MS);
    struct sembuf up = {0, 1, 0};
    CHECK_OK(semop(id, &up, 1));
    _exit(0);
  }
  struct sembuf down = {0, -1, 0};
  CHECK_OK(semop(id, &down, 1));
  CHECK_EXIT(pid, 0);
  // Removing the set wakes a waiter with EIDRM.
  after_delay(do_remove_sem, id);
  CHECK_ERRNO(semop(id, &down, 1), EIDRM);
}

static void mq_receive_waits(void) {
  struct mq_attr attr = {.mq_maxmsg = 1, .mq_msgsize = 8};
  mq_unlink("/conf_blocking");
  mqd_t q = mq_open("/conf_blocking", O_RDWR | O_CREAT, 0600, &attr);
  CHECK(q != (mqd_t)-1);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    conf_sleep_ms(DELAY_MS);
    CHECK_OK(mq_send(q, "m", 1, 0));
    conf_sleep_ms(DELAY_MS);
    char buf[8];
    CHECK_EQ(mq_receive(q, buf, sizeof(buf), NULL), 1);
    _exit(0);
  }
  char buf[8];
  CHECK_EQ(mq_receive(q, buf, sizeof(buf), NULL), 1);
  // A full queue makes the sender wait for the child's receive.
  CHECK_OK(mq_send(q, "a", 1, 0));
  CHECK_OK(mq_send(q, "b", 1, 0));
  CHECK_EXIT(pid, 0);
  CHECK_OK(mq_close(q));
  CHECK_OK(mq_unlink("/conf_blocking"));
}

// A blocked read ends with EINTR for a handler without SA_RESTART, and goes
// on (then gets its data) with SA_RESTART.
static void read_interrupted_and_restarted(void) {
  int p[2];
  CHECK_OK(pipe(p));
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_usr1;
  CHECK_OK(sigaction(SIGUSR1, &sa, NULL));
  main_tid = conf_gettid();
  after_delay(do_kill_main, SIGUSR1);
  char c;
  CHECK_ERRNO(read(p[0], &c, 1), EINTR);
  sa.sa_flags = SA_RESTART;
  CHECK_OK(sigaction(SIGUSR1, &sa, NULL));
  after_delay(do_kill_main, SIGUSR1);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    conf_sleep_ms(4 * DELAY_MS);
    CHECK_EQ(write(p[1], "z", 1), 1);
    _exit(0);
  }
  CHECK_EQ(read(p[0], &c, 1), 1);
  CHECK_EQ(c, 'z');
  CHECK_EXIT(pid, 0);
}

static void pty_slave_read_master_closes(void) {
  int s;
  int m = open_pty(&s);
  after_delay(do_close, m);
  char c;
  long r = read(s, &c, 1);
  CHECK(r == 0 || (r == -1 && errno == EIO));
  poll_wait(s, POLLIN, POLLHUP);
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  conf_tmpdir("blocking");
  run_case("pipe_read_writer_closes", pipe_read_writer_closes);
  run_case("pipe_write_reader_closes", pipe_write_reader_closes);
  run_case("pipe_partial_write_reader_closes", pipe_partial_write_reader_closes);
  run_case("pipe_write_after_shrink", pipe_write_after_shrink);
  run_case("pipe_closed_with_fdinfo_open", pipe_closed_with_fdinfo_open);
  run_case("poll_rdnorm_only", poll_rdnorm_only);
  run_case("poll_wrnorm_only", poll_wrnorm_only);
  run_case("poll_hup_when_writer_closes", poll_hup_when_writer_closes);
  run_case("epoll_pipe", epoll_pipe);
  run_case("epoll_pipe_writer", epoll_pipe_writer);
  run_case("epoll_eventfd", epoll_eventfd);
  run_case("epoll_timerfd", epoll_timerfd);
  run_case("epoll_signalfd", epoll_signalfd);
  run_case("epoll_pty", epoll_pty);
  run_case("epoll_inotify_and_nested_epoll", epoll_inotify_and_nested_epoll);
  run_case("pty_master_read_slave_closes", pty_master_read_slave_closes);
  run_case("eventfd_read_blocks", eventfd_read_blocks);
  run_case("eventfd_write_blocks", eventfd_write_blocks);
  run_case("timerfd_read_blocks", timerfd_read_blocks);
  run_case("futex_private_wake", futex_private_wake);
  run_case("futex_shared_two_wakes", futex_shared_two_wakes);
  run_case("waitid_stopped_continued", waitid_stopped_continued);
  run_case("waitid_waits_for_stop", waitid_waits_for_stop);
  run_case("waitid_stop_child_exits", waitid_stop_child_exits);
  run_case("sigtimedwait_times_out", sigtimedwait_times_out);
  run_case("sigtimedwait_gets_signal", sigtimedwait_gets_signal);
  run_case("posix_timer_signal_wait", posix_timer_signal_wait);
  run_case("fifo_open_waits_for_partner", fifo_open_waits_for_partner);
  run_case("fifo_open_interrupted", fifo_open_interrupted);
  run_case("flock_waits_for_unlock", flock_waits_for_unlock);
  run_case("setlkw_waits_for_other_process", setlkw_waits_for_other_process);
  run_case("select_and_pselect", select_and_pselect);
  run_case("splice_waits_for_data", splice_waits_for_data);
  run_case("semop_waits_for_post", semop_waits_for_post);
  run_case("mq_receive_waits", mq_receive_waits);
  run_case("read_interrupted_and_restarted", read_interrupted_and_restarted);
  run_case("pty_slave_read_master_closes", pty_slave_read_master_closes);
  conf_tmpdir_remove();
  if (failures) {
    fprintf(stderr, "FAIL blocking: %d case(s) hung or failed\n", failures);
    return 1;
  }
  PASS("blocking");
  return 0;
}
