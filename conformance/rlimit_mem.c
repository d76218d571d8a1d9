// RLIMIT_AS, RLIMIT_DATA, RLIMIT_STACK and RLIMIT_CORE: what mmap, mremap, brk and mprotect
// refuse past the address-space and data limits (Linux's may_expand_vm and brk's
// check_data_rlimit), the stack limit carried over fork and execve and bounding a deep
// recursion, and the /proc/self/limits lines. Every case lowers limits in a forked child; the
// limits are set relative to the child's own VmSize and VmData, so they hold however large the
// program's starting address space is.
#include "common.h"

#include <signal.h>
#include <sys/mman.h>

#define MB (1024UL * 1024UL)

// A /proc/self/status field in bytes ("VmSize:" ...), read without malloc: stdio would move
// the break.
static unsigned long status_bytes(const char *field) {
  char buf[4096];
  int fd = open("/proc/self/status", O_RDONLY);
  CHECK(fd >= 0);
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  CHECK(n > 0);
  close(fd);
  buf[n] = '\0';
  char *p = strstr(buf, field);
  CHECK(p != NULL);
  return strtoul(p + strlen(field), NULL, 10) * 1024;
}

static void set_limit(int resource, unsigned long soft) {
  struct rlimit rl = {soft, RLIM_INFINITY};
  CHECK_OK(setrlimit(resource, &rl));
}

static void *map(size_t len, int prot, int flags) { return mmap(NULL, len, prot, flags, -1, 0); }

static long raw_brk(unsigned long addr) { return syscall(SYS_brk, addr); }

