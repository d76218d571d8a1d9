// Process lifecycle: task exit, zombies, re-parenting, SIGCHLD, reaping.
#include <linux/futex.h>
#include <signal.h>
#include <sys/wait.h>

#include "sentry/base/logging.h"
#include "sentry/kernel/futex.h"
#include "sentry/kernel/kernel.h"
#include "vfs/tty.h"
#include "vfs/lock.h"

namespace sentry::kernel {

void Kernel::NotifyParent(ThreadGroup& child, int code, int status) {
  ThreadGroup* parent = child.parent;
  if (parent == nullptr) return;
  const abi::KSigAction& act = parent->handlers->actions[SIGCHLD - 1];
  bool is_stop_event = code == abi::kCLD_STOPPED || code == abi::kCLD_CONTINUED;
  if (!(is_stop_event && (act.flags & abi::kSA_NOCLDSTOP))) {
    abi::SigInfo info{};
    info.signo = SIGCHLD;
    info.code = code;
    info.f.chld.pid = child.tgid;
    info.f.chld.uid = child.creds.ruid;
    info.f.chld.status = status;
    if (!is_stop_event && child.exit_signal > 0) {
      info.signo = child.exit_signal;
      SendGroupSignal(*parent, info);
    } else if (is_stop_event) {
      SendGroupSignal(*parent, info);
    }
  }
  parent->child_events.Notify();
}

void Kernel::Reap(ThreadGroup& child) {
  ThreadGroup* parent = child.parent;
  int tgid = child.tgid, pgid = child.pgid, sid = child.sid;
  PidNsRef pidns = child.pidns;
  if (child.leader) tasks_.erase(child.leader->tid());
  if (parent) {
    std::erase_if(parent->children,
                  [&](const std::shared_ptr<ThreadGroup>& c) { return c.get() == &child; });
  }
  child.exit_events.Notify();  // pidfds: reaped
  groups_.erase(tgid);         // may destroy `child`
  // Its pid, and its group's and session's numbers if it was the last to use them.
  ReleasePid(pidns.get(), tgid);
  ReleasePid(pidns.get(), pgid);
  ReleasePid(pidns.get(), sid);
}

void Kernel::TaskExited(Task& t) {
  ThreadGroup& tg = *t.tg_;
  PtraceOnTaskExit(*this, t);
  // The thread's CPU time moves to the group in the same step as it leaves tg.tasks, so that
  // GroupCpuUsage counts it exactly once. This is the exiting task's own host thread.
  tg.cpu_exited += t.CpuUsage();
  t.cpu_retired_ = {};
  t.cpu_pids_.clear();
  t.host_thread_tid_ = 0;
  std::erase(tg.tasks, &t);
  if (&t != tg.leader) {
    tasks_.erase(t.tid());
    ReleasePid(tg.pidns.get(), t.tid());
  }
  tg.exit_events.Notify();                                // thread pidfds: this thread has exited
  for (Task* other : tg.tasks) other->waiter().Notify();  // an exec may wait for us
  if (!tg.tasks.empty()) return;

  // The last thread is gone: the process becomes a zombie, and its timers stop.
  tg.timers.KillAll();
  if (!tg.exiting) {
    tg.exiting = true;
    tg.exit_status = t.exit_status_;
  }
  tg.zombie = true;
  tg.stopped = false;
  tg.exit_events.Notify();  // pidfds: exited (and maybe reaped below)
  if (exit_observer) exit_observer(tg, tg.exit_status);
  ThreadGroup* init = GroupByTgid(1);
  bool is_init = init == &tg;
  if (is_init) {
    init_status_ = tg.exit_status;
    // The PID namespace dies with its init.
    for (auto& [tgid, g] : groups_) {
      if (g.get() != &tg) GroupExit(*g, SignalStatus(SIGKILL, false));
    }
  }
  // A nested PID namespace's init: ZapPidNamespace has emptied the namespace already.
  PidNamespace* pidns = tg.pidns.get();
  bool is_ns_init = pidns != nullptr && pidns->level() > 0 && pidns->init == &tg;
  if (is_ns_init) pidns->init = nullptr;
  // Orphans go to the nearest subreaper ancestor in their PID namespace, else to the
  // namespace's init.
  auto orphans = std::move(tg.children);
  tg.children.clear();
  ThreadGroup* reaper = is_ns_init ? init : ChildReaper(tg);
  for (ThreadGroup* a = tg.parent; a != nullptr && a->pidns == tg.pidns; a = a->parent) {
    if (a->subreaper && !a->zombie) {
      reaper = a;
      break;
    }
  }
  for (auto& c : orphans) {
    for (Task* ct : c->tasks) {
      if (ct->pdeathsig_ > 0) {
        abi::SigInfo info{};
        info.signo = ct->pdeathsig_;
        SendTaskSignal(*ct, info);
      }
    }
    if (is_init || reaper == nullptr || reaper->zombie) {
      c->parent = nullptr;
      if (c->zombie) {
        c->exit_events.Notify();
        groups_.erase(c->tgid);
        ReleasePid(c->pidns.get(), c->tgid);
      }
      continue;
    }
    c->parent = reaper;
    reaper->children.push_back(c);
    if (c->zombie && reaper->sentry_init) {
      SentryInitChildExited(*c);
    } else if (c->zombie) {
      reaper->child_events.Notify();
    }
  }

  ThreadGroup* parent = tg.parent;
  int status = tg.exit_status;
  int code = WIFSIGNALED(status) ? (WCOREDUMP(status) ? abi::kCLD_DUMPED : abi::kCLD_KILLED)
                                 : abi::kCLD_EXITED;
  int value = WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status);
  if (parent == nullptr) {
    if (tg.on_exit) std::exchange(tg.on_exit, nullptr)(status);
    if (!is_init) {
      PidNsRef pidns = tg.pidns;
      int tgid = tg.tgid;
      groups_.erase(tgid);  // `tg` was notified above, as a zombie; may destroy it
      ReleasePid(pidns.get(), tgid);
    }
    return;
  }
  if (parent->sentry_init) {
    SentryInitChildExited(tg);  // may destroy `tg`
    return;
  }
  const abi::KSigAction& act = parent->handlers->actions[SIGCHLD - 1];
  bool autoreap = tg.exit_signal == SIGCHLD &&
                  (act.handler == abi::kSigIgn || (act.flags & abi::kSA_NOCLDWAIT));
  NotifyParent(tg, code, value);
  if (autoreap) Reap(tg);
}

