// Anonymous files beyond their own syscalls: memfd_create (I/O, fstat,
// ftruncate, seals, its /proc/self/fd name), and eventfd, timerfd, signalfd
// and epoll under poll/select/ppoll, fstat, fcntl and /proc/self/fd; epoll
// over signalfds, edge-triggered eventfds and epoll_pwait2.
//
// Creates no files.

#include "common.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010
#endif

static void fd_link(int fd, char *buf, size_t size) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
  ssize_t n = readlink(path, buf, size - 1);
  CHECK(n > 0);
  buf[n] = '\0';
}

static short poll_events(int fd, short events) {
  struct pollfd p = {fd, events, 0};
  CHECK(poll(&p, 1, 0) >= 0);
  return p.revents;
}

// --- memfd ---

TEST(memfd_basics) {
  int fd = memfd_create("conf-buffer", MFD_CLOEXEC);
  CHECK(fd >= 0);
  CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
  CHECK_EQ(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDWR);
  char link[256];
  fd_link(fd, link, sizeof(link));
  CHECK(strcmp(link, "/memfd:conf-buffer (deleted)") == 0);
  struct stat st;
  CHECK_OK(fstat(fd, &st));
  CHECK(S_ISREG(st.st_mode));
  CHECK_EQ(st.st_mode & 07777, 0777);
  CHECK_EQ(st.st_size, 0);
  CHECK_EQ(st.st_nlink, 0);
  CHECK_EQ(write(fd, "hello memfd", 11), 11);
  CHECK_OK(fstat(fd, &st));
  CHECK_EQ(st.st_size, 11);
  char buf[32];
  CHECK_EQ(pread(fd, buf, sizeof(buf), 6), 5);
  CHECK(memcmp(buf, "memfd", 5) == 0);
  CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
  CHECK_EQ(read(fd, buf, 5), 5);
  CHECK(memcmp(buf, "hello", 5) == 0);
  CHECK_OK(ftruncate(fd, 4096));
  CHECK_OK(fstat(fd, &st));
  CHECK_EQ(st.st_size, 4096);
  // A private mapping sees the contents.
  char *m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
  CHECK(m != MAP_FAILED);
  CHECK(memcmp(m, "hello memfd", 11) == 0);
  CHECK_OK(munmap(m, 4096));
  // Regular files are always ready, and not for epoll.
  CHECK_EQ(poll_events(fd, POLLIN | POLLOUT), POLLIN | POLLOUT);
  int ep = epoll_create1(0);
  struct epoll_event ev = {EPOLLIN, {.u64 = 0}};
  CHECK_ERRNO(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev), EPERM);
  CHECK_OK(close(ep));
  // Without MFD_ALLOW_SEALING the file is sealed against seals.
  CHECK_EQ(fcntl(fd, F_GET_SEALS), F_SEAL_SEAL);
  CHECK_ERRNO(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE), EPERM);
  CHECK_OK(close(fd));
  // Errors.
  CHECK_ERRNO(memfd_create("x", 0x1000), EINVAL);
  char longname[300];
  memset(longname, 'n', sizeof(longname));
  longname[299] = '\0';
  CHECK_ERRNO(memfd_create(longname, 0), EINVAL);
  longname[249] = '\0';
  fd = memfd_create(longname, 0);
  CHECK(fd >= 0);
  CHECK_OK(close(fd));
  // Seals exist only on memfds.
  int p[2];
  CHECK_OK(pipe(p));
  CHECK_ERRNO(fcntl(p[0], F_GET_SEALS), EINVAL);
  CHECK_OK(close(p[0]));
  CHECK_OK(close(p[1]));
}

