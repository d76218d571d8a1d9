// inotify: the events of creating, opening, writing, closing, deleting and
// moving (with matching cookies), IN_DELETE_SELF/IN_IGNORED, watch
// management (same wd for the same inode, IN_MASK_ADD, IN_ONESHOT,
// IN_ONLYDIR, inotify_rm_watch), the read ABI (names, FIONREAD, short
// buffers) and non-blocking reads.
//
// Works in its own scratch directory under /tmp (conf_tmpdir). Events are
// queued by the system call that causes them, so everything is read with
// non-blocking reads right after.

#include "common.h"

#include <poll.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>

#define MAX_EVENTS 32

struct ev {
  int wd;
  uint32_t mask;
  uint32_t cookie;
  char name[64];
};

struct evs {
  int n;
  struct ev e[MAX_EVENTS];
};

static int make_inotify(void) {
  int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  CHECK(fd >= 0);
  return fd;
}

static int watch(int fd, const char *path, uint32_t mask) {
  int wd = inotify_add_watch(fd, path, mask);
  CHECK(wd >= 1);
  return wd;
}

// Reads everything pending.
static void drain(int fd, struct evs *out) {
  out->n = 0;
  char buf[4096] __attribute__((aligned(8)));
  for (;;) {
    ssize_t r = read(fd, buf, sizeof(buf));
    if (r == -1) {
      CHECK_EQ(errno, EAGAIN);
      break;
    }
    CHECK(r > 0);
    for (ssize_t off = 0; off < r;) {
      struct inotify_event *ie = (struct inotify_event *)(buf + off);
      CHECK(off + (ssize_t)sizeof(*ie) + (ssize_t)ie->len <= r);
      CHECK(out->n < MAX_EVENTS);
      struct ev *e = &out->e[out->n++];
      e->wd = ie->wd;
      e->mask = ie->mask;
      e->cookie = ie->cookie;
      e->name[0] = '\0';
      if (ie->len > 0) {
        // NUL-terminated within len, padded with NULs.
        size_t nl = strnlen(ie->name, ie->len);
        CHECK(nl < ie->len);
        CHECK(nl < sizeof(e->name));
        memcpy(e->name, ie->name, nl + 1);
        for (size_t i = nl; i < ie->len; i++) CHECK_EQ(ie->name[i], 0);
      }
      off += (ssize_t)sizeof(*ie) + ie->len;
    }
  }
}

static void expect(const struct evs *got, int i, int wd, uint32_t mask,
                   const char *name) {
  CHECK(i < got->n);
  const struct ev *e = &got->e[i];
  if (e->wd != wd || e->mask != mask || strcmp(e->name, name) != 0) {
    fprintf(stderr, "event %d: wd=%d mask=%#x name='%s', want %d %#x '%s'\n",
            i, e->wd, e->mask, e->name, wd, mask, name);
    CHECK(0);
  }
}

static void expect_nothing(int fd) {
  char buf[256];
  CHECK_ERRNO(read(fd, buf, sizeof(buf)), EAGAIN);
}

// --- cases ---

