// Nice values and I/O priorities of guest threads, by thread, process group or user, with
// Linux's permission rules (CAP_SYS_NICE overrides them).
#include <sys/resource.h>

#include <functional>

#include "syscalls/common.h"

namespace sentry::syscalls {

namespace {

constexpr int kIoprioWhoProcess = 1;  // PGRP 2 and USER 3: PRIO_* + 1
constexpr int kIoprioClassNone = 0, kIoprioClassRt = 1, kIoprioClassBe = 2, kIoprioClassIdle = 3;
constexpr int kIoprioBeNorm = (kIoprioClassBe << kernel::kIoprioClassShift) | 4;

// Calls `fn` on each thread `which` (PRIO_*) and `who` name;
// false when `which` is unknown. Preconditions: Kernel::mu_ held.
bool ForEachTarget(Task& t, int which, int who, const std::function<void(Task&)>& fn) {
  kernel::Kernel& k = t.kernel();
  switch (which) {
    case PRIO_PROCESS:
      if (Task* p = who == 0 ? &t : k.TaskByTid(t.ToGlobalPid(who))) fn(*p);
      return true;
    case PRIO_PGRP: {
      int pgrp = who == 0 ? t.tg().pgid : t.ToGlobalPid(who);
      for (auto& [tid, p] : k.tasks()) {
        if (p->tg_ && p->tg().pgid == pgrp) fn(*p);
      }
      return true;
    }
    case PRIO_USER: {
      uint32_t uid = who == 0 ? t.tg().creds.ruid : static_cast<uint32_t>(who);
      for (auto& [tid, p] : k.tasks()) {
        if (p->tg_ && p->tg().creds.ruid == uid) fn(*p);
      }
      return true;
    }
    default:
      return false;
  }
}

bool Privileged(Task& t) { return t.tg().creds.HasCapability(CAP_SYS_NICE); }

// set_one_prio_perm: the caller owns `p` or has CAP_SYS_NICE.
bool MayChange(Task& t, Task& p) {
  const kernel::Credentials& me = t.tg().creds;
  const kernel::Credentials& them = p.tg().creds;
  return them.ruid == me.euid || them.euid == me.euid || Privileged(t);
}

}  // namespace

Result<uint64_t> SysGetpriority(Task& t, int which, int who) {
  absl::MutexLock l(&t.kernel().mu());
  int best = -1;
  bool known = ForEachTarget(t, which, who, [&](Task& p) {
    best = std::max(best, 20 - p.sched_.nice);  // nice_to_rlimit: 40 .. 1
  });
  if (!known) return Errno(EINVAL);
  if (best < 0) return Errno(ESRCH);
  return static_cast<uint64_t>(best);
}

Result<uint64_t> SysSetpriority(Task& t, int which, int who, int nice) {
  nice = std::clamp(nice, -20, 19);
  absl::MutexLock l(&t.kernel().mu());
  int err = ESRCH;
  bool known = ForEachTarget(t, which, who, [&](Task& p) {
    if (!MayChange(t, p)) {
      err = EPERM;
    } else if (nice < p.sched_.nice && 20u - nice > p.tg().rlimits[RLIMIT_NICE].cur &&
               !Privileged(t)) {
      err = EACCES;
    } else {
      if (err == ESRCH) err = 0;
      p.sched_.nice = nice;
    }
  });
  if (!known) return Errno(EINVAL);
  if (err) return Errno(err);
  return 0;
}

Result<void> CheckIoprio(Task& t, int ioprio) {
  int cls = (ioprio >> kernel::kIoprioClassShift) & 7;
  int level = ioprio & 7;
  switch (cls) {
    case kIoprioClassRt:
      if (!Privileged(t) && !t.tg().creds.HasCapability(CAP_SYS_ADMIN)) return Errno(EPERM);
      [[fallthrough]];
    case kIoprioClassBe:
      break;  // a level of 0..7: three bits cannot hold more
    case kIoprioClassIdle:
      break;
    case kIoprioClassNone:
      if (level) return Errno(EINVAL);
      break;
    default:
      return Errno(EINVAL);
  }
  return Ok();
}

Result<uint64_t> SysIoprioSet(Task& t, int which, int who, int ioprio) {
  SENTRY_TRY(CheckIoprio(t, ioprio));
  absl::MutexLock l(&t.kernel().mu());
  int err = ESRCH;
  bool known = ForEachTarget(t, which - kIoprioWhoProcess, who, [&](Task& p) {
    if (err != ESRCH && err != 0) return;  // the first failure stops the walk
    if (p.tg().creds.ruid != t.tg().creds.euid && p.tg().creds.ruid != t.tg().creds.ruid &&
        !Privileged(t)) {
      err = EPERM;
      return;
    }
    p.sched_.ioprio = ioprio & 0xffff;
    err = 0;
  });
  if (!known) return Errno(EINVAL);
  if (err) return Errno(err);
  return 0;
}

Result<uint64_t> SysIoprioGet(Task& t, int which, int who) {
  absl::MutexLock l(&t.kernel().mu());
  int best = -1;
  bool known = ForEachTarget(t, which - kIoprioWhoProcess, who, [&](Task& p) {
    int v = p.sched_.EffectiveIoprio();
    if (which == kIoprioWhoProcess) {
      best = v;
      return;
    }
    if (best < 0) {
      best = v;
      return;
    }
    // ioprio_best: a priority with no class counts as best-effort, normal level.
    auto norm = [](int x) {
      return (x >> kernel::kIoprioClassShift) == kIoprioClassNone ? kIoprioBeNorm : x;
    };
    best = std::min(norm(best), norm(v));
  });
  if (!known) return Errno(EINVAL);
  if (best < 0) return Errno(ESRCH);
  return static_cast<uint64_t>(best);
}

}  // namespace sentry::syscalls
