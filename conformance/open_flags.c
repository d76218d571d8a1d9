// open(2) flags and the file offset: O_CREAT/O_EXCL, O_TRUNC, O_APPEND,
// O_DIRECTORY, access modes, O_CLOEXEC, lseek and holes, pread/pwrite,
// offsets shared through dup and fork, "cmd >f 2>&1" redirection, creat,
// the umask, close_range.
//
// Works in its own scratch directory under /tmp (conf_tmpdir).

#include "common.h"

#include <sys/stat.h>

#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1U << 1)
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

// On x86_64 the kernel forces O_LARGEFILE on every open, and F_GETFL shows
// it, although glibc defines O_LARGEFILE as 0 there.
#define KERNEL_O_LARGEFILE 0100000

// Child mode "check-fds CLOSED OPEN": CLOSED must be gone after the exec;
// OPEN must still be open without FD_CLOEXEC, at offset 3 of "abcdef".
static int child_main(int argc, char **argv) {
  if (strcmp(argv[1], "check-fds") == 0 && argc == 4) {
    int closed = atoi(argv[2]), open_fd = atoi(argv[3]);
    CHECK_ERRNO(fcntl(closed, F_GETFD), EBADF);
    CHECK_EQ(fcntl(open_fd, F_GETFD), 0);
    CHECK_EQ(lseek(open_fd, 0, SEEK_CUR), 3);
    char buf[8];
    CHECK_EQ(read(open_fd, buf, sizeof(buf)), 3);
    CHECK(memcmp(buf, "def", 3) == 0);
    _exit(0);
  }
  fprintf(stderr, "unknown child mode %s\n", argv[1]);
  _exit(2);
}

static off_t file_size(const char *path) {
  struct stat st;
  CHECK_OK(stat(path, &st));
  return st.st_size;
}

static void expect_contents(const char *path, const char *want) {
  char buf[4096];
  size_t n = conf_get_file(path, buf, sizeof(buf));
  CHECK_EQ(n, strlen(want));
  CHECK(memcmp(buf, want, n) == 0);
}

// --- cases ---

TEST(o_creat_o_excl) {
  int fd = open("f", O_WRONLY | O_CREAT | O_EXCL, 0644);
  CHECK(fd >= 0);
  CHECK_OK(close(fd));
  CHECK_ERRNO(open("f", O_WRONLY | O_CREAT | O_EXCL, 0644), EEXIST);
  CHECK_ERRNO(open("f", O_RDONLY | O_CREAT | O_EXCL, 0644), EEXIST);
  // Without O_EXCL an existing file is just opened.
  fd = open("f", O_WRONLY | O_CREAT, 0600);
  CHECK(fd >= 0);
  CHECK_OK(close(fd));
  struct stat st;
  CHECK_OK(stat("f", &st));
  CHECK_EQ(st.st_mode & 07777, 0644);  // Mode of an existing file stays.

  // O_EXCL does not follow a symlink, even a dangling one.
  CHECK_OK(symlink("nowhere", "dangling"));
  CHECK_ERRNO(open("dangling", O_WRONLY | O_CREAT | O_EXCL, 0644), EEXIST);
  CHECK_ERRNO(lstat("nowhere", &st), ENOENT);
  CHECK_OK(symlink("f", "good"));
  CHECK_ERRNO(open("good", O_WRONLY | O_CREAT | O_EXCL, 0644), EEXIST);

  // Directories.
  CHECK_OK(mkdir("d", 0755));
  CHECK_ERRNO(open("d", O_RDONLY | O_CREAT | O_EXCL, 0644), EEXIST);
  CHECK_ERRNO(open("d", O_RDONLY | O_CREAT, 0644), EISDIR);
  CHECK_ERRNO(open("missing/f", O_WRONLY | O_CREAT, 0644), ENOENT);
  CHECK_ERRNO(open("f/x", O_WRONLY | O_CREAT, 0644), ENOTDIR);
  CHECK_ERRNO(open("missing", O_RDONLY), ENOENT);

  CHECK_OK(unlink("good"));
  CHECK_OK(unlink("dangling"));
  CHECK_OK(unlink("f"));
  CHECK_OK(rmdir("d"));
}

