// Signal generation, delivery, signal frames and syscall restart.
#include <asm/unistd.h>
#include <signal.h>

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "sentry/base/logging.h"
#include "sentry/kernel/kernel.h"

namespace sentry::kernel {
namespace {

using abi::SigBit;

constexpr abi::SigSet kStopSignals = SigBit(SIGSTOP) | SigBit(SIGTSTP) | SigBit(SIGTTIN) |
                                     SigBit(SIGTTOU);
constexpr abi::SigSet kIgnoreByDefault = SigBit(SIGCHLD) | SigBit(SIGURG) | SigBit(SIGWINCH) |
                                         SigBit(SIGCONT);
constexpr abi::SigSet kCoreSignals = SigBit(SIGQUIT) | SigBit(SIGILL) | SigBit(SIGTRAP) |
                                     SigBit(SIGABRT) | SigBit(SIGBUS) | SigBit(SIGFPE) |
                                     SigBit(SIGSEGV) | SigBit(SIGXCPU) | SigBit(SIGXFSZ) |
                                     SigBit(SIGSYS);
constexpr abi::SigSet kSynchronous = SigBit(SIGSEGV) | SigBit(SIGBUS) | SigBit(SIGILL) |
                                     SigBit(SIGTRAP) | SigBit(SIGFPE) | SigBit(SIGSYS);

// Whether a fatal `sig` shows as a core dump (WCOREDUMP, CLD_DUMPED), as Linux's do_coredump
// with a file core_pattern decides: a core signal, a dumpable process and RLIMIT_CORE of at
// least ELF's min_coredump (a page). Partial: the Sentry writes no core file.
// Preconditions: Kernel::mu_ held.
bool DumpsCore(const ThreadGroup& tg, int sig) {
  return (kCoreSignals & SigBit(sig)) && tg.dumpable && tg.rlimits[RLIMIT_CORE].cur >= 4096;
}

bool IsRestart(int64_t r) {
  return r == -kERESTARTSYS || r == -kERESTARTNOINTR || r == -kERESTARTNOHAND ||
         r == -kERESTART_RESTARTBLOCK;
}

bool Ignored(ThreadGroup& tg, int sig) {
  const abi::KSigAction& a = tg.handlers->actions[sig - 1];
  if (a.handler == abi::kSigIgn) return true;
  return a.handler == abi::kSigDfl && (kIgnoreByDefault & SigBit(sig));
}

}  // namespace

void PendingSignals::Enqueue(const abi::SigInfo& info) {
  abi::SigSet bit = SigBit(info.signo);
  // A timer's signal queues even behind a pending standard signal of the same number, as
  // Linux's posixtimer_send_sigqueue.
  if (info.signo < 32 && (set & bit) && info.pad0 != abi::kSigInfoTimerMark) return;
  queue.push_back(info);
  set |= bit;
  set_unlocked.store(set, std::memory_order_relaxed);
}

std::optional<abi::SigInfo> PendingSignals::Dequeue(abi::SigSet blocked) {
  abi::SigSet ready = set & ~blocked;
  if (!ready) return std::nullopt;
  abi::SigSet pick = ready & kSynchronous ? ready & kSynchronous : ready;
  int sig = __builtin_ctzll(pick) + 1;
  for (auto it = queue.begin(); it != queue.end(); ++it) {
    if (it->signo != sig) continue;
    abi::SigInfo info = *it;
    queue.erase(it);
    bool more = false;
    for (auto& q : queue) more |= q.signo == sig;
    if (!more) set &= ~SigBit(sig);
    set_unlocked.store(set, std::memory_order_relaxed);
    return info;
  }
  set &= ~SigBit(sig);
  set_unlocked.store(set, std::memory_order_relaxed);
  return std::nullopt;
}

void PendingSignals::Discard(abi::SigSet which) {
  std::erase_if(queue, [which](const abi::SigInfo& i) { return which & SigBit(i.signo); });
  set &= ~which;
  set_unlocked.store(set, std::memory_order_relaxed);
}

bool Kernel::SignalPending(Task& t) {
  ThreadGroup& tg = *t.tg_;
  if (tg.exiting || t.exec_kill_) return true;
  if (tg.stopped && !t.group_stopped_) return true;
  if (t.ptrace_.interrupt) return true;
  if (frozen_ && !t.frozen_) return true;
  return ((t.pending_.set | tg.pending.set) & ~t.mask_) != 0;
}

void Kernel::WakeForSignals(ThreadGroup& tg) {
  for (Task* t : tg.tasks) {
    if (tg.pending.set & ~t->mask_) {
      t->Interrupt();
      return;
    }
  }
}

void Kernel::GroupExit(ThreadGroup& tg, int status) {
  if (tg.exiting) return;
  tg.exiting = true;
  tg.exit_status = status;
  for (Task* t : tg.tasks) t->Interrupt();
}

// Effects of a signal at generation time: SIGKILL kills, SIGCONT continues, stop signals
// cancel a pending SIGCONT and vice versa. Returns false if the signal is dropped.
static bool PrepareSignal(Kernel& k, ThreadGroup& tg, const abi::SigInfo& info, bool blocked)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(k.mu()) {
  int sig = info.signo;
  if (tg.exiting) return false;
  // The sandbox's init is unkillable from inside its PID namespace (Linux's
  // SIGNAL_UNKILLABLE): signals it has no handler for are dropped unless blocked, and
  // SIGKILL/SIGSTOP always. Faults do not come through here, so they still kill it. As
  // Linux forces the kernel's own SIGKILL and SIGSTOP (SEND_SIG_PRIV: RLIMIT_CPU's hard
  // limit), those reach it.
  // A nested PID namespace's init has the same protection, except that SIGKILL and SIGSTOP
  // from an ancestor namespace (a sender that has no number in the init's) reach it.
  bool is_ns_init = tg.tgid == 1 || (tg.pidns != nullptr && tg.pidns->init == &tg);
  Task* sender = Task::Current();
  bool from_ancestor =
      sender != nullptr && tg.pidns != nullptr && !tg.pidns->Contains(sender->tg().pidns.get());
  bool forced =
      (info.code == abi::kSI_KERNEL || from_ancestor) && (sig == SIGKILL || sig == SIGSTOP);
  if (is_ns_init && !forced &&
      (sig == SIGKILL || sig == SIGSTOP ||
       (!blocked && tg.handlers->actions[sig - 1].handler == abi::kSigDfl))) {
    return false;
  }
  if (sig == SIGKILL) {
    k.GroupExit(tg, SignalStatus(SIGKILL, false));
    return false;
  }
  if (sig == SIGCONT) {
    tg.pending.Discard(kStopSignals);
    for (Task* t : tg.tasks) t->pending_.Discard(kStopSignals);
    if (tg.stopped) {
      tg.stopped = false;
      tg.stop_to_report = false;
      tg.continue_to_report = true;
      for (Task* t : tg.tasks) t->Interrupt();
      k.NotifyParent(tg, abi::kCLD_CONTINUED, SIGCONT);
    }
  } else if (SigBit(sig) & kStopSignals) {
    tg.pending.Discard(SigBit(SIGCONT));
    for (Task* t : tg.tasks) t->pending_.Discard(SigBit(SIGCONT));
  }
  return blocked || !Ignored(tg, sig) || PtraceAnyTraced(tg);
}

// `info` as the receiving process's PID namespace shows it (Linux's send_signal_locked): the
// pid a kill, tgkill or SIGCHLD names is the kernel's global one, and becomes its number
// there, or 0; a sender-made siginfo (rt_sigqueueinfo) keeps its pid unless the sender has
// no number there. Preconditions: Kernel::mu_ held.
static abi::SigInfo ForReceiver(const ThreadGroup& tg, const abi::SigInfo& info) {
  if (tg.pidns == nullptr || tg.pidns->level() == 0) return info;
  abi::SigInfo out = info;
  bool kernel_made = info.code == abi::kSI_USER || info.code == abi::kSI_TKILL ||
                     (info.signo == SIGCHLD && info.code > 0 && info.code < abi::kSI_KERNEL);
  if (kernel_made) {
    out.f.kill.pid = tg.pidns->Local(info.f.kill.pid);
  } else if (info.code < 0) {
    Task* sender = Task::Current();
    if (sender != nullptr && !tg.pidns->Contains(sender->tg().pidns.get())) out.f.kill.pid = 0;
  }
  return out;
}

bool Kernel::SendGroupSignal(ThreadGroup& tg, const abi::SigInfo& in) {
  abi::SigInfo info = ForReceiver(tg, in);
  // As Linux's sig_ignored() for kill(2): the mask of the task the pid names (the leader, or
  // the first thread left once it has exited) decides whether an ignored signal is kept.
  Task* named = tg.leader != nullptr && std::find(tg.tasks.begin(), tg.tasks.end(), tg.leader) !=
                                            tg.tasks.end()
                    ? tg.leader
                    : (tg.tasks.empty() ? nullptr : tg.tasks.front());
  bool blocked =
      named != nullptr && ((named->mask_ | named->real_blocked_) & SigBit(info.signo)) != 0;
  if (!PrepareSignal(*this, tg, info, blocked)) return false;
  tg.pending.Enqueue(info);
  tg.signal_queued.Notify(kEventIn);
  WakeForSignals(tg);
  return true;
}

bool Kernel::SendTaskSignal(Task& t, const abi::SigInfo& in) {
  abi::SigInfo info = ForReceiver(*t.tg_, in);
  bool blocked = t.mask_ & SigBit(info.signo);
  bool really_blocked = (t.mask_ | t.real_blocked_) & SigBit(info.signo);
  if (!PrepareSignal(*this, *t.tg_, info, really_blocked)) return false;
  t.pending_.Enqueue(info);
  t.tg_->signal_queued.Notify(kEventIn);
  if (!blocked) t.Interrupt();
  return true;
}

std::optional<abi::SigInfo> Kernel::DequeueSignal(Task& t, abi::SigSet blocked) {
  ProcessTimers& timers = t.tg_->timers;
  for (;;) {
    bool shared = false;
    std::optional<abi::SigInfo> info = t.pending_.Dequeue(blocked);
    if (!info) {
      info = t.tg_->pending.Dequeue(blocked);
      shared = true;
    }
    if (!info) return std::nullopt;
    // Any SIGALRM taken from the process's queue re-arms a periodic ITIMER_REAL (Linux).
    if (shared && info->signo == SIGALRM && timers.itimers[0])
      timers.itimers[0]->SignalTaken(*info);
    if (info->pad0 == abi::kSigInfoTimerMark) {
      auto it = timers.posix.find(info->f.timer.tid);
      if (it == timers.posix.end() || !it->second->SignalTaken(*info)) continue;
    }
    return info;
  }
}

// Builds the rt signal frame on the guest stack and points the registers at the handler.
static Result<void> SetupFrame(Task& t, const abi::SigInfo& info, const abi::KSigAction& act,
                               abi::SigSet old_mask) {
  platform::Registers& r = t.regs_;
  SENTRY_TRY(t.ctx().SyncRegisters(r));
  SENTRY_TRY(RseqOnSignalDelivery(t));
  uint64_t sp = r.rsp - 128;  // the red zone
  bool on_alt = t.altstack_.flags != abi::kSS_DISABLE && r.rsp > t.altstack_.sp &&
                r.rsp <= t.altstack_.sp + t.altstack_.size;
  if ((act.flags & abi::kSA_ONSTACK) && t.altstack_.flags != abi::kSS_DISABLE && !on_alt) {
    sp = t.altstack_.sp + t.altstack_.size;
  }
  std::vector<uint8_t> fp = SENTRY_TRY(t.ctx().GetFpState());
  size_t fp_size = fp.size();
  uint32_t magic2 = abi::kFpXstateMagic2;
  fp.insert(fp.end(), reinterpret_cast<uint8_t*>(&magic2),
            reinterpret_cast<uint8_t*>(&magic2) + 4);
  sp = (sp - fp.size()) & ~uint64_t{63};
  uint64_t fp_addr = sp;
  sp = ((sp - sizeof(abi::RtSigFrame)) & ~uint64_t{15}) - 8;

  abi::RtSigFrame f{};
  f.pretcode = act.restorer;
  f.uc.flags = abi::kUC_FP_XSTATE | abi::kUC_SIGCONTEXT_SS | abi::kUC_STRICT_RESTORE_SS;
  f.uc.stack = t.altstack_;
  if (on_alt) f.uc.stack.flags = abi::kSS_ONSTACK;
  abi::SigContext& m = f.uc.mcontext;
  m.r8 = r.r8, m.r9 = r.r9, m.r10 = r.r10, m.r11 = r.r11, m.r12 = r.r12, m.r13 = r.r13;
  m.r14 = r.r14, m.r15 = r.r15, m.rdi = r.rdi, m.rsi = r.rsi, m.rbp = r.rbp, m.rbx = r.rbx;
  m.rdx = r.rdx, m.rax = r.rax, m.rcx = r.rcx, m.rsp = r.rsp, m.rip = r.rip;
  m.eflags = r.eflags;
  m.cs = static_cast<uint16_t>(r.cs);
  m.ss = static_cast<uint16_t>(r.ss);
  if (info.signo == SIGSEGV || info.signo == SIGBUS) m.cr2 = info.f.fault.addr;
  m.trapno = info.signo == SIGSEGV ? 14 : 0;
  m.err = info.signo == SIGSEGV ? 4 | 2 : 0;  // user-mode write fault, as a best guess
  m.oldmask = old_mask;
  m.fpstate = fp_addr;
  f.uc.sigmask = old_mask;
  f.info = info;
  (void)fp_size;
  SENTRY_TRY(t.CopyOutBytes(GuestAddr(fp_addr), fp));
  SENTRY_TRY(t.CopyOut(GuestAddr(sp), f));

  r.rip = act.handler;
  r.rsp = sp;
  r.rdi = info.signo;
  r.rsi = sp + offsetof(abi::RtSigFrame, info);
  r.rdx = sp + offsetof(abi::RtSigFrame, uc);
  r.rax = 0;
  r.eflags &= ~uint64_t{0x400 | 0x100 | 0x10000};  // DF, TF, RF
  return Ok();
}

bool Task::SignalsMayNeedWork(int64_t ret) const ABSL_NO_THREAD_SAFETY_ANALYSIS {
  if (IsRestart(ret) || saved_mask_) return true;
  // mask_ is written under the lock by this thread, or by a tracer while the task is
  // stopped: a traced task always takes the locked path.
  if (ptraced_.load(std::memory_order_relaxed)) return true;
  if (signal_work_.load(std::memory_order_acquire) || mask_ != mask_checked_) return true;
  abi::SigSet pending = pending_.set_unlocked.load(std::memory_order_relaxed) |
                        tg_->pending.set_unlocked.load(std::memory_order_relaxed);
  return (pending & ~mask_) != 0;
}

void Task::HandleSignals(bool after_syscall, int64_t ret) {
  for (;;) {
    abi::SigInfo info;
    abi::KSigAction act;
    abi::SigSet old_mask;
    {
      absl::MutexLock l(&k_.mu());
      // Whatever interrupts the task from here on sets it again (SignalsMayNeedWork).
      signal_work_.store(false, std::memory_order_relaxed);
      if (tg_->exiting || exec_kill_) {
        exiting_ = true;
        return;
      }
      // A traced task reports a group-stop (and PTRACE_INTERRUPT) to its tracer instead of
      // parking; once resumed it runs on while the group stays stopped, as on Linux.
      if (ptraced_.load(std::memory_order_relaxed) && PtraceJobTrap(*this)) continue;
      if (tg_->stopped && !ptraced_.load(std::memory_order_relaxed)) {
        group_stopped_ = true;
        while (tg_->stopped && !tg_->exiting && !exec_kill_ &&
               !ptraced_.load(std::memory_order_relaxed)) {
          k_.mu().Unlock();
          waiter_.WaitUntil(absl::InfiniteFuture());
          k_.mu().Lock();
        }
        group_stopped_ = false;
        continue;
      }
      if (k_.frozen_) {
        frozen_ = true;
        while (k_.frozen_ && !tg_->exiting && !exec_kill_) {
          k_.mu().Unlock();
          waiter_.WaitUntil(absl::InfiniteFuture());
          k_.mu().Lock();
        }
        frozen_ = false;
        continue;
      }
      auto next = k_.DequeueSignal(*this, mask_);
      if (!next) {
        mask_checked_ = mask_;
        break;
      }
      info = *next;
      if (ptraced_.load(std::memory_order_relaxed) && info.signo != SIGKILL) {
        std::optional<abi::SigInfo> chosen = PtraceSignalStop(*this, info);
        if (!chosen) continue;
        info = *chosen;
      }
      int sig = info.signo;
      act = tg_->handlers->actions[sig - 1];
      if (act.handler == abi::kSigIgn) continue;
      if (act.handler == abi::kSigDfl) {
        if (kIgnoreByDefault & SigBit(sig)) continue;
        if (kStopSignals & SigBit(sig)) {
          tg_->stopped = true;
          tg_->stop_signal = sig;
          tg_->stop_to_report = true;
          tg_->continue_to_report = false;
          for (Task* t : tg_->tasks) t->Interrupt();
          k_.NotifyParent(*tg_, abi::kCLD_STOPPED, sig);
          continue;
        }
        k_.GroupExit(*tg_, SignalStatus(sig, DumpsCore(*tg_, sig)));
        exiting_ = true;
        return;
      }
      // A handler runs: decide about the interrupted syscall first.
      if (after_syscall && IsRestart(ret)) {
        if (ret == -kERESTARTNOINTR || (ret == -kERESTARTSYS && (act.flags & abi::kSA_RESTART))) {
          regs_.rax = regs_.orig_rax;
          regs_.rip -= 2;
        } else {
          regs_.rax = static_cast<uint64_t>(-EINTR);
        }
        after_syscall = false;
      }
      old_mask = saved_mask_ ? *saved_mask_ : mask_;
      saved_mask_.reset();
      mask_ |= act.mask;
      if (!(act.flags & abi::kSA_NODEFER)) mask_ |= SigBit(sig);
      mask_ &= ~abi::kUnblockable;
      if (act.flags & abi::kSA_RESETHAND) tg_->handlers->actions[sig - 1].handler = abi::kSigDfl;
    }
    if (!SetupFrame(*this, info, act, old_mask).ok()) {
      absl::MutexLock l(&k_.mu());
      k_.GroupExit(*tg_, SignalStatus(SIGSEGV, true));
      exiting_ = true;
    }
    return;
  }
  // No handler ran: an interrupted syscall restarts transparently.
  if (after_syscall && IsRestart(ret)) {
    regs_.rax = ret == -kERESTART_RESTARTBLOCK ? __NR_restart_syscall : regs_.orig_rax;
    regs_.rip -= 2;
  }
  absl::MutexLock l(&k_.mu());
  if (saved_mask_) {
    mask_ = *saved_mask_;
    saved_mask_.reset();
  }
}

}  // namespace sentry::kernel
