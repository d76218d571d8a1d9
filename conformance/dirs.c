// Directories: mkdir/rmdir and their errors, getdents64 and legacy getdents
// contents and d_type, readdir while entries are removed, seekdir/telldir/rewinddir, opendir
// errors, link counts, reading a removed directory, setgid directories.
//
// Works in its own scratch directory under /tmp (conf_tmpdir).

#include "common.h"

#include <dirent.h>
#include <sys/stat.h>

#define MAX_NAMES 128

struct names {
  int n;
  char name[MAX_NAMES][64];
  unsigned char type[MAX_NAMES];
};

static int cmp_str(const void *a, const void *b) {
  return strcmp((const char *)a, (const char *)b);
}

static void copy_name(char dst[64], const char *src) {
  size_t len = strlen(src);
  CHECK(len < 64);
  memcpy(dst, src, len + 1);
}

// Lists a directory with raw getdents64 calls of bufsize bytes each.
static void list_dir(const char *path, struct names *out, size_t bufsize) {
  int fd = open(path, O_RDONLY | O_DIRECTORY);
  CHECK(fd >= 0);
  char buf[8192];
  CHECK(bufsize <= sizeof(buf));
  out->n = 0;
  for (;;) {
    long r = syscall(SYS_getdents64, fd, buf, bufsize);
    CHECK(r >= 0);
    if (r == 0) break;
    for (long off = 0; off < r;) {
      struct dirent64 *d = (struct dirent64 *)(buf + off);
      CHECK(d->d_reclen > 0);
      CHECK_EQ(d->d_reclen % 8, 0);
      CHECK(out->n < MAX_NAMES);
      copy_name(out->name[out->n], d->d_name);
      out->type[out->n] = d->d_type;
      out->n++;
      off += d->d_reclen;
    }
  }
  // At the end it keeps returning 0.
  CHECK_EQ(syscall(SYS_getdents64, fd, buf, bufsize), 0);
  CHECK_OK(close(fd));
}

// Sorted names joined with ','.
static void sorted_names(const struct names *in, char *out, size_t cap) {
  char tmp[MAX_NAMES][64];
  memcpy(tmp, in->name, sizeof(tmp));
  qsort(tmp, (size_t)in->n, 64, cmp_str);
  out[0] = '\0';
  for (int i = 0; i < in->n; i++) {
    if (i) strncat(out, ",", cap - strlen(out) - 1);
    strncat(out, tmp[i], cap - strlen(out) - 1);
  }
}

static int type_of(const struct names *in, const char *name) {
  for (int i = 0; i < in->n; i++) {
    if (strcmp(in->name[i], name) == 0) return in->type[i];
  }
  return -1;
}

static nlink_t nlink_of(const char *path) {
  struct stat st;
  CHECK_OK(lstat(path, &st));
  return st.st_nlink;
}

// --- cases ---

TEST(mkdir_rmdir) {
  CHECK_OK(mkdir("d", 0755));
  struct stat st;
  CHECK_OK(stat("d", &st));
  CHECK(S_ISDIR(st.st_mode));
  CHECK_EQ(st.st_mode & 07777, 0755);
  CHECK_ERRNO(mkdir("d", 0755), EEXIST);
  conf_put_file("file", "", 0644);
  CHECK_ERRNO(mkdir("file", 0755), EEXIST);
  CHECK_ERRNO(mkdir("missing/sub", 0755), ENOENT);
  CHECK_ERRNO(mkdir("file/sub", 0755), ENOTDIR);

  conf_put_file("d/inside", "", 0644);
  CHECK_ERRNO(rmdir("d"), ENOTEMPTY);
  CHECK_OK(unlink("d/inside"));
  CHECK_OK(mkdir("d/sub", 0755));
  CHECK_ERRNO(rmdir("d"), ENOTEMPTY);
  CHECK_OK(rmdir("d/sub"));

  CHECK_ERRNO(rmdir("."), EINVAL);
  CHECK_ERRNO(rmdir("d/."), EINVAL);
  CHECK_ERRNO(rmdir("d/.."), ENOTEMPTY);
  CHECK_ERRNO(rmdir("file"), ENOTDIR);
  CHECK_ERRNO(rmdir("missing"), ENOENT);
  CHECK_ERRNO(rmdir("/"), EBUSY);
  // rmdir does not follow a symlink, even to a directory.
  CHECK_OK(symlink("d", "dlink"));
  CHECK_ERRNO(rmdir("dlink"), ENOTDIR);
  CHECK_ERRNO(rmdir("dlink/"), ENOTDIR);  // Even with a trailing slash.
  CHECK_OK(unlink("dlink"));

  CHECK_OK(rmdir("d"));
  CHECK_ERRNO(stat("d", &st), ENOENT);
  CHECK_OK(unlink("file"));

  // mkdir masks the mode with the umask and keeps the sticky bit.
  CHECK_OK(mkdir("m", 01777));
  CHECK_OK(stat("m", &st));
  CHECK_EQ(st.st_mode & 07777, 01755);
  CHECK_OK(rmdir("m"));
}

