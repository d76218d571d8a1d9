// Address space: mmap/munmap/mprotect/mremap/madvise/mincore/msync/brk,
// fork sharing and copy-on-write, and the error cases.
//
// Faults are observed with a SIGSEGV/SIGBUS handler that records siginfo
// and siglongjmps back (try_read/try_write/try_call).

#include "common.h"

#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>

#define PAGE 4096UL

static sigjmp_buf fault_jmp;
static volatile int fault_sig, fault_code;
static void *volatile fault_addr;

static void fault_handler(int sig, siginfo_t *si, void *uc) {
  (void)uc;
  fault_sig = sig;
  fault_code = si->si_code;
  fault_addr = si->si_addr;
  siglongjmp(fault_jmp, 1);
}

static void install_fault_handler(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = fault_handler;
  sa.sa_flags = SA_SIGINFO;
  CHECK_OK(sigaction(SIGSEGV, &sa, NULL));
  CHECK_OK(sigaction(SIGBUS, &sa, NULL));
}

// Each returns 0 if the access worked, else the signal it raised (with
// fault_code/fault_addr set).
static int try_read(const void *p, char *out) {
  fault_sig = 0;
  if (sigsetjmp(fault_jmp, 1) == 0) {
    char c = *(const volatile char *)p;
    if (out != NULL) *out = c;
  }
  return fault_sig;
}

static int try_write(void *p, char value) {
  fault_sig = 0;
  if (sigsetjmp(fault_jmp, 1) == 0) *(volatile char *)p = value;
  return fault_sig;
}

static int try_call(void *code, int *ret) {
  fault_sig = 0;
  if (sigsetjmp(fault_jmp, 1) == 0) *ret = ((int (*)(void))code)();
  return fault_sig;
}

#define CHECK_SEGV(expr, code, addr)      \
  do {                                    \
    CHECK_EQ((expr), SIGSEGV);            \
    CHECK_EQ(fault_code, (code));         \
    CHECK(fault_addr == (void *)(addr));  \
  } while (0)

static char *map_anon(size_t len, int prot, int flags) {
  char *p = mmap(NULL, len, prot, flags | MAP_ANONYMOUS, -1, 0);
  CHECK(p != MAP_FAILED);
  return p;
}

static char *map_rw(size_t len) {
  return map_anon(len, PROT_READ | PROT_WRITE, MAP_PRIVATE);
}

static int all_bytes(const char *p, size_t len, char c) {
  for (size_t i = 0; i < len; i++) {
    if (p[i] != c) return 0;
  }
  return 1;
}

// --- cases ---

TEST(anon_private_zero_filled) {
  char *p = map_rw(4 * PAGE);
  CHECK_EQ((uintptr_t)p % PAGE, 0);
  CHECK(all_bytes(p, 4 * PAGE, 0));
  for (size_t i = 0; i < 4 * PAGE; i++) p[i] = (char)(i * 7);
  for (size_t i = 0; i < 4 * PAGE; i++) CHECK_EQ(p[i], (char)(i * 7));
  char *q = map_rw(PAGE);
  CHECK(q + PAGE <= p || q >= p + 4 * PAGE);  // No overlap.
  CHECK_OK(munmap(p, 4 * PAGE));
  CHECK_OK(munmap(q, PAGE));
}

TEST(munmap_then_access_faults) {
  char *p = map_rw(3 * PAGE);
  memset(p, 'a', 3 * PAGE);
  CHECK_OK(munmap(p + PAGE, PAGE));
  CHECK_SEGV(try_read(p + PAGE + 10, NULL), SEGV_MAPERR, p + PAGE + 10);
  CHECK_SEGV(try_write(p + PAGE, 'x'), SEGV_MAPERR, p + PAGE);
  // The neighbours are intact.
  CHECK(all_bytes(p, PAGE, 'a'));
  CHECK(all_bytes(p + 2 * PAGE, PAGE, 'a'));
  // Unmapping a range with holes in it (or nothing mapped at all) is fine.
  CHECK_OK(munmap(p, 3 * PAGE));
  CHECK_OK(munmap(p, 3 * PAGE));
  CHECK_SEGV(try_read(p, NULL), SEGV_MAPERR, p);
}

