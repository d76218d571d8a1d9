// ptrace(2) between guest tasks: the requests. The stops, events and wait() side live in
// sentry/kernel/ptrace.cc. Guest memory and registers of the tracee are reached through the
// Sentry's own state (its memory manager, Task::regs_), never through host ptrace.
#include <elf.h>
#include <linux/audit.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>

#include <cstddef>
#include <cstring>
#include <functional>

#include "sentry/kernel/ptrace.h"
#include "syscalls/common.h"

namespace sentry::syscalls {
namespace {

using kernel::PtraceResume;

constexpr uint64_t kTaskSizeMax = (uint64_t{1} << 47) - 4096;
// The EFLAGS bits a tracer may change (Linux's FLAG_MASK): CF PF AF ZF SF TF DF OF RF AC.
constexpr uint64_t kUserFlags =
    0x1 | 0x4 | 0x10 | 0x40 | 0x80 | 0x100 | 0x400 | 0x800 | 0x10000 | 0x40000;
constexpr size_t kFxsaveSize = 512;  // struct user_fpregs_struct, NT_PRFPREG
constexpr size_t kXstateBvOffset = 512;

// Writes `src` over the tracee's registers `dst` as Linux's putreg does: segment selectors
// cannot change (EIO), bases must be user addresses, and only user flags move.
Result<void> PutRegs(platform::Registers& dst, const platform::Registers& src) {
  if (src.cs != dst.cs || src.ss != dst.ss || src.ds != dst.ds || src.es != dst.es ||
      src.fs != dst.fs || src.gs != dst.gs) {
    return Errno(EIO);
  }
  if (src.fs_base >= kTaskSizeMax || src.gs_base >= kTaskSizeMax) return Errno(EIO);
  uint64_t flags = (dst.eflags & ~kUserFlags) | (src.eflags & kUserFlags);
  dst = src;
  dst.eflags = flags;
  return Ok();
}

// Replaces the legacy (fxsave) area of `fp` and marks x87 and SSE state as present, as
// Linux's fpregs_set does.
void PutFxsave(std::vector<uint8_t>& fp, std::span<const uint8_t> fx) {
  memcpy(fp.data(), fx.data(), kFxsaveSize);
  fp[kXstateBvOffset] |= 0x3;
}

// The tracee's FP state (xsave layout), read on its own thread; with `edit`, changed by it and
// written back there in the same visit (the tracee may be gone once the caller waited).
// Preconditions: Kernel::mu_ held, `e` in a ptrace-stop.
Result<std::vector<uint8_t>> FpState(
    Task& e, const std::function<Result<void>(std::vector<uint8_t>&)>& edit = nullptr) {
  Result<std::vector<uint8_t>> out = Errno(EIO);
  kernel::PtraceRunOnTracee(e, [&] {
    Result<std::vector<uint8_t>> fp = e.ctx().GetFpState();
    if (!fp.ok() || fp->size() < kFxsaveSize + 64) return;
    if (edit) {
      if (Result<void> r = edit(*fp); !r.ok()) {
        out = r.error();
        return;
      }
      if (!e.ctx().SetFpState(*fp).ok()) return;
    }
    out = std::move(fp);
  });
  return out;
}

Result<uint64_t> PeekData(Task& t, int pid, uint64_t addr, GuestAddr out) {
  std::shared_ptr<mm::MemoryManager> mm;
  {
    absl::MutexLock l(&t.kernel().mu());
    mm = SENTRY_TRY(kernel::PtraceTracee(t, pid, true))->mm_;
  }
  uint64_t word;
  if (!mm || mm->as().ReadMemory(GuestAddr(addr), {reinterpret_cast<uint8_t*>(&word), 8}) != 8) {
    return Errno(EIO);
  }
  SENTRY_TRY(t.CopyOut(out, word));
  return 0;
}

// Writes a word, also into a read-only private mapping (breakpoints in text), as Linux's
// FOLL_FORCE: the page is made writable on the host for the write only; the guest's VMA
// list does not change.
Result<uint64_t> PokeData(Task& t, int pid, uint64_t addr, uint64_t word) {
  absl::MutexLock l(&t.kernel().mu());
  Task& e = *SENTRY_TRY(kernel::PtraceTracee(t, pid, true));
  std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(&word), 8);
  Result<void> r = Errno(EIO);
  kernel::PtraceRunOnTracee(e, [&] {
    mm::MemoryManager& mm = e.mm();
    if (mm.as().WriteMemory(GuestAddr(addr), bytes) == 8) {
      r = Ok();
      return;
    }
    uint64_t first = PageRoundDown(addr), len = PageRoundDown(addr + 7) + kPageSize - first;
    std::optional<mm::Vma> a = mm.VmaAt(first), b = mm.VmaAt(first + len - 1);
    if (!a || !b || a->shared || b->shared || !(a->prot & PROT_READ)) return;
    int prot = a->prot;
    if (!mm.as().Protect(e.ctx(), GuestAddr(first), len, prot | PROT_WRITE).ok()) return;
    if (mm.as().WriteMemory(GuestAddr(addr), bytes) == 8) r = Ok();
    (void)mm.as().Protect(e.ctx(), GuestAddr(first), len, prot);
  });
  SENTRY_TRY(r);
  return 0;
}

// PTRACE_PEEKUSER/POKEUSER: the registers of struct user; the debug registers read as zero
// (no hardware breakpoints) and accept only zero.
Result<uint64_t> PeekUser(Task& t, int pid, uint64_t off, GuestAddr out) {
  if (off % 8 != 0 || off >= sizeof(struct user)) return Errno(EIO);
  uint64_t word = 0;
  {
    absl::MutexLock l(&t.kernel().mu());
    Task& e = *SENTRY_TRY(kernel::PtraceTracee(t, pid, true));
    if (off < sizeof(platform::Registers)) {
      memcpy(&word, reinterpret_cast<const uint8_t*>(&e.regs_) + off, 8);
    }
  }
  SENTRY_TRY(t.CopyOut(out, word));
  return 0;
}

Result<uint64_t> PokeUser(Task& t, int pid, uint64_t off, uint64_t word) {
  if (off % 8 != 0 || off >= sizeof(struct user)) return Errno(EIO);
  absl::MutexLock l(&t.kernel().mu());
  Task& e = *SENTRY_TRY(kernel::PtraceTracee(t, pid, true));
  if (off < sizeof(platform::Registers)) {
    platform::Registers regs = e.regs_;
    memcpy(reinterpret_cast<uint8_t*>(&regs) + off, &word, 8);
    SENTRY_TRY(PutRegs(e.regs_, regs));
    return 0;
  }
  size_t dr = offsetof(struct user, u_debugreg);
  if (off >= dr && off < dr + sizeof(((struct user*)nullptr)->u_debugreg) && word == 0) return 0;
  return Errno(EIO);
}

Result<uint64_t> GetRegs(Task& t, int pid, GuestAddr out) {
  platform::Registers regs;
  {
    absl::MutexLock l(&t.kernel().mu());
    regs = SENTRY_TRY(kernel::PtraceTracee(t, pid, true))->regs_;
  }
  SENTRY_TRY(t.CopyOut(out, regs));
  return 0;
}

Result<uint64_t> SetRegs(Task& t, int pid, GuestAddr in) {
  platform::Registers regs = SENTRY_TRY(t.CopyIn<platform::Registers>(in));
  absl::MutexLock l(&t.kernel().mu());
  Task& e = *SENTRY_TRY(kernel::PtraceTracee(t, pid, true));
  SENTRY_TRY(PutRegs(e.regs_, regs));
  return 0;
}

Result<uint64_t> GetFpRegs(Task& t, int pid, GuestAddr out) {
  std::vector<uint8_t> fp;
  {
    absl::MutexLock l(&t.kernel().mu());
    fp = SENTRY_TRY(FpState(*SENTRY_TRY(kernel::PtraceTracee(t, pid, true))));
  }
  SENTRY_TRY(t.CopyOutBytes(out, {fp.data(), kFxsaveSize}));
  return 0;
}

Result<uint64_t> SetFpRegs(Task& t, int pid, GuestAddr in) {
  std::vector<uint8_t> fx(kFxsaveSize);
  SENTRY_TRY(t.CopyInBytes(in, fx));
  absl::MutexLock l(&t.kernel().mu());
  Task& e = *SENTRY_TRY(kernel::PtraceTracee(t, pid, true));
  SENTRY_TRY(FpState(e, [&](std::vector<uint8_t>& fp) -> Result<void> {
    PutFxsave(fp, fx);
    return Ok();
  }));
  return 0;
}

// PTRACE_GETREGSET/SETREGSET over an iovec: NT_PRSTATUS, NT_PRFPREG, NT_X86_XSTATE. A set
// may cover a prefix of the regset; iov_len comes back as what was moved.
Result<uint64_t> RegSet(Task& t, int pid, uint64_t type, GuestAddr iov_addr, bool set) {
  struct iovec iov = SENTRY_TRY(t.CopyIn<struct iovec>(iov_addr));
  if (type != NT_PRSTATUS && type != NT_PRFPREG && type != NT_X86_XSTATE) return Errno(EINVAL);
  GuestAddr buf(reinterpret_cast<uint64_t>(iov.iov_base));
  std::vector<uint8_t> in;
  if (set) {
    in.resize(std::min<size_t>(iov.iov_len, 1 << 16));
    SENTRY_TRY(t.CopyInBytes(buf, in));
  }
  std::vector<uint8_t> data;
  {
    absl::MutexLock l(&t.kernel().mu());
    Task& e = *SENTRY_TRY(kernel::PtraceTracee(t, pid, true));
    size_t n = 0;
    if (type == NT_PRSTATUS) {
      data.resize(sizeof(platform::Registers));
      memcpy(data.data(), &e.regs_, data.size());
      n = std::min(data.size(), set ? in.size() : size_t{iov.iov_len});
      if (set) {
        platform::Registers regs = e.regs_;
        memcpy(&regs, in.data(), n);
        SENTRY_TRY(PutRegs(e.regs_, regs));
      }
    } else if (!set) {
      data = SENTRY_TRY(FpState(e));
      if (type == NT_PRFPREG) data.resize(kFxsaveSize);
      n = std::min(data.size(), size_t{iov.iov_len});
    } else {
      SENTRY_TRY(FpState(e, [&](std::vector<uint8_t>& fp) -> Result<void> {
        n = std::min(type == NT_PRFPREG ? kFxsaveSize : fp.size(), in.size());
        if (type == NT_PRFPREG) {
          if (n < kFxsaveSize) return Errno(EINVAL);
          PutFxsave(fp, in);
        } else {
          memcpy(fp.data(), in.data(), n);
        }
        return Ok();
      }));
    }
    iov.iov_len = n;
  }
  if (!set) SENTRY_TRY(t.CopyOutBytes(buf, {data.data(), iov.iov_len}));
  SENTRY_TRY(t.CopyOut(iov_addr, iov));
  return 0;
}

// PTRACE_GET_SYSCALL_INFO, laid out as Linux's struct ptrace_syscall_info: the syscall of a
// syscall-enter or -exit stop (reported with PTRACE_O_TRACESYSGOOD), else only ip and sp.
Result<uint64_t> GetSyscallInfo(Task& t, int pid, uint64_t size, GuestAddr out) {
  struct __ptrace_syscall_info info;
  memset(&info, 0, sizeof(info));
  size_t actual = offsetof(struct __ptrace_syscall_info, arch);
  {
    absl::MutexLock l(&t.kernel().mu());
    Task& e = *SENTRY_TRY(kernel::PtraceTracee(t, pid, true));
    const platform::Registers& r = e.regs_;
    info.op = PTRACE_SYSCALL_INFO_NONE;
    info.arch = AUDIT_ARCH_X86_64;
    info.instruction_pointer = r.rip;
    info.stack_pointer = r.rsp;
    bool sysgood = e.ptrace_.has_siginfo && e.ptrace_.siginfo.code == (SIGTRAP | 0x80);
    if (sysgood && e.ptrace_.kind == kernel::PtraceStopKind::kSyscallEntry) {
      info.op = PTRACE_SYSCALL_INFO_ENTRY;
      info.entry.nr = r.orig_rax;
      const uint64_t args[6] = {r.rdi, r.rsi, r.rdx, r.r10, r.r8, r.r9};
      memcpy(info.entry.args, args, sizeof(args));
      actual = offsetof(struct __ptrace_syscall_info, entry.args) + sizeof(info.entry.args);
    } else if (sysgood && e.ptrace_.kind == kernel::PtraceStopKind::kSyscallExit) {
      info.op = PTRACE_SYSCALL_INFO_EXIT;
      info.exit.rval = static_cast<int64_t>(r.rax);
      info.exit.is_error = info.exit.rval < 0 && info.exit.rval >= -4095;
      actual = offsetof(struct __ptrace_syscall_info, exit.is_error) + sizeof(info.exit.is_error);
    }
  }
  size_t n = std::min<uint64_t>(size, actual);
  SENTRY_TRY(t.CopyOutBytes(out, {reinterpret_cast<const uint8_t*>(&info), n}));
  return actual;
}

Result<uint64_t> SigInfo(Task& t, int pid, GuestAddr addr, bool set) {
  abi::SigInfo info{};
  if (set) {
    info = SENTRY_TRY(t.CopyIn<abi::SigInfo>(addr));
    info.pad0 = 0;  // never a Sentry-internal mark
  }
  {
    absl::MutexLock l(&t.kernel().mu());
    Task& e = *SENTRY_TRY(kernel::PtraceTracee(t, pid, true));
    if (!e.ptrace_.has_siginfo) return Errno(EINVAL);
    if (set) {
      e.ptrace_.siginfo = info;
      return 0;
    }
    info = e.ptrace_.siginfo;
  }
  SENTRY_TRY(t.CopyOut(addr, info));
  return 0;
}

Result<uint64_t> Resume(Task& t, int pid, PtraceResume how, uint64_t sig) {
  if (sig > static_cast<uint64_t>(abi::kNumSignals)) return Errno(EIO);
  absl::MutexLock l(&t.kernel().mu());
  Task& e = *SENTRY_TRY(kernel::PtraceTracee(t, pid, true));
  if (how == PtraceResume::kDetach) {
    kernel::PtraceDetach(e, static_cast<int>(sig));
  } else {
    kernel::PtraceContinue(e, how, static_cast<int>(sig));
  }
  return 0;
}

// Requests on a tracee that need not be stopped: KILL, INTERRUPT, LISTEN (group-stop only).
Result<uint64_t> Control(Task& t, int64_t request, int pid) {
  kernel::Kernel& k = t.kernel();
  absl::MutexLock l(&k.mu());
  Task& e = *SENTRY_TRY(kernel::PtraceTracee(t, pid, request == PTRACE_LISTEN));
  if (request == PTRACE_KILL) {
    k.GroupExit(e.tg(), kernel::SignalStatus(SIGKILL, false));
    return 0;
  }
  if (!e.ptrace_.seized) return Errno(EIO);
  if (request == PTRACE_INTERRUPT) {
    kernel::PtraceInterrupt(e);
    return 0;
  }
  // LISTEN only from a PTRACE_EVENT_STOP trap.
  if ((e.ptrace_.status >> 16) != PTRACE_EVENT_STOP) return Errno(EIO);
  kernel::PtraceContinue(e, PtraceResume::kListen, 0);
  return 0;
}

}  // namespace