TEST(getdents_lists_exactly_the_entries) {
  CHECK_OK(mkdir("ls", 0755));
  struct names got;
  char joined[4096];
  // An empty directory has just "." and "..".
  list_dir("ls", &got, 8192);
  sorted_names(&got, joined, sizeof(joined));
  CHECK_EQ(strcmp(joined, ".,.."), 0);

  conf_put_file("ls/b", "", 0644);
  conf_put_file("ls/a", "", 0644);
  conf_put_file("ls/c.longer-name_with.dots", "", 0644);
  CHECK_OK(mkdir("ls/sub", 0755));
  CHECK_OK(symlink("a", "ls/lnk"));
  CHECK_OK(mkfifo("ls/fifo", 0644));
  CHECK_OK(mknod("ls/sock", S_IFSOCK | 0644, 0));
  const char *want = ".,..,a,b,c.longer-name_with.dots,fifo,lnk,sock,sub";
  list_dir("ls", &got, 8192);
  sorted_names(&got, joined, sizeof(joined));
  CHECK_EQ(strcmp(joined, want), 0);
  // The same with a buffer that holds one entry at a time.
  list_dir("ls", &got, 64);
  sorted_names(&got, joined, sizeof(joined));
  CHECK_EQ(strcmp(joined, want), 0);
  // Entries of the subdirectory are not included, and removal shows.
  CHECK_OK(unlink("ls/b"));
  list_dir("ls", &got, 8192);
  sorted_names(&got, joined, sizeof(joined));
  CHECK_EQ(strcmp(joined, ".,..,a,c.longer-name_with.dots,fifo,lnk,sock,sub"),
           0);

  // The d_type of each kind.
  CHECK_EQ(type_of(&got, "."), DT_DIR);
  CHECK_EQ(type_of(&got, ".."), DT_DIR);
  CHECK_EQ(type_of(&got, "a"), DT_REG);
  CHECK_EQ(type_of(&got, "sub"), DT_DIR);
  CHECK_EQ(type_of(&got, "lnk"), DT_LNK);
  CHECK_EQ(type_of(&got, "fifo"), DT_FIFO);
  CHECK_EQ(type_of(&got, "sock"), DT_SOCK);

  // d_ino matches st_ino.
  int fd = open("ls", O_RDONLY | O_DIRECTORY);
  CHECK(fd >= 0);
  char buf[8192];
  long r = syscall(SYS_getdents64, fd, buf, sizeof(buf));
  CHECK(r > 0);
  int checked = 0;
  for (long off = 0; off < r;) {
    struct dirent64 *d = (struct dirent64 *)(buf + off);
    if (strcmp(d->d_name, "a") == 0 || strcmp(d->d_name, "sub") == 0) {
      struct stat st;
      CHECK_OK(fstatat(fd, d->d_name, &st, AT_SYMLINK_NOFOLLOW));
      CHECK_EQ(d->d_ino, st.st_ino);
      checked++;
    }
    off += d->d_reclen;
  }
  CHECK_EQ(checked, 2);
  // A buffer too small for one entry.
  CHECK_OK(lseek(fd, 0, SEEK_SET));
  CHECK_ERRNO(syscall(SYS_getdents64, fd, buf, 8), EINVAL);
  CHECK_OK(close(fd));

  const char *names[] = {"ls/a", "ls/c.longer-name_with.dots", "ls/lnk",
                         "ls/fifo", "ls/sock"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    CHECK_OK(unlink(names[i]));
  }
  CHECK_OK(rmdir("ls/sub"));
  CHECK_OK(rmdir("ls"));
}

