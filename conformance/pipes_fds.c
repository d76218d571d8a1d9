// Pipes and the descriptor table: pipe/pipe2, SIGPIPE, capacity, dup*,
// fcntl, bad descriptors, vectored I/O, character devices, readiness
// (poll/ppoll/select/pselect) and close-on-exec.

#include "common.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>

// Child mode "check-fds CLOSED OPEN_RD OPEN_WR": CLOSED must be gone after
// the exec, the other two must still work.
static int child_main(int argc, char **argv) {
  if (strcmp(argv[1], "check-fds") == 0 && argc == 5) {
    int closed = atoi(argv[2]), rd = atoi(argv[3]), wr = atoi(argv[4]);
    CHECK_ERRNO(fcntl(closed, F_GETFD), EBADF);
    CHECK_EQ(fcntl(rd, F_GETFD), 0);
    CHECK_EQ(fcntl(wr, F_GETFD), 0);
    CHECK_EQ(write(wr, "ok", 2), 2);
    _exit(0);
  }
  fprintf(stderr, "unknown child mode %s\n", argv[1]);
  _exit(2);
}

static int all_bytes(const char *p, size_t len, char c) {
  for (size_t i = 0; i < len; i++) {
    if (p[i] != c) return 0;
  }
  return 1;
}

static void close_pair(int p[2]) {
  CHECK_OK(close(p[0]));
  CHECK_OK(close(p[1]));
}

// --- cases ---

TEST(pipe_roundtrip_and_eof) {
  int p[2];
  CHECK_OK(pipe(p));
  CHECK(p[0] >= 0 && p[1] >= 0 && p[0] != p[1]);
  CHECK_EQ(write(p[1], "hello", 5), 5);
  char buf[100];
  CHECK_EQ(read(p[0], buf, 5), 5);
  CHECK(memcmp(buf, "hello", 5) == 0);
  // A read returns what is there, not what was asked for.
  CHECK_EQ(write(p[1], "abc", 3), 3);
  CHECK_EQ(read(p[0], buf, sizeof(buf)), 3);
  CHECK_EQ(read(p[0], buf, 0), 0);
  CHECK_OK(close(p[1]));
  // All writers gone: EOF, repeatedly.
  CHECK_EQ(read(p[0], buf, sizeof(buf)), 0);
  CHECK_EQ(read(p[0], buf, sizeof(buf)), 0);
  CHECK_OK(close(p[0]));
}

TEST(pipe2_flags) {
  int p[2];
  CHECK_OK(pipe(p));
  CHECK_EQ(fcntl(p[0], F_GETFD), 0);
  CHECK_EQ(fcntl(p[0], F_GETFL) & O_ACCMODE, O_RDONLY);
  CHECK_EQ(fcntl(p[1], F_GETFL) & O_ACCMODE, O_WRONLY);
  CHECK_EQ(fcntl(p[0], F_GETFL) & O_NONBLOCK, 0);
  close_pair(p);

  CHECK_OK(pipe2(p, O_CLOEXEC));
  CHECK_EQ(fcntl(p[0], F_GETFD), FD_CLOEXEC);
  CHECK_EQ(fcntl(p[1], F_GETFD), FD_CLOEXEC);
  CHECK_EQ(fcntl(p[0], F_GETFL) & O_NONBLOCK, 0);
  close_pair(p);

  CHECK_OK(pipe2(p, O_NONBLOCK));
  CHECK_EQ(fcntl(p[0], F_GETFD), 0);
  CHECK(fcntl(p[0], F_GETFL) & O_NONBLOCK);
  CHECK(fcntl(p[1], F_GETFL) & O_NONBLOCK);
  char c;
  // Empty, writer still open: would block.
  CHECK_ERRNO(read(p[0], &c, 1), EAGAIN);
  close_pair(p);

  CHECK_ERRNO(pipe2(p, O_RDWR), EINVAL);
}

