// syscall_fuzz: makes many raw system calls with random numbers and arguments, and checks that
// the process still works afterwards. Under the sandbox it checks that no guest syscall can crash,
// hang or corrupt the Sentry; natively it must run to completion and be harmless.
//
//   syscall_fuzz [-s SEED] [-n COUNT] [-d SECONDS] [-c] [-t TIMEOUT_SECONDS] [-v]
//
// -d fuzzes for SECONDS instead of COUNT calls. -c adds churn beside the fuzz loop (threads,
// signals during syscalls, fds passed to and from another process with SCM_RIGHTS, mmap churn
// with its contents checked: syscall_fuzz_churn.c).
//
// Prints `done COUNT syscalls` and `sane`, then `syscall_fuzz: child exited with status 0`, and
// exits 0. The fuzzing runs in a forked child so that a crash or hang of it is reported clearly
// (with the syscall it was in) by the parent, which exits 1 then. -v logs every call.
//
// Native runs happen as root on a shared machine, so the syscall set is an ALLOWLIST: numbers are
// drawn uniformly from 0..460 and a number not in the table below is drawn again. A listed call
// gets arguments from typed generators that keep it harmless to the host and to the fuzzer:
//
// - Files: opened read-only only (O_CREAT/O_TRUNC/O_TMPFILE/write modes masked out); nothing
//   that changes a file, its metadata, a mount, the clock, a module, a key, SysV IPC, the network
//   configuration or another process is listed (nor io_uring, aio, bpf, perf_event_open,
//   userfaultfd, fanotify, which act later or elsewhere). Writes go only to /dev/null or to the
//   fuzzer's own pipe, socketpair and eventfd (WFD). Sockets are AF_UNIX only, bound to abstract
//   names.
// - Signals: sent with a non-zero number only to the fuzzer itself, and only numbers it ignores;
//   to anything else (0, -1, other pids, pidfds) only signal 0. rt_sigaction can only install
//   SIG_IGN. sigaltstack only queries.
// - Memory: mm calls (mmap MAP_FIXED, munmap, mprotect, mremap, madvise, mlock, ...) get ranges
//   inside a region R the fuzzer reserved, flanked by guard mappings; mappings that the kernel
//   placed elsewhere are unmapped at once. brk never goes below the heap top seen at start.
// - Blocking: every fd the fuzzer can name is non-blocking (new ones are made so at once),
//   timeouts are zero, tiny or invalid, never NULL (infinite); wait calls get WNOHANG; sleeps
//   use clocks that advance while the process sleeps.
// - Own process: exit*, execve*/clone* (only with arguments that must fail), rt_sigreturn,
//   set_tid_address, set_robust_list, rseq, seccomp, ptrace, setrlimit, arch_prctl SET_*,
//   prctl setters other than a harmless few, unshare/setns are never made.
// - The kernel writes only through pointers into an 8 KiB scratch area with guard pages on both
//   sides (or into R, or unmapped addresses). The scratch area is refreshed from a template
//   before every call, so a pointer the kernel stored in it (e.g. ARCH_GET_FS) is never fed back.
// - fds: stdin/stdout/stderr are /dev/null during the fuzzing; the real stdout is kept at fd 900
//   (or 100), which no generator yields. close/dup2 targets (CFD) are only fds that fuzzed calls
//   created.
//
// Numbers 337..423 and the x86-64 slots of removed syscalls are called with fully random
// arguments (and drawn less often): they are unassigned and must return ENOSYS. 335 (uretprobe)
// and 336 (uprobe) are not listed: called from anywhere but a uprobe trampoline, they kill the
// caller.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "syscall_fuzz_churn.h"

#if !defined(__x86_64__)
#error "the syscall table below is x86-64's"
#endif

#define kMaxNr 460
#define kPage 4096ul
#define kScratchSize (2 * kPage)
#define kRSize (16ul << 20)
#define kSavedStdoutMin 900
#define kJunkMax 32

// ---- random numbers (splitmix64, deterministic for a seed) ----

static uint64_t rng_state;