Result<uint64_t> SysPtrace(Task& t, int64_t request, int pid, uint64_t addr, uint64_t data) {
  switch (request) {
    case PTRACE_TRACEME:
      SENTRY_TRY(kernel::PtraceTraceme(t));
      return 0;
    case PTRACE_ATTACH:
      SENTRY_TRY(kernel::PtraceAttach(t, pid, false, 0));
      return 0;
    case PTRACE_SEIZE:
      if (addr != 0) return Errno(EIO);
      SENTRY_TRY(kernel::PtraceAttach(t, pid, true, static_cast<uint32_t>(data)));
      return 0;
    case PTRACE_KILL:
    case PTRACE_INTERRUPT:
    case PTRACE_LISTEN:
      return Control(t, request, pid);
    case PTRACE_PEEKTEXT:
    case PTRACE_PEEKDATA:
      return PeekData(t, pid, addr, GuestAddr(data));
    case PTRACE_POKETEXT:
    case PTRACE_POKEDATA:
      return PokeData(t, pid, addr, data);
    case PTRACE_PEEKUSER:
      return PeekUser(t, pid, addr, GuestAddr(data));
    case PTRACE_POKEUSER:
      return PokeUser(t, pid, addr, data);
    case PTRACE_GETREGS:
      return GetRegs(t, pid, GuestAddr(data));
    case PTRACE_SETREGS:
      return SetRegs(t, pid, GuestAddr(data));
    case PTRACE_GETFPREGS:
      return GetFpRegs(t, pid, GuestAddr(data));
    case PTRACE_SETFPREGS:
      return SetFpRegs(t, pid, GuestAddr(data));
    case PTRACE_GETREGSET:
    case PTRACE_SETREGSET:
      return RegSet(t, pid, addr, GuestAddr(data), request == PTRACE_SETREGSET);
    case PTRACE_GETSIGINFO:
    case PTRACE_SETSIGINFO:
      return SigInfo(t, pid, GuestAddr(data), request == PTRACE_SETSIGINFO);
    case PTRACE_GET_SYSCALL_INFO:
      return GetSyscallInfo(t, pid, addr, GuestAddr(data));
    case PTRACE_SETOPTIONS: {
      if (data & ~uint64_t{PTRACE_O_MASK}) return Errno(EINVAL);
      absl::MutexLock l(&t.kernel().mu());
      SENTRY_TRY(kernel::PtraceTracee(t, pid, true))->ptrace_.options = static_cast<uint32_t>(data);
      return 0;
    }
    case PTRACE_GETEVENTMSG: {
      uint64_t msg;
      {
        absl::MutexLock l(&t.kernel().mu());
        msg = SENTRY_TRY(kernel::PtraceTracee(t, pid, true))->ptrace_.event_msg;
      }
      SENTRY_TRY(t.CopyOut(GuestAddr(data), msg));
      return 0;
    }
    case PTRACE_CONT:
      return Resume(t, pid, PtraceResume::kCont, data);
    case PTRACE_SYSCALL:
      return Resume(t, pid, PtraceResume::kSyscall, data);
    case PTRACE_SINGLESTEP:
      return Resume(t, pid, PtraceResume::kSingleStep, data);
    case PTRACE_DETACH:
      return Resume(t, pid, PtraceResume::kDetach, data);
    default:
      return Errno(EIO);
  }
}

}  // namespace sentry::syscalls
