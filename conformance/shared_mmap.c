// Shared file mappings on every kind of file: a file in the scratch directory (the overlay's
// upper layer in the sandbox), one on /dev/shm (tmpfs), a memfd, and a read-only host file
// (the gofer's lower layer). Coherence of mappings with read/write and with each other,
// across fork, truncation and SIGBUS past EOF, msync, mremap, MADV_DONTNEED/MADV_REMOVE,
// fallocate on mapped files, and memfd seals against writable mappings.
#include "common.h"

#include <linux/falloc.h>
#include <signal.h>
#include <sys/mman.h>

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010
#endif

static const long kPage = 4096;

// The directories the file cases run in: the scratch directory and /dev/shm.
static char dirs[2][PATH_MAX];

static int make_file(const char *dir, const char *name, long size) {
  char path[PATH_MAX];
  snprintf(path, sizeof(path), "%.4000s/%.40s", dir, name);
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  CHECK(fd >= 0);
  CHECK_OK(unlink(path));
  CHECK_OK(ftruncate(fd, size));
  return fd;
}

static char *map_shared(int fd, long len) {
  char *p = mmap(NULL, (size_t)len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  CHECK(p != MAP_FAILED);
  return p;
}

// Writes through the mapping are seen by pread; pwrite is seen through the mapping; a second
// mapping of the same file sees both.
static void coherent(int fd) {
  char *a = map_shared(fd, 2 * kPage);
  char *b = map_shared(fd, 2 * kPage);
  CHECK_EQ(a[0], 0);
  memcpy(a + kPage - 2, "span", 4);
  char buf[8] = {0};
  CHECK_EQ(pread(fd, buf, 4, kPage - 2), 4);
  CHECK(memcmp(buf, "span", 4) == 0);
  CHECK(memcmp(b + kPage - 2, "span", 4) == 0);
  CHECK_EQ(pwrite(fd, "file", 4, 100), 4);
  CHECK(memcmp(a + 100, "file", 4) == 0);
  CHECK(memcmp(b + 100, "file", 4) == 0);
  CHECK_OK(msync(a, 2 * kPage, MS_SYNC));
  CHECK_OK(munmap(a, 2 * kPage));
  CHECK_OK(munmap(b, 2 * kPage));
}

TEST(coherent_with_read_write) {
  for (int i = 0; i < 2; i++) {
    int fd = make_file(dirs[i], "coherent", 2 * kPage);
    coherent(fd);
    CHECK_OK(close(fd));
  }
}

// A child writes through its inherited mapping and through write(); the parent sees both.
TEST(shared_across_fork) {
  for (int i = 0; i < 2; i++) {
    int fd = make_file(dirs[i], "fork", kPage);
    char *p = map_shared(fd, kPage);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
      memcpy(p, "child", 5);
      if (pwrite(fd, "write", 5, 10) != 5) _exit(2);
      _exit(0);
    }
    CHECK_EXIT(pid, 0);
    CHECK(memcmp(p, "child", 5) == 0);
    CHECK(memcmp(p + 10, "write", 5) == 0);
    // A private mapping taken now does not write back.
    char *q = mmap(NULL, (size_t)kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    CHECK(q != MAP_FAILED);
    CHECK(memcmp(q, "child", 5) == 0);
    q[0] = 'X';
    CHECK_EQ(p[0], 'c');
    CHECK_OK(munmap(q, kPage));
    CHECK_OK(munmap(p, kPage));
    CHECK_OK(close(fd));
  }
}

// A mapped page wholly past EOF after ftruncate faults with SIGBUS; growing the file again
// brings back zeros, not the old bytes.
TEST(truncate_then_sigbus) {
  for (int i = 0; i < 2; i++) {
    int fd = make_file(dirs[i], "trunc", 2 * kPage);
    char *p = map_shared(fd, 2 * kPage);
    p[kPage] = 'z';
    CHECK_OK(ftruncate(fd, kPage));
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
      signal(SIGBUS, SIG_DFL);
      volatile char c = p[kPage];
      (void)c;
      _exit(0);
    }
    CHECK_KILLED(pid, SIGBUS);
    CHECK_OK(ftruncate(fd, 2 * kPage));
    CHECK_EQ(p[kPage], 0);
    struct stat st;
    CHECK_OK(fstat(fd, &st));
    CHECK_EQ(st.st_size, 2 * kPage);
    CHECK_OK(munmap(p, 2 * kPage));
    CHECK_OK(close(fd));
  }
}