TEST(mprotect_changes_access) {
  char *p = map_rw(PAGE);
  p[5] = 'd';
  CHECK_OK(mprotect(p, PAGE, PROT_NONE));
  CHECK_SEGV(try_read(p + 5, NULL), SEGV_ACCERR, p + 5);
  CHECK_OK(mprotect(p, PAGE, PROT_READ));
  char c = 0;
  CHECK_EQ(try_read(p + 5, &c), 0);
  CHECK_EQ(c, 'd');  // Contents survive protection changes.
  CHECK_SEGV(try_write(p + 6, 'x'), SEGV_ACCERR, p + 6);
  CHECK_OK(mprotect(p, PAGE, PROT_READ | PROT_WRITE));
  CHECK_EQ(try_write(p + 6, 'x'), 0);
  CHECK_EQ(p[6], 'x');
  CHECK_OK(munmap(p, PAGE));

  // Protecting part of a mapping splits it.
  p = map_rw(3 * PAGE);
  CHECK_OK(mprotect(p + PAGE, PAGE, PROT_READ));
  CHECK_EQ(try_write(p, 'a'), 0);
  CHECK_SEGV(try_write(p + PAGE, 'b'), SEGV_ACCERR, p + PAGE);
  CHECK_EQ(try_write(p + 2 * PAGE, 'c'), 0);
  CHECK_OK(munmap(p, 3 * PAGE));
}

TEST(prot_exec) {
  // mov eax, 42; ret
  static const unsigned char code[] = {0xb8, 0x2a, 0x00, 0x00, 0x00, 0xc3};
  char *p = map_rw(PAGE);
  memcpy(p, code, sizeof(code));
  CHECK_OK(mprotect(p, PAGE, PROT_READ | PROT_EXEC));
  int r = 0;
  CHECK_EQ(try_call(p, &r), 0);
  CHECK_EQ(r, 42);
  // Without PROT_EXEC, jumping there is an instruction fetch fault at the
  // first byte.
  CHECK_OK(mprotect(p, PAGE, PROT_READ | PROT_WRITE));
  CHECK_SEGV(try_call(p, &r), SEGV_ACCERR, p);
  CHECK_OK(munmap(p, PAGE));
}

