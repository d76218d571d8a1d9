// The kernel: tasks (guest threads), thread groups (processes), the PID namespace, signals.
//
// Lock order (outermost first):
//   Kernel::mu_  (process tree, PIDs, thread-group membership, all signal state, exit/stop
//                 state, credentials)
//     -> FutexTable::mu_ -> WaitQueue::mu_ -> Waiter::mu_
//   MemoryManager::mu_ and vfs locks are never taken with Kernel::mu_ held, except the
//   WaitQueue/Waiter leaves. Never hold Kernel::mu_ while the guest runs or while blocking.
#pragma once

#include <unistd.h>

#include <array>
#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "platform/platform.h"
#include "sentry/abi/linux.h"
#include "sentry/base/errno.h"
#include "sentry/base/guest_addr.h"
#include "sentry/base/wait_queue.h"
#include "sentry/kernel/cputime.h"
#include "sentry/kernel/credentials.h"
#include "sentry/kernel/ipc.h"
#include "sentry/kernel/keys.h"
#include "sentry/kernel/namespaces.h"
#include "sentry/kernel/ptrace.h"
#include "sentry/kernel/rseq.h"
#include "sentry/kernel/sched.h"
#include "sentry/kernel/seccomp.h"
#include "sentry/kernel/timers.h"
#include "sentry/mm/memory_manager.h"
#include "netstack/stack.h"
#include "vfs/fd_table.h"
#include "vfs/vfs.h"

namespace sentry::kernel {

class Kernel;
class Task;
class ThreadGroup;

// Pending signals of a task or of a whole thread group.
struct PendingSignals {
  std::deque<abi::SigInfo> queue;
  abi::SigSet set = 0;
  // A copy of `set` that may be read without Kernel::mu_ (Task::SignalsMayNeedWork); written
  // with `set`, under the lock.
  std::atomic<abi::SigSet> set_unlocked{0};

  // Standard signals coalesce (at most one pending); real-time signals queue.
  void Enqueue(const abi::SigInfo& info);
  // Removes and returns the first pending signal not in `blocked`, lowest number first with
  // synchronous faults preferred, as Linux does.
  std::optional<abi::SigInfo> Dequeue(abi::SigSet blocked);
  void Discard(abi::SigSet which);
};

struct SignalHandlers {
  std::array<abi::KSigAction, abi::kNumSignals> actions{};
};

// Root, working directory and umask; shared by tasks cloned with CLONE_FS.
class FsContext {
 public:
  FsContext(vfs::Path root, vfs::Path cwd) : root_(std::move(root)), cwd_(std::move(cwd)) {}
  FsContext(const FsContext& o) ABSL_LOCKS_EXCLUDED(o.mu_) {
    absl::MutexLock l(&o.mu_);
    root_ = o.root_;
    cwd_ = o.cwd_;
    umask_ = o.umask_;
  }

  vfs::Path root() const {
    absl::MutexLock l(&mu_);
    return root_;
  }
  vfs::Path cwd() const {
    absl::MutexLock l(&mu_);
    return cwd_;
  }
  uint32_t umask() const {
    absl::MutexLock l(&mu_);
    return umask_;
  }
  void set_root(vfs::Path p) {
    absl::MutexLock l(&mu_);
    root_ = std::move(p);
  }
  void set_cwd(vfs::Path p) {
    absl::MutexLock l(&mu_);
    cwd_ = std::move(p);
  }
  uint32_t exchange_umask(uint32_t m) {
    absl::MutexLock l(&mu_);
    return std::exchange(umask_, m & 0777);
  }

 private:
  mutable absl::Mutex mu_;
  vfs::Path root_ ABSL_GUARDED_BY(mu_);
  vfs::Path cwd_ ABSL_GUARDED_BY(mu_);
  uint32_t umask_ ABSL_GUARDED_BY(mu_) = 022;
};

// Completion a vfork parent waits on until the child execs or exits.
struct VforkDone {
  bool done = false;
  WaitQueue queue;
};

class ThreadGroup {
 public:
  int tgid = 0;
  // All fields below are guarded by Kernel::mu_ unless said otherwise.
  std::vector<Task*> tasks;
  Task* leader = nullptr;
  ThreadGroup* parent = nullptr;
  std::vector<std::shared_ptr<ThreadGroup>> children;
  int pgid = 0;
  int sid = 0;
  int exit_signal = 17;  // SIGCHLD, sent to the parent on exit
  std::shared_ptr<SignalHandlers> handlers;
  PendingSignals pending;