TEST(sigpipe_and_epipe) {
  // Default action: the writer dies of SIGPIPE.
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    signal(SIGPIPE, SIG_DFL);
    int p[2];
    CHECK_OK(pipe(p));
    CHECK_OK(close(p[0]));
    write(p[1], "x", 1);
    _exit(0);
  }
  CHECK_KILLED(pid, SIGPIPE);

  int p[2];
  CHECK_OK(pipe(p));
  CHECK_OK(close(p[0]));
  // Ignored: the write just fails.
  signal(SIGPIPE, SIG_IGN);
  CHECK_ERRNO(write(p[1], "x", 1), EPIPE);
  // Blocked: fails too, and the signal is left pending.
  signal(SIGPIPE, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  CHECK_OK(sigprocmask(SIG_BLOCK, &set, NULL));
  CHECK_ERRNO(write(p[1], "x", 1), EPIPE);
  sigset_t pending;
  CHECK_OK(sigpending(&pending));
  CHECK(sigismember(&pending, SIGPIPE));
  struct timespec zero = {0, 0};
  CHECK_EQ(sigtimedwait(&set, NULL, &zero), SIGPIPE);
  CHECK_OK(sigprocmask(SIG_UNBLOCK, &set, NULL));
  CHECK_OK(close(p[1]));
}

TEST(pipe_capacity) {
  int p[2];
  CHECK_OK(pipe2(p, O_NONBLOCK));
  CHECK_EQ(fcntl(p[0], F_GETPIPE_SZ), 65536);
  char chunk[4096];
  size_t total = 0;
  for (int i = 0;; i++) {
    memset(chunk, 'a' + i % 26, sizeof(chunk));
    ssize_t r = write(p[1], chunk, sizeof(chunk));
    if (r == -1) {
      CHECK_EQ(errno, EAGAIN);
      break;
    }
    CHECK_EQ(r, (ssize_t)sizeof(chunk));
    total += (size_t)r;
    CHECK(total <= 65536);
  }
  CHECK_EQ(total, 65536);
  CHECK_ERRNO(write(p[1], "x", 1), EAGAIN);
  int avail = -1;
  CHECK_OK(ioctl(p[0], FIONREAD, &avail));
  CHECK_EQ(avail, 65536);
  // Free one page; a write bigger than PIPE_BUF then goes in partially.
  CHECK_EQ(read(p[0], chunk, sizeof(chunk)), (ssize_t)sizeof(chunk));
  CHECK(all_bytes(chunk, sizeof(chunk), 'a'));
  char big[8192];
  memset(big, 'Z', sizeof(big));
  CHECK_EQ(write(p[1], big, sizeof(big)), 4096);
  CHECK_ERRNO(write(p[1], big, sizeof(big)), EAGAIN);
  // Drain: everything comes out in order.
  for (int i = 1; i < 16; i++) {
    CHECK_EQ(read(p[0], chunk, sizeof(chunk)), (ssize_t)sizeof(chunk));
    CHECK(all_bytes(chunk, sizeof(chunk), (char)('a' + i % 26)));
  }
  CHECK_EQ(read(p[0], chunk, sizeof(chunk)), (ssize_t)sizeof(chunk));
  CHECK(all_bytes(chunk, sizeof(chunk), 'Z'));
  CHECK_ERRNO(read(p[0], chunk, sizeof(chunk)), EAGAIN);
  close_pair(p);
}

