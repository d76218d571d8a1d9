// openat2: the open_how checks and every RESOLVE_* flag, with the errnos Linux 6.1 gives.
#include "common.h"

#include <linux/openat2.h>
#include <sys/syscall.h>

static int dfd;

static long open2(int dir, const char *path, uint64_t flags, uint64_t mode, uint64_t resolve) {
  struct open_how how = {flags, mode, resolve};
  long fd = syscall(SYS_openat2, dir, path, &how, sizeof(how));
  if (fd >= 0) close((int)fd);
  return fd < 0 ? -1 : 0;
}

TEST(how_checks) {
  CHECK_OK(open2(dfd, "f", O_RDONLY, 0, 0));
  CHECK_ERRNO(open2(dfd, "f", O_RDONLY, 0644, 0), EINVAL);  // mode without O_CREAT
  CHECK_OK(open2(dfd, "g", O_RDWR | O_CREAT, 0644, 0));
  CHECK_ERRNO(open2(dfd, "h", O_RDWR | O_CREAT, 010000, 0), EINVAL);
  CHECK_ERRNO(open2(dfd, "f", O_RDONLY, 0, 1ULL << 20), EINVAL);
  CHECK_ERRNO(open2(dfd, "f", O_RDONLY | (1ULL << 40), 0, 0), EINVAL);
  CHECK_ERRNO(open2(dfd, "f", O_RDONLY, 0, RESOLVE_BENEATH | RESOLVE_IN_ROOT), EINVAL);
  CHECK_OK(open2(dfd, "f", O_RDONLY, 0, RESOLVE_CACHED));
  CHECK_ERRNO(open2(dfd, "f", O_RDWR | O_TRUNC, 0, RESOLVE_CACHED), EAGAIN);
  // A larger struct is fine while its tail is zero; a smaller or huge one is not.
  struct {
    struct open_how how;
    uint64_t extra;
  } big = {{O_RDONLY, 0, 0}, 0};
  long fd = syscall(SYS_openat2, dfd, "f", &big, sizeof(big));
  CHECK(fd >= 0);
  close((int)fd);
  big.extra = 1;
  CHECK_ERRNO(syscall(SYS_openat2, dfd, "f", &big, sizeof(big)), E2BIG);
  CHECK_ERRNO(syscall(SYS_openat2, dfd, "f", &big, 16), EINVAL);
  CHECK_ERRNO(syscall(SYS_openat2, dfd, "f", &big, 8192), E2BIG);
  CHECK_ERRNO(syscall(SYS_openat2, dfd, "f", (void *)1, sizeof(struct open_how)), EFAULT);
}

TEST(beneath) {
  CHECK_OK(open2(dfd, "f", O_RDONLY, 0, RESOLVE_BENEATH));
  CHECK_OK(open2(dfd, "b/../f", O_RDONLY, 0, RESOLVE_BENEATH));
  CHECK_OK(open2(dfd, "rel", O_RDONLY, 0, RESOLVE_BENEATH));
  CHECK_ERRNO(open2(dfd, "../a/f", O_RDONLY, 0, RESOLVE_BENEATH), EXDEV);
  CHECK_ERRNO(open2(dfd, "/etc/passwd", O_RDONLY, 0, RESOLVE_BENEATH), EXDEV);
  CHECK_ERRNO(open2(dfd, "abs", O_RDONLY, 0, RESOLVE_BENEATH), EXDEV);
  CHECK_ERRNO(open2(dfd, "up", O_RDONLY, 0, RESOLVE_BENEATH), EXDEV);
}

TEST(in_root) {
  CHECK_OK(open2(dfd, "/f", O_RDONLY, 0, RESOLVE_IN_ROOT));
  CHECK_OK(open2(dfd, "../../../f", O_RDONLY, 0, RESOLVE_IN_ROOT));
  CHECK_ERRNO(open2(dfd, "/etc/passwd", O_RDONLY, 0, RESOLVE_IN_ROOT), ENOENT);
  CHECK_ERRNO(open2(dfd, "abs", O_RDONLY, 0, RESOLVE_IN_ROOT), ENOENT);
}

TEST(symlinks_and_magic_links) {
  CHECK_ERRNO(open2(dfd, "rel", O_RDONLY, 0, RESOLVE_NO_SYMLINKS), ELOOP);
  CHECK_ERRNO(open2(dfd, "rel", O_RDONLY | O_NOFOLLOW, 0, RESOLVE_NO_SYMLINKS), ELOOP);
  CHECK_OK(open2(dfd, "rel", O_PATH | O_NOFOLLOW, 0, RESOLVE_NO_SYMLINKS));
  CHECK_ERRNO(open2(AT_FDCWD, "/proc/self/fd/0", O_RDONLY, 0, RESOLVE_NO_MAGICLINKS), ELOOP);
  CHECK_ERRNO(open2(AT_FDCWD, "/proc/self/exe", O_RDONLY, 0, RESOLVE_NO_MAGICLINKS), ELOOP);
  CHECK_OK(open2(AT_FDCWD, "/proc/self/exe", O_PATH | O_NOFOLLOW, 0, RESOLVE_NO_MAGICLINKS));
  CHECK_ERRNO(open2(AT_FDCWD, "/proc/self/exe", O_RDONLY, 0, RESOLVE_NO_SYMLINKS), ELOOP);
  int proc = open("/proc", O_DIRECTORY | O_RDONLY);
  CHECK(proc >= 0);
  CHECK_ERRNO(open2(proc, "self/exe", O_RDONLY, 0, RESOLVE_BENEATH), EXDEV);
  CHECK_ERRNO(open2(proc, "self/exe", O_RDONLY, 0, RESOLVE_IN_ROOT), EXDEV);
  CHECK_OK(close(proc));
}

TEST(no_xdev) {
  int proc = open("/proc", O_DIRECTORY | O_RDONLY);
  CHECK(proc >= 0);
  CHECK_ERRNO(open2(AT_FDCWD, "/proc/self/status", O_RDONLY, 0, RESOLVE_NO_XDEV), EXDEV);
  CHECK_OK(open2(proc, "self/status", O_RDONLY, 0, RESOLVE_NO_XDEV));
  CHECK_ERRNO(open2(proc, "..", O_RDONLY, 0, RESOLVE_NO_XDEV), EXDEV);
  CHECK_OK(close(proc));
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  conf_tmpdir("openat2");
  CHECK_OK(mkdir("a", 0755));
  CHECK_OK(mkdir("a/b", 0755));
  int f = open("a/f", O_CREAT | O_WRONLY, 0644);
  CHECK(f >= 0);
  CHECK_OK(close(f));
  CHECK_OK(symlink("f", "a/rel"));
  CHECK_OK(symlink("/etc/passwd", "a/abs"));
  CHECK_OK(symlink("../../etc", "a/up"));
  dfd = open("a", O_DIRECTORY | O_RDONLY);
  CHECK(dfd >= 0);
  RUN(how_checks);
  RUN(beneath);
  RUN(in_root);
  RUN(symlinks_and_magic_links);
  RUN(no_xdev);
  PASS("openat2");
}
