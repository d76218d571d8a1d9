// Path resolution: "." and "..", trailing slashes, symlinks (chains, loops,
// relative and absolute targets, dangling links with O_CREAT, "..", after a
// symlink), O_NOFOLLOW, O_PATH and AT_EMPTY_PATH, dirfd-relative lookups,
// name length limits, empty paths, the working directory and realpath.
//
// Works in its own scratch directory under /tmp (conf_tmpdir).

#include "common.h"

#include <dirent.h>

static const char *tmp;  // Canonical path of the scratch directory.

static int same_file(const struct stat *a, const struct stat *b) {
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

static void stat_ok(const char *path, struct stat *st) {
  if (stat(path, st) != 0) {
    fprintf(stderr, "stat(%s) failed\n", path);
    CHECK(0);
  }
}

// Reads the first few bytes of path (following symlinks) into buf.
static void read_back(const char *path, char *buf, size_t cap) {
  int fd = open(path, O_RDONLY);
  CHECK(fd >= 0);
  ssize_t n = read(fd, buf, cap - 1);
  CHECK(n >= 0);
  buf[n] = '\0';
  CHECK_OK(close(fd));
}

static void back_to_tmp(void) { CHECK_OK(chdir(tmp)); }

// --- cases ---

TEST(dotdot_at_root_stays_at_root) {
  struct stat root, st;
  stat_ok("/", &root);
  stat_ok("/..", &st);
  CHECK(same_file(&root, &st));
  stat_ok("/../../..", &st);
  CHECK(same_file(&root, &st));
  stat_ok("/./.././.", &st);
  CHECK(same_file(&root, &st));
  stat_ok("//", &st);  // Leading double slash is just the root on Linux.
  CHECK(same_file(&root, &st));

  CHECK_OK(chdir("/"));
  CHECK_OK(chdir(".."));
  CHECK_OK(chdir("../.."));
  char cwd[PATH_MAX];
  CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
  CHECK_EQ(strcmp(cwd, "/"), 0);

  int rootfd = open("/", O_RDONLY | O_DIRECTORY);
  CHECK(rootfd >= 0);
  CHECK_OK(fstatat(rootfd, "..", &st, 0));
  CHECK(same_file(&root, &st));
  CHECK_OK(fstatat(rootfd, "../..", &st, 0));
  CHECK(same_file(&root, &st));
  CHECK_OK(close(rootfd));
  back_to_tmp();

  // ".." from the scratch directory is its parent, wherever that is.
  struct stat parent;
  char buf[PATH_MAX];
  snprintf(buf, sizeof(buf), "%s", tmp);
  *strrchr(buf, '/') = '\0';
  stat_ok(buf[0] ? buf : "/", &parent);
  stat_ok("..", &st);
  CHECK(same_file(&parent, &st));
}

TEST(trailing_slashes) {
  conf_put_file("f", "x", 0644);
  struct stat st;
  int fd;
  // A trailing slash demands a directory.
  CHECK_ERRNO(open("f/", O_RDONLY), ENOTDIR);
  CHECK_ERRNO(stat("f/", &st), ENOTDIR);
  CHECK_ERRNO(lstat("f/", &st), ENOTDIR);
  CHECK_ERRNO(open("f/.", O_RDONLY), ENOTDIR);
  CHECK_ERRNO(unlink("f/"), ENOTDIR);
  CHECK_ERRNO(rename("f/", "g"), ENOTDIR);
  // Creating a regular file through a trailing slash is refused.
  CHECK_ERRNO(open("newfile/", O_WRONLY | O_CREAT, 0644), EISDIR);
  CHECK_ERRNO(stat("newfile", &st), ENOENT);

  // mkdir and rmdir accept them, also several.
  CHECK_OK(mkdir("d/", 0755));
  stat_ok("d/", &st);
  CHECK(S_ISDIR(st.st_mode));
  CHECK_OK(mkdir("d2//", 0755));
  stat_ok("d2", &st);
  CHECK(S_ISDIR(st.st_mode));
  fd = open("d/.", O_RDONLY);
  CHECK(fd >= 0);
  CHECK_OK(close(fd));
  stat_ok("d//.//", &st);
  CHECK(S_ISDIR(st.st_mode));
  CHECK_OK(rmdir("d2/"));
  CHECK_ERRNO(mkdir("f/", 0755), EEXIST);

  // A trailing slash follows a symlink even for lstat.
  CHECK_OK(symlink("d", "dlink"));
  CHECK_OK(lstat("dlink", &st));
  CHECK(S_ISLNK(st.st_mode));
  CHECK_OK(lstat("dlink/", &st));
  CHECK(S_ISDIR(st.st_mode));
  CHECK_OK(symlink("f", "flink"));
  CHECK_ERRNO(lstat("flink/", &st), ENOTDIR);
  CHECK_ERRNO(open("flink/", O_RDONLY), ENOTDIR);

  CHECK_OK(unlink("dlink"));
  CHECK_OK(unlink("flink"));
  CHECK_OK(rmdir("d/"));
  CHECK_OK(unlink("f"));
}

TEST(dot_and_slash_components) {
  CHECK_OK(mkdir("a", 0755));
  CHECK_OK(mkdir("a/b", 0755));
  conf_put_file("a/b/file", "B", 0644);
  char buf[16];
  read_back("a/b/file", buf, sizeof(buf));
  CHECK_EQ(strcmp(buf, "B"), 0);
  read_back("./a/./b/../b//file", buf, sizeof(buf));
  CHECK_EQ(strcmp(buf, "B"), 0);
  read_back("a///b/.//./file", buf, sizeof(buf));
  CHECK_EQ(strcmp(buf, "B"), 0);
  struct stat st;
  // ".." needs the directory before it to exist (no lexical shortcut).
  CHECK_ERRNO(stat("a/nonexistent/../b/file", &st), ENOENT);
  // ... and to be a directory.
  CHECK_ERRNO(stat("a/b/file/../file", &st), ENOTDIR);
  CHECK_ERRNO(stat("a/b/file/.", &st), ENOTDIR);
  CHECK_OK(unlink("a/b/file"));
  CHECK_OK(rmdir("a/b"));
  CHECK_OK(rmdir("a"));
}

TEST(symlink_chains) {
  conf_put_file("target", "T", 0644);
  CHECK_OK(symlink("target", "c"));
  CHECK_OK(symlink("c", "b"));
  CHECK_OK(symlink("b", "a"));
  char buf[16];
  read_back("a", buf, sizeof(buf));
  CHECK_EQ(strcmp(buf, "T"), 0);
  struct stat st, tst, lst;
  stat_ok("a", &st);
  stat_ok("target", &tst);
  CHECK(S_ISREG(st.st_mode));
  CHECK(same_file(&st, &tst));
  CHECK_OK(lstat("a", &lst));
  CHECK(S_ISLNK(lst.st_mode));
  CHECK(!same_file(&lst, &tst));
  // The middle of a chain, as a directory component.
  CHECK_OK(mkdir("dir", 0755));
  conf_put_file("dir/in", "IN", 0644);
  CHECK_OK(symlink("dir", "d1"));
  CHECK_OK(symlink("d1", "d2"));
  read_back("d2/in", buf, sizeof(buf));
  CHECK_EQ(strcmp(buf, "IN"), 0);
  read_back("d2/../d1/in", buf, sizeof(buf));
  CHECK_EQ(strcmp(buf, "IN"), 0);
  // Renaming the end of the chain breaks it; putting it back fixes it.
  CHECK_OK(rename("target", "target2"));
  CHECK_ERRNO(open("a", O_RDONLY), ENOENT);
  CHECK_OK(lstat("a", &lst));
  CHECK_OK(rename("target2", "target"));
  read_back("a", buf, sizeof(buf));
  CHECK_EQ(strcmp(buf, "T"), 0);

  const char *names[] = {"a", "b", "c", "target", "d1", "d2", "dir/in"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    CHECK_OK(unlink(names[i]));
  }
  CHECK_OK(rmdir("dir"));
}

// Makes l<first>..l<last>, each pointing at the next; the last points at
// "end".
static void make_chain(const char *prefix, int n) {
  char name[64], next[64];
  for (int i = 0; i < n; i++) {
    snprintf(name, sizeof(name), "%s%d", prefix, i);
    if (i + 1 < n) {
      snprintf(next, sizeof(next), "%s%d", prefix, i + 1);
    } else {
      snprintf(next, sizeof(next), "end");
    }
    CHECK_OK(symlink(next, name));
  }
}

static void remove_chain(const char *prefix, int n) {
  char name[64];
  for (int i = 0; i < n; i++) {
    snprintf(name, sizeof(name), "%s%d", prefix, i);
    CHECK_OK(unlink(name));
  }
}

TEST(eloop_limits) {
  conf_put_file("end", "E", 0644);
  // 40 links are followed (MAXSYMLINKS); the 41st is one too many.
  make_chain("p", 40);
  char buf[16];
  read_back("p0", buf, sizeof(buf));
  CHECK_EQ(strcmp(buf, "E"), 0);
  make_chain("q", 41);
  struct stat st;
  CHECK_ERRNO(open("q0", O_RDONLY), ELOOP);
  CHECK_ERRNO(stat("q0", &st), ELOOP);
  CHECK_OK(lstat("q0", &st));  // Not followed: fine.
  CHECK_OK(stat("q1", &st));   // One fewer: fine.
  // The limit counts the whole walk, not one chain: 40 + 1 more in a
  // directory component ("dlink/" -> ".") is too many.
  CHECK_OK(symlink(".", "dlink"));
  CHECK_OK(stat("dlink/p1", &st));
  CHECK_ERRNO(stat("dlink/p0", &st), ELOOP);

  // Loops.
  CHECK_OK(symlink("self", "self"));
  CHECK_ERRNO(open("self", O_RDONLY), ELOOP);
  CHECK_ERRNO(stat("self", &st), ELOOP);
  CHECK_ERRNO(open("self", O_WRONLY | O_CREAT, 0644), ELOOP);
  CHECK_OK(lstat("self", &st));
  CHECK(S_ISLNK(st.st_mode));
  CHECK_OK(symlink("loop2", "loop1"));
  CHECK_OK(symlink("loop1", "loop2"));
  CHECK_ERRNO(stat("loop1", &st), ELOOP);
  CHECK_ERRNO(stat("loop1/x", &st), ELOOP);
  CHECK_ERRNO(chdir("loop2"), ELOOP);

  remove_chain("p", 40);
  remove_chain("q", 41);
  const char *names[] = {"end", "dlink", "self", "loop1", "loop2"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    CHECK_OK(unlink(names[i]));
  }
}

TEST(o_nofollow) {
  conf_put_file("file", "F", 0644);
  CHECK_OK(symlink("file", "link"));
  CHECK_ERRNO(open("link", O_RDONLY | O_NOFOLLOW), ELOOP);
  CHECK_ERRNO(open("link", O_WRONLY | O_CREAT | O_NOFOLLOW, 0644), ELOOP);
  int fd = open("file", O_RDONLY | O_NOFOLLOW);
  CHECK(fd >= 0);
  CHECK_OK(close(fd));
  // Only the last component is affected.
  CHECK_OK(mkdir("dir", 0755));
  conf_put_file("dir/in", "I", 0644);
  CHECK_OK(symlink("dir", "dirlink"));
  fd = open("dirlink/in", O_RDONLY | O_NOFOLLOW);
  CHECK(fd >= 0);
  CHECK_OK(close(fd));
  // With O_PATH it opens the symlink itself.
  fd = open("link", O_PATH | O_NOFOLLOW);
  CHECK(fd >= 0);
  struct stat st;
  CHECK_OK(fstat(fd, &st));
  CHECK(S_ISLNK(st.st_mode));
  CHECK_EQ(st.st_size, 4);
  char buf[16];
  // readlinkat with an empty path reads the link the fd refers to.
  CHECK_EQ(readlinkat(fd, "", buf, sizeof(buf)), 4);
  CHECK(memcmp(buf, "file", 4) == 0);
  CHECK_OK(close(fd));
  CHECK_OK(unlink("dirlink"));
  CHECK_OK(unlink("dir/in"));
  CHECK_OK(rmdir("dir"));
  CHECK_OK(unlink("link"));
  CHECK_OK(unlink("file"));
}

TEST(o_path_descriptors) {
  CHECK_OK(mkdir("d", 0755));
  conf_put_file("d/inner", "INNER", 0644);
  int dfd = open("d", O_PATH | O_DIRECTORY);
  CHECK(dfd >= 0);
  CHECK(fcntl(dfd, F_GETFL) & O_PATH);
  struct stat st, want;
  CHECK_OK(fstat(dfd, &st));
  stat_ok("d", &want);
  CHECK(S_ISDIR(st.st_mode));
  CHECK(same_file(&st, &want));
  // A lookup base, but not readable itself.
  int fd = openat(dfd, "inner", O_RDONLY);
  CHECK(fd >= 0);
  char buf[16] = {0};
  CHECK_EQ(read(fd, buf, sizeof(buf)), 5);
  CHECK(memcmp(buf, "INNER", 5) == 0);
  CHECK_OK(close(fd));
  CHECK_OK(fstatat(dfd, "inner", &st, 0));
  CHECK_EQ(st.st_size, 5);
  CHECK_ERRNO(getdents64(dfd, buf, sizeof(buf)), EBADF);
  CHECK_OK(fchdir(dfd));
  CHECK_OK(stat("inner", &st));
  back_to_tmp();

  int ffd = open("d/inner", O_PATH);
  CHECK(ffd >= 0);
  CHECK_ERRNO(read(ffd, buf, 1), EBADF);
  CHECK_ERRNO(write(ffd, "x", 1), EBADF);
  CHECK_ERRNO(fchmod(ffd, 0600), EBADF);
  CHECK_OK(fstat(ffd, &st));
  CHECK_EQ(st.st_size, 5);
  // A file is no lookup base.
  CHECK_ERRNO(openat(ffd, "x", O_RDONLY), ENOTDIR);
  // O_PATH ignores other flags but O_DIRECTORY, O_NOFOLLOW, O_CLOEXEC.
  CHECK_ERRNO(open("d/inner", O_PATH | O_DIRECTORY), ENOTDIR);
  int fd2 = open("d/inner", O_PATH | O_WRONLY | O_TRUNC);
  CHECK(fd2 >= 0);
  CHECK_OK(fstat(fd2, &st));
  CHECK_EQ(st.st_size, 5);  // Not truncated.
  CHECK_OK(close(fd2));
  CHECK_OK(close(ffd));
  CHECK_OK(close(dfd));
  CHECK_OK(unlink("d/inner"));
  CHECK_OK(rmdir("d"));
}

TEST(at_empty_path) {
  conf_put_file("file", "12345678", 0644);
  CHECK_OK(symlink("file", "link"));
  CHECK_OK(mkdir("dir", 0755));
  struct stat st, want;

  int ffd = open("file", O_PATH);
  CHECK(ffd >= 0);
  CHECK_OK(fstatat(ffd, "", &st, AT_EMPTY_PATH));
  stat_ok("file", &want);
  CHECK(same_file(&st, &want));
  CHECK_EQ(st.st_size, 8);
  // Without the flag, "" is ENOENT.
  CHECK_ERRNO(fstatat(ffd, "", &st, 0), ENOENT);

  int lfd = open("link", O_PATH | O_NOFOLLOW);
  CHECK(lfd >= 0);
  CHECK_OK(fstatat(lfd, "", &st, AT_EMPTY_PATH));
  CHECK(S_ISLNK(st.st_mode));
  CHECK_OK(fstatat(lfd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW));
  CHECK(S_ISLNK(st.st_mode));

  int dfd = open("dir", O_PATH | O_DIRECTORY);
  CHECK(dfd >= 0);
  CHECK_OK(fstatat(dfd, "", &st, AT_EMPTY_PATH));
  CHECK(S_ISDIR(st.st_mode));
  // AT_FDCWD with an empty path is the working directory.
  CHECK_OK(fstatat(AT_FDCWD, "", &st, AT_EMPTY_PATH));
  stat_ok(".", &want);
  CHECK(same_file(&st, &want));
  // A non-empty path ignores the flag.
  CHECK_OK(fstatat(dfd, "..", &st, AT_EMPTY_PATH));
  CHECK(same_file(&st, &want));

  // linkat(AT_EMPTY_PATH) links the file an fd refers to (privileged).
  CHECK_OK(linkat(ffd, "", AT_FDCWD, "file2", AT_EMPTY_PATH));
  CHECK_OK(stat("file2", &st));
  stat_ok("file", &want);
  CHECK(same_file(&st, &want));
  CHECK_EQ(st.st_nlink, 2);

  CHECK_OK(close(ffd));
  CHECK_OK(close(lfd));
  CHECK_OK(close(dfd));
  CHECK_OK(unlink("file2"));
  CHECK_OK(unlink("link"));
  CHECK_OK(unlink("file"));
  CHECK_OK(rmdir("dir"));
}

TEST(dirfd_relative_walks) {
  CHECK_OK(mkdir("top", 0755));
  CHECK_OK(mkdir("top/sub", 0755));
  conf_put_file("top/sub/leaf", "LEAF", 0644);
  conf_put_file("sibling", "SIB", 0644);
  int top = open("top", O_RDONLY | O_DIRECTORY);
  CHECK(top >= 0);
  int fd = openat(top, "sub/leaf", O_RDONLY);
  CHECK(fd >= 0);
  char buf[16] = {0};
  CHECK_EQ(read(fd, buf, sizeof(buf)), 4);
  CHECK(memcmp(buf, "LEAF", 4) == 0);
  CHECK_OK(close(fd));
  struct stat st;
  CHECK_OK(fstatat(top, "../sibling", &st, 0));
  CHECK_EQ(st.st_size, 3);
  CHECK_OK(mkdirat(top, "made", 0755));
  CHECK_OK(stat("top/made", &st));
  CHECK(S_ISDIR(st.st_mode));
  CHECK_OK(symlinkat("sub/leaf", top, "ln"));
  CHECK_EQ(readlinkat(top, "ln", buf, sizeof(buf)), 8);
  CHECK(memcmp(buf, "sub/leaf", 8) == 0);
  // The link resolves relative to its own directory, not to the cwd.
  CHECK_OK(fstatat(top, "ln", &st, 0));
  CHECK_EQ(st.st_size, 4);
  CHECK_OK(stat("top/ln", &st));
  CHECK_EQ(st.st_size, 4);
  CHECK_OK(renameat(top, "made", top, "sub/moved"));
  CHECK_OK(stat("top/sub/moved", &st));
  CHECK_OK(unlinkat(top, "sub/moved", AT_REMOVEDIR));
  CHECK_OK(unlinkat(top, "ln", 0));

  // The directory fd keeps working after the directory is renamed.
  CHECK_OK(rename("top", "top2"));
  CHECK_OK(fstatat(top, "sub/leaf", &st, 0));
  CHECK_EQ(st.st_size, 4);
  CHECK_OK(rename("top2", "top"));

  // An absolute path ignores the dirfd, even a bad one.
  char abs[PATH_MAX];
  snprintf(abs, sizeof(abs), "%s/sibling", tmp);
  fd = openat(-1, abs, O_RDONLY);
  CHECK(fd >= 0);
  CHECK_OK(close(fd));
  CHECK_OK(fstatat(12345, abs, &st, 0));
  // A relative one needs a good directory fd.
  CHECK_ERRNO(openat(-1, "sibling", O_RDONLY), EBADF);
  CHECK_ERRNO(openat(12345, "sibling", O_RDONLY), EBADF);
  int file = open("sibling", O_RDONLY);
  CHECK(file >= 0);
  CHECK_ERRNO(openat(file, "x", O_RDONLY), ENOTDIR);
  CHECK_ERRNO(fstatat(file, "x", &st, 0), ENOTDIR);
  CHECK_OK(close(file));

  CHECK_OK(close(top));
  CHECK_OK(unlink("top/sub/leaf"));
  CHECK_OK(rmdir("top/sub"));
  CHECK_OK(rmdir("top"));
  CHECK_OK(unlink("sibling"));
}

TEST(at_fdcwd) {
  CHECK_OK(mkdir("x", 0755));
  conf_put_file("x/here", "in x", 0644);
  conf_put_file("here", "top", 0644);
  struct stat st;
  CHECK_OK(fstatat(AT_FDCWD, "here", &st, 0));
  CHECK_EQ(st.st_size, 3);
  CHECK_OK(chdir("x"));
  // AT_FDCWD follows chdir.
  CHECK_OK(fstatat(AT_FDCWD, "here", &st, 0));
  CHECK_EQ(st.st_size, 4);
  int fd = openat(AT_FDCWD, "../here", O_RDONLY);
  CHECK(fd >= 0);
  CHECK_OK(fstat(fd, &st));
  CHECK_EQ(st.st_size, 3);
  CHECK_OK(close(fd));
  back_to_tmp();
  CHECK_OK(unlink("x/here"));
  CHECK_OK(rmdir("x"));
  CHECK_OK(unlink("here"));
}

TEST(name_too_long) {
  char name[300];
  memset(name, 'n', 255);
  name[255] = '\0';
  // 255 bytes is the longest component.
  int fd = open(name, O_WRONLY | O_CREAT | O_EXCL, 0644);
  CHECK(fd >= 0);
  CHECK_OK(close(fd));
  struct stat st;
  CHECK_OK(stat(name, &st));
  CHECK_OK(unlink(name));
  memset(name, 'n', 256);
  name[256] = '\0';
  CHECK_ERRNO(open(name, O_WRONLY | O_CREAT, 0644), ENAMETOOLONG);
  CHECK_ERRNO(open(name, O_RDONLY), ENAMETOOLONG);
  CHECK_ERRNO(stat(name, &st), ENAMETOOLONG);
  CHECK_ERRNO(mkdir(name, 0755), ENAMETOOLONG);
  CHECK_ERRNO(symlink("x", name), ENAMETOOLONG);
  // Also as a middle component.
  char path[400];
  snprintf(path, sizeof(path), "%s/x", name);
  CHECK_ERRNO(stat(path, &st), ENAMETOOLONG);

  // The whole path: 4095 bytes and a NUL fit in PATH_MAX, 4096 do not.
  conf_put_file("f", "", 0644);
  static char longpath[PATH_MAX + 2];
  size_t n = 0;
  while (n + 2 < PATH_MAX - 1) {
    longpath[n++] = '.';
    longpath[n++] = '/';
  }
  longpath[n++] = 'f';
  longpath[n] = '\0';
  CHECK_EQ(strlen(longpath), PATH_MAX - 1);
  CHECK_OK(stat(longpath, &st));
  longpath[n - 1] = '/';
  longpath[n++] = 'f';
  longpath[n] = '\0';
  CHECK_EQ(strlen(longpath), PATH_MAX);
  CHECK_ERRNO(stat(longpath, &st), ENAMETOOLONG);
  CHECK_OK(unlink("f"));
}

TEST(empty_path_is_enoent) {
  struct stat st;
  char buf[16];
  CHECK_ERRNO(open("", O_RDONLY), ENOENT);
  CHECK_ERRNO(open("", O_WRONLY | O_CREAT, 0644), ENOENT);
  CHECK_ERRNO(stat("", &st), ENOENT);
  CHECK_ERRNO(lstat("", &st), ENOENT);
  CHECK_ERRNO(mkdir("", 0755), ENOENT);
  CHECK_ERRNO(rmdir(""), ENOENT);
  CHECK_ERRNO(unlink(""), ENOENT);
  CHECK_ERRNO(chdir(""), ENOENT);
  CHECK_ERRNO(readlink("", buf, sizeof(buf)), ENOENT);
  CHECK_ERRNO(access("", F_OK), ENOENT);
  CHECK_ERRNO(symlink("x", ""), ENOENT);
  CHECK_ERRNO(symlink("", "emptylink"), ENOENT);  // Empty target too.
  CHECK_ERRNO(rename("", "x"), ENOENT);
  CHECK_ERRNO(syscall(SYS_openat, AT_FDCWD, "", O_RDONLY, 0), ENOENT);
}

TEST(getcwd_chdir_fchdir) {
  char cwd[PATH_MAX];
  CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
  CHECK_EQ(strcmp(cwd, tmp), 0);
  // The raw call returns the length including the NUL.
  CHECK_EQ(syscall(SYS_getcwd, cwd, sizeof(cwd)), (long)strlen(tmp) + 1);
  CHECK_ERRNO(syscall(SYS_getcwd, cwd, strlen(tmp)), ERANGE);
  CHECK_ERRNO(syscall(SYS_getcwd, cwd, 1), ERANGE);

  CHECK_OK(mkdir("sub", 0755));
  CHECK_OK(mkdir("sub/deeper", 0755));
  conf_put_file("file", "", 0644);
  CHECK_OK(chdir("sub/deeper"));
  char want[PATH_MAX];
  snprintf(want, sizeof(want), "%s/sub/deeper", tmp);
  CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
  CHECK_EQ(strcmp(cwd, want), 0);
  CHECK_OK(chdir("../.."));
  CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
  CHECK_EQ(strcmp(cwd, tmp), 0);

  // getcwd reports the real path, not the symlink we came through.
  CHECK_OK(symlink("sub/deeper", "shortcut"));
  CHECK_OK(chdir("shortcut"));
  CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
  CHECK_EQ(strcmp(cwd, want), 0);
  CHECK_OK(chdir(".."));  // Physical parent: sub.
  snprintf(want, sizeof(want), "%s/sub", tmp);
  CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
  CHECK_EQ(strcmp(cwd, want), 0);

  int home = open(tmp, O_RDONLY | O_DIRECTORY);
  CHECK(home >= 0);
  CHECK_OK(fchdir(home));
  CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
  CHECK_EQ(strcmp(cwd, tmp), 0);
  int pathfd = open("sub", O_PATH | O_DIRECTORY);
  CHECK(pathfd >= 0);
  CHECK_OK(fchdir(pathfd));  // An O_PATH fd is enough.
  CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
  CHECK_EQ(strcmp(cwd, want), 0);
  CHECK_OK(fchdir(home));

  int ffd = open("file", O_RDONLY);
  CHECK(ffd >= 0);
  CHECK_ERRNO(fchdir(ffd), ENOTDIR);
  CHECK_ERRNO(fchdir(-1), EBADF);
  CHECK_ERRNO(chdir("file"), ENOTDIR);
  CHECK_ERRNO(chdir("missing"), ENOENT);

  // A removed working directory: getcwd fails, lookups of new names fail,
  // "." still works.
  CHECK_OK(mkdir("doomed", 0755));
  CHECK_OK(chdir("doomed"));
  snprintf(want, sizeof(want), "%s/doomed", tmp);
  CHECK_OK(rmdir(want));
  CHECK_ERRNO(syscall(SYS_getcwd, cwd, sizeof(cwd)), ENOENT);
  struct stat st;
  CHECK_OK(stat(".", &st));
  CHECK_EQ(st.st_nlink, 0);
  CHECK_ERRNO(open("new", O_WRONLY | O_CREAT, 0644), ENOENT);
  CHECK_ERRNO(mkdir("newdir", 0755), ENOENT);
  CHECK_OK(fchdir(home));

  CHECK_OK(close(ffd));
  CHECK_OK(close(pathfd));
  CHECK_OK(close(home));
  CHECK_OK(unlink("shortcut"));
  CHECK_OK(unlink("file"));
  CHECK_OK(rmdir("sub/deeper"));
  CHECK_OK(rmdir("sub"));
}

TEST(relative_symlinks_resolve_from_link_dir) {
  CHECK_OK(mkdir("a", 0755));
  CHECK_OK(mkdir("a/b", 0755));
  conf_put_file("target", "TOP", 0644);
  conf_put_file("a/target", "A", 0644);
  conf_put_file("a/b/target", "AB", 0644);
  char buf[16];
  CHECK_OK(symlink("target", "a/link"));
  read_back("a/link", buf, sizeof(buf));
  CHECK_EQ(strcmp(buf, "A"), 0);  // Not the cwd's "target".
  CHECK_OK(symlink("../target", "a/up"));
  read_back("a/up", buf, sizeof(buf));
  CHECK_EQ(strcmp(buf, "TOP"), 0);
  CHECK_OK(symlink("b/../../target", "a/zigzag"));
  read_back("a/zigzag", buf, sizeof(buf));
  CHECK_EQ(strcmp(buf, "TOP"), 0);
  // Through a directory fd elsewhere, same answer.
  int bfd = open("a/b", O_RDONLY | O_DIRECTORY);
  CHECK(bfd >= 0);
  int fd = openat(bfd, "../link", O_RDONLY);
  CHECK(fd >= 0);
  CHECK_EQ(read(fd, buf, sizeof(buf)), 1);
  CHECK_EQ(buf[0], 'A');
  CHECK_OK(close(fd));
  CHECK_OK(close(bfd));

  // ".." after a symlink is the parent of where the link led, not the
  // directory the link is in.
  CHECK_OK(symlink("a/b", "lb"));
  read_back("lb/../target", buf, sizeof(buf));
  CHECK_EQ(strcmp(buf, "A"), 0);
  read_back("lb/target", buf, sizeof(buf));
  CHECK_EQ(strcmp(buf, "AB"), 0);

  const char *names[] = {"a/link", "a/up", "a/zigzag", "lb", "target",
                         "a/target", "a/b/target"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    CHECK_OK(unlink(names[i]));
  }
  CHECK_OK(rmdir("a/b"));
  CHECK_OK(rmdir("a"));
}

TEST(absolute_symlinks) {
  conf_put_file("file", "ABS", 0644);
  char abs[PATH_MAX];
  snprintf(abs, sizeof(abs), "%s/file", tmp);
  CHECK_OK(mkdir("d", 0755));
  CHECK_OK(symlink(abs, "d/abs"));
  char buf[PATH_MAX];
  read_back("d/abs", buf, sizeof(buf));
  CHECK_EQ(strcmp(buf, "ABS"), 0);
  CHECK_EQ(readlink("d/abs", buf, sizeof(buf)), (ssize_t)strlen(abs));
  CHECK(memcmp(buf, abs, strlen(abs)) == 0);
  // Moving the link does not change what it means.
  CHECK_OK(rename("d/abs", "abs2"));
  read_back("abs2", buf, sizeof(buf));
  CHECK_EQ(strcmp(buf, "ABS"), 0);
  // A link to "/" and ".." through it.
  CHECK_OK(symlink("/", "rootlink"));
  struct stat st, root;
  stat_ok("/", &root);
  stat_ok("rootlink", &st);
  CHECK(same_file(&st, &root));
  stat_ok("rootlink/..", &st);
  CHECK(same_file(&st, &root));
  snprintf(buf, sizeof(buf), "rootlink%s/file", tmp);
  CHECK_OK(stat(buf, &st));
  CHECK_EQ(st.st_size, 3);
  CHECK_OK(unlink("rootlink"));
  CHECK_OK(unlink("abs2"));
  CHECK_OK(unlink("file"));
  CHECK_OK(rmdir("d"));
}

TEST(dangling_symlink_with_o_creat) {
  CHECK_OK(symlink("created", "dangle"));
  struct stat st;
  CHECK_ERRNO(stat("dangle", &st), ENOENT);
  CHECK_OK(lstat("dangle", &st));
  CHECK(S_ISLNK(st.st_mode));
  CHECK_ERRNO(open("dangle", O_RDONLY), ENOENT);
  int fd = open("dangle", O_WRONLY | O_CREAT, 0600);
  CHECK(fd >= 0);
  CHECK_EQ(write(fd, "new", 3), 3);
  CHECK_OK(close(fd));
  // The target was created; the link is still a link.
  CHECK_OK(lstat("created", &st));
  CHECK(S_ISREG(st.st_mode));
  CHECK_EQ(st.st_size, 3);
  CHECK_EQ(st.st_mode & 07777, 0600);
  CHECK_OK(lstat("dangle", &st));
  CHECK(S_ISLNK(st.st_mode));
  // A target in a missing directory cannot be created.
  CHECK_OK(symlink("nodir/x", "dangle2"));
  CHECK_ERRNO(open("dangle2", O_WRONLY | O_CREAT, 0600), ENOENT);
  // A relative target is created relative to the link's directory.
  CHECK_OK(mkdir("sub", 0755));
  CHECK_OK(symlink("made_here", "sub/dangle3"));
  fd = open("sub/dangle3", O_WRONLY | O_CREAT, 0600);
  CHECK(fd >= 0);
  CHECK_OK(close(fd));
  CHECK_OK(lstat("sub/made_here", &st));
  CHECK(S_ISREG(st.st_mode));
  CHECK_ERRNO(lstat("made_here", &st), ENOENT);
  // mkdir never follows a dangling link.
  CHECK_ERRNO(mkdir("dangle2", 0755), EEXIST);

  const char *names[] = {"dangle", "created", "dangle2", "sub/dangle3",
                         "sub/made_here"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    CHECK_OK(unlink(names[i]));
  }
  CHECK_OK(rmdir("sub"));
}

TEST(realpath_of_a_chain) {
  CHECK_OK(mkdir("d", 0755));
  CHECK_OK(mkdir("e", 0755));
  conf_put_file("e/f", "F", 0644);
  CHECK_OK(symlink("d/l2", "l1"));
  CHECK_OK(symlink("../e/./f", "d/l2"));
  CHECK_OK(symlink("e", "elink"));
  char want[PATH_MAX], got[PATH_MAX];
  snprintf(want, sizeof(want), "%s/e/f", tmp);
  CHECK(realpath("l1", got) != NULL);
  CHECK_EQ(strcmp(got, want), 0);
  CHECK(realpath("./d/../elink//f", got) != NULL);
  CHECK_EQ(strcmp(got, want), 0);
  char absl1[PATH_MAX];
  snprintf(absl1, sizeof(absl1), "%s/l1", tmp);
  CHECK(realpath(absl1, got) != NULL);
  CHECK_EQ(strcmp(got, want), 0);
  CHECK(realpath(".", got) != NULL);
  CHECK_EQ(strcmp(got, tmp), 0);
  errno = 0;
  CHECK(realpath("d/missing", got) == NULL);
  CHECK_EQ(errno, ENOENT);
  CHECK_OK(symlink("loop", "loop"));
  errno = 0;
  CHECK(realpath("loop", got) == NULL);
  CHECK_EQ(errno, ELOOP);

  const char *names[] = {"l1", "d/l2", "elink", "e/f", "loop"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    CHECK_OK(unlink(names[i]));
  }
  CHECK_OK(rmdir("d"));
  CHECK_OK(rmdir("e"));
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  umask(022);
  tmp = conf_tmpdir("paths");
  RUN(dotdot_at_root_stays_at_root);
  RUN(trailing_slashes);
  RUN(dot_and_slash_components);
  RUN(symlink_chains);
  RUN(eloop_limits);
  RUN(o_nofollow);
  RUN(o_path_descriptors);
  RUN(at_empty_path);
  RUN(dirfd_relative_walks);
  RUN(at_fdcwd);
  RUN(name_too_long);
  RUN(empty_path_is_enoent);
  RUN(getcwd_chdir_fchdir);
  RUN(relative_symlinks_resolve_from_link_dir);
  RUN(absolute_symlinks);
  RUN(dangling_symlink_with_o_creat);
  RUN(realpath_of_a_chain);
  conf_tmpdir_remove();
  PASS("paths");
  return 0;
}
