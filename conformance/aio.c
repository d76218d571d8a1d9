// Linux native AIO (io_setup, io_submit, io_getevents, io_pgetevents, io_cancel,
// io_destroy) through raw syscalls: argument errors, reads and writes on a tmpfs (memfd)
// file and a file in a scratch directory under /tmp, vectored I/O, fsync, eventfd
// notification, IOCB_CMD_POLL on a pipe, pipe reads, timeouts, cancellation, destroy with
// outstanding requests, the ring header, and fork.
//
// Writes files under a scratch directory in /tmp, removed at the end.

#include "common.h"

#include <linux/aio_abi.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>

static long io_setup(unsigned nr, aio_context_t *ctx) { return syscall(SYS_io_setup, nr, ctx); }
static long io_destroy(aio_context_t ctx) { return syscall(SYS_io_destroy, ctx); }
static long io_submit(aio_context_t ctx, long nr, struct iocb **iocbs) {
  return syscall(SYS_io_submit, ctx, nr, iocbs);
}
static long io_cancel(aio_context_t ctx, struct iocb *iocb, struct io_event *ev) {
  return syscall(SYS_io_cancel, ctx, iocb, ev);
}
static long io_getevents(aio_context_t ctx, long min_nr, long nr, struct io_event *ev,
                         struct timespec *ts) {
  return syscall(SYS_io_getevents, ctx, min_nr, nr, ev, ts);
}

// The ring header Linux maps at the context id.
struct ring_header {
  unsigned id, nr, head, tail, magic, compat_features, incompat_features, header_length;
};

static aio_context_t setup(unsigned nr) {
  aio_context_t ctx = 0;
  CHECK_EQ(io_setup(nr, &ctx), 0);
  CHECK(ctx != 0);
  return ctx;
}

static struct iocb make_cb(int op, int fd, void *buf, size_t n, long long off) {
  struct iocb cb;
  memset(&cb, 0, sizeof(cb));
  cb.aio_lio_opcode = op;
  cb.aio_fildes = fd;
  cb.aio_buf = (uint64_t)(uintptr_t)buf;
  cb.aio_nbytes = n;
  cb.aio_offset = off;
  return cb;
}

static long submit1(aio_context_t ctx, struct iocb *cb) {
  struct iocb *p = cb;
  return io_submit(ctx, 1, &p);
}

// Waits (up to 5 s) for exactly one event and checks that it is `cb`'s.
static struct io_event wait1(aio_context_t ctx, struct iocb *cb) {
  struct io_event ev;
  struct timespec ts = {5, 0};
  CHECK_EQ(io_getevents(ctx, 1, 1, &ev, &ts), 1);
  CHECK_EQ(ev.obj, (uint64_t)(uintptr_t)cb);
  CHECK_EQ(ev.data, cb->aio_data);
  return ev;
}

static long getevents0(aio_context_t ctx, struct io_event *ev, long nr) {
  struct timespec zero = {0, 0};
  return io_getevents(ctx, 0, nr, ev, &zero);
}

TEST(setup_errors) {
  aio_context_t ctx = 1;
  CHECK_ERRNO(io_setup(8, &ctx), EINVAL);  // *ctxp must be 0
  ctx = 0;
  CHECK_ERRNO(io_setup(0, &ctx), EINVAL);
  CHECK_ERRNO(io_setup(8, (aio_context_t *)8), EFAULT);
  CHECK_ERRNO(io_setup(0x1000000, &ctx), EINVAL);    // the doubled ring would pass 256 MiB
  CHECK_ERRNO(io_setup(0x80000000u, &ctx), EAGAIN);  // doubles to 0 in 32 bits
  CHECK_ERRNO(io_setup(0x400000, &ctx), EAGAIN);     // more than fs.aio-max-nr (65536)
  CHECK_EQ(ctx, 0);
  CHECK_ERRNO(io_destroy(0), EINVAL);
  CHECK_ERRNO(io_destroy(12345), EINVAL);
  struct io_event ev;
  CHECK_ERRNO(io_getevents(0, 0, 1, &ev, NULL), EINVAL);
}

static long read_long(const char *path) {
  FILE *f = fopen(path, "r");
  CHECK(f != NULL);
  long v = -1;
  CHECK_EQ(fscanf(f, "%ld", &v), 1);
  fclose(f);
  return v;
}

