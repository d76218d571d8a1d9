#include "sentry/kernel/kernel.h"

#include <signal.h>
#include <string.h>
#include <sys/resource.h>

#include <future>
#include <thread>

#include "sentry/base/host_thread.h"
#include "sentry/base/logging.h"
#include "sentry/base/timer_queue.h"
#include "sentry/kernel/futex.h"
#include "sentry/kernel/host_limits.h"
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
  InstallTtyHost(*this);
  InstallAsyncHost(*this);
  netstack::SetCredentialSource(TaskSocketCreds);
  // The sandbox's CPUs, read before any Sentry thread is pinned to one of them.
  (void)Cpus();
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

absl::StatusOr<int> Kernel::Run(StartOptions opts) {
  auto tg = std::make_shared<ThreadGroup>();
  std::shared_ptr<Task> init;
  {
    absl::MutexLock l(&mu_);
    int pid = AllocPid();
    init = std::make_shared<Task>(*this, pid);
    tg->tgid = tg->pgid = tg->sid = pid;
    tg->leader = init.get();
    tg->tasks.push_back(init.get());
    tg->handlers = std::make_shared<SignalHandlers>();
    tg->creds = Credentials::Initial(opts.uid >= 0 ? opts.uid : getuid(),
                                     opts.gid >= 0 ? opts.gid : getgid());
    for (int r = 0; r < abi::kNumRlimits; r++) {
      struct rlimit rl;
      getrlimit(r, &rl);
      tg->rlimits[r] = {rl.rlim_cur, rl.rlim_max};
    }
    tg->rlimits[RLIMIT_NOFILE] = opts.nofile;
    init->sched_ = InitialSchedState();
    init->tg_ = tg;
    groups_[pid] = tg;
    tg->timers.UpdateRlimitCpu(*this, *tg);
    Register(init);
  }
  init->fds_ = std::make_shared<vfs::FdTable>();
  for (size_t fd = 0; fd < opts.stdio.size(); fd++) {
    (void)init->fds_->Set(static_cast<int>(fd), opts.stdio[fd], false, 1024);
  }
  {
    vfs::Path root = vfs_->Root();
    init->fs_ = std::make_shared<FsContext>(root, root);
    vfs::Context ctx = init->VfsContext();
    auto cwd = vfs_->Resolve(ctx, root, opts.cwd, true);
    if (!cwd.ok() || !cwd->inode()->IsDir()) {
      return absl::NotFoundError("working directory " + opts.cwd + ": " +
                                 (cwd.ok() ? "not a directory" : strerror(cwd.error().code())));
    }
    init->fs_->set_cwd(*cwd);
  }
  if (!opts.seccomp_filter.empty()) {
    auto r = InstallInitialSeccomp(*init, std::move(opts.seccomp_filter));
    if (!r.ok()) return absl::InvalidArgumentError("the seccomp profile is not a valid filter");
  }

  // init's thread creates its address space itself: that thread becomes the stub's tracer.
  std::promise<Result<void>> started;
  auto started_future = started.get_future();
  TaskThreadStarted();
  bool started_thread = StartHostThread([&, init]() {
    init->BindHostThread();
    auto r = loader::Exec(*init, opts.path, opts.argv, opts.envp);
    started.set_value(r);
    if (!r.ok()) {
      init->SetExiting(ExitStatus(127));
      {
        absl::MutexLock l(&mu_);
        init->tg_->exiting = true;
        init->tg_->exit_status = ExitStatus(127);
      }
      init->Exit();
      TaskThreadDone();
      return;
    }
    init->Run();
  });
  if (!started_thread) {
    TaskThreadDone();
    return absl::ResourceExhaustedError("cannot start a thread for init");
  }
  Result<void> r = started_future.get();
  if (!r.ok()) {
    absl::MutexLock l(&threads_mu_);
    threads_mu_.Await(absl::Condition(
        +[](int* n) { return *n == 0; }, &live_threads_));
    return absl::Status(absl::ErrnoToStatus(r.error().code(), opts.path).code(),
                        opts.path + ": " + strerror(r.error().code()));
  }
  absl::MutexLock l(&threads_mu_);
  threads_mu_.Await(absl::Condition(+[](int* n) { return *n == 0; }, &live_threads_));
  return init_status();
}

}  // namespace sentry::kernel
