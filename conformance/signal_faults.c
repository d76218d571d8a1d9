// Synchronous signals and signal frames: faults (SIGSEGV, SIGBUS, SIGFPE,
// SIGILL, SIGTRAP) with their siginfo, faults that cannot be caught, a
// handler editing the saved context, and sigaltstack (including a stack
// overflow handled on the alternate stack).
//
// These depend on the platform turning hardware traps into signals and on
// the kernel building and restoring signal frames, so they are kept apart
// from the signal delivery tests in signals.c.

#include "common.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <ucontext.h>

#define PAGE 4096UL

static void set_handler(int sig, void (*fn)(int, siginfo_t *, void *),
                        int flags) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = fn;
  sa.sa_flags = SA_SIGINFO | flags;
  sigemptyset(&sa.sa_mask);
  CHECK_OK(sigaction(sig, &sa, NULL));
}

static void set_disposition(int sig, void (*handler)(int)) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = handler;
  CHECK_OK(sigaction(sig, &sa, NULL));
}

static volatile sig_atomic_t got_count;

// --- faults ---

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

static void arm_faults(void) {
  fault_sig = fault_code = 0;
  fault_addr = NULL;
  set_handler(SIGSEGV, fault_handler, 0);
  set_handler(SIGBUS, fault_handler, 0);
  set_handler(SIGFPE, fault_handler, 0);
  set_handler(SIGILL, fault_handler, 0);
}

static void disarm_faults(void) {
  set_disposition(SIGSEGV, SIG_DFL);
  set_disposition(SIGBUS, SIG_DFL);
  set_disposition(SIGFPE, SIG_DFL);
  set_disposition(SIGILL, SIG_DFL);
}

// A function whose first instruction is ud2, so its address is the address
// of the faulting instruction. conf_ud2_ret42 sets eax=1, traps, returns.
extern char conf_ud2_insn[];
extern char conf_ud2_ret42[];
extern char conf_ud2_ret42_trap[];
__asm__(
    ".text\n"
    ".globl conf_ud2_insn\n"
    "conf_ud2_insn:\n"
    "  ud2\n"
    "  ret\n"
    ".globl conf_ud2_ret42\n"
    ".globl conf_ud2_ret42_trap\n"
    "conf_ud2_ret42:\n"
    "  mov $1, %eax\n"
    "conf_ud2_ret42_trap:\n"
    "  ud2\n"
    "  ret\n");

TEST(segv_accerr_on_readonly_write) {
  char *page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(page != MAP_FAILED);
  arm_faults();
  if (sigsetjmp(fault_jmp, 1) == 0) {
    ((volatile char *)page)[123] = 1;
    CHECK(!"write to a PROT_READ page did not fault");
  }
  CHECK_EQ(fault_sig, SIGSEGV);
  CHECK_EQ(fault_code, SEGV_ACCERR);
  CHECK(fault_addr == page + 123);
  // Reading it is fine.
  CHECK_EQ(((volatile char *)page)[123], 0);
  // siglongjmp(…, savemask=1) restored the mask: SIGSEGV is not blocked.
  sigset_t m;
  CHECK_OK(sigprocmask(SIG_BLOCK, NULL, &m));
  CHECK(!sigismember(&m, SIGSEGV));
  disarm_faults();
  CHECK_OK(munmap(page, 4096));
}

TEST(segv_maperr_on_unmapped) {
  char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(page != MAP_FAILED);
  CHECK_OK(munmap(page, 4096));
  arm_faults();
  if (sigsetjmp(fault_jmp, 1) == 0) {
    (void)((volatile char *)page)[7];
    CHECK(!"read of an unmapped page did not fault");
  }
  CHECK_EQ(fault_sig, SIGSEGV);
  CHECK_EQ(fault_code, SEGV_MAPERR);
  CHECK(fault_addr == page + 7);
  disarm_faults();
}

TEST(sigfpe_intdiv) {
  volatile int a = 1, b = 0, r = 0;
  arm_faults();
  if (sigsetjmp(fault_jmp, 1) == 0) {
    r = a / b;
    CHECK(!"division by zero did not trap");
  }
  CHECK_EQ(fault_sig, SIGFPE);
  CHECK_EQ(fault_code, FPE_INTDIV);
  // INT_MIN / -1 overflows idiv, which x86 reports as the same #DE.
  volatile int m = INT_MIN, n = -1;
  fault_sig = 0;
  if (sigsetjmp(fault_jmp, 1) == 0) {
    r = m / n;
    CHECK(!"INT_MIN / -1 did not trap");
  }
  CHECK_EQ(fault_sig, SIGFPE);
  CHECK_EQ(fault_code, FPE_INTDIV);
  (void)r;
  disarm_faults();
}