TEST(dup_dup2_dup3) {
  int p[2];
  CHECK_OK(pipe(p));
  // dup takes the lowest free descriptor.
  int lowest = dup(p[1]);
  CHECK(lowest >= 0);
  CHECK_OK(close(lowest));
  int d = dup(p[1]);
  CHECK_EQ(d, lowest);
  CHECK_EQ(write(d, "d", 1), 1);
  char c;
  CHECK_EQ(read(p[0], &c, 1), 1);
  CHECK_EQ(c, 'd');

  // Descriptor flags are per descriptor, status flags per open file.
  CHECK_OK(fcntl(p[1], F_SETFD, FD_CLOEXEC));
  int d2 = dup(p[1]);
  CHECK_EQ(fcntl(d2, F_GETFD), 0);
  CHECK_OK(fcntl(p[1], F_SETFL, O_NONBLOCK));
  CHECK(fcntl(d2, F_GETFL) & O_NONBLOCK);
  CHECK_OK(fcntl(p[1], F_SETFL, 0));
  CHECK_EQ(fcntl(d2, F_GETFL) & O_NONBLOCK, 0);

  // dup2 onto an open descriptor closes what was there: here the only
  // write end of another pipe, whose reader then sees EOF.
  int q[2];
  CHECK_OK(pipe(q));
  CHECK_EQ(dup2(p[1], q[1]), q[1]);
  CHECK_EQ(read(q[0], &c, 1), 0);
  CHECK_EQ(write(q[1], "q", 1), 1);  // Now a write end of p.
  CHECK_EQ(read(p[0], &c, 1), 1);
  CHECK_EQ(c, 'q');
  CHECK_EQ(dup2(q[1], q[1]), q[1]);  // Same fd: a no-op when valid.
  CHECK_OK(close(q[1]));
  CHECK_OK(close(q[0]));
  CHECK_ERRNO(dup2(q[1], q[1]), EBADF);
  CHECK_ERRNO(dup2(q[1], 200), EBADF);
  CHECK_ERRNO(dup(q[1]), EBADF);

  // dup3 refuses the same fd and unknown flags, and can set O_CLOEXEC.
  CHECK_ERRNO(dup3(p[1], p[1], 0), EINVAL);
  CHECK_ERRNO(dup3(p[1], 200, O_NONBLOCK), EINVAL);
  CHECK_EQ(dup3(p[1], 200, O_CLOEXEC), 200);
  CHECK_EQ(fcntl(200, F_GETFD), FD_CLOEXEC);
  CHECK_EQ(dup3(p[1], 200, 0), 200);
  CHECK_EQ(fcntl(200, F_GETFD), 0);
  CHECK_OK(close(200));
  CHECK_OK(close(d));
  CHECK_OK(close(d2));
  close_pair(p);
}

TEST(fcntl_dupfd) {
  int p[2];
  CHECK_OK(pipe(p));
  for (int fd = 100; fd < 103; fd++) close(fd);  // Make sure they are free.
  CHECK_EQ(fcntl(p[0], F_DUPFD, 100), 100);
  CHECK_EQ(fcntl(100, F_GETFD), 0);
  CHECK_EQ(fcntl(p[0], F_DUPFD, 100), 101);  // Lowest free >= arg.
  CHECK_EQ(fcntl(p[0], F_DUPFD_CLOEXEC, 100), 102);
  CHECK_EQ(fcntl(102, F_GETFD), FD_CLOEXEC);
  CHECK_OK(close(101));
  CHECK_EQ(fcntl(p[0], F_DUPFD, 100), 101);
  CHECK_ERRNO(fcntl(p[0], F_DUPFD, -1), EINVAL);
  struct rlimit rl;
  CHECK_OK(getrlimit(RLIMIT_NOFILE, &rl));
  CHECK_ERRNO(fcntl(p[0], F_DUPFD, (int)rl.rlim_cur), EINVAL);
  for (int fd = 100; fd < 103; fd++) CHECK_OK(close(fd));
  close_pair(p);
}

TEST(fcntl_flags) {
  int p[2];
  CHECK_OK(pipe(p));
  CHECK_OK(fcntl(p[0], F_SETFL, O_NONBLOCK));
  CHECK(fcntl(p[0], F_GETFL) & O_NONBLOCK);
  char c;
  CHECK_ERRNO(read(p[0], &c, 1), EAGAIN);
  CHECK_OK(fcntl(p[0], F_SETFL, 0));
  CHECK_EQ(fcntl(p[0], F_GETFL) & O_NONBLOCK, 0);
  // F_SETFL cannot change the access mode.
  CHECK_OK(fcntl(p[0], F_SETFL, O_RDWR));
  CHECK_EQ(fcntl(p[0], F_GETFL) & O_ACCMODE, O_RDONLY);

  CHECK_OK(fcntl(p[1], F_SETFD, FD_CLOEXEC));
  CHECK_EQ(fcntl(p[1], F_GETFD), FD_CLOEXEC);
  CHECK_OK(fcntl(p[1], F_SETFD, 0));
  CHECK_EQ(fcntl(p[1], F_GETFD), 0);
  CHECK_ERRNO(fcntl(p[1], 12345), EINVAL);
  close_pair(p);
}