// Opening /proc/self/fd/N of a memfd makes a new open file of the same memory file: its own
// offset (0) and access mode, the same contents (fexecve of a script, runc's memfd trick).
TEST(memfd_reopen_through_proc) {
  int fd = memfd_create("reopen", 0);
  CHECK(fd >= 0);
  CHECK_EQ(write(fd, "first", 5), 5);
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
  int ro = open(path, O_RDONLY);
  CHECK(ro >= 0);
  CHECK_EQ(lseek(ro, 0, SEEK_CUR), 0);
  CHECK_EQ(lseek(fd, 0, SEEK_CUR), 5);
  CHECK_EQ(fcntl(ro, F_GETFL) & O_ACCMODE, O_RDONLY);
  char buf[16] = {0};
  CHECK_EQ(read(ro, buf, sizeof(buf)), 5);
  CHECK(memcmp(buf, "first", 5) == 0);
  CHECK_ERRNO(write(ro, "x", 1), EBADF);
  // Writes through one show through the other.
  CHECK_EQ(write(fd, "+more", 5), 5);
  CHECK_EQ(read(ro, buf, sizeof(buf)), 5);
  CHECK(memcmp(buf, "+more", 5) == 0);
  int rw = open(path, O_RDWR);
  CHECK(rw >= 0);
  CHECK_EQ(pwrite(rw, "F", 1, 0), 1);
  CHECK_EQ(pread(fd, buf, 5, 0), 5);
  CHECK(memcmp(buf, "First", 5) == 0);
  CHECK_OK(close(rw));
  CHECK_OK(close(ro));
  CHECK_OK(close(fd));
}

TEST(memfd_seals) {
  int fd = memfd_create("sealed", MFD_ALLOW_SEALING);
  CHECK(fd >= 0);
  CHECK_EQ(fcntl(fd, F_GET_SEALS), 0);
  CHECK_EQ(write(fd, "0123456789", 10), 10);
  // No shrinking: ftruncate down fails, up works.
  CHECK_OK(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK));
  CHECK_ERRNO(ftruncate(fd, 5), EPERM);
  CHECK_OK(ftruncate(fd, 20));
  // No growing: writes past the end and ftruncate up fail, writes inside work.
  CHECK_OK(fcntl(fd, F_ADD_SEALS, F_SEAL_GROW));
  CHECK_EQ(fcntl(fd, F_GET_SEALS), F_SEAL_SHRINK | F_SEAL_GROW);
  CHECK_ERRNO(ftruncate(fd, 40), EPERM);
  CHECK_ERRNO(pwrite(fd, "abc", 3, 19), EPERM);
  CHECK_EQ(pwrite(fd, "abc", 3, 17), 3);
  // No writing at all.
  CHECK_OK(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE));
  CHECK_ERRNO(pwrite(fd, "x", 1, 0), EPERM);
  CHECK_ERRNO(write(fd, "x", 1), EPERM);
  char c;
  CHECK_EQ(pread(fd, &c, 1, 0), 1);
  CHECK_EQ(c, '0');
  // Sealing the seals.
  CHECK_OK(fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL));
  CHECK_ERRNO(fcntl(fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE), EPERM);
  CHECK_ERRNO(fcntl(fd, F_ADD_SEALS, 0x4000), EINVAL);
  CHECK_OK(close(fd));
}

// --- the other anonymous files under poll, select, fstat, /proc ---

TEST(anon_names_and_fstat) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  int fds[4] = {eventfd(0, 0), timerfd_create(CLOCK_MONOTONIC, 0),
                signalfd(-1, &set, 0), epoll_create1(0)};
  const char *names[4] = {"anon_inode:[eventfd]", "anon_inode:[timerfd]",
                          "anon_inode:[signalfd]", "anon_inode:[eventpoll]"};
  for (int i = 0; i < 4; i++) {
    CHECK(fds[i] >= 0);
    char link[64];
    fd_link(fds[i], link, sizeof(link));
    CHECK(strcmp(link, names[i]) == 0);
    struct stat st;
    CHECK_OK(fstat(fds[i], &st));
    CHECK_EQ(st.st_mode, 0600);  // no file type
    CHECK_EQ(st.st_nlink, 1);
    CHECK_EQ(fcntl(fds[i], F_GETFL) & O_ACCMODE, O_RDWR);
    CHECK_EQ(lseek(fds[i], 100, SEEK_SET), 0);  // noop_llseek
  }
  // They all share one inode.
  struct stat a, b;
  CHECK_OK(fstat(fds[0], &a));
  CHECK_OK(fstat(fds[3], &b));
  CHECK_EQ(a.st_ino, b.st_ino);
  CHECK_EQ(a.st_dev, b.st_dev);
  // F_SETFL O_NONBLOCK takes effect.
  CHECK_OK(fcntl(fds[0], F_SETFL, O_NONBLOCK));
  uint64_t v;
  CHECK_ERRNO(read(fds[0], &v, sizeof(v)), EAGAIN);
  // epoll files cannot be read or written.
  CHECK_ERRNO(read(fds[3], &v, sizeof(v)), EINVAL);
  CHECK_ERRNO(write(fds[3], &v, sizeof(v)), EINVAL);
  for (int i = 0; i < 4; i++) CHECK_OK(close(fds[i]));
}