TEST(sigill_ud2) {
  arm_faults();
  if (sigsetjmp(fault_jmp, 1) == 0) {
    ((void (*)(void))(void *)conf_ud2_insn)();
    CHECK(!"ud2 did not trap");
  }
  CHECK_EQ(fault_sig, SIGILL);
  CHECK_EQ(fault_code, ILL_ILLOPN);
  CHECK(fault_addr == (void *)conf_ud2_insn);
  disarm_faults();
}

static void skip_ud2_handler(int sig, siginfo_t *si, void *ucv) {
  (void)sig;
  (void)si;
  // Edit the saved context: rt_sigreturn must resume with our registers.
  ucontext_t *uc = (ucontext_t *)ucv;
  uc->uc_mcontext.gregs[REG_RIP] += 2;  // ud2 is two bytes.
  uc->uc_mcontext.gregs[REG_RAX] = 42;
  got_count++;
}

TEST(handler_edits_ucontext) {
  got_count = 0;
  set_handler(SIGILL, skip_ud2_handler, 0);
  int r = ((int (*)(void))(void *)conf_ud2_ret42)();
  CHECK_EQ(got_count, 1);
  CHECK_EQ(r, 42);
  set_disposition(SIGILL, SIG_DFL);
}

TEST(sigbus_past_end_of_file) {
  // Pages of a file mapping that lie wholly beyond EOF raise SIGBUS.
  int fd = open("/etc/passwd", O_RDONLY);
  CHECK(fd >= 0);
  struct stat st;
  CHECK_OK(fstat(fd, &st));
  CHECK(st.st_size > 0);
  size_t file_pages = ((size_t)st.st_size + PAGE - 1) / PAGE;
  size_t len = (file_pages + 1) * PAGE;
  char *p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
  CHECK(p != MAP_FAILED);
  CHECK_OK(close(fd));
  arm_faults();
  // Inside the file, and the zero-filled tail of its last page: fine.
  CHECK(p[0] != 0);
  if (st.st_size % PAGE != 0) CHECK_EQ(p[st.st_size], 0);
  char *beyond = p + file_pages * PAGE + 8;
  if (sigsetjmp(fault_jmp, 1) == 0) {
    (void)*(volatile char *)beyond;
    CHECK(!"reading past the end of the file did not fault");
  }
  CHECK_EQ(fault_sig, SIGBUS);
  CHECK_EQ(fault_code, BUS_ADRERR);
  CHECK(fault_addr == beyond);
  disarm_faults();
  CHECK_OK(munmap(p, len));
}

// int3 traps after the instruction: the saved rip points past it.
extern char conf_int3_insn[];
extern char conf_int3_after[];
__asm__(
    ".text\n"
    ".globl conf_int3_insn\n"
    ".globl conf_int3_after\n"
    "conf_int3_insn:\n"
    "  int3\n"
    "conf_int3_after:\n"
    "  ret\n");

static volatile int trap_code;
static volatile uintptr_t trap_rip;

static void trap_handler(int sig, siginfo_t *si, void *ucv) {
  (void)sig;
  ucontext_t *uc = (ucontext_t *)ucv;
  trap_code = si->si_code;
  trap_rip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
  got_count++;
}

TEST(sigtrap_int3) {
  got_count = 0;
  set_handler(SIGTRAP, trap_handler, 0);
  ((void (*)(void))(void *)conf_int3_insn)();  // Returns after the handler.
  CHECK_EQ(got_count, 1);
  CHECK_EQ(trap_code, SI_KERNEL);
  CHECK_EQ(trap_rip, (uintptr_t)conf_int3_after);
  set_disposition(SIGTRAP, SIG_DFL);
}

TEST(blocked_or_ignored_fault_kills) {
  // A fault whose signal is blocked or ignored cannot be held back or
  // skipped: the kernel resets it to the default action and the process
  // dies, without running the handler.
  for (int mode = 0; mode < 2; mode++) {
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
      if (mode == 0) {
        set_handler(SIGSEGV, fault_handler, 0);
        sigset_t segv;
        sigemptyset(&segv);
        sigaddset(&segv, SIGSEGV);
        CHECK_OK(sigprocmask(SIG_BLOCK, &segv, NULL));
      } else {
        set_disposition(SIGSEGV, SIG_IGN);
      }
      volatile int *volatile bad = (volatile int *)8;  // Unmapped.
      *bad = 1;
      _exit(0);
    }
    CHECK_KILLED(pid, SIGSEGV);
  }
}

// --- sigaltstack ---

static char *volatile altstack_local;
static volatile int altstack_flags;
static volatile int altstack_eperm;

static void altstack_handler(int sig, siginfo_t *si, void *uc) {
  (void)sig;
  (void)si;
  (void)uc;
  char local = 0;
  altstack_local = &local;
  stack_t cur;
  sigaltstack(NULL, &cur);
  altstack_flags = cur.ss_flags;
  // The alternate stack cannot be changed while running on it.
  stack_t other = cur;
  other.ss_flags = 0;
  altstack_eperm = sigaltstack(&other, NULL) == -1 && errno == EPERM;
}

