// mlock, mlock2, munlock, mlockall, munlockall and MAP_LOCKED: which ranges
// count as locked (VmLck in /proc/self/status), ENOMEM for unmapped ranges,
// fork, and RLIMIT_MEMLOCK for an unprivileged process (ENOMEM, EPERM,
// EAGAIN for mappings under MCL_FUTURE).
#include "common.h"

#include <sys/mman.h>

#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT 1
#endif

static long vm_lck_kb(void) {
  char buf[8192];
  conf_get_file("/proc/self/status", buf, sizeof(buf));
  char *p = strstr(buf, "\nVmLck:");
  CHECK(p != NULL);
  return atol(p + 7);
}

static char *map_pages(int n) {
  char *p = mmap(NULL, (size_t)n * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                 -1, 0);
  CHECK(p != MAP_FAILED);
  return p;
}

static int mlock2_(const void *addr, size_t len, unsigned flags) {
  return (int)syscall(SYS_mlock2, addr, len, flags);
}

TEST(lock_ranges) {
  long base = vm_lck_kb();
  char *p = map_pages(4);
  CHECK_OK(mlock(p, 3 * 4096));
  CHECK_EQ(vm_lck_kb() - base, 12);
  // Locking again counts once; an unaligned range covers its whole pages.
  CHECK_OK(mlock(p + 100, 4096));
  CHECK_EQ(vm_lck_kb() - base, 12);
  CHECK_OK(mlock(p + 3 * 4096 + 10, 1));
  CHECK_EQ(vm_lck_kb() - base, 16);
  CHECK_OK(munlock(p + 4096, 4096));
  CHECK_EQ(vm_lck_kb() - base, 12);
  // mprotect splits keep the lock.
  CHECK_OK(mprotect(p, 4096, PROT_READ));
  CHECK_EQ(vm_lck_kb() - base, 12);
  CHECK_OK(mlock(p, 0));
  CHECK_OK(munlock(p, 0));
  // munmap of locked pages unlocks them.
  CHECK_OK(munmap(p + 2 * 4096, 2 * 4096));
  CHECK_EQ(vm_lck_kb() - base, 4);
  CHECK_OK(munlock(p, 2 * 4096));
  CHECK_EQ(vm_lck_kb(), base);
  CHECK_OK(munmap(p, 2 * 4096));
}

TEST(unmapped_is_enomem) {
  long base = vm_lck_kb();
  char *p = map_pages(3);
  CHECK_OK(munmap(p + 4096, 4096));
  CHECK_ERRNO(mlock(p + 4096, 4096), ENOMEM);
  CHECK_ERRNO(munlock(p + 4096, 4096), ENOMEM);
  // The pages before the hole are locked all the same.
  CHECK_ERRNO(mlock(p, 3 * 4096), ENOMEM);
  CHECK_EQ(vm_lck_kb() - base, 4);
  CHECK_ERRNO(munlock(p, 3 * 4096), ENOMEM);
  CHECK_EQ(vm_lck_kb(), base);
  CHECK_ERRNO(mlock2_(p + 4096, 4096, 0), ENOMEM);
  CHECK_OK(munmap(p, 3 * 4096));
}

TEST(mlock2_flags) {
  long base = vm_lck_kb();
  char *p = map_pages(2);
  CHECK_ERRNO(mlock2_(p, 4096, 2), EINVAL);
  CHECK_ERRNO(mlock2_(p, 4096, ~0u), EINVAL);
  CHECK_OK(mlock2_(p, 2 * 4096, MLOCK_ONFAULT));
  CHECK_EQ(vm_lck_kb() - base, 8);
  CHECK_OK(mlock2_(p, 4096, 0));
  CHECK_EQ(vm_lck_kb() - base, 8);
  p[0] = 1;
  p[4096] = 1;
  CHECK_OK(munmap(p, 2 * 4096));
  CHECK_EQ(vm_lck_kb(), base);
}

TEST(mlockall_flags) {
  CHECK_ERRNO(mlockall(0), EINVAL);
  CHECK_ERRNO(mlockall(MCL_ONFAULT), EINVAL);
  CHECK_ERRNO(mlockall(8), EINVAL);
  CHECK_ERRNO(mlockall(MCL_CURRENT | 8), EINVAL);
  CHECK_OK(munlockall());
  CHECK_EQ(vm_lck_kb(), 0);
}