TEST(select_and_ppoll) {
  int efd = eventfd(0, EFD_NONBLOCK);
  int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
  CHECK(efd >= 0 && tfd >= 0);
  fd_set r, w;
  FD_ZERO(&r);
  FD_ZERO(&w);
  FD_SET(efd, &r);
  FD_SET(efd, &w);
  FD_SET(tfd, &r);
  struct timeval tv = {0, 0};
  int maxfd = (efd > tfd ? efd : tfd) + 1;
  CHECK_EQ(select(maxfd, &r, &w, NULL, &tv), 1);  // only writable
  CHECK(!FD_ISSET(efd, &r) && FD_ISSET(efd, &w) && !FD_ISSET(tfd, &r));
  // A timer expiring wakes a blocked select.
  struct itimerspec its = {{0, 0}, {0, 20 * 1000000}};
  CHECK_OK(timerfd_settime(tfd, 0, &its, NULL));
  FD_ZERO(&r);
  FD_SET(efd, &r);
  FD_SET(tfd, &r);
  tv.tv_sec = 5;
  CHECK_EQ(select(maxfd, &r, NULL, NULL, &tv), 1);
  CHECK(FD_ISSET(tfd, &r) && !FD_ISSET(efd, &r));
  // ppoll sees the eventfd count.
  uint64_t one = 1;
  CHECK_EQ(write(efd, &one, 8), 8);
  struct pollfd p[2] = {{efd, POLLIN, 0}, {tfd, POLLIN, 0}};
  struct timespec zero = {0, 0};
  CHECK_EQ(ppoll(p, 2, &zero, NULL), 2);
  CHECK_EQ(p[0].revents, POLLIN);
  CHECK_EQ(p[1].revents, POLLIN);
  CHECK_OK(close(efd));
  CHECK_OK(close(tfd));
}

static void *post_later(void *arg) {
  conf_sleep_ms(20);
  uint64_t v = 1;
  CHECK_EQ(write(*(int *)arg, &v, 8), 8);
  return NULL;
}

TEST(poll_blocks_until_eventfd_write) {
  int efd = eventfd(0, 0);
  CHECK(efd >= 0);
  pthread_t t;
  CHECK_EQ(pthread_create(&t, NULL, post_later, &efd), 0);
  struct pollfd p = {efd, POLLIN, 0};
  CHECK_EQ(poll(&p, 1, 5000), 1);
  CHECK_EQ(p.revents, POLLIN);
  CHECK_EQ(pthread_join(t, NULL), 0);
  CHECK_OK(close(efd));
}