TEST(ring_header) {
  aio_context_t ctx = setup(4);
  CHECK_EQ(read_long("/proc/sys/fs/aio-max-nr"), 65536);
  CHECK(read_long("/proc/sys/fs/aio-nr") >= 4);  // host-wide natively: others may add
  struct ring_header *r = (struct ring_header *)ctx;
  CHECK_EQ(r->magic, 0xa10a10a1u);
  CHECK_EQ(r->compat_features, 1);
  CHECK_EQ(r->incompat_features, 0);
  CHECK_EQ(r->header_length, sizeof(struct ring_header));
  CHECK_EQ(r->head, 0);
  CHECK_EQ(r->tail, 0);
  CHECK(r->nr >= 8);
  // ring->id is the context's slot in the process's table; Linux finds the context by it.
  CHECK_EQ(r->id, 0);
  aio_context_t second = setup(4);
  CHECK_EQ(((struct ring_header *)second)->id, 1);
  CHECK_EQ(io_destroy(ctx), 0);
  CHECK_ERRNO(io_destroy(ctx), EINVAL);
  ctx = setup(4);
  CHECK_EQ(((struct ring_header *)ctx)->id, 0);  // the free slot is reused
  struct io_event ev;
  ((struct ring_header *)second)->id = 7;
  CHECK_ERRNO(io_getevents(second, 0, 1, &ev, NULL), EINVAL);
  ((struct ring_header *)second)->id = 1;
  CHECK_EQ(io_getevents(second, 0, 1, &ev, NULL), 0);
  // An unmapped ring makes its context unreachable, io_destroy included.
  CHECK_OK(munmap((void *)second, 4096));
  CHECK_ERRNO(io_getevents(second, 0, 1, &ev, NULL), EINVAL);
  CHECK_ERRNO(io_destroy(second), EINVAL);
  CHECK_EQ(io_destroy(ctx), 0);
}

TEST(pread_pwrite_memfd) {
  int fd = memfd_create("aio", 0);
  CHECK(fd >= 0);
  aio_context_t ctx = setup(8);
  struct ring_header *r = (struct ring_header *)ctx;
  char out[] = "hello, aio";
  struct iocb w = make_cb(IOCB_CMD_PWRITE, fd, out, 10, 100);
  w.aio_data = 0x1234;
  CHECK_EQ(submit1(ctx, &w), 1);
  struct io_event ev = wait1(ctx, &w);
  CHECK_EQ(ev.res, 10);
  CHECK_EQ(ev.res2, 0);
  CHECK_EQ(r->head, r->tail);  // reaped by io_getevents
  struct stat st;
  CHECK_OK(fstat(fd, &st));
  CHECK_EQ(st.st_size, 110);
  CHECK_EQ(lseek(fd, 0, SEEK_CUR), 0);  // positional: the offset does not move

  char in[32] = {0};
  struct iocb rd = make_cb(IOCB_CMD_PREAD, fd, in, sizeof(in), 100);
  rd.aio_data = 77;
  CHECK_EQ(submit1(ctx, &rd), 1);
  // The completion shows in the ring before it is reaped.
  for (int i = 0; i < 500 && r->head == r->tail; i++) conf_sleep_ms(10);
  CHECK(r->head != r->tail);
  ev = wait1(ctx, &rd);
  CHECK_EQ(ev.res, 10);
  CHECK(memcmp(in, out, 10) == 0);
  // Past the end: 0 bytes.
  rd.aio_offset = 4096;
  CHECK_EQ(submit1(ctx, &rd), 1);
  CHECK_EQ(wait1(ctx, &rd).res, 0);
  CHECK_EQ(io_destroy(ctx), 0);
  close(fd);
}

