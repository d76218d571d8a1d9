// The guest ABI: Linux x86_64 structures and constants as the guest sees them. These are our
// own definitions (not glibc's, whose layouts differ), checked by static_asserts.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sentry::abi {

inline constexpr int kNumSignals = 64;
using SigSet = uint64_t;  // bit (signo - 1)

constexpr SigSet SigBit(int signo) { return SigSet{1} << (signo - 1); }

// Signals whose handlers cannot be changed and that cannot be blocked.
inline constexpr SigSet kUnblockable = SigBit(9) | SigBit(19);  // SIGKILL, SIGSTOP

// struct sigaction as the kernel's rt_sigaction sees it.
struct KSigAction {
  uint64_t handler;  // SIG_DFL = 0, SIG_IGN = 1, or a guest address
  uint64_t flags;
  uint64_t restorer;
  SigSet mask;
};
static_assert(sizeof(KSigAction) == 32);

inline constexpr uint64_t kSigDfl = 0;
inline constexpr uint64_t kSigIgn = 1;

inline constexpr uint64_t kSA_NOCLDSTOP = 0x00000001;
inline constexpr uint64_t kSA_NOCLDWAIT = 0x00000002;
inline constexpr uint64_t kSA_SIGINFO = 0x00000004;
inline constexpr uint64_t kSA_RESTORER = 0x04000000;
inline constexpr uint64_t kSA_ONSTACK = 0x08000000;
inline constexpr uint64_t kSA_RESTART = 0x10000000;
inline constexpr uint64_t kSA_NODEFER = 0x40000000;
inline constexpr uint64_t kSA_RESETHAND = 0x80000000;

// siginfo_t: 128 bytes; the union fields are laid out by accessors in signal code.
struct SigInfo {
  int32_t signo;
  int32_t errno_;
  int32_t code;
  int32_t pad0;
  union {
    uint8_t raw[112];
    struct {  // kill, tkill, sigqueue
      int32_t pid;
      uint32_t uid;
      uint64_t value;
    } kill;
    struct {  // SIGCHLD
      int32_t pid;
      uint32_t uid;
      int32_t status;
      int32_t pad;
      int64_t utime;
      int64_t stime;
    } chld;
    struct {  // SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP
      uint64_t addr;
    } fault;
    struct {  // POSIX timers (SI_TIMER)
      int32_t tid;
      int32_t overrun;
      uint64_t value;
      int32_t sys_private;  // the Sentry's: which arming of the timer queued it
    } timer;
    struct {  // SIGSYS
      uint64_t call_addr;
      int32_t syscall;
      uint32_t arch;
    } sys;
  } f;
};
static_assert(sizeof(SigInfo) == 128);

// si_code values.
inline constexpr int kSI_USER = 0;
inline constexpr int kSI_KERNEL = 0x80;
inline constexpr int kSI_QUEUE = -1;
inline constexpr int kSI_TIMER = -2;
// In SigInfo::pad0 of a signal queued by a Sentry POSIX timer (a guest's rt_sigqueueinfo may
// claim SI_TIMER too; its pad0 is cleared).
inline constexpr int32_t kSigInfoTimerMark = 0x54494d52;
inline constexpr int kSI_TKILL = -6;
inline constexpr int kCLD_EXITED = 1;
inline constexpr int kCLD_KILLED = 2;
inline constexpr int kCLD_DUMPED = 3;
inline constexpr int kCLD_TRAPPED = 4;
inline constexpr int kCLD_STOPPED = 5;
inline constexpr int kCLD_CONTINUED = 6;

struct StackT {
  uint64_t sp;
  int32_t flags;
  int32_t pad;
  uint64_t size;
};
static_assert(sizeof(StackT) == 24);
inline constexpr int kSS_ONSTACK = 1;
inline constexpr int kSS_DISABLE = 2;
inline constexpr int kSS_AUTODISARM = 1 << 31;
inline constexpr uint64_t kMinSigStackSize = 2048;

// struct sigcontext (x86_64), the uc_mcontext of a signal frame.
struct SigContext {
  uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
  uint64_t rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, eflags;
  uint16_t cs, gs, fs, ss;
  uint64_t err, trapno, oldmask, cr2;
  uint64_t fpstate;  // guest address of the xsave area
  uint64_t reserved1[8];
};
static_assert(sizeof(SigContext) == 256);

struct UContext {
  uint64_t flags;
  uint64_t link;
  StackT stack;
  SigContext mcontext;
  SigSet sigmask;
};
static_assert(sizeof(UContext) == 304);

inline constexpr uint64_t kUC_FP_XSTATE = 0x1;
inline constexpr uint64_t kUC_SIGCONTEXT_SS = 0x2;
inline constexpr uint64_t kUC_STRICT_RESTORE_SS = 0x4;

// The rt signal frame the kernel pushes; the xsave area follows it, 64-byte aligned.
struct RtSigFrame {
  uint64_t pretcode;  // sa_restorer: the handler returns into it
  UContext uc;
  SigInfo info;
};

inline constexpr uint32_t kFpXstateMagic1 = 0x46505853;
inline constexpr uint32_t kFpXstateMagic2 = 0x46505845;
inline constexpr size_t kFxSwBytesOffset = 464;  // fpx_sw_bytes inside the fxsave area

struct Timespec {
  int64_t sec;
  int64_t nsec;
};
struct Timeval {
  int64_t sec;
  int64_t usec;
};

struct Rlimit {
  uint64_t cur;
  uint64_t max;
};
inline constexpr uint64_t kRlimInfinity = ~uint64_t{0};
inline constexpr int kNumRlimits = 16;

struct Rusage {
  Timeval utime;
  Timeval stime;
  int64_t rest[14];
};
static_assert(sizeof(Rusage) == 144);

struct Utsname {
  char sysname[65];
  char nodename[65];
  char release[65];
  char version[65];
  char machine[65];
  char domainname[65];
};

// Auxiliary vector keys.
inline constexpr uint64_t kAT_NULL = 0, kAT_PHDR = 3, kAT_PHENT = 4, kAT_PHNUM = 5,
                          kAT_PAGESZ = 6, kAT_BASE = 7, kAT_FLAGS = 8, kAT_ENTRY = 9,
                          kAT_UID = 11, kAT_EUID = 12, kAT_GID = 13, kAT_EGID = 14,
                          kAT_PLATFORM = 15, kAT_HWCAP = 16, kAT_CLKTCK = 17, kAT_SECURE = 23,
                          kAT_RANDOM = 25, kAT_HWCAP2 = 26, kAT_EXECFN = 31,
                          kAT_SYSINFO_EHDR = 33, kAT_MINSIGSTKSZ = 51;

// struct sched_attr, as of Linux 4.13 (SCHED_ATTR_SIZE_VER1, 56 bytes).
struct SchedAttr {
  uint32_t size, policy;
  uint64_t flags;
  int32_t nice;
  uint32_t priority;
  uint64_t runtime, deadline, period;
  uint32_t util_min, util_max;
};
static_assert(sizeof(SchedAttr) == 56);

}  // namespace sentry::abi