TEST(create_open_modify_close) {
  int in = make_inotify();
  CHECK_OK(mkdir("w", 0755));
  int wd = watch(in, "w", IN_ALL_EVENTS);
  int fd = open("w/a", O_WRONLY | O_CREAT | O_EXCL, 0644);
  CHECK(fd >= 0);
  CHECK_EQ(write(fd, "1", 1), 1);
  CHECK_EQ(write(fd, "2", 1), 1);  // Identical to the queued one: merged.
  CHECK_OK(close(fd));
  struct evs got;
  drain(in, &got);
  CHECK_EQ(got.n, 4);
  expect(&got, 0, wd, IN_CREATE, "a");
  expect(&got, 1, wd, IN_OPEN, "a");
  expect(&got, 2, wd, IN_MODIFY, "a");
  expect(&got, 3, wd, IN_CLOSE_WRITE, "a");
  CHECK_EQ(got.e[0].cookie, 0);

  // Reading: open, access, close-nowrite. chmod: attrib.
  fd = open("w/a", O_RDONLY);
  CHECK(fd >= 0);
  char buf[4];
  CHECK_EQ(read(fd, buf, sizeof(buf)), 2);
  CHECK_OK(close(fd));
  CHECK_OK(chmod("w/a", 0600));
  CHECK_OK(truncate("w/a", 0));
  drain(in, &got);
  CHECK_EQ(got.n, 5);
  expect(&got, 0, wd, IN_OPEN, "a");
  expect(&got, 1, wd, IN_ACCESS, "a");
  expect(&got, 2, wd, IN_CLOSE_NOWRITE, "a");
  expect(&got, 3, wd, IN_ATTRIB, "a");
  expect(&got, 4, wd, IN_MODIFY, "a");
  // A stat or a failed open is no event.
  struct stat st;
  CHECK_OK(stat("w/a", &st));
  CHECK_ERRNO(open("w/missing", O_RDONLY), ENOENT);
  expect_nothing(in);

  // Only the events asked for.
  CHECK_OK(close(in));
  in = make_inotify();
  wd = watch(in, "w", IN_CLOSE_WRITE);
  conf_put_file("w/b", "data", 0644);
  drain(in, &got);
  CHECK_EQ(got.n, 1);
  expect(&got, 0, wd, IN_CLOSE_WRITE, "b");
  CHECK_OK(unlink("w/a"));
  CHECK_OK(unlink("w/b"));
  expect_nothing(in);
  CHECK_OK(rmdir("w"));
  CHECK_OK(close(in));
}

TEST(delete_and_directories) {
  int in = make_inotify();
  CHECK_OK(mkdir("w", 0755));
  conf_put_file("w/f", "", 0644);
  int wd = watch(in, "w", IN_CREATE | IN_DELETE);
  CHECK_OK(unlink("w/f"));
  CHECK_OK(mkdir("w/sub", 0755));
  CHECK_OK(symlink("x", "w/lnk"));
  CHECK_OK(rmdir("w/sub"));
  CHECK_OK(unlink("w/lnk"));
  struct evs got;
  drain(in, &got);
  CHECK_EQ(got.n, 5);
  expect(&got, 0, wd, IN_DELETE, "f");
  expect(&got, 1, wd, IN_CREATE | IN_ISDIR, "sub");
  expect(&got, 2, wd, IN_CREATE, "lnk");
  expect(&got, 3, wd, IN_DELETE | IN_ISDIR, "sub");
  expect(&got, 4, wd, IN_DELETE, "lnk");
  // Events inside a subdirectory are not reported (watches are not
  // recursive).
  CHECK_OK(mkdir("w/deep", 0755));
  drain(in, &got);
  CHECK_EQ(got.n, 1);
  conf_put_file("w/deep/x", "", 0644);
  CHECK_OK(unlink("w/deep/x"));
  expect_nothing(in);
  CHECK_OK(rmdir("w/deep"));
  CHECK_OK(rmdir("w"));
  CHECK_OK(close(in));
}