TEST(bad_descriptors) {
  char c = 0;
  CHECK_ERRNO(close(-1), EBADF);
  CHECK_ERRNO(close(1000000), EBADF);
  CHECK_ERRNO(read(-1, &c, 1), EBADF);
  CHECK_ERRNO(write(999, &c, 1), EBADF);
  CHECK_ERRNO(fcntl(999, F_GETFD), EBADF);
  int p[2];
  CHECK_OK(pipe(p));
  // Each end only goes one way.
  CHECK_ERRNO(read(p[1], &c, 1), EBADF);
  CHECK_ERRNO(write(p[0], &c, 1), EBADF);
  close_pair(p);
  CHECK_ERRNO(close(p[0]), EBADF);
  CHECK_ERRNO(read(p[0], &c, 1), EBADF);
}

// Socket calls on files that are not sockets. bash asks getpeername(0) whether stdin is a
// network connection and reads ~/.bashrc unless the answer is ENOTSOCK (or EBADF, ENOTCONN,
// EINVAL).
TEST(socket_calls_on_non_sockets) {
  int p[2];
  CHECK_OK(pipe(p));
  struct sockaddr_storage sa;
  socklen_t len = sizeof(sa);
  CHECK_ERRNO(getpeername(p[0], (struct sockaddr*)&sa, &len), ENOTSOCK);
  len = sizeof(sa);
  CHECK_ERRNO(getsockname(p[1], (struct sockaddr*)&sa, &len), ENOTSOCK);
  int one = 1;
  CHECK_ERRNO(setsockopt(p[0], SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), ENOTSOCK);
  CHECK_ERRNO(shutdown(p[1], SHUT_RDWR), ENOTSOCK);
  CHECK_ERRNO(listen(p[0], 1), ENOTSOCK);
  CHECK_ERRNO(send(p[1], "x", 1, 0), ENOTSOCK);
  char c;
  CHECK_ERRNO(recv(p[0], &c, 1, MSG_DONTWAIT), ENOTSOCK);
  int devnull = open("/dev/null", O_RDWR);
  CHECK(devnull >= 0);
  len = sizeof(sa);
  CHECK_ERRNO(getpeername(devnull, (struct sockaddr*)&sa, &len), ENOTSOCK);
  close(devnull);
  close_pair(p);
  len = sizeof(sa);
  CHECK_ERRNO(getpeername(p[0], (struct sockaddr*)&sa, &len), EBADF);
  CHECK_ERRNO(getpeername(-1, (struct sockaddr*)&sa, &len), EBADF);
}

TEST(readv_writev) {
  int p[2];
  CHECK_OK(pipe(p));
  struct iovec out[3] = {
      {(void *)"ab", 2}, {(void *)"", 0}, {(void *)"cdef", 4}};
  CHECK_EQ(writev(p[1], out, 3), 6);
  char a[1], b[3], c[10];
  memset(c, 0, sizeof(c));
  struct iovec in[3] = {{a, sizeof(a)}, {b, sizeof(b)}, {c, sizeof(c)}};
  CHECK_EQ(readv(p[0], in, 3), 6);
  CHECK_EQ(a[0], 'a');
  CHECK(memcmp(b, "bcd", 3) == 0);
  CHECK(memcmp(c, "ef", 2) == 0);
  CHECK_EQ(writev(p[1], out, 0), 0);
  CHECK_ERRNO(syscall(SYS_writev, p[1], out, IOV_MAX + 1), EINVAL);
  CHECK_ERRNO(syscall(SYS_writev, p[1], out, -1), EINVAL);
  CHECK_OK(close(p[1]));
  CHECK_EQ(readv(p[0], in, 3), 0);
  CHECK_OK(close(p[0]));
}