  // Exit: once `exiting`, every task leaves at its next kernel entry.
  bool exiting = false;
  int exit_status = 0;  // wait(2) status word
  bool zombie = false;

  // Job control.
  bool stopped = false;
  int stop_signal = 0;
  bool stop_to_report = false;      // for WUNTRACED
  bool continue_to_report = false;  // for WCONTINUED
  bool subreaper = false;
  // The PID namespace the process is in (pid_namespace.h), fixed when it is made.
  PidNsRef pidns;
  // PID 1 kept by the Sentry itself (StartOptions::sentry_init): it has no thread and runs
  // no guest code; it reaps whatever it inherits at once and ends the sandbox when the
  // command it started (Kernel::main_tgid) exits.
  bool sentry_init = false;
  // For a process no guest process is the parent of (Kernel::Spawn): called with the wait
  // status when it exits, under Kernel::mu_; it must not block.
  std::function<void(int)> on_exit;

  // CPU time (cputime.h), as Linux's signal->utime/stime and cutime/cstime: of the threads
  // that have left the group, and of the children reaped by wait (each child's own time plus
  // its own reaped children's). Live threads are read on demand (Kernel::GroupCpuUsage).
  CpuTime cpu_exited;
  CpuTime cpu_children;

  // setitimer/alarm and timer_create timers (timers.h).
  ProcessTimers timers;

  // Resources shared by the threads (replaced wholesale by execve, so read under Kernel::mu_
  // or from the owning thread).
  std::shared_ptr<mm::MemoryManager> mm;
  Credentials creds;
  // PR_GET_DUMPABLE (Linux keeps it in the mm): cleared when the credentials change in a way
  // that could expose a privileged past (see CommitCreds), set again by a plain execve.
  bool dumpable = true;
  std::array<abi::Rlimit, abi::kNumRlimits> rlimits{};
  std::vector<std::string> argv;  // /proc/PID/cmdline
  std::vector<std::string> envp;  // /proc/PID/environ
  vfs::FileRef exe;               // /proc/PID/exe
  bool did_exec = false;          // setpgid on a child that has exec'd fails with EACCES
  // /proc/PID/oom_score_adj: inherited over fork; lowering below `oom_score_adj_min` (what a
  // privileged writer last set) needs CAP_SYS_RESOURCE.
  int oom_score_adj = 0;
  int oom_score_adj_min = 0;

  // The process keyring (keys.h): not inherited by fork, dropped by execve. Guarded by
  // KeyTable::mu_.
  KeyRef process_keyring;

  // /proc/PID/io: bytes and calls of the read and write families (not guarded: atomics).
  std::atomic<uint64_t> io_rchar{0}, io_wchar{0}, io_syscr{0}, io_syscw{0};

  // Notified when a child changes state (exit, stop, continue). Not guarded.
  WaitQueue child_events;
  // Notified (kEventIn) when a signal is queued to the group or one of its threads, blocked
  // or not: what signalfd readers and pollers wait on. Not guarded.
  WaitQueue signal_queued;
  // Notified when the process becomes a zombie and when it leaves the process table (reaped):
  // what pidfd pollers wait on. Not guarded.
  WaitQueue exit_events;
};

struct RestartBlock {
  int clock = 0;
  int64_t deadline_ns = 0;  // absolute, on `clock`
  uint64_t rem_addr = 0;
};

// A thread's memory policy (set_mempolicy): mode, mode flags and the nodemask as given.
struct MemPolicy {
  int mode = 0;  // MPOL_DEFAULT
  int flags = 0;
  uint64_t user_nodes = 0;
};

class Task final : public Blocker {
 public:
  Task(Kernel& k, int tid);
  ~Task() override;