void Kernel::TakeOverLeader(Task& t) {
  ThreadGroup& tg = *t.tg_;
  if (tg.leader == &t) return;
  // The old leader has left tg.tasks but, as every leader, kept its tid in tasks_ for Reap.
  // Linux's de_thread releases it at once: no zombie, no SIGCHLD, nothing for wait. Its
  // Task object lives on until its own host thread is done with it.
  int pid = tg.tgid;
  auto it = tasks_.find(t.tid_);
  std::shared_ptr<Task> self = std::move(it->second);
  tasks_.erase(it);  // the exec'ing thread's own tid is free from now on
  ReleasePid(tg.pidns.get(), t.tid_);
  tasks_[pid] = std::move(self);
  t.tid_ = pid;
  tg.leader = &t;
}

void Task::ExitRobustList() {
  // Mark every robust futex this thread still owns as FUTEX_OWNER_DIED and wake a waiter.
  struct Head {
    uint64_t next;
    int64_t futex_offset;
    uint64_t pending;
  };
  auto head = CopyIn<Head>(GuestAddr(robust_list_));
  if (!head.ok()) return;
  int own_tid = LocalPid(tid_);  // the guest stores gettid()'s number, its namespace's
  auto release = [&](uint64_t entry) {
    uint64_t addr = entry + head->futex_offset;
    auto word = CopyIn<uint32_t>(GuestAddr(addr));
    if (!word.ok() || (*word & FUTEX_TID_MASK) != static_cast<uint32_t>(own_tid)) return;
    uint32_t nw = (*word & FUTEX_WAITERS) | FUTEX_OWNER_DIED;
    if (!CopyOut(GuestAddr(addr), nw).ok()) return;
    if (*word & FUTEX_WAITERS) {
      k_.futexes().Wake(mm_->FutexKey(addr, true), 1, FUTEX_BITSET_MATCH_ANY);
      k_.futexes().Wake(mm_->FutexKey(addr, false), 1, FUTEX_BITSET_MATCH_ANY);
    }
  };
  uint64_t entry = head->next & ~uint64_t{1};
  for (int n = 0; entry != robust_list_ && entry != 0 && n < 2048; n++) {
    auto next = CopyIn<uint64_t>(GuestAddr(entry));
    if (!next.ok()) break;
    if (entry != head->pending) release(entry);
    entry = *next & ~uint64_t{1};
  }
  if (head->pending) release(head->pending & ~uint64_t{1});
}