TEST(pipes_are_not_seekable) {
  int p[2];
  CHECK_OK(pipe(p));
  char c = 'x';
  CHECK_ERRNO(pwrite(p[1], &c, 1, 0), ESPIPE);
  CHECK_ERRNO(pread(p[0], &c, 1, 0), ESPIPE);
  CHECK_ERRNO(lseek(p[0], 0, SEEK_CUR), ESPIPE);
  CHECK_ERRNO(lseek(p[1], 0, SEEK_SET), ESPIPE);
  struct iovec iov = {&c, 1};
  CHECK_ERRNO(preadv(p[0], &iov, 1, 0), ESPIPE);
  close_pair(p);
}

TEST(dev_null_zero_urandom) {
  int fd = open("/dev/null", O_RDWR);
  CHECK(fd >= 0);
  char buf[4096];
  CHECK_EQ(read(fd, buf, sizeof(buf)), 0);
  CHECK_EQ(write(fd, buf, 100), 100);
  CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
  CHECK_OK(close(fd));

  fd = open("/dev/zero", O_RDWR);
  CHECK(fd >= 0);
  memset(buf, 0xff, sizeof(buf));
  CHECK_EQ(read(fd, buf, sizeof(buf)), (ssize_t)sizeof(buf));
  for (size_t i = 0; i < sizeof(buf); i++) CHECK_EQ(buf[i], 0);
  CHECK_EQ(write(fd, buf, 123), 123);
  CHECK_OK(close(fd));

  fd = open("/dev/urandom", O_RDONLY);
  CHECK(fd >= 0);
  unsigned char r1[64], r2[64];
  memset(r1, 0, sizeof(r1));
  memset(r2, 0, sizeof(r2));
  conf_read_full(fd, r1, sizeof(r1));
  conf_read_full(fd, r2, sizeof(r2));
  int nonzero = 0;
  for (size_t i = 0; i < sizeof(r1); i++) nonzero |= r1[i];
  CHECK(nonzero != 0);
  CHECK(memcmp(r1, r2, sizeof(r1)) != 0);
  CHECK_ERRNO(write(fd, r1, 1), EBADF);  // Opened read-only.
  CHECK_OK(close(fd));
}

TEST(poll_pipe_readiness) {
  int p[2];
  CHECK_OK(pipe(p));
  struct pollfd fds[2] = {{p[0], POLLIN, -1}, {p[1], POLLOUT, -1}};
  // Empty: the write end is writable, the read end is not readable.
  CHECK_EQ(poll(fds, 2, 0), 1);
  CHECK_EQ(fds[0].revents, 0);
  CHECK_EQ(fds[1].revents, POLLOUT);
  CHECK_EQ(poll(fds, 1, 0), 0);  // Timeout 0 returns at once.
  CHECK_EQ(write(p[1], "x", 1), 1);
  CHECK_EQ(poll(fds, 2, 0), 2);
  CHECK_EQ(fds[0].revents, POLLIN);
  // Writer gone with data left: readable and hung up; drained: hung up.
  CHECK_OK(close(p[1]));
  CHECK_EQ(poll(fds, 1, 0), 1);
  CHECK_EQ(fds[0].revents, POLLIN | POLLHUP);
  char c;
  CHECK_EQ(read(p[0], &c, 1), 1);
  CHECK_EQ(poll(fds, 1, 0), 1);
  CHECK_EQ(fds[0].revents, POLLHUP);
  CHECK_OK(close(p[0]));

  // Reader gone: the write end reports an error.
  CHECK_OK(pipe(p));
  CHECK_OK(close(p[0]));
  struct pollfd w = {p[1], POLLOUT, 0};
  CHECK_EQ(poll(&w, 1, 0), 1);
  CHECK(w.revents & POLLERR);
  CHECK_OK(close(p[1]));

  // A closed descriptor is POLLNVAL; a negative one is skipped.
  struct pollfd odd[2] = {{p[1], POLLIN, 0}, {-1, POLLIN, 0}};
  CHECK_EQ(poll(odd, 2, 0), 1);
  CHECK_EQ(odd[0].revents, POLLNVAL);
  CHECK_EQ(odd[1].revents, 0);
}