  Kernel& kernel() { return k_; }
  int tid() const { return tid_; }
  ThreadGroup& tg() { return *tg_; }
  std::shared_ptr<ThreadGroup> tg_ref() { return tg_; }
  platform::Context& ctx() { return *ctx_; }
  mm::MemoryManager& mm() { return *mm_; }
  vfs::FdTable& fds() { return *fds_; }
  std::shared_ptr<vfs::FdTable> fds_ref() { return fds_; }
  std::shared_ptr<FsContext> fs_ref() { return fs_; }
  // The task whose host thread is calling (null outside task threads): /proc/self.
  static Task* Current();
  FsContext& fs() { return *fs_; }
  // The task's namespaces (namespaces.h). Read by the task's own thread without a lock; by
  // others under Kernel::mu_.
  const Namespaces& ns() const { return *ns_; }
  // What path operations need: root, cwd, umask and the fs credentials.
  vfs::Context VfsContext();
  platform::Registers& regs() { return regs_; }

  // Blocker.
  Waiter& waiter() override { return waiter_; }
  Result<void> Wait(absl::Time deadline = absl::InfiniteFuture()) override;
  Result<int> WaitHostFd(int fd, short events, absl::Time deadline) override;

  // Wakes the task from a kernel wait or kicks its guest out of user mode so that it looks at
  // its signals. Thread-safe.
  void Interrupt();
  // Whether HandleSignals may have something to do after a syscall that returned `ret`:
  // false only when the result is no restart code, no sigsuspend mask waits to be restored,
  // nothing interrupted the task, its mask is the one last checked and no signal it does not
  // block is pending (for it or its process). Without Kernel::mu_; the task's thread only.
  bool SignalsMayNeedWork(int64_t ret) const;
  // Pids as this task's PID namespace sees them (pid_namespace.h): a global pid's number
  // there (0: not visible), and the global pid of one of its numbers (0: none).
  // Preconditions: Kernel::mu_ held.
  int ToLocalPid(int global) const { return PidIn(tg_->pidns.get(), global); }
  int ToGlobalPid(int local) const { return PidFrom(tg_->pidns.get(), local); }
  // The same for the task's own thread when it does not hold Kernel::mu_: the lock is taken
  // only in a nested namespace (the sandbox's numbers need no translation).
  int LocalPid(int global);
  int GlobalPid(int local);
  // The signal mask (guarded by Kernel::mu_).
  abi::SigSet signal_mask() const { return mask_; }

  // Guest memory.
  Result<void> CopyInBytes(GuestAddr addr, std::span<uint8_t> dst);
  Result<void> CopyOutBytes(GuestAddr addr, std::span<const uint8_t> src);
  template <typename T>
  Result<T> CopyIn(GuestAddr addr) {
    T v;
    SENTRY_TRY(CopyInBytes(addr, {reinterpret_cast<uint8_t*>(&v), sizeof(T)}));
    return v;
  }
  template <typename T>
  Result<void> CopyOut(GuestAddr addr, const T& v) {
    return CopyOutBytes(addr, {reinterpret_cast<const uint8_t*>(&v), sizeof(T)});
  }
  // A NUL-terminated string of at most `max` bytes (ENAMETOOLONG past it).
  Result<std::string> CopyInString(GuestAddr addr, size_t max = 4096);
  // A NULL-terminated array of string pointers (argv, envp).
  Result<std::vector<std::string>> CopyInStringArray(GuestAddr addr);

  // Queues `info` so that it is delivered even if blocked or ignored (a fault, a seccomp
  // SIGSYS); with `reset_handler`, also if caught: the default action runs.
  void ForceSignal(const abi::SigInfo& info, bool reset_handler);

  // The run loop: runs on the task's own host thread until the task exits.
  void Run();
  // Starts the host thread of new task `self`, which takes over the context CloneThread or
  // ForkAddressSpace made as `attach_handle` (in `as`; null for a fork) and then waits for
  // Start(). Fails with EAGAIN when the host refuses the thread or the context: the handle
  // is then discarded and nothing of the task ran. Called before the task is registered.
  static Result<void> Launch(std::shared_ptr<Task> self, int attach_handle,
                             std::shared_ptr<platform::AddressSpace> as);
  // Lets a launched task run, once registered; with `abandon`, ends it without running.
  void Start(bool abandon = false);