TEST(pread_pwrite_host_file) {
  int fd = open("data", O_RDWR | O_CREAT | O_TRUNC, 0600);
  CHECK(fd >= 0);
  aio_context_t ctx = setup(8);
  char a[] = "aaaa", b[] = "bbbb";
  struct iocb w1 = make_cb(IOCB_CMD_PWRITE, fd, a, 4, 0);
  struct iocb w2 = make_cb(IOCB_CMD_PWRITE, fd, b, 4, 4);
  w1.aio_data = 1;
  w2.aio_data = 2;
  struct iocb *list[2] = {&w1, &w2};
  CHECK_EQ(io_submit(ctx, 2, list), 2);
  struct io_event ev[4];
  struct timespec ts = {5, 0};
  CHECK_EQ(io_getevents(ctx, 2, 4, ev, &ts), 2);
  for (int i = 0; i < 2; i++) {
    CHECK_EQ(ev[i].res, 4);
    CHECK_EQ(((struct iocb *)(uintptr_t)ev[i].obj)->aio_data, ev[i].data);
  }
  char got[9] = {0};
  CHECK_EQ(pread(fd, got, 8, 0), 8);
  CHECK(strcmp(got, "aaaabbbb") == 0);

  // A read-only fd cannot be written: EBADF from io_submit.
  int ro = open("data", O_RDONLY);
  CHECK(ro >= 0);
  struct iocb bad = make_cb(IOCB_CMD_PWRITE, ro, a, 4, 0);
  CHECK_ERRNO(submit1(ctx, &bad), EBADF);
  // A bad buffer: the event carries EFAULT.
  struct iocb fault = make_cb(IOCB_CMD_PREAD, ro, (void *)8, 4, 0);
  CHECK_EQ(submit1(ctx, &fault), 1);
  CHECK_EQ(wait1(ctx, &fault).res, -EFAULT);
  // A range past user space: EFAULT from io_submit, for iovecs too.
  fault.aio_buf = 0xffff800000000000ull;
  CHECK_ERRNO(submit1(ctx, &fault), EFAULT);
  struct iovec kv = {(void *)0xffff800000000000ull, 4};
  struct iocb kfault = make_cb(IOCB_CMD_PREADV, ro, &kv, 1, 0);
  CHECK_ERRNO(submit1(ctx, &kfault), EFAULT);
  // Negative offset: EINVAL from io_submit.
  struct iocb neg = make_cb(IOCB_CMD_PREAD, ro, got, 4, -1);
  CHECK_ERRNO(submit1(ctx, &neg), EINVAL);
  close(ro);
  CHECK_EQ(io_destroy(ctx), 0);
  close(fd);
}

TEST(preadv_pwritev_fsync) {
  int fd = open("vec", O_RDWR | O_CREAT | O_TRUNC, 0600);
  CHECK(fd >= 0);
  aio_context_t ctx = setup(8);
  char p1[] = "abc", p2[] = "defgh";
  struct iovec wv[2] = {{p1, 3}, {p2, 5}};
  struct iocb w = make_cb(IOCB_CMD_PWRITEV, fd, wv, 2, 10);
  CHECK_EQ(submit1(ctx, &w), 1);
  CHECK_EQ(wait1(ctx, &w).res, 8);
  char q1[2], q2[10] = {0};
  struct iovec rv[2] = {{q1, 2}, {q2, 10}};
  struct iocb r = make_cb(IOCB_CMD_PREADV, fd, rv, 2, 10);
  CHECK_EQ(submit1(ctx, &r), 1);
  CHECK_EQ(wait1(ctx, &r).res, 8);
  CHECK(memcmp(q1, "ab", 2) == 0 && memcmp(q2, "cdefgh", 6) == 0);

  struct iocb s = make_cb(IOCB_CMD_FSYNC, fd, NULL, 0, 0);
  CHECK_EQ(submit1(ctx, &s), 1);
  CHECK_EQ(wait1(ctx, &s).res, 0);
  s.aio_lio_opcode = IOCB_CMD_FDSYNC;
  CHECK_EQ(submit1(ctx, &s), 1);
  CHECK_EQ(wait1(ctx, &s).res, 0);
  s.aio_nbytes = 1;  // fsync takes no buffer
  CHECK_ERRNO(submit1(ctx, &s), EINVAL);
  // A pipe has no fsync.
  int p[2];
  CHECK_OK(pipe(p));
  struct iocb ps = make_cb(IOCB_CMD_FSYNC, p[0], NULL, 0, 0);
  CHECK_ERRNO(submit1(ctx, &ps), EINVAL);
  // Too many iovecs.
  struct iocb big = make_cb(IOCB_CMD_PREADV, fd, rv, 1025, 0);
  CHECK_ERRNO(submit1(ctx, &big), EINVAL);
  close(p[0]);
  close(p[1]);
  CHECK_EQ(io_destroy(ctx), 0);
  close(fd);
}