TEST(moves_have_matching_cookies) {
  int in = make_inotify();
  CHECK_OK(mkdir("w1", 0755));
  CHECK_OK(mkdir("w2", 0755));
  conf_put_file("w1/a", "", 0644);
  int wd1 = watch(in, "w1", IN_MOVE);
  int wd2 = watch(in, "w2", IN_MOVE);
  CHECK(wd1 != wd2);
  CHECK_OK(rename("w1/a", "w1/b"));
  CHECK_OK(rename("w1/b", "w2/c"));
  struct evs got;
  drain(in, &got);
  CHECK_EQ(got.n, 4);
  expect(&got, 0, wd1, IN_MOVED_FROM, "a");
  expect(&got, 1, wd1, IN_MOVED_TO, "b");
  expect(&got, 2, wd1, IN_MOVED_FROM, "b");
  expect(&got, 3, wd2, IN_MOVED_TO, "c");
  CHECK(got.e[0].cookie != 0);
  CHECK_EQ(got.e[1].cookie, got.e[0].cookie);
  CHECK(got.e[2].cookie != 0);
  CHECK_EQ(got.e[3].cookie, got.e[2].cookie);
  CHECK(got.e[2].cookie != got.e[0].cookie);  // One cookie per rename.
  // Moving out of the watched set: only the half we watch.
  CHECK_OK(mkdir("elsewhere", 0755));
  CHECK_OK(rename("w2/c", "elsewhere/c"));
  CHECK_OK(mkdir("w2/subdir", 0755));
  CHECK_OK(rename("w2/subdir", "w2/subdir2"));
  drain(in, &got);
  CHECK_EQ(got.n, 3);
  expect(&got, 0, wd2, IN_MOVED_FROM, "c");
  expect(&got, 1, wd2, IN_MOVED_FROM | IN_ISDIR, "subdir");
  expect(&got, 2, wd2, IN_MOVED_TO | IN_ISDIR, "subdir2");
  // A watch on the moved file itself reports IN_MOVE_SELF.
  int wdf = watch(in, "elsewhere/c", IN_MOVE_SELF);
  CHECK_OK(rename("elsewhere/c", "elsewhere/d"));
  drain(in, &got);
  CHECK_EQ(got.n, 1);
  expect(&got, 0, wdf, IN_MOVE_SELF, "");
  CHECK_OK(unlink("elsewhere/d"));
  CHECK_OK(rmdir("elsewhere"));
  CHECK_OK(rmdir("w2/subdir2"));
  CHECK_OK(rmdir("w1"));
  CHECK_OK(rmdir("w2"));
  CHECK_OK(close(in));
}

TEST(delete_self_and_ignored) {
  int in = make_inotify();
  CHECK_OK(mkdir("gone", 0755));
  int wd = watch(in, "gone", IN_DELETE_SELF);
  CHECK_OK(rmdir("gone"));
  struct evs got;
  drain(in, &got);
  CHECK_EQ(got.n, 2);
  expect(&got, 0, wd, IN_DELETE_SELF, "");
  expect(&got, 1, wd, IN_IGNORED, "");
  // The watch is gone already.
  CHECK_ERRNO(inotify_rm_watch(in, wd), EINVAL);
  // A file's last link removed: attrib (link count), delete-self, ignored.
  conf_put_file("f", "", 0644);
  int wf = watch(in, "f", IN_ALL_EVENTS);
  CHECK_OK(unlink("f"));
  drain(in, &got);
  CHECK_EQ(got.n, 3);
  expect(&got, 0, wf, IN_ATTRIB, "");
  expect(&got, 1, wf, IN_DELETE_SELF, "");
  expect(&got, 2, wf, IN_IGNORED, "");
  // While an fd keeps the file alive, there is no delete-self yet.
  conf_put_file("g", "", 0644);
  int wg = watch(in, "g", IN_DELETE_SELF | IN_ATTRIB);
  int fd = open("g", O_RDONLY);
  CHECK(fd >= 0);
  CHECK_OK(unlink("g"));
  drain(in, &got);
  CHECK_EQ(got.n, 1);
  expect(&got, 0, wg, IN_ATTRIB, "");
  CHECK_OK(close(fd));
  drain(in, &got);
  CHECK_EQ(got.n, 2);
  expect(&got, 0, wg, IN_DELETE_SELF, "");
  expect(&got, 1, wg, IN_IGNORED, "");
  CHECK_OK(close(in));
}