TEST(o_trunc) {
  conf_put_file("t", "0123456789", 0644);
  int fd = open("t", O_WRONLY | O_TRUNC);
  CHECK(fd >= 0);
  CHECK_EQ(file_size("t"), 0);
  CHECK_EQ(write(fd, "ab", 2), 2);
  CHECK_OK(close(fd));
  expect_contents("t", "ab");
  // Linux truncates even with O_RDONLY (given write permission).
  fd = open("t", O_RDONLY | O_TRUNC);
  CHECK(fd >= 0);
  CHECK_EQ(file_size("t"), 0);
  CHECK_OK(close(fd));
  // Through a symlink, the target is truncated.
  conf_put_file("t", "xyz", 0644);
  CHECK_OK(symlink("t", "tl"));
  fd = open("tl", O_RDWR | O_TRUNC);
  CHECK(fd >= 0);
  CHECK_EQ(file_size("t"), 0);
  CHECK_OK(close(fd));
  // A directory cannot be truncated; /dev/null does not mind.
  CHECK_OK(mkdir("d", 0755));
  CHECK_ERRNO(open("d", O_RDONLY | O_TRUNC), EISDIR);
  fd = open("/dev/null", O_WRONLY | O_TRUNC);
  CHECK(fd >= 0);
  CHECK_OK(close(fd));
  CHECK_OK(unlink("tl"));
  CHECK_OK(unlink("t"));
  CHECK_OK(rmdir("d"));
}

TEST(o_append) {
  conf_put_file("a", "", 0644);
  int app = open("a", O_WRONLY | O_APPEND);
  int plain = open("a", O_WRONLY);
  CHECK(app >= 0 && plain >= 0);
  CHECK_EQ(write(plain, "abc", 3), 3);
  // Seeking an O_APPEND fd is allowed, but writes still go to the end.
  CHECK_EQ(lseek(app, 0, SEEK_SET), 0);
  CHECK_EQ(write(app, "XY", 2), 2);
  CHECK_EQ(lseek(app, 0, SEEK_CUR), 5);
  expect_contents("a", "abcXY");
  // The plain fd is still at 3 and overwrites.
  CHECK_EQ(write(plain, "1", 1), 1);
  expect_contents("a", "abc1Y");
  // Linux: pwrite on an O_APPEND fd appends, ignoring the offset.
  CHECK_EQ(pwrite(app, "P", 1, 0), 1);
  expect_contents("a", "abc1YP");

  // Two append fds interleave without losing anything.
  int app2 = open("a", O_WRONLY | O_APPEND);
  CHECK(app2 >= 0);
  for (int i = 0; i < 10; i++) {
    CHECK_EQ(write(i % 2 ? app2 : app, i % 2 ? "o" : "e", 1), 1);
  }
  expect_contents("a", "abc1YPeoeoeoeoeo");

  // F_SETFL turns it off and on.
  CHECK(fcntl(app, F_GETFL) & O_APPEND);
  CHECK_OK(fcntl(app, F_SETFL, 0));
  CHECK_EQ(fcntl(app, F_GETFL) & O_APPEND, 0);
  CHECK_EQ(lseek(app, 0, SEEK_SET), 0);
  CHECK_EQ(write(app, "Z", 1), 1);
  expect_contents("a", "Zbc1YPeoeoeoeoeo");
  CHECK_OK(fcntl(app, F_SETFL, O_APPEND));
  CHECK_EQ(write(app, "!", 1), 1);
  expect_contents("a", "Zbc1YPeoeoeoeoeo!");

  // O_APPEND with O_TRUNC: starts empty, appends.
  int both = open("a", O_RDWR | O_APPEND | O_TRUNC);
  CHECK(both >= 0);
  CHECK_EQ(write(both, "new", 3), 3);
  CHECK_EQ(lseek(both, 0, SEEK_SET), 0);
  char buf[8];
  CHECK_EQ(read(both, buf, sizeof(buf)), 3);  // Reads honour the offset.
  CHECK(memcmp(buf, "new", 3) == 0);
  CHECK_OK(close(both));
  CHECK_OK(close(app));
  CHECK_OK(close(app2));
  CHECK_OK(close(plain));
  CHECK_OK(unlink("a"));
}