TEST(submit_errors) {
  aio_context_t ctx = setup(4);
  int fd = memfd_create("aio", 0);
  char buf[8];
  struct iocb cb = make_cb(IOCB_CMD_PREAD, 999, buf, 8, 0);
  CHECK_ERRNO(submit1(ctx, &cb), EBADF);
  cb.aio_lio_opcode = 42;
  CHECK_ERRNO(submit1(ctx, &cb), EBADF);  // the fd is looked at first
  int opath = open("/", O_PATH);
  cb.aio_fildes = opath;
  CHECK_ERRNO(submit1(ctx, &cb), EBADF);
  cb.aio_lio_opcode = IOCB_CMD_POLL;
  cb.aio_buf = POLLIN;
  cb.aio_nbytes = 0;
  CHECK_ERRNO(submit1(ctx, &cb), EBADF);
  cb.aio_lio_opcode = IOCB_CMD_FSYNC;
  cb.aio_buf = 0;
  CHECK_ERRNO(submit1(ctx, &cb), EBADF);
  close(opath);
  cb = make_cb(42, fd, buf, 8, 0);
  CHECK_ERRNO(submit1(ctx, &cb), EINVAL);
  cb.aio_lio_opcode = IOCB_CMD_NOOP;
  CHECK_ERRNO(submit1(ctx, &cb), EINVAL);
  cb.aio_lio_opcode = IOCB_CMD_PREAD;
  cb.aio_reserved2 = 1;
  CHECK_ERRNO(submit1(ctx, &cb), EINVAL);
  cb.aio_reserved2 = 0;
  cb.aio_nbytes = (uint64_t)-1;  // negative as ssize_t
  CHECK_ERRNO(submit1(ctx, &cb), EINVAL);
  cb.aio_nbytes = 8;
  cb.aio_rw_flags = 0x1000;  // unknown RWF_ flag
  CHECK_ERRNO(submit1(ctx, &cb), EOPNOTSUPP);
  cb.aio_rw_flags = 0;
  cb.aio_flags = IOCB_FLAG_IOPRIO;
  cb.aio_reqprio = 5 << 13;  // no such class
  CHECK_ERRNO(submit1(ctx, &cb), EINVAL);
  cb.aio_reqprio = (3 << 13);  // idle
  CHECK_EQ(submit1(ctx, &cb), 1);
  CHECK_EQ(wait1(ctx, &cb).res, 0);
  cb.aio_reqprio = 0;
  cb.aio_flags = IOCB_FLAG_RESFD;
  cb.aio_resfd = 999;
  CHECK_ERRNO(submit1(ctx, &cb), EBADF);
  cb.aio_resfd = fd;  // not an eventfd
  CHECK_ERRNO(submit1(ctx, &cb), EINVAL);
  cb.aio_flags = 0;
  struct iocb *p = &cb;
  CHECK_ERRNO(io_submit(ctx, -1, &p), EINVAL);
  CHECK_EQ(io_submit(ctx, 0, &p), 0);
  CHECK_ERRNO(io_submit(ctx, 1, (struct iocb **)8), EFAULT);
  p = (struct iocb *)8;
  CHECK_ERRNO(io_submit(ctx, 1, &p), EFAULT);
  CHECK_ERRNO(io_submit(ctx + 4096, 1, &p), EINVAL);
  CHECK_ERRNO(io_submit(0, 1, &p), EINVAL);
  // A bad second iocb: the first is submitted, and the count says so.
  struct iocb good = make_cb(IOCB_CMD_PREAD, fd, buf, 8, 0);
  struct iocb *two[2] = {&good, (struct iocb *)8};
  CHECK_EQ(io_submit(ctx, 2, two), 1);
  CHECK_EQ(wait1(ctx, &good).res, 0);
  // io_getevents argument errors.
  struct io_event ev;
  CHECK_ERRNO(io_getevents(ctx, 2, 1, &ev, NULL), EINVAL);
  CHECK_ERRNO(io_getevents(ctx, -1, 1, &ev, NULL), EINVAL);
  CHECK_ERRNO(io_getevents(ctx, 0, 1, &ev, (struct timespec *)8), EFAULT);
  CHECK_EQ(io_getevents(ctx, 0, 1, &ev, NULL), 0);  // min_nr 0 returns at once
  CHECK_EQ(io_destroy(ctx), 0);
  close(fd);
}

TEST(resfd_eventfd) {
  aio_context_t ctx = setup(8);
  int efd = eventfd(0, EFD_NONBLOCK);
  int fd = memfd_create("aio", 0);
  char buf[4] = "xyz";
  struct iocb a = make_cb(IOCB_CMD_PWRITE, fd, buf, 3, 0);
  struct iocb b = make_cb(IOCB_CMD_PWRITE, fd, buf, 3, 3);
  a.aio_flags = b.aio_flags = IOCB_FLAG_RESFD;
  a.aio_resfd = b.aio_resfd = efd;
  struct iocb *list[2] = {&a, &b};
  CHECK_EQ(io_submit(ctx, 2, list), 2);
  uint64_t n = 0;
  for (int i = 0; i < 500 && n < 2; i++) {
    uint64_t v;
    if (read(efd, &v, 8) == 8)
      n += v;
    else
      conf_sleep_ms(10);
  }
  CHECK_EQ(n, 2);
  struct io_event ev[2];
  CHECK_EQ(getevents0(ctx, ev, 2), 2);
  CHECK_EQ(io_destroy(ctx), 0);
  close(fd);
  close(efd);
}

