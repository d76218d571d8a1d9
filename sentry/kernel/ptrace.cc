// Guest ptrace: stops, resumption, events, attach and detach, and what wait() sees of tracees.
#include "sentry/kernel/ptrace.h"

#include <asm/unistd.h>
#include <sched.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include <algorithm>

#include "sentry/kernel/access.h"
#include "sentry/kernel/kernel.h"

namespace sentry::kernel {
namespace {

constexpr uint64_t kTrapFlag = 0x100;  // EFLAGS.TF

// The wait status of a PTRACE_EVENT stop, and the si_code of its SIGTRAP.
constexpr int EventStatus(int sig, int event) { return StopStatus(sig) | (event << 16); }

abi::SigInfo TrapInfo(int code) {
  abi::SigInfo info{};
  info.signo = SIGTRAP;
  info.code = code;
  return info;
}

// Whether `t` must leave a ptrace-stop at once and not stop again: SIGKILL, the process
// dying under another thread (exit_group, a fatal signal), or another thread's exec.
// Preconditions: Kernel::mu_ held; `t` is the calling task.
bool Killed(Task& t) {
  ThreadGroup& tg = t.tg();
  if (t.exec_kill_) return true;
  if (!tg.exiting) return false;
  return !t.exiting_ || tg.exit_status == SignalStatus(SIGKILL, false);
}

// SIGCHLD (CLD_TRAPPED) to the tracer's process and a wake-up for its wait().
void NotifyTracer(Kernel& k, Task& t) ABSL_EXCLUSIVE_LOCKS_REQUIRED(k.mu()) {
  Task* tracer = t.ptrace_.tracer;
  if (tracer == nullptr) return;
  ThreadGroup& tg = tracer->tg();
  if (!(tg.handlers->actions[SIGCHLD - 1].flags & abi::kSA_NOCLDSTOP)) {
    abi::SigInfo info{};
    info.signo = SIGCHLD;
    info.code = abi::kCLD_TRAPPED;
    info.f.chld.pid = t.tid();
    info.f.chld.uid = t.tg().creds.ruid;
    info.f.chld.status = (t.ptrace_.status >> 8) & 0xff;
    k.SendGroupSignal(tg, info);
  }
  tg.child_events.Notify();
}

// The status of a syscall-enter/exit-stop.
int SyscallTrapSignal(const PtraceState& st) {
  return SIGTRAP | ((st.options & PTRACE_O_TRACESYSGOOD) ? 0x80 : 0);
}

void Unlink(Task& tracee) {
  PtraceState& st = tracee.ptrace_;
  if (st.tracer != nullptr) std::erase(st.tracer->ptrace_.tracees, &tracee);
  st.tracer = nullptr;
  st.seized = false;
  st.options = 0;
  st.trace_syscalls = false;
  st.interrupt = false;
  st.to_report = false;
  st.pending_event = 0;
  tracee.ptraced_.store(false, std::memory_order_relaxed);
}

// Stops at a syscall boundary if the tracer asked for it. Returns false if killed.
bool SyscallStop(Task& t, PtraceStopKind kind) {
  absl::MutexLock l(&t.kernel().mu());
  PtraceState& st = t.ptrace_;
  if (st.tracer == nullptr || !st.trace_syscalls) return true;
  int sig = SyscallTrapSignal(st);
  abi::SigInfo info = TrapInfo(sig);
  return PtraceStop(t, StopStatus(sig), &info, kind) || !Killed(t);
}

// A PTRACE_EVENT stop if `option` is set. Returns whether it stopped.
bool EventStop(Task& t, uint32_t option, int event, uint64_t msg)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(t.kernel().mu()) {
  PtraceState& st = t.ptrace_;
  if (st.tracer == nullptr || !(st.options & option)) return false;
  st.event_msg = msg;
  abi::SigInfo info = TrapInfo(SIGTRAP | (event << 8));
  PtraceStop(t, EventStatus(SIGTRAP, event), &info, PtraceStopKind::kOther);
  return true;
}

}  // namespace

bool PtraceStop(Task& t, int status, const abi::SigInfo* info, PtraceStopKind kind) {
  Kernel& k = t.kernel();
  PtraceState& st = t.ptrace_;
  // The tracer may read or write any register: complete them first (seccomp notifications
  // carry only a few). Not under the lock: this may wait for the host to stop the stub.
  k.mu().Unlock();
  (void)t.ctx().SyncRegisters(t.regs_);
  k.mu().Lock();
  if (st.tracer == nullptr || Killed(t)) return false;
  if (st.stepping) {
    t.regs_.eflags &= ~kTrapFlag;
    st.stepping = false;
  }
  st.in_stop = true;
  st.to_report = true;
  st.status = status;
  st.kind = kind;
  st.has_siginfo = info != nullptr;
  if (info != nullptr) st.siginfo = *info;
  st.resume = PtraceResume::kNone;
  st.resume_signal = 0;
  NotifyTracer(k, t);
  for (;;) {
    if (st.work) {
      std::function<void()> fn = st.work;
      k.mu().Unlock();
      fn();
      k.mu().Lock();
      st.work = nullptr;
      continue;
    }
    if (Killed(t) || st.tracer == nullptr) break;
    if (st.resume == PtraceResume::kListen && (st.interrupt || !t.tg().stopped)) {
      // The group-stop a LISTENing tracee sat in is over, or the tracer interrupts: it traps
      // again to tell the tracer.
      st.resume = PtraceResume::kNone;
      st.interrupt = false;
      st.status = t.tg().stopped ? EventStatus(t.tg().stop_signal, PTRACE_EVENT_STOP)
                                 : EventStatus(SIGTRAP, PTRACE_EVENT_STOP);
      st.has_siginfo = false;
      st.to_report = true;
      NotifyTracer(k, t);
      continue;
    }
    if (st.resume != PtraceResume::kNone && st.resume != PtraceResume::kListen) break;
    k.mu().Unlock();
    t.waiter().WaitUntil(absl::InfiniteFuture());
    k.mu().Lock();
  }
  st.in_stop = false;
  st.to_report = false;
  if (Killed(t)) return false;
  if (st.tracer != nullptr && st.resume == PtraceResume::kSingleStep) {
    t.regs_.eflags |= kTrapFlag;
    st.stepping = true;
  }
  return true;
}

std::optional<abi::SigInfo> PtraceSignalStop(Task& t, const abi::SigInfo& info) {
  Task* tracer = t.ptrace_.tracer;
  int tracer_pid = tracer ? tracer->tg().tgid : 0;
  uint32_t tracer_uid = tracer ? tracer->tg().creds.ruid : 0;
  if (!PtraceStop(t, StopStatus(info.signo), &info, PtraceStopKind::kOther)) return std::nullopt;
  PtraceState& st = t.ptrace_;
  int sig = st.resume_signal;
  if (sig == 0) return std::nullopt;  // the tracer suppressed it
  abi::SigInfo out = st.has_siginfo ? st.siginfo : info;
  if (sig != out.signo) {
    // Another signal than the one stopped for: Linux describes it as sent by the tracer.
    out = abi::SigInfo{};
    out.signo = sig;
    out.code = abi::kSI_USER;
    out.f.kill.pid = tracer_pid;
    out.f.kill.uid = tracer_uid;
  }
  if (t.mask_ & abi::SigBit(sig)) {
    t.pending_.Enqueue(out);  // blocked now: it waits in the queue like any other
    return std::nullopt;
  }
  return out;
}

bool PtraceJobTrap(Task& t) {
  PtraceState& st = t.ptrace_;
  ThreadGroup& tg = t.tg();
  if (st.tracer == nullptr) return false;
  if (tg.stopped) {
    if (t.group_stopped_) return false;  // this group-stop was reported already
    t.group_stopped_ = true;
    st.interrupt = false;
    int sig = tg.stop_signal;
    if (!st.seized) {
      PtraceStop(t, StopStatus(sig), nullptr, PtraceStopKind::kOther);  // GETSIGINFO: EINVAL
      return true;
    }
    abi::SigInfo info = TrapInfo(sig | (PTRACE_EVENT_STOP << 8));
    info.signo = sig;
    PtraceStop(t, EventStatus(sig, PTRACE_EVENT_STOP), &info, PtraceStopKind::kOther);
    return true;
  }
  t.group_stopped_ = false;
  if (!st.interrupt) return false;
  st.interrupt = false;
  abi::SigInfo info = TrapInfo(SIGTRAP | (PTRACE_EVENT_STOP << 8));
  PtraceStop(t, EventStatus(SIGTRAP, PTRACE_EVENT_STOP), &info, PtraceStopKind::kOther);
  return true;
}

int64_t PtraceDispatch(Task& t) {
  Kernel& k = t.kernel();
  platform::Registers& r = t.regs_;
  r.rax = static_cast<uint64_t>(-ENOSYS);  // what a tracer sees at syscall entry
  if (!SyscallStop(t, PtraceStopKind::kSyscallEntry)) return -EINTR;
  uint64_t nr = r.orig_rax;  // the tracer may have changed it
  int old_tid = t.tid();
  int64_t ret;
  if (static_cast<int64_t>(nr) == -1) {
    ret = static_cast<int64_t>(r.rax);  // skipped: the result is what the tracer left
  } else {
    ret = k.dispatch()(t);
  }
  if (t.exiting_) return ret;  // exit, exit_group: no syscall-exit-stop
  {
    absl::MutexLock l(&k.mu());
    PtraceState& st = t.ptrace_;
    bool exec = (nr == __NR_execve || nr == __NR_execveat) && ret == 0;
    if (exec && !EventStop(t, PTRACE_O_TRACEEXEC, PTRACE_EVENT_EXEC, old_tid) &&
        st.tracer != nullptr && !st.seized) {
      // Without PTRACE_O_TRACEEXEC a traced (not seized) task gets a plain SIGTRAP.
      abi::SigInfo info{};
      info.signo = SIGTRAP;
      k.SendTaskSignal(t, info);
    }
    if (int event = std::exchange(st.pending_event, 0); event != 0) {
      uint32_t option = event == PTRACE_EVENT_FORK    ? PTRACE_O_TRACEFORK
                        : event == PTRACE_EVENT_VFORK ? PTRACE_O_TRACEVFORK
                                                      : PTRACE_O_TRACECLONE;
      EventStop(t, option, event, st.pending_event_msg);
    }
  }
  bool stepping;
  {
    absl::MutexLock l(&k.mu());
    stepping = t.ptrace_.stepping;
  }
  if (stepping) {
    // A single step over the syscall instruction ends here, with x86's TRAP_BRKPT, not one
    // instruction later (TF is cleared at that stop, when the registers are complete).
    abi::SigInfo info = TrapInfo(1 /* TRAP_BRKPT */);
    info.f.fault.addr = r.rip;
    t.ForceSignal(info, false);
    return ret;
  }
  if (!SyscallStop(t, PtraceStopKind::kSyscallExit)) return ret;
  return static_cast<int64_t>(r.rax);
}

void PtraceOnClone(Task& parent, Task& child, uint64_t flags) {
  PtraceState& ps = parent.ptrace_;
  if (ps.tracer == nullptr || (flags & CLONE_UNTRACED)) return;
  int event;
  uint32_t option;
  if (flags & CLONE_VFORK) {
    event = PTRACE_EVENT_VFORK, option = PTRACE_O_TRACEVFORK;
  } else if ((flags & CSIGNAL) != SIGCHLD) {
    event = PTRACE_EVENT_CLONE, option = PTRACE_O_TRACECLONE;
  } else {
    event = PTRACE_EVENT_FORK, option = PTRACE_O_TRACEFORK;
  }
  if (!(ps.options & option)) return;
  PtraceState& cs = child.ptrace_;
  cs.tracer = ps.tracer;
  cs.seized = ps.seized;
  cs.options = ps.options;
  ps.tracer->ptrace_.tracees.push_back(&child);
  child.ptraced_.store(true, std::memory_order_relaxed);
  if (cs.seized) {
    cs.interrupt = true;  // starts with a PTRACE_EVENT_STOP
  } else {
    abi::SigInfo info{};
    info.signo = SIGSTOP;
    info.code = abi::kSI_KERNEL;
    child.pending_.Enqueue(info);
  }
  ps.pending_event = event;
  // The new task's number in the tracer's PID namespace, as Linux's ptrace_event_pid.
  ps.pending_event_msg = static_cast<uint64_t>(ps.tracer->ToLocalPid(child.tid()));
}

void PtraceExitEvent(Task& t) {
  absl::MutexLock l(&t.kernel().mu());
  ThreadGroup& tg = t.tg();
  int status = tg.exiting ? tg.exit_status : t.exit_status_;
  EventStop(t, PTRACE_O_TRACEEXIT, PTRACE_EVENT_EXIT, static_cast<uint64_t>(status));
}

void PtraceOnTaskExit(Kernel& k, Task& t) {
  // As a tracer: every tracee goes free, or dies with PTRACE_O_EXITKILL.
  std::vector<Task*> tracees = std::move(t.ptrace_.tracees);
  t.ptrace_.tracees.clear();
  t.ptrace_.exited.clear();
  for (Task* e : tracees) {
    bool kill = e->ptrace_.options & PTRACE_O_EXITKILL;
    e->ptrace_.tracer = nullptr;  // already out of our list
    PtraceDetach(*e, 0);
    if (kill) k.GroupExit(e->tg(), SignalStatus(SIGKILL, false));
  }
  // As a tracee: the tracer hears of the exit, unless it is the parent that waits for this
  // process anyway.
  Task* tracer = t.ptrace_.tracer;
  if (tracer == nullptr) return;
  ThreadGroup& tg = t.tg();
  Unlink(t);
  if (&t == tg.leader && tg.parent == &tracer->tg()) {
    tracer->tg().child_events.Notify();
    return;
  }
  int status = tg.exiting ? tg.exit_status : t.exit_status_;
  tracer->ptrace_.exited.push_back({t.tid(), status, tg.creds.ruid});
  tracer->tg().child_events.Notify();
}

bool PtraceAnyTraced(const ThreadGroup& tg) {
  for (const Task* t : tg.tasks) {
    if (t->ptraced_.load(std::memory_order_relaxed)) return true;
  }
  return false;
}

std::optional<PtraceWaitEvent> PtraceWait(Task& waiter, int options,
                                          const std::function<bool(int, int)>& match, bool* any) {
  bool consume = !(options & WNOWAIT);
  for (Task* tt : waiter.tg().tasks) {
    PtraceState& ts = tt->ptrace_;
    for (auto it = ts.exited.begin(); it != ts.exited.end(); ++it) {
      if (!match(it->tid, 0)) continue;
      *any = true;
      if (!(options & WEXITED)) continue;
      PtraceWaitEvent ev{it->tid, it->status, abi::kCLD_EXITED, it->uid};
      if (WIFSIGNALED(it->status)) {
        ev.code = WCOREDUMP(it->status) ? abi::kCLD_DUMPED : abi::kCLD_KILLED;
      }
      if (consume) ts.exited.erase(it);
      return ev;
    }
    for (Task* e : ts.tracees) {
      if (!match(e->tid(), e->tg().pgid)) continue;
      *any = true;
      PtraceState& es = e->ptrace_;
      if (!es.in_stop || !es.to_report) continue;
      if (consume) es.to_report = false;
      return PtraceWaitEvent{e->tid(), es.status, abi::kCLD_TRAPPED, e->tg().creds.ruid};
    }
  }
  return std::nullopt;
}

int PtraceTracerPid(const Task& t) { return t.ptrace_.tracer ? t.ptrace_.tracer->tid() : 0; }

bool PtraceStopped(const Task& t) { return t.ptrace_.in_stop; }

// Requests.

Result<void> PtraceTraceme(Task& t) {
  Kernel& k = t.kernel();
  absl::MutexLock l(&k.mu());
  PtraceState& st = t.ptrace_;
  ThreadGroup* parent = t.tg().parent;
  if (st.tracer != nullptr || parent == nullptr || parent->tasks.empty()) return Errno(EPERM);
  if (!MayPtrace(*parent, t.tg())) return Errno(EPERM);
  Task* tracer =
      std::find(parent->tasks.begin(), parent->tasks.end(), parent->leader) != parent->tasks.end()
          ? parent->leader
          : parent->tasks.front();
  st.tracer = tracer;
  tracer->ptrace_.tracees.push_back(&t);
  t.ptraced_.store(true, std::memory_order_relaxed);
  return Ok();
}

Result<void> PtraceAttach(Task& t, int tid, bool seize, uint32_t options) {
  Kernel& k = t.kernel();
  absl::MutexLock l(&k.mu());
  if (seize && (options & ~uint32_t{PTRACE_O_MASK})) return Errno(EIO);
  Task* target = k.TaskByTid(t.ToGlobalPid(tid));
  if (target == nullptr || target->tg().zombie) return Errno(ESRCH);
  ThreadGroup& tg = target->tg();
  // The sandbox's init is unkillable from inside (signals.cc); it cannot be stopped either.
  if (&tg == &t.tg() || tg.tgid == 1 || tg.exiting) return Errno(EPERM);
  if (target->ptrace_.tracer != nullptr || !MayPtrace(t.tg(), tg)) return Errno(EPERM);
  PtraceState& st = target->ptrace_;
  st.tracer = &t;
  st.seized = seize;
  st.options = seize ? options : 0;
  t.ptrace_.tracees.push_back(target);
  target->ptraced_.store(true, std::memory_order_relaxed);
  if (!seize) {
    abi::SigInfo info{};
    info.signo = SIGSTOP;
    info.code = abi::kSI_KERNEL;
    k.SendTaskSignal(*target, info);
  }
  // A task parked in a group-stop reports it to its new tracer.
  if (tg.stopped) target->Interrupt();
  return Ok();
}

Result<Task*> PtraceTracee(Task& t, int tid, bool stopped) {
  Task* e = t.kernel().TaskByTid(t.ToGlobalPid(tid));
  if (e == nullptr || e->ptrace_.tracer != &t) return Errno(ESRCH);
  if (stopped && (!e->ptrace_.in_stop || e->ptrace_.resume != PtraceResume::kNone)) {
    return Errno(ESRCH);
  }
  return e;
}

void PtraceContinue(Task& tracee, PtraceResume how, int sig) {
  PtraceState& st = tracee.ptrace_;
  st.resume = how;
  st.resume_signal = sig;
  if (how != PtraceResume::kListen) st.trace_syscalls = how == PtraceResume::kSyscall;
  tracee.waiter().Notify();
}

void PtraceDetach(Task& tracee, int sig) {
  Unlink(tracee);
  PtraceState& st = tracee.ptrace_;
  if (st.in_stop) {
    st.resume = PtraceResume::kDetach;
    st.resume_signal = sig;
  }
  tracee.waiter().Notify();
}

void PtraceInterrupt(Task& tracee) {
  PtraceState& st = tracee.ptrace_;
  if (st.in_stop && st.resume != PtraceResume::kListen) return;
  st.interrupt = true;
  tracee.Interrupt();
}

void PtraceRunOnTracee(Task& tracee, std::function<void()> fn) {
  Kernel& k = tracee.kernel();
  PtraceState& st = tracee.ptrace_;
  if (!st.in_stop) return;  // gone from the stop (killed) since the caller looked
  st.work = std::move(fn);
  tracee.waiter().Notify();
  auto done = [&st]() { return !st.work; };
  k.mu().Await(absl::Condition(&done));
}

}  // namespace sentry::kernel
