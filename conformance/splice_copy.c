// sendfile, splice, tee and copy_file_range: data movement, offsets and the
// file position, and their errors.
#include "common.h"

#include <signal.h>
#include <sys/sendfile.h>

static char buf[200000];

static off_t pos_of(int fd) { return lseek(fd, 0, SEEK_CUR); }

TEST(sendfile_file_to_file) {
  conf_put_file("src", "0123456789abcdefghij", 0644);
  int in = open("src", O_RDONLY);
  int out = open("dst", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(in >= 0 && out >= 0);
  // From the file position, which moves.
  CHECK_EQ(sendfile(out, in, NULL, 5), 5);
  CHECK_EQ(pos_of(in), 5);
  CHECK_EQ(pos_of(out), 5);
  // From an explicit offset: the offset moves, the position does not.
  off_t off = 10;
  CHECK_EQ(sendfile(out, in, &off, 4), 4);
  CHECK_EQ(off, 14);
  CHECK_EQ(pos_of(in), 5);
  // At end of file: short, then zero.
  off = 18;
  CHECK_EQ(sendfile(out, in, &off, 100), 2);
  CHECK_EQ(sendfile(out, in, &off, 100), 0);
  CHECK_OK(close(out));
  size_t n = conf_get_file("dst", buf, sizeof(buf));
  CHECK_EQ(n, 11);
  CHECK(memcmp(buf, "01234abcdij", 11) == 0);

  // Errors.
  CHECK_ERRNO(sendfile(-1, in, NULL, 1), EBADF);
  CHECK_ERRNO(sendfile(in, in, NULL, 1), EBADF);  // in is read-only
  int wo = open("dst", O_WRONLY);
  CHECK(wo >= 0);
  CHECK_ERRNO(sendfile(wo, wo, NULL, 1), EBADF);  // write-only source
  off = -1;
  CHECK_ERRNO(sendfile(wo, in, &off, 1), EINVAL);
  int ap = open("dst", O_WRONLY | O_APPEND);
  CHECK(ap >= 0);
  CHECK_ERRNO(sendfile(ap, in, NULL, 1), EINVAL);
  CHECK_OK(close(ap));
  CHECK_OK(close(wo));
  CHECK_OK(close(in));
  CHECK_OK(unlink("src"));
  CHECK_OK(unlink("dst"));
}

TEST(sendfile_into_pipe) {
  conf_put_file("src", "hello, pipe", 0644);
  int in = open("src", O_RDONLY);
  CHECK(in >= 0);
  int p[2];
  CHECK_OK(pipe(p));
  CHECK_EQ(sendfile(p[1], in, NULL, 100), 11);
  char b[32];
  CHECK_EQ(read(p[0], b, sizeof(b)), 11);
  CHECK(memcmp(b, "hello, pipe", 11) == 0);
  // With an offset on a pipe source: sendfile needs a seekable source.
  off_t off = 0;
  CHECK_ERRNO(sendfile(p[1], p[0], &off, 1), ESPIPE);
  CHECK_OK(close(p[0]));
  CHECK_OK(close(p[1]));
  CHECK_OK(close(in));
  CHECK_OK(unlink("src"));
}

TEST(splice_file_and_pipe) {
  conf_put_file("src", "abcdefghijklmnopqrstuvwxyz", 0644);
  int in = open("src", O_RDONLY);
  CHECK(in >= 0);
  int p[2];
  CHECK_OK(pipe(p));
  // File to pipe from the position.
  CHECK_EQ(splice(in, NULL, p[1], NULL, 3, 0), 3);
  CHECK_EQ(pos_of(in), 3);
  // File to pipe from an offset; the position stays.
  loff_t off = 20;
  CHECK_EQ(splice(in, &off, p[1], NULL, 100, 0), 6);
  CHECK_EQ(off, 26);
  CHECK_EQ(pos_of(in), 3);
  // Pipe to file at an offset.
  int out = open("dst", O_RDWR | O_CREAT | O_TRUNC, 0644);
  CHECK(out >= 0);
  loff_t woff = 2;
  CHECK_EQ(splice(p[0], NULL, out, &woff, 4, 0), 4);
  CHECK_EQ(woff, 6);
  CHECK_EQ(pos_of(out), 0);
  // The rest to the file position.
  CHECK_EQ(splice(p[0], NULL, out, NULL, 100, 0), 5);
  CHECK_EQ(pos_of(out), 5);
  char b[16];
  // The pipe held "abcuvwxyz": "abcu" went to 2..5, then "vwxyz" to 0..4.
  CHECK_EQ(pread(out, b, sizeof(b), 0), 6);
  CHECK(memcmp(b, "vwxyzu", 6) == 0);
  // Empty pipe, non-blocking: EAGAIN.
  CHECK_ERRNO(splice(p[0], NULL, out, NULL, 10, SPLICE_F_NONBLOCK), EAGAIN);
  // Writer gone: end of file.
  CHECK_OK(close(p[1]));
  CHECK_EQ(splice(p[0], NULL, out, NULL, 10, 0), 0);
  CHECK_OK(close(p[0]));
  CHECK_OK(close(out));
  CHECK_OK(close(in));
  CHECK_OK(unlink("src"));
  CHECK_OK(unlink("dst"));
}

TEST(splice_errors) {
  conf_put_file("f", "data", 0644);
  int f = open("f", O_RDWR);
  int g = open("f", O_RDONLY);
  CHECK(f >= 0 && g >= 0);
  int p[2];
  CHECK_OK(pipe(p));
  loff_t off = 0;
  // No pipe on either side.
  CHECK_ERRNO(splice(g, NULL, f, NULL, 1, 0), EINVAL);
  // Offsets on a pipe.
  CHECK_ERRNO(splice(p[0], &off, f, NULL, 1, 0), ESPIPE);
  CHECK_ERRNO(splice(f, NULL, p[1], &off, 1, 0), ESPIPE);
  // Wrong ends and bad fds.
  CHECK_ERRNO(splice(p[1], NULL, f, NULL, 1, 0), EBADF);
  CHECK_ERRNO(splice(f, NULL, p[0], NULL, 1, 0), EBADF);
  CHECK_ERRNO(splice(-1, NULL, p[1], NULL, 1, 0), EBADF);
  CHECK_ERRNO(splice(p[0], NULL, g, NULL, 1, 0), EBADF);  // read-only target
  // Unknown flags; a pipe onto itself.
  CHECK_ERRNO(splice(f, NULL, p[1], NULL, 1, 0x100), EINVAL);
  CHECK_ERRNO(splice(p[0], NULL, p[1], NULL, 1, 0), EINVAL);
  // A negative offset.
  off = -5;
  CHECK_ERRNO(splice(f, &off, p[1], NULL, 1, 0), EINVAL);
  // Length zero does nothing, whatever the fds.
  CHECK_EQ(splice(-1, NULL, -1, NULL, 0, 0), 0);
  // An O_APPEND target.
  int ap = open("f", O_WRONLY | O_APPEND);
  CHECK(ap >= 0);
  CHECK_EQ(write(p[1], "x", 1), 1);
  CHECK_ERRNO(splice(p[0], NULL, ap, NULL, 1, 0), EINVAL);
  CHECK_OK(close(ap));
  // No reader: EPIPE (and SIGPIPE, ignored here).
  signal(SIGPIPE, SIG_IGN);
  CHECK_OK(close(p[0]));
  CHECK_ERRNO(splice(f, NULL, p[1], NULL, 1, 0), EPIPE);
  signal(SIGPIPE, SIG_DFL);
  CHECK_OK(close(p[1]));
  CHECK_OK(close(f));
  CHECK_OK(close(g));
  CHECK_OK(unlink("f"));
}

TEST(splice_pipe_to_pipe_and_tee) {
  int a[2], b[2], c[2];
  CHECK_OK(pipe(a));
  CHECK_OK(pipe(b));
  CHECK_OK(pipe(c));
  CHECK_EQ(write(a[1], "teeing", 6), 6);
  // tee copies without consuming.
  CHECK_EQ(tee(a[0], b[1], 4, 0), 4);
  char s[16];
  CHECK_EQ(read(b[0], s, sizeof(s)), 4);
  CHECK(memcmp(s, "teei", 4) == 0);
  // splice between pipes consumes.
  CHECK_EQ(splice(a[0], NULL, c[1], NULL, 100, 0), 6);
  CHECK_EQ(read(c[0], s, sizeof(s)), 6);
  CHECK(memcmp(s, "teeing", 6) == 0);
  // Nothing left: non-blocking tee and splice say EAGAIN.
  CHECK_ERRNO(tee(a[0], b[1], 4, SPLICE_F_NONBLOCK), EAGAIN);
  CHECK_ERRNO(splice(a[0], NULL, b[1], NULL, 4, SPLICE_F_NONBLOCK), EAGAIN);
  // tee errors.
  conf_put_file("f", "x", 0644);
  int f = open("f", O_RDWR);
  CHECK(f >= 0);
  CHECK_ERRNO(tee(f, b[1], 1, 0), EINVAL);
  CHECK_ERRNO(tee(a[0], f, 1, 0), EINVAL);
  CHECK_ERRNO(tee(a[0], a[1], 1, 0), EINVAL);
  CHECK_ERRNO(tee(a[1], b[1], 1, 0), EBADF);
  CHECK_ERRNO(tee(-1, b[1], 1, 0), EBADF);
  CHECK_ERRNO(tee(a[0], b[1], 1, 0x100), EINVAL);
  CHECK_EQ(tee(a[0], b[1], 0, 0), 0);
  // Writer gone: tee and splice report end of file.
  CHECK_OK(close(a[1]));
  CHECK_EQ(tee(a[0], b[1], 4, 0), 0);
  CHECK_OK(close(f));
  CHECK_OK(unlink("f"));
  CHECK_OK(close(a[0]));
  for (int i = 0; i < 2; i++) {
    CHECK_OK(close(b[i]));
    CHECK_OK(close(c[i]));
  }
}

TEST(copy_file_range_basic) {
  for (size_t i = 0; i < 150000; i++) buf[i] = (char)('a' + i % 26);
  int src = open("big", O_RDWR | O_CREAT | O_TRUNC, 0644);
  CHECK(src >= 0);
  conf_write_full(src, buf, 150000);
  CHECK_OK(lseek(src, 0, SEEK_SET));
  int dst = open("copy", O_RDWR | O_CREAT | O_TRUNC, 0644);
  CHECK(dst >= 0);
  // Whole file through the positions (may take several calls).
  size_t total = 0;
  for (;;) {
    ssize_t n = copy_file_range(src, NULL, dst, NULL, 200000, 0);
    CHECK(n >= 0);
    if (n == 0) break;
    total += n;
  }
  CHECK_EQ(total, 150000);
  CHECK_EQ(pos_of(src), 150000);
  CHECK_EQ(pos_of(dst), 150000);
  static char back[150000];
  CHECK_EQ(pread(dst, back, sizeof(back), 0), 150000);
  CHECK(memcmp(back, buf, 150000) == 0);
  // Explicit offsets: they move, the positions do not.
  loff_t in_off = 26, out_off = 200000;
  CHECK_EQ(copy_file_range(src, &in_off, dst, &out_off, 5, 0), 5);
  CHECK_EQ(in_off, 31);
  CHECK_EQ(out_off, 200005);
  CHECK_EQ(pos_of(src), 150000);
  CHECK_EQ(pos_of(dst), 150000);
  struct stat st;
  CHECK_OK(fstat(dst, &st));
  CHECK_EQ(st.st_size, 200005);
  char s[8];
  CHECK_EQ(pread(dst, s, 5, 200000), 5);
  CHECK(memcmp(s, "abcde", 5) == 0);
  // At or past the end of the source: 0.
  in_off = 150000;
  CHECK_EQ(copy_file_range(src, &in_off, dst, NULL, 10, 0), 0);
  in_off = 999999;
  CHECK_EQ(copy_file_range(src, &in_off, dst, NULL, 10, 0), 0);
  // Within one file, without overlap: fine; overlapping: EINVAL.
  in_off = 0;
  out_off = 100;
  CHECK_EQ(copy_file_range(src, &in_off, src, &out_off, 10, 0), 10);
  in_off = 0;
  out_off = 5;
  CHECK_ERRNO(copy_file_range(src, &in_off, src, &out_off, 10, 0), EINVAL);
  CHECK_OK(close(src));
  CHECK_OK(close(dst));
}

TEST(copy_file_range_errors) {
  int src = open("big", O_RDONLY);
  int dst = open("copy", O_WRONLY);
  CHECK(src >= 0 && dst >= 0);
  CHECK_ERRNO(copy_file_range(src, NULL, dst, NULL, 1, 1), EINVAL);
  CHECK_ERRNO(copy_file_range(-1, NULL, dst, NULL, 1, 0), EBADF);
  CHECK_ERRNO(copy_file_range(src, NULL, -1, NULL, 1, 0), EBADF);
  CHECK_ERRNO(copy_file_range(dst, NULL, src, NULL, 1, 0), EBADF);
  int ap = open("copy", O_WRONLY | O_APPEND);
  CHECK(ap >= 0);
  CHECK_ERRNO(copy_file_range(src, NULL, ap, NULL, 1, 0), EBADF);
  CHECK_OK(close(ap));
  // A negative offset: EINVAL, or EOVERFLOW first when offset + length wraps.
  loff_t off = -5;
  CHECK_ERRNO(copy_file_range(src, &off, dst, NULL, 1, 0), EINVAL);
  CHECK_ERRNO(copy_file_range(src, &off, dst, NULL, 5, 0), EOVERFLOW);
  int p[2];
  CHECK_OK(pipe(p));
  CHECK_ERRNO(copy_file_range(p[0], NULL, dst, NULL, 1, 0), EINVAL);
  CHECK_ERRNO(copy_file_range(src, NULL, p[1], NULL, 1, 0), EINVAL);
  CHECK_OK(mkdir("d", 0755));
  int d = open("d", O_RDONLY | O_DIRECTORY);
  CHECK(d >= 0);
  CHECK_ERRNO(copy_file_range(d, NULL, dst, NULL, 1, 0), EISDIR);
  CHECK_OK(close(d));
  CHECK_OK(rmdir("d"));
  CHECK_OK(close(p[0]));
  CHECK_OK(close(p[1]));
  CHECK_OK(close(src));
  CHECK_OK(close(dst));
  CHECK_OK(unlink("big"));
  CHECK_OK(unlink("copy"));
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  umask(022);
  conf_tmpdir("splice_copy");
  RUN(sendfile_file_to_file);
  RUN(sendfile_into_pipe);
  RUN(splice_file_and_pipe);
  RUN(splice_errors);
  RUN(splice_pipe_to_pipe_and_tee);
  RUN(copy_file_range_basic);
  RUN(copy_file_range_errors);
  conf_tmpdir_remove();
  PASS("splice_copy");
  return 0;
}