static void *write_later(void *arg) {
  conf_sleep_ms(100);
  CHECK_EQ(write((int)(intptr_t)arg, "ping", 4), 4);
  return NULL;
}

TEST(poll_pipe) {
  aio_context_t ctx = setup(8);
  int p[2];
  CHECK_OK(pipe(p));
  struct iocb cb = make_cb(IOCB_CMD_POLL, p[0], (void *)(uintptr_t)POLLIN, 0, 0);
  cb.aio_data = 5;
  CHECK_EQ(submit1(ctx, &cb), 1);
  struct io_event ev[1];
  CHECK_EQ(getevents0(ctx, ev, 1), 0);
  // Timeout expiry with nothing ready.
  struct timespec ts = {0, 50 * 1000000};
  int64_t t0 = conf_now_ns(CLOCK_MONOTONIC);
  CHECK_EQ(io_getevents(ctx, 1, 1, ev, &ts), 0);
  CHECK(conf_now_ns(CLOCK_MONOTONIC) - t0 >= 45 * 1000000LL);
  // Ready after a write from another thread.
  pthread_t th;
  CHECK_EQ(pthread_create(&th, NULL, write_later, (void *)(intptr_t)p[1]), 0);
  // The result is the wake-up's events (Linux: POLLIN|POLLRDNORM from a pipe write).
  struct io_event e = wait1(ctx, &cb);
  CHECK(e.res & POLLIN);
  CHECK_EQ(e.res & ~(POLLIN | POLLRDNORM), 0);
  CHECK_EQ(pthread_join(th, NULL), 0);
  // Already ready: completes at once. The write end is writable.
  struct iocb w = make_cb(IOCB_CMD_POLL, p[1], (void *)(uintptr_t)(POLLOUT | POLLIN), 0, 0);
  CHECK_EQ(submit1(ctx, &w), 1);
  CHECK_EQ(wait1(ctx, &w).res, POLLOUT);
  // Argument checks.
  struct iocb bad = make_cb(IOCB_CMD_POLL, p[0], (void *)0x10000, 0, 0);
  CHECK_ERRNO(submit1(ctx, &bad), EINVAL);
  bad.aio_buf = POLLIN;
  bad.aio_offset = 1;
  CHECK_ERRNO(submit1(ctx, &bad), EINVAL);
  // Ready after a write from another process; the hang-up shows too.
  char tmp[8];
  CHECK_EQ(read(p[0], tmp, 8), 4);
  cb.aio_buf = POLLIN;
  CHECK_EQ(submit1(ctx, &cb), 1);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    conf_sleep_ms(50);
    if (write(p[1], "x", 1) != 1) _exit(1);
    _exit(0);
  }
  e = wait1(ctx, &cb);
  CHECK(e.res & POLLIN);
  CHECK_EQ(e.res & ~(POLLIN | POLLRDNORM), 0);
  CHECK_EXIT(pid, 0);
  CHECK_EQ(read(p[0], tmp, 8), 1);
  close(p[1]);
  CHECK_EQ(submit1(ctx, &cb), 1);
  CHECK_EQ(wait1(ctx, &cb).res, POLLHUP);  // ready at submission: masked by POLLIN|ERR|HUP
  close(p[0]);
  // A poll in flight when the last writer goes: the re-check finds the hang-up.
  CHECK_OK(pipe(p));
  struct iocb h = make_cb(IOCB_CMD_POLL, p[0], (void *)(uintptr_t)POLLIN, 0, 0);
  CHECK_EQ(submit1(ctx, &h), 1);
  CHECK_EQ(getevents0(ctx, ev, 1), 0);
  close(p[1]);
  CHECK_EQ(wait1(ctx, &h).res, POLLHUP);
  close(p[0]);
  CHECK_EQ(io_destroy(ctx), 0);
}

