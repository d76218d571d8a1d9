// PID namespaces (pid_namespace.h): numbers in nested namespaces, and the death of a
// namespace's init.
#include "sentry/kernel/pid_namespace.h"

#include <signal.h>

#include "sentry/kernel/kernel.h"

namespace sentry::kernel {

Result<int> Kernel::AllocPid(PidNamespace& ns) {
  // Linux's alloc_pid refuses a namespace whose init has exited (PIDNS_ADDING), at any level.
  for (PidNamespace* p = &ns; p->level() > 0; p = p->parent().get()) {
    if (p->dead) return Errno(ENOMEM);
  }
  int pid = AllocPid();
  for (PidNamespace* p = &ns; p->level() > 0; p = p->parent().get()) p->Assign(pid);
  return pid;
}

void Kernel::ReleasePid(PidNamespace* ns, int pid) {
  if (ns == nullptr || ns->level() == 0 || pid <= 0) return;
  // A number stays while a task has it or a process group or session goes by it, as Linux
  // keeps a struct pid while it is used (kill(-pgrp) after the group's leader was reaped).
  if (tasks_.contains(pid)) return;
  for (auto& [tgid, g] : groups_) {
    if (g->pgid == pid || g->sid == pid) return;
  }
  for (PidNamespace* p = ns; p->level() > 0; p = p->parent().get()) {
    p->Release(pid);
  }
}

ThreadGroup* Kernel::ChildReaper(const ThreadGroup& tg) {
  if (tg.pidns == nullptr || tg.pidns->level() == 0) return GroupByTgid(1);
  return tg.pidns->init;
}

void Kernel::ZapPidNamespace(Task& init_task) {
  ThreadGroup& tg = init_task.tg();
  PidNamespace* ns = nullptr;
  // Another process of the namespace, or of one nested in it, that is still to go: live, or
  // a zombie that the namespace's init will reap (its parent is inside). A zombie whose
  // parent is outside waits for that parent.
  auto pending = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (auto& [tgid, g] : groups_) {
      if (g.get() == &tg || !ns->Contains(g->pidns.get())) continue;
      bool outside_parent = g->parent != nullptr && !ns->Contains(g->parent->pidns.get());
      if (!(g->zombie && outside_parent)) return true;
    }
    return false;
  };
  {
    absl::MutexLock l(&mu_);
    ns = tg.pidns.get();
    if (ns == nullptr || ns->level() == 0 || ns->init != &tg) return;
    ns->dead = true;
    for (auto& [tgid, g] : groups_) {
      if (g.get() != &tg && ns->Contains(g->pidns.get())) {
        GroupExit(*g, SignalStatus(SIGKILL, false));
      }
    }
  }
  // The init reaps what it has and what the dying processes leave to it, until none is left
  // (orphans come to it while it is not yet a zombie). The poll bounds a missed wake-up.
  ScopedWait w(tg.child_events, init_task.waiter());
  for (;;) {
    {
      absl::MutexLock l(&mu_);
      auto children = tg.children;
      for (auto& c : children) {
        if (c->zombie) Reap(*c);
      }
      if (!pending()) return;
    }
    init_task.waiter().WaitUntil(absl::Now() + absl::Milliseconds(20));
  }
}

}  // namespace sentry::kernel