static void *delayed_writer(void *arg) {
  conf_sleep_ms(20);
  CHECK_EQ(write(*(int *)arg, "w", 1), 1);
  return NULL;
}

TEST(poll_blocks_until_ready) {
  int p[2];
  CHECK_OK(pipe(p));
  struct pollfd fd = {p[0], POLLIN, 0};
  int64_t t0 = conf_now_ns(CLOCK_MONOTONIC);
  CHECK_EQ(poll(&fd, 1, 30), 0);
  CHECK(conf_now_ns(CLOCK_MONOTONIC) - t0 >= 30 * 1000000LL);
  pthread_t t;
  CHECK_EQ(pthread_create(&t, NULL, delayed_writer, &p[1]), 0);
  CHECK_EQ(poll(&fd, 1, 5000), 1);
  CHECK_EQ(fd.revents, POLLIN);
  CHECK_EQ(pthread_join(t, NULL), 0);
  close_pair(p);
}

static volatile int usr1_count;
static void usr1_handler(int sig) {
  (void)sig;
  usr1_count++;
}

TEST(ppoll_and_pselect) {
  int p[2];
  CHECK_OK(pipe(p));
  struct pollfd fd = {p[0], POLLIN, 0};
  struct timespec zero = {0, 0};
  CHECK_EQ(ppoll(&fd, 1, &zero, NULL), 0);
  fd_set rd;
  FD_ZERO(&rd);
  FD_SET(p[0], &rd);
  CHECK_EQ(pselect(p[0] + 1, &rd, NULL, NULL, &zero, NULL), 0);
  CHECK(!FD_ISSET(p[0], &rd));

  // The signal mask argument: SIGUSR1 is blocked (and pending) outside,
  // unblocked only for the duration of the wait, which it interrupts.
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = usr1_handler;
  CHECK_OK(sigaction(SIGUSR1, &sa, NULL));
  sigset_t usr1, none;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  sigemptyset(&none);
  CHECK_OK(sigprocmask(SIG_BLOCK, &usr1, NULL));
  usr1_count = 0;
  CHECK_OK(kill(getpid(), SIGUSR1));
  CHECK_EQ(usr1_count, 0);
  struct timespec five = {5, 0};
  CHECK_ERRNO(ppoll(&fd, 1, &five, &none), EINTR);
  CHECK_EQ(usr1_count, 1);
  CHECK_OK(kill(getpid(), SIGUSR1));
  FD_ZERO(&rd);
  FD_SET(p[0], &rd);
  CHECK_ERRNO(pselect(p[0] + 1, &rd, NULL, NULL, &five, &none), EINTR);
  CHECK_EQ(usr1_count, 2);
  CHECK_OK(sigprocmask(SIG_UNBLOCK, &usr1, NULL));
  sa.sa_handler = SIG_DFL;
  CHECK_OK(sigaction(SIGUSR1, &sa, NULL));

  CHECK_EQ(write(p[1], "x", 1), 1);
  CHECK_EQ(ppoll(&fd, 1, NULL, NULL), 1);
  CHECK_EQ(fd.revents, POLLIN);
  FD_ZERO(&rd);
  FD_SET(p[0], &rd);
  CHECK_EQ(pselect(p[0] + 1, &rd, NULL, NULL, NULL, NULL), 1);
  CHECK(FD_ISSET(p[0], &rd));
  close_pair(p);
}