TEST(poll_socket) {
  aio_context_t ctx = setup(8);
  int sv[2];
  CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
  struct iocb cb = make_cb(IOCB_CMD_POLL, sv[0], (void *)(uintptr_t)POLLIN, 0, 0);
  CHECK_EQ(submit1(ctx, &cb), 1);
  struct io_event ev;
  CHECK_EQ(getevents0(ctx, &ev, 1), 0);
  pthread_t th;
  CHECK_EQ(pthread_create(&th, NULL, write_later, (void *)(intptr_t)sv[1]), 0);
  ev = wait1(ctx, &cb);
  CHECK(ev.res & POLLIN);
  CHECK_EQ(pthread_join(th, NULL), 0);
  // A read of what arrived, and a read that finds the peer gone.
  char buf[8];
  struct iocb rd = make_cb(IOCB_CMD_PREAD, sv[0], buf, sizeof(buf), 0);
  CHECK_EQ(submit1(ctx, &rd), 1);
  CHECK_EQ(wait1(ctx, &rd).res, 4);
  close(sv[1]);
  CHECK_EQ(submit1(ctx, &rd), 1);
  CHECK_EQ(wait1(ctx, &rd).res, 0);
  close(sv[0]);
  CHECK_EQ(io_destroy(ctx), 0);
}

TEST(pipe_read_later) {
  aio_context_t ctx = setup(8);
  int p[2];
  CHECK_OK(pipe2(p, O_NONBLOCK));
  // On a non-blocking pipe the read completes at once with EAGAIN.
  char buf[16] = {0};
  struct iocb cb = make_cb(IOCB_CMD_PREAD, p[0], buf, sizeof(buf), 0);
  CHECK_EQ(submit1(ctx, &cb), 1);
  CHECK_EQ(wait1(ctx, &cb).res, -EAGAIN);
  // With data there, it reads it; pipes ignore the offset.
  CHECK_EQ(write(p[1], "data", 4), 4);
  cb.aio_offset = 12345;
  CHECK_EQ(submit1(ctx, &cb), 1);
  CHECK_EQ(wait1(ctx, &cb).res, 4);
  CHECK(memcmp(buf, "data", 4) == 0);
  // A blocking pipe: the read waits for data from another thread.
  int q[2];
  CHECK_OK(pipe(q));
  struct iocb rq = make_cb(IOCB_CMD_PREAD, q[0], buf, sizeof(buf), 0);
  pthread_t th;
  CHECK_EQ(pthread_create(&th, NULL, write_later, (void *)(intptr_t)q[1]), 0);
  CHECK_EQ(submit1(ctx, &rq), 1);
  CHECK_EQ(wait1(ctx, &rq).res, 4);
  CHECK_EQ(pthread_join(th, NULL), 0);
  CHECK(memcmp(buf, "ping", 4) == 0);
  // A write to a pipe with no reader: EPIPE in the event.
  close(q[0]);
  signal(SIGPIPE, SIG_IGN);
  struct iocb wq = make_cb(IOCB_CMD_PWRITE, q[1], buf, 4, 0);
  CHECK_EQ(submit1(ctx, &wq), 1);
  CHECK_EQ(wait1(ctx, &wq).res, -EPIPE);
  signal(SIGPIPE, SIG_DFL);
  close(q[1]);
  close(p[0]);
  close(p[1]);
  CHECK_EQ(io_destroy(ctx), 0);
}

TEST(getevents_min_nr) {
  aio_context_t ctx = setup(8);
  int p[2];
  CHECK_OK(pipe(p));
  struct iocb a = make_cb(IOCB_CMD_POLL, p[0], (void *)(uintptr_t)POLLIN, 0, 0);
  struct iocb b = make_cb(IOCB_CMD_POLL, p[1], (void *)(uintptr_t)POLLOUT, 0, 0);
  struct iocb *list[2] = {&a, &b};
  CHECK_EQ(io_submit(ctx, 2, list), 2);
  // One is ready, but min_nr is 2: the timeout ends the wait with the one there is.
  struct io_event ev[2];
  struct timespec ts = {0, 30 * 1000000};
  CHECK_EQ(io_getevents(ctx, 2, 2, ev, &ts), 1);
  CHECK_EQ(ev[0].obj, (uint64_t)(uintptr_t)&b);
  pthread_t th;
  CHECK_EQ(pthread_create(&th, NULL, write_later, (void *)(intptr_t)p[1]), 0);
  ts.tv_sec = 5;
  CHECK_EQ(io_getevents(ctx, 1, 2, ev, &ts), 1);
  CHECK_EQ(ev[0].obj, (uint64_t)(uintptr_t)&a);
  CHECK_EQ(pthread_join(th, NULL), 0);
  close(p[0]);
  close(p[1]);
  CHECK_EQ(io_destroy(ctx), 0);
}

static void on_alarm(int sig) { (void)sig; }