TEST(directories_and_access_modes) {
  conf_put_file("file", "data", 0644);
  CHECK_OK(mkdir("dir", 0755));
  CHECK_ERRNO(open("file", O_RDONLY | O_DIRECTORY), ENOTDIR);
  int fd = open("dir", O_RDONLY | O_DIRECTORY);
  CHECK(fd >= 0);
  char buf[8];
  CHECK_ERRNO(read(fd, buf, sizeof(buf)), EISDIR);
  CHECK_ERRNO(write(fd, "x", 1), EBADF);
  CHECK_OK(close(fd));
  CHECK_ERRNO(open("dir", O_WRONLY), EISDIR);
  CHECK_ERRNO(open("dir", O_RDWR), EISDIR);
  CHECK_ERRNO(open("dir", O_WRONLY | O_DIRECTORY), EISDIR);
  // O_DIRECTORY through a symlink to a directory is fine.
  CHECK_OK(symlink("dir", "dl"));
  fd = open("dl", O_RDONLY | O_DIRECTORY);
  CHECK(fd >= 0);
  CHECK_OK(close(fd));

  // Each access mode allows only its direction.
  fd = open("file", O_RDONLY);
  CHECK(fd >= 0);
  CHECK_ERRNO(write(fd, "x", 1), EBADF);
  CHECK_ERRNO(ftruncate(fd, 0), EINVAL);
  CHECK_OK(close(fd));
  fd = open("file", O_WRONLY);
  CHECK(fd >= 0);
  CHECK_ERRNO(read(fd, buf, 1), EBADF);
  CHECK_OK(close(fd));
  // Access mode 3 (O_RDWR|O_WRONLY): Linux opens it (checking both
  // permissions) but allows neither reading nor writing.
  fd = open("file", O_RDWR | O_WRONLY);
  CHECK(fd >= 0);
  CHECK_EQ(fcntl(fd, F_GETFL) & O_ACCMODE, 3);
  CHECK_ERRNO(read(fd, buf, 1), EBADF);
  CHECK_ERRNO(write(fd, "x", 1), EBADF);
  CHECK_OK(close(fd));

  // F_GETFL shows the access mode and status flags, not the open-time
  // flags (O_CREAT, O_EXCL, O_TRUNC, O_CLOEXEC).
  fd = open("file", O_RDWR | O_APPEND | O_NONBLOCK | O_CREAT | O_TRUNC |
                        O_CLOEXEC, 0644);
  CHECK(fd >= 0);
  CHECK_EQ(fcntl(fd, F_GETFL),
           O_RDWR | O_APPEND | O_NONBLOCK | KERNEL_O_LARGEFILE);
  CHECK_OK(close(fd));

  CHECK_OK(unlink("dl"));
  CHECK_OK(unlink("file"));
  CHECK_OK(rmdir("dir"));
}

TEST(o_cloexec_and_dup) {
  conf_put_file("c", "abcdef", 0644);
  int fd = open("c", O_RDONLY | O_CLOEXEC);
  CHECK(fd >= 0);
  CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
  // dup and dup2 give a descriptor without FD_CLOEXEC.
  int d = dup(fd);
  CHECK(d >= 0);
  CHECK_EQ(fcntl(d, F_GETFD), 0);
  CHECK_EQ(dup2(fd, 150), 150);
  CHECK_EQ(fcntl(150, F_GETFD), 0);
  CHECK_OK(close(150));
  CHECK_EQ(dup3(fd, 150, O_CLOEXEC), 150);
  CHECK_EQ(fcntl(150, F_GETFD), FD_CLOEXEC);
  CHECK_OK(close(150));
  int dc = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  CHECK(dc >= 0);
  CHECK_EQ(fcntl(dc, F_GETFD), FD_CLOEXEC);
  CHECK_OK(close(dc));
  // Without O_CLOEXEC the flag is clear.
  int plain = open("c", O_RDONLY);
  CHECK(plain >= 0);
  CHECK_EQ(fcntl(plain, F_GETFD), 0);
  CHECK_OK(close(plain));

  // Across exec: fd is closed, its dup survives with the shared offset.
  CHECK_EQ(lseek(fd, 3, SEEK_SET), 3);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    char s1[16], s2[16];
    snprintf(s1, sizeof(s1), "%d", fd);
    snprintf(s2, sizeof(s2), "%d", d);
    execl(conf_self, conf_self, "check-fds", s1, s2, (char *)NULL);
    _exit(127);
  }
  CHECK_EXIT(pid, 0);
  // The child's read moved the shared offset.
  CHECK_EQ(lseek(fd, 0, SEEK_CUR), 6);
  CHECK_OK(close(fd));
  CHECK_OK(close(d));
  CHECK_OK(unlink("c"));
}