TEST(map_fixed_replaces) {
  char *p = map_rw(3 * PAGE);
  memset(p, 'A', 3 * PAGE);
  char *q = mmap(p + PAGE, PAGE, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  CHECK(q == p + PAGE);
  CHECK(all_bytes(p + PAGE, PAGE, 0));  // A fresh page.
  CHECK(all_bytes(p, PAGE, 'A'));
  CHECK(all_bytes(p + 2 * PAGE, PAGE, 'A'));
  // MAP_FIXED with a misaligned address is refused.
  CHECK_ERRNO(mmap(p + 1, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS |
                   MAP_FIXED, -1, 0),
              EINVAL);
  CHECK_OK(munmap(p, 3 * PAGE));
}

TEST(map_fixed_noreplace) {
  char *p = map_rw(4 * PAGE);
  p[0] = 'k';
  CHECK_ERRNO(mmap(p, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS |
                   MAP_FIXED_NOREPLACE, -1, 0),
              EEXIST);
  CHECK_OK(munmap(p + 2 * PAGE, 2 * PAGE));
  // Partly overlapping is still refused, and changes nothing.
  CHECK_ERRNO(mmap(p + PAGE, 2 * PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS |
                   MAP_FIXED_NOREPLACE, -1, 0),
              EEXIST);
  CHECK_SEGV(try_read(p + 2 * PAGE, NULL), SEGV_MAPERR, p + 2 * PAGE);
  // Into the hole: allowed, at exactly that address.
  char *q = mmap(p + 2 * PAGE, 2 * PAGE, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  CHECK(q == p + 2 * PAGE);
  CHECK_EQ(p[0], 'k');
  CHECK_OK(munmap(p, 4 * PAGE));
}

TEST(mremap_grow_in_place) {
  char *p = map_rw(4 * PAGE);
  CHECK_OK(munmap(p + 2 * PAGE, 2 * PAGE));
  memset(p, 'g', 2 * PAGE);
  char *q = mremap(p, 2 * PAGE, 4 * PAGE, 0);
  CHECK(q == p);
  CHECK(all_bytes(p, 2 * PAGE, 'g'));
  CHECK(all_bytes(p + 2 * PAGE, 2 * PAGE, 0));
  p[4 * PAGE - 1] = 'z';
  // Blocked by the next mapping and not allowed to move. (Top-down
  // placement often put some other mapping right there already; then that
  // one blocks it.)
  char *next = mmap(p + 4 * PAGE, PAGE, PROT_READ,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (next == MAP_FAILED) {
    CHECK_EQ(errno, EEXIST);
    next = NULL;
  } else {
    CHECK(next == p + 4 * PAGE);
  }
  CHECK_ERRNO(mremap(p, 4 * PAGE, 6 * PAGE, 0), ENOMEM);
  // Shrinking unmaps the tail.
  q = mremap(p, 4 * PAGE, PAGE, 0);
  CHECK(q == p);
  CHECK_SEGV(try_read(p + PAGE, NULL), SEGV_MAPERR, p + PAGE);
  CHECK_OK(munmap(p, PAGE));
  if (next != NULL) CHECK_OK(munmap(next, PAGE));
}

TEST(mremap_maymove_keeps_contents) {
  char *p = map_rw(3 * PAGE);
  memset(p, 'm', 2 * PAGE);
  p[2 * PAGE] = 'x';
  // The third page blocks growing [p, p+2) in place.
  char *q = mremap(p, 2 * PAGE, 8 * PAGE, MREMAP_MAYMOVE);
  CHECK(q != MAP_FAILED);
  CHECK(q != p);
  CHECK(all_bytes(q, 2 * PAGE, 'm'));
  CHECK(all_bytes(q + 2 * PAGE, 6 * PAGE, 0));
  CHECK_SEGV(try_read(p, NULL), SEGV_MAPERR, p);
  CHECK_EQ(p[2 * PAGE], 'x');
  CHECK_ERRNO(mremap(p + 1, PAGE, 2 * PAGE, MREMAP_MAYMOVE), EINVAL);
  CHECK_OK(munmap(q, 8 * PAGE));
  CHECK_OK(munmap(p + 2 * PAGE, PAGE));
}

TEST(mremap_fixed) {
  char *src = map_rw(2 * PAGE);
  memset(src, 'S', 2 * PAGE);
  char *dst = map_rw(4 * PAGE);
  memset(dst, 'T', 4 * PAGE);
  // MREMAP_FIXED needs MREMAP_MAYMOVE.
  CHECK_ERRNO(mremap(src, 2 * PAGE, 2 * PAGE, MREMAP_FIXED, dst + PAGE),
              EINVAL);
  char *q = mremap(src, 2 * PAGE, 2 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED,
                   dst + PAGE);
  CHECK(q == dst + PAGE);
  CHECK(all_bytes(dst, PAGE, 'T'));
  CHECK(all_bytes(dst + PAGE, 2 * PAGE, 'S'));
  CHECK(all_bytes(dst + 3 * PAGE, PAGE, 'T'));
  CHECK_SEGV(try_read(src, NULL), SEGV_MAPERR, src);
  CHECK_OK(munmap(dst, 4 * PAGE));
}

TEST(madvise_dontneed) {
  char *p = map_rw(2 * PAGE);
  memset(p, 'q', 2 * PAGE);
  CHECK_OK(madvise(p, 2 * PAGE, MADV_DONTNEED));
  // Private anonymous memory reads back as zeroes.
  CHECK(all_bytes(p, 2 * PAGE, 0));
  CHECK_OK(munmap(p, 2 * PAGE));
  // Shared anonymous memory keeps its contents (only the mapping of the
  // pages is dropped).
  p = map_anon(PAGE, PROT_READ | PROT_WRITE, MAP_SHARED);
  memset(p, 'r', PAGE);
  CHECK_OK(madvise(p, PAGE, MADV_DONTNEED));
  CHECK(all_bytes(p, PAGE, 'r'));
  CHECK_ERRNO(madvise(p, PAGE, 12345), EINVAL);
  CHECK_ERRNO(madvise(p + 1, PAGE, MADV_DONTNEED), EINVAL);
  CHECK_OK(munmap(p, PAGE));
  CHECK_ERRNO(madvise(p, PAGE, MADV_DONTNEED), ENOMEM);
}

TEST(brk_grow_and_shrink) {
  uintptr_t cur = (uintptr_t)syscall(SYS_brk, 0);
  CHECK(cur != 0);
  CHECK(sbrk(0) == (void *)cur);
  uintptr_t want = cur + 64 * 1024;
  CHECK_EQ((uintptr_t)syscall(SYS_brk, want), want);
  CHECK_EQ((uintptr_t)syscall(SYS_brk, 0), want);
  char *mem = (char *)cur;
  CHECK(all_bytes(mem, 64 * 1024, 0));  // New heap is zero-filled.
  memset(mem, 'h', 64 * 1024);
  // Shrinking back unmaps whole pages past the new break.
  CHECK_EQ((uintptr_t)syscall(SYS_brk, cur), cur);
  char *gone = (char *)((cur + PAGE - 1) / PAGE * PAGE + PAGE);
  CHECK_SEGV(try_read(gone, NULL), SEGV_MAPERR, gone);
  // An impossible request leaves the break alone and returns it.
  CHECK_EQ((uintptr_t)syscall(SYS_brk, PAGE), cur);
  // Growing again gives zeroes, not the old contents.
  CHECK_EQ((uintptr_t)syscall(SYS_brk, want), want);
  CHECK(all_bytes(gone, PAGE, 0));
  CHECK_EQ((uintptr_t)syscall(SYS_brk, cur), cur);
  // glibc's sbrk on top.
  void *old = sbrk(PAGE);
  CHECK(old == (void *)cur);
  CHECK(sbrk(0) == (void *)(cur + PAGE));
  ((char *)old)[PAGE - 1] = 1;
  CHECK(sbrk(-(intptr_t)PAGE) == (void *)(cur + PAGE));
  CHECK(sbrk(0) == (void *)cur);
}

TEST(mincore_residency) {
  char *p = map_rw(4 * PAGE);
  memset(p, 1, 4 * PAGE);
  unsigned char vec[4] = {0};
  CHECK_OK(mincore(p, 4 * PAGE, vec));
  for (int i = 0; i < 4; i++) CHECK(vec[i] & 1);
  CHECK_ERRNO(mincore(p + 1, PAGE, vec), EINVAL);
  CHECK_OK(munmap(p + 2 * PAGE, 2 * PAGE));
  CHECK_ERRNO(mincore(p, 4 * PAGE, vec), ENOMEM);
  CHECK_ERRNO(mincore(p + 2 * PAGE, PAGE, vec), ENOMEM);
  CHECK_OK(munmap(p, 2 * PAGE));
}

TEST(msync_cases) {
  char *p = map_rw(2 * PAGE);
  p[0] = 1;
  CHECK_OK(msync(p, 2 * PAGE, MS_SYNC));
  CHECK_OK(msync(p, 2 * PAGE, MS_ASYNC));
  CHECK_OK(msync(p, 2 * PAGE, MS_INVALIDATE));
  CHECK_ERRNO(msync(p + 1, PAGE, MS_SYNC), EINVAL);
  CHECK_ERRNO(msync(p, PAGE, MS_SYNC | MS_ASYNC), EINVAL);
  CHECK_ERRNO(msync(p, PAGE, 0x100), EINVAL);
  CHECK_OK(munmap(p, 2 * PAGE));
  CHECK_ERRNO(msync(p, PAGE, MS_SYNC), ENOMEM);
}

TEST(shared_anon_across_fork) {
  char *p = map_anon(PAGE, PROT_READ | PROT_WRITE, MAP_SHARED);
  p[0] = 'P';
  int go[2];
  CHECK_OK(pipe(go));
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    CHECK_EQ(p[0], 'P');
    p[1] = 'C';
    // Writes the parent makes after the fork are visible too.
    char c;
    CHECK_EQ(read(go[0], &c, 1), 1);
    CHECK_EQ(p[2], 'L');
    _exit(0);
  }
  p[2] = 'L';
  CHECK_EQ(write(go[1], "g", 1), 1);
  CHECK_EXIT(pid, 0);
  CHECK_EQ(p[1], 'C');
  close(go[0]);
  close(go[1]);
  CHECK_OK(munmap(p, PAGE));
}

// File mappings made at the same time by several threads of several processes (a fork
// shares more with its parent than memory: under the Sentry, possibly the way host fds reach
// the address space) each see their own file's contents.
#define FILE_MAP_ROUNDS 100
static char file_map_expected[65536];
static size_t file_map_size;

static void *map_file_rounds(void *arg) {
  const char *path = arg;
  for (int i = 0; i < FILE_MAP_ROUNDS; i++) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) return "open";
    int flags = i % 2 ? MAP_SHARED : MAP_PRIVATE;
    char *p = mmap(NULL, file_map_size, PROT_READ, flags, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return "mmap";
    int same = memcmp(p, file_map_expected, file_map_size) == 0;
    munmap(p, file_map_size);
    if (!same) return "contents";
  }
  return NULL;
}

static int map_files_in_threads(void) {
  pthread_t th[2];
  for (int i = 0; i < 2; i++) {
    if (pthread_create(&th[i], NULL, map_file_rounds, "/etc/passwd") != 0) return 0;
  }
  const char *err = map_file_rounds("/etc/passwd");
  for (int i = 0; i < 2; i++) {
    void *r;
    pthread_join(th[i], &r);
    if (r != NULL) err = r;
  }
  if (err != NULL) fprintf(stderr, "map_files_in_threads: %s\n", err);
  return err == NULL;
}

TEST(file_mappings_in_forks_and_threads) {
  int fd = open("/etc/passwd", O_RDONLY);
  CHECK(fd >= 0);
  ssize_t n = read(fd, file_map_expected, sizeof(file_map_expected));
  CHECK(n > 0);
  file_map_size = (size_t)n;
  // A shared file mapping made before the fork stays readable in the child.
  char *before = mmap(NULL, file_map_size, PROT_READ, MAP_SHARED, fd, 0);
  CHECK(before != MAP_FAILED);
  CHECK_OK(close(fd));
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    if (memcmp(before, file_map_expected, file_map_size) != 0) _exit(2);
    _exit(map_files_in_threads() ? 0 : 1);
  }
  CHECK(map_files_in_threads());
  CHECK_EXIT(pid, 0);
  CHECK_OK(munmap(before, file_map_size));
}

