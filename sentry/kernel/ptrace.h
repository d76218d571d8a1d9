// Guest ptrace: one guest task tracing another. Entirely the Sentry's bookkeeping: a tracee
// parks on its own host thread at each ptrace-stop and the tracer reads and writes the state
// the tracee left (registers, siginfo); host ptrace is never used for the guest's requests.
//
// Locking: every field of PtraceState is guarded by Kernel::mu_. A tracee in a ptrace-stop
// does not touch its registers, so the tracer may read and write Task::regs_ under mu_ then.
// Work that must run on the thread driving the tracee's platform context (FP state) is handed
// to the tracee through PtraceState::work (RunOnTracee).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <vector>

#include "sentry/abi/linux.h"
#include "sentry/base/errno.h"

namespace sentry::kernel {

class Kernel;
class Task;
class ThreadGroup;

// How the tracer let a ptrace-stopped tracee go.
enum class PtraceResume : uint8_t { kNone, kCont, kSyscall, kSingleStep, kListen, kDetach };

// What the tracee is stopped at (PTRACE_GET_SYSCALL_INFO's op).
enum class PtraceStopKind : uint8_t { kOther, kSyscallEntry, kSyscallExit };

struct PtraceState {
  // As a tracee.
  Task* tracer = nullptr;
  bool seized = false;
  uint32_t options = 0;    // PTRACE_O_*
  bool in_stop = false;    // parked in a ptrace-stop
  bool to_report = false;  // a stop wait() has not reported yet
  int status = 0;          // the wait status of the current stop
  PtraceStopKind kind = PtraceStopKind::kOther;
  bool has_siginfo = false;  // GETSIGINFO fails with EINVAL without (group-stop traps)
  abi::SigInfo siginfo{};    // the signal of a signal-delivery-stop, or the SIGTRAP made
  uint64_t event_msg = 0;    // PTRACE_GETEVENTMSG
  PtraceResume resume = PtraceResume::kNone;
  int resume_signal = 0;        // the signal the tracer passed when resuming
  bool trace_syscalls = false;  // resumed with PTRACE_SYSCALL: stop at entry and exit
  bool stepping = false;        // resumed with PTRACE_SINGLESTEP: the Sentry set TF
  bool interrupt = false;       // PTRACE_INTERRUPT (or a seized new child) asks for a trap
  int pending_event = 0;        // a fork/vfork/clone event to report when the syscall ends
  uint64_t pending_event_msg = 0;
  // Work the tracer hands to the stopped tracee's own thread; cleared once done.
  std::function<void()> work;

  // As a tracer.
  std::vector<Task*> tracees;
  struct Exited {
    int tid;
    int status;  // wait status
    uint32_t uid;
  };
  std::deque<Exited> exited;  // tracees that are not our children, gone: for wait()
};

// The traced variant of the syscall path: syscall-enter-stop, dispatch (or skip when the
// tracer set orig_rax to -1), PTRACE_EVENT stops, syscall-exit-stop. Returns the result the
// guest gets (the tracer may have changed it). Called by the tracee's own thread.
int64_t PtraceDispatch(Task& t);

// Stops `t` in a ptrace-stop with wait status `status` and waits for the tracer. Returns
// false if `t` was killed or detached meanwhile (then nothing the tracer asked applies).
// Preconditions: Kernel::mu_ held, `t` is the calling task and is traced; its registers are
// complete (Context::SyncRegisters). Releases mu_ while parked.
bool PtraceStop(Task& t, int status, const abi::SigInfo* info, PtraceStopKind kind);

// A signal-delivery-stop for `info`. Returns the signal to deliver instead (the tracer's
// choice, possibly none). Preconditions as PtraceStop.
std::optional<abi::SigInfo> PtraceSignalStop(Task& t, const abi::SigInfo& info);

// Group-stop and PTRACE_INTERRUPT traps of a traced task, from the signal path. Returns true
// if it stopped (the caller then looks at its signals again). Preconditions as PtraceStop.
bool PtraceJobTrap(Task& t);

// Clone: attaches `child` to `parent`'s tracer if the options ask for it and records the
// event for the parent's syscall exit. Preconditions: Kernel::mu_ held, child not started.
void PtraceOnClone(Task& parent, Task& child, uint64_t flags);

// A task leaves: its tracees are detached (or killed with PTRACE_O_EXITKILL), and if it is
// traced, its tracer hears of the exit. Preconditions: Kernel::mu_ held.
void PtraceOnTaskExit(Kernel& k, Task& t);

// PTRACE_EVENT_EXIT stop before `t` exits, if asked for. Called by `t`'s own thread without
// Kernel::mu_.
void PtraceExitEvent(Task& t);

// Whether a thread of `tg` is traced: its ignored signals are then still queued, since the
// tracer sees them (Linux's sig_ignored). Preconditions: Kernel::mu_ held.
bool PtraceAnyTraced(const ThreadGroup& tg);

// A state change of a tracee for wait() of `tracer`'s thread group.
struct PtraceWaitEvent {
  int pid = 0;
  int status = 0;
  int code = 0;  // CLD_TRAPPED or CLD_EXITED/KILLED/DUMPED
  uint32_t uid = 0;
};
// Looks for a reportable tracee of any thread of `waiter`'s group that matches the wait
// (`match` on the tracee's tid and pgid); sets *any if there is a tracee at all. Consumes the
// event unless WNOWAIT. Preconditions: Kernel::mu_ held.
std::optional<PtraceWaitEvent> PtraceWait(Task& waiter, int options,
                                          const std::function<bool(int tid, int pgid)>& match,
                                          bool* any);

// Requests (syscalls/sys_ptrace.cc). Each returns the errno Linux gives.
// PTRACE_TRACEME: the caller's parent becomes its tracer.
Result<void> PtraceTraceme(Task& t);
// PTRACE_ATTACH (SIGSTOP sent) or PTRACE_SEIZE (with `options`).
Result<void> PtraceAttach(Task& t, int tid, bool seize, uint32_t options);
// The tracee `tid` of `t`; with `stopped`, it must be in a ptrace-stop (ESRCH otherwise).
// Preconditions: Kernel::mu_ held.
Result<Task*> PtraceTracee(Task& t, int tid, bool stopped);
// Lets a ptrace-stopped tracee go on. Preconditions: Kernel::mu_ held.
void PtraceContinue(Task& tracee, PtraceResume how, int sig);
// Unlinks `tracee` from its tracer; a stopped tracee goes on with `sig`.
// Preconditions: Kernel::mu_ held.
void PtraceDetach(Task& tracee, int sig);
// PTRACE_INTERRUPT. Preconditions: Kernel::mu_ held.
void PtraceInterrupt(Task& tracee);
// Runs `fn` on the ptrace-stopped tracee's own thread, which drives its platform context, and
// waits for it. Preconditions: Kernel::mu_ held (released meanwhile).
void PtraceRunOnTracee(Task& tracee, std::function<void()> fn);

// /proc/PID/status: the tracer's tid (0 if none) and whether `t` is in a ptrace-stop.
// Preconditions: Kernel::mu_ held.
int PtraceTracerPid(const Task& t);
bool PtraceStopped(const Task& t);

}  // namespace sentry::kernel
