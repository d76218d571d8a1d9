// File identity: st_dev/st_ino agree between stat, lstat, fstat, fstatat(AT_EMPTY_PATH),
// statx, getdents64's d_ino, /proc/self/fdinfo, /proc/self/maps and /proc/self/mountinfo, for
// files of the scratch directory (the overlay's upper layer in the sandbox), /dev/shm (tmpfs)
// and host files (the lower layer); they stay the same across rename, hard links, opening a
// host file for writing (the overlay's copy-up) and the file's whole life.
#include "common.h"

#include <dirent.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>

struct id {
  dev_t dev;
  ino_t ino;
};

static int same(struct id a, struct id b) { return a.dev == b.dev && a.ino == b.ino; }

static struct id of_stat(const struct stat *st) {
  struct id r = {st->st_dev, st->st_ino};
  return r;
}

// Every way to ask for the identity of `path` (a regular file) agrees; returns it.
static struct id all_agree(const char *path) {
  struct stat st;
  CHECK_OK(stat(path, &st));
  struct id want = of_stat(&st);
  CHECK_OK(lstat(path, &st));
  CHECK(same(of_stat(&st), want));
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  CHECK(fd >= 0);
  CHECK_OK(fstat(fd, &st));
  CHECK(same(of_stat(&st), want));
  CHECK_OK(fstatat(fd, "", &st, AT_EMPTY_PATH));
  CHECK(same(of_stat(&st), want));
  struct statx sx;
  CHECK_OK(statx(AT_FDCWD, path, 0, STATX_INO, &sx));
  CHECK_EQ(makedev(sx.stx_dev_major, sx.stx_dev_minor), want.dev);
  CHECK_EQ(sx.stx_ino, want.ino);
  CHECK_OK(statx(fd, "", AT_EMPTY_PATH, STATX_INO, &sx));
  CHECK_EQ(sx.stx_ino, want.ino);
  int pfd = open(path, O_PATH | O_CLOEXEC);
  CHECK(pfd >= 0);
  CHECK_OK(fstat(pfd, &st));
  CHECK(same(of_stat(&st), want));
  CHECK_OK(close(pfd));

  // /proc/self/fdinfo/N: "ino:" (decimal).
  char p[64], buf[4096];
  snprintf(p, sizeof(p), "/proc/self/fdinfo/%d", fd);
  conf_get_file(p, buf, sizeof(buf));
  char *ino_line = strstr(buf, "\nino:");
  CHECK(ino_line != NULL);
  CHECK_EQ(strtoull(ino_line + 5, NULL, 10), want.ino);

  // /proc/self/maps: "start-end perms offset MAJ:MIN ino path" (hex device).
  void *m = mmap(NULL, 1, PROT_READ, MAP_PRIVATE, fd, 0);
  CHECK(m != MAP_FAILED);
  static char maps[1 << 16];
  conf_get_file("/proc/self/maps", maps, sizeof(maps));
  char start[32];
  snprintf(start, sizeof(start), "%lx-", (unsigned long)m);
  char *line = strstr(maps, start);
  CHECK(line != NULL);
  unsigned maj = 0, min = 0;
  unsigned long long ino = 0;
  CHECK_EQ(sscanf(line, "%*s %*s %*s %x:%x %llu", &maj, &min, &ino), 3);
  CHECK_EQ(makedev(maj, min), want.dev);
  CHECK_EQ(ino, want.ino);
  CHECK_OK(munmap(m, 1));
  CHECK_OK(close(fd));

  // getdents64 of the parent shows the same number.
  char dir[PATH_MAX];
  snprintf(dir, sizeof(dir), "%s", path);
  char *slash = strrchr(dir, '/');
  CHECK(slash != NULL);
  *slash = '\0';
  DIR *d = opendir(dir[0] ? dir : "/");
  CHECK(d != NULL);
  struct dirent *e;
  int found = 0;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, slash + 1) == 0) {
      CHECK_EQ(e->d_ino, want.ino);
      found = 1;
    }
  }
  CHECK(found);
  closedir(d);

  // Some line of /proc/self/mountinfo names the device.
  conf_get_file("/proc/self/mountinfo", maps, sizeof(maps));
  char devstr[32];
  snprintf(devstr, sizeof(devstr), " %u:%u ", major(want.dev), minor(want.dev));
  CHECK(strstr(maps, devstr) != NULL);
  return want;
}