// mremap keeps a shared mapping shared; MADV_DONTNEED keeps a shared file's data;
// MADV_REMOVE and FALLOC_FL_PUNCH_HOLE free it (reads as zeros through the mapping).
TEST(remap_and_advise) {
  for (int i = 0; i < 2; i++) {
    int fd = make_file(dirs[i], "remap", 4 * kPage);
    char *p = map_shared(fd, kPage);
    p[0] = 'a';
    char *q = mremap(p, (size_t)kPage, (size_t)(4 * kPage), MREMAP_MAYMOVE);
    CHECK(q != MAP_FAILED);
    q[3 * kPage] = 'b';
    char c = 0;
    CHECK_EQ(pread(fd, &c, 1, 3 * kPage), 1);
    CHECK_EQ(c, 'b');
    CHECK_EQ(q[0], 'a');
    CHECK_OK(madvise(q, (size_t)kPage, MADV_DONTNEED));
    CHECK_EQ(q[0], 'a');
    CHECK_OK(madvise(q, (size_t)kPage, MADV_REMOVE));
    CHECK_EQ(q[0], 0);
    CHECK_EQ(pread(fd, &c, 1, 0), 1);
    CHECK_EQ(c, 0);
    CHECK_OK(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 3 * kPage, kPage));
    CHECK_EQ(q[3 * kPage], 0);
    struct stat st;
    CHECK_OK(fstat(fd, &st));
    CHECK_EQ(st.st_size, 4 * kPage);
    CHECK_OK(munmap(q, 4 * kPage));
    CHECK_OK(close(fd));
  }
}

// Writes that grow a mapped file are seen by a mapping that already covered the new range.
TEST(grow_under_mapping) {
  for (int i = 0; i < 2; i++) {
    int fd = make_file(dirs[i], "grow", 0);
    CHECK_EQ(write(fd, "x", 1), 1);
    char *p = map_shared(fd, 2 * kPage);
    CHECK_EQ(p[0], 'x');
    CHECK_EQ(pwrite(fd, "late", 4, kPage + 5), 4);
    CHECK(memcmp(p + kPage + 5, "late", 4) == 0);
    CHECK_OK(munmap(p, 2 * kPage));
    CHECK_OK(close(fd));
  }
}

// A shared writable mapping needs a file opened for writing.
TEST(access_mode_checks) {
  char path[PATH_MAX];
  snprintf(path, sizeof(path), "%.4000s/ro", dirs[0]);
  conf_put_file(path, "read only", 0600);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  CHECK(fd >= 0);
  CHECK(mmap(NULL, (size_t)kPage, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED);
  CHECK_EQ(errno, EACCES);
  char *p = mmap(NULL, (size_t)kPage, PROT_READ, MAP_SHARED, fd, 0);
  CHECK(p != MAP_FAILED);
  CHECK(memcmp(p, "read only", 9) == 0);
  CHECK_ERRNO(mprotect(p, (size_t)kPage, PROT_READ | PROT_WRITE), EACCES);
  CHECK_OK(munmap(p, kPage));
  CHECK_OK(close(fd));
  CHECK_OK(unlink(path));
}

// memfd: shared across fork; F_SEAL_WRITE fails while a writable shared mapping exists and
// forbids new ones once set.
TEST(memfd_shared_and_seals) {
  int fd = memfd_create("conf", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  CHECK(fd >= 0);
  CHECK_OK(ftruncate(fd, kPage));
  char *p = map_shared(fd, kPage);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    memcpy(p, "memfd", 5);
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
  char buf[8] = {0};
  CHECK_EQ(pread(fd, buf, 5, 0), 5);
  CHECK(memcmp(buf, "memfd", 5) == 0);
  CHECK_ERRNO(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE), EBUSY);
  CHECK_OK(munmap(p, kPage));
  CHECK_OK(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE));
  CHECK(mmap(NULL, (size_t)kPage, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED);
  CHECK_EQ(errno, EPERM);
  CHECK_ERRNO(pwrite(fd, "x", 1, 0), EPERM);
  p = mmap(NULL, (size_t)kPage, PROT_READ, MAP_SHARED, fd, 0);
  CHECK(p != MAP_FAILED);
  CHECK(memcmp(p, "memfd", 5) == 0);
  CHECK_OK(munmap(p, kPage));
  CHECK_OK(close(fd));
}

// A host file from the read-only lower layer maps shared for reading and matches read().
TEST(host_file_shared_read) {
  int fd = open(conf_self, O_RDONLY | O_CLOEXEC);
  CHECK(fd >= 0);
  char *p = mmap(NULL, (size_t)kPage, PROT_READ, MAP_SHARED, fd, 0);
  CHECK(p != MAP_FAILED);
  char buf[64];
  CHECK_EQ(pread(fd, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
  CHECK(memcmp(p, buf, sizeof(buf)) == 0);
  CHECK_OK(munmap(p, kPage));
  CHECK_OK(close(fd));
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  snprintf(dirs[0], sizeof(dirs[0]), "%s", conf_tmpdir("shared_mmap"));
  snprintf(dirs[1], sizeof(dirs[1]), "/dev/shm");
  RUN(coherent_with_read_write);
  RUN(shared_across_fork);
  RUN(truncate_then_sigbus);
  RUN(remap_and_advise);
  RUN(grow_under_mapping);
  RUN(access_mode_checks);
  RUN(memfd_shared_and_seals);
  RUN(host_file_shared_read);
  conf_tmpdir_remove();
  PASS("shared_mmap");
  return 0;
}