TEST(private_copy_on_write_after_fork) {
  char *p = map_rw(PAGE);
  p[0] = 'P';
  int to_child[2], to_parent[2];
  CHECK_OK(pipe(to_child));
  CHECK_OK(pipe(to_parent));
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    CHECK_EQ(p[0], 'P');
    p[0] = 'C';
    CHECK_EQ(write(to_parent[1], "w", 1), 1);
    char c;
    CHECK_EQ(read(to_child[0], &c, 1), 1);
    CHECK_EQ(p[0], 'C');  // The parent's later write is not seen.
    _exit(0);
  }
  char c;
  CHECK_EQ(read(to_parent[0], &c, 1), 1);
  CHECK_EQ(p[0], 'P');  // The child's write is not seen.
  p[0] = 'Q';
  CHECK_EQ(write(to_child[1], "w", 1), 1);
  CHECK_EXIT(pid, 0);
  CHECK_EQ(p[0], 'Q');
  close(to_child[0]);
  close(to_child[1]);
  close(to_parent[0]);
  close(to_parent[1]);
  CHECK_OK(munmap(p, PAGE));
}

TEST(dev_zero_mappings) {
  int fd = open("/dev/zero", O_RDWR);
  CHECK(fd >= 0);
  char *priv = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  CHECK(priv != MAP_FAILED);
  CHECK(all_bytes(priv, 2 * PAGE, 0));
  priv[0] = 'z';
  // MAP_SHARED of /dev/zero is shared anonymous memory.
  char *shared = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  CHECK(shared != MAP_FAILED);
  close(fd);  // The mappings outlive the descriptor.
  CHECK(all_bytes(shared, PAGE, 0));
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    shared[0] = 'c';
    priv[0] = 'c';
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
  CHECK_EQ(shared[0], 'c');
  CHECK_EQ(priv[0], 'z');
  CHECK_OK(munmap(priv, 2 * PAGE));
  CHECK_OK(munmap(shared, PAGE));
}