TEST(rm_watch) {
  int in = make_inotify();
  CHECK_OK(mkdir("w", 0755));
  int wd = watch(in, "w", IN_CREATE);
  CHECK_OK(inotify_rm_watch(in, wd));
  struct evs got;
  drain(in, &got);
  CHECK_EQ(got.n, 1);
  expect(&got, 0, wd, IN_IGNORED, "");
  conf_put_file("w/x", "", 0644);
  expect_nothing(in);
  CHECK_ERRNO(inotify_rm_watch(in, wd), EINVAL);
  CHECK_ERRNO(inotify_rm_watch(in, 12345), EINVAL);
  CHECK_ERRNO(inotify_rm_watch(-1, wd), EBADF);
  // A new watch gets a new number.
  int wd2 = watch(in, "w", IN_DELETE);
  CHECK(wd2 != wd);
  CHECK_OK(unlink("w/x"));
  drain(in, &got);
  CHECK_EQ(got.n, 1);
  expect(&got, 0, wd2, IN_DELETE, "x");
  CHECK_OK(rmdir("w"));
  CHECK_OK(close(in));
}

TEST(watch_management) {
  int in = make_inotify();
  CHECK_OK(mkdir("w", 0755));
  CHECK_OK(symlink("w", "wl"));
  int wd = watch(in, "w", IN_CREATE);
  // The same inode by another path: the same watch, with its mask replaced.
  CHECK_EQ(inotify_add_watch(in, "wl", IN_DELETE), wd);
  conf_put_file("w/x", "", 0644);
  CHECK_OK(unlink("w/x"));
  struct evs got;
  drain(in, &got);
  CHECK_EQ(got.n, 1);
  expect(&got, 0, wd, IN_DELETE, "x");
  // IN_MASK_ADD adds to it.
  CHECK_EQ(inotify_add_watch(in, "w", IN_CREATE | IN_MASK_ADD), wd);
  conf_put_file("w/y", "", 0644);
  CHECK_OK(unlink("w/y"));
  drain(in, &got);
  CHECK_EQ(got.n, 2);
  expect(&got, 0, wd, IN_CREATE, "y");
  expect(&got, 1, wd, IN_DELETE, "y");
  // IN_MASK_CREATE refuses an existing watch.
  CHECK_ERRNO(inotify_add_watch(in, "w", IN_CREATE | IN_MASK_CREATE), EEXIST);
  // IN_DONT_FOLLOW watches the symlink itself.
  int wl = watch(in, "wl", IN_ATTRIB | IN_DONT_FOLLOW);
  CHECK(wl != wd);
  // IN_ONESHOT: one event, then the watch goes away.
  conf_put_file("o", "", 0644);
  int wo = watch(in, "o", IN_ATTRIB | IN_ONESHOT);
  CHECK_OK(chmod("o", 0600));
  CHECK_OK(chmod("o", 0644));
  drain(in, &got);
  CHECK_EQ(got.n, 2);
  expect(&got, 0, wo, IN_ATTRIB, "");
  expect(&got, 1, wo, IN_IGNORED, "");
  // Errors.
  CHECK_ERRNO(inotify_add_watch(in, "o", IN_CREATE | IN_ONLYDIR), ENOTDIR);
  CHECK_ERRNO(inotify_add_watch(in, "o", 0), EINVAL);
  CHECK_ERRNO(inotify_add_watch(in, "missing", IN_CREATE), ENOENT);
  CHECK_ERRNO(inotify_add_watch(-1, "o", IN_CREATE), EBADF);
  int p[2];
  CHECK_OK(pipe(p));
  CHECK_ERRNO(inotify_add_watch(p[0], "o", IN_CREATE), EINVAL);
  CHECK_OK(close(p[0]));
  CHECK_OK(close(p[1]));
  CHECK_ERRNO(inotify_init1(IN_NONBLOCK << 1), EINVAL);
  CHECK_OK(unlink("o"));
  CHECK_OK(unlink("wl"));
  CHECK_OK(rmdir("w"));
  CHECK_OK(close(in));
}