TEST(getdents_errors) {
  conf_put_file("file", "", 0644);
  int fd = open("file", O_RDONLY);
  CHECK(fd >= 0);
  char buf[4096];
  CHECK_ERRNO(syscall(SYS_getdents64, fd, buf, sizeof(buf)), ENOTDIR);
  CHECK_OK(close(fd));
  CHECK_ERRNO(syscall(SYS_getdents64, fd, buf, sizeof(buf)), EBADF);
  CHECK_OK(mkdir("d", 0755));
  fd = open("d", O_RDONLY | O_DIRECTORY);
  CHECK(fd >= 0);
  CHECK_ERRNO(syscall(SYS_getdents64, fd, NULL, sizeof(buf)), EFAULT);
  CHECK_OK(close(fd));
  errno = 0;
  CHECK(opendir("file") == NULL);
  CHECK_EQ(errno, ENOTDIR);
  errno = 0;
  CHECK(opendir("missing") == NULL);
  CHECK_EQ(errno, ENOENT);
  CHECK_OK(unlink("file"));
  CHECK_OK(rmdir("d"));
}

TEST(readdir_survives_unlink_during_iteration) {
  CHECK_OK(mkdir("many", 0755));
  char path[64];
  for (int i = 0; i < 100; i++) {
    snprintf(path, sizeof(path), "many/file%03d", i);
    conf_put_file(path, "", 0644);
  }
  DIR *dir = opendir("many");
  CHECK(dir != NULL);
  int seen = 0, removed = 0;
  struct dirent *d;
  while ((d = readdir(dir)) != NULL) {
    seen++;
    CHECK(seen <= 102);
    if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0) continue;
    CHECK_EQ(strncmp(d->d_name, "file", 4), 0);
    CHECK_EQ(strlen(d->d_name), 7);
    if (removed == 0) {
      // After the first real entry, remove every file.
      for (int i = 0; i < 100; i++) {
        snprintf(path, sizeof(path), "many/file%03d", i);
        CHECK_OK(unlink(path));
      }
      removed = 1;
    }
  }
  CHECK(removed);
  CHECK_OK(closedir(dir));
  // Now it is empty and removable.
  CHECK_OK(rmdir("many"));
}

TEST(seekdir_telldir_rewinddir) {
  CHECK_OK(mkdir("sd", 0755));
  char path[64];
  for (int i = 0; i < 20; i++) {
    snprintf(path, sizeof(path), "sd/e%02d", i);
    conf_put_file(path, "", 0644);
  }
  DIR *dir = opendir("sd");
  CHECK(dir != NULL);
  char first[23][64];
  long pos[23];
  int n = 0;
  for (;;) {
    CHECK(n < 23);
    pos[n] = telldir(dir);
    struct dirent *d = readdir(dir);
    if (d == NULL) break;
    copy_name(first[n], d->d_name);
    n++;
  }
  CHECK_EQ(n, 22);
  CHECK(readdir(dir) == NULL);  // Still at the end.
  // Back to a remembered position: the same entry comes again.
  seekdir(dir, pos[7]);
  struct dirent *d = readdir(dir);
  CHECK(d != NULL);
  CHECK_EQ(strcmp(d->d_name, first[7]), 0);
  d = readdir(dir);
  CHECK(d != NULL);
  CHECK_EQ(strcmp(d->d_name, first[8]), 0);
  seekdir(dir, pos[15]);
  d = readdir(dir);
  CHECK(d != NULL);
  CHECK_EQ(strcmp(d->d_name, first[15]), 0);
  // rewinddir starts over, in the same order.
  rewinddir(dir);
  for (int i = 0; i < n; i++) {
    d = readdir(dir);
    CHECK(d != NULL);
    CHECK_EQ(strcmp(d->d_name, first[i]), 0);
  }
  CHECK(readdir(dir) == NULL);
  // rewinddir also sees entries made since.
  conf_put_file("sd/late", "", 0644);
  rewinddir(dir);
  int count = 0, late = 0;
  while ((d = readdir(dir)) != NULL) {
    count++;
    if (strcmp(d->d_name, "late") == 0) late = 1;
  }
  CHECK_EQ(count, 23);
  CHECK(late);
  // lseek(fd, 0, SEEK_SET) on the raw descriptor is a rewind too.
  int fd = open("sd", O_RDONLY | O_DIRECTORY);
  CHECK(fd >= 0);
  char buf[8192];
  long r1 = syscall(SYS_getdents64, fd, buf, sizeof(buf));
  CHECK(r1 > 0);
  CHECK_EQ(syscall(SYS_getdents64, fd, buf, sizeof(buf)), 0);
  CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
  CHECK_EQ(syscall(SYS_getdents64, fd, buf, sizeof(buf)), r1);
  CHECK_OK(close(fd));
  CHECK_OK(closedir(dir));

  for (int i = 0; i < 20; i++) {
    snprintf(path, sizeof(path), "sd/e%02d", i);
    CHECK_OK(unlink(path));
  }
  CHECK_OK(unlink("sd/late"));
  CHECK_OK(rmdir("sd"));
}