TEST(map_growsdown) {
  // Find 16 MiB of free address space, then put a 4-page MAP_GROWSDOWN
  // mapping at its top, far from any other mapping (the kernel keeps a
  // guard gap below a stack-like mapping).
  const size_t hole = 16 << 20;
  char *r = map_anon(hole, PROT_NONE, MAP_PRIVATE | MAP_NORESERVE);
  CHECK_OK(munmap(r, hole));
  char *base = r + hole - 4 * PAGE;
  char *p = mmap(base, 4 * PAGE, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_GROWSDOWN, -1,
                 0);
  CHECK(p == base);
  memset(p, 's', 4 * PAGE);
  CHECK(all_bytes(p, 4 * PAGE, 's'));
  // Touching the page just below grows the mapping down instead of
  // faulting.
  CHECK_EQ(try_write(p - PAGE, 'g'), 0);
  CHECK_EQ(p[-PAGE], 'g');
  unsigned char vec[5];
  CHECK_OK(mincore(p - PAGE, 5 * PAGE, vec));
  CHECK_OK(munmap(p - PAGE, 5 * PAGE));
}

TEST(map_noreserve_huge) {
  const size_t len = 64UL << 30;  // 64 GiB, far beyond RAM.
  char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  CHECK(p != MAP_FAILED);
  p[0] = 1;
  p[len / 2] = 2;
  p[len - 1] = 3;
  CHECK_EQ(p[0] + p[len / 2] + p[len - 1], 6);
  CHECK_OK(munmap(p, len));
}

