// stat, lstat, fstat, fstatat, statx and statfs: type and mode bits, sizes
// after write/truncate, link counts, owners, block sizes, timestamps
// (write, utimensat with UTIME_NOW/UTIME_OMIT/explicit, futimens), chmod
// family, sparse growth, and the statx flags and mask.
//
// Works in its own scratch directory under /tmp (conf_tmpdir).

#include "common.h"

#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>

static int64_t ts_ns(struct timespec ts) {
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t sx_ns(struct statx_timestamp ts) {
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static struct stat stat_of(const char *path) {
  struct stat st;
  CHECK_OK(stat(path, &st));
  return st;
}

// File timestamps come from a coarse clock that may lag CLOCK_REALTIME by a
// tick; allow that much.
#define CLOCK_SLACK_NS (100 * 1000000LL)

static void near_now(struct timespec ts, int64_t before, int64_t after) {
  CHECK(ts_ns(ts) >= before - CLOCK_SLACK_NS);
  CHECK(ts_ns(ts) <= after + CLOCK_SLACK_NS);
}

// --- cases ---

TEST(type_and_mode_bits) {
  conf_put_file("reg", "", 0640);
  CHECK_OK(mkdir("dir", 0751));
  CHECK_OK(symlink("reg", "lnk"));
  CHECK_OK(mkfifo("fifo", 0604));
  struct stat st = stat_of("reg");
  CHECK(S_ISREG(st.st_mode));
  CHECK_EQ(st.st_mode, S_IFREG | 0640);
  st = stat_of("dir");
  CHECK_EQ(st.st_mode, S_IFDIR | 0751);
  st = stat_of("fifo");
  CHECK_EQ(st.st_mode, S_IFIFO | 0604);
  // stat follows the link, lstat does not.
  st = stat_of("lnk");
  CHECK(S_ISREG(st.st_mode));
  CHECK_OK(lstat("lnk", &st));
  CHECK_EQ(st.st_mode, S_IFLNK | 0777);
  // A character device.
  st = stat_of("/dev/null");
  CHECK(S_ISCHR(st.st_mode));
  CHECK_EQ(major(st.st_rdev), 1);
  CHECK_EQ(minor(st.st_rdev), 3);
  CHECK_EQ(stat_of("reg").st_rdev, 0);
  // fstat agrees with stat.
  int fd = open("reg", O_RDONLY);
  CHECK(fd >= 0);
  struct stat fst;
  CHECK_OK(fstat(fd, &fst));
  st = stat_of("reg");
  CHECK_EQ(fst.st_ino, st.st_ino);
  CHECK_EQ(fst.st_dev, st.st_dev);
  CHECK_EQ(fst.st_mode, st.st_mode);
  CHECK_OK(close(fd));
  // Different files, different inodes; same file system, same device.
  CHECK(stat_of("dir").st_ino != st.st_ino);
  CHECK_EQ(stat_of("dir").st_dev, st.st_dev);
  CHECK_OK(unlink("reg"));
  CHECK_OK(unlink("lnk"));
  CHECK_OK(unlink("fifo"));
  CHECK_OK(rmdir("dir"));
}

TEST(sizes_and_truncate) {
  int fd = open("s", O_RDWR | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  CHECK_EQ(stat_of("s").st_size, 0);
  CHECK_EQ(write(fd, "hello", 5), 5);
  CHECK_EQ(stat_of("s").st_size, 5);
  CHECK_OK(truncate("s", 100));
  CHECK_EQ(stat_of("s").st_size, 100);
  CHECK_OK(ftruncate(fd, 3));
  struct stat st;
  CHECK_OK(fstat(fd, &st));
  CHECK_EQ(st.st_size, 3);
  // The offset is not moved by truncation: the next write leaves a hole.
  CHECK_EQ(lseek(fd, 0, SEEK_CUR), 5);
  CHECK_EQ(write(fd, "!", 1), 1);
  CHECK_EQ(stat_of("s").st_size, 6);
  char buf[8];
  CHECK_EQ(pread(fd, buf, sizeof(buf), 0), 6);
  CHECK(memcmp(buf, "hel\0\0!", 6) == 0);
  CHECK_ERRNO(truncate("s", -1), EINVAL);
  CHECK_ERRNO(ftruncate(fd, -1), EINVAL);
  CHECK_OK(close(fd));
  fd = open("s", O_RDONLY);
  CHECK(fd >= 0);
  CHECK_ERRNO(ftruncate(fd, 0), EINVAL);  // Not open for writing.
  CHECK_OK(close(fd));
  CHECK_OK(mkdir("d", 0755));
  CHECK_ERRNO(truncate("d", 0), EISDIR);
  CHECK_ERRNO(truncate("missing", 0), ENOENT);
  int p[2];
  CHECK_OK(pipe(p));
  CHECK_ERRNO(ftruncate(p[1], 0), EINVAL);
  CHECK_OK(close(p[0]));
  CHECK_OK(close(p[1]));
  CHECK_OK(unlink("s"));
  CHECK_OK(rmdir("d"));
}

TEST(truncate_grow_reads_zeros) {
  conf_put_file("g", "abcdef", 0644);
  CHECK_OK(truncate("g", 2));
  CHECK_OK(truncate("g", 10000));
  static char buf[10000];
  CHECK_EQ(stat_of("g").st_size, 10000);
  int fd = open("g", O_RDONLY);
  CHECK(fd >= 0);
  CHECK_EQ(pread(fd, buf, 10000, 0), 10000);
  // The cut-off bytes do not come back.
  CHECK(memcmp(buf, "ab", 2) == 0);
  for (int i = 2; i < 10000; i++) CHECK_EQ(buf[i], 0);
  CHECK_OK(close(fd));
  // A big sparse file takes next to no space (st_blocks is in 512-byte
  // units, whatever st_blksize is).
  CHECK_OK(truncate("g", 64LL << 20));
  struct stat st = stat_of("g");
  CHECK_EQ(st.st_size, 64LL << 20);
  CHECK(st.st_blocks < 1024);
  CHECK_OK(unlink("g"));
}

TEST(link_count_owner_blksize) {
  conf_put_file("f", "x", 0644);
  struct stat st = stat_of("f");
  CHECK_EQ(st.st_nlink, 1);
  CHECK_EQ(st.st_uid, geteuid());
  CHECK_EQ(st.st_gid, getegid());
  CHECK(st.st_blksize > 0);
  CHECK_EQ(st.st_blksize & (st.st_blksize - 1), 0);  // A power of two.
  CHECK_OK(link("f", "f2"));
  CHECK_EQ(stat_of("f").st_nlink, 2);
  CHECK_OK(unlink("f2"));
  CHECK_EQ(stat_of("f").st_nlink, 1);
  CHECK_OK(chown("f", 1234, 5678));
  st = stat_of("f");
  CHECK_EQ(st.st_uid, 1234);
  CHECK_EQ(st.st_gid, 5678);
  CHECK_OK(unlink("f"));
}

TEST(write_updates_mtime_and_ctime) {
  conf_put_file("t", "x", 0644);
  // Start from a known old mtime.
  struct timespec old[2] = {{1000000000, 0}, {1000000000, 0}};
  int64_t before = conf_now_ns(CLOCK_REALTIME);
  CHECK_OK(utimensat(AT_FDCWD, "t", old, 0));
  struct stat st = stat_of("t");
  CHECK_EQ(st.st_mtim.tv_sec, 1000000000);
  CHECK_EQ(st.st_atim.tv_sec, 1000000000);
  // Setting times changes ctime to now.
  near_now(st.st_ctim, before, conf_now_ns(CLOCK_REALTIME));
  int64_t ctime0 = ts_ns(st.st_ctim);

  conf_sleep_ms(30);  // More than the timestamp granularity.
  int fd = open("t", O_WRONLY | O_APPEND);
  CHECK(fd >= 0);
  before = conf_now_ns(CLOCK_REALTIME);
  CHECK_EQ(write(fd, "y", 1), 1);
  st = stat_of("t");
  near_now(st.st_mtim, before, conf_now_ns(CLOCK_REALTIME));
  CHECK(ts_ns(st.st_ctim) > ctime0);
  CHECK_EQ(st.st_atim.tv_sec, 1000000000);  // A write is no access.
  CHECK_OK(close(fd));

  // chmod changes ctime but not mtime.
  CHECK_OK(utimensat(AT_FDCWD, "t", old, 0));
  st = stat_of("t");
  ctime0 = ts_ns(st.st_ctim);
  conf_sleep_ms(30);
  CHECK_OK(chmod("t", 0600));
  st = stat_of("t");
  CHECK_EQ(st.st_mtim.tv_sec, 1000000000);
  CHECK(ts_ns(st.st_ctim) > ctime0);
  // Truncation to a new size changes mtime.
  CHECK_OK(truncate("t", 1));
  CHECK(stat_of("t").st_mtim.tv_sec > 1000000000);
  // Creating an entry changes the directory's mtime.
  CHECK_OK(utimensat(AT_FDCWD, ".", old, 0));
  conf_put_file("t2", "", 0644);
  CHECK(stat_of(".").st_mtim.tv_sec > 1000000000);
  CHECK_OK(unlink("t"));
  CHECK_OK(unlink("t2"));
}

TEST(utimensat_variants) {
  conf_put_file("u", "", 0644);
  struct timespec ts[2] = {{1000, 500}, {2000, 600}};
  CHECK_OK(utimensat(AT_FDCWD, "u", ts, 0));
  struct stat st = stat_of("u");
  CHECK_EQ(st.st_atim.tv_sec, 1000);
  CHECK_EQ(st.st_atim.tv_nsec, 500);
  CHECK_EQ(st.st_mtim.tv_sec, 2000);
  CHECK_EQ(st.st_mtim.tv_nsec, 600);
  // UTIME_OMIT leaves one alone; UTIME_NOW sets it to now.
  struct timespec omit_now[2] = {{0, UTIME_OMIT}, {0, UTIME_NOW}};
  int64_t before = conf_now_ns(CLOCK_REALTIME);
  CHECK_OK(utimensat(AT_FDCWD, "u", omit_now, 0));
  st = stat_of("u");
  CHECK_EQ(st.st_atim.tv_sec, 1000);
  CHECK_EQ(st.st_atim.tv_nsec, 500);
  near_now(st.st_mtim, before, conf_now_ns(CLOCK_REALTIME));
  struct timespec now_set[2] = {{0, UTIME_NOW}, {3000, 0}};
  CHECK_OK(utimensat(AT_FDCWD, "u", now_set, 0));
  st = stat_of("u");
  near_now(st.st_atim, before, conf_now_ns(CLOCK_REALTIME));
  CHECK_EQ(st.st_mtim.tv_sec, 3000);
  CHECK_EQ(st.st_mtim.tv_nsec, 0);
  // Both omitted: nothing changes, not even ctime.
  struct timespec omit[2] = {{0, UTIME_OMIT}, {0, UTIME_OMIT}};
  struct stat st0 = stat_of("u");
  conf_sleep_ms(20);
  CHECK_OK(utimensat(AT_FDCWD, "u", omit, 0));
  st = stat_of("u");
  CHECK_EQ(ts_ns(st.st_ctim), ts_ns(st0.st_ctim));
  CHECK_EQ(ts_ns(st.st_mtim), 3000000000000LL);
  // NULL: both now.
  before = conf_now_ns(CLOCK_REALTIME);
  CHECK_OK(utimensat(AT_FDCWD, "u", NULL, 0));
  st = stat_of("u");
  near_now(st.st_atim, before, conf_now_ns(CLOCK_REALTIME));
  near_now(st.st_mtim, before, conf_now_ns(CLOCK_REALTIME));
  // Bad nanoseconds.
  struct timespec bad[2] = {{0, 1000000000}, {0, 0}};
  CHECK_ERRNO(utimensat(AT_FDCWD, "u", bad, 0), EINVAL);
  struct timespec neg[2] = {{0, -5}, {0, 0}};
  CHECK_ERRNO(utimensat(AT_FDCWD, "u", neg, 0), EINVAL);
  CHECK_ERRNO(utimensat(AT_FDCWD, "missing", ts, 0), ENOENT);
  CHECK_ERRNO(utimensat(AT_FDCWD, "u", ts, 0x4000), EINVAL);

  // AT_SYMLINK_NOFOLLOW sets the link's own times.
  CHECK_OK(symlink("u", "ul"));
  struct timespec lts[2] = {{4000, 0}, {5000, 0}};
  CHECK_OK(utimensat(AT_FDCWD, "ul", lts, AT_SYMLINK_NOFOLLOW));
  CHECK_OK(lstat("ul", &st));
  CHECK_EQ(st.st_mtim.tv_sec, 5000);
  CHECK(stat_of("u").st_mtim.tv_sec != 5000);
  CHECK_OK(utimensat(AT_FDCWD, "ul", lts, 0));  // Without: the target.
  CHECK_EQ(stat_of("u").st_mtim.tv_sec, 5000);

  // futimens on a descriptor, also one opened read-only (we own it).
  int fd = open("u", O_RDONLY);
  CHECK(fd >= 0);
  struct timespec fts[2] = {{6000, 1}, {7000, 2}};
  CHECK_OK(futimens(fd, fts));
  st = stat_of("u");
  CHECK_EQ(st.st_atim.tv_sec, 6000);
  CHECK_EQ(st.st_mtim.tv_nsec, 2);
  CHECK_OK(close(fd));
  CHECK_ERRNO(futimens(fd, fts), EBADF);
  // Times before 1970 work too.
  struct timespec old[2] = {{-86400, 0}, {-1, 0}};
  CHECK_OK(utimensat(AT_FDCWD, "u", old, 0));
  st = stat_of("u");
  CHECK_EQ(st.st_atim.tv_sec, -86400);
  CHECK_EQ(st.st_mtim.tv_sec, -1);
  CHECK_OK(unlink("ul"));
  CHECK_OK(unlink("u"));
}

TEST(read_updates_stale_atime) {
  // relatime (the usual mount default) or strictatime: either way an atime
  // older than mtime is updated by a read. noatime would not; the scratch
  // directory is on /tmp, which is not mounted noatime here.
  conf_put_file("a", "data", 0644);
  struct timespec ts[2] = {{1000, 0}, {2000, 0}};
  CHECK_OK(utimensat(AT_FDCWD, "a", ts, 0));
  struct statfs sfs;
  CHECK_OK(statfs(".", &sfs));
  if (sfs.f_flags & ST_NOATIME) {
    CHECK_OK(unlink("a"));
    return;
  }
  char buf[8];
  int fd = open("a", O_RDONLY);
  CHECK(fd >= 0);
  CHECK_EQ(read(fd, buf, sizeof(buf)), 4);
  CHECK_OK(close(fd));
  struct stat st = stat_of("a");
  CHECK(st.st_atim.tv_sec > 2000);
  CHECK_EQ(st.st_mtim.tv_sec, 2000);  // Reading changes no mtime.
  CHECK_OK(unlink("a"));
}

TEST(statx_basic) {
  conf_put_file("x", "12345", 0640);
  struct statx sx;
  memset(&sx, 0xff, sizeof(sx));
  CHECK_OK(statx(AT_FDCWD, "x", AT_NO_AUTOMOUNT, STATX_BASIC_STATS, &sx));
  CHECK_EQ(sx.stx_mask & STATX_BASIC_STATS, STATX_BASIC_STATS);
  struct stat st = stat_of("x");
  CHECK_EQ(sx.stx_mode, st.st_mode);
  CHECK_EQ(sx.stx_mode, S_IFREG | 0640);
  CHECK_EQ(sx.stx_size, 5);
  CHECK_EQ(sx.stx_nlink, 1);
  CHECK_EQ(sx.stx_uid, st.st_uid);
  CHECK_EQ(sx.stx_gid, st.st_gid);
  CHECK_EQ(sx.stx_ino, st.st_ino);
  CHECK_EQ(sx.stx_blksize, st.st_blksize);
  CHECK_EQ(sx.stx_blocks, st.st_blocks);
  CHECK_EQ(makedev(sx.stx_dev_major, sx.stx_dev_minor), st.st_dev);
  CHECK_EQ(sx_ns(sx.stx_mtime), ts_ns(st.st_mtim));
  CHECK_EQ(sx_ns(sx.stx_atime), ts_ns(st.st_atim));
  CHECK_EQ(sx_ns(sx.stx_ctime), ts_ns(st.st_ctim));
  CHECK_EQ(sx.stx_rdev_major, 0);
  CHECK_EQ(sx.stx_rdev_minor, 0);
  // The same through every sync flavour and with AT_NO_AUTOMOUNT on
  // fstatat.
  CHECK_OK(statx(AT_FDCWD, "x", AT_STATX_FORCE_SYNC, STATX_BASIC_STATS, &sx));
  CHECK_EQ(sx.stx_size, 5);
  CHECK_OK(statx(AT_FDCWD, "x", AT_STATX_DONT_SYNC | AT_NO_AUTOMOUNT,
                 STATX_SIZE, &sx));
  CHECK_EQ(sx.stx_size, 5);
  CHECK_OK(fstatat(AT_FDCWD, "x", &st, AT_NO_AUTOMOUNT));
  CHECK_EQ(st.st_size, 5);
  // A directory with AT_NO_AUTOMOUNT.
  CHECK_OK(statx(AT_FDCWD, ".", AT_NO_AUTOMOUNT, STATX_BASIC_STATS, &sx));
  CHECK(S_ISDIR(sx.stx_mode));
  CHECK_OK(statx(AT_FDCWD, "/", AT_NO_AUTOMOUNT, STATX_TYPE | STATX_INO, &sx));
  CHECK(S_ISDIR(sx.stx_mode));
  // /dev/null's device number.
  CHECK_OK(statx(AT_FDCWD, "/dev/null", 0, STATX_BASIC_STATS, &sx));
  CHECK_EQ(sx.stx_rdev_major, 1);
  CHECK_EQ(sx.stx_rdev_minor, 3);

  // Errors.
  CHECK_ERRNO(statx(AT_FDCWD, "x", 0, STATX__RESERVED, &sx), EINVAL);
  CHECK_ERRNO(statx(AT_FDCWD, "x", AT_STATX_FORCE_SYNC | AT_STATX_DONT_SYNC,
                    STATX_BASIC_STATS, &sx),
              EINVAL);
  CHECK_ERRNO(statx(AT_FDCWD, "x", 0x80000000, STATX_BASIC_STATS, &sx),
              EINVAL);
  CHECK_ERRNO(statx(AT_FDCWD, "missing", 0, STATX_BASIC_STATS, &sx), ENOENT);
  CHECK_ERRNO(statx(AT_FDCWD, "", 0, STATX_BASIC_STATS, &sx), ENOENT);
  CHECK_ERRNO(statx(-1, "x", 0, STATX_BASIC_STATS, &sx), EBADF);
  CHECK_OK(unlink("x"));
}

TEST(statx_symlinks_and_empty_path) {
  conf_put_file("target", "0123456789", 0644);
  CHECK_OK(symlink("target", "sl"));
  struct statx sx;
  CHECK_OK(statx(AT_FDCWD, "sl", AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &sx));
  CHECK(S_ISLNK(sx.stx_mode));
  CHECK_EQ(sx.stx_size, 6);  // strlen("target")
  CHECK_OK(statx(AT_FDCWD, "sl", 0, STATX_BASIC_STATS, &sx));
  CHECK(S_ISREG(sx.stx_mode));
  CHECK_EQ(sx.stx_size, 10);
  // AT_EMPTY_PATH on an fd.
  int fd = open("target", O_RDONLY);
  CHECK(fd >= 0);
  CHECK_OK(statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &sx));
  CHECK_EQ(sx.stx_size, 10);
  CHECK_EQ(sx.stx_ino, stat_of("target").st_ino);
  // A relative path against a directory fd.
  int dfd = open(".", O_RDONLY | O_DIRECTORY);
  CHECK(dfd >= 0);
  CHECK_OK(statx(dfd, "sl", AT_SYMLINK_NOFOLLOW, STATX_SIZE, &sx));
  CHECK_EQ(sx.stx_size, 6);
  CHECK_OK(close(dfd));
  // fstatat with AT_EMPTY_PATH, on the fd and on AT_FDCWD.
  struct stat st;
  CHECK_OK(fstatat(fd, "", &st, AT_EMPTY_PATH));
  CHECK_EQ(st.st_size, 10);
  CHECK_OK(fstatat(AT_FDCWD, "", &st, AT_EMPTY_PATH));
  CHECK(S_ISDIR(st.st_mode));
  CHECK_EQ(st.st_ino, stat_of(".").st_ino);
  CHECK_OK(close(fd));
  // stat vs lstat: a symlink's size is the length of its target.
  CHECK_OK(lstat("sl", &st));
  CHECK_EQ(st.st_size, 6);
  CHECK_EQ(stat_of("sl").st_size, 10);
  CHECK_OK(symlink("a/much/longer/dangling/target", "dl"));
  CHECK_OK(lstat("dl", &st));
  CHECK_EQ(st.st_size, 29);
  CHECK_ERRNO(stat("dl", &st), ENOENT);
  CHECK_OK(unlink("dl"));
  CHECK_OK(unlink("sl"));
  CHECK_OK(unlink("target"));
}

TEST(chmod_family) {
  conf_put_file("m", "", 0644);
  CHECK_OK(chmod("m", 0751));
  CHECK_EQ(stat_of("m").st_mode, S_IFREG | 0751);
  // Special bits are kept for root.
  CHECK_OK(chmod("m", 07755));
  CHECK_EQ(stat_of("m").st_mode & 07777, 07755);
  // Bits outside 07777 are ignored: the type does not change.
  CHECK_OK(chmod("m", S_IFDIR | 0600));
  CHECK_EQ(stat_of("m").st_mode, S_IFREG | 0600);
  int fd = open("m", O_RDONLY);
  CHECK(fd >= 0);
  CHECK_OK(fchmod(fd, 0444));
  CHECK_EQ(stat_of("m").st_mode & 07777, 0444);
  CHECK_OK(close(fd));
  CHECK_ERRNO(fchmod(fd, 0444), EBADF);
  CHECK_OK(fchmodat(AT_FDCWD, "m", 0640, 0));
  CHECK_EQ(stat_of("m").st_mode & 07777, 0640);
  CHECK_OK(mkdir("d", 0755));
  int dfd = open("d", O_RDONLY | O_DIRECTORY);
  CHECK(dfd >= 0);
  CHECK_OK(fchmodat(dfd, "../m", 0604, 0));
  CHECK_EQ(stat_of("m").st_mode & 07777, 0604);
  CHECK_OK(close(dfd));
  // chmod through a symlink changes the target.
  CHECK_OK(symlink("m", "ml"));
  CHECK_OK(chmod("ml", 0600));
  CHECK_EQ(stat_of("m").st_mode & 07777, 0600);
  struct stat st;
  CHECK_OK(lstat("ml", &st));
  CHECK_EQ(st.st_mode & 07777, 0777);
  CHECK_ERRNO(chmod("missing", 0600), ENOENT);
  CHECK_OK(unlink("ml"));
  CHECK_OK(unlink("m"));
  CHECK_OK(rmdir("d"));
}

TEST(statfs_and_fstatfs) {
  struct statfs a, b;
  CHECK_OK(statfs(".", &a));
  CHECK(a.f_bsize > 0);
  CHECK(a.f_blocks > 0);
  CHECK(a.f_bfree <= a.f_blocks);
  CHECK(a.f_bavail <= a.f_bfree);
  CHECK(a.f_namelen == 255);
  conf_put_file("f", "", 0644);
  int fd = open("f", O_RDONLY);
  CHECK(fd >= 0);
  CHECK_OK(fstatfs(fd, &b));
  CHECK_EQ(a.f_type, b.f_type);
  CHECK_EQ(a.f_bsize, b.f_bsize);
  CHECK_EQ(a.f_fsid.__val[0], b.f_fsid.__val[0]);
  CHECK_EQ(a.f_fsid.__val[1], b.f_fsid.__val[1]);
  CHECK_OK(close(fd));
  CHECK_ERRNO(statfs("missing", &a), ENOENT);
  CHECK_ERRNO(fstatfs(-1, &a), EBADF);
  // /proc is its own file system type.
  CHECK_OK(statfs("/proc", &a));
  CHECK_EQ(a.f_type, 0x9fa0);  // PROC_SUPER_MAGIC
  CHECK_OK(unlink("f"));
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  umask(022);
  conf_tmpdir("stat_statx");
  RUN(type_and_mode_bits);
  RUN(sizes_and_truncate);
  RUN(truncate_grow_reads_zeros);
  RUN(link_count_owner_blksize);
  RUN(write_updates_mtime_and_ctime);
  RUN(utimensat_variants);
  RUN(read_updates_stale_atime);
  RUN(statx_basic);
  RUN(statx_symlinks_and_empty_path);
  RUN(chmod_family);
  RUN(statfs_and_fstatfs);
  conf_tmpdir_remove();
  PASS("stat_statx");
  return 0;
}