  std::string comm() {
    absl::MutexLock l(&comm_mu_);
    return comm_;
  }
  void set_comm(std::string c) {
    absl::MutexLock l(&comm_mu_);
    comm_ = c.substr(0, 15);
  }

  // Set by sys_exit / sys_exit_group / execve and checked by the run loop.
  void SetExiting(int status) {
    exiting_ = true;
    exit_status_ = status;
  }

  // Fields owned by the task's own thread.
  platform::Registers regs_{};
  std::unique_ptr<platform::Context> ctx_;
  std::shared_ptr<mm::MemoryManager> mm_;
  std::shared_ptr<vfs::FdTable> fds_;
  std::shared_ptr<FsContext> fs_;
  abi::StackT altstack_{0, abi::kSS_DISABLE, 0, 0};
  uint64_t clear_child_tid_ = 0;
  uint64_t robust_list_ = 0;
  uint64_t robust_list_len_ = 0;
  RseqRegistration rseq_;  // rseq.h
  RestartBlock restart_;
  std::optional<abi::SigSet> saved_mask_;  // restored after a handler runs (sigsuspend)
  std::shared_ptr<VforkDone> vfork_done_;  // set in a vfork child until it execs or exits
  bool exiting_ = false;
  int exit_status_ = 0;
  // Written by the thread that set up the task before Start(); then by the task itself.
  uint64_t child_settid_ = 0;
  std::vector<uint8_t> start_fp_;  // a cloned task's FP state, set once its context exists

  // Guarded by Kernel::mu_.
  std::shared_ptr<ThreadGroup> tg_;
  abi::SigSet mask_ = 0;
  abi::SigSet real_blocked_ = 0;  // the mask rt_sigtimedwait lifted while it waits
  PendingSignals pending_;
  bool group_stopped_ = false;  // this thread has parked for a group stop
  bool frozen_ = false;         // this thread has parked while the kernel is frozen
  bool exec_kill_ = false;      // another thread of the group is exec'ing: leave quietly
  int pdeathsig_ = 0;
  PtraceState ptrace_;  // ptrace.h: as a tracee and as a tracer
  // ptrace_.tracer != nullptr, read without the lock: the syscall path's one check.
  std::atomic<bool> ptraced_{false};
  // The syscall path's test before it takes Kernel::mu_ for HandleSignals
  // (SignalsMayNeedWork): set by Interrupt(), which everything that needs this task to look
  // (a signal for it, a group exit or stop, an exec's kill, a freeze) calls after the change;
  // cleared by HandleSignals under the lock before it looks. mask_checked_ is the mask
  // HandleSignals last found nothing deliverable for (owned by the task's thread).
  std::atomic<bool> signal_work_{true};
  abi::SigSet mask_checked_ = ~abi::SigSet{0};
  SchedState sched_;                     // sched_*, nice, affinity, ioprio (sched.h)
  SeccompState seccomp_;                 // seccomp.h; inherited over clone, kept by execve
  std::atomic<bool> seccomp_on_{false};  // seccomp_.mode != 0, read without the lock
  uint32_t personality_ = 0;             // personality(2): inherited over clone, kept by execve
  MemPolicy mempolicy_;                  // set_mempolicy(2): inherited over clone, kept by execve
  TaskKeyrings keyrings_;                // keys.h; guarded by KeyTable::mu_
  NamespacesRef ns_;                     // namespaces.h: written by the task itself under mu_
  absl::Time start_time_ = absl::Now();  // /proc/PID/stat starttime
  // Waits that blocked: /proc/PID/status voluntary_ctxt_switches (not guarded: atomic).
  std::atomic<uint64_t> nvcsw_{0};
  std::atomic<bool> sleeping_{false};  // inside Wait / WaitHostFd (/proc/loadavg's running)
  // CPU time (cputime.h). The live sources are read only on demand; a stub's time moves to
  // cpu_retired_ before the stub is killed (execve, exit), while its clock can still be read.
  std::vector<int> cpu_pids_;  // the current stub's host processes (Context::cpu_pids)
  int host_thread_tid_ = 0;    // the Sentry thread that runs this task, once it runs
  CpuTime cpu_retired_;        // of the stubs this task has left behind