TEST(mapping_errors) {
  CHECK_ERRNO(mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              EINVAL);
  // Neither MAP_PRIVATE nor MAP_SHARED.
  CHECK_ERRNO(mmap(NULL, PAGE, PROT_READ, MAP_ANONYMOUS, -1, 0), EINVAL);
  // A file mapping with a bad descriptor.
  CHECK_ERRNO(mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, -1, 0), EBADF);
  CHECK_ERRNO(mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, 9999, 0), EBADF);
  char *p = map_rw(2 * PAGE);
  CHECK_ERRNO(munmap(p + 1, PAGE), EINVAL);
  CHECK_ERRNO(munmap(p, 0), EINVAL);
  CHECK_ERRNO(mprotect(p + 1, PAGE, PROT_READ), EINVAL);
  CHECK_ERRNO(mprotect(p, PAGE, 0x100), EINVAL);
  CHECK_OK(munmap(p + PAGE, PAGE));
  // Any unmapped page in the range.
  CHECK_ERRNO(mprotect(p, 2 * PAGE, PROT_READ), ENOMEM);
  CHECK_ERRNO(mprotect(p + PAGE, PAGE, PROT_READ), ENOMEM);
  CHECK_OK(munmap(p, PAGE));
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  install_fault_handler();
  RUN(anon_private_zero_filled);
  RUN(munmap_then_access_faults);
  RUN(mprotect_changes_access);
  RUN(prot_exec);
  RUN(map_fixed_replaces);
  RUN(map_fixed_noreplace);
  RUN(mremap_grow_in_place);
  RUN(mremap_maymove_keeps_contents);
  RUN(mremap_fixed);
  RUN(madvise_dontneed);
  RUN(brk_grow_and_shrink);
  RUN(mincore_residency);
  RUN(msync_cases);
  RUN(shared_anon_across_fork);
  RUN(file_mappings_in_forks_and_threads);
  RUN(private_copy_on_write_after_fork);
  RUN(dev_zero_mappings);
  RUN(map_growsdown);
  RUN(map_noreserve_huge);
  RUN(mapping_errors);
  PASS("memory");
  return 0;
}