static uint64_t Next(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static uint64_t Below(uint64_t n) { return Next() % n; }
static int Percent(int p) { return (int)Below(100) < p; }
#define PICK(arr) ((arr)[Below(sizeof(arr) / sizeof((arr)[0]))])

// ---- state set up by the child before fuzzing ----

static uint8_t* scratch;  // kScratchSize bytes, guard pages on both sides
static uint8_t template_buf[kScratchSize];
static uint64_t template_sum;
static uintptr_t r_start, r_end;  // region R for mm calls
static uint64_t heap_top;         // brk at start
static pid_t self_pid;
static int saved_stdout = -1;
static int verbose;
static int churn;          // -c
static unsigned duration;  // -d, seconds; 0: run COUNT calls

enum {
  P_DEVNULL_R,
  P_DEVNULL_W,
  P_ZERO,
  P_ROOTDIR,
  P_FILE,
  P_PIPE_R,
  P_PIPE_W,
  P_STREAM0,
  P_STREAM1,
  P_DGRAM0,
  P_DGRAM1,
  P_LISTENER,
  P_EVENTFD,
  P_EPOLL,
  P_TIMERFD,
  P_SIGNALFD,
  P_INOTIFY,
  P_COUNT
};
static int pool[P_COUNT];
static int junk[kJunkMax];
static int junk_count, junk_next;

// Shared with the parent so that it can name the call a crashed or hung child was in.
struct Progress {
  volatile long iteration;
  volatile long nr;
  volatile uint64_t args[6];
  volatile int in_fuzz_loop;
};
static struct Progress* progress;

// Fixed slots at the start of the scratch area: structures the generators point to. They are
// built in the template, so every call sees them fresh.
enum {
  SL_TS_ZERO = 0x000,     // struct timespec {0, 0}
  SL_TS_TINY = 0x010,     // {0, 1000}
  SL_TS_INVALID = 0x020,  // {0, -1}
  SL_ITIMER = 0x030,      // itimerval/itimerspec {interval 0, value 1 us/ns}
  SL_SUN = 0x050,         // 4 x sockaddr_un, abstract names, 0x30 each
  SL_SIN = 0x110,         // sockaddr_in 127.0.0.1:1 (wrong family for our sockets)
  SL_IOV = 0x120,         // 4 x struct iovec into the second page
  SL_MSG = 0x160,         // struct msghdr
  SL_SIGACT = 0x1a0,      // kernel sigaction with SIG_IGN
  SL_HOW = 0x1c0,         // struct open_how, flags set per call
  SL_SIGEV = 0x1e0,       // struct sigevent, 64 bytes
  SL_FDOUT = 0x220,       // int[2] for pipe/socketpair
  SL_POLL = 0x230,        // struct pollfd[8] over pool fds
  SL_FIXED_END = 0x400
};
#define kSunLen 0x30

static uint64_t ScratchAt(uint64_t off) { return (uint64_t)(uintptr_t)(scratch + off); }

// ---- value generators ----

static uint64_t BadPtr(void) {
  static const uint64_t kBad[] = {0, 0x10, 0xdead0000000ull, 0xffffffff81000000ull,
                                  0x800000000000ull};
  return PICK(kBad);
}

static uint64_t ScratchPtr(void) {
  switch (Below(6)) {
    case 0: return ScratchAt(0);
    case 1: return ScratchAt(kPage);
    case 2: return ScratchAt(kScratchSize - 8);
    case 3: return ScratchAt(kScratchSize - 1 - Below(16));
    case 4: return ScratchAt(SL_FIXED_END + 8 * Below((kScratchSize - SL_FIXED_END) / 8));
    default: return ScratchAt(8 * Below(kScratchSize / 8));
  }
}

static uint64_t RPtr(void) { return r_start + kPage * Below(kRSize / kPage); }

// Any value: for arguments where every value is harmless (pointers only reach scratch or R).
static uint64_t AnyValue(void) {
  switch (Below(17)) {
    case 0: return 0;
    case 1: return 1;
    case 2: return Below(65);
    case 3: return (uint64_t)(-(int64_t)(1 + Below(64)));
    case 4: return 4096;
    case 5: return 0x7fffffff;
    case 6: return 0xffffffff;
    case 7: return 0x7fffffffffffffffull;
    case 8: return ~0ull;
    case 9: return 1ull << 40;
    case 10:
    case 11: return BadPtr();
    case 12: return RPtr();
    case 13:
    case 14: return ScratchPtr();
    default: return Next();
  }
}

static uint64_t IntValue(void) {
  switch (Below(10)) {
    case 0: return 0;
    case 1: return 1;
    case 2: return 2;
    case 3: return Below(65);
    case 4: return (uint64_t)-1;
    case 5: return 1ull << Below(32);
    case 6: return Next() & 0xffffffff;
    case 7: return 0x7fffffff;
    default: return Below(8);
  }
}

static uint64_t LenValue(void) {
  static const uint64_t kLens[] = {0,    1,    7,     8,          16,    64,         100,
                                   4096, 8192, 65536, 1ull << 40, ~0ull, 0x7fffffff, 0x80000000};
  return Percent(30) ? Below(4097) : PICK(kLens);
}

static uint64_t BufValue(void) {
  if (Percent(75)) return ScratchPtr();
  return Percent(50) ? BadPtr() : RPtr();
}

static int InPool(int fd) {
  for (int i = 0; i < P_COUNT; i++)
    if (pool[i] == fd) return 1;
  return 0;
}

static uint64_t FdValue(void) {
  static const int64_t kBadFds[] = {1000, 5000, 65536, 0x7fffffff, -2};
  switch (Below(20)) {
    case 0:
    case 1:
    case 2:
    case 3:
    case 4:
    case 5:
    case 6:
    case 7:
    case 8: return (uint64_t)(int64_t)pool[Below(P_COUNT)];
    case 9:
    case 10:
    case 11:
      if (junk_count > 0) return (uint64_t)(int64_t)junk[Below(junk_count)];
      return (uint64_t)(int64_t)pool[Below(P_COUNT)];
    case 12: return 0;
    case 13: return (uint64_t)-1;
    case 14: return (uint64_t)(int64_t)AT_FDCWD;
    case 15:
    case 16: return 3 + Below(61);
    default: return (uint64_t)PICK(kBadFds);
  }
}

// fds that may be written to: none reaches a host file.
static uint64_t WfdValue(void) {
  static const int kW[] = {P_DEVNULL_W, P_DEVNULL_W, P_DEVNULL_W, P_PIPE_W,
                           P_STREAM0,   P_STREAM1,   P_DGRAM0,    P_EVENTFD};
  if (Percent(10)) return Percent(50) ? (uint64_t)-1 : 5000;
  return (uint64_t)(int64_t)pool[PICK(kW)];
}

// fds that may be closed or overwritten: only ones that fuzzed calls created.
static uint64_t CfdValue(void) {
  static const int64_t kBadFds[] = {-1, 5000, 65536, 0x7fffffff};
  if (junk_count > 0 && Percent(70)) return (uint64_t)(int64_t)junk[Below(junk_count)];
  return (uint64_t)PICK(kBadFds);
}

static char long_name[5000];
static char deep_path[4400];
static const char* const kPaths[] = {"/",
                                     "/etc",
                                     "/etc/passwd",
                                     "/etc/hostname",
                                     "/dev/null",
                                     "/dev/zero",
                                     "/dev/urandom",
                                     "/nonexistent",
                                     "/nonexistent/x",
                                     "",
                                     ".",
                                     "..",
                                     "../../../../../../etc/passwd",
                                     "/etc/passwd/",
                                     "/etc/../etc/./passwd",
                                     "/bin/sh",
                                     "/usr/bin",
                                     "/usr/lib",
                                     "/lib64",
                                     "/lib64/ld-linux-x86-64.so.2",
                                     "//etc//passwd",
                                     "etc",
                                     long_name,
                                     deep_path};

static uint64_t PathValue(void) {
  if (Percent(85)) return (uint64_t)(uintptr_t)PICK(kPaths);
  return Percent(50) ? ScratchPtr() : BadPtr();
}

static uint64_t XattrNameValue(void) {
  static const char* const kNames[] = {"user.x",
                                       "security.capability",
                                       "security.selinux",
                                       "trusted.overlay.opaque",
                                       "system.posix_acl_access",
                                       "",
                                       "nonamespace"};
  if (Percent(85)) return (uint64_t)(uintptr_t)PICK(kNames);
  return Percent(50) ? ScratchPtr() : BadPtr();
}

// Paths that execve must refuse: missing, not executable, not regular.
static uint64_t ExecPathValue(void) {
  static const char* const kExec[] = {"/nonexistent", "", "/", "/etc", "/etc/passwd", "/dev/null"};
  if (Percent(80)) return (uint64_t)(uintptr_t)PICK(kExec);
  return BadPtr();
}

// Read-only open flags: access mode O_RDONLY; no O_CREAT, O_TRUNC, O_TMPFILE, O_ASYNC.
static uint64_t OpenFlagsValue(void) {
  const uint64_t kAllowed = O_NONBLOCK | O_CLOEXEC | O_DIRECTORY | O_NOFOLLOW | O_NOATIME | O_PATH |
                            O_LARGEFILE | O_NOCTTY | O_SYNC | O_DSYNC | O_DIRECT | O_APPEND |
                            O_EXCL;
  uint64_t f = Next() & kAllowed;
  if (Percent(50)) f &= O_CLOEXEC | O_DIRECTORY | O_NOFOLLOW | O_PATH | O_NONBLOCK;
  return f;
}

static uint64_t TimeoutValue(void) {
  switch (Below(8)) {
    case 0:
    case 1:
    case 2: return ScratchAt(SL_TS_ZERO);
    case 3:
    case 4: return ScratchAt(SL_TS_TINY);
    case 5:
    case 6: return ScratchAt(SL_TS_INVALID);
    default: return BadPtr() | 1;  // never NULL: NULL means "wait forever"
  }
}

static uint64_t PidValue(void) {
  static const int64_t kPids[] = {0, 1, -1, 2, 999999999, -12345};
  if (Percent(40)) return (uint64_t)self_pid;
  if (Percent(30)) return 1 + Below(32768);
  return (uint64_t)PICK(kPids);
}

static uint64_t SelfValue(void) { return Percent(50) ? 0 : (uint64_t)self_pid; }

static uint64_t IovValue(void) {
  if (Percent(70)) return ScratchAt(SL_IOV);
  return Percent(50) ? ScratchPtr() : BadPtr();
}

static uint64_t MsgValue(void) {
  if (Percent(70)) return ScratchAt(SL_MSG);
  return Percent(50) ? ScratchPtr() : BadPtr();
}

static uint64_t SockaddrValue(void) {
  switch (Below(9)) {
    case 0:
    case 1:
    case 2:
    case 3: return ScratchAt(SL_SUN + kSunLen * Below(4));
    case 4: return ScratchAt(SL_SIN);
    case 5:
    case 6: return 0;
    default: return BadPtr();
  }
}

static uint64_t SocklenValue(void) {
  static const uint64_t kLens[] = {0, 2, 3, 16, 28, sizeof(struct sockaddr_un), 1000, (uint64_t)-1};
  if (Percent(50)) return 2 + 1 + 16;  // family + "\0sentry-fuzz-N..." prefix
  return PICK(kLens);
}

static uint64_t FdOutValue(void) { return Percent(85) ? ScratchAt(SL_FDOUT) : BadPtr(); }

// Signals the fuzzer ignores (see IgnoreSignals); only these are ever sent to itself.
static const int kSafeSigs[] = {0,       SIGCHLD, SIGURG,  SIGWINCH, SIGPIPE,   SIGALRM,
                                SIGUSR1, SIGUSR2, SIGIO,   SIGPROF,  SIGVTALRM, SIGXFSZ,
                                SIGHUP,  SIGTTIN, SIGTTOU, SIGTSTP};
static uint64_t SafeSig(void) { return (uint64_t)PICK(kSafeSigs); }

// ---- the syscall table ----

enum Kind {
  Z,
  ANY,
  INT,
  LEN,
  BUF,
  FD,
  WFD,
  CFD,
  PATH,
  XNAME,
  OFLAGS,
  TMO,
  PID,
  SELF,
  IOV,
  MSG,
  SADDR,
  SLEN,
  FDOUT,
  EPATH,
  EPFD,
  SIGSZ
};
enum { F_RAW = 1, F_RETFD = 2, F_PAIR0 = 4, F_PAIR3 = 8, F_SPECIAL = 16 };

struct Entry {
  const char* name;
  uint8_t flags;
  uint8_t k[6];
};

#define S F_SPECIAL
static struct Entry table[kMaxNr + 1] = {
    [0] = {"read", 0, {FD, BUF, LEN}},
    [1] = {"write", 0, {WFD, BUF, LEN}},
    [2] = {"open", F_RETFD, {PATH, OFLAGS, INT}},
    [3] = {"close", 0, {CFD}},
    [4] = {"stat", 0, {PATH, BUF}},
    [5] = {"fstat", 0, {FD, BUF}},
    [6] = {"lstat", 0, {PATH, BUF}},
    [7] = {"poll", S, {BUF, INT, Z}},
    [8] = {"lseek", 0, {FD, ANY, INT}},
    [9] = {"mmap", S, {0}},
    [10] = {"mprotect", S, {0}},
    [11] = {"munmap", S, {0}},
    [12] = {"brk", S, {0}},
    [13] = {"rt_sigaction", S, {0}},
    [14] = {"rt_sigprocmask", 0, {INT, BUF, BUF, SIGSZ}},
    [16] = {"ioctl", S, {FD, Z, ANY}},
    [17] = {"pread64", 0, {FD, BUF, LEN, ANY}},
    [18] = {"pwrite64", 0, {WFD, BUF, LEN, ANY}},
    [19] = {"readv", 0, {FD, IOV, INT}},
    [20] = {"writev", 0, {WFD, IOV, INT}},
    [21] = {"access", 0, {PATH, INT}},
    [22] = {"pipe", F_PAIR0, {FDOUT}},
    [23] = {"select", 0, {INT, BUF, BUF, BUF, TMO}},
    [24] = {"sched_yield", 0, {0}},
    [25] = {"mremap", S, {0}},
    [26] = {"msync", S, {0}},
    [27] = {"mincore", 0, {ANY, LEN, BUF}},
    [28] = {"madvise", S, {0}},
    [32] = {"dup", F_RETFD, {FD}},
    [33] = {"dup2", F_RETFD, {FD, CFD}},
    [35] = {"nanosleep", 0, {TMO, BUF}},
    [36] = {"getitimer", 0, {INT, BUF}},
    [37] = {"alarm", 0, {INT}},
    [38] = {"setitimer", S, {0}},
    [39] = {"getpid", 0, {0}},
    [40] = {"sendfile", S, {0}},
    [41] = {"socket", S | F_RETFD, {0}},
    [42] = {"connect", 0, {FD, SADDR, SLEN}},
    [43] = {"accept", F_RETFD, {FD, BUF, BUF}},
    [44] = {"sendto", 0, {FD, BUF, LEN, INT, SADDR, SLEN}},
    [45] = {"recvfrom", 0, {FD, BUF, LEN, INT, BUF, BUF}},
    [46] = {"sendmsg", 0, {FD, MSG, INT}},
    [47] = {"recvmsg", 0, {FD, MSG, INT}},
    [48] = {"shutdown", 0, {FD, INT}},
    [49] = {"bind", 0, {FD, SADDR, SLEN}},
    [50] = {"listen", 0, {FD, INT}},
    [51] = {"getsockname", 0, {FD, BUF, BUF}},
    [52] = {"getpeername", 0, {FD, BUF, BUF}},
    [53] = {"socketpair", S | F_PAIR3, {0}},
    [54] = {"setsockopt", 0, {FD, INT, INT, BUF, LEN}},
    [55] = {"getsockopt", 0, {FD, INT, INT, BUF, BUF}},
    [56] = {"clone", S, {0}},
    [59] = {"execve", 0, {EPATH, ANY, ANY}},
    [61] = {"wait4", S, {PID, BUF, INT, BUF}},
    [62] = {"kill", S, {0}},
    [63] = {"uname", 0, {BUF}},
    [72] = {"fcntl", S, {0}},
    [74] = {"fsync", 0, {FD}},
    [75] = {"fdatasync", 0, {FD}},
    [77] = {"ftruncate", 0, {WFD, ANY}},
    [78] = {"getdents", 0, {FD, BUF, LEN}},
    [79] = {"getcwd", 0, {BUF, LEN}},
    [80] = {"chdir", 0, {PATH}},
    [81] = {"fchdir", 0, {FD}},
    [89] = {"readlink", 0, {PATH, BUF, LEN}},
    [95] = {"umask", 0, {INT}},
    [96] = {"gettimeofday", 0, {BUF, BUF}},
    [97] = {"getrlimit", 0, {INT, BUF}},
    [98] = {"getrusage", 0, {INT, BUF}},
    [99] = {"sysinfo", 0, {BUF}},
    [100] = {"times", 0, {BUF}},
    [102] = {"getuid", 0, {0}},
    [103] = {"syslog", S, {0}},
    [104] = {"getgid", 0, {0}},
    [105] = {"setuid", 0, {INT}},
    [106] = {"setgid", 0, {INT}},
    [107] = {"geteuid", 0, {0}},
    [108] = {"getegid", 0, {0}},
    [109] = {"setpgid", S, {0}},
    [110] = {"getppid", 0, {0}},
    [111] = {"getpgrp", 0, {0}},
    [112] = {"setsid", 0, {0}},
    [113] = {"setreuid", 0, {INT, INT}},
    [114] = {"setregid", 0, {INT, INT}},
    [115] = {"getgroups", 0, {INT, BUF}},
    [116] = {"setgroups", 0, {INT, BUF}},
    [117] = {"setresuid", 0, {INT, INT, INT}},
    [118] = {"getresuid", 0, {BUF, BUF, BUF}},
    [119] = {"setresgid", 0, {INT, INT, INT}},
    [120] = {"getresgid", 0, {BUF, BUF, BUF}},
    [121] = {"getpgid", 0, {PID}},
    [122] = {"setfsuid", 0, {INT}},
    [123] = {"setfsgid", 0, {INT}},
    [124] = {"getsid", 0, {PID}},
    [125] = {"capget", 0, {BUF, BUF}},
    [126] = {"capset", 0, {BUF, BUF}},
    [127] = {"rt_sigpending", 0, {BUF, SIGSZ}},
    [128] = {"rt_sigtimedwait", 0, {BUF, BUF, TMO, SIGSZ}},
    [129] = {"rt_sigqueueinfo", S, {0}},
    [131] = {"sigaltstack", S, {0}},
    [135] = {"personality", S, {0}},
    [136] = {"ustat", 0, {INT, BUF}},
    [137] = {"statfs", 0, {PATH, BUF}},
    [138] = {"fstatfs", 0, {FD, BUF}},
    [139] = {"sysfs", 0, {INT, ANY, BUF}},
    [140] = {"getpriority", 0, {INT, PID}},
    [143] = {"sched_getparam", 0, {PID, BUF}},
    [145] = {"sched_getscheduler", 0, {PID}},
    [146] = {"sched_get_priority_max", 0, {INT}},
    [147] = {"sched_get_priority_min", 0, {INT}},
    [148] = {"sched_rr_get_interval", 0, {PID, BUF}},
    [149] = {"mlock", S, {0}},
    [150] = {"munlock", S, {0}},
    [152] = {"munlockall", 0, {0}},
    [154] = {"modify_ldt", S, {0}},
    [157] = {"prctl", S, {0}},
    [158] = {"arch_prctl", S, {0}},
    [186] = {"gettid", 0, {0}},
    [187] = {"readahead", 0, {FD, ANY, LEN}},
    [191] = {"getxattr", 0, {PATH, XNAME, BUF, LEN}},
    [192] = {"lgetxattr", 0, {PATH, XNAME, BUF, LEN}},
    [193] = {"fgetxattr", 0, {FD, XNAME, BUF, LEN}},
    [194] = {"listxattr", 0, {PATH, BUF, LEN}},
    [195] = {"llistxattr", 0, {PATH, BUF, LEN}},
    [196] = {"flistxattr", 0, {FD, BUF, LEN}},
    [200] = {"tkill", S, {0}},
    [201] = {"time", 0, {BUF}},
    [202] = {"futex", S, {0}},
    [203] = {"sched_setaffinity", 0, {SELF, LEN, BUF}},
    [204] = {"sched_getaffinity", 0, {PID, LEN, BUF}},
    [212] = {"lookup_dcookie", 0, {ANY, BUF, LEN}},
    [213] = {"epoll_create", F_RETFD, {INT}},
    [216] = {"remap_file_pages", S, {0}},
    [217] = {"getdents64", 0, {FD, BUF, LEN}},
    [219] = {"restart_syscall", 0, {0}},
    [221] = {"fadvise64", S, {FD, ANY, LEN, Z}},
    [222] = {"timer_create", S, {0}},
    [223] = {"timer_settime", S, {0}},
    [224] = {"timer_gettime", 0, {INT, BUF}},
    [225] = {"timer_getoverrun", 0, {INT}},
    [226] = {"timer_delete", 0, {INT}},
    [228] = {"clock_gettime", 0, {INT, BUF}},
    [229] = {"clock_getres", 0, {INT, BUF}},
    [230] = {"clock_nanosleep", S, {0}},
    [232] = {"epoll_wait", S, {EPFD, BUF, INT, Z}},
    [233] = {"epoll_ctl", 0, {EPFD, INT, FD, BUF}},
    [234] = {"tgkill", S, {0}},
    [237] = {"mbind", S, {0}},
    [238] = {"set_mempolicy", 0, {INT, BUF, INT}},
    [239] = {"get_mempolicy", 0, {BUF, BUF, INT, ANY, INT}},
    [247] = {"waitid", S, {INT, PID, BUF, INT, BUF}},
    [252] = {"ioprio_get", 0, {INT, PID}},
    [253] = {"inotify_init", F_RETFD, {0}},
    [254] = {"inotify_add_watch", 0, {FD, PATH, INT}},
    [255] = {"inotify_rm_watch", 0, {FD, INT}},
    [257] = {"openat", F_RETFD, {FD, PATH, OFLAGS, INT}},
    [262] = {"newfstatat", 0, {FD, PATH, BUF, INT}},
    [267] = {"readlinkat", 0, {FD, PATH, BUF, LEN}},
    [269] = {"faccessat", 0, {FD, PATH, INT, INT}},
    [270] = {"pselect6", 0, {INT, BUF, BUF, BUF, TMO, BUF}},
    [271] = {"ppoll", 0, {BUF, INT, TMO, BUF, SIGSZ}},
    [274] = {"get_robust_list", 0, {PID, BUF, BUF}},
    [275] = {"splice", S, {FD, BUF, WFD, BUF, LEN, INT}},
    [276] = {"tee", S, {FD, WFD, LEN, INT}},
    [278] = {"vmsplice", S, {FD, IOV, INT, INT}},
    [281] = {"epoll_pwait", S, {EPFD, BUF, INT, Z, BUF, SIGSZ}},
    [282] = {"signalfd", F_RETFD, {FD, BUF, SIGSZ}},
    [283] = {"timerfd_create", S | F_RETFD, {0}},
    [284] = {"eventfd", F_RETFD, {INT}},
    [286] = {"timerfd_settime", S, {FD, INT, BUF, BUF}},
    [287] = {"timerfd_gettime", 0, {FD, BUF}},
    [288] = {"accept4", S | F_RETFD, {FD, BUF, BUF, INT}},
    [289] = {"signalfd4", S | F_RETFD, {FD, BUF, SIGSZ, INT}},
    [290] = {"eventfd2", S | F_RETFD, {INT, INT}},
    [291] = {"epoll_create1", F_RETFD, {INT}},
    [292] = {"dup3", F_RETFD, {FD, CFD, INT}},
    [293] = {"pipe2", S | F_PAIR0, {FDOUT, INT}},
    [294] = {"inotify_init1", S | F_RETFD, {INT}},
    [295] = {"preadv", 0, {FD, IOV, INT, ANY, ANY}},
    [296] = {"pwritev", 0, {WFD, IOV, INT, ANY, ANY}},
    [297] = {"rt_tgsigqueueinfo", S, {0}},
    [299] = {"recvmmsg", 0, {FD, BUF, INT, INT, TMO}},
    [302] = {"prlimit64", S, {PID, INT, Z, BUF}},
    [303] = {"name_to_handle_at", 0, {FD, PATH, BUF, BUF, INT}},
    [307] = {"sendmmsg", 0, {FD, BUF, INT, INT}},
    [309] = {"getcpu", 0, {BUF, BUF, BUF}},
    [310] = {"process_vm_readv", S, {Z, IOV, INT, IOV, INT, Z}},
    [312] = {"kcmp", S, {0}},
    [315] = {"sched_getattr", 0, {PID, BUF, LEN, INT}},
    [318] = {"getrandom", S, {BUF, LEN, INT}},
    [319] = {"memfd_create", F_RETFD, {PATH, INT}},
    [322] = {"execveat", S, {FD, EPATH, ANY, ANY, INT}},
    [324] = {"membarrier", S, {0}},
    [325] = {"mlock2", S, {0}},
    [326] = {"copy_file_range", 0, {FD, BUF, WFD, BUF, LEN, INT}},
    [327] = {"preadv2", 0, {FD, IOV, INT, ANY, ANY, INT}},
    [328] = {"pwritev2", 0, {WFD, IOV, INT, ANY, ANY, INT}},
    [329] = {"pkey_mprotect", S, {0}},
    [330] = {"pkey_alloc", 0, {INT, INT}},
    [331] = {"pkey_free", S, {INT}},
    [332] = {"statx", 0, {FD, PATH, INT, INT, BUF}},
    [424] = {"pidfd_send_signal", S, {FD, Z, BUF, INT}},
    [434] = {"pidfd_open", S | F_RETFD, {0}},
    [435] = {"clone3", S, {0}},
    [436] = {"close_range", S, {0}},
    [437] = {"openat2", S | F_RETFD, {FD, PATH, Z, Z}},
    [439] = {"faccessat2", 0, {FD, PATH, INT, INT}},
    [441] = {"epoll_pwait2", 0, {EPFD, BUF, INT, TMO, BUF, SIGSZ}},
    [444] = {"landlock_create_ruleset", F_RETFD, {BUF, LEN, INT}},
    [445] = {"landlock_add_rule", 0, {FD, INT, BUF, INT}},
    [449] = {"futex_waitv", S, {BUF, INT, Z, TMO, INT}},
    [450] = {"set_mempolicy_home_node", S, {0}},
    [451] = {"cachestat", 0, {FD, BUF, BUF, INT}},
    [454] = {"futex_wake", 0, {BUF, ANY, INT, INT}},
    [455] = {"futex_wait", 0, {BUF, ANY, ANY, INT, TMO, INT}},
    [456] = {"futex_requeue", 0, {BUF, INT, INT, INT}},
    [457] = {"statmount", 0, {BUF, BUF, LEN, INT}},
    [458] = {"listmount", 0, {BUF, BUF, LEN, INT}},
    [459] = {"lsm_get_self_attr", 0, {INT, BUF, BUF, INT}},
};
#undef S

// Unassigned on x86-64 (removed long ago, or never used): ENOSYS whatever the arguments.
static const int kUnassigned[] = {174, 177, 178, 180, 181, 182, 183, 184, 185, 214, 215, 236};

static void InitTable(void) {
  for (size_t i = 0; i < sizeof(kUnassigned) / sizeof(kUnassigned[0]); i++)
    table[kUnassigned[i]] = (struct Entry){"unassigned", F_RAW, {0}};
  for (int nr = 337; nr <= 423; nr++) table[nr] = (struct Entry){"unassigned", F_RAW, {0}};
}

static uint64_t Gen(int kind) {
  switch (kind) {
    case Z: return 0;
    case ANY: return AnyValue();
    case INT: return IntValue();
    case LEN: return LenValue();
    case BUF: return BufValue();
    case FD: return FdValue();
    case WFD: return WfdValue();
    case CFD: return CfdValue();
    case PATH: return PathValue();
    case XNAME: return XattrNameValue();
    case OFLAGS: return OpenFlagsValue();
    case TMO: return TimeoutValue();
    case PID: return PidValue();
    case SELF: return SelfValue();
    case IOV: return IovValue();
    case MSG: return MsgValue();
    case SADDR: return SockaddrValue();
    case SLEN: return SocklenValue();
    case FDOUT: return FdOutValue();
    case EPATH: return ExecPathValue();
    case EPFD: return Percent(60) ? (uint64_t)(int64_t)pool[P_EPOLL] : FdValue();
    case SIGSZ: return Percent(80) ? 8 : LenValue();
  }
  return 0;
}

// ---- ranges inside R for memory-management calls ----

static int InR(uint64_t addr, uint64_t len) {
  return addr >= r_start && addr <= r_end && len <= r_end - addr;
}

static uint64_t RAddr(void) {
  switch (Below(12)) {
    case 0: return r_start + kPage * Below(kRSize / kPage) + 1 + Below(kPage - 1);  // unaligned
    case 1: {  // never mapped by us (not 0: [0, 16 MiB) holds the executable)
      static const uint64_t kFar[] = {0xdead0000000ull, 0xffffffff81000000ull, 0x800000000000ull};
      return PICK(kFar);
    }
    case 2: return r_end - kPage;
    default: return r_start + kPage * Below(kRSize / kPage);
  }
}

// A length that keeps [addr, addr+len) inside R, or ~0 (rejected before any vma is touched).
static uint64_t RLen(uint64_t addr) {
  if (Percent(5)) return ~0ull;
  uint64_t room;
  if (addr >= r_start && addr < r_end) {
    room = r_end - addr;
  } else {
    room = kRSize;  // addr is unmapped: any length up to R's size stays in unmapped space
  }
  switch (Below(5)) {
    case 0: return 0;
    case 1: return room < kPage ? room : kPage;
    case 2: return room;
    default: {
      uint64_t len = kPage * (1 + Below(64));
      if (Percent(20)) len += Below(kPage);
      return len <= room ? len : room;
    }
  }
}

static void MustNotKeep(long ret, uint64_t len, int hugetlb) {
  if (ret < 0 && ret > -4096) return;
  uint64_t addr = (uint64_t)ret;
  uint64_t rounded = (len + kPage - 1) & ~(kPage - 1);
  if (hugetlb) rounded = (len + (2ul << 20) - 1) & ~((2ul << 20) - 1);
  if (InR(addr, rounded)) return;
  syscall(SYS_munmap, addr, rounded);
}

// ---- argument fix-ups for calls that need more than independent generators ----

static void SpecialArgs(int nr, uint64_t a[6]) {
  switch (nr) {
    case 7:  // poll: never wait
      a[0] = Percent(60) ? ScratchAt(SL_POLL) : a[0];
      a[1] = Below(10);
      a[2] = 0;
      break;
    case 9: {  // mmap
      uint64_t addr;
      int in_r = 0;
      switch (Below(10)) {
        case 0:
        case 1:
        case 2:
        case 3: addr = 0; break;
        case 4: addr = BadPtr() & ~(kPage - 1); break;
        default:
          addr = RAddr();
          in_r = addr >= r_start && addr < r_end;
          break;
      }
      static const uint64_t kLens[] = {0, 1, 4096, 8192, 65536, 1ul << 20, ~0ull};
      uint64_t len = Percent(50) ? PICK(kLens) : kPage * (1 + Below(32));
      if (in_r && len != ~0ull && len > r_end - addr) len = r_end - addr;
      if (!in_r && len != ~0ull && len > (1ul << 20)) len = 1ul << 20;
      static const uint64_t kTypes[] = {MAP_PRIVATE, MAP_PRIVATE, MAP_SHARED, MAP_SHARED_VALIDATE,
                                        0};
      uint64_t flags = PICK(kTypes);
      if (Percent(60)) flags |= MAP_ANONYMOUS;
      if (Percent(20)) flags |= MAP_NORESERVE;
      if (Percent(15)) flags |= MAP_POPULATE;
      if (Percent(5)) flags |= MAP_LOCKED;
      if (Percent(5)) flags |= MAP_GROWSDOWN;
      if (Percent(5)) flags |= MAP_STACK;
      if (Percent(3)) flags |= MAP_HUGETLB;
      if (Percent(3)) flags |= MAP_32BIT;
      if (Percent(3)) flags |= MAP_SYNC;
      if (Percent(10)) flags |= MAP_FIXED_NOREPLACE;  // fails on any overlap: safe anywhere
      if (in_r && Percent(40)) flags |= MAP_FIXED;
      a[0] = addr;
      a[1] = len;
      a[2] = Below(8) | (Percent(5) ? PROT_GROWSDOWN : 0);
      a[3] = flags;
      a[4] = (flags & MAP_ANONYMOUS) && Percent(70) ? (uint64_t)-1 : FdValue();
      static const uint64_t kOffs[] = {0, 0, 4096, 8192, 123, 0x7ffffffffffff000ull};
      a[5] = PICK(kOffs);
      break;
    }
    case 10:   // mprotect
    case 329:  // pkey_mprotect
      a[0] = RAddr();
      a[1] = RLen(a[0]);
      a[2] = Below(8) | (Percent(5) ? PROT_GROWSDOWN : 0) | (Percent(3) ? 0x100 : 0);
      a[3] = Percent(50) ? (uint64_t)-1 : Below(16);
      break;
    case 11:   // munmap
    case 149:  // mlock
    case 150:  // munlock
      a[0] = RAddr();
      a[1] = RLen(a[0]);
      break;
    case 325:  // mlock2
      a[0] = RAddr();
      a[1] = RLen(a[0]);
      a[2] = Below(3);
      break;
    case 26: {  // msync
      static const uint64_t kFlags[] = {
          MS_ASYNC, MS_SYNC, MS_INVALIDATE, MS_ASYNC | MS_INVALIDATE, MS_SYNC | MS_ASYNC, 8, 0};
      a[0] = RAddr();
      a[1] = RLen(a[0]);
      a[2] = PICK(kFlags);
      break;
    }
    case 28: {  // madvise: no MADV_REMOVE, HWPOISON, SOFT_OFFLINE, MERGEABLE, COLLAPSE
      static const int64_t kAdvice[] = {0,  1,  2,  3,  4,  8,  10, 11, 14, 15, 16,
                                        17, 18, 19, 20, 21, 22, 23, 24, 77, -1};
      a[0] = RAddr();
      a[1] = RLen(a[0]);
      a[2] = (uint64_t)PICK(kAdvice);
      break;
    }
    case 12: {  // brk: never below the heap top seen at start
      static const uint64_t kLow[] = {0, 1, 0x10, 4096};
      a[0] = Percent(50) ? PICK(kLow) : heap_top + kPage * Below(16);
      break;
    }
    case 13: {  // rt_sigaction: install only SIG_IGN
      a[0] = Below(70);
      uint64_t r = Below(10);
      a[1] = r < 6 ? ScratchAt(SL_SIGACT) : r < 8 ? 0 : BadPtr() | 1;
      a[2] = Percent(70) ? BufValue() : 0;
      a[3] = Percent(85) ? 8 : IntValue();
      break;
    }
    case 16: {  // ioctl: read-only requests only (a random request could be FS_IOC_SETFLAGS...)
      static const uint64_t kCmds[] = {0x541B /*FIONREAD*/,
                                       0x5401 /*TCGETS*/,
                                       0x5413 /*TIOCGWINSZ*/,
                                       0x540F /*TIOCGPGRP*/,
                                       0x5429 /*TIOCGSID*/,
                                       0x5411 /*TIOCOUTQ*/,
                                       0x5451 /*FIOCLEX*/,
                                       0x5450 /*FIONCLEX*/,
                                       2 /*FIGETBSZ*/,
                                       0x80086601 /*FS_IOC_GETFLAGS*/,
                                       0x80087601 /*FS_IOC_GETVERSION*/,
                                       0x5460 /*FIOQSIZE*/,
                                       0x8912 /*SIOCGIFCONF*/,
                                       0x8933 /*SIOCGIFINDEX*/,
                                       0x8913 /*SIOCGIFFLAGS*/,
                                       0x80081272 /*BLKGETSIZE64*/,
                                       0x1268 /*BLKSSZGET*/,
                                       0xdeadbeef,
                                       0x7fffffff,
                                       0xffffffff};
      a[1] = PICK(kCmds);
      break;
    }
    case 25: {  // mremap
      a[0] = RAddr();
      a[1] = Percent(10) ? 0 : RLen(a[0]);
      static const uint64_t kNewLens[] = {0, 4096, 8192, 65536, 1ul << 20, ~0ull};
      a[2] = Percent(50) ? PICK(kNewLens) : kPage * (1 + Below(64));
      uint64_t flags = 0;
      if (Percent(60)) flags |= 1;  // MREMAP_MAYMOVE
      if (Percent(10)) flags |= 4;  // MREMAP_DONTUNMAP
      if (Percent(3)) flags |= 8;   // invalid
      a[4] = AnyValue();
      if ((flags & 1) && Percent(40)) {
        flags |= 2;  // MREMAP_FIXED: only to a place inside R
        a[4] = r_start + kPage * Below(kRSize / kPage);
        if (a[2] != ~0ull && a[2] > r_end - a[4]) a[2] = r_end - a[4];
      }
      a[3] = flags;
      break;
    }
    case 38:  // setitimer: one tiny shot or disarm; the signals are ignored
      a[0] = Below(4);
      a[1] = Percent(60) ? ScratchAt(SL_ITIMER) : Percent(50) ? ScratchAt(SL_TS_ZERO) : BadPtr();
      a[2] = Percent(70) ? BufValue() : 0;
      break;
    case 40: {  // sendfile: out only to /dev/null (a pipe could block it)
      a[0] = Percent(85) ? (uint64_t)(int64_t)pool[P_DEVNULL_W] : (uint64_t)-1;
      a[1] = FdValue();
      a[2] = Percent(50) ? 0 : BufValue();
      a[3] = Below(65537);
      break;
    }
    case 41:  // socket: AF_UNIX only
    case 53: {
      static const int64_t kDomains[] = {AF_UNIX, AF_UNIX, AF_UNIX, 1000, -1};
      a[0] = (uint64_t)PICK(kDomains);
      a[1] = (Below(7)) | SOCK_NONBLOCK | (Percent(30) ? SOCK_CLOEXEC : 0);
      a[2] = Percent(80) ? 0 : Below(8);
      a[3] = FdOutValue();
      break;
    }
    case 56: {  // clone: only flag sets the kernel rejects before creating anything
      static const uint64_t kBad[] = {
          0x00000800 | SIGCHLD,               // CLONE_SIGHAND without CLONE_VM
          0x00010000 | SIGCHLD,               // CLONE_THREAD without CLONE_SIGHAND
          0x00020000 | 0x200,                 // CLONE_NEWNS | CLONE_FS
          0x10000000 | 0x200,                 // CLONE_NEWUSER | CLONE_FS
          0x00001000 | 0x00100000 | SIGCHLD,  // CLONE_PIDFD | CLONE_PARENT_SETTID
      };
      a[0] = PICK(kBad);
      a[1] = AnyValue();
      a[2] = BufValue();
      a[3] = BufValue();
      a[4] = AnyValue();
      break;
    }
    case 61:  // wait4
      a[2] |= WNOHANG;
      break;
    case 247:  // waitid
      a[3] |= WNOHANG;
      break;
    case 62:  // kill: a real signal only to ourselves, and only one we ignore
      switch (Below(5)) {
        case 0:
        case 1:
          a[0] = (uint64_t)self_pid;
          a[1] = SafeSig();
          break;
        case 2:
          a[0] = 0;
          a[1] = 0;
          break;
        case 3:
          a[0] = (uint64_t)-1;
          a[1] = 0;
          break;
        default:
          a[0] = PidValue();
          a[1] = 0;
          break;
      }
      break;
    case 72: {  // fcntl: queries, dups, FD_CLOEXEC and pipe size; no F_SETFL/locks/leases/owner
      static const uint64_t kCmds[] = {F_DUPFD,
                                       F_GETFD,
                                       F_SETFD,
                                       F_GETFL,
                                       F_GETLK,
                                       F_GETOWN,
                                       F_GETSIG,
                                       16 /*F_GETOWN_EX*/,
                                       36 /*F_OFD_GETLK*/,
                                       1025 /*F_GETLEASE*/,
                                       F_DUPFD_CLOEXEC,
                                       1031 /*F_SETPIPE_SZ*/,
                                       1032 /*F_GETPIPE_SZ*/,
                                       1034 /*F_GET_SEALS*/,
                                       1035 /*F_GET_RW_HINT*/,
                                       1037 /*F_GET_FILE_RW_HINT*/,
                                       9999,
                                       (uint64_t)-1};
      a[0] = FdValue();
      a[1] = PICK(kCmds);
      if (a[1] == 1031) {
        static const int64_t kSizes[] = {0, 4096, 65536, 1 << 20, -1};
        a[2] = (uint64_t)PICK(kSizes);
      } else if (a[1] == F_DUPFD || a[1] == F_DUPFD_CLOEXEC || a[1] == F_SETFD) {
        a[2] = IntValue();
      } else {
        a[2] = BufValue();
      }
      break;
    }
    case 103: {  // syslog: non-destructive reads only (2 blocks, 4/5 clear)
      static const int64_t kActions[] = {3, 9, 10, -1, 100};
      a[0] = (uint64_t)PICK(kActions);
      a[1] = BufValue();
      a[2] = LenValue();
      break;
    }
    case 109:  // setpgid
      a[0] = SelfValue();
      a[1] = Percent(70) ? SelfValue() : IntValue();
      break;
    case 129:  // rt_sigqueueinfo
      a[0] = (uint64_t)self_pid;
      a[1] = SafeSig();
      a[2] = BufValue();
      break;
    case 131:  // sigaltstack: query only
      a[0] = Percent(70) ? 0 : BadPtr() | 1;
      a[1] = Percent(70) ? BufValue() : 0;
      break;
    case 135:  // personality: query only
      a[0] = 0xffffffff;
      break;
    case 154: {  // modify_ldt: read only
      static const uint64_t kFuncs[] = {0, 2, 7};
      a[0] = PICK(kFuncs);
      a[1] = BufValue();
      a[2] = LenValue();
      break;
    }
    case 157: {  // prctl: getters and a few harmless setters
      static const struct {
        uint64_t opt;
        uint8_t k[4];
      } kOpts[] = {{2, {BUF}},
                   {3, {Z}},
                   {4, {INT}},
                   {5, {BUF}},
                   {7, {Z}},
                   {8, {INT}},
                   {9, {BUF}},
                   {11, {BUF}},
                   {13, {Z}},
                   {15, {BUF}},
                   {16, {BUF}},
                   {19, {BUF}},
                   {21, {Z}},
                   {23, {INT}},
                   {25, {BUF}},
                   {27, {Z}},
                   {30, {Z}},
                   {36, {INT}},
                   {37, {BUF}},
                   {38, {INT}},
                   {39, {Z}},
                   {40, {BUF}},
                   {41, {INT}},
                   {42, {Z}},
                   {46, {Z}},
                   {47, {INT, INT}},
                   {52, {INT}},
                   {56, {Z}},
                   {58, {Z}},
                   {66, {Z}},
                   {0x41555856 /*PR_GET_AUXV*/, {BUF, LEN}},
                   {29 /*PR_SET_TIMERSLACK*/, {Z}},
                   {500, {ANY, ANY}},
                   {999, {Z}}};
      int i = (int)Below(sizeof(kOpts) / sizeof(kOpts[0]));
      a[0] = kOpts[i].opt;
      for (int j = 0; j < 4; j++) a[1 + j] = Gen(kOpts[i].k[j]);
      if (a[0] == 29) a[1] = Percent(50) ? 0 : 1 + Below(50000);  // never a huge slack
      break;
    }
    case 158: {  // arch_prctl: getters only (SET_FS/GS would wreck TLS)
      static const uint64_t kCodes[] = {0x1003 /*GET_FS*/,
                                        0x1004 /*GET_GS*/,
                                        0x1011 /*GET_CPUID*/,
                                        0x1021 /*GET_XCOMP_SUPP*/,
                                        0x1022 /*GET_XCOMP_PERM*/,
                                        0x5005 /*SHSTK_STATUS*/,
                                        0x1fff,
                                        0};
      a[0] = PICK(kCodes);
      a[1] = BufValue();
      break;
    }
    case 200:  // tkill
      if (Percent(70)) {
        a[0] = (uint64_t)self_pid;
        a[1] = SafeSig();
      } else {
        static const int64_t kTids[] = {0, -1, 999999999};
        a[0] = (uint64_t)PICK(kTids);
        a[1] = 0;
      }
      break;
    case 234:  // tgkill
      if (Percent(70)) {
        a[0] = (uint64_t)self_pid;
        a[1] = (uint64_t)self_pid;
        a[2] = SafeSig();
      } else {
        a[0] = PidValue();
        a[1] = PidValue();
        a[2] = 0;
      }
      break;
    case 297:  // rt_tgsigqueueinfo
      a[0] = (uint64_t)self_pid;
      a[1] = (uint64_t)self_pid;
      a[2] = SafeSig();
      a[3] = BufValue();
      break;
    case 202: {  // futex: no PI ops; waits get zero/tiny/invalid timeouts
      static const uint64_t kOps[] = {
          0 /*WAIT*/,    1 /*WAKE*/,        3 /*REQUEUE*/,      4 /*CMP_REQUEUE*/,
          5 /*WAKE_OP*/, 9 /*WAIT_BITSET*/, 10 /*WAKE_BITSET*/, 50};
      uint64_t op = PICK(kOps);
      a[0] = BufValue();
      a[1] = op | (Percent(50) ? 128 : 0) | (Percent(20) ? 256 : 0);
      a[2] = Percent(50) ? 0 : IntValue();  // scratch words are often 0: waits get to sleep
      a[3] = (op == 0 || op == 9) ? TimeoutValue() : IntValue();
      a[4] = BufValue();
      a[5] = IntValue();
      break;
    }
    case 449:  // futex_waitv
      a[2] = Percent(90) ? 0 : 1;
      break;
    case 216:  // remap_file_pages
      a[0] = RAddr();
      a[1] = RLen(a[0]);
      a[2] = Percent(80) ? 0 : IntValue();
      a[3] = IntValue();
      a[4] = IntValue();
      break;
    case 221: {  // fadvise64: not DONTNEED (it would drop host page cache)
      static const uint64_t kAdvice[] = {0, 1, 2, 3, 5, 99};
      a[3] = PICK(kAdvice);
      break;
    }
    case 222: {  // timer_create: no alarm clocks; SIGEV_NONE or an ignored signal
      static const int64_t kClocks[] = {0, 1, 2, 3, 4, 5, 6, 7, 11, 100, -1, -6};
      a[0] = (uint64_t)PICK(kClocks);
      a[1] = Percent(70) ? ScratchAt(SL_SIGEV) : Percent(50) ? 0 : BadPtr() | 1;
      a[2] = BufValue();
      break;
    }
    case 223:  // timer_settime
      a[0] = Below(8);
      a[1] = Below(2);
      a[2] = Percent(70) ? ScratchAt(SL_ITIMER) : Percent(50) ? ScratchAt(SL_TS_ZERO) : BadPtr();
      a[3] = Percent(50) ? 0 : BufValue();
      break;
    case 230: {  // clock_nanosleep: never a CPU-time clock (a lone sleeper never wakes)
      static const int64_t kClocks[] = {0, 1, 4, 5, 7, 11, 100, -1};
      a[0] = (uint64_t)PICK(kClocks);
      a[1] = Percent(70) ? 0 : Percent(80) ? 1 /*TIMER_ABSTIME*/ : 7;
      a[2] = TimeoutValue();
      a[3] = Percent(50) ? 0 : BufValue();
      break;
    }
    case 232:  // epoll_wait
    case 281:  // epoll_pwait
      a[3] = 0;
      break;
    case 237:  // mbind
      a[0] = RAddr();
      a[1] = RLen(a[0]);
      a[2] = Below(7) | (Percent(10) ? (1u << 15) : 0) | (Percent(10) ? (1u << 13) : 0);
      a[3] = BufValue();
      a[4] = Percent(50) ? Below(130) : IntValue();
      a[5] = Below(4);  // STRICT, MOVE; never MOVE_ALL
      break;
    case 450:  // set_mempolicy_home_node
      a[0] = RAddr();
      a[1] = RLen(a[0]);
      a[2] = IntValue();
      a[3] = Percent(90) ? 0 : 1;
      break;
    case 275:     // splice
      a[5] |= 2;  // SPLICE_F_NONBLOCK
      break;
    case 276:  // tee
    case 278:  // vmsplice
      a[3] |= 2;
      break;
    case 283: {  // timerfd_create: no alarm clocks
      static const int64_t kClocks[] = {0, 1, 7, 2, 100, -1};
      a[0] = (uint64_t)PICK(kClocks);
      a[1] = IntValue() | TFD_NONBLOCK;
      break;
    }
    case 286:  // timerfd_settime
      if (Percent(60)) a[0] = (uint64_t)(int64_t)pool[P_TIMERFD];
      if (Percent(60)) a[2] = ScratchAt(SL_ITIMER);
      break;
    case 288:  // accept4
      a[3] |= SOCK_NONBLOCK;
      break;
    case 289:  // signalfd4
      a[3] |= SFD_NONBLOCK;
      break;
    case 290:  // eventfd2
      a[1] |= EFD_NONBLOCK;
      break;
    case 293:  // pipe2
      a[1] |= O_NONBLOCK;
      break;
    case 294:  // inotify_init1
      a[0] |= IN_NONBLOCK;
      break;
    case 302:  // prlimit64: read only
      a[2] = 0;
      break;
    case 310:  // process_vm_readv: own memory only
      a[0] = Percent(80) ? (uint64_t)self_pid : (uint64_t)-1;
      a[5] = Percent(90) ? 0 : 1;
      break;
    case 312: {  // kcmp
      a[0] = Percent(70) ? (uint64_t)self_pid : PidValue();
      a[1] = Percent(70) ? (uint64_t)self_pid : PidValue();
      a[2] = Below(10);
      a[3] = Below(64);
      a[4] = Percent(50) ? Below(64) : BufValue();
      break;
    }
    case 318:     // getrandom
      a[2] |= 1;  // GRND_NONBLOCK
      break;
    case 322:  // execveat: never AT_EMPTY_PATH (it would run the fd's file)
      a[4] &= ~(uint64_t)0x1000;
      break;
    case 324: {  // membarrier: no GLOBAL (slow, machine-wide)
      static const uint64_t kCmds[] = {0, 1 << 3, 1 << 4, 1 << 5, 1 << 6, 1 << 7, 1 << 8, 1 << 20};
      a[0] = PICK(kCmds);
      a[1] = Percent(80) ? 0 : Below(4);
      a[2] = IntValue();
      break;
    }
    case 424:  // pidfd_send_signal: signal 0 only (a /proc/PID fd also counts as a pidfd)
      a[1] = 0;
      break;
    case 434: {  // pidfd_open: own pid only
      static const int64_t kPids[] = {0, -1, 999999999};
      a[0] = Percent(70) ? (uint64_t)self_pid : (uint64_t)PICK(kPids);
      static const uint64_t kFlags[] = {0, 0, O_NONBLOCK, O_EXCL, 1};
      a[1] = PICK(kFlags);
      break;
    }
    case 435: {  // clone3: sizes the kernel rejects before reading the arguments
      static const uint64_t kSizes[] = {0, 8, 63, 4097, ~0ull};
      a[0] = Percent(60) ? ScratchPtr() : BadPtr();
      a[1] = PICK(kSizes);
      break;
    }
    case 331:  // pkey_free: never key 0, which tags all our memory
      if (a[0] == 0) a[0] = 1 + Below(16);
      break;
    case 436: {  // close_range: only far above every fd we use
      static const uint64_t kFirst[] = {4000, 10000, 65536};
      a[0] = PICK(kFirst);
      a[1] = Percent(80) ? 0xffffffff : a[0] - 1;
      static const uint64_t kFlags[] = {0, 2 /*UNSHARE*/, 4 /*CLOEXEC*/, 8};
      a[2] = PICK(kFlags);
      break;
    }
    case 437: {  // openat2
      static const uint64_t kSizes[] = {24, 24, 24, 0, 8, 32, 4097};
      a[2] = Percent(80) ? ScratchAt(SL_HOW) : Percent(50) ? 0 : BadPtr();
      a[3] = PICK(kSizes);
      break;
    }
  }
}

// Per-call parts of the fixed slots (after the scratch area was refreshed).
static void PerCallSlots(void) {
  uint64_t* how = (uint64_t*)(scratch + SL_HOW);
  how[0] = OpenFlagsValue();
  how[1] = Percent(90) ? 0 : 0644;
  how[2] = Below(64);
}

static void BuildTemplate(void) {
  uint64_t* w = (uint64_t*)template_buf;
  for (size_t i = 0; i < kScratchSize / 8; i++) {
    switch (Below(8)) {
      case 0: w[i] = 0; break;
      case 1: w[i] = Below(65); break;
      case 2: w[i] = (uint64_t)-1; break;
      case 3: w[i] = ScratchPtr(); break;
      case 4: w[i] = Percent(50) ? BadPtr() : RPtr(); break;
      case 5: w[i] = Below(4097); break;
      default: w[i] = Next(); break;
    }
  }
  uint8_t* t = template_buf;
  int64_t* ts = (int64_t*)(t + SL_TS_ZERO);
  ts[0] = 0, ts[1] = 0;
  ts = (int64_t*)(t + SL_TS_TINY);
  ts[0] = 0, ts[1] = 1000;
  ts = (int64_t*)(t + SL_TS_INVALID);
  ts[0] = 0, ts[1] = -1;
  ts = (int64_t*)(t + SL_ITIMER);
  ts[0] = 0, ts[1] = 0, ts[2] = 0, ts[3] = 1;
  for (int i = 0; i < 4; i++) {
    struct sockaddr_un* sun = (struct sockaddr_un*)(t + SL_SUN + kSunLen * i);
    memset(sun, 0, kSunLen);
    sun->sun_family = AF_UNIX;
    snprintf(sun->sun_path + 1, kSunLen - 3, "sentry-fuzz-%d-%d", i, (int)self_pid);
  }
  struct sockaddr_in* sin = (struct sockaddr_in*)(t + SL_SIN);
  memset(sin, 0, sizeof(*sin));
  sin->sin_family = AF_INET;
  sin->sin_port = htons(1);
  sin->sin_addr.s_addr = htonl(0x7f000001);
  uint64_t* iov = (uint64_t*)(t + SL_IOV);
  static const uint64_t kIovLens[] = {16, 100, 4096, 1ull << 30};
  for (int i = 0; i < 4; i++) {
    iov[2 * i] = ScratchAt(kPage + 64 * i);
    iov[2 * i + 1] = kIovLens[i];
  }
  uint64_t* msg = (uint64_t*)(t + SL_MSG);
  msg[0] = ScratchAt(SL_SUN);        // msg_name
  msg[1] = 2 + 1 + 16;               // msg_namelen
  msg[2] = ScratchAt(SL_IOV);        // msg_iov
  msg[3] = 4;                        // msg_iovlen
  msg[4] = ScratchAt(SL_FIXED_END);  // msg_control: random words
  msg[5] = 64;                       // msg_controllen
  msg[6] = 0;                        // msg_flags
  uint64_t* act = (uint64_t*)(t + SL_SIGACT);
  act[0] = (uint64_t)(uintptr_t)SIG_IGN;  // handler; flags, restorer and mask stay random
  uint32_t* sev = (uint32_t*)(t + SL_SIGEV);
  memset(sev, 0, 64);
  sev[2] = SIGALRM;  // sigev_signo (ignored)
  sev[3] = 0;        // SIGEV_SIGNAL
  int* fdout = (int*)(t + SL_FDOUT);
  fdout[0] = fdout[1] = -1;
  int* pfd = (int*)(t + SL_POLL);
  for (int i = 0; i < 8; i++) {
    pfd[2 * i] = pool[Below(P_COUNT)];
    pfd[2 * i + 1] = 0xffff;  // events = all
  }
  template_sum = 0;
  for (size_t i = 0; i < kScratchSize / 8; i++) template_sum = template_sum * 31 + w[i];
}

// ---- fd bookkeeping ----

// Drops fd from the junk list, so that evicting it later cannot close whatever reused the
// number (syscall_fuzz -c's threads receive fds at the lowest free numbers).
static void ForgetFd(int fd) {
  for (int i = 0; i < junk_count; i++) {
    if (junk[i] != fd) continue;
    junk[i] = junk[--junk_count];
    if (junk_next >= junk_count) junk_next = 0;
    return;
  }
}

static void TrackFd(long fd) {
  if (fd < 3 || fd > (1 << 20) || fd == saved_stdout || InPool((int)fd)) return;
  for (int i = 0; i < junk_count; i++)
    if (junk[i] == fd) return;  // dup2/dup3 onto a junk fd returns it again
  // A fuzzed close or dup2 cannot reach pool fds, so any fd the fuzzer can name is either in
  // the pool (made non-blocking at start) or here: make it non-blocking too.
  long fl = syscall(SYS_fcntl, fd, F_GETFL);
  if (fl >= 0 && !(fl & O_NONBLOCK)) syscall(SYS_fcntl, fd, F_SETFL, fl | O_NONBLOCK);
  if (junk_count < kJunkMax) {
    junk[junk_count++] = (int)fd;
    return;
  }
  syscall(SYS_close, junk[junk_next]);
  junk[junk_next] = (int)fd;
  junk_next = (junk_next + 1) % kJunkMax;
}

static void AfterCall(int nr, const uint64_t a[6], long ret) {
  const struct Entry* e = &table[nr];
  if (ret < 0) return;
  if (nr == 3) ForgetFd((int)a[0]);  // closed: the number may be reused by someone else
  if ((e->flags & F_RETFD) || (nr == 72 && (a[1] == F_DUPFD || a[1] == F_DUPFD_CLOEXEC)))
    TrackFd(ret);
  uint64_t out = (e->flags & F_PAIR0) ? a[0] : (e->flags & F_PAIR3) ? a[3] : 0;
  if (out && out >= ScratchAt(0) && out + 8 <= ScratchAt(kScratchSize)) {
    int fds[2];
    memcpy(fds, (void*)(uintptr_t)out, sizeof(fds));
    TrackFd(fds[0]);
    TrackFd(fds[1]);
  }
  if (nr == 9) MustNotKeep(ret, a[1], (a[3] & MAP_HUGETLB) != 0);
  if (nr == 25) MustNotKeep(ret, a[2], 0);
}

// ---- output (write(2) only: no stdio buffers to inherit or lose) ----

static void Out(int fd, const char* s) {
  size_t n = strlen(s);
  while (n > 0) {
    ssize_t w = write(fd, s, n);
    if (w <= 0) return;
    s += w;
    n -= (size_t)w;
  }
}

static void Die(const char* what) {
  char buf[256];
  snprintf(buf, sizeof(buf), "syscall_fuzz: %s: %s\n", what, strerror(errno));
  Out(saved_stdout >= 0 ? saved_stdout : 2, buf);
  _exit(2);
}

// ---- the child ----

static void IgnoreSignals(void) {
  static const int kSigs[] = {SIGPIPE, SIGALRM, SIGVTALRM, SIGPROF, SIGIO,
                              SIGUSR1, SIGUSR2, SIGXFSZ,   SIGXCPU, SIGHUP,
                              SIGTTIN, SIGTTOU, SIGTSTP,   SIGURG,  SIGWINCH};
  for (size_t i = 0; i < sizeof(kSigs) / sizeof(kSigs[0]); i++) signal(kSigs[i], SIG_IGN);
}

static void SetUpFds(void) {
  // Only our own fds may be named by the generators: close whatever we inherited.
  if (syscall(SYS_close_range, 3, ~0u, 0) != 0)
    for (int fd = 3; fd < 1024; fd++) close(fd);
  saved_stdout = fcntl(1, F_DUPFD_CLOEXEC, kSavedStdoutMin);
  if (saved_stdout < 0) saved_stdout = fcntl(1, F_DUPFD_CLOEXEC, 100);  // small RLIMIT_NOFILE
  if (saved_stdout < 0) Die("dup stdout");
  pool[P_DEVNULL_R] = open("/dev/null", O_RDONLY);
  pool[P_DEVNULL_W] = open("/dev/null", O_WRONLY);
  if (pool[P_DEVNULL_R] < 0 || pool[P_DEVNULL_W] < 0) Die("open /dev/null");
  if (dup2(pool[P_DEVNULL_R], 0) < 0 || dup2(pool[P_DEVNULL_W], 1) < 0 ||
      dup2(pool[P_DEVNULL_W], 2) < 0)
    Die("dup2 /dev/null");
  // Anything below may be unimplemented in the sandbox: a missing pool fd stays -1.
  pool[P_ZERO] = open("/dev/zero", O_RDONLY);
  pool[P_ROOTDIR] = open("/", O_RDONLY | O_DIRECTORY);
  pool[P_FILE] = open("/etc/passwd", O_RDONLY);
  int p[2] = {-1, -1};
  if (pipe2(p, O_NONBLOCK) != 0) p[0] = p[1] = -1;
  pool[P_PIPE_R] = p[0];
  pool[P_PIPE_W] = p[1];
  int s[2] = {-1, -1};
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, s) != 0) s[0] = s[1] = -1;
  pool[P_STREAM0] = s[0];
  pool[P_STREAM1] = s[1];
  if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, s) != 0) s[0] = s[1] = -1;
  pool[P_DGRAM0] = s[0];
  pool[P_DGRAM1] = s[1];
  pool[P_LISTENER] = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
  if (pool[P_LISTENER] >= 0) {
    // Same name as the first SL_SUN address, so that fuzzed connects sometimes succeed.
    struct sockaddr_un sun;
    memset(&sun, 0, sizeof(sun));
    sun.sun_family = AF_UNIX;
    snprintf(sun.sun_path + 1, sizeof(sun.sun_path) - 1, "sentry-fuzz-0-%d", (int)self_pid);
    socklen_t len =
        (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(sun.sun_path + 1));
    if (bind(pool[P_LISTENER], (struct sockaddr*)&sun, len) == 0) listen(pool[P_LISTENER], 4);
  }
  pool[P_EVENTFD] = eventfd(0, EFD_NONBLOCK);
  pool[P_EPOLL] = epoll_create1(0);
  pool[P_TIMERFD] = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGUSR1);
  pool[P_SIGNALFD] = signalfd(-1, &mask, SFD_NONBLOCK);
  pool[P_INOTIFY] = inotify_init1(IN_NONBLOCK);
}