TEST(scratch_files) {
  conf_put_file("a", "data", 0644);
  char path[PATH_MAX];
  snprintf(path, sizeof(path), "%.4000s/a", conf_tmp_path);
  struct id a = all_agree(path);
  // A hard link is the same file; a rename keeps the number; so does writing.
  CHECK_OK(link("a", "b"));
  char pb[PATH_MAX];
  snprintf(pb, sizeof(pb), "%.4000s/b", conf_tmp_path);
  CHECK(same(all_agree(pb), a));
  CHECK_OK(rename("a", "c"));
  snprintf(path, sizeof(path), "%.4000s/c", conf_tmp_path);
  CHECK(same(all_agree(path), a));
  conf_put_file("c", "more data", 0644);
  CHECK(same(all_agree(path), a));
  // Another file is another number on the same device.
  conf_put_file("d", "x", 0644);
  snprintf(path, sizeof(path), "%.4000s/d", conf_tmp_path);
  struct id d = all_agree(path);
  CHECK_EQ(d.dev, a.dev);
  CHECK(d.ino != a.ino);
  CHECK_OK(unlink("b"));
  CHECK_OK(unlink("c"));
  CHECK_OK(unlink("d"));
}

TEST(dev_shm_files) {
  conf_put_file("/dev/shm/conf_identity", "shm", 0600);
  struct id a = all_agree("/dev/shm/conf_identity");
  struct stat st;
  CHECK_OK(stat("/dev/shm", &st));
  CHECK_EQ(st.st_dev, a.dev);
  CHECK_OK(unlink("/dev/shm/conf_identity"));
}

// Host files: the program itself, and files that opening for writing (no write) leaves
// alone natively and copies up in the sandbox.
TEST(host_files) {
  all_agree(conf_self);
  const char *candidates[] = {"/etc/hostname", "/etc/passwd"};
  for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++) {
    struct stat st;
    if (stat(candidates[i], &st) != 0) continue;
    struct id before = all_agree(candidates[i]);
    int fd = open(candidates[i], O_WRONLY | O_CLOEXEC);
    CHECK(fd >= 0);
    CHECK_OK(fstat(fd, &st));
    CHECK(same(of_stat(&st), before));
    CHECK_OK(close(fd));
    CHECK(same(all_agree(candidates[i]), before));
  }
}

// Directories: stat of the path, fstat of an open directory and ".." from inside agree.
TEST(directories) {
  CHECK_OK(mkdir("sub", 0755));
  struct stat a, b, c;
  CHECK_OK(stat("sub", &a));
  int fd = open("sub", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  CHECK(fd >= 0);
  CHECK_OK(fstat(fd, &b));
  CHECK(same(of_stat(&a), of_stat(&b)));
  CHECK_OK(fstatat(fd, "..", &c, 0));
  struct stat here;
  CHECK_OK(stat(".", &here));
  CHECK(same(of_stat(&c), of_stat(&here)));
  CHECK_OK(close(fd));
  CHECK_OK(rmdir("sub"));
  CHECK_OK(stat("/usr/bin", &a));
  fd = open("/usr/bin", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  CHECK(fd >= 0);
  CHECK_OK(fstat(fd, &b));
  CHECK(same(of_stat(&a), of_stat(&b)));
  CHECK_OK(close(fd));
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  conf_tmpdir("file_identity");
  RUN(scratch_files);
  RUN(dev_shm_files);
  RUN(host_files);
  RUN(directories);
  conf_tmpdir_remove();
  PASS("file_identity");
  return 0;
}
