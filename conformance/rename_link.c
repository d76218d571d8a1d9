// rename/renameat2, link/linkat, unlink/unlinkat, symlink/readlink: what
// replaces what, which errors, link counts and inode identity, and data
// kept alive by an open descriptor.
//
// Works in its own scratch directory under /tmp (conf_tmpdir).

#include "common.h"

#include <sys/stat.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

static long renameat2_(const char *from, const char *to, unsigned flags) {
  return syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, flags);
}

static ino_t ino_of(const char *path) {
  struct stat st;
  CHECK_OK(lstat(path, &st));
  return st.st_ino;
}

static nlink_t nlink_of(const char *path) {
  struct stat st;
  CHECK_OK(lstat(path, &st));
  return st.st_nlink;
}

static void expect_contents(const char *path, const char *want) {
  char buf[256];
  size_t n = conf_get_file(path, buf, sizeof(buf));
  CHECK_EQ(n, strlen(want));
  CHECK(memcmp(buf, want, n) == 0);
}

static void expect_missing(const char *path) {
  struct stat st;
  CHECK_ERRNO(lstat(path, &st), ENOENT);
}

// --- cases ---

TEST(rename_file_over_file) {
  conf_put_file("a", "AAA", 0644);
  conf_put_file("b", "B", 0644);
  ino_t ia = ino_of("a");
  int old_b = open("b", O_RDONLY);
  CHECK(old_b >= 0);
  CHECK_OK(rename("a", "b"));
  expect_missing("a");
  CHECK_EQ(ino_of("b"), ia);
  expect_contents("b", "AAA");
  // The replaced file lives on through the open fd, with no names left.
  struct stat st;
  CHECK_OK(fstat(old_b, &st));
  CHECK_EQ(st.st_nlink, 0);
  CHECK(st.st_ino != ia);
  char buf[8];
  CHECK_EQ(read(old_b, buf, sizeof(buf)), 1);
  CHECK_EQ(buf[0], 'B');
  CHECK_OK(close(old_b));
  // A plain move to a new name keeps the inode.
  CHECK_OK(rename("b", "c"));
  CHECK_EQ(ino_of("c"), ia);
  expect_missing("b");
  CHECK_ERRNO(rename("b", "d"), ENOENT);
  CHECK_ERRNO(rename("c", "nodir/c"), ENOENT);
  CHECK_ERRNO(rename("c", "c/x"), ENOTDIR);
  CHECK_OK(unlink("c"));
}

TEST(rename_directories) {
  CHECK_OK(mkdir("src", 0755));
  conf_put_file("src/f", "in src", 0644);
  CHECK_OK(mkdir("empty", 0755));
  CHECK_OK(mkdir("full", 0755));
  conf_put_file("full/x", "", 0644);
  ino_t isrc = ino_of("src");
  // Over an empty directory: replaces it.
  CHECK_OK(rename("src", "empty"));
  CHECK_EQ(ino_of("empty"), isrc);
  expect_contents("empty/f", "in src");
  expect_missing("src");
  // Over a non-empty one: refused.
  CHECK_ERRNO(rename("empty", "full"), ENOTEMPTY);
  expect_contents("full/x", "");
  // File over directory and directory over file.
  conf_put_file("file", "", 0644);
  CHECK_ERRNO(rename("file", "full"), EISDIR);
  CHECK_ERRNO(rename("full", "file"), ENOTDIR);
  // Into its own subtree.
  CHECK_OK(mkdir("full/sub", 0755));
  CHECK_ERRNO(rename("full", "full/sub/moved"), EINVAL);
  CHECK_ERRNO(rename("full", "full/moved"), EINVAL);
  // "." and ".." cannot be renamed or be a target.
  CHECK_ERRNO(rename("full/.", "dot"), EBUSY);
  CHECK_ERRNO(rename("full/sub/..", "dotdot"), EBUSY);
  CHECK_ERRNO(rename("file", "full/."), EBUSY);
  // Moving a directory updates its "..".
  CHECK_OK(mkdir("p1", 0755));
  CHECK_OK(mkdir("p2", 0755));
  CHECK_OK(mkdir("p1/child", 0755));
  CHECK_OK(rename("p1/child", "p2/child"));
  struct stat dotdot;
  CHECK_OK(stat("p2/child/..", &dotdot));
  CHECK_EQ(dotdot.st_ino, ino_of("p2"));
  CHECK_EQ(nlink_of("p1"), 2);
  CHECK_EQ(nlink_of("p2"), 3);

  CHECK_OK(unlink("empty/f"));
  CHECK_OK(rmdir("empty"));
  CHECK_OK(unlink("full/x"));
  CHECK_OK(rmdir("full/sub"));
  CHECK_OK(rmdir("full"));
  CHECK_OK(unlink("file"));
  CHECK_OK(rmdir("p2/child"));
  CHECK_OK(rmdir("p2"));
  CHECK_OK(rmdir("p1"));
}