static void SetUpMemory(void) {
  uint8_t* s = mmap(NULL, kScratchSize + 2 * kPage, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (s == MAP_FAILED) Die("mmap scratch");
  if (mprotect(s, kPage, PROT_NONE) != 0 ||
      mprotect(s + kPage + kScratchSize, kPage, PROT_NONE) != 0)
    Die("mprotect scratch guards");
  scratch = s + kPage;
  // R with a guard mapping on each side, so that nothing else is ever placed next to it.
  uint8_t* r =
      mmap(NULL, kRSize + 2 * kPage, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (r == MAP_FAILED) Die("mmap R");
  if (mprotect(r, kPage, PROT_READ) != 0 || mprotect(r + kPage + kRSize, kPage, PROT_READ) != 0)
    Die("mprotect R guards");  // a different protection keeps them separate vmas
  r_start = (uintptr_t)(r + kPage);
  r_end = r_start + kRSize;
  heap_top = (uint64_t)syscall(SYS_brk, 0);
  for (size_t i = 0; i < sizeof(deep_path) - 2; i += 2) memcpy(deep_path + i, "a/", 2);
  memset(long_name, 'a', sizeof(long_name) - 1);
  long_name[0] = '/';
}

static int Sane(pid_t parent) {
  if (syscall(SYS_getpid) != self_pid || getppid() != parent) return 0;
  for (int i = 0; i < junk_count; i++) close(junk[i]);
  int p[2];
  if (pipe(p) != 0) return 0;
  char buf[8] = {0};
  if (write(p[1], "ping", 4) != 4 || read(p[0], buf, sizeof(buf)) != 4) return 0;
  close(p[0]);
  close(p[1]);
  if (memcmp(buf, "ping", 4) != 0) return 0;
  uint64_t sum = 0;
  const uint64_t* w = (const uint64_t*)template_buf;
  for (size_t i = 0; i < kScratchSize / 8; i++) sum = sum * 31 + w[i];
  return sum == template_sum;  // our own memory was not scribbled on
}

static void LogCall(long i, int nr, const uint64_t a[6], long ret) {
  char buf[256];
  snprintf(buf, sizeof(buf), "%ld %s(%d) %#lx %#lx %#lx %#lx %#lx %#lx = %ld\n", i, table[nr].name,
           nr, (unsigned long)a[0], (unsigned long)a[1], (unsigned long)a[2], (unsigned long)a[3],
           (unsigned long)a[4], (unsigned long)a[5], ret);
  Out(saved_stdout, buf);
}

static int RunChild(uint64_t seed, long count, pid_t parent) {
  self_pid = getpid();
  rng_state = seed;
  InitTable();
  IgnoreSignals();
  SetUpFds();
  SetUpMemory();
  BuildTemplate();
  long ok = 0, enosys = 0, failed = 0;
  if (churn && ChurnStart(seed, saved_stdout) != 0) Die("starting the churn");
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  time_t deadline = now.tv_sec + (time_t)duration;
  progress->in_fuzz_loop = 1;
  long i;
  for (i = 0; duration > 0 || i < count; i++) {
    if (duration > 0 && (i & 255) == 0) {
      clock_gettime(CLOCK_MONOTONIC, &now);
      if (now.tv_sec >= deadline) break;
    }
    int nr;
    do nr = (int)Below(kMaxNr + 1);
    while (table[nr].name == NULL || ((table[nr].flags & F_RAW) && Percent(70)));
    const struct Entry* e = &table[nr];
    memcpy(scratch, template_buf, kScratchSize);
    PerCallSlots();
    uint64_t a[6];
    for (int j = 0; j < 6; j++) a[j] = (e->flags & F_RAW) ? AnyValue() : Gen(e->k[j]);
    if (e->flags & F_SPECIAL) SpecialArgs(nr, a);
    progress->iteration = i;
    progress->nr = nr;
    for (int j = 0; j < 6; j++) progress->args[j] = a[j];
    long ret = syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
    if (ret == -1) ret = -errno;
    if (ret >= 0)
      ok++;
    else if (ret == -ENOSYS)
      enosys++;
    else
      failed++;
    if (verbose) LogCall(i, nr, a, ret);
    AfterCall(nr, a, ret);
  }
  progress->in_fuzz_loop = 0;
  char buf[256];
  if (churn) {
    ChurnStop(buf, sizeof(buf));
    Out(saved_stdout, buf);
  }
  snprintf(buf, sizeof(buf), "stats: %ld succeeded, %ld ENOSYS, %ld other errors\n", ok, enosys,
           failed);
  Out(saved_stdout, buf);
  snprintf(buf, sizeof(buf), "done %ld syscalls\n", i);
  Out(saved_stdout, buf);
  if (!Sane(parent)) {
    Out(saved_stdout, "NOT SANE after fuzzing\n");
    return 1;
  }
  Out(saved_stdout, "sane\n");
  return 0;
}

// ---- the parent ----

static volatile sig_atomic_t timed_out;
static void OnAlarm(int sig) {
  (void)sig;
  timed_out = 1;
}

static void Usage(const char* argv0) {
  fprintf(stderr, "usage: %s [-s SEED] [-n COUNT] [-d SECONDS] [-c] [-t TIMEOUT_SECONDS] [-v]\n",
          argv0);
  exit(2);
}

static void PrintLastCall(void) {
  int nr = (int)progress->nr;
  if (!progress->in_fuzz_loop) {
    printf("syscall_fuzz: it was outside the fuzz loop (set-up or sanity check)\n");
    return;
  }
  printf("syscall_fuzz: in iteration %ld: %s(%d) %#lx %#lx %#lx %#lx %#lx %#lx\n",
         progress->iteration, nr >= 0 && nr <= kMaxNr && table[nr].name ? table[nr].name : "?", nr,
         (unsigned long)progress->args[0], (unsigned long)progress->args[1],
         (unsigned long)progress->args[2], (unsigned long)progress->args[3],
         (unsigned long)progress->args[4], (unsigned long)progress->args[5]);
}

int main(int argc, char** argv) {
  uint64_t seed = 1;
  long count = 100000;
  unsigned timeout = 240;
  int opt;
  while ((opt = getopt(argc, argv, "s:n:d:ct:v")) != -1) {
    switch (opt) {
      case 's': seed = strtoull(optarg, NULL, 0); break;
      case 'n': count = strtol(optarg, NULL, 0); break;
      case 't': timeout = (unsigned)strtoul(optarg, NULL, 0); break;
      case 'v': verbose = 1; break;
      case 'c': churn = 1; break;
      case 'd': duration = (unsigned)strtoul(optarg, NULL, 0); break;
      default: Usage(argv[0]);
    }
  }
  if (optind != argc || count < 0) Usage(argv[0]);
  InitTable();  // for PrintLastCall's names
  progress =
      mmap(NULL, sizeof(*progress), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (progress == MAP_FAILED) {
    perror("syscall_fuzz: mmap");
    return 2;
  }
  progress->nr = -1;
  if (duration > 0) {
    printf("syscall_fuzz: seed %llu, %u s%s\n", (unsigned long long)seed, duration,
           churn ? ", with churn" : "");
  } else {
    printf("syscall_fuzz: seed %llu, %ld syscalls%s\n", (unsigned long long)seed, count,
           churn ? ", with churn" : "");
  }
  fflush(stdout);
  pid_t parent = getpid();
  pid_t child = fork();
  if (child < 0) {
    perror("syscall_fuzz: fork");
    return 2;
  }
  if (child == 0) _exit(RunChild(seed, count, parent));

  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = OnAlarm;  // no SA_RESTART: waitpid returns EINTR
  sigaction(SIGALRM, &sa, NULL);
  alarm(timeout);
  int status;
  for (;;) {
    pid_t w = waitpid(child, &status, 0);
    if (w == child) break;
    if (w < 0 && errno == EINTR && timed_out) {
      printf("syscall_fuzz: FAIL: child still running after %u s, killing it\n", timeout);
      PrintLastCall();
      fflush(stdout);
      kill(child, SIGKILL);
      waitpid(child, &status, 0);
      return 1;
    }
    if (w < 0 && errno != EINTR) {
      perror("syscall_fuzz: waitpid");
      return 2;
    }
  }
  alarm(0);
  if (WIFSIGNALED(status)) {
    printf("syscall_fuzz: FAIL: child killed by signal %d (%s)\n", WTERMSIG(status),
           strsignal(WTERMSIG(status)));
    PrintLastCall();
    return 1;
  }
  printf("syscall_fuzz: child exited with status %d\n", WEXITSTATUS(status));
  return WEXITSTATUS(status) == 0 ? 0 : 1;
}