// A read from an empty blocking pipe blocks io_submit (Linux's buffered path); a signal ends
// it, and the event carries EINTR.
TEST(submit_interrupted) {
  aio_context_t ctx = setup(8);
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_alarm;
  sa.sa_flags = SA_RESTART;
  CHECK_OK(sigaction(SIGALRM, &sa, NULL));
  int q[2];
  CHECK_OK(pipe(q));
  char buf[8];
  struct iocb cb = make_cb(IOCB_CMD_PREAD, q[0], buf, sizeof(buf), 0);
  struct itimerval it = {{0, 0}, {0, 50000}};
  CHECK_OK(setitimer(ITIMER_REAL, &it, NULL));
  CHECK_EQ(submit1(ctx, &cb), 1);
  CHECK_EQ(wait1(ctx, &cb).res, -EINTR);
  signal(SIGALRM, SIG_DFL);
  close(q[0]);
  close(q[1]);
  CHECK_EQ(io_destroy(ctx), 0);
}

TEST(getevents_signal) {
  aio_context_t ctx = setup(4);
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_alarm;
  sa.sa_flags = SA_RESTART;  // io_getevents is not restarted anyway
  CHECK_OK(sigaction(SIGALRM, &sa, NULL));
  struct itimerval it = {{0, 0}, {0, 50000}};
  CHECK_OK(setitimer(ITIMER_REAL, &it, NULL));
  struct io_event ev;
  CHECK_ERRNO(io_getevents(ctx, 1, 1, &ev, NULL), EINTR);
  // io_pgetevents with SIGALRM blocked sleeps through it until the timeout.
  sigset_t block;
  sigemptyset(&block);
  sigaddset(&block, SIGALRM);
  struct {
    const sigset_t *mask;
    size_t size;
  } ss = {&block, 8};
  CHECK_OK(setitimer(ITIMER_REAL, &it, NULL));
  struct timespec ts = {0, 150 * 1000000};
  CHECK_EQ(syscall(SYS_io_pgetevents, ctx, 1, 1, &ev, &ts, &ss), 0);
  // ... and the signal is delivered once the mask is back: an empty mask lets it in.
  sigset_t none;
  sigemptyset(&none);
  ss.mask = &none;
  CHECK_OK(setitimer(ITIMER_REAL, &it, NULL));
  CHECK_ERRNO(syscall(SYS_io_pgetevents, ctx, 1, 1, &ev, NULL, &ss), EINTR);
  ss.size = 4;
  CHECK_ERRNO(syscall(SYS_io_pgetevents, ctx, 1, 1, &ev, NULL, &ss), EINVAL);
  CHECK_ERRNO(syscall(SYS_io_pgetevents, ctx, 1, 1, &ev, NULL, (void *)8), EFAULT);
  CHECK_EQ(syscall(SYS_io_pgetevents, ctx, 0, 1, &ev, NULL, NULL), 0);
  signal(SIGALRM, SIG_DFL);
  CHECK_EQ(io_destroy(ctx), 0);
}

TEST(cancel) {
  aio_context_t ctx = setup(8);
  int p[2];
  CHECK_OK(pipe(p));
  struct iocb cb = make_cb(IOCB_CMD_POLL, p[0], (void *)(uintptr_t)POLLIN, 0, 0);
  cb.aio_data = 9;
  CHECK_EQ(submit1(ctx, &cb), 1);
  CHECK_EQ(cb.aio_key, 0);  // KIOCB_KEY
  struct io_event ev;
  CHECK_ERRNO(io_cancel(ctx, &cb, &ev), EINPROGRESS);
  ev = wait1(ctx, &cb);
  CHECK_EQ(ev.res, 0);
  CHECK_ERRNO(io_cancel(ctx, &cb, &ev), EINVAL);  // no longer in flight
  // A completed file write cannot be cancelled.
  int fd = memfd_create("aio", 0);
  struct iocb w = make_cb(IOCB_CMD_PWRITE, fd, "x", 1, 0);
  CHECK_EQ(submit1(ctx, &w), 1);
  CHECK_ERRNO(io_cancel(ctx, &w, &ev), EINVAL);
  wait1(ctx, &w);
  // Bad arguments.
  CHECK_ERRNO(io_cancel(ctx, (struct iocb *)8, &ev), EFAULT);
  struct iocb other = make_cb(IOCB_CMD_POLL, p[0], NULL, 0, 0);
  other.aio_key = 1;
  CHECK_ERRNO(io_cancel(ctx, &other, &ev), EINVAL);
  CHECK_EQ(submit1(ctx, &cb), 1);
  CHECK_ERRNO(io_cancel(ctx + 8192, &cb, &ev), EINVAL);
  CHECK_ERRNO(io_cancel(ctx, &cb, &ev), EINPROGRESS);
  CHECK_EQ(wait1(ctx, &cb).res, 0);
  close(fd);
  close(p[0]);
  close(p[1]);
  CHECK_EQ(io_destroy(ctx), 0);
}

