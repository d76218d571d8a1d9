// System V semaphores: semget, semop/semtimedop, semctl, and SEM_UNDO at exit.
#include "sentry/kernel/ipc_impl.h"
#include "sentry/kernel/kernel.h"

namespace sentry::kernel {
namespace {

constexpr int kSemVmx = 32767;  // SEMVMX: the largest value
constexpr int kSemAem = 32767;  // SEMAEM: the largest undo adjustment

// Tries `sops` as a whole (perform_atomic_semop). 0 when done, -1 when it must wait for
// sops[*blocking], else an errno (ERANGE; EAGAIN for IPC_NOWAIT).
int TryOps(SemSet& set, const std::vector<struct sembuf>& sops, const void* owner, int pid,
           size_t* blocking) {
  std::vector<int> vals(set.sems.size());
  for (size_t i = 0; i < vals.size(); i++) vals[i] = set.sems[i].val;
  auto undo_it = set.undo.find(owner);
  for (size_t i = 0; i < sops.size(); i++) {
    const struct sembuf& op = sops[i];
    int cur = vals[op.sem_num];
    int next = cur + op.sem_op;
    if ((op.sem_op == 0 && cur != 0) || next < 0) {
      *blocking = i;
      return (op.sem_flg & IPC_NOWAIT) ? EAGAIN : -1;
    }
    if (next > kSemVmx) return ERANGE;
    if ((op.sem_flg & SEM_UNDO) && undo_it != set.undo.end()) {
      int adj = undo_it->second[op.sem_num] - op.sem_op;
      if (adj < -kSemAem - 1 || adj > kSemAem) return ERANGE;
    }
    vals[op.sem_num] = next;
  }
  for (const struct sembuf& op : sops) {
    set.sems[op.sem_num].pid = pid;
    if (op.sem_flg & SEM_UNDO) {
      auto& adj = set.undo.try_emplace(owner, set.sems.size(), 0).first->second;
      adj[op.sem_num] -= op.sem_op;
    }
  }
  for (size_t i = 0; i < vals.size(); i++) set.sems[i].val = vals[i];
  set.otime = IpcNow();
  return 0;
}

void WakeAll(SemSet& set, int status) {
  for (SemWaiter* w : set.waiters) {
    w->status = status;
    w->waiter->Notify();
  }
  set.waiters.clear();
}

}  // namespace

// do_smart_update: after the values changed, completes every sleeper that can go now, in
// arrival order, and repeats while that changes values further.
void IpcNamespace::SemUpdate(SemSet& set) {
  for (bool progress = true; progress;) {
    progress = false;
    for (auto it = set.waiters.begin(); it != set.waiters.end();) {
      SemWaiter* w = *it;
      int r = TryOps(set, w->sops, w->owner, w->pid, &w->blocking);
      if (r == -1) {
        ++it;
        continue;
      }
      w->status = r;
      w->waiter->Notify();
      it = set.waiters.erase(it);
      if (r == 0) progress = true;
    }
  }
}

Result<int> IpcNamespace::SemGet(Task& t, int32_t key, int nsems, int flags) {
  if (nsems < 0 || nsems > limits.semmsl) return Errno(EINVAL);
  IpcCaller c = CallerOf(t);
  absl::MutexLock l(&mu_);
  auto make = [&]() -> Result<std::shared_ptr<IpcObject>> {
    if (nsems == 0) return Errno(EINVAL);
    if (sem_count_ + nsems > limits.semmns) return Errno(ENOSPC);
    auto set = std::make_shared<SemSet>();
    set->sems.resize(static_cast<size_t>(nsems));
    set->ctime = IpcNow();
    sem_count_ += nsems;
    return std::shared_ptr<IpcObject>(std::move(set));
  };
  auto check = [&](IpcObject& o) -> Result<void> {
    if (static_cast<int>(static_cast<SemSet&>(o).sems.size()) < nsems) return Errno(EINVAL);
    return Ok();
  };
  return Get(sem_, c, key, flags, limits.semmni, make, check);
}

Result<void> IpcNamespace::SemOp(Task& t, int id, std::vector<struct sembuf> sops,
                                 absl::Time deadline) {
  IpcCaller c = CallerOf(t);
  const void* owner = &t.tg();
  unsigned max_num = 0;
  bool alter = false;
  for (const struct sembuf& op : sops) {
    max_num = std::max<unsigned>(max_num, op.sem_num);
    alter |= op.sem_op != 0;
  }
  SemWaiter w{owner, c.pid, std::move(sops), 0, -1, &t.waiter()};
  std::shared_ptr<SemSet> set;
  {
    absl::MutexLock l(&mu_);
    set = std::static_pointer_cast<SemSet>(sem_.Find(id));
    if (!set) return Errno(EINVAL);
    if (max_num >= set->sems.size()) return Errno(EFBIG);
    if (!set->perm.Allows(c, alter ? 0222 : 0444)) return Errno(EACCES);
    int r = TryOps(*set, w.sops, owner, c.pid, &w.blocking);
    if (r == 0 && alter) SemUpdate(*set);
    if (r == 0) return Ok();
    if (r > 0) return Errno(r);
    t.waiter().Clear();
    set->waiters.push_back(&w);
  }
  for (;;) {
    Result<void> r = t.Wait(deadline);
    absl::MutexLock l(&mu_);
    if (w.status == 0) return Ok();
    if (w.status > 0) return Errno(w.status);
    if (r.ok()) continue;
    set->waiters.remove(&w);
    // Never restarted, SA_RESTART or not (signal(7)); a timeout is EAGAIN.
    return Errno(r.error() == ETIMEDOUT ? EAGAIN : EINTR);
  }
}

Result<uint64_t> IpcNamespace::SemCtl(Task& t, int id, int num, int cmd, uint64_t arg) {
  if (id < 0 || cmd < 0) return Errno(EINVAL);
  IpcCaller c = CallerOf(t);
  GuestAddr ptr(arg);
  switch (cmd) {
    case IPC_INFO:
    case SEM_INFO: {
      struct seminfo info {};
      info.semmni = limits.semmni;
      info.semmns = limits.semmns;
      info.semmsl = limits.semmsl;
      info.semopm = limits.semopm;
      info.semvmx = kSemVmx;
      info.semmnu = limits.semmns;
      info.semmap = limits.semmns;
      info.semume = limits.semopm;
      int max;
      {
        absl::MutexLock l(&mu_);
        info.semusz = cmd == SEM_INFO ? static_cast<int>(sem_.size()) : 20;
        info.semaem = cmd == SEM_INFO ? static_cast<int>(sem_count_) : kSemAem;
        max = sem_.MaxIndex();
      }
      SENTRY_TRY(t.CopyOut(ptr, info));
      return max;
    }
    case IPC_SET: {
      auto ds = SENTRY_TRY(t.CopyIn<struct semid_ds>(ptr));
      absl::MutexLock l(&mu_);
      auto set = std::static_pointer_cast<SemSet>(sem_.Find(id));
      if (!set) return Errno(EINVAL);
      if (!set->perm.OwnedBy(c)) return Errno(EPERM);
      SetPerm(set->perm, ds.sem_perm);
      set->ctime = IpcNow();
      return 0;
    }
    case IPC_RMID: {
      absl::MutexLock l(&mu_);
      auto set = std::static_pointer_cast<SemSet>(sem_.Find(id));
      if (!set) return Errno(EINVAL);
      if (!set->perm.OwnedBy(c)) return Errno(EPERM);
      WakeAll(*set, EIDRM);
      sem_count_ -= static_cast<int64_t>(set->sems.size());
      sem_.Remove(id);
      return 0;
    }
    case SETVAL: {
      int val = static_cast<int>(arg);
      if (val < 0 || val > kSemVmx) return Errno(ERANGE);
      absl::MutexLock l(&mu_);
      auto set = std::static_pointer_cast<SemSet>(sem_.Find(id));
      if (!set) return Errno(EINVAL);
      if (num < 0 || num >= static_cast<int>(set->sems.size())) return Errno(EINVAL);
      if (!set->perm.Allows(c, 0222)) return Errno(EACCES);
      for (auto& [owner, adj] : set->undo) adj[num] = 0;
      set->sems[num].val = val;
      set->sems[num].pid = c.pid;
      set->ctime = IpcNow();
      SemUpdate(*set);
      return 0;
    }
    case SETALL: {
      size_t n;
      {
        absl::MutexLock l(&mu_);
        auto set = std::static_pointer_cast<SemSet>(sem_.Find(id));
        if (!set) return Errno(EINVAL);
        if (!set->perm.Allows(c, 0222)) return Errno(EACCES);
        n = set->sems.size();
      }
      std::vector<uint16_t> vals(n);
      SENTRY_TRY(t.CopyInBytes(ptr, {reinterpret_cast<uint8_t*>(vals.data()), n * 2}));
      for (uint16_t v : vals) {
        if (v > kSemVmx) return Errno(ERANGE);
      }
      absl::MutexLock l(&mu_);
      auto set = std::static_pointer_cast<SemSet>(sem_.Find(id));
      if (!set) return Errno(EIDRM);
      for (auto& [owner, adj] : set->undo) std::fill(adj.begin(), adj.end(), 0);
      for (size_t i = 0; i < n; i++) set->sems[i] = {vals[i], c.pid};
      set->ctime = IpcNow();
      SemUpdate(*set);
      return 0;
    }
    default:
      break;
  }
  // The reads.
  absl::ReleasableMutexLock l(&mu_);
  bool by_index = cmd == SEM_STAT || cmd == SEM_STAT_ANY;
  auto set = std::static_pointer_cast<SemSet>(by_index ? sem_.AtIndex(id) : sem_.Find(id));
  if (!set) return Errno(EINVAL);
  if (cmd != SEM_STAT_ANY && !set->perm.Allows(c, 0444)) return Errno(EACCES);
  int nsems = static_cast<int>(set->sems.size());
  switch (cmd) {
    case IPC_STAT:
    case SEM_STAT:
    case SEM_STAT_ANY: {
      struct semid_ds ds {};
      ds.sem_perm = ToAbi(set->perm);
      ds.sem_otime = set->otime;
      ds.sem_ctime = set->ctime;
      ds.sem_nsems = set->sems.size();
      int ret = cmd == IPC_STAT ? 0 : set->id;
      l.Release();
      SENTRY_TRY(t.CopyOut(ptr, ds));
      return ret;
    }
    case GETALL: {
      std::vector<uint16_t> vals;
      for (auto& s : set->sems) vals.push_back(static_cast<uint16_t>(s.val));
      l.Release();
      SENTRY_TRY(
          t.CopyOutBytes(ptr, {reinterpret_cast<const uint8_t*>(vals.data()), vals.size() * 2}));
      return 0;
    }
    case GETVAL:
    case GETPID:
    case GETNCNT:
    case GETZCNT:
      break;
    default:
      return Errno(EINVAL);
  }
  if (num < 0 || num >= nsems) return Errno(EINVAL);
  if (cmd == GETVAL) return set->sems[num].val;
  if (cmd == GETPID) {
    // A global pid, shown as the caller's PID namespace numbers it (0: not visible); the
    // translation takes Kernel::mu_, which is never taken inside this namespace's lock.
    int pid = set->sems[num].pid;
    l.Release();
    return t.LocalPid(pid);
  }
  // Waiters count on the semaphore they sleep on only (as Linux since 4.x).
  uint64_t n = 0;
  for (SemWaiter* w : set->waiters) {
    const struct sembuf& op = w->sops[w->blocking];
    if (op.sem_num == num && (cmd == GETZCNT ? op.sem_op == 0 : op.sem_op < 0)) n++;
  }
  return n;
}

void IpcNamespace::ExitSem(const void* owner, int pid) {
  absl::MutexLock l(&mu_);
  for (auto& [index, obj] : sem_.objects()) {
    auto& set = static_cast<SemSet&>(*obj);
    auto it = set.undo.find(owner);
    if (it == set.undo.end()) continue;
    for (size_t i = 0; i < set.sems.size(); i++) {
      if (it->second[i] == 0) continue;
      set.sems[i].val = std::clamp(set.sems[i].val + it->second[i], 0, kSemVmx);
      set.sems[i].pid = pid;
    }
    set.undo.erase(it);
    SemUpdate(set);
  }
}

}  // namespace sentry::kernel