TEST(mlockall_current_and_future) {
  CHECK_OK(mlockall(MCL_CURRENT | MCL_ONFAULT));
  long all = vm_lck_kb();
  CHECK(all > 0);
  // MCL_CURRENT alone does not lock what comes later.
  char *p = map_pages(2);
  CHECK_EQ(vm_lck_kb(), all);
  CHECK_OK(munmap(p, 2 * 4096));
  CHECK_OK(munlockall());
  CHECK_EQ(vm_lck_kb(), 0);
  // MCL_FUTURE alone locks only what comes later.
  CHECK_OK(mlockall(MCL_FUTURE | MCL_ONFAULT));
  CHECK_EQ(vm_lck_kb(), 0);
  p = map_pages(3);
  CHECK_EQ(vm_lck_kb(), 12);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    // Neither the locks nor MCL_FUTURE survive fork.
    if (vm_lck_kb() != 0) _exit(2);
    char *q = map_pages(1);
    _exit(vm_lck_kb() == 0 && q ? 0 : 3);
  }
  CHECK_EXIT(pid, 0);
  CHECK_OK(munlockall());
  CHECK_EQ(vm_lck_kb(), 0);
  char *q = map_pages(1);
  CHECK_EQ(vm_lck_kb(), 0);
  CHECK_OK(munmap(q, 4096));
  CHECK_OK(munmap(p, 3 * 4096));
}

TEST(map_locked) {
  char *p = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_LOCKED,
                 -1, 0);
  CHECK(p != MAP_FAILED);
  CHECK_EQ(vm_lck_kb(), 8);
  CHECK_OK(munmap(p, 2 * 4096));
  CHECK_EQ(vm_lck_kb(), 0);
}

// Runs `fn` in a child that is no longer root, with RLIMIT_MEMLOCK `limit`.
static void as_user(rlim_t limit, void (*fn)(void)) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    struct rlimit rl = {limit, limit};
    CHECK_OK(setrlimit(RLIMIT_MEMLOCK, &rl));
    CHECK_OK(setuid(1000));
    fn();
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
}

static void user_limits(void) {
  char *p = map_pages(4);
  CHECK_OK(mlock(p, 2 * 4096));
  CHECK_OK(mlock(p, 2 * 4096));  // already locked: no more is counted
  CHECK_ERRNO(mlock(p + 2 * 4096, 4096), ENOMEM);
  CHECK_ERRNO(mlock2_(p, 3 * 4096, MLOCK_ONFAULT), ENOMEM);
  CHECK_EQ(vm_lck_kb(), 8);
  CHECK_OK(munlock(p, 4096));
  CHECK_OK(mlock(p + 2 * 4096, 4096));
  CHECK_EQ(vm_lck_kb(), 8);
  // The whole address space is more than two pages.
  CHECK_ERRNO(mlockall(MCL_CURRENT), ENOMEM);
  CHECK_OK(munlockall());
  // Under MCL_FUTURE, a mapping past the limit fails with EAGAIN.
  CHECK_OK(mlockall(MCL_FUTURE));
  char *q = mmap(NULL, 3 * 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(q == MAP_FAILED && errno == EAGAIN);
  q = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(q != MAP_FAILED);
  CHECK_EQ(vm_lck_kb(), 4);
  // The heap grows locked too: past the limit brk stays put.
  void *top = sbrk(0);
  CHECK(sbrk(3 * 4096) == (void *)-1);
  CHECK(sbrk(0) == top);
  CHECK_OK(munlockall());
  q = mmap(NULL, 3 * 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_LOCKED, -1, 0);
  CHECK(q == MAP_FAILED && errno == EAGAIN);
  // Growing a locked mapping counts against the limit as well.
  CHECK_OK(munlockall());
  char *r = map_pages(1);
  CHECK_OK(mlock(r, 4096));
  CHECK(mremap(r, 4096, 4 * 4096, MREMAP_MAYMOVE) == MAP_FAILED && errno == EAGAIN);
  r = mremap(r, 4096, 2 * 4096, MREMAP_MAYMOVE);
  CHECK(r != MAP_FAILED);
  CHECK_EQ(vm_lck_kb(), 8);
}

static void user_no_limit(void) {
  char *p = map_pages(1);
  CHECK_ERRNO(mlock(p, 4096), EPERM);
  CHECK_ERRNO(mlock2_(p, 4096, MLOCK_ONFAULT), EPERM);
  CHECK_ERRNO(mlockall(MCL_CURRENT), EPERM);
  CHECK_ERRNO(mlockall(MCL_FUTURE), EPERM);
  char *q = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_LOCKED, -1, 0);
  CHECK(q == MAP_FAILED && errno == EPERM);
  // Unlocking needs no privilege.
  CHECK_OK(munlock(p, 4096));
  CHECK_OK(munlockall());
}

TEST(rlimit_memlock_unprivileged) {
  as_user(2 * 4096, user_limits);
  as_user(0, user_no_limit);
}

TEST(root_ignores_limit) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    struct rlimit rl = {0, 0};
    CHECK_OK(setrlimit(RLIMIT_MEMLOCK, &rl));
    char *p = map_pages(4);
    CHECK_OK(mlock(p, 4 * 4096));
    CHECK_EQ(vm_lck_kb(), 16);
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  CHECK_EQ(vm_lck_kb(), 0);
  RUN(lock_ranges);
  RUN(unmapped_is_enomem);
  RUN(mlock2_flags);
  RUN(mlockall_flags);
  RUN(mlockall_current_and_future);
  RUN(map_locked);
  RUN(rlimit_memlock_unprivileged);
  RUN(root_ignores_limit);
  PASS("mlock");
}