TEST(select_pipe_readiness) {
  int p[2];
  CHECK_OK(pipe(p));
  int nfds = (p[0] > p[1] ? p[0] : p[1]) + 1;
  fd_set rd, wr;
  FD_ZERO(&rd);
  FD_ZERO(&wr);
  FD_SET(p[0], &rd);
  FD_SET(p[1], &wr);
  struct timeval zero = {0, 0};
  CHECK_EQ(select(nfds, &rd, &wr, NULL, &zero), 1);
  CHECK(!FD_ISSET(p[0], &rd));
  CHECK(FD_ISSET(p[1], &wr));
  CHECK_EQ(write(p[1], "x", 1), 1);
  FD_ZERO(&rd);
  FD_SET(p[0], &rd);
  zero.tv_sec = zero.tv_usec = 0;
  CHECK_EQ(select(nfds, &rd, NULL, NULL, &zero), 1);
  CHECK(FD_ISSET(p[0], &rd));
  // Blocks for the timeout when nothing is ready.
  char c;
  CHECK_EQ(read(p[0], &c, 1), 1);
  FD_ZERO(&rd);
  FD_SET(p[0], &rd);
  struct timeval tv = {0, 20000};
  int64_t t0 = conf_now_ns(CLOCK_MONOTONIC);
  CHECK_EQ(select(nfds, &rd, NULL, NULL, &tv), 0);
  CHECK(conf_now_ns(CLOCK_MONOTONIC) - t0 >= 20 * 1000000LL);
  close_pair(p);
  FD_ZERO(&rd);
  FD_SET(p[0], &rd);
  zero.tv_sec = zero.tv_usec = 0;
  CHECK_ERRNO(select(p[0] + 1, &rd, NULL, NULL, &zero), EBADF);
  CHECK_ERRNO(select(-1, NULL, NULL, NULL, &zero), EINVAL);
}

TEST(fork_shares_pipe) {
  int p[2];
  CHECK_OK(pipe(p));
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    // Closing our copy does not affect the parent's.
    CHECK_OK(close(p[0]));
    CHECK_EQ(write(p[1], "child", 5), 5);
    _exit(0);
  }
  CHECK_OK(close(p[1]));
  char buf[16];
  conf_read_full(p[0], buf, 5);
  CHECK(memcmp(buf, "child", 5) == 0);
  // EOF only once the child's copy of the write end is gone too.
  CHECK_EQ(read(p[0], buf, sizeof(buf)), 0);
  CHECK_EXIT(pid, 0);
  CHECK_OK(close(p[0]));
}

TEST(cloexec_closed_across_exec) {
  int a[2], b[2];
  CHECK_OK(pipe2(a, O_CLOEXEC));
  CHECK_OK(pipe(b));
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    char s1[16], s2[16], s3[16];
    snprintf(s1, sizeof(s1), "%d", a[0]);
    snprintf(s2, sizeof(s2), "%d", b[0]);
    snprintf(s3, sizeof(s3), "%d", b[1]);
    execl(conf_self, conf_self, "check-fds", s1, s2, s3, (char *)NULL);
    _exit(127);
  }
  CHECK_EXIT(pid, 0);
  char buf[2];
  conf_read_full(b[0], buf, 2);
  CHECK(memcmp(buf, "ok", 2) == 0);
  // The parent's copies are unaffected.
  CHECK_EQ(fcntl(a[0], F_GETFD), FD_CLOEXEC);
  close_pair(a);
  close_pair(b);
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  if (argc > 1) return child_main(argc, argv);
  RUN(pipe_roundtrip_and_eof);
  RUN(pipe2_flags);
  RUN(sigpipe_and_epipe);
  RUN(pipe_capacity);
  RUN(dup_dup2_dup3);
  RUN(fcntl_dupfd);
  RUN(fcntl_flags);
  RUN(bad_descriptors);
  RUN(socket_calls_on_non_sockets);
  RUN(readv_writev);
  RUN(pipes_are_not_seekable);
  RUN(dev_null_zero_urandom);
  RUN(poll_pipe_readiness);
  RUN(poll_blocks_until_ready);
  RUN(ppoll_and_pselect);
  RUN(select_pipe_readiness);
  RUN(fork_shares_pipe);
  RUN(cloexec_closed_across_exec);
  PASS("pipes_fds");
  return 0;
}