TEST(sigaltstack_onstack) {
  const size_t size = 64 * 1024;
  char *mem = mmap(NULL, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(mem != MAP_FAILED);
  stack_t ss = {.ss_sp = mem, .ss_flags = 0, .ss_size = size};
  stack_t old;
  CHECK_OK(sigaltstack(&ss, &old));
  stack_t cur;
  CHECK_OK(sigaltstack(NULL, &cur));
  CHECK(cur.ss_sp == mem);
  CHECK_EQ(cur.ss_size, size);
  CHECK_EQ(cur.ss_flags, 0);

  set_handler(SIGUSR1, altstack_handler, SA_ONSTACK);
  CHECK_OK(kill(getpid(), SIGUSR1));
  CHECK(altstack_local >= mem && altstack_local < mem + size);
  CHECK(altstack_flags & SS_ONSTACK);
  CHECK(altstack_eperm);

  // Without SA_ONSTACK the handler stays on the normal stack.
  set_handler(SIGUSR1, altstack_handler, 0);
  CHECK_OK(kill(getpid(), SIGUSR1));
  CHECK(altstack_local < mem || altstack_local >= mem + size);
  CHECK_EQ(altstack_flags & SS_ONSTACK, 0);

  stack_t tiny = {.ss_sp = mem, .ss_flags = 0, .ss_size = 1024};
  CHECK_ERRNO(sigaltstack(&tiny, NULL), ENOMEM);
  stack_t bad = {.ss_sp = mem, .ss_flags = 0x1234, .ss_size = size};
  CHECK_ERRNO(sigaltstack(&bad, NULL), EINVAL);
  stack_t off = {.ss_sp = NULL, .ss_flags = SS_DISABLE, .ss_size = 0};
  CHECK_OK(sigaltstack(&off, NULL));
  CHECK_OK(sigaltstack(NULL, &cur));
  CHECK(cur.ss_flags & SS_DISABLE);

  CHECK_OK(sigaltstack(&old, NULL));
  set_disposition(SIGUSR1, SIG_DFL);
  CHECK_OK(munmap(mem, size));
}

// --- stack overflow on the alternate stack ---

static sigjmp_buf overflow_jmp;
static char *volatile overflow_handler_sp;

static void overflow_handler(int sig, siginfo_t *si, void *uc) {
  (void)sig;
  (void)si;
  (void)uc;
  char local = 0;
  overflow_handler_sp = &local;
  siglongjmp(overflow_jmp, 1);
}

static int recurse(int n) {
  volatile char frame[1024];
  frame[0] = (char)n;
  if (n > 10 * 1000 * 1000) return 0;  // Never: the stack runs out first.
  return recurse(n + 1) + frame[0];
}

static void *overflow_thread(void *arg) {
  char *alt = (char *)arg;
  // sigaltstack is per thread.
  stack_t ss = {.ss_sp = alt, .ss_flags = 0, .ss_size = 64 * 1024};
  CHECK_OK(sigaltstack(&ss, NULL));
  if (sigsetjmp(overflow_jmp, 1) == 0) {
    recurse(0);
    CHECK(!"infinite recursion returned");
  }
  stack_t off = {.ss_sp = NULL, .ss_flags = SS_DISABLE, .ss_size = 0};
  CHECK_OK(sigaltstack(&off, NULL));
  return NULL;
}

TEST(stack_overflow_handled_on_altstack) {
  char *alt = mmap(NULL, 64 * 1024, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(alt != MAP_FAILED);
  set_handler(SIGSEGV, overflow_handler, SA_ONSTACK);
  // A small thread stack with glibc's guard page below it.
  pthread_attr_t attr;
  CHECK_EQ(pthread_attr_init(&attr), 0);
  CHECK_EQ(pthread_attr_setstacksize(&attr, 256 * 1024), 0);
  overflow_handler_sp = NULL;
  pthread_t t;
  CHECK_EQ(pthread_create(&t, &attr, overflow_thread, alt), 0);
  CHECK_EQ(pthread_join(t, NULL), 0);
  CHECK(overflow_handler_sp >= alt && overflow_handler_sp < alt + 64 * 1024);
  set_disposition(SIGSEGV, SIG_DFL);
  CHECK_EQ(pthread_attr_destroy(&attr), 0);
  CHECK_OK(munmap(alt, 64 * 1024));
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  RUN(segv_accerr_on_readonly_write);
  RUN(segv_maperr_on_unmapped);
  RUN(sigfpe_intdiv);
  RUN(sigill_ud2);
  RUN(sigbus_past_end_of_file);
  RUN(sigtrap_int3);
  RUN(blocked_or_ignored_fault_kills);
  RUN(handler_edits_ucontext);
  RUN(sigaltstack_onstack);
  RUN(stack_overflow_handled_on_altstack);
  PASS("signal_faults");
  return 0;
}