// Runs fn in a forked child and checks that it exited with 0.
static void in_child(void (*fn)(void)) {
  pid_t pid = fork();
  CHECK_OK(pid);
  if (pid == 0) {
    fn();
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
}

// RLIMIT_AS counts every mapping, PROT_NONE reservations too; a MAP_FIXED replacement only
// needs the pages it adds.
static void as_mmap(void) {
  set_limit(RLIMIT_AS, status_bytes("VmSize:") + 16 * MB);
  CHECK(map(64 * MB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE) == MAP_FAILED);
  CHECK_EQ(errno, ENOMEM);
  CHECK(map(17 * MB, PROT_READ, MAP_SHARED | MAP_ANONYMOUS) == MAP_FAILED);
  CHECK_EQ(errno, ENOMEM);
  void *a = map(8 * MB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS);
  CHECK(a != MAP_FAILED);
  void *b = map(7 * MB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
  CHECK(b != MAP_FAILED);
  CHECK(map(2 * MB, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS) == MAP_FAILED);
  CHECK_EQ(errno, ENOMEM);
  // 15 MB of the 16 in use: the same 8 MB again over `a` fits, 8 MB over half of `a` not.
  CHECK(mmap(a, 8 * MB, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == a);
  CHECK(mmap((char *)a + 4 * MB, 8 * MB, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
             0) == MAP_FAILED);
  CHECK_EQ(errno, ENOMEM);
  CHECK_OK(munmap(b, 7 * MB));
  b = map(7 * MB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
  CHECK(b != MAP_FAILED);
  ((char *)b)[0] = 1;
}
TEST(as_mmap) { in_child(as_mmap); }

static void as_mremap(void) {
  set_limit(RLIMIT_AS, status_bytes("VmSize:") + 16 * MB);
  void *a = map(8 * MB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
  CHECK(a != MAP_FAILED);
  CHECK(mremap(a, 8 * MB, 32 * MB, MREMAP_MAYMOVE) == MAP_FAILED);
  CHECK_EQ(errno, ENOMEM);
  void *b = mremap(a, 8 * MB, 12 * MB, MREMAP_MAYMOVE);
  CHECK(b != MAP_FAILED);
  // 12 MB: growing by 8 more fails whether it moves or not, shrinking always works.
  CHECK(mremap(b, 12 * MB, 20 * MB, MREMAP_MAYMOVE) == MAP_FAILED);
  CHECK_EQ(errno, ENOMEM);
  CHECK(mremap(b, 12 * MB, 2 * MB, 0) == b);
  void *c = mremap(b, 2 * MB, 14 * MB, MREMAP_MAYMOVE);
  CHECK(c != MAP_FAILED);
}
TEST(as_mremap) { in_child(as_mremap); }

static void as_brk(void) {
  unsigned long cur = (unsigned long)raw_brk(0);
  set_limit(RLIMIT_AS, status_bytes("VmSize:") + 16 * MB);
  CHECK_EQ(raw_brk(cur + 32 * MB), cur);  // past the limit brk stays put
  CHECK_EQ(raw_brk(cur + 8 * MB), cur + 8 * MB);
  ((char *)cur)[8 * MB - 1] = 1;
  CHECK_EQ(raw_brk(cur + 17 * MB), cur + 8 * MB);
  CHECK_EQ(raw_brk(cur), cur);
}
TEST(as_brk) { in_child(as_brk); }

// RLIMIT_DATA counts private writable mappings that are not stacks (VmData), and brk.
static void data_limit(void) {
  unsigned long cur = (unsigned long)raw_brk(0);
  set_limit(RLIMIT_DATA, status_bytes("VmData:") + 4 * MB);
  CHECK_EQ(raw_brk(cur + 8 * MB), cur);
  CHECK(map(8 * MB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS) == MAP_FAILED);
  CHECK_EQ(errno, ENOMEM);
  // Not data: read-only, shared, or a stack.
  CHECK(map(64 * MB, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS) != MAP_FAILED);
  CHECK(map(64 * MB, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS) != MAP_FAILED);
  CHECK(map(8 * MB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_GROWSDOWN) !=
        MAP_FAILED);
  // Becoming writable makes it data.
  void *ro = map(8 * MB, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS);
  CHECK(ro != MAP_FAILED);
  CHECK_ERRNO(mprotect(ro, 8 * MB, PROT_READ | PROT_WRITE), ENOMEM);
  CHECK_OK(mprotect(ro, MB, PROT_READ | PROT_WRITE));
  // Within the limit both work.
  CHECK_EQ(raw_brk(cur + MB), cur + MB);
  ((char *)cur)[MB - 1] = 1;
  void *rw = map(MB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
  CHECK(rw != MAP_FAILED);
  CHECK(mremap(rw, MB, 4 * MB, MREMAP_MAYMOVE) == MAP_FAILED);
  CHECK_EQ(errno, ENOMEM);
  CHECK(map(2 * MB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS) == MAP_FAILED);
  CHECK_EQ(errno, ENOMEM);
  // A soft limit of 0 lets data grow up to the hard limit (Linux's allowance for Valgrind).
  struct rlimit rl = {0, status_bytes("VmData:") + 4 * MB};
  CHECK_OK(setrlimit(RLIMIT_DATA, &rl));
  CHECK(map(2 * MB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS) != MAP_FAILED);
  CHECK(map(8 * MB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS) == MAP_FAILED);
  CHECK_EQ(errno, ENOMEM);
}
TEST(data_limit) { in_child(data_limit); }

// Recursion of about `kb` kilobytes of stack.
static int recurse(int kb) {
  volatile char frame[1024];
  frame[0] = (char)kb;
  if (kb <= 1) return frame[0];
  return recurse(kb - 1) + frame[0];
}

// Runs a recursion of `kb` KB in a child; returns its wait status.
static int recursion_status(int kb) {
  pid_t pid = fork();
  CHECK_OK(pid);
  if (pid == 0) _exit(recurse(kb) == 0 ? 2 : 0);
  return conf_wait(pid);
}

// In the exec'd program ("stack-child"): the limit came over fork and execve, and bounds the
// stack.
static void stack_child(unsigned long want) {
  struct rlimit rl;
  CHECK_OK(getrlimit(RLIMIT_STACK, &rl));
  CHECK_EQ(rl.rlim_cur, want);
  CHECK_EQ(rl.rlim_max, RLIM_INFINITY);
  CHECK_EQ(recursion_status(64), 0);
  int st = recursion_status(2048);
  if (want < 2 * MB) {
    CHECK(WIFSIGNALED(st));
    CHECK_EQ(WTERMSIG(st), SIGSEGV);
  } else {
    CHECK_EQ(st, 0);
  }
}

static void exec_with_stack_limit(unsigned long soft) {
  pid_t pid = fork();
  CHECK_OK(pid);
  if (pid == 0) {
    set_limit(RLIMIT_STACK, soft);
    char arg[32];
    snprintf(arg, sizeof(arg), "%lu", soft);
    execl(conf_self, conf_self, "stack-child", arg, (char *)NULL);
    _exit(3);
  }
  CHECK_EXIT(pid, 0);
}

TEST(stack_limit_after_exec) {
  exec_with_stack_limit(256 * 1024);
  exec_with_stack_limit(16 * MB);
}

// /proc/self/limits shows the limits as Linux formats them.
static void check_limits_line(const char *buf, const char *name, const char *soft) {
  char want[128];
  snprintf(want, sizeof(want), "\n%-25s %-20s %-20s %-10s\n", name, soft, "unlimited", "bytes");
  if (strstr(buf, want) == NULL) {
    fprintf(stderr, "want line:%s", want);
    CHECK(strstr(buf, want) != NULL);
  }
}

static void limits_file(void) {
  set_limit(RLIMIT_AS, 3UL << 30);
  set_limit(RLIMIT_DATA, 1UL << 30);
  set_limit(RLIMIT_STACK, 4 * MB);
  // conf_init set RLIMIT_CORE to 0 (hard limit too): lowering is all an unprivileged run may do.
  struct rlimit core = {0, 0};
  CHECK_OK(setrlimit(RLIMIT_CORE, &core));
  core.rlim_cur = 4096;
  CHECK_ERRNO(setrlimit(RLIMIT_CORE, &core), EINVAL);  // soft above hard
  char buf[4096];
  int fd = open("/proc/self/limits", O_RDONLY);
  CHECK(fd >= 0);
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  CHECK(n > 0);
  close(fd);
  buf[n] = '\0';
  check_limits_line(buf, "Max address space", "3221225472");
  check_limits_line(buf, "Max data size", "1073741824");
  check_limits_line(buf, "Max stack size", "4194304");
  char want[128];
  snprintf(want, sizeof(want), "\n%-25s %-20s %-20s %-10s\n", "Max core file size", "0", "0",
           "bytes");
  CHECK(strstr(buf, want) != NULL);
}
TEST(limits_file) { in_child(limits_file); }

// RLIMIT_CORE 0 (conf_init's): a core signal kills without a core dump, as with a file
// core_pattern. A host that pipes cores to a helper ("|...") dumps regardless of the limit:
// there only the signal is checked.
TEST(core_limit_zero_no_dump) {
  char pattern[8] = "";
  int fd = open("/proc/sys/kernel/core_pattern", O_RDONLY);
  if (fd >= 0) {
    CHECK(read(fd, pattern, sizeof(pattern) - 1) >= 0);
    close(fd);
  }
  pid_t pid = fork();
  CHECK_OK(pid);
  if (pid == 0) {
    raise(SIGSEGV);
    _exit(4);
  }
  siginfo_t si;
  memset(&si, 0, sizeof(si));
  CHECK_OK(waitid(P_PID, pid, &si, WEXITED));
  CHECK_EQ(si.si_status, SIGSEGV);
  if (pattern[0] != '|') CHECK_EQ(si.si_code, CLD_KILLED);
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  if (argc == 3 && strcmp(argv[1], "stack-child") == 0) {
    stack_child(strtoul(argv[2], NULL, 10));
    return 0;
  }
  RUN(as_mmap);
  RUN(as_mremap);
  RUN(as_brk);
  RUN(data_limit);
  RUN(stack_limit_after_exec);
  RUN(limits_file);
  RUN(core_limit_zero_no_dump);
  PASS("rlimit_mem");
}