  // This task's CPU time so far. Preconditions: Kernel::mu_ held.
  CpuTime CpuUsage();
  // Starts or stops counting ctx_'s host processes as this task's (see cpu_pids_). Called by
  // the task's own thread, without Kernel::mu_.
  void AdoptContextCpu();
  void RetireContextCpu();
  // Records the calling host thread as the one that runs this task.
  void BindHostThread();
  // Has ctx_'s host side, if it is killed on the host, kill this task's process as a
  // SIGKILL would (even while the task is blocked in the kernel). Called by the task's own
  // thread whenever ctx_ changes.
  void WatchHostDeath();

 private:
  friend class Kernel;
  // Takes the next deliverable signal and acts on it; handles syscall restart.
  void HandleSignals(bool after_syscall, int64_t syscall_result);
  void HandleSyscall();
  void HandleFault(const abi::SigInfo& info);
  void Exit();
  void ExitRobustList();

  // Between Launch and Start: the new thread's report and the go-ahead.
  struct LaunchState {
    absl::Notification attached;
    bool ok = false;  // written before `attached`
    absl::Notification go;
    bool abandon = false;  // written before `go`
  };
  std::shared_ptr<LaunchState> launch_;

  Kernel& k_;
  int tid_;  // changes once, when a non-leader thread execs and takes the group's PID
  Waiter waiter_;
  absl::Mutex comm_mu_;
  std::string comm_ ABSL_GUARDED_BY(comm_mu_);
};

class Kernel {
 public:
  Kernel(std::unique_ptr<platform::Platform> platform, std::unique_ptr<vfs::Vfs> vfs);
  ~Kernel();

  struct StartOptions {
    std::string path;
    std::vector<std::string> argv;
    std::vector<std::string> envp;
    std::vector<vfs::FileRef> stdio;  // fds 0, 1, 2
    std::string cwd = "/";
    // init's RLIMIT_NOFILE: the caller's, from before the Sentry raised its own.
    abi::Rlimit nofile{1024, 4096};
    // Other resource limits init starts with, over those the Sentry has from its caller.
    std::vector<std::pair<int, abi::Rlimit>> rlimits;
    // init's uid and gid; -1: the caller's.
    int64_t uid = -1;
    int64_t gid = -1;
    // Supplementary groups; empty: none.
    std::vector<uint32_t> groups;
    // The process's umask (an OCI process.user.umask), and its no_new_privs bit (an OCI
    // process.noNewPrivileges: PR_GET_NO_NEW_PRIVS answers 1, execve gains nothing).
    uint32_t umask = 022;
    bool no_new_privs = false;
    // The capability sets it starts from (an OCI process.capabilities; Credentials::Initial);
    // none: those of a full-capability parent.
    std::optional<CapabilitySets> caps;
    // A seccomp filter init starts with (seccomp.h), as if it had installed it; empty: none.
    std::vector<sock_filter> seccomp_filter;
    // Spawn only: called with the wait status when the process exits (ThreadGroup::on_exit).
    std::function<void(int)> on_exit;
    // Called with the new process's PID before it runs (e.g. to give its session a
    // controlling terminal).
    std::function<void(int)> before_start;
    // Run only: PID 1 is an init kept by the Sentry (as `docker run --init`, bwrap or a
    // shell's session would have it) and the program runs as PID 2, its child, so that
    // `kill -9 $$` kills it as on a host, and orphans are reaped. Otherwise the program is
    // PID 1 itself, with init's protections (an OCI container's process).
    bool sentry_init = false;
  };
  // Starts init (PID 1), waits until every task has exited, returns the wait status of init
  // or, with StartOptions::sentry_init, of the program.
  absl::StatusOr<int> Run(StartOptions opts);
  // The process that signals from the host are passed to (the program Run started).
  int main_tgid() {
    absl::MutexLock l(&mu_);
    return main_tgid_;
  }
  // Starts one more process in the running sandbox, as `runc exec` does in a container: a
  // leader of its own session whose parent is outside the sandbox (getppid() is 0), so that
  // no guest process waits for it; opts.on_exit hears of its end. Returns its PID once it has
  // exec'd, or why it could not (init has exited; the program or cwd is not there).
  absl::StatusOr<int> Spawn(StartOptions opts);
  // pause and resume (the cgroup freezer's job for runc): every task parks at its next
  // return to the guest, blocking syscalls restart transparently, as for a group stop.
  // Freeze waits up to a second for the tasks to park.
  void Freeze();
  void Thaw();
  bool frozen() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return frozen_; }