TEST(directory_link_counts) {
  CHECK_OK(mkdir("n", 0755));
  nlink_t top = nlink_of(".");
  CHECK_EQ(nlink_of("n"), 2);  // "n" in the parent and "." in itself.
  CHECK_EQ(nlink_of("."), top);
  char path[32];
  for (int i = 0; i < 3; i++) {
    snprintf(path, sizeof(path), "n/sub%d", i);
    CHECK_OK(mkdir(path, 0755));
    CHECK_EQ(nlink_of("n"), 3 + i);  // Each ".." adds one.
    CHECK_EQ(nlink_of(path), 2);
  }
  // Files and symlinks do not count.
  conf_put_file("n/file", "", 0644);
  CHECK_OK(symlink("sub0", "n/lnk"));
  CHECK_EQ(nlink_of("n"), 5);
  // A rename between directories moves the count.
  CHECK_OK(mkdir("other", 0755));
  CHECK_OK(rename("n/sub2", "other/sub2"));
  CHECK_EQ(nlink_of("n"), 4);
  CHECK_EQ(nlink_of("other"), 3);
  CHECK_OK(rmdir("other/sub2"));
  CHECK_EQ(nlink_of("other"), 2);
  CHECK_OK(rmdir("n/sub1"));
  CHECK_EQ(nlink_of("n"), 3);
  CHECK_OK(rmdir("n/sub0"));
  CHECK_OK(unlink("n/file"));
  CHECK_OK(unlink("n/lnk"));
  CHECK_EQ(nlink_of("n"), 2);
  CHECK_EQ(nlink_of("."), top + 1);  // "other" is still here.
  CHECK_OK(rmdir("n"));
  CHECK_OK(rmdir("other"));
  CHECK_EQ(nlink_of("."), top - 1);
}

TEST(removed_directory_reads_as_gone) {
  CHECK_OK(mkdir("gone", 0755));
  int fd = open("gone", O_RDONLY | O_DIRECTORY);
  CHECK(fd >= 0);
  CHECK_OK(rmdir("gone"));
  // Not even "." and "..": reading a removed directory is ENOENT.
  char buf[4096];
  CHECK_ERRNO(syscall(SYS_getdents64, fd, buf, sizeof(buf)), ENOENT);
  struct stat st;
  CHECK_OK(fstat(fd, &st));
  CHECK_EQ(st.st_nlink, 0);
  CHECK_ERRNO(openat(fd, "new", O_WRONLY | O_CREAT, 0644), ENOENT);
  CHECK_ERRNO(mkdirat(fd, "newdir", 0755), ENOENT);
  CHECK_OK(close(fd));
}

TEST(setgid_directory_inherits_group) {
  CHECK_OK(mkdir("sg", 0755));
  CHECK_OK(chown("sg", geteuid(), 4242));
  CHECK_OK(chmod("sg", 02775));
  struct stat st;
  CHECK_OK(stat("sg", &st));
  CHECK_EQ(st.st_mode & 07777, 02775);
  CHECK_OK(mkdir("sg/child", 0755));
  CHECK_OK(stat("sg/child", &st));
  CHECK_EQ(st.st_gid, 4242);
  CHECK(st.st_mode & S_ISGID);  // Subdirectories inherit the bit.
  conf_put_file("sg/file", "", 0755);
  CHECK_OK(stat("sg/file", &st));
  CHECK_EQ(st.st_gid, 4242);
  CHECK_EQ(st.st_mode & S_ISGID, 0);  // Files do not.
  // Outside it, our own group.
  CHECK_OK(mkdir("plain", 0755));
  CHECK_OK(stat("plain", &st));
  CHECK_EQ(st.st_gid, getegid());
  CHECK_EQ(st.st_mode & S_ISGID, 0);
  CHECK_OK(unlink("sg/file"));
  CHECK_OK(rmdir("sg/child"));
  CHECK_OK(rmdir("sg"));
  CHECK_OK(rmdir("plain"));
}

