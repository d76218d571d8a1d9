#include "sentry/kernel/seccomp.h"

#include <linux/audit.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <sys/syscall.h>

#include <cstring>

#include "sentry/kernel/kernel.h"

namespace sentry::kernel {
namespace {

constexpr uint32_t kDataSize = 64;        // sizeof(struct seccomp_data)
constexpr uint32_t kMaxInsns = 4096;      // BPF_MAXINSNS
constexpr uint32_t kMaxPathInsns = 32768;  // MAX_INSNS_PER_PATH: 256 KiB of instructions
constexpr int kMemWords = 16;             // BPF_MEMWORDS

// The opcodes seccomp accepts (after its LEN rewrites), as in Linux's seccomp_check_filter.
bool Allowed(uint16_t code) {
  switch (code) {
    case BPF_RET | BPF_K:
    case BPF_RET | BPF_A:
    case BPF_ALU | BPF_ADD | BPF_K:
    case BPF_ALU | BPF_ADD | BPF_X:
    case BPF_ALU | BPF_SUB | BPF_K:
    case BPF_ALU | BPF_SUB | BPF_X:
    case BPF_ALU | BPF_MUL | BPF_K:
    case BPF_ALU | BPF_MUL | BPF_X:
    case BPF_ALU | BPF_DIV | BPF_K:
    case BPF_ALU | BPF_DIV | BPF_X:
    case BPF_ALU | BPF_AND | BPF_K:
    case BPF_ALU | BPF_AND | BPF_X:
    case BPF_ALU | BPF_OR | BPF_K:
    case BPF_ALU | BPF_OR | BPF_X:
    case BPF_ALU | BPF_XOR | BPF_K:
    case BPF_ALU | BPF_XOR | BPF_X:
    case BPF_ALU | BPF_LSH | BPF_K:
    case BPF_ALU | BPF_LSH | BPF_X:
    case BPF_ALU | BPF_RSH | BPF_K:
    case BPF_ALU | BPF_RSH | BPF_X:
    case BPF_ALU | BPF_NEG:
    case BPF_LD | BPF_W | BPF_ABS:
    case BPF_LD | BPF_IMM:
    case BPF_LDX | BPF_IMM:
    case BPF_MISC | BPF_TAX:
    case BPF_MISC | BPF_TXA:
    case BPF_LD | BPF_MEM:
    case BPF_LDX | BPF_MEM:
    case BPF_ST:
    case BPF_STX:
    case BPF_JMP | BPF_JA:
    case BPF_JMP | BPF_JEQ | BPF_K:
    case BPF_JMP | BPF_JEQ | BPF_X:
    case BPF_JMP | BPF_JGE | BPF_K:
    case BPF_JMP | BPF_JGE | BPF_X:
    case BPF_JMP | BPF_JGT | BPF_K:
    case BPF_JMP | BPF_JGT | BPF_X:
    case BPF_JMP | BPF_JSET | BPF_K:
    case BPF_JMP | BPF_JSET | BPF_X:
      return true;
    default:
      return false;
  }
}

bool IsConditionalJump(uint16_t code) {
  return BPF_CLASS(code) == BPF_JMP && BPF_OP(code) != BPF_JA;
}

// Linux's precedence: the action with the lowest value, compared as signed (KILL_PROCESS,
// 0x80000000, first).
int32_t ActionRank(uint32_t ret) { return static_cast<int32_t>(ret & SECCOMP_RET_ACTION_FULL); }

// Whether `ancestor` is `chain` or one of the filters it was built on.
bool IsAncestor(const SeccompFilter* ancestor, const SeccompFilter* chain) {
  if (ancestor == nullptr) return true;
  for (; chain; chain = chain->prev.get()) {
    if (chain == ancestor) return true;
  }
  return false;
}

abi::SigInfo SigsysInfo(Task& t, uint32_t data) {
  abi::SigInfo info{};
  info.signo = SIGSYS;
  info.errno_ = static_cast<int32_t>(data);
  info.code = 1;  // SYS_SECCOMP
  info.f.sys.call_addr = t.regs_.rip;
  info.f.sys.syscall = static_cast<int32_t>(t.regs_.orig_rax);
  info.f.sys.arch = AUDIT_ARCH_X86_64;
  return info;
}

// SECCOMP_RET_KILL_*: the process, or only this thread while others live, dies of SIGSYS.
int64_t Kill(Task& t, uint32_t action, uint32_t data) {
  bool whole_process = action != SECCOMP_RET_KILL_THREAD;
  {
    absl::MutexLock l(&t.kernel().mu());
    t.seccomp_.mode = -1;  // SECCOMP_MODE_DEAD: nothing more of this thread may run
    if (!whole_process && t.tg().tasks.size() > 1) {
      t.SetExiting(SignalStatus(SIGSYS, false));
      return -ENOSYS;
    }
  }
  // As Linux: the registers as the guest made the call, and a SIGSYS nothing can catch.
  t.regs_.rax = t.regs_.orig_rax;
  t.ForceSignal(SigsysInfo(t, data), /*reset_handler=*/true);
  return static_cast<int64_t>(t.regs_.orig_rax);
}

}  // namespace

int SeccompState::count() const {
  int n = 0;
  for (const SeccompFilter* f = filter.get(); f; f = f->prev.get()) n++;
  return n;
}

Result<std::vector<sock_filter>> CheckSeccompProgram(std::vector<sock_filter> prog) {
  uint32_t len = static_cast<uint32_t>(prog.size());
  if (len == 0 || len > kMaxInsns) return Errno(EINVAL);
  // Which memory slots are written on every path to each instruction (a load of another one
  // is refused).
  std::vector<uint16_t> valid_at(len, 0xffff);
  uint16_t valid = 0;
  for (uint32_t pc = 0; pc < len; pc++) {
    sock_filter& in = prog[pc];
    // The two loads of the data's length become constants.
    if (in.code == (BPF_LD | BPF_W | BPF_LEN)) {
      in.code = BPF_LD | BPF_IMM;
      in.k = kDataSize;
    } else if (in.code == (BPF_LDX | BPF_W | BPF_LEN)) {
      in.code = BPF_LDX | BPF_IMM;
      in.k = kDataSize;
    }
    if (!Allowed(in.code)) return Errno(EINVAL);
    valid &= valid_at[pc];
    switch (in.code) {
      case BPF_LD | BPF_W | BPF_ABS:
        if (in.k >= kDataSize || (in.k & 3)) return Errno(EINVAL);
        break;
      case BPF_ALU | BPF_DIV | BPF_K:
        if (in.k == 0) return Errno(EINVAL);
        break;
      case BPF_ALU | BPF_LSH | BPF_K:
      case BPF_ALU | BPF_RSH | BPF_K:
        if (in.k >= 32) return Errno(EINVAL);
        break;
      case BPF_ST:
      case BPF_STX:
        if (in.k >= kMemWords) return Errno(EINVAL);
        valid |= static_cast<uint16_t>(1u << in.k);
        break;
      case BPF_LD | BPF_MEM:
      case BPF_LDX | BPF_MEM:
        if (in.k >= kMemWords || !(valid & (1u << in.k))) return Errno(EINVAL);
        break;
      case BPF_JMP | BPF_JA:
        if (in.k >= len - pc - 1) return Errno(EINVAL);
        valid_at[pc + 1 + in.k] &= valid;
        valid = 0xffff;
        break;
      default:
        if (IsConditionalJump(in.code)) {
          if (pc + in.jt + 1 >= len || pc + in.jf + 1 >= len) return Errno(EINVAL);
          valid_at[pc + 1 + in.jt] &= valid;
          valid_at[pc + 1 + in.jf] &= valid;
          valid = 0xffff;
        }
        break;
    }
  }
  if (BPF_CLASS(prog[len - 1].code) != BPF_RET) return Errno(EINVAL);
  return prog;
}

uint32_t RunSeccompProgram(const std::vector<sock_filter>& prog, const uint8_t (&data)[64]) {
  uint32_t a = 0, x = 0;
  uint32_t mem[kMemWords] = {};
  for (size_t pc = 0; pc < prog.size(); pc++) {
    const sock_filter& in = prog[pc];
    uint32_t src = BPF_SRC(in.code) == BPF_X ? x : in.k;
    switch (BPF_CLASS(in.code)) {
      case BPF_LD:
        if (BPF_MODE(in.code) == BPF_ABS) {
          memcpy(&a, data + in.k, 4);
        } else if (BPF_MODE(in.code) == BPF_MEM) {
          a = mem[in.k];
        } else {
          a = in.k;
        }
        break;
      case BPF_LDX:
        x = BPF_MODE(in.code) == BPF_MEM ? mem[in.k] : in.k;
        break;
      case BPF_ST:
        mem[in.k] = a;
        break;
      case BPF_STX:
        mem[in.k] = x;
        break;
      case BPF_MISC:
        if (BPF_MISCOP(in.code) == BPF_TAX) {
          x = a;
        } else {
          a = x;
        }
        break;
      case BPF_ALU:
        switch (BPF_OP(in.code)) {
          case BPF_ADD: a += src; break;
          case BPF_SUB: a -= src; break;
          case BPF_MUL: a *= src; break;
          case BPF_DIV:
            if (src == 0) return 0;  // the program ends with 0: SECCOMP_RET_KILL_THREAD
            a /= src;
            break;
          case BPF_AND: a &= src; break;
          case BPF_OR: a |= src; break;
          case BPF_XOR: a ^= src; break;
          case BPF_LSH: a <<= (src & 31); break;
          case BPF_RSH: a >>= (src & 31); break;
          case BPF_NEG: a = 0 - a; break;
        }
        break;
      case BPF_JMP:
        switch (BPF_OP(in.code)) {
          case BPF_JA: pc += in.k; break;
          case BPF_JEQ: pc += a == src ? in.jt : in.jf; break;
          case BPF_JGT: pc += a > src ? in.jt : in.jf; break;
          case BPF_JGE: pc += a >= src ? in.jt : in.jf; break;
          case BPF_JSET: pc += (a & src) ? in.jt : in.jf; break;
        }
        break;
      case BPF_RET:
        return BPF_RVAL(in.code) == BPF_A ? a : in.k;
    }
  }
  return 0;  // unreachable: checked programs end with RET
}

std::optional<int64_t> SeccompCheckSyscall(Task& t) {
  SeccompState state;
  {
    absl::MutexLock l(&t.kernel().mu());
    state = t.seccomp_;
  }
  const platform::Registers& r = t.regs_;
  int nr = static_cast<int>(r.orig_rax);
  if (state.mode == SECCOMP_MODE_STRICT || state.mode < 0) {
    if (state.mode > 0 && (nr == SYS_read || nr == SYS_write || nr == SYS_exit ||
                           nr == SYS_rt_sigreturn)) {
      return std::nullopt;
    }
    // Strict mode's end for anything else: this thread dies of SIGKILL.
    absl::MutexLock l(&t.kernel().mu());
    t.seccomp_.mode = -1;
    t.SetExiting(SignalStatus(SIGKILL, false));
    if (t.tg().tasks.size() == 1) t.kernel().GroupExit(t.tg(), SignalStatus(SIGKILL, false));
    return -ENOSYS;
  }
  if (state.mode != SECCOMP_MODE_FILTER) return std::nullopt;
  // struct seccomp_data: nr, arch, instruction_pointer, args[6].
  uint8_t data[kDataSize];
  uint32_t arch = AUDIT_ARCH_X86_64;
  uint64_t args[6] = {r.rdi, r.rsi, r.rdx, r.r10, r.r8, r.r9};
  memcpy(data, &nr, 4);
  memcpy(data + 4, &arch, 4);
  memcpy(data + 8, &r.rip, 8);
  memcpy(data + 16, args, sizeof(args));
  uint32_t ret = SECCOMP_RET_ALLOW;
  for (const SeccompFilter* f = state.filter.get(); f; f = f->prev.get()) {
    uint32_t v = RunSeccompProgram(f->prog, data);
    if (ActionRank(v) < ActionRank(ret)) ret = v;
  }
  uint32_t action = ret & SECCOMP_RET_ACTION_FULL;
  uint32_t value = ret & SECCOMP_RET_DATA;
  switch (action) {
    case SECCOMP_RET_ALLOW:
    case SECCOMP_RET_LOG:
      return std::nullopt;
    case SECCOMP_RET_ERRNO:
      return -static_cast<int64_t>(std::min<uint32_t>(value, 4095));
    case SECCOMP_RET_TRAP:
      // The handler sees the registers as the guest made the call.
      t.ForceSignal(SigsysInfo(t, value), /*reset_handler=*/false);
      return static_cast<int64_t>(r.orig_rax);
    case SECCOMP_RET_TRACE:
    case SECCOMP_RET_USER_NOTIF:
      return -ENOSYS;  // no tracer, no listener
    default:
      return Kill(t, action, value);
  }
}

namespace {

Result<std::shared_ptr<const SeccompFilter>> PrepareFilter(Task& t, uint64_t fprog_addr,
                                                           bool log) {
  struct Fprog {
    uint16_t len;
    uint16_t pad[3];
    uint64_t filter;
  };
  Fprog fprog = SENTRY_TRY(t.CopyIn<Fprog>(GuestAddr(fprog_addr)));
  if (fprog.len == 0 || fprog.len > kMaxInsns) return Errno(EINVAL);
  std::vector<sock_filter> prog(fprog.len);
  SENTRY_TRY(t.CopyInBytes(GuestAddr(fprog.filter),
                           {reinterpret_cast<uint8_t*>(prog.data()),
                            prog.size() * sizeof(sock_filter)}));
  {
    // Without no_new_privs, only CAP_SYS_ADMIN may install a filter.
    absl::MutexLock l(&t.kernel().mu());
    const Credentials& c = t.tg().creds;
    if (!c.no_new_privs && !c.HasCapability(CAP_SYS_ADMIN)) return Errno(EACCES);
  }
  auto f = std::make_shared<SeccompFilter>();
  f->prog = SENTRY_TRY(CheckSeccompProgram(std::move(prog)));
  f->log = log;
  return std::shared_ptr<const SeccompFilter>(std::move(f));
}

Result<uint64_t> SetModeFilter(Task& t, unsigned flags, uint64_t args) {
  constexpr unsigned kKnown = SECCOMP_FILTER_FLAG_TSYNC | SECCOMP_FILTER_FLAG_LOG |
                              SECCOMP_FILTER_FLAG_SPEC_ALLOW | SECCOMP_FILTER_FLAG_NEW_LISTENER |
                              SECCOMP_FILTER_FLAG_TSYNC_ESRCH | (1u << 5);
  if (flags & ~kKnown) return Errno(EINVAL);
  // No user notification here (see seccomp.h): refused as by a kernel without it.
  if (flags & (SECCOMP_FILTER_FLAG_NEW_LISTENER | (1u << 5))) return Errno(EINVAL);
  auto filter = SENTRY_TRY(PrepareFilter(t, args, flags & SECCOMP_FILTER_FLAG_LOG));
  absl::MutexLock l(&t.kernel().mu());
  if (t.seccomp_.mode != 0 && t.seccomp_.mode != SECCOMP_MODE_FILTER) return Errno(EINVAL);
  auto node = std::make_shared<SeccompFilter>(*filter);
  node->prev = t.seccomp_.filter;
  uint32_t prev_insns = node->prev ? node->prev->path_insns + 4 : 0;
  node->path_insns = static_cast<uint32_t>(node->prog.size()) + prev_insns;
  if (node->path_insns > kMaxPathInsns) return Errno(ENOMEM);
  std::shared_ptr<const SeccompFilter> chain = std::move(node);
  if (flags & SECCOMP_FILTER_FLAG_TSYNC) {
    // Every other thread must be on this thread's chain or an older part of it.
    for (Task* o : t.tg().tasks) {
      if (o == &t) continue;
      if (o->seccomp_.mode == SECCOMP_MODE_STRICT || o->seccomp_.mode < 0 ||
          !IsAncestor(o->seccomp_.filter.get(), t.seccomp_.filter.get())) {
        if (flags & SECCOMP_FILTER_FLAG_TSYNC_ESRCH) return Errno(ESRCH);
        return static_cast<uint64_t>(o->tid());
      }
    }
    for (Task* o : t.tg().tasks) {
      o->seccomp_ = {SECCOMP_MODE_FILTER, chain};
      o->seccomp_on_.store(true);
    }
  }
  t.seccomp_ = {SECCOMP_MODE_FILTER, std::move(chain)};
  t.seccomp_on_.store(true);
  return 0;
}

Result<uint64_t> SetModeStrict(Task& t) {
  absl::MutexLock l(&t.kernel().mu());
  if (t.seccomp_.mode != 0 && t.seccomp_.mode != SECCOMP_MODE_STRICT) return Errno(EINVAL);
  t.seccomp_.mode = SECCOMP_MODE_STRICT;
  t.seccomp_on_.store(true);
  return 0;
}

}  // namespace

Result<void> InstallInitialSeccomp(Task& t, std::vector<sock_filter> prog) {
  auto f = std::make_shared<SeccompFilter>();
  f->prog = SENTRY_TRY(CheckSeccompProgram(std::move(prog)));
  f->path_insns = static_cast<uint32_t>(f->prog.size());
  absl::MutexLock l(&t.kernel().mu());
  t.seccomp_ = {SECCOMP_MODE_FILTER, std::move(f)};
  t.seccomp_on_.store(true);
  return Ok();
}

Result<uint64_t> SeccompSyscall(Task& t, unsigned op, unsigned flags, uint64_t args) {
  switch (op) {
    case SECCOMP_SET_MODE_STRICT:
      if (flags != 0 || args != 0) return Errno(EINVAL);
      return SetModeStrict(t);
    case SECCOMP_SET_MODE_FILTER:
      return SetModeFilter(t, flags, args);
    case SECCOMP_GET_ACTION_AVAIL: {
      if (flags != 0) return Errno(EINVAL);
      uint32_t action = SENTRY_TRY(t.CopyIn<uint32_t>(GuestAddr(args)));
      switch (action) {
        case SECCOMP_RET_KILL_PROCESS:
        case SECCOMP_RET_KILL_THREAD:
        case SECCOMP_RET_TRAP:
        case SECCOMP_RET_ERRNO:
        case SECCOMP_RET_TRACE:
        case SECCOMP_RET_LOG:
        case SECCOMP_RET_ALLOW:
          return 0;
        default:
          return Errno(EOPNOTSUPP);  // USER_NOTIF among them (see seccomp.h)
      }
    }
    default:
      return Errno(EINVAL);  // SECCOMP_GET_NOTIF_SIZES among them
  }
}

Result<uint64_t> SeccompPrctlSet(Task& t, uint64_t mode, uint64_t filter) {
  if (mode == SECCOMP_MODE_STRICT) return SeccompSyscall(t, SECCOMP_SET_MODE_STRICT, 0, filter);
  if (mode == SECCOMP_MODE_FILTER) return SetModeFilter(t, 0, filter);
  return Errno(EINVAL);
}

}  // namespace sentry::kernel
