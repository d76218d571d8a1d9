// Signals: handlers, masks, sending, waiting, sigreturn.
#include <signal.h>

#include <cstddef>

#include "syscalls/common.h"

namespace sentry::syscalls {

using abi::SigBit;

void RaiseSigpipe(Task& t) {
  abi::SigInfo info{};
  info.signo = SIGPIPE;
  info.code = abi::kSI_USER;
  info.f.kill.pid = t.tg().tgid;
  absl::MutexLock l(&t.kernel().mu());
  t.kernel().SendTaskSignal(t, info);
}

Result<uint64_t> SysRtSigaction(Task& t, int sig, GuestAddr act, GuestAddr oact, size_t size) {
  if (size != sizeof(abi::SigSet)) return Errno(EINVAL);
  if (sig < 1 || sig > abi::kNumSignals) return Errno(EINVAL);
  std::optional<abi::KSigAction> na;
  if (!act.IsNull()) {
    if (sig == SIGKILL || sig == SIGSTOP) return Errno(EINVAL);
    na = SENTRY_TRY(t.CopyIn<abi::KSigAction>(act));
    na->mask &= ~abi::kUnblockable;
  }
  abi::KSigAction old;
  {
    absl::MutexLock l(&t.kernel().mu());
    kernel::ThreadGroup& tg = t.tg();
    old = tg.handlers->actions[sig - 1];
    if (na) {
      tg.handlers->actions[sig - 1] = *na;
      // Setting SIG_IGN (or a default-ignore) discards what is pending (POSIX).
      if (na->handler == abi::kSigIgn ||
          (na->handler == abi::kSigDfl &&
           (sig == SIGCHLD || sig == SIGURG || sig == SIGWINCH))) {
        tg.pending.Discard(SigBit(sig));
        for (kernel::Task* o : tg.tasks) o->pending_.Discard(SigBit(sig));
        tg.timers.SignalsDiscarded();
      }
    }
  }
  if (!oact.IsNull()) SENTRY_TRY(t.CopyOut(oact, old));
  return 0;
}

Result<uint64_t> SysRtSigprocmask(Task& t, int how, GuestAddr set, GuestAddr oset, size_t size) {
  if (size != sizeof(abi::SigSet)) return Errno(EINVAL);
  std::optional<abi::SigSet> ns;
  if (!set.IsNull()) ns = SENTRY_TRY(t.CopyIn<abi::SigSet>(set));
  abi::SigSet old;
  {
    absl::MutexLock l(&t.kernel().mu());
    old = t.mask_;
    if (ns) {
      switch (how) {
        case SIG_BLOCK: t.mask_ |= *ns; break;
        case SIG_UNBLOCK: t.mask_ &= ~*ns; break;
        case SIG_SETMASK: t.mask_ = *ns; break;
        default: return Errno(EINVAL);
      }
      t.mask_ &= ~abi::kUnblockable;
    }
  }
  if (!oset.IsNull()) SENTRY_TRY(t.CopyOut(oset, old));
  return 0;
}

Result<uint64_t> SysRtSigreturn(Task& t) {
  platform::Registers& r = t.regs();
  uint64_t frame = r.rsp - 8;  // the handler's `ret` popped pretcode
  auto f = t.CopyIn<abi::RtSigFrame>(GuestAddr(frame));
  auto fail = [&]() -> Result<uint64_t> {
    absl::MutexLock l(&t.kernel().mu());
    t.kernel().GroupExit(t.tg(), kernel::SignalStatus(SIGSEGV, true));
    t.SetExiting(kernel::SignalStatus(SIGSEGV, true));
    return 0;
  };
  if (!f.ok()) return fail();
  const abi::SigContext& m = f->uc.mcontext;
  r.r8 = m.r8, r.r9 = m.r9, r.r10 = m.r10, r.r11 = m.r11, r.r12 = m.r12, r.r13 = m.r13;
  r.r14 = m.r14, r.r15 = m.r15, r.rdi = m.rdi, r.rsi = m.rsi, r.rbp = m.rbp, r.rbx = m.rbx;
  r.rdx = m.rdx, r.rax = m.rax, r.rcx = m.rcx, r.rsp = m.rsp, r.rip = m.rip;
  // Only the flags user mode may change (AC, OF, DF, TF, SF, ZF, AF, PF, CF, RF).
  constexpr uint64_t kFixMask = 0x40000 | 0x800 | 0x400 | 0x100 | 0x80 | 0x40 | 0x10 | 0x4 |
                                0x1 | 0x10000;
  r.eflags = (r.eflags & ~kFixMask) | (m.eflags & kFixMask);
  r.orig_rax = ~0ull;
  if (m.fpstate) {
    auto cur = t.ctx().GetFpState();
    if (!cur.ok()) return fail();
    std::vector<uint8_t> fp(cur->size());
    if (!t.CopyInBytes(GuestAddr(m.fpstate), fp).ok()) return fail();
    if (!t.ctx().SetFpState(fp).ok()) return fail();
  }
  {
    absl::MutexLock l(&t.kernel().mu());
    t.mask_ = f->uc.sigmask & ~abi::kUnblockable;
  }
  if (f->uc.stack.flags != abi::kSS_ONSTACK) {
    // Restore the alternate stack as sigaltstack would (errors ignored, as Linux does).
    if (f->uc.stack.flags == abi::kSS_DISABLE) {
      t.altstack_ = {0, abi::kSS_DISABLE, 0, 0};
    } else if (f->uc.stack.size >= abi::kMinSigStackSize) {
      t.altstack_ = f->uc.stack;
      t.altstack_.flags = 0;
    }
  }
  return r.rax;
}

Result<uint64_t> SysSigaltstack(Task& t, GuestAddr ss, GuestAddr old_ss) {
  platform::Registers& r = t.regs();
  bool on = t.altstack_.flags != abi::kSS_DISABLE && r.rsp > t.altstack_.sp &&
            r.rsp <= t.altstack_.sp + t.altstack_.size;
  if (!old_ss.IsNull()) {
    abi::StackT o = t.altstack_;
    if (on) o.flags = abi::kSS_ONSTACK;
    SENTRY_TRY(t.CopyOut(old_ss, o));
  }
  if (!ss.IsNull()) {
    abi::StackT n = SENTRY_TRY(t.CopyIn<abi::StackT>(ss));
    if (on) return Errno(EPERM);
    int mode = n.flags & ~abi::kSS_AUTODISARM;
    if (mode == abi::kSS_DISABLE) {
      t.altstack_ = {0, abi::kSS_DISABLE, 0, 0};
    } else if (mode == 0 || mode == abi::kSS_ONSTACK) {
      if (n.size < abi::kMinSigStackSize) return Errno(ENOMEM);
      t.altstack_ = {n.sp, 0, 0, n.size};
    } else {
      return Errno(EINVAL);
    }
  }
  return 0;
}

namespace {

abi::SigInfo UserInfo(Task& t, int sig, int code) {
  abi::SigInfo info{};
  info.signo = sig;
  info.code = code;
  info.f.kill.pid = t.tg().tgid;
  info.f.kill.uid = t.tg().creds.ruid;
  return info;
}

// check_kill_permission: a sender whose real or effective uid is the target's real or saved
// one, or with CAP_KILL, may signal it; so may anyone in its session send SIGCONT.
// Preconditions: Kernel::mu_ held.
bool MaySignal(Task& t, const kernel::ThreadGroup& g, int sig) {
  const kernel::Credentials& me = t.tg().creds;
  const kernel::Credentials& them = g.creds;
  if (&me == &them || me.HasCapability(CAP_KILL)) return true;
  if (me.euid == them.suid || me.euid == them.ruid || me.ruid == them.suid ||
      me.ruid == them.ruid) {
    return true;
  }
  return sig == SIGCONT && g.sid == t.tg().sid;
}

}  // namespace

Result<uint64_t> SysKill(Task& t, int pid, int sig) {
  if (sig < 0 || sig > abi::kNumSignals) return Errno(EINVAL);
  kernel::Kernel& k = t.kernel();
  absl::MutexLock l(&k.mu());
  abi::SigInfo info = UserInfo(t, sig, abi::kSI_USER);
  std::vector<kernel::ThreadGroup*> targets;
  if (pid > 0) {
    // A zombie still has its pid until reaped: Linux checks permission and succeeds,
    // delivering nothing.
    // Numbers are the caller's PID namespace's: a process outside it is not there (ESRCH).
    kernel::ThreadGroup* g = k.GroupByTgid(t.ToGlobalPid(pid));
    if (g == nullptr) return Errno(ESRCH);
    targets.push_back(g);
  } else {
    int pgid = pid == 0 ? t.tg().pgid : t.ToGlobalPid(-pid);
    const kernel::PidNamespace& ns = *t.tg().pidns;
    for (kernel::ThreadGroup* g : k.AllGroups()) {
      if (pid == -1 && g->zombie) continue;
      // kill(-1): every process the caller's namespace sees, but its init and the caller.
      if (!ns.Contains(g->pidns.get())) continue;
      if (pid == -1 ? (t.ToLocalPid(g->tgid) != 1 && g != &t.tg())
                    : (pgid > 0 && g->pgid == pgid)) {
        targets.push_back(g);
      }
    }
    if (targets.empty()) return Errno(ESRCH);
  }
  // One permitted target is success; kill(-1) does not even report the refused ones.
  bool sent = false;
  for (kernel::ThreadGroup* g : targets) {
    if (!MaySignal(t, *g, sig)) continue;
    sent = true;
    if (sig != 0 && !g->zombie) k.SendGroupSignal(*g, info);
  }
  return sent || pid == -1 ? Result<uint64_t>(0) : Errno(EPERM);
}

static Result<uint64_t> ThreadKill(Task& t, int tgid, int tid, const abi::SigInfo& info) {
  if (info.signo < 0 || info.signo > abi::kNumSignals || tid <= 0) return Errno(EINVAL);
  kernel::Kernel& k = t.kernel();
  absl::MutexLock l(&k.mu());
  kernel::Task* target = k.TaskByTid(t.ToGlobalPid(tid));
  if (target == nullptr || (tgid > 0 && target->tg().tgid != t.ToGlobalPid(tgid)) ||
      target->tg().zombie) {
    return Errno(ESRCH);
  }
  if (!MaySignal(t, target->tg(), info.signo)) return Errno(EPERM);
  if (info.signo == 0) return 0;
  k.SendTaskSignal(*target, info);
  return 0;
}

Result<uint64_t> SysTgkill(Task& t, int tgid, int tid, int sig) {
  if (tgid <= 0) return Errno(EINVAL);
  return ThreadKill(t, tgid, tid, UserInfo(t, sig, abi::kSI_TKILL));
}

Result<uint64_t> SysTkill(Task& t, int tid, int sig) {
  return ThreadKill(t, -1, tid, UserInfo(t, sig, abi::kSI_TKILL));
}

Result<uint64_t> SysRtSigqueueinfo(Task& t, int pid, int sig, GuestAddr uinfo) {
  abi::SigInfo info = SENTRY_TRY(t.CopyIn<abi::SigInfo>(uinfo));
  // Only the kernel may claim SI_USER/SI_KERNEL for another process.
  if ((info.code >= 0 || info.code == abi::kSI_TKILL) && pid != t.LocalPid(t.tg().tgid)) {
    return Errno(EPERM);
  }
  // Signal 0, as for kill, only checks that the target exists and may be signalled.
  if (sig < 0 || sig > abi::kNumSignals) return Errno(EINVAL);
  info.signo = sig;
  info.pad0 = 0;
  kernel::Kernel& k = t.kernel();
  absl::MutexLock l(&k.mu());
  kernel::ThreadGroup* g = k.GroupByTgid(t.ToGlobalPid(pid));
  if (g == nullptr || g->zombie) return Errno(ESRCH);
  if (!MaySignal(t, *g, sig)) return Errno(EPERM);
  if (sig == 0) return 0;
  k.SendGroupSignal(*g, info);
  return 0;
}

Result<uint64_t> SysRtTgsigqueueinfo(Task& t, int tgid, int tid, int sig, GuestAddr uinfo) {
  abi::SigInfo info = SENTRY_TRY(t.CopyIn<abi::SigInfo>(uinfo));
  if ((info.code >= 0 || info.code == abi::kSI_TKILL) && tgid != t.LocalPid(t.tg().tgid)) {
    return Errno(EPERM);
  }
  if (sig < 0 || sig > abi::kNumSignals) return Errno(EINVAL);  // ThreadKill checks signal 0
  info.signo = sig;
  info.pad0 = 0;
  return ThreadKill(t, tgid, tid, info);
}

Result<uint64_t> SysRtSigpending(Task& t, GuestAddr set, size_t size) {
  if (size > sizeof(abi::SigSet)) return Errno(EINVAL);
  abi::SigSet s;
  {
    absl::MutexLock l(&t.kernel().mu());
    s = (t.pending_.set | t.tg().pending.set) & t.mask_;
  }
  SENTRY_TRY(t.CopyOutBytes(set, {reinterpret_cast<uint8_t*>(&s), size}));
  return 0;
}

Result<uint64_t> SysRtSigsuspend(Task& t, GuestAddr set, size_t size) {
  if (size != sizeof(abi::SigSet)) return Errno(EINVAL);
  abi::SigSet m = SENTRY_TRY(t.CopyIn<abi::SigSet>(set));
  {
    absl::MutexLock l(&t.kernel().mu());
    t.saved_mask_ = t.mask_;
    t.mask_ = m & ~abi::kUnblockable;
  }
  for (;;) {
    auto r = t.Wait();
    if (!r.ok() && r.error() == kERESTARTSYS) return Errno(kERESTARTNOHAND);
  }
}

Result<uint64_t> SysPause(Task& t) {
  for (;;) {
    auto r = t.Wait();
    if (!r.ok() && r.error() == kERESTARTSYS) return Errno(kERESTARTNOHAND);
  }
}

Result<uint64_t> SysRtSigtimedwait(Task& t, GuestAddr set, GuestAddr info_addr,
                                   GuestAddr timeout, size_t size) {
  if (size != sizeof(abi::SigSet)) return Errno(EINVAL);
  abi::SigSet want = SENTRY_TRY(t.CopyIn<abi::SigSet>(set)) & ~abi::kUnblockable;
  absl::Time deadline = absl::InfiniteFuture();
  if (!timeout.IsNull()) deadline = absl::Now() + SENTRY_TRY(CopyInDuration(t, timeout));
  kernel::Kernel& k = t.kernel();
  abi::SigSet saved;
  {
    // Waiting signals are unblocked for the wait, so that sending them wakes us.
    absl::MutexLock l(&k.mu());
    saved = t.mask_;
  }
  std::optional<abi::SigInfo> got;
  Result<void> r = Ok();
  for (;;) {
    {
      absl::MutexLock l(&k.mu());
      got = k.DequeueSignal(t, ~want);
      if (got) break;
      t.real_blocked_ = saved;
      t.mask_ = saved & ~want;
    }
    r = t.Wait(deadline);
    {
      absl::MutexLock l(&k.mu());
      t.mask_ = saved;
      t.real_blocked_ = 0;
    }
    if (!r.ok()) {
      absl::MutexLock l(&k.mu());
      got = k.DequeueSignal(t, ~want);
      if (got) break;
      if (r.error() == ETIMEDOUT) return Errno(EAGAIN);
      return Errno(EINTR);
    }
  }
  {
    absl::MutexLock l(&k.mu());
    t.mask_ = saved;
  }
  if (!info_addr.IsNull()) SENTRY_TRY(t.CopyOut(info_addr, *got));
  return static_cast<uint64_t>(got->signo);
}

}  // namespace sentry::syscalls