TEST(rename_noreplace_and_exchange) {
  conf_put_file("x", "X", 0644);
  conf_put_file("y", "Y", 0644);
  CHECK_ERRNO(renameat2_("x", "y", RENAME_NOREPLACE), EEXIST);
  expect_contents("x", "X");
  expect_contents("y", "Y");
  CHECK_OK(renameat2_("x", "z", RENAME_NOREPLACE));
  expect_missing("x");
  expect_contents("z", "X");

  // Exchange two files: names swap, inodes follow their contents.
  ino_t iy = ino_of("y"), iz = ino_of("z");
  CHECK_OK(renameat2_("y", "z", RENAME_EXCHANGE));
  expect_contents("y", "X");
  expect_contents("z", "Y");
  CHECK_EQ(ino_of("y"), iz);
  CHECK_EQ(ino_of("z"), iy);
  // A file and a directory can be exchanged too.
  CHECK_OK(mkdir("dir", 0755));
  conf_put_file("dir/in", "IN", 0644);
  CHECK_OK(renameat2_("y", "dir", RENAME_EXCHANGE));
  expect_contents("y/in", "IN");
  expect_contents("dir", "X");
  // Both must exist.
  CHECK_ERRNO(renameat2_("y", "missing", RENAME_EXCHANGE), ENOENT);
  CHECK_ERRNO(renameat2_("missing", "y", RENAME_EXCHANGE), ENOENT);
  // The flags exclude each other; unknown flags are refused.
  CHECK_ERRNO(renameat2_("y", "z", RENAME_EXCHANGE | RENAME_NOREPLACE),
              EINVAL);
  CHECK_ERRNO(renameat2_("y", "z", 1 << 20), EINVAL);
  // flags == 0 is plain rename.
  CHECK_OK(renameat2_("z", "zz", 0));
  expect_contents("zz", "Y");

  CHECK_OK(unlink("zz"));
  CHECK_OK(unlink("dir"));
  CHECK_OK(unlink("y/in"));
  CHECK_OK(rmdir("y"));
}

TEST(rename_to_itself_is_a_no_op) {
  conf_put_file("same", "S", 0644);
  ino_t i = ino_of("same");
  CHECK_OK(rename("same", "same"));
  CHECK_EQ(ino_of("same"), i);
  expect_contents("same", "S");
  CHECK_OK(rename("same", "./same"));
  CHECK_EQ(ino_of("same"), i);
  // Two hard links of one file: rename succeeds and does nothing, both
  // names stay.
  CHECK_OK(link("same", "alias"));
  CHECK_OK(rename("same", "alias"));
  CHECK_EQ(ino_of("same"), i);
  CHECK_EQ(ino_of("alias"), i);
  CHECK_EQ(nlink_of("same"), 2);
  // Same for directories.
  CHECK_OK(mkdir("d", 0755));
  CHECK_OK(rename("d", "d"));
  CHECK_OK(rename("d", "d/"));
  struct stat st;
  CHECK_OK(stat("d", &st));
  CHECK(S_ISDIR(st.st_mode));
  CHECK_OK(unlink("same"));
  CHECK_OK(unlink("alias"));
  CHECK_OK(rmdir("d"));
}

TEST(rename_does_not_follow_symlinks) {
  conf_put_file("target", "T", 0644);
  conf_put_file("other", "O", 0644);
  CHECK_OK(symlink("target", "link"));
  // Renaming a link moves the link.
  CHECK_OK(rename("link", "link2"));
  struct stat st;
  CHECK_OK(lstat("link2", &st));
  CHECK(S_ISLNK(st.st_mode));
  expect_contents("link2", "T");
  // Renaming over a link replaces the link, not its target.
  CHECK_OK(rename("other", "link2"));
  CHECK_OK(lstat("link2", &st));
  CHECK(S_ISREG(st.st_mode));
  expect_contents("link2", "O");
  expect_contents("target", "T");
  CHECK_OK(unlink("link2"));
  CHECK_OK(unlink("target"));
}