TEST(epoll_over_signalfd) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR2);
  CHECK_OK(sigprocmask(SIG_BLOCK, &set, NULL));
  int sfd = signalfd(-1, &set, SFD_NONBLOCK);
  int ep = epoll_create1(0);
  CHECK(sfd >= 0 && ep >= 0);
  struct epoll_event ev = {EPOLLIN, {.u64 = 42}};
  CHECK_OK(epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev));
  CHECK_EQ(epoll_wait(ep, &ev, 1, 0), 0);
  CHECK_OK(raise(SIGUSR2));
  ev.data.u64 = 0;
  CHECK_EQ(epoll_wait(ep, &ev, 1, 5000), 1);
  CHECK_EQ(ev.data.u64, 42);
  CHECK_EQ(ev.events, EPOLLIN);
  struct signalfd_siginfo si;
  CHECK_EQ(read(sfd, &si, sizeof(si)), 128);
  CHECK_EQ(si.ssi_signo, SIGUSR2);
  CHECK_EQ(epoll_wait(ep, &ev, 1, 0), 0);
  // poll agrees.
  CHECK_EQ(poll_events(sfd, POLLIN), 0);
  CHECK_OK(kill(getpid(), SIGUSR2));
  CHECK_EQ(poll_events(sfd, POLLIN), POLLIN);
  CHECK_EQ(read(sfd, &si, sizeof(si)), 128);
  CHECK_OK(close(ep));
  CHECK_OK(close(sfd));
  CHECK_OK(sigprocmask(SIG_UNBLOCK, &set, NULL));
}

TEST(edge_triggered_eventfd) {
  int efd = eventfd(0, EFD_NONBLOCK);
  int ep = epoll_create1(0);
  CHECK(efd >= 0 && ep >= 0);
  struct epoll_event ev = {EPOLLIN | EPOLLET, {.u64 = 3}};
  CHECK_OK(epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev));
  CHECK_EQ(epoll_wait(ep, &ev, 1, 0), 0);
  uint64_t v = 1;
  CHECK_EQ(write(efd, &v, 8), 8);
  CHECK_EQ(epoll_wait(ep, &ev, 1, 0), 1);
  CHECK_EQ(epoll_wait(ep, &ev, 1, 0), 0);
  // Every write is an edge, even while the count stays readable.
  CHECK_EQ(write(efd, &v, 8), 8);
  CHECK_EQ(epoll_wait(ep, &ev, 1, 0), 1);
  CHECK_EQ(ev.events, EPOLLIN);
  CHECK_EQ(read(efd, &v, 8), 8);
  CHECK_EQ(v, 2);
  CHECK_EQ(epoll_wait(ep, &ev, 1, 0), 0);
  // epoll_pwait2: a timespec timeout.
  struct timespec ts = {0, 20 * 1000000};
  int64_t t0 = conf_now_ns(CLOCK_MONOTONIC);
  CHECK_EQ(syscall(SYS_epoll_pwait2, ep, &ev, 1, &ts, NULL, 8), 0);
  CHECK(conf_now_ns(CLOCK_MONOTONIC) - t0 >= 20 * 1000000LL);
  ts.tv_nsec = 1000000000;
  CHECK_ERRNO(syscall(SYS_epoll_pwait2, ep, &ev, 1, &ts, NULL, 8), EINVAL);
  CHECK_OK(close(ep));
  CHECK_OK(close(efd));
}

TEST(poll_on_epoll_fd) {
  int ep = epoll_create1(0);
  int efd = eventfd(0, 0);
  CHECK(ep >= 0 && efd >= 0);
  struct epoll_event ev = {EPOLLIN, {.u64 = 1}};
  CHECK_OK(epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev));
  CHECK_EQ(poll_events(ep, POLLIN), 0);
  pthread_t t;
  CHECK_EQ(pthread_create(&t, NULL, post_later, &efd), 0);
  struct pollfd p = {ep, POLLIN, 0};
  CHECK_EQ(poll(&p, 1, 5000), 1);
  CHECK_EQ(p.revents, POLLIN);
  CHECK_EQ(pthread_join(t, NULL), 0);
  CHECK_EQ(epoll_wait(ep, &ev, 1, 0), 1);
  CHECK_OK(close(efd));
  CHECK_OK(close(ep));
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  RUN(memfd_basics);
  RUN(memfd_reopen_through_proc);
  RUN(memfd_seals);
  RUN(anon_names_and_fstat);
  RUN(select_and_ppoll);
  RUN(poll_blocks_until_eventfd_write);
  RUN(epoll_over_signalfd);
  RUN(edge_triggered_eventfd);
  RUN(poll_on_epoll_fd);
  PASS("anon_files");
  return 0;
}