TEST(destroy_outstanding) {
  aio_context_t ctx = setup(8);
  int p[2];
  CHECK_OK(pipe(p));
  struct iocb a = make_cb(IOCB_CMD_POLL, p[0], (void *)(uintptr_t)POLLIN, 0, 0);
  struct iocb b = a;
  struct iocb *list[2] = {&a, &b};
  CHECK_EQ(io_submit(ctx, 2, list), 2);
  CHECK_EQ(io_destroy(ctx), 0);
  struct io_event ev;
  CHECK_ERRNO(io_getevents(ctx, 0, 1, &ev, NULL), EINVAL);
  CHECK_ERRNO(submit1(ctx, &a), EINVAL);
  // The ring is gone with the context.
  CHECK_ERRNO(msync((void *)ctx, 4096, MS_ASYNC), ENOMEM);
  close(p[0]);
  close(p[1]);
}

TEST(full_ring) {
  aio_context_t ctx = setup(1);
  struct ring_header *r = (struct ring_header *)ctx;
  unsigned nr = r->nr;
  int p[2];
  CHECK_OK(pipe(p));
  // Submissions beyond the ring's capacity fail with EAGAIN.
  struct iocb *cbs = calloc(nr + 1, sizeof(struct iocb));
  struct iocb **ptrs = calloc(nr + 1, sizeof(struct iocb *));
  for (unsigned i = 0; i <= nr; i++) {
    cbs[i] = make_cb(IOCB_CMD_POLL, p[0], (void *)(uintptr_t)POLLIN, 0, 0);
    ptrs[i] = &cbs[i];
  }
  long n = io_submit(ctx, nr + 1, ptrs);
  CHECK(n > 0 && n < (long)nr);
  CHECK_ERRNO(io_submit(ctx, 1, ptrs + n), EAGAIN);
  CHECK_EQ(io_destroy(ctx), 0);
  free(cbs);
  free(ptrs);
  close(p[0]);
  close(p[1]);
}

// fio's userspace_reap: events read from the ring and head advanced by user space free their
// slots, and io_getevents then has nothing more to give.
TEST(user_space_reap) {
  aio_context_t ctx = setup(1);
  struct ring_header *r = (struct ring_header *)ctx;
  struct io_event *ring_events = (struct io_event *)(r + 1);
  int fd = memfd_create("aio", 0);
  char buf[4] = "abc";
  for (unsigned round = 0; round < 3 * r->nr; round++) {
    struct iocb w = make_cb(IOCB_CMD_PWRITE, fd, buf, 3, round);
    w.aio_data = round;
    CHECK_EQ(submit1(ctx, &w), 1);
    CHECK(r->head != r->tail);
    struct io_event ev = ring_events[r->head];
    CHECK_EQ(ev.data, round);
    CHECK_EQ(ev.res, 3);
    __atomic_store_n(&r->head, (r->head + 1) % r->nr, __ATOMIC_RELEASE);
  }
  struct io_event ev;
  CHECK_EQ(getevents0(ctx, &ev, 1), 0);
  CHECK_EQ(io_destroy(ctx), 0);
  close(fd);
}

TEST(fork_child) {
  aio_context_t ctx = setup(4);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    // The child keeps the ring mapping but not the context.
    if (((struct ring_header *)ctx)->magic != 0xa10a10a1u) _exit(1);
    struct io_event ev;
    if (io_getevents(ctx, 0, 1, &ev, NULL) != -1 || errno != EINVAL) _exit(2);
    if (io_destroy(ctx) != -1 || errno != EINVAL) _exit(3);
    aio_context_t mine = 0;
    if (io_setup(4, &mine) != 0) _exit(4);
    if (io_destroy(mine) != 0) _exit(5);
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
  CHECK_EQ(io_destroy(ctx), 0);
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  conf_tmpdir("aio");
  RUN(setup_errors);
  RUN(ring_header);
  RUN(pread_pwrite_memfd);
  RUN(pread_pwrite_host_file);
  RUN(preadv_pwritev_fsync);
  RUN(submit_errors);
  RUN(resfd_eventfd);
  RUN(poll_pipe);
  RUN(poll_socket);
  RUN(pipe_read_later);
  RUN(getevents_min_nr);
  RUN(getevents_signal);
  RUN(submit_interrupted);
  RUN(cancel);
  RUN(destroy_outstanding);
  RUN(full_ring);
  RUN(user_space_reap);
  RUN(fork_child);
  conf_tmpdir_remove();
  PASS("aio");
  return 0;
}
