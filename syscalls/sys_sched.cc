// Scheduling: affinity, policies and priorities, getcpu. The state is the guest's own
// (kernel/sched.h): the Sentry decides where guest threads run on the host.
#include <sched.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "syscalls/common.h"

namespace sentry::syscalls {

using kernel::SchedState;

namespace {

constexpr int kSchedResetOnFork = 0x40000000;
constexpr uint64_t kFlagResetOnFork = 0x01, kFlagKeepPolicy = 0x08, kFlagKeepParams = 0x10,
                   kFlagUtilClamp = 0x60, kFlagAll = 0x7f, kFlagSugov = 0x10000000;
constexpr uint32_t kAttrSizeVer0 = 48, kAttrSizeVer1 = 56;
constexpr int kSetparamPolicy = -1;  // keep the current policy

using abi::SchedAttr;
static_assert(sizeof(SchedAttr) == kAttrSizeVer1);

// The thread `pid` names, 0 being the caller. Preconditions: Kernel::mu_ held.
Task* Target(Task& t, int pid) { return pid == 0 ? &t : t.kernel().TaskByTid(t.ToGlobalPid(pid)); }

bool ValidPolicy(int p) {
  return p == kernel::kSchedOther || p == kernel::kSchedFifo || p == kernel::kSchedRr ||
         p == kernel::kSchedBatch || p == kernel::kSchedIdle || p == kernel::kSchedDeadline ||
         (p == kernel::kSchedExt && kernel::Cpus().sched_ext);
}
bool RtPolicy(int p) { return p == kernel::kSchedFifo || p == kernel::kSchedRr; }
// Linux's fair_policy: the policies whose sched_attr carries a nice value (not SCHED_IDLE).
bool FairPolicy(int p) { return p == kernel::kSchedOther || p == kernel::kSchedBatch; }

// Linux's __checkparam_dl: runtime <= deadline <= period, within the sysctl period bounds.
bool DeadlineParamsOk(const SchedAttr& a) {
  if (a.deadline == 0 || a.runtime < (1u << 10)) return false;
  if ((a.deadline | a.period) & (1ull << 63)) return false;
  uint64_t period = a.period ? a.period : a.deadline;
  if (period < a.deadline || a.deadline < a.runtime) return false;
  return period >= 100'000 && period <= 4'194'304'000ull;
}

// RLIMIT_NICE allows `nice` (20 - nice <= limit). Preconditions: Kernel::mu_ held.
bool NiceAllowed(Task& p, int nice) { return 20u - nice <= p.tg().rlimits[RLIMIT_NICE].cur; }

// The caller may change `p`'s scheduling without CAP_SYS_NICE (check_same_owner).
bool SameOwner(Task& t, Task& p) {
  const kernel::Credentials& me = t.tg().creds;
  const kernel::Credentials& them = p.tg().creds;
  return me.euid == them.euid || me.euid == them.ruid;
}

bool Privileged(Task& t) { return t.tg().creds.HasCapability(CAP_SYS_NICE); }

// The attributes get_params reports for `s`.
void GetParams(const SchedState& s, SchedAttr* a) {
  if (s.policy == kernel::kSchedDeadline) {
    a->runtime = s.dl_runtime;
    a->deadline = s.dl_deadline;
    a->period = s.dl_period;
  } else if (s.rt()) {
    a->priority = s.rt_priority;
  } else {
    a->nice = s.nice;
    a->runtime = s.slice_ns ? s.slice_ns : kernel::Cpus().fair_slice_ns;
  }
}

// Linux's __sched_setscheduler for a guest thread. Preconditions: Kernel::mu_ held.
Result<void> SetScheduler(Task& t, Task& p, SchedAttr a) {
  SchedState& s = p.sched_;
  int policy = static_cast<int>(a.policy);
  bool reset_on_fork;
  if (policy < 0) {
    reset_on_fork = s.reset_on_fork;
    policy = s.policy;
  } else {
    reset_on_fork = a.flags & kFlagResetOnFork;
    if (!ValidPolicy(policy)) return Errno(EINVAL);
  }
  if (a.flags & ~(kFlagAll | kFlagSugov)) return Errno(EINVAL);
  if (a.priority > 99) return Errno(EINVAL);
  if (policy == kernel::kSchedDeadline && !DeadlineParamsOk(a)) return Errno(EINVAL);
  if (RtPolicy(policy) != (a.priority != 0)) return Errno(EINVAL);
  if (!Privileged(t)) {
    bool need_priv = false;
    if (FairPolicy(policy) && a.nice < s.nice && !NiceAllowed(p, a.nice)) need_priv = true;
    if (RtPolicy(policy)) {
      uint64_t rlim = p.tg().rlimits[RLIMIT_RTPRIO].cur;
      if (policy != s.policy && rlim == 0) need_priv = true;
      if (a.priority > static_cast<uint32_t>(s.rt_priority) && a.priority > rlim) need_priv = true;
    }
    if (policy == kernel::kSchedDeadline) need_priv = true;
    if (s.policy == kernel::kSchedIdle && policy != kernel::kSchedIdle && !NiceAllowed(p, s.nice)) {
      need_priv = true;
    }
    if (!SameOwner(t, p)) need_priv = true;
    if (s.reset_on_fork && !reset_on_fork) need_priv = true;
    if (need_priv) return Errno(EPERM);
    if (a.flags & kFlagSugov) return Errno(EINVAL);
  }
  if (a.flags & kFlagUtilClamp) return Errno(EOPNOTSUPP);  // no utilization clamping
  s.policy = policy;
  s.reset_on_fork = reset_on_fork;
  s.rt_priority = static_cast<int>(a.priority);
  if (policy == kernel::kSchedDeadline) {
    s.dl_runtime = a.runtime;
    s.dl_deadline = a.deadline;
    s.dl_period = a.period;
  } else if (FairPolicy(policy)) {
    s.nice = a.nice;
    s.slice_ns = a.runtime ? std::clamp<uint64_t>(a.runtime, 100'000, 100'000'000) : 0;
  }
  return Ok();
}

// sched_setscheduler and sched_setparam.
Result<uint64_t> DoSetScheduler(Task& t, int pid, int policy, GuestAddr param) {
  if (param.IsNull() || pid < 0) return Errno(EINVAL);
  int32_t prio = SENTRY_TRY(t.CopyIn<int32_t>(param));
  absl::MutexLock l(&t.kernel().mu());
  Task* p = Target(t, pid);
  if (!p) return Errno(ESRCH);
  SchedAttr a{};
  a.priority = static_cast<uint32_t>(prio);
  a.nice = p->sched_.nice;
  a.runtime = p->sched_.slice_ns;
  if (policy >= 0 && (policy & kSchedResetOnFork)) {
    a.flags |= kFlagResetOnFork;
    policy &= ~kSchedResetOnFork;
  }
  a.policy = static_cast<uint32_t>(policy);
  SENTRY_TRY(SetScheduler(t, *p, a));
  return 0;
}

}  // namespace

Result<uint64_t> SysSchedGetaffinity(Task& t, int pid, uint32_t len, GuestAddr mask) {
  const kernel::SandboxCpus& cpus = kernel::Cpus();
  if (static_cast<uint64_t>(len) * 8 < static_cast<uint64_t>(cpus.nr_cpu_ids) || (len & 7)) {
    return Errno(EINVAL);
  }
  kernel::CpuSet set;
  {
    absl::MutexLock l(&t.kernel().mu());
    Task* p = Target(t, pid);
    if (!p) return Errno(ESRCH);
    set = p->sched_.affinity;
  }
  std::vector<uint8_t> out(std::min<size_t>(len, cpus.mask_bytes));
  kernel::CpuSetToBytes(set, out);
  SENTRY_TRY(t.CopyOutBytes(mask, out));
  return out.size();
}

Result<uint64_t> SysSchedSetaffinity(Task& t, int pid, uint32_t len, GuestAddr mask) {
  const kernel::SandboxCpus& cpus = kernel::Cpus();
  std::vector<uint8_t> in(std::min<size_t>(len, cpus.mask_bytes));
  SENTRY_TRY(t.CopyInBytes(mask, in));
  kernel::CpuSet want = kernel::CpuSetFromBytes(in) & cpus.online;
  absl::MutexLock l(&t.kernel().mu());
  Task* p = Target(t, pid);
  if (!p) return Errno(ESRCH);
  if (!SameOwner(t, *p) && !Privileged(t)) return Errno(EPERM);
  if (want.none()) return Errno(EINVAL);
  p->sched_.affinity = want;
  return 0;
}

Result<uint64_t> SysGetcpu(Task& t, GuestAddr cpu, GuestAddr node, GuestAddr) {
  // The host CPU the Sentry thread serving the call is on, if the thread's mask allows it,
  // else the first CPU of the mask.
  kernel::CpuSet mask;
  {
    absl::MutexLock l(&t.kernel().mu());
    mask = t.sched_.affinity;
  }
  int c = sched_getcpu();
  if (c < 0 || c >= kernel::kMaxCpus || !mask[c]) {
    c = 0;
    while (c + 1 < kernel::kMaxCpus && !mask[c]) c++;
  }
  if (!cpu.IsNull()) SENTRY_TRY(t.CopyOut<uint32_t>(cpu, c));
  if (!node.IsNull()) SENTRY_TRY(t.CopyOut<uint32_t>(node, 0));
  return 0;
}

Result<uint64_t> SysSchedSetscheduler(Task& t, int pid, int policy, GuestAddr param) {
  if (policy < 0) return Errno(EINVAL);
  return DoSetScheduler(t, pid, policy, param);
}

Result<uint64_t> SysSchedSetparam(Task& t, int pid, GuestAddr param) {
  return DoSetScheduler(t, pid, kSetparamPolicy, param);
}

Result<uint64_t> SysSchedGetscheduler(Task& t, int pid) {
  if (pid < 0) return Errno(EINVAL);
  absl::MutexLock l(&t.kernel().mu());
  Task* p = Target(t, pid);
  if (!p) return Errno(ESRCH);
  return static_cast<uint64_t>(p->sched_.policy |
                               (p->sched_.reset_on_fork ? kSchedResetOnFork : 0));
}

Result<uint64_t> SysSchedGetparam(Task& t, int pid, GuestAddr param) {
  if (param.IsNull() || pid < 0) return Errno(EINVAL);
  int32_t prio;
  {
    absl::MutexLock l(&t.kernel().mu());
    Task* p = Target(t, pid);
    if (!p) return Errno(ESRCH);
    prio = p->sched_.rt() ? p->sched_.rt_priority : 0;
  }
  SENTRY_TRY(t.CopyOut(param, prio));
  return 0;
}

Result<uint64_t> SysSchedSetattr(Task& t, int pid, GuestAddr uattr, uint32_t flags) {
  if (uattr.IsNull() || pid < 0 || flags) return Errno(EINVAL);
  uint32_t size = SENTRY_TRY(t.CopyIn<uint32_t>(uattr));
  if (size == 0) size = kAttrSizeVer0;
  if (size < kAttrSizeVer0 || size > 4096) {
    SENTRY_TRY(t.CopyOut<uint32_t>(uattr, kAttrSizeVer1));
    return Errno(E2BIG);
  }
  std::vector<uint8_t> raw(size);
  SENTRY_TRY(t.CopyInBytes(uattr, raw));
  // Bytes past the structure we know must be zero (copy_struct_from_user).
  if (std::any_of(raw.begin() + std::min<size_t>(size, sizeof(SchedAttr)), raw.end(),
                  [](uint8_t b) { return b != 0; })) {
    SENTRY_TRY(t.CopyOut<uint32_t>(uattr, kAttrSizeVer1));
    return Errno(E2BIG);
  }
  SchedAttr a{};
  memcpy(&a, raw.data(), std::min<size_t>(size, sizeof(a)));
  if ((a.flags & kFlagUtilClamp) && size < kAttrSizeVer1) return Errno(EINVAL);
  a.nice = std::clamp(a.nice, -20, 19);
  if (static_cast<int32_t>(a.policy) < 0) return Errno(EINVAL);
  if (a.flags & kFlagKeepPolicy) a.policy = static_cast<uint32_t>(kSetparamPolicy);
  absl::MutexLock l(&t.kernel().mu());
  Task* p = Target(t, pid);
  if (!p) return Errno(ESRCH);
  if (a.flags & kFlagKeepParams) GetParams(p->sched_, &a);
  SENTRY_TRY(SetScheduler(t, *p, a));
  return 0;
}

Result<uint64_t> SysSchedGetattr(Task& t, int pid, GuestAddr uattr, uint32_t usize,
                                 uint32_t flags) {
  if (uattr.IsNull() || pid < 0 || usize > 4096 || usize < kAttrSizeVer0 || flags) {
    return Errno(EINVAL);
  }
  SchedAttr a{};
  {
    absl::MutexLock l(&t.kernel().mu());
    Task* p = Target(t, pid);
    if (!p) return Errno(ESRCH);
    a.policy = static_cast<uint32_t>(p->sched_.policy);
    if (p->sched_.reset_on_fork) a.flags |= kFlagResetOnFork;
    GetParams(p->sched_, &a);
  }
  // The structure, cut to the caller's size or followed by zeros up to it
  // (copy_struct_to_user, Linux 6.13 on).
  a.size = std::min<uint32_t>(usize, sizeof(a));
  std::vector<uint8_t> out(usize, 0);
  memcpy(out.data(), &a, a.size);
  SENTRY_TRY(t.CopyOutBytes(uattr, out));
  return 0;
}

Result<uint64_t> SysSchedGetPriorityMax(Task&, int policy) {
  if (RtPolicy(policy)) return 99;
  if (ValidPolicy(policy)) return 0;
  return Errno(EINVAL);
}

Result<uint64_t> SysSchedGetPriorityMin(Task&, int policy) {
  if (RtPolicy(policy)) return 1;
  if (ValidPolicy(policy)) return 0;
  return Errno(EINVAL);
}

Result<uint64_t> SysSchedRrGetInterval(Task& t, int pid, GuestAddr interval) {
  if (pid < 0) return Errno(EINVAL);
  int64_t ns = 0;
  {
    absl::MutexLock l(&t.kernel().mu());
    Task* p = Target(t, pid);
    if (!p) return Errno(ESRCH);
    if (p->sched_.policy == kernel::kSchedRr) ns = kernel::Cpus().rr_timeslice_ns;
    // Fair tasks: the host's answer for its own fair tasks at start-up, in whole jiffies
    // (0 when the slice is under a jiffy); it is the same for every fair task.
    if (p->sched_.fair()) ns = kernel::Cpus().fair_interval_ns;
  }
  abi::Timespec ts{ns / 1'000'000'000, ns % 1'000'000'000};
  SENTRY_TRY(t.CopyOut(interval, ts));
  return 0;
}

}  // namespace sentry::syscalls