TEST(lseek_and_holes) {
  int fd = open("h", O_RDWR | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  CHECK_EQ(write(fd, "hello", 5), 5);
  CHECK_EQ(lseek(fd, 0, SEEK_CUR), 5);
  CHECK_EQ(lseek(fd, 1, SEEK_SET), 1);
  CHECK_EQ(lseek(fd, 2, SEEK_CUR), 3);
  CHECK_EQ(lseek(fd, -1, SEEK_CUR), 2);
  CHECK_EQ(lseek(fd, 0, SEEK_END), 5);
  CHECK_EQ(lseek(fd, -5, SEEK_END), 0);
  CHECK_ERRNO(lseek(fd, -6, SEEK_END), EINVAL);
  CHECK_ERRNO(lseek(fd, -1, SEEK_SET), EINVAL);
  CHECK_ERRNO(lseek(fd, 0, 42), EINVAL);
  CHECK_EQ(lseek(fd, 0, SEEK_CUR), 0);  // Failed seeks did not move it.

  // Seeking past the end does not change the size; reading there gives
  // EOF; writing there leaves a hole of zeros.
  CHECK_EQ(lseek(fd, 100, SEEK_END), 105);
  CHECK_EQ(file_size("h"), 5);
  char buf[200];
  CHECK_EQ(read(fd, buf, sizeof(buf)), 0);
  CHECK_EQ(lseek(fd, 0, SEEK_CUR), 105);
  CHECK_EQ(write(fd, "Z", 1), 1);
  CHECK_EQ(file_size("h"), 106);
  CHECK_EQ(lseek(fd, 10, SEEK_SET), 10);
  CHECK_EQ(lseek(fd, 50, SEEK_CUR), 60);
  CHECK_EQ(write(fd, "M", 1), 1);
  CHECK_EQ(pread(fd, buf, sizeof(buf), 0), 106);
  CHECK(memcmp(buf, "hello", 5) == 0);
  for (int i = 5; i < 105; i++) {
    if (i == 60) {
      CHECK_EQ(buf[i], 'M');
    } else {
      CHECK_EQ(buf[i], 0);
    }
  }
  CHECK_EQ(buf[105], 'Z');

  // A big hole: 1 MiB of zeros, then a byte.
  CHECK_EQ(lseek(fd, 1 << 20, SEEK_SET), 1 << 20);
  CHECK_EQ(write(fd, "E", 1), 1);
  CHECK_EQ(file_size("h"), (1 << 20) + 1);
  CHECK_EQ(pread(fd, buf, 100, 500000), 100);
  for (int i = 0; i < 100; i++) CHECK_EQ(buf[i], 0);
  // SEEK_DATA past the end is ENXIO.
  CHECK_ERRNO(lseek(fd, (1 << 20) + 1, SEEK_DATA), ENXIO);
  CHECK_EQ(lseek(fd, 0, SEEK_DATA), 0);
  CHECK_OK(close(fd));
  CHECK_OK(unlink("h"));
}

TEST(pread_pwrite_keep_offset) {
  int fd = open("p", O_RDWR | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  CHECK_EQ(write(fd, "0123456789", 10), 10);
  CHECK_EQ(lseek(fd, 2, SEEK_SET), 2);
  char buf[16] = {0};
  CHECK_EQ(pread(fd, buf, 3, 5), 3);
  CHECK(memcmp(buf, "567", 3) == 0);
  CHECK_EQ(lseek(fd, 0, SEEK_CUR), 2);
  CHECK_EQ(pwrite(fd, "AB", 2, 8), 2);
  CHECK_EQ(lseek(fd, 0, SEEK_CUR), 2);
  CHECK_EQ(pread(fd, buf, sizeof(buf), 100), 0);  // Past EOF: 0.
  CHECK_EQ(pwrite(fd, "Q", 1, 12), 1);  // Past EOF: extends with a hole.
  CHECK_EQ(lseek(fd, 0, SEEK_CUR), 2);
  CHECK_EQ(read(fd, buf, sizeof(buf)), 11);
  CHECK(memcmp(buf, "234567AB\0\0Q", 11) == 0);
  CHECK_ERRNO(pread(fd, buf, 1, -1), EINVAL);
  CHECK_ERRNO(pwrite(fd, buf, 1, -1), EINVAL);
  CHECK_OK(close(fd));
  CHECK_OK(unlink("p"));
}

TEST(shared_offset_dup_and_fork) {
  int fd = open("s", O_RDWR | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  int d = dup(fd);
  CHECK(d >= 0);
  CHECK_EQ(write(fd, "one", 3), 3);
  CHECK_EQ(lseek(d, 0, SEEK_CUR), 3);
  CHECK_EQ(write(d, "two", 3), 3);
  CHECK_EQ(lseek(fd, 0, SEEK_CUR), 6);
  CHECK_EQ(lseek(d, 1, SEEK_SET), 1);
  CHECK_EQ(lseek(fd, 0, SEEK_CUR), 1);

  // A fork shares the open file, so the offset too.
  CHECK_EQ(lseek(fd, 0, SEEK_END), 6);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    CHECK_EQ(write(fd, "child", 5), 5);
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
  CHECK_EQ(lseek(fd, 0, SEEK_CUR), 11);
  CHECK_EQ(write(fd, "!", 1), 1);
  expect_contents("s", "onetwochild!");

  // A second open() has its own offset.
  int other = open("s", O_RDWR);
  CHECK(other >= 0);
  CHECK_EQ(lseek(other, 0, SEEK_CUR), 0);
  char buf[4];
  CHECK_EQ(read(other, buf, 3), 3);
  CHECK_EQ(lseek(fd, 0, SEEK_CUR), 12);
  CHECK_OK(close(other));
  CHECK_OK(close(d));
  CHECK_OK(close(fd));
  CHECK_OK(unlink("s"));
}

TEST(redirect_stdout_and_stderr) {
  // "cmd >f 2>&1": one open file on fds 1 and 2, so nothing is lost.
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    int fd = open("out", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || dup2(fd, 1) != 1 || dup2(1, 2) != 2) _exit(3);
    close(fd);
    for (int i = 0; i < 50; i++) {
      if (write(1, "o", 1) != 1 || write(2, "E", 1) != 1) _exit(4);
    }
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
  char want[101];
  for (int i = 0; i < 50; i++) {
    want[2 * i] = 'o';
    want[2 * i + 1] = 'E';
  }
  want[100] = '\0';
  expect_contents("out", want);

  // "cmd >f 2>f": two open files, two offsets; they overwrite each other.
  int f1 = open("out", O_WRONLY | O_TRUNC);
  int f2 = open("out", O_WRONLY);
  CHECK(f1 >= 0 && f2 >= 0);
  CHECK_EQ(write(f1, "AAAA", 4), 4);
  CHECK_EQ(write(f2, "BB", 2), 2);
  expect_contents("out", "BBAA");
  CHECK_OK(close(f1));
  CHECK_OK(close(f2));
  CHECK_OK(unlink("out"));
}

TEST(creat_call) {
  conf_put_file("cr", "old contents", 0600);
  int fd = creat("cr", 0644);
  CHECK(fd >= 0);
  CHECK_EQ(fcntl(fd, F_GETFL) & O_ACCMODE, O_WRONLY);
  CHECK_EQ(file_size("cr"), 0);  // Truncated.
  CHECK_EQ(write(fd, "n", 1), 1);
  char c;
  CHECK_ERRNO(read(fd, &c, 1), EBADF);
  CHECK_OK(close(fd));
  struct stat st;
  CHECK_OK(stat("cr", &st));
  CHECK_EQ(st.st_mode & 07777, 0600);  // Existing file keeps its mode.
  fd = creat("cr2", 0640);
  CHECK(fd >= 0);
  CHECK_OK(fstat(fd, &st));
  CHECK_EQ(st.st_mode & 07777, 0640);
  CHECK_OK(close(fd));
  CHECK_OK(unlink("cr"));
  CHECK_OK(unlink("cr2"));
}

TEST(umask_applies_to_o_creat) {
  mode_t old = umask(027);
  CHECK_EQ(old, 022);
  struct stat st;
  int fd = open("u1", O_WRONLY | O_CREAT, 0666);
  CHECK(fd >= 0);
  CHECK_OK(fstat(fd, &st));
  CHECK_EQ(st.st_mode & 07777, 0640);
  CHECK_OK(close(fd));
  CHECK_OK(mkdir("ud", 0777));
  CHECK_OK(stat("ud", &st));
  CHECK_EQ(st.st_mode & 07777, 0750);
  CHECK_EQ(umask(0), 027);
  fd = open("u2", O_WRONLY | O_CREAT, 0777);
  CHECK(fd >= 0);
  CHECK_OK(fstat(fd, &st));
  CHECK_EQ(st.st_mode & 07777, 0777);
  CHECK_OK(close(fd));
  // The umask never adds bits, and does not affect chmod.
  CHECK_EQ(umask(0777), 0);
  fd = open("u3", O_WRONLY | O_CREAT, 0644);
  CHECK(fd >= 0);
  CHECK_OK(fstat(fd, &st));
  CHECK_EQ(st.st_mode & 07777, 0);
  CHECK_OK(fchmod(fd, 0604));
  CHECK_OK(fstat(fd, &st));
  CHECK_EQ(st.st_mode & 07777, 0604);
  CHECK_OK(close(fd));
  // Only the low 9 bits are kept.
  CHECK_EQ(umask(07777), 0777);
  CHECK_EQ(umask(022), 0777);
  // A forked child inherits it.
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) _exit(umask(0) == 022 ? 0 : 1);
  CHECK_EXIT(pid, 0);
  CHECK_OK(unlink("u1"));
  CHECK_OK(unlink("u2"));
  CHECK_OK(unlink("u3"));
  CHECK_OK(rmdir("ud"));
}

TEST(close_range_call) {
  int fd = open("r", O_RDWR | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  for (int i = 200; i < 210; i++) CHECK_EQ(dup2(fd, i), i);
  CHECK_OK(syscall(SYS_close_range, 202, 205, 0));
  for (int i = 200; i < 210; i++) {
    if (i >= 202 && i <= 205) {
      CHECK_ERRNO(fcntl(i, F_GETFD), EBADF);
    } else {
      CHECK_EQ(fcntl(i, F_GETFD), 0);
    }
  }
  // CLOEXEC marks instead of closing.
  CHECK_OK(syscall(SYS_close_range, 206, 207, CLOSE_RANGE_CLOEXEC));
  CHECK_EQ(fcntl(206, F_GETFD), FD_CLOEXEC);
  CHECK_EQ(fcntl(207, F_GETFD), FD_CLOEXEC);
  CHECK_EQ(fcntl(208, F_GETFD), 0);
  // Ranges past the table's end and holes are fine.
  CHECK_OK(syscall(SYS_close_range, 206, ~0U, 0));
  for (int i = 206; i < 210; i++) CHECK_ERRNO(fcntl(i, F_GETFD), EBADF);
  CHECK_OK(syscall(SYS_close_range, 100000, 200000, 0));
  CHECK_ERRNO(syscall(SYS_close_range, 5, 4, 0), EINVAL);
  CHECK_ERRNO(syscall(SYS_close_range, 200, 201, 1U << 10), EINVAL);
  CHECK_EQ(fcntl(200, F_GETFD), 0);
  CHECK_OK(syscall(SYS_close_range, 200, 201, CLOSE_RANGE_UNSHARE));
  CHECK_ERRNO(fcntl(200, F_GETFD), EBADF);
  CHECK_ERRNO(fcntl(201, F_GETFD), EBADF);
  // The file itself was untouched.
  CHECK_EQ(write(fd, "ok", 2), 2);
  CHECK_OK(close(fd));
  CHECK_OK(unlink("r"));
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  if (argc > 1) return child_main(argc, argv);
  umask(022);
  conf_tmpdir("open_flags");
  RUN(o_creat_o_excl);
  RUN(o_trunc);
  RUN(o_append);
  RUN(directories_and_access_modes);
  RUN(o_cloexec_and_dup);
  RUN(lseek_and_holes);
  RUN(pread_pwrite_keep_offset);
  RUN(shared_offset_dup_and_fork);
  RUN(redirect_stdout_and_stderr);
  RUN(creat_call);
  RUN(umask_applies_to_o_creat);
  RUN(close_range_call);
  conf_tmpdir_remove();
  PASS("open_flags");
  return 0;
}