void Task::Exit() {
  if (robust_list_ && mm_) ExitRobustList();
  // CLONE_CHILD_CLEARTID: zero the tid word and wake a joiner.
  if (clear_child_tid_ && mm_) {
    if (CopyOut<int32_t>(GuestAddr(clear_child_tid_), 0).ok()) {
      k_.futexes().Wake(mm_->FutexKey(clear_child_tid_, false), 1, FUTEX_BITSET_MATCH_ANY);
      k_.futexes().Wake(mm_->FutexKey(clear_child_tid_, true), 1, FUTEX_BITSET_MATCH_ANY);
    }
  }
  if (vfork_done_) {
    vfork_done_->done = true;
    vfork_done_->queue.Notify();
    vfork_done_.reset();
  }
  RetireContextCpu();  // while the stub's clock is still there to read
  if (ctx_) ctx_->Kill();
  // The last thread out drops the process's POSIX record locks.
  bool last;
  {
    absl::MutexLock l(&k_.mu());
    last = tg_->tasks.size() <= 1;
  }
  if (last && fds_) {
    for (int fd : fds_->Fds()) {
      auto f = fds_->Get(fd);
      if (!f.ok() || !(*f)->inode()) continue;
      if (vfs::FileLocks* locks = (*f)->inode()->locks_if_any()) locks->ReleaseRecords(tg_.get());
    }
  }
  // Drop the resources outside the kernel lock: closing files wakes other tasks.
  fds_.reset();
  fs_.reset();
  // A namespace whose last task is gone goes away now (a mount namespace detaches its
  // mounts), not when the zombie is reaped. ExitSem below still needs the IPC one.
  NamespacesRef ns;
  {
    absl::MutexLock l(&k_.mu());
    ns = std::move(ns_);
  }
  // A PID namespace's init outlives the rest of its namespace (Linux's zap_pid_ns_processes).
  if (last) k_.ZapPidNamespace(*this);
  if (last) {
    // exit_sem, and exit_mm before the parent hears of the exit: its shared memory
    // attachments are gone by then (shm_nattch, shm_lpid).
    ns->ipc->ipc->ExitSem(tg_.get(), tg_->tgid);
    std::shared_ptr<mm::MemoryManager> group_mm;
    {
      absl::MutexLock l(&k_.mu());
      group_mm = std::move(tg_->mm);
    }
    group_mm.reset();
  }
  mm_.reset();
  std::shared_ptr<ThreadGroup> keep;
  int session_ended = 0;
  {
    absl::MutexLock l(&k_.mu());
    keep = tg_;
    k_.TaskExited(*this);
    if (keep->zombie && keep->sid == keep->tgid) session_ended = keep->sid;
  }
  // A session leader's exit hangs up its controlling terminal (SIGHUP to the foreground job).
  if (session_ended != 0) vfs::TtySessionEnded(session_ended);
  ctx_.reset();
}

}  // namespace sentry::kernel