TEST(hard_links) {
  conf_put_file("orig", "hello", 0644);
  CHECK_EQ(nlink_of("orig"), 1);
  CHECK_OK(link("orig", "second"));
  CHECK_EQ(nlink_of("orig"), 2);
  CHECK_EQ(nlink_of("second"), 2);
  CHECK_EQ(ino_of("orig"), ino_of("second"));
  // One file: a write through one name shows through the other.
  int fd = open("second", O_WRONLY | O_APPEND);
  CHECK(fd >= 0);
  CHECK_EQ(write(fd, " world", 6), 6);
  CHECK_OK(close(fd));
  expect_contents("orig", "hello world");
  // chmod through one name too.
  CHECK_OK(chmod("orig", 0600));
  struct stat st;
  CHECK_OK(stat("second", &st));
  CHECK_EQ(st.st_mode & 07777, 0600);
  CHECK_OK(link("orig", "third"));
  CHECK_EQ(nlink_of("second"), 3);
  CHECK_OK(unlink("orig"));
  CHECK_EQ(nlink_of("second"), 2);
  expect_contents("third", "hello world");

  CHECK_ERRNO(link("second", "third"), EEXIST);
  CHECK_ERRNO(link("missing", "x"), ENOENT);
  CHECK_ERRNO(link("second", "nodir/x"), ENOENT);
  CHECK_OK(mkdir("dir", 0755));
  CHECK_ERRNO(link("dir", "dirlink"), EPERM);
  CHECK_ERRNO(link("second", "dir/"), EEXIST);

  // link() does not follow a symlink: it links the symlink itself.
  CHECK_OK(symlink("second", "sym"));
  CHECK_OK(link("sym", "sym_hard"));
  CHECK_OK(lstat("sym_hard", &st));
  CHECK(S_ISLNK(st.st_mode));
  CHECK_EQ(st.st_ino, ino_of("sym"));
  CHECK_EQ(st.st_nlink, 2);
  // linkat(AT_SYMLINK_FOLLOW) links the target.
  CHECK_OK(linkat(AT_FDCWD, "sym", AT_FDCWD, "followed", AT_SYMLINK_FOLLOW));
  CHECK_EQ(ino_of("followed"), ino_of("second"));
  CHECK_EQ(nlink_of("second"), 3);
  CHECK_ERRNO(linkat(AT_FDCWD, "sym", AT_FDCWD, "bad", 0x12345), EINVAL);

  const char *names[] = {"second", "third", "sym", "sym_hard", "followed"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    CHECK_OK(unlink(names[i]));
  }
  CHECK_OK(rmdir("dir"));
}

