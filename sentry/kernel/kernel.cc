#include "sentry/kernel/kernel.h"

#include <signal.h>
#include <string.h>
#include <sys/resource.h>

#include <future>
#include <thread>

#include "sentry/base/host_thread.h"
#include "sentry/base/logging.h"
#include "sentry/base/startup_trace.h"
#include "sentry/base/status.h"
#include "sentry/base/timer_queue.h"
#include "sentry/kernel/futex.h"
#include "sentry/kernel/host_limits.h"
#include "sentry/kernel/timers.h"
#include "sentry/loader/exec.h"

namespace sentry::kernel {

namespace {
// Who is calling, for read(2)/write(2) on sockets (netstack/socket.h).
netstack::TaskCreds TaskSocketCreds(Blocker& b) {
  auto* t = dynamic_cast<Task*>(&b);
  if (!t) return {};
  absl::MutexLock l(&t->kernel().mu());
  const Credentials& c = t->tg().creds;
  int pid = t->tg().tgid;
  return {{pid, c.euid, c.egid}, {pid, c.ruid, c.rgid}};
}
}  // namespace

Kernel::Kernel(std::unique_ptr<platform::Platform> platform, std::unique_ptr<vfs::Vfs> vfs)
    : platform_(std::move(platform)),
      vfs_(std::move(vfs)),
      futexes_(std::make_unique<FutexTable>()),
      max_tasks_(DefaultTaskLimit(platform_->host_tasks_per_task())) {
  // Service threads start now: later a guest may have used up what the host gives.
  TimerQueue::Global();
  init_ns_ = InitialNamespaces(*vfs_, ipc_, *net_);
  InstallTtyHost(*this);
  InstallAsyncHost(*this);
  netstack::SetCredentialSource(TaskSocketCreds);
  // The sandbox's CPUs, read before any Sentry thread is pinned to one of them; the host's
  // clock resolutions, before the allowlist takes clock_getres away.
  (void)Cpus();
  (void)HostClockRes(CLOCK_MONOTONIC);
}

Kernel::~Kernel() = default;

int Kernel::AllocPid() { return next_pid_++; }

Task* Kernel::TaskByTid(int tid) {
  auto it = tasks_.find(tid);
  return it == tasks_.end() ? nullptr : it->second.get();
}

ThreadGroup* Kernel::GroupByTgid(int tgid) {
  auto it = groups_.find(tgid);
  return it == groups_.end() ? nullptr : it->second.get();
}

std::vector<ThreadGroup*> Kernel::AllGroups() {
  std::vector<ThreadGroup*> v;
  for (auto& [id, g] : groups_) v.push_back(g.get());
  return v;
}

void Kernel::Register(std::shared_ptr<Task> t) { tasks_[t->tid()] = std::move(t); }

void Kernel::TaskThreadStarted() {
  absl::MutexLock l(&threads_mu_);
  live_threads_++;
}

void Kernel::TaskThreadDone() {
  absl::MutexLock l(&threads_mu_);
  live_threads_--;
}

absl::StatusOr<std::shared_ptr<Task>> Kernel::NewProcess(StartOptions& opts) {
  auto tg = std::make_shared<ThreadGroup>();
  std::shared_ptr<Task> task;
  {
    absl::MutexLock l(&mu_);
    int pid = AllocPid();
    task = std::make_shared<Task>(*this, pid);
    tg->tgid = tg->pgid = tg->sid = pid;
    tg->pidns = init_ns_->pid;
    tg->leader = task.get();
    tg->tasks.push_back(task.get());
    tg->handlers = std::make_shared<SignalHandlers>();
    tg->creds = Credentials::Initial(opts.uid >= 0 ? opts.uid : host_uid_,
                                     opts.gid >= 0 ? opts.gid : host_gid_,
                                     opts.caps ? &*opts.caps : nullptr, opts.no_new_privs);
    if (!opts.groups.empty()) tg->creds.groups = opts.groups;
    for (int r = 0; r < abi::kNumRlimits; r++) {
      struct rlimit rl;
      getrlimit(r, &rl);
      tg->rlimits[r] = {rl.rlim_cur, rl.rlim_max};
    }
    tg->rlimits[RLIMIT_NOFILE] = opts.nofile;
    for (const auto& [resource, limit] : opts.rlimits) tg->rlimits[resource] = limit;
    task->sched_ = InitialSchedState();
    task->tg_ = tg;
    tg->on_exit = std::move(opts.on_exit);
    groups_[pid] = tg;
    tg->timers.UpdateRlimitCpu(*this, *tg);
    Register(task);
  }
  // Until it runs, a failure below must take the half-made process out of the tables.
  auto discard = [&] {
    absl::MutexLock l(&mu_);
    tasks_.erase(task->tid());
    groups_.erase(tg->tgid);
  };
  task->fds_ = std::make_shared<vfs::FdTable>();
  for (size_t fd = 0; fd < opts.stdio.size(); fd++) {
    (void)task->fds_->Set(static_cast<int>(fd), opts.stdio[fd], false, 1024);
  }
  vfs::Path root = vfs_->Root();
  task->fs_ = std::make_shared<FsContext>(root, root);
  task->fs_->exchange_umask(opts.umask);
  task->ns_ = init_ns_;
  vfs::Context ctx = task->VfsContext();
  auto cwd = vfs_->Resolve(ctx, root, opts.cwd, true);
  if (!cwd.ok() || !cwd->inode()->IsDir()) {
    discard();
    return absl::NotFoundError("working directory " + opts.cwd + ": " +
                               (cwd.ok() ? "not a directory" : strerror(cwd.error().code())));
  }
  task->fs_->set_cwd(*cwd);
  if (!opts.seccomp_filter.empty()) {
    auto r = InstallInitialSeccomp(*task, std::move(opts.seccomp_filter));
    if (!r.ok()) {
      discard();
      return absl::InvalidArgumentError("the seccomp profile is not a valid filter");
    }
  }
  return task;
}

absl::Status Kernel::StartProcess(std::shared_ptr<Task> task, const StartOptions& opts) {
  // The task's thread creates its address space itself: that thread becomes the stub's
  // tracer.
  std::promise<Result<void>> started;
  auto started_future = started.get_future();
  TaskThreadStarted();
  bool started_thread = StartHostThread([&, task]() {
    task->BindHostThread();
    auto r = loader::Exec(*task, opts.path, opts.argv, opts.envp);
    started.set_value(r);
    if (!r.ok()) {
      task->SetExiting(ExitStatus(127));
      {
        absl::MutexLock l(&mu_);
        task->tg_->exiting = true;
        task->tg_->exit_status = ExitStatus(127);
        task->tg_->on_exit = nullptr;  // the caller hears of the failure from us instead
      }
      task->Exit();
      TaskThreadDone();
      return;
    }
    task->Run();
  });
  if (!started_thread) {
    TaskThreadDone();
    absl::MutexLock l(&mu_);
    tasks_.erase(task->tid());
    groups_.erase(task->tg_->tgid);
    return absl::ResourceExhaustedError("cannot start a host thread for the process");
  }
  Result<void> r = started_future.get();
  if (!r.ok()) {
    return absl::Status(absl::ErrnoToStatus(r.error().code(), opts.path).code(),
                        opts.path + ": " + strerror(r.error().code()));
  }
  return absl::OkStatus();
}

void Kernel::MakeSentryInit(const StartOptions& opts) {
  auto tg = std::make_shared<ThreadGroup>();
  absl::MutexLock l(&mu_);
  int pid = AllocPid();
  // Its one task never runs: like a kernel thread, it has no address space and its
  // /proc/1/cmdline is empty; the task stands for PID 1 in /proc and in the tables.
  auto task = std::make_shared<Task>(*this, pid);
  tg->tgid = tg->pgid = tg->sid = pid;
  tg->pidns = init_ns_->pid;
  tg->leader = task.get();
  tg->tasks.push_back(task.get());
  tg->sentry_init = true;
  tg->handlers = std::make_shared<SignalHandlers>();
  tg->creds = Credentials::Initial(opts.uid >= 0 ? opts.uid : host_uid_,
                                   opts.gid >= 0 ? opts.gid : host_gid_);
  for (int r = 0; r < abi::kNumRlimits; r++) {
    struct rlimit rl;
    getrlimit(r, &rl);
    tg->rlimits[r] = {rl.rlim_cur, rl.rlim_max};
  }
  tg->rlimits[RLIMIT_NOFILE] = opts.nofile;
  task->sched_ = InitialSchedState();
  task->tg_ = tg;
  task->set_comm("sentry-init");
  task->fds_ = std::make_shared<vfs::FdTable>();
  vfs::Path root = vfs_->Root();
  task->fs_ = std::make_shared<FsContext>(root, root);
  task->ns_ = init_ns_;
  groups_[pid] = tg;
  Register(task);
}

void Kernel::SentryInitChildExited(ThreadGroup& child) {
  ThreadGroup* init = child.parent;
  if (child.tgid == main_tgid_ && !init->exiting) {
    init_status_ = child.exit_status;
    // As when a PID namespace's init dies: everything else is killed.
    init->exiting = true;
    for (auto& [tgid, g] : groups_) {
      if (g.get() != init && g.get() != &child) GroupExit(*g, SignalStatus(SIGKILL, false));
    }
  }
  Reap(child);
}

absl::StatusOr<int> Kernel::Run(StartOptions opts) {
  if (opts.sentry_init) MakeSentryInit(opts);
  auto init = NewProcess(opts);
  if (!init.ok()) return init.status();
  startup::Mark("guest process made (program loaded)");
  if (opts.sentry_init) {
    absl::MutexLock l(&mu_);
    ThreadGroup& main = (*init)->tg();
    ThreadGroup* sentry_init = GroupByTgid(1);
    main.parent = sentry_init;
    // In init's session and process group, as a command a non-interactive shell runs: not a
    // session leader (opening a terminal does not make it the controlling one; setsid works).
    main.pgid = main.sid = sentry_init->tgid;
    sentry_init->children.push_back((*init)->tg_ref());
    main_tgid_ = main.tgid;
  }
  if (opts.before_start) opts.before_start((*init)->tid());
  absl::Status started = StartProcess(std::move(*init), opts);
  startup::Mark("guest started");
  absl::MutexLock l(&threads_mu_);
  threads_mu_.Await(absl::Condition(+[](int* n) { return *n == 0; }, &live_threads_));
  if (!started.ok()) return started;
  return init_status();
}

absl::StatusOr<int> Kernel::Spawn(StartOptions opts) {
  {
    absl::MutexLock l(&mu_);
    ThreadGroup* init = GroupByTgid(1);
    if (init == nullptr || init->exiting) {
      return absl::FailedPreconditionError("the sandbox's init has exited");
    }
  }
  auto task = NewProcess(opts);
  if (!task.ok()) return task.status();
  int pid = (*task)->tid();
  if (opts.before_start) opts.before_start(pid);
  SENTRY_RETURN_IF_ERROR(StartProcess(std::move(*task), opts));
  return pid;
}

void Kernel::Freeze() {
  absl::MutexLock l(&mu_);
  if (frozen_) return;
  frozen_ = true;
  for (auto& [tid, t] : tasks_) t->Interrupt();
  // Like the cgroup freezer's FROZEN: wait (briefly) until every task has parked; a task in
  // a long host call (a gofer round trip) parks when it returns.
  auto all_parked = +[](Kernel* k) ABSL_NO_THREAD_SAFETY_ANALYSIS {
    for (auto& [tid, t] : k->tasks_) {
      ThreadGroup& tg = *t->tg_;
      if (!t->frozen_ && !t->group_stopped_ && !tg.exiting && !tg.zombie && !tg.sentry_init) {
        return false;
      }
    }
    return true;
  };
  mu_.AwaitWithTimeout(absl::Condition(all_parked, this), absl::Seconds(1));
}

void Kernel::Thaw() {
  absl::MutexLock l(&mu_);
  if (!frozen_) return;
  frozen_ = false;
  for (auto& [tid, t] : tasks_) t->Interrupt();
}

}  // namespace sentry::kernel