// The legacy getdents (linux_dirent: the name right after d_reclen, d_type in
// the record's last byte) must list what getdents64 lists, with the same
// inode numbers and types, on every kind of file system: the scratch
// directory, host directories, /dev and /proc (not /proc itself: processes
// come and go between two listings).
struct linux_dirent {
  unsigned long d_ino;
  unsigned long d_off;
  unsigned short d_reclen;
  char d_name[];
};

// "name:type:ino;" for each entry, in listing order, read with `nr`.
static void listing(const char *path, long nr, size_t bufsize, char *out,
                    size_t cap) {
  int fd = open(path, O_RDONLY | O_DIRECTORY);
  CHECK(fd >= 0);
  char buf[16384];
  size_t used = 0;
  out[0] = '\0';
  for (;;) {
    long r = syscall(nr, fd, buf, bufsize);
    CHECK(r >= 0);
    if (r == 0) break;
    for (long off = 0; off < r;) {
      const char *name;
      unsigned long ino;
      unsigned type;
      unsigned short reclen;
      if (nr == SYS_getdents64) {
        struct dirent64 *d = (struct dirent64 *)(buf + off);
        name = d->d_name, ino = d->d_ino, type = d->d_type;
        reclen = d->d_reclen;
      } else {
        struct linux_dirent *d = (struct linux_dirent *)(buf + off);
        name = d->d_name, ino = d->d_ino, reclen = d->d_reclen;
        type = (unsigned char)buf[off + reclen - 1];
      }
      CHECK_EQ(reclen % 8, 0);
      int n = snprintf(out + used, cap - used, "%s:%u:%lu;", name, type, ino);
      CHECK(n > 0 && (size_t)n < cap - used);
      used += n;
      off += reclen;
    }
  }
  CHECK_OK(close(fd));
}

TEST(legacy_getdents) {
  CHECK_OK(mkdir("old", 0755));
  conf_put_file("old/file", "", 0644);
  conf_put_file("old/a-much-longer-name-than-eight-bytes", "", 0644);
  CHECK_OK(mkdir("old/dir", 0755));
  CHECK_OK(symlink("file", "old/lnk"));
  CHECK_OK(mkfifo("old/fifo", 0644));
  static char a[65536], b[65536];
  const char *dirs[] = {"old", "/usr/bin", "/etc", "/dev", "/proc/sys", "/proc/self"};
  for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
    listing(dirs[i], SYS_getdents64, 16384, a, sizeof(a));
    listing(dirs[i], SYS_getdents, 16384, b, sizeof(b));
    if (strcmp(a, b) != 0) {
      fprintf(stderr, "%s: getdents64 %s\ngetdents %s\n", dirs[i], a, b);
      CHECK(0);
    }
    // One entry per call: the records are as long as getdents64's.
    listing(dirs[i], SYS_getdents, 64, b, sizeof(b));
    CHECK_EQ(strcmp(a, b), 0);
  }
  CHECK(strstr(a, "fd:4:") != NULL);  // /proc/self/fd is a directory

  int fd = open("old", O_RDONLY | O_DIRECTORY);
  CHECK(fd >= 0);
  char buf[64];
  CHECK_ERRNO(syscall(SYS_getdents, fd, buf, 8), EINVAL);
  CHECK_ERRNO(syscall(SYS_getdents, fd, NULL, sizeof(buf)), EFAULT);
  CHECK_ERRNO(syscall(SYS_getdents, 999, buf, sizeof(buf)), EBADF);
  CHECK_OK(close(fd));
  fd = open("old/file", O_RDONLY);
  CHECK_ERRNO(syscall(SYS_getdents, fd, buf, sizeof(buf)), ENOTDIR);
  CHECK_OK(close(fd));
  const char *names[] = {"old/file", "old/a-much-longer-name-than-eight-bytes",
                         "old/lnk", "old/fifo"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    CHECK_OK(unlink(names[i]));
  }
  CHECK_OK(rmdir("old/dir"));
  CHECK_OK(rmdir("old"));
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  umask(022);
  conf_tmpdir("dirs");
  RUN(mkdir_rmdir);
  RUN(getdents_lists_exactly_the_entries);
  RUN(getdents_errors);
  RUN(legacy_getdents);
  RUN(readdir_survives_unlink_during_iteration);
  RUN(seekdir_telldir_rewinddir);
  RUN(directory_link_counts);
  RUN(removed_directory_reads_as_gone);
  RUN(setgid_directory_inherits_group);
  conf_tmpdir_remove();
  PASS("dirs");
  return 0;
}