  platform::Platform& platform() { return *platform_; }
  // The most guest tasks there may be at once: clone and fork fail with EAGAIN past it.
  // Defaults to DefaultTaskLimit (host_limits.h).
  int64_t max_tasks() const { return max_tasks_; }
  void set_max_tasks(int64_t n) { max_tasks_ = n; }
  // The syscall dispatcher (syscalls/), installed by the front end: it returns the value for
  // rax, or a negative errno (restart codes included).
  using DispatchFn = int64_t (*)(Task&);
  void set_dispatch(DispatchFn fn) { dispatch_ = fn; }
  DispatchFn dispatch() const { return dispatch_; }
  vfs::Vfs& vfs() { return *vfs_; }
  absl::Mutex& mu() ABSL_LOCK_RETURNED(mu_) { return mu_; }

  // PIDs (guarded by mu_).
  int AllocPid() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A new task's global pid with a number in `ns` and in each of its ancestors; ENOMEM once
  // one of them has lost its init, as Linux (pid_namespace.cc).
  Result<int> AllocPid(PidNamespace& ns) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Frees the numbers global pid `pid` has in `ns` and its ancestors, unless a task still
  // has it or a process group or session still goes by it (called again when they go).
  void ReleasePid(PidNamespace* ns, int pid) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The sandbox's PID namespace (level 0: global numbers).
  const PidNsRef& root_pidns() const { return init_ns_->pid; }
  // The init of `tg`'s PID namespace, which reaps its orphans (null once it has exited).
  ThreadGroup* ChildReaper(const ThreadGroup& tg) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Called by the last thread of a nested PID namespace's init before it leaves: kills every
  // other process of the namespace and reaps them before the init becomes a zombie, as
  // Linux's zap_pid_ns_processes (pid_namespace.cc). Preconditions: mu_ not held.
  void ZapPidNamespace(Task& init_task) ABSL_LOCKS_EXCLUDED(mu_);
  // The last PID handed out (/proc/loadavg).
  int LastPid() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return next_pid_ - 1; }
  Task* TaskByTid(int tid) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  ThreadGroup* GroupByTgid(int tgid) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<ThreadGroup*> AllGroups() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Register(std::shared_ptr<Task> t) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Signals (signals.cc).
  // Queues `info` for a whole process (kill) or one thread (tgkill) and wakes a target.
  // Returns false if the signal was dropped (ignored, or the process is exiting).
  bool SendGroupSignal(ThreadGroup& tg, const abi::SigInfo& info)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool SendTaskSignal(Task& t, const abi::SigInfo& info) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Takes the next signal not in `blocked` for `t`, its own queue first, then its process's:
  // what delivery, sigtimedwait and signalfd take. Re-arms the timers whose signals are taken
  // and drops stale POSIX-timer signals (timers.h).
  std::optional<abi::SigInfo> DequeueSignal(Task& t, abi::SigSet blocked)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Kills every thread of `tg` with wait status `status` (exit_group, fatal signals).
  void GroupExit(ThreadGroup& tg, int status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool SignalPending(Task& t) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Recomputes which thread should be woken for group signals and wakes it.
  void WakeForSignals(ThreadGroup& tg) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Process lifecycle (process.cc).
  // The task leaves its group; the last one out makes the process a zombie.
  void TaskExited(Task& t) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes a zombie child from the tree.
  void Reap(ThreadGroup& child) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void NotifyParent(ThreadGroup& child, int code, int status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The CPU time of `tg`'s threads, live and exited (not its children's).
  CpuTime GroupCpuUsage(ThreadGroup& tg) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // execve's de_thread for a non-leader: once the other threads are gone, `t` takes over the
  // leader's tid (the group's pid), and the old leader and `t`'s old tid disappear.
  void TakeOverLeader(Task& t) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Task threads call these at start and end, so that Run() knows when all are gone.
  void TaskThreadStarted();
  void TaskThreadDone();

  // The futex table (futex.cc).
  class FutexTable& futexes() { return *futexes_; }
  // The sandbox's one IPC namespace (ipc.h). Never destroyed: shared memory segments are told
  // about VMAs that go away as late as the last MemoryManager does.
  IpcNamespace& ipc() { return *ipc_; }
  // The sandbox's network stack (netstack/). Never destroyed, like ipc_: sockets in flight
  // in SCM_RIGHTS messages may outlive every task.
  netstack::Stack& net() { return *net_; }
  // The sandbox's keys and keyrings (keys.h).
  KeyTable& keys() { return keys_; }

  int init_status() {
    absl::MutexLock l(&mu_);
    return init_status_;
  }

  // Told of every process's end (the audit trail), with its wait status, under mu_; it must
  // not block. Set before Run.
  std::function<void(ThreadGroup&, int)> exit_observer;

  // The namespaces the sandbox's first process starts in (namespaces.h). The UTS names
  // (uname, sethostname) live in them: init_uts().hostname, guarded by mu_.
  NamespacesRef init_namespaces() const { return init_ns_; }
  UtsNamespace& init_uts() { return *init_ns_->uts; }
  absl::Time boot_time = absl::Now();

 private:
  std::unique_ptr<platform::Platform> platform_;
  std::unique_ptr<vfs::Vfs> vfs_;
  std::unique_ptr<class FutexTable> futexes_;
  IpcNamespace* const ipc_ = new IpcNamespace();
  netstack::Stack* const net_ = new netstack::Stack();
  KeyTable keys_;
  std::shared_ptr<Namespaces> init_ns_;  // set by the constructor, never replaced
  DispatchFn dispatch_ = nullptr;
  int64_t max_tasks_;  // set before init starts
  // The Sentry's own ids at start-up: a new process's credentials when the caller names
  // none. Read once (getuid/getgid are not on the Sentry's allowlist).
  const uid_t host_uid_ = getuid();
  const gid_t host_gid_ = getgid();

  absl::Mutex mu_;
  int next_pid_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<int, std::shared_ptr<Task>> tasks_ ABSL_GUARDED_BY(mu_);
  std::map<int, std::shared_ptr<ThreadGroup>> groups_ ABSL_GUARDED_BY(mu_);
  int init_status_ ABSL_GUARDED_BY(mu_) = 0;
  int main_tgid_ ABSL_GUARDED_BY(mu_) = 1;
  bool frozen_ ABSL_GUARDED_BY(mu_) = false;

  // Run and Spawn: a process made but not started, then started.
  absl::StatusOr<std::shared_ptr<Task>> NewProcess(StartOptions& opts);
  // Run with StartOptions::sentry_init: makes PID 1, the Sentry's init, with no thread.
  void MakeSentryInit(const StartOptions& opts);
  // A child of the Sentry's init has exited (under mu_): reaped at once; the program's exit
  // ends the sandbox, as the death of a PID namespace's init does.
  void SentryInitChildExited(ThreadGroup& child) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status StartProcess(std::shared_ptr<Task> task, const StartOptions& opts);

  absl::Mutex threads_mu_;
  int live_threads_ ABSL_GUARDED_BY(threads_mu_) = 0;

  friend class Task;
 public:
  // For the process tree code: the table of live groups by tgid.
  std::map<int, std::shared_ptr<ThreadGroup>>& groups() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return groups_;
  }
  std::map<int, std::shared_ptr<Task>>& tasks() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return tasks_;
  }
  void set_init_status(int s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { init_status_ = s; }
};

// Answers the terminals' job-control questions (vfs::TtyHost) from `k`'s tasks.
void InstallTtyHost(Kernel& k);
// Lets open files signal their F_SETOWN owners (vfs/async.h) through `k`.
void InstallAsyncHost(Kernel& k);

// Wait-status words.
constexpr int ExitStatus(int code) { return (code & 0xff) << 8; }
constexpr int SignalStatus(int sig, bool core) { return sig | (core ? 0x80 : 0); }
constexpr int StopStatus(int sig) { return (sig << 8) | 0x7f; }

}  // namespace sentry::kernel