TEST(unlink_open_file_keeps_data) {
  int fd = open("tmpfile", O_RDWR | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  CHECK_EQ(write(fd, "still here", 10), 10);
  CHECK_OK(unlink("tmpfile"));
  expect_missing("tmpfile");
  struct stat st;
  CHECK_OK(fstat(fd, &st));
  CHECK_EQ(st.st_nlink, 0);
  CHECK_EQ(st.st_size, 10);
  char buf[32] = {0};
  CHECK_EQ(pread(fd, buf, sizeof(buf), 0), 10);
  CHECK(memcmp(buf, "still here", 10) == 0);
  // Still writable, and a new file of the same name is a different one.
  CHECK_EQ(write(fd, "!", 1), 1);
  conf_put_file("tmpfile", "new", 0644);
  CHECK_OK(fstat(fd, &st));
  CHECK_EQ(st.st_size, 11);
  CHECK(st.st_ino != ino_of("tmpfile"));
  expect_contents("tmpfile", "new");
  CHECK_OK(close(fd));
  CHECK_OK(unlink("tmpfile"));
}

TEST(unlink_errors) {
  CHECK_OK(mkdir("dir", 0755));
  conf_put_file("file", "", 0644);
  CHECK_ERRNO(unlink("dir"), EISDIR);
  CHECK_ERRNO(unlink("dir/"), EISDIR);
  CHECK_ERRNO(unlink("missing"), ENOENT);
  CHECK_ERRNO(unlink("file/x"), ENOTDIR);
  CHECK_ERRNO(unlinkat(AT_FDCWD, "file", AT_REMOVEDIR), ENOTDIR);
  CHECK_ERRNO(unlinkat(AT_FDCWD, "file", 0x1), EINVAL);
  CHECK_OK(unlinkat(AT_FDCWD, "dir", AT_REMOVEDIR));
  CHECK_OK(unlinkat(AT_FDCWD, "file", 0));
  expect_missing("dir");
  expect_missing("file");
  // unlink of a symlink removes the link only.
  conf_put_file("t", "", 0644);
  CHECK_OK(symlink("t", "l"));
  CHECK_OK(unlink("l"));
  expect_missing("l");
  CHECK_OK(unlink("t"));
}

TEST(symlink_and_readlink) {
  const char *target = "some/target/path";  // 16 bytes.
  CHECK_OK(symlink(target, "l"));
  char buf[64];
  memset(buf, '#', sizeof(buf));
  CHECK_EQ(readlink("l", buf, sizeof(buf)), 16);
  CHECK(memcmp(buf, target, 16) == 0);
  CHECK_EQ(buf[16], '#');  // No NUL written.
  // A short buffer truncates silently.
  memset(buf, '#', sizeof(buf));
  CHECK_EQ(readlink("l", buf, 4), 4);
  CHECK(memcmp(buf, "some", 4) == 0);
  CHECK_EQ(buf[4], '#');
  CHECK_ERRNO(readlink("l", buf, 0), EINVAL);
  struct stat st;
  CHECK_OK(lstat("l", &st));
  CHECK(S_ISLNK(st.st_mode));
  CHECK_EQ(st.st_size, 16);
  CHECK_EQ(st.st_mode & 07777, 0777);
  // Targets are stored byte for byte, and need not exist or be tidy.
  const char *odd = "..//./x y\t\xc3\xa9//";
  CHECK_OK(symlink(odd, "odd"));
  CHECK_EQ(readlink("odd", buf, sizeof(buf)), (ssize_t)strlen(odd));
  CHECK(memcmp(buf, odd, strlen(odd)) == 0);
  // Not a symlink / missing / existing name.
  conf_put_file("reg", "", 0644);
  CHECK_ERRNO(readlink("reg", buf, sizeof(buf)), EINVAL);
  CHECK_ERRNO(readlink(".", buf, sizeof(buf)), EINVAL);
  CHECK_ERRNO(readlink("missing", buf, sizeof(buf)), ENOENT);
  CHECK_ERRNO(symlink("x", "reg"), EEXIST);
  CHECK_ERRNO(symlink("x", "l"), EEXIST);
  // readlink follows links in the middle of a path, not at the end.
  CHECK_OK(mkdir("d", 0755));
  CHECK_OK(symlink("inner-target", "d/inner"));
  CHECK_OK(symlink("d", "dl"));
  CHECK_EQ(readlink("dl/inner", buf, sizeof(buf)), 12);
  CHECK(memcmp(buf, "inner-target", 12) == 0);
  // A long target (up to PATH_MAX - 1 bytes).
  static char longt[PATH_MAX];
  memset(longt, 'x', PATH_MAX - 1);
  longt[PATH_MAX - 1] = '\0';
  CHECK_OK(symlink(longt, "long"));
  static char back[PATH_MAX + 10];
  CHECK_EQ(readlink("long", back, sizeof(back)), PATH_MAX - 1);
  CHECK(memcmp(back, longt, PATH_MAX - 1) == 0);
  static char toolong[PATH_MAX + 1];
  memset(toolong, 'y', PATH_MAX);
  toolong[PATH_MAX] = '\0';
  CHECK_ERRNO(symlink(toolong, "toolong"), ENAMETOOLONG);

  const char *names[] = {"l", "odd", "reg", "d/inner", "dl", "long"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    CHECK_OK(unlink(names[i]));
  }
  CHECK_OK(rmdir("d"));
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  umask(022);
  conf_tmpdir("rename_link");
  RUN(rename_file_over_file);
  RUN(rename_directories);
  RUN(rename_noreplace_and_exchange);
  RUN(rename_to_itself_is_a_no_op);
  RUN(rename_does_not_follow_symlinks);
  RUN(hard_links);
  RUN(unlink_open_file_keeps_data);
  RUN(unlink_errors);
  RUN(symlink_and_readlink);
  conf_tmpdir_remove();
  PASS("rename_link");
  return 0;
}