TEST(read_abi_and_fionread) {
  int in = make_inotify();
  CHECK_OK(mkdir("w", 0755));
  int wd = watch(in, "w", IN_CREATE);
  int n = -1;
  CHECK_OK(ioctl(in, FIONREAD, &n));
  CHECK_EQ(n, 0);
  conf_put_file("w/a", "", 0644);
  conf_put_file("w/a-much-longer-name-for-padding", "", 0644);
  CHECK_OK(ioctl(in, FIONREAD, &n));
  CHECK(n > 2 * (int)sizeof(struct inotify_event));
  // A buffer too small for the first event.
  char small[sizeof(struct inotify_event)];
  CHECK_ERRNO(read(in, small, sizeof(small)), EINVAL);
  // A buffer that holds exactly one event returns just that one.
  char buf[4096] __attribute__((aligned(8)));
  struct inotify_event *ie = (struct inotify_event *)buf;
  size_t first = sizeof(struct inotify_event) + 16;
  ssize_t r = read(in, buf, first + 8);
  CHECK(r >= (ssize_t)(sizeof(struct inotify_event) + 2));
  CHECK_EQ(ie->wd, wd);
  CHECK_EQ(ie->mask, IN_CREATE);
  CHECK_EQ(strcmp(ie->name, "a"), 0);
  CHECK_EQ(r, (ssize_t)(sizeof(*ie) + ie->len));
  int rest = -1;
  CHECK_OK(ioctl(in, FIONREAD, &rest));
  CHECK_EQ(rest, n - (int)r);
  // FIONREAD is exactly what a read returns.
  r = read(in, buf, sizeof(buf));
  CHECK_EQ(r, rest);
  CHECK_EQ(strcmp(ie->name, "a-much-longer-name-for-padding"), 0);
  CHECK_EQ(r, (ssize_t)(sizeof(*ie) + ie->len));
  CHECK_OK(ioctl(in, FIONREAD, &n));
  CHECK_EQ(n, 0);
  CHECK_OK(unlink("w/a"));
  CHECK_OK(unlink("w/a-much-longer-name-for-padding"));
  CHECK_OK(rmdir("w"));
  CHECK_OK(close(in));
}

TEST(nonblocking_and_poll) {
  int in = make_inotify();
  char buf[4096] __attribute__((aligned(8)));
  CHECK_ERRNO(read(in, buf, sizeof(buf)), EAGAIN);
  CHECK(fcntl(in, F_GETFL) & O_NONBLOCK);
  CHECK_EQ(fcntl(in, F_GETFD), FD_CLOEXEC);
  CHECK_OK(mkdir("w", 0755));
  watch(in, "w", IN_CREATE);
  struct pollfd p = {in, POLLIN, 0};
  CHECK_EQ(poll(&p, 1, 0), 0);
  conf_put_file("w/x", "", 0644);
  CHECK_EQ(poll(&p, 1, 0), 1);
  CHECK_EQ(p.revents, POLLIN);
  CHECK(read(in, buf, sizeof(buf)) > 0);
  CHECK_EQ(poll(&p, 1, 0), 0);
  CHECK_ERRNO(read(in, buf, sizeof(buf)), EAGAIN);
  CHECK_OK(close(in));

  // A blocking inotify fd waits for the event (made by a child here).
  in = inotify_init();
  CHECK(in >= 0);
  CHECK_EQ(fcntl(in, F_GETFL) & O_NONBLOCK, 0);
  int wd = watch(in, "w", IN_DELETE);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    conf_sleep_ms(20);
    CHECK_OK(unlink("w/x"));
    _exit(0);
  }
  struct inotify_event *ie = (struct inotify_event *)buf;
  ssize_t r = read(in, buf, sizeof(buf));
  CHECK(r > 0);
  CHECK_EQ(ie->wd, wd);
  CHECK_EQ(ie->mask, IN_DELETE);
  CHECK_EQ(strcmp(ie->name, "x"), 0);
  CHECK_EXIT(pid, 0);
  CHECK_OK(rmdir("w"));
  CHECK_OK(close(in));
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  umask(022);
  conf_tmpdir("inotify");
  RUN(create_open_modify_close);
  RUN(delete_and_directories);
  RUN(moves_have_matching_cookies);
  RUN(delete_self_and_ignored);
  RUN(rm_watch);
  RUN(watch_management);
  RUN(read_abi_and_fionread);
  RUN(nonblocking_and_poll);
  conf_tmpdir_remove();
  PASS("inotify");
  return 0;
}
