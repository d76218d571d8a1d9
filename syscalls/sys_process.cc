// Processes and threads: clone, fork, vfork, execve, exit, sessions, rlimits, prctl (wait4 and
// waitid are in sys_wait.cc).
#include <asm/prctl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <cstring>

#include "sentry/base/logging.h"
#include "sentry/kernel/futex.h"
#include "sentry/kernel/pidfd.h"
#include "sentry/kernel/procfs.h"
#include "sentry/loader/exec.h"
#include "syscalls/common.h"

namespace sentry::syscalls {

using kernel::ThreadGroup;

namespace {

// Linux's TASK_SIZE_MAX on x86-64 (4-level paging): a TLS base at or above it is refused with
// EPERM by arch_prctl(ARCH_SET_FS/GS) and clone(CLONE_SETTLS). The host would refuse such a
// base too, and a stub whose registers cannot be set is lost.
constexpr uint64_t kTaskSizeMax = (uint64_t{1} << 47) - 4096;

// clone3 only (clone() takes the low 32 bits of its flags).
constexpr uint64_t kCloneClearSighand = uint64_t{1} << 32;
constexpr uint64_t kCloneIntoCgroup = uint64_t{1} << 33;

constexpr uint64_t kSupportedCloneFlags =
    CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
    CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID | CLONE_CHILD_SETTID | CLONE_VFORK |
    CLONE_PARENT | CLONE_DETACHED | CLONE_IO | CLONE_PIDFD | CSIGNAL | kCloneClearSighand |
    kernel::kMakeableNsFlags;

// CLONE_PIDFD's checks (copy_process, kernel_clone), before anything is created. The pidfd
// word is probed for writing now, so that an EFAULT leaves no child behind.
Result<void> CheckPidfdArgs(Task& t, uint64_t flags, GuestAddr pidfd, GuestAddr parent_tid) {
  if (!(flags & CLONE_PIDFD)) return Ok();
  // With CLONE_THREAD it is the new thread's pidfd (PIDFD_THREAD), as Linux 6.9+.
  if (flags & CLONE_DETACHED) return Errno(EINVAL);
  if ((flags & CLONE_PARENT_SETTID) && pidfd == parent_tid) return Errno(EINVAL);
  int32_t old = SENTRY_TRY(t.CopyIn<int32_t>(pidfd));
  return t.CopyOut<int32_t>(pidfd, old);
}

// clone3's CLONE_CLEAR_SIGHAND: handlers back to SIG_DFL, ignored signals stay ignored.
void ClearHandlers(kernel::SignalHandlers& h) {
  for (abi::KSigAction& a : h.actions) {
    abi::KSigAction fresh{};
    if (a.handler == abi::kSigIgn) fresh.handler = abi::kSigIgn;
    a = fresh;
  }
}

// The keyrings a new task starts with (Linux's copy_creds): the session keyring and the
// request_key default are inherited; a new thread gets an empty thread keyring of its own if
// its creator had one; the process keyring stays with its thread group (a forked child has
// none). Preconditions: Kernel::mu_ held (KeyTable::mu_ is taken after it).
void CloneKeyrings(Task& t, Task& child, bool thread) {
  kernel::KeyTable& keys = t.kernel().keys();
  absl::MutexLock l(&keys.mu());
  child.keyrings_.session = t.keyrings_.session;
  child.keyrings_.reqkey_default = t.keyrings_.reqkey_default;
  if (thread && t.keyrings_.thread) {
    const kernel::Credentials& c = t.tg().creds;
    kernel::KeyRef none;
    kernel::KeyCaller caller{&c, &child.keyrings_, &none};
    (void)keys.ThreadKeyring(caller, /*create=*/true);  // past the quota: none, as Linux
  }
}

Result<uint64_t> DoClone(Task& t, uint64_t flags, uint64_t stack, GuestAddr parent_tid,
                         GuestAddr child_tid, uint64_t tls, GuestAddr pidfd_addr = {}) {
  if (flags & ~kSupportedCloneFlags) return Errno(EINVAL);
  if ((flags & CLONE_NEWUSER) && (flags & (CLONE_THREAD | CLONE_FS))) return Errno(EINVAL);
  if ((flags & CLONE_NEWPID) && (flags & CLONE_THREAD)) return Errno(EINVAL);
  if ((flags & (CLONE_NEWNS | CLONE_FS)) == (CLONE_NEWNS | CLONE_FS)) return Errno(EINVAL);
  if ((flags & CLONE_NEWIPC) && (flags & CLONE_SYSVSEM)) return Errno(EINVAL);
  if ((flags & CLONE_THREAD) && !(flags & CLONE_SIGHAND)) return Errno(EINVAL);
  if ((flags & CLONE_SIGHAND) && !(flags & CLONE_VM)) return Errno(EINVAL);
  if ((flags & CLONE_SETTLS) && tls >= kTaskSizeMax) return Errno(EPERM);
  SENTRY_TRY(CheckPidfdArgs(t, flags, pidfd_addr, parent_tid));
  bool thread = flags & CLONE_THREAD;
  bool share_vm = flags & CLONE_VM;
  kernel::Kernel& k = t.kernel();
  {
    absl::MutexLock l(&k.mu());
    // A namespace's init may not make siblings of itself (they would have no reaper).
    const kernel::PidNamespace& own_ns = *t.tg().pidns;
    bool is_init = own_ns.level() > 0 ? own_ns.init == &t.tg() : t.tg().tgid == 1;
    if ((flags & CLONE_PARENT) && is_init) return Errno(EINVAL);
    uint64_t nproc = t.tg().rlimits[RLIMIT_NPROC].cur;
    if (k.tasks().size() >= std::min<uint64_t>(nproc, k.max_tasks())) return Errno(EAGAIN);
  }
  auto child_fs = (flags & CLONE_FS) ? t.fs_ : std::make_shared<kernel::FsContext>(t.fs());
  kernel::NamespacesRef child_ns = t.ns_;
  std::optional<kernel::Credentials> child_creds;  // set by CLONE_NEWUSER
  if (flags & kernel::kAllNsFlags) {
    kernel::Credentials creds;
    {
      absl::MutexLock l(&k.mu());
      creds = t.tg().creds;
    }
    child_ns = SENTRY_TRY(kernel::NewNamespaces(t, flags, *child_fs, &creds));
    if (flags & CLONE_NEWUSER) child_creds = std::move(creds);
  }
  // The child's PID namespace: its creator's for a thread (which must also be where the
  // creator's children go, as Linux's copy_process), pid_for_children for a process.
  std::shared_ptr<kernel::Task> child;
  kernel::PidNsRef child_pidns = thread ? t.tg().pidns : child_ns->pid;
  {
    absl::MutexLock l(&k.mu());
    if (thread && t.ns().pid != t.tg().pidns) return Errno(EINVAL);
    child = std::make_shared<kernel::Task>(k, SENTRY_TRY(k.AllocPid(*child_pidns)));
  }
  auto release_pid = [&] {
    absl::MutexLock l(&k.mu());
    k.ReleasePid(child_pidns.get(), child->tid());
  };
  // A new process's group exists before it is registered, so that its pidfd can take the fd
  // number first (EMFILE before any host work, as Linux reserves it early). Until the child
  // is registered below, the pidfd reads as a reaped process.
  std::shared_ptr<ThreadGroup> new_tg;
  if (!thread) new_tg = std::make_shared<ThreadGroup>();
  int pidfd = -1;
  int local_tid = 0;
  if (flags & CLONE_PIDFD) {
    vfs::FileRef f = thread ? kernel::NewPidFd(k, t.tg_ref(), child, false)
                            : kernel::NewPidFd(k, new_tg, nullptr, false);
    auto fd = t.fds().Add(std::move(f), true, 0, NofileLimit(t));
    if (!fd.ok()) {
      release_pid();
      return fd.error();
    }
    pidfd = static_cast<int>(*fd);
  }
  auto drop_pidfd = [&] {
    if (pidfd >= 0) (void)t.fds().Remove(pidfd);
    release_pid();
  };
  // Host side first: a new stub thread in this address space, or a copy of it, and the
  // Sentry thread that will run the child. CLONE_VM (threads, vfork, posix_spawn) shares the
  // stub's address space; otherwise the host copies it. If the host refuses any of them the
  // guest gets EAGAIN, as from a fork past pids.max, and the kernel never saw the child.
  Result<int> handle = share_vm ? t.ctx().CloneThread() : t.ctx().ForkAddressSpace();
  if (!handle.ok()) {
    drop_pidfd();
    return Errno(handle.error().code() == ENOMEM ? ENOMEM : EAGAIN);
  }
  if (auto r = kernel::Task::Launch(child, *handle, share_vm ? t.ctx().address_space() : nullptr);
      !r.ok()) {
    drop_pidfd();
    return r.error();
  }
  {
    absl::ReleasableMutexLock l(&k.mu());
    // Killed while the host side was made (as Linux's copy_process checks for a fatal
    // signal): a child registered now would escape the group exit that is under way.
    if (t.tg().exiting || t.exec_kill_) {
      child->Start(/*abandon=*/true);
      l.Release();
      drop_pidfd();  // closing a file takes vfs locks: not under Kernel::mu_
      return Errno(EAGAIN);
    }
    int tid = child->tid();
    // The clone's result and CLONE_PARENT_SETTID: the child's number in the caller's
    // namespace.
    local_tid = t.ToLocalPid(tid);
    if (thread) {
      child->tg_ = t.tg_ref();
    } else {
      std::shared_ptr<ThreadGroup> tg = new_tg;
      ThreadGroup& p = t.tg();
      tg->tgid = tid;
      tg->pidns = child_pidns;
      // The first process of a new PID namespace is its init.
      if (child_pidns->init == nullptr && child_pidns->Local(tid) == 1)
        child_pidns->init = tg.get();
      tg->leader = child.get();
      ThreadGroup* parent = (flags & CLONE_PARENT) && p.parent ? p.parent : &p;
      tg->parent = parent;
      tg->pgid = p.pgid;
      tg->sid = p.sid;
      tg->exit_signal = static_cast<int>(flags & CSIGNAL);
      tg->creds = child_creds ? *child_creds : p.creds;
      tg->rlimits = p.rlimits;
      tg->argv = p.argv;
      tg->envp = p.envp;
      tg->exe = p.exe;
      tg->oom_score_adj = p.oom_score_adj;
      tg->oom_score_adj_min = p.oom_score_adj_min;
      tg->dumpable = p.dumpable;
      tg->handlers = std::make_shared<kernel::SignalHandlers>(*p.handlers);
      if (flags & kCloneClearSighand) ClearHandlers(*tg->handlers);
      if (share_vm) tg->mm = t.mm_;  // vfork: a forked child's comes with its address space
      parent->children.push_back(tg);
      k.groups()[tid] = tg;
      child->tg_ = tg;
      tg->timers.UpdateRlimitCpu(k, *tg);  // the child's CPU time starts from zero
    }
    child->tg_->tasks.push_back(child.get());
    child->mask_ = t.mask_;
    child->sched_ = t.sched_.ForChild();
    child->personality_ = t.personality_;
    child->mempolicy_ = t.mempolicy_;
    child->ns_ = child_ns;
    child->seccomp_ = t.seccomp_;
    child->seccomp_on_.store(t.seccomp_on_.load());
    CloneKeyrings(t, *child, thread);
    k.Register(child);
    kernel::PtraceOnClone(t, *child, flags);
  }
  child->set_comm(t.comm());
  child->regs_ = t.regs();
  child->regs_.rax = 0;
  if (auto fp = t.ctx().GetFpState(); fp.ok()) child->start_fp_ = std::move(*fp);
  if (stack) child->regs_.rsp = stack;
  if (flags & CLONE_SETTLS) child->regs_.fs_base = tls;
  child->fds_ = (flags & CLONE_FILES) ? t.fds_ : t.fds().Fork();
  child->fs_ = std::move(child_fs);
  if (share_vm) {
    child->mm_ = t.mm_;
  } else {
    child->mm_ = t.mm().Fork(nullptr);
  }
  // A fork keeps the parent thread's rseq registration; a CLONE_VM child starts without.
  if (!share_vm) child->rseq_ = t.rseq_;
  if (flags & CLONE_CHILD_CLEARTID) child->clear_child_tid_ = child_tid.value();
  if (flags & CLONE_CHILD_SETTID) child->child_settid_ = child_tid.value();
  if (flags & CLONE_PARENT_SETTID) (void)t.CopyOut<int32_t>(parent_tid, local_tid);
  if (pidfd >= 0) (void)t.CopyOut<int32_t>(pidfd_addr, pidfd);
  std::shared_ptr<kernel::VforkDone> vfork;
  if (flags & CLONE_VFORK) {
    vfork = std::make_shared<kernel::VforkDone>();
    child->vfork_done_ = vfork;
  }
  child->Start();
  if (vfork) {
    // The parent waits (killably) until the child execs or exits.
    ScopedWait w(vfork->queue, t.waiter());
    for (;;) {
      {
        absl::MutexLock l(&k.mu());
        if (vfork->done || t.tg().exiting || t.exec_kill_) break;
      }
      t.waiter().WaitUntil(absl::InfiniteFuture());
    }
  }
  return static_cast<uint64_t>(local_tid);
}

}  // namespace

Result<uint64_t> SysClone(Task& t, uint64_t flags, uint64_t stack, GuestAddr parent_tid,
                          GuestAddr child_tid, uint64_t tls) {
  // CLONE_PIDFD's fd goes where the parent tid would.
  return DoClone(t, flags & 0xffffffff, stack, parent_tid, child_tid, tls, parent_tid);
}

namespace {

constexpr size_t kCloneArgsSizeVer0 = 64;  // up to tls
constexpr size_t kCloneArgsSizeVer2 = 88;  // up to cgroup

// clone3's struct, checked in Linux's order (copy_clone_args_from_user, clone3_args_valid).
Result<struct clone_args> CopyInCloneArgs(Task& t, GuestAddr addr, size_t size) {
  if (size > 4096) return Errno(E2BIG);
  if (size < kCloneArgsSizeVer0) return Errno(EINVAL);
  std::vector<uint8_t> raw(size);
  SENTRY_TRY(t.CopyInBytes(addr, raw));
  // A newer struct than ours is fine as long as its extra fields are zero.
  for (size_t i = sizeof(struct clone_args); i < size; i++) {
    if (raw[i] != 0) return Errno(E2BIG);
  }
  struct clone_args ca {};
  memcpy(&ca, raw.data(), std::min(size, sizeof(ca)));
  if (ca.set_tid_size > 32 || (ca.set_tid == 0) != (ca.set_tid_size == 0)) return Errno(EINVAL);
  if ((ca.exit_signal & ~uint64_t{CSIGNAL}) || ca.exit_signal > abi::kNumSignals) {
    return Errno(EINVAL);
  }
  if ((ca.flags & kCloneIntoCgroup) && (ca.cgroup > INT_MAX || size < kCloneArgsSizeVer2)) {
    return Errno(EINVAL);
  }
  constexpr uint64_t kClone3Flags = 0xffffffff | kCloneClearSighand | kCloneIntoCgroup;
  constexpr uint64_t kNewTime = 0x80;  // CLONE_NEWTIME, the one CSIGNAL bit clone3 takes
  if ((ca.flags & ~kClone3Flags) || (ca.flags & (CLONE_DETACHED | (CSIGNAL & ~kNewTime)))) {
    return Errno(EINVAL);
  }
  if ((ca.flags & CLONE_SIGHAND) && (ca.flags & kCloneClearSighand)) return Errno(EINVAL);
  if ((ca.flags & (CLONE_THREAD | CLONE_PARENT)) && ca.exit_signal) return Errno(EINVAL);
  if ((ca.stack == 0) != (ca.stack_size == 0)) return Errno(EINVAL);
  return ca;
}

}  // namespace

Result<uint64_t> SysClone3(Task& t, GuestAddr args, size_t size) {
  struct clone_args ca = SENTRY_TRY(CopyInCloneArgs(t, args, size));
  // Partial: choosing the pid (set_tid) and cgroups are not supported.
  if (ca.set_tid || (ca.flags & kCloneIntoCgroup)) return Errno(EINVAL);
  uint64_t stack = ca.stack ? ca.stack + ca.stack_size : 0;
  return DoClone(t, ca.flags | ca.exit_signal, stack, GuestAddr(ca.parent_tid),
                 GuestAddr(ca.child_tid), ca.tls, GuestAddr(ca.pidfd));
}

Result<uint64_t> SysFork(Task& t) { return DoClone(t, SIGCHLD, 0, {}, {}, 0); }

Result<uint64_t> SysVfork(Task& t) {
  return DoClone(t, CLONE_VM | CLONE_VFORK | SIGCHLD, 0, {}, {}, 0);
}

Result<uint64_t> SysExecve(Task& t, GuestAddr path_addr, GuestAddr argv_addr, GuestAddr envp_addr) {
  std::string path = SENTRY_TRY(t.CopyInString(path_addr));
  if (path.empty()) return Errno(ENOENT);
  auto argv = SENTRY_TRY(t.CopyInStringArray(argv_addr));
  auto envp = SENTRY_TRY(t.CopyInStringArray(envp_addr));
  SENTRY_TRY(loader::Exec(t, path, argv, envp));
  return 0;
}

Result<uint64_t> SysExecveat(Task& t, int dirfd, GuestAddr path_addr, GuestAddr argv_addr,
                             GuestAddr envp_addr, int flags) {
  // Linux's order: the name, the strings, then the flags (checked when the file is opened).
  std::string path = SENTRY_TRY(t.CopyInString(path_addr));
  if (path.empty() && !(flags & AT_EMPTY_PATH)) return Errno(ENOENT);
  auto argv = SENTRY_TRY(t.CopyInStringArray(argv_addr));
  auto envp = SENTRY_TRY(t.CopyInStringArray(envp_addr));
  if (flags & ~(AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW)) return Errno(EINVAL);
  bool follow = !(flags & AT_SYMLINK_NOFOLLOW);
  vfs::Context ctx = t.VfsContext();
  if (dirfd == AT_FDCWD || (!path.empty() && path[0] == '/')) {
    auto file =
        SENTRY_TRY(loader::OpenExecAt(t, SENTRY_TRY(StartAt(t, ctx, dirfd, path)), path, follow));
    SENTRY_TRY(loader::ExecFile(t, std::move(file), path, argv, envp, false));
    return 0;
  }
  // Reached through a descriptor, the program is named /dev/fd/N[/path], as Linux names it;
  // that name is gone after the exec if the descriptor is close-on-exec.
  auto entry = SENTRY_TRY(t.fds().GetEntry(dirfd));
  std::string name = "/dev/fd/" + std::to_string(dirfd);
  vfs::FileRef file;
  if (path.empty()) {
    file = SENTRY_TRY(loader::OpenExecFile(t, entry.file));
  } else {
    name += "/" + path;
    file =
        SENTRY_TRY(loader::OpenExecAt(t, SENTRY_TRY(StartAt(t, ctx, dirfd, path)), path, follow));
  }
  SENTRY_TRY(loader::ExecFile(t, std::move(file), name, argv, envp, entry.cloexec));
  return 0;
}

Result<uint64_t> SysExit(Task& t, int code) {
  t.SetExiting(kernel::ExitStatus(code));
  return 0;
}

Result<uint64_t> SysExitGroup(Task& t, int code) {
  absl::MutexLock l(&t.kernel().mu());
  t.kernel().GroupExit(t.tg(), kernel::ExitStatus(code));
  t.SetExiting(kernel::ExitStatus(code));
  return 0;
}

Result<uint64_t> SysGetpid(Task& t) { return static_cast<uint64_t>(t.LocalPid(t.tg().tgid)); }
Result<uint64_t> SysGettid(Task& t) { return static_cast<uint64_t>(t.LocalPid(t.tid())); }
Result<uint64_t> SysGetppid(Task& t) {
  // 0 when the parent is outside the caller's PID namespace.
  absl::MutexLock l(&t.kernel().mu());
  return t.tg().parent ? static_cast<uint64_t>(t.ToLocalPid(t.tg().parent->tgid)) : 0;
}

Result<uint64_t> SysSetpgid(Task& t, int pid, int pgid) {
  if (pgid < 0) return Errno(EINVAL);
  kernel::Kernel& k = t.kernel();
  absl::MutexLock l(&k.mu());
  ThreadGroup* target = pid == 0 ? &t.tg() : k.GroupByTgid(t.ToGlobalPid(pid));
  if (target == nullptr || target->zombie) return Errno(ESRCH);
  if (target != &t.tg() && target->parent != &t.tg()) return Errno(ESRCH);
  if (target->tgid == target->sid) return Errno(EPERM);  // a session leader
  if (target != &t.tg() && target->did_exec) return Errno(EACCES);
  if (target->sid != t.tg().sid) return Errno(EPERM);
  pgid = pgid == 0 ? target->tgid : t.ToGlobalPid(pgid);
  if (pgid == 0) return Errno(EPERM);  // no such group in the caller's namespace
  if (pgid != target->tgid) {
    bool exists = false;
    for (ThreadGroup* g : k.AllGroups()) exists |= g->pgid == pgid && g->sid == t.tg().sid;
    if (!exists) return Errno(EPERM);
  }
  int old = std::exchange(target->pgid, pgid);
  k.ReleasePid(target->pidns.get(), old);  // a nested namespace's number it alone still used
  return 0;
}

Result<uint64_t> SysGetpgid(Task& t, int pid) {
  absl::MutexLock l(&t.kernel().mu());
  ThreadGroup* g = pid == 0 ? &t.tg() : t.kernel().GroupByTgid(t.ToGlobalPid(pid));
  if (g == nullptr) return Errno(ESRCH);
  return static_cast<uint64_t>(t.ToLocalPid(g->pgid));
}

Result<uint64_t> SysGetpgrp(Task& t) { return SysGetpgid(t, 0); }

Result<uint64_t> SysSetsid(Task& t) {
  kernel::Kernel& k = t.kernel();
  absl::MutexLock l(&k.mu());
  ThreadGroup& g = t.tg();
  for (ThreadGroup* o : k.AllGroups()) {
    if (o->pgid == g.tgid) return Errno(EPERM);
  }
  int old_pgid = g.pgid, old_sid = g.sid;
  g.sid = g.pgid = g.tgid;
  k.ReleasePid(g.pidns.get(), old_pgid);  // numbers it alone still used, in a nested namespace
  k.ReleasePid(g.pidns.get(), old_sid);
  return static_cast<uint64_t>(t.ToLocalPid(g.sid));
}

Result<uint64_t> SysGetsid(Task& t, int pid) {
  absl::MutexLock l(&t.kernel().mu());
  ThreadGroup* g = pid == 0 ? &t.tg() : t.kernel().GroupByTgid(t.ToGlobalPid(pid));
  if (g == nullptr) return Errno(ESRCH);
  return static_cast<uint64_t>(t.ToLocalPid(g->sid));
}

Result<uint64_t> SysSetTidAddress(Task& t, uint64_t addr) {
  t.clear_child_tid_ = addr;
  return static_cast<uint64_t>(t.LocalPid(t.tid()));
}

Result<uint64_t> SysSetRobustList(Task& t, uint64_t head, size_t len) {
  if (len != 24) return Errno(EINVAL);
  t.robust_list_ = head;
  t.robust_list_len_ = len;
  return 0;
}

Result<uint64_t> SysGetRobustList(Task& t, int pid, GuestAddr head, GuestAddr len) {
  uint64_t list = t.robust_list_;
  if (pid != 0) {
    absl::MutexLock l(&t.kernel().mu());
    kernel::Task* o = t.kernel().TaskByTid(t.ToGlobalPid(pid));
    if (o == nullptr) return Errno(ESRCH);
    list = o->robust_list_;  // racy read of another thread's word, as a ptrace peek would be
  }
  SENTRY_TRY(t.CopyOut<uint64_t>(head, list));
  SENTRY_TRY(t.CopyOut<uint64_t>(len, 24));
  return 0;
}

Result<uint64_t> SysArchPrctl(Task& t, int code, uint64_t addr) {
  switch (code) {
    case ARCH_SET_FS:
      if (addr >= kTaskSizeMax) return Errno(EPERM);
      t.regs().fs_base = addr;
      return 0;
    case ARCH_GET_FS:
      SENTRY_TRY(t.CopyOut<uint64_t>(GuestAddr(addr), t.regs().fs_base));
      return 0;
    case ARCH_SET_GS:
      if (addr >= kTaskSizeMax) return Errno(EPERM);
      t.regs().gs_base = addr;
      return 0;
    case ARCH_GET_GS:
      SENTRY_TRY(t.CopyOut<uint64_t>(GuestAddr(addr), t.regs().gs_base));
      return 0;
    default:
      return Errno(EINVAL);
  }
}

Result<uint64_t> SysPrctl(Task& t, int option, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5) {
  if (kernel::IsCapabilityPrctl(option)) {
    absl::MutexLock l(&t.kernel().mu());
    return t.tg().creds.Prctl(option, a2, a3, a4, a5);
  }
  switch (option) {
    case PR_SET_NAME: {
      char buf[16] = {};
      size_t got = t.mm().as().ReadMemory(GuestAddr(a2), {reinterpret_cast<uint8_t*>(buf), 15});
      if (got == 0) return Errno(EFAULT);
      t.set_comm(std::string(buf, strnlen(buf, got)));
      return 0;
    }
    case PR_GET_NAME: {
      char buf[16] = {};
      std::string c = t.comm();
      memcpy(buf, c.data(), std::min<size_t>(c.size(), 15));
      SENTRY_TRY(t.CopyOut(GuestAddr(a2), buf));
      return 0;
    }
    case PR_SET_PDEATHSIG: {
      if (a2 > 64) return Errno(EINVAL);
      absl::MutexLock l(&t.kernel().mu());
      t.pdeathsig_ = static_cast<int>(a2);
      return 0;
    }
    case PR_GET_PDEATHSIG: {
      int s;
      {
        absl::MutexLock l(&t.kernel().mu());
        s = t.pdeathsig_;
      }
      SENTRY_TRY(t.CopyOut<int32_t>(GuestAddr(a2), s));
      return 0;
    }
    case PR_SET_CHILD_SUBREAPER: {
      absl::MutexLock l(&t.kernel().mu());
      t.tg().subreaper = a2 != 0;
      return 0;
    }
    case PR_GET_CHILD_SUBREAPER: {
      int s;
      {
        absl::MutexLock l(&t.kernel().mu());
        s = t.tg().subreaper;
      }
      SENTRY_TRY(t.CopyOut<int32_t>(GuestAddr(a2), s));
      return 0;
    }
    case PR_GET_DUMPABLE: {
      absl::MutexLock l(&t.kernel().mu());
      return t.tg().dumpable;
    }
    case PR_SET_DUMPABLE: {
      if (a2 > 1) return Errno(EINVAL);  // SUID_DUMP_ROOT is not for prctl
      absl::MutexLock l(&t.kernel().mu());
      t.tg().dumpable = a2 == 1;
      return 0;
    }
    case PR_SET_NO_NEW_PRIVS: {
      if (a2 != 1 || a3 || a4 || a5) return Errno(EINVAL);
      absl::MutexLock l(&t.kernel().mu());
      t.tg().creds.no_new_privs = true;
      return 0;
    }
    case PR_GET_SECCOMP: {
      absl::MutexLock l(&t.kernel().mu());
      return static_cast<uint64_t>(std::max(t.seccomp_.mode, 0));
    }
    case PR_SET_SECCOMP:
      return kernel::SeccompPrctlSet(t, a2, a3);
    case PR_GET_NO_NEW_PRIVS: {
      if (a2 || a3 || a4 || a5) return Errno(EINVAL);
      absl::MutexLock l(&t.kernel().mu());
      return t.tg().creds.no_new_privs;
    }
    default:
      return Errno(EINVAL);
  }
}

Result<uint64_t> SysUname(Task& t, GuestAddr buf) {
  abi::Utsname u{};
  strcpy(u.sysname, "Linux");
  {
    absl::MutexLock l(&t.kernel().mu());
    strncpy(u.nodename, t.ns().uts->hostname.c_str(), 64);
    strncpy(u.domainname, t.ns().uts->domainname.c_str(), 64);
  }
  snprintf(u.release, sizeof(u.release), "%s", kernel::OsRelease().c_str());
  strcpy(u.version, "#1 SMP sentry");
  strcpy(u.machine, "x86_64");
  SENTRY_TRY(t.CopyOut(buf, u));
  return 0;
}

// sethostname/setdomainname: the UTS namespace's names (CAP_SYS_ADMIN, at most 64 bytes).
Result<uint64_t> SetUtsName(Task& t, GuestAddr name, int len, bool host) {
  if (len < 0 || len > 64) return Errno(EINVAL);
  {
    absl::MutexLock l(&t.kernel().mu());
    const kernel::UserNamespace* owner = kernel::NamespaceOwner(t.ns(), CLONE_NEWUTS);
    if (!t.tg().creds.CapableIn(owner, CAP_SYS_ADMIN)) return Errno(EPERM);
  }
  std::string v(len, '\0');
  if (len) SENTRY_TRY(t.CopyInBytes(name, {reinterpret_cast<uint8_t*>(v.data()), v.size()}));
  v = v.c_str();  // Linux keeps the bytes up to the first NUL
  absl::MutexLock l(&t.kernel().mu());
  kernel::UtsNamespace& uts = *t.ns().uts;
  (host ? uts.hostname : uts.domainname) = v;
  return 0;
}

Result<uint64_t> SysSethostname(Task& t, GuestAddr name, int len) {
  return SetUtsName(t, name, len, true);
}

Result<uint64_t> SysSetdomainname(Task& t, GuestAddr name, int len) {
  return SetUtsName(t, name, len, false);
}

Result<uint64_t> SysGetrlimit(Task& t, unsigned res, GuestAddr out) {
  if (res >= abi::kNumRlimits) return Errno(EINVAL);
  abi::Rlimit r;
  {
    absl::MutexLock l(&t.kernel().mu());
    r = t.tg().rlimits[res];
  }
  SENTRY_TRY(t.CopyOut(out, r));
  return 0;
}

namespace {

// check_prlimit_permission: another process's limits are its owner's (all of its ids the
// caller's real ones) or need CAP_SYS_RESOURCE.
bool MayPrlimit(const kernel::Credentials& me, const ThreadGroup& g) {
  const kernel::Credentials& c = g.creds;
  bool same = me.ruid == c.ruid && me.ruid == c.euid && me.ruid == c.suid && me.rgid == c.rgid &&
              me.rgid == c.egid && me.rgid == c.sgid;
  return &g.creds == &me || same || me.HasCapability(CAP_SYS_RESOURCE);
}

}  // namespace

Result<uint64_t> SysPrlimit64(Task& t, int pid, unsigned res, GuestAddr new_addr,
                              GuestAddr old_addr) {
  if (res >= abi::kNumRlimits) return Errno(EINVAL);
  std::optional<abi::Rlimit> nl;
  if (!new_addr.IsNull()) {
    nl = SENTRY_TRY(t.CopyIn<abi::Rlimit>(new_addr));
    if (nl->cur > nl->max) return Errno(EINVAL);
  }
  abi::Rlimit old;
  {
    absl::MutexLock l(&t.kernel().mu());
    ThreadGroup* g = pid == 0 ? &t.tg() : t.kernel().GroupByTgid(t.ToGlobalPid(pid));
    if (g == nullptr) return Errno(ESRCH);
    if (!MayPrlimit(t.tg().creds, *g)) return Errno(EPERM);
    old = g->rlimits[res];
    if (nl) {
      if (nl->max > old.max && !t.tg().creds.HasCapability(CAP_SYS_RESOURCE)) return Errno(EPERM);
      if (res == RLIMIT_NOFILE && nl->max > 1 << 20) return Errno(EPERM);
      g->rlimits[res] = *nl;
      if (res == RLIMIT_CPU) g->timers.UpdateRlimitCpu(t.kernel(), *g);
    }
  }
  if (!old_addr.IsNull()) SENTRY_TRY(t.CopyOut(old_addr, old));
  return 0;
}

Result<uint64_t> SysSetrlimit(Task& t, unsigned res, GuestAddr in) {
  return SysPrlimit64(t, 0, res, in, GuestAddr());
}

Result<uint64_t> SysSchedYield(Task&) {
  sched_yield();
  return 0;
}

Result<uint64_t> SysGetrandom(Task& t, GuestAddr buf, size_t len, unsigned flags) {
  if (flags & ~(GRND_NONBLOCK | GRND_RANDOM | GRND_INSECURE)) return Errno(EINVAL);
  len = std::min<size_t>(len, 1 << 25);
  std::vector<uint8_t> data(len);
  ssize_t n = getrandom(data.data(), len, 0);
  if (n < 0) return Errno(errno);
  SENTRY_TRY(t.CopyOutBytes(buf, {data.data(), static_cast<size_t>(n)}));
  return static_cast<uint64_t>(n);
}

}  // namespace sentry::syscalls
