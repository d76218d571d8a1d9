// unshare(2), setns(2) and pivot_root(2). The namespaces themselves are in
// sentry/kernel/namespaces.h; the mount-table work of pivot_root is Vfs::PivotRoot.
#include <sched.h>

#include "sentry/kernel/pidfd.h"
#include "syscalls/common.h"
#include "vfs/nsfs.h"

namespace sentry::syscalls {
namespace {

using kernel::Namespaces;
using kernel::NamespacesRef;

constexpr uint64_t kUnshareFlags = CLONE_THREAD | CLONE_FS | CLONE_SIGHAND | CLONE_VM |
                                   CLONE_FILES | CLONE_SYSVSEM | kernel::kAllNsFlags;

// `cap` over user namespace `ns` (ns_capable).
bool CapableIn(Task& t, const kernel::UserNamespace* ns, int cap) {
  absl::MutexLock l(&t.kernel().mu());
  return t.tg().creds.CapableIn(ns, cap);
}

bool CapableInOwn(Task& t, int cap) {
  absl::MutexLock l(&t.kernel().mu());
  return t.tg().creds.CapableInOwn(cap);
}

bool SingleThreaded(Task& t) {
  absl::MutexLock l(&t.kernel().mu());
  return t.tg().tasks.size() == 1;
}

// Leaving an IPC namespace (or CLONE_SYSVSEM) applies the process's SEM_UNDO adjustments,
// as Linux's exit_sem.
void LeaveSysvSem(Task& t) { t.ns().ipc->ipc->ExitSem(&t.tg(), t.tg().tgid); }

// Installs the task's new namespaces (and filesystem context). What it leaves is dropped
// after Kernel::mu_ is released: a mount namespace's last reference takes vfs locks.
void Commit(Task& t, NamespacesRef ns, std::shared_ptr<kernel::FsContext> fs,
            const kernel::Credentials* creds = nullptr) {
  absl::MutexLock l(&t.kernel().mu());
  std::swap(t.ns_, ns);
  if (fs) std::swap(t.fs_, fs);
  if (creds) t.tg().creds = *creds;
}

// setns into user namespace `target` (Linux's userns_install): EINVAL for one's own, and
// for a shared filesystem context or a multithreaded caller; EPERM without CAP_SYS_ADMIN
// there. The caller becomes everything inside it.
Result<void> InstallUser(Task& t, const kernel::UserNsRef& target, bool shared_fs,
                         kernel::Credentials& creds) {
  if (target == creds.user_ns) return Errno(EINVAL);
  if (shared_fs || !SingleThreaded(t)) return Errno(EINVAL);
  if (!creds.CapableIn(target.get(), CAP_SYS_ADMIN)) return Errno(EPERM);
  creds.user_ns = target;
  creds.cap_permitted = creds.cap_effective = creds.cap_bounding = kernel::kCapFullSet;
  creds.cap_inheritable = creds.cap_ambient = 0;
  creds.securebits = 0;
  return Ok();
}

// setns of one namespace kind from `target`'s set into `next`, with Linux's *_install
// checks. `fs` is the caller's (to be) filesystem context.
Result<void> Install(Task& t, int type, const Namespaces& target, Namespaces& next,
                     kernel::FsContext& fs, bool shared_fs) {
  // CAP_SYS_ADMIN over the namespace (its owner) and in one's own user namespace.
  if (!CapableIn(t, kernel::NamespaceOwner(target, type), CAP_SYS_ADMIN) ||
      !CapableInOwn(t, CAP_SYS_ADMIN)) {
    return Errno(EPERM);
  }
  switch (type) {
    case CLONE_NEWNS: {
      if (!CapableInOwn(t, CAP_SYS_CHROOT)) return Errno(EPERM);
      if (shared_fs) return Errno(EINVAL);
      vfs::Path root = t.kernel().vfs().NamespaceRoot(*target.mnt);
      next.mnt = target.mnt;
      next.mnt_owner = target.mnt_owner;
      fs.set_root(root);
      fs.set_cwd(root);
      return Ok();
    }
    case CLONE_NEWUTS:
      next.uts = target.uts;
      return Ok();
    case CLONE_NEWIPC:
      if (target.ipc != next.ipc) LeaveSysvSem(t);
      next.ipc = target.ipc;
      return Ok();
    case CLONE_NEWNET:
      next.net = target.net;
      return Ok();
    case CLONE_NEWPID: {
      // Linux's pidns_install: children may go only to the caller's own namespace or one
      // nested in it.
      absl::MutexLock l(&t.kernel().mu());
      if (!t.tg().pidns->Contains(target.pid.get())) return Errno(EINVAL);
      next.pid = target.pid;
      return Ok();
    }
    case CLONE_NEWCGROUP:
      next.cgroup = target.cgroup;
      return Ok();
    case CLONE_NEWTIME:
      if (!SingleThreaded(t)) return Errno(EUSERS);
      next.time = target.time;
      return Ok();
  }
  return Errno(EINVAL);
}

}  // namespace

Result<uint64_t> SysUnshare(Task& t, uint64_t flags) {
  if (flags & CLONE_NEWUSER) flags |= CLONE_THREAD | CLONE_FS;
  if (flags & CLONE_VM) flags |= CLONE_SIGHAND;
  if (flags & CLONE_SIGHAND) flags |= CLONE_THREAD;
  if (flags & CLONE_NEWNS) flags |= CLONE_FS;
  if (flags & ~kUnshareFlags) return Errno(EINVAL);
  if ((flags & (CLONE_THREAD | CLONE_SIGHAND | CLONE_VM)) && !SingleThreaded(t)) {
    return Errno(EINVAL);
  }
  if (flags & CLONE_NEWIPC) flags |= CLONE_SYSVSEM;
  std::optional<kernel::Credentials> creds;
  {
    absl::MutexLock l(&t.kernel().mu());
    creds = t.tg().creds;
  }
  // A chrooted process may not make a user namespace (it could escape the chroot).
  if ((flags & CLONE_NEWUSER) && !(t.fs().root() == t.kernel().vfs().NamespaceRoot(*t.ns().mnt))) {
    return Errno(EPERM);
  }
  std::shared_ptr<kernel::FsContext> fs;
  if ((flags & CLONE_FS) && t.fs_.use_count() > 1) {
    fs = std::make_shared<kernel::FsContext>(t.fs());
  }
  NamespacesRef ns = t.ns_;
  if (flags & kernel::kAllNsFlags) {
    ns = SENTRY_TRY(kernel::NewNamespaces(t, flags, fs ? *fs : t.fs(), &*creds));
  }
  if ((flags & CLONE_FILES) && t.fds_.use_count() > 1) {
    auto fds = t.fds().Fork();
    absl::MutexLock l(&t.kernel().mu());
    t.fds_ = std::move(fds);
  }
  if (flags & CLONE_SYSVSEM) LeaveSysvSem(t);
  Commit(t, std::move(ns), std::move(fs), (flags & CLONE_NEWUSER) ? &*creds : nullptr);
  return 0;
}

Result<uint64_t> SysSetns(Task& t, int fd, int nstype) {
  vfs::FileRef f = SENTRY_TRY(GetFile(t, fd));
  NamespacesRef target;
  kernel::UserNsRef target_user;
  uint64_t kinds;
  if (auto* nsf = dynamic_cast<vfs::NsFile*>(f.get())) {
    if (nstype && nstype != nsf->type()) return Errno(EINVAL);
    kinds = static_cast<uint64_t>(nsf->type());
    // One namespace from a file: the rest of the set stays the caller's.
    auto one = std::make_shared<Namespaces>(t.ns());
    switch (nsf->type()) {
      case CLONE_NEWNS: {
        auto h = std::static_pointer_cast<kernel::MountNsHandle>(nsf->ns());
        one->mnt = h->mnt;
        one->mnt_owner = h->owner;
        break;
      }
      case CLONE_NEWUSER:
        target_user = std::static_pointer_cast<const kernel::UserNamespace>(nsf->ns());
        break;
      case CLONE_NEWUTS:
        one->uts = std::static_pointer_cast<kernel::UtsNamespace>(nsf->ns());
        break;
      case CLONE_NEWIPC:
        one->ipc = std::static_pointer_cast<kernel::IpcHandle>(nsf->ns());
        break;
      case CLONE_NEWNET:
        one->net = std::static_pointer_cast<kernel::NetNamespace>(nsf->ns());
        break;
      case CLONE_NEWPID:
        one->pid = std::static_pointer_cast<kernel::PidNamespace>(nsf->ns());
        break;
      case CLONE_NEWCGROUP:
        one->cgroup = std::static_pointer_cast<kernel::NsIdentity>(nsf->ns());
        break;
      case CLONE_NEWTIME:
        one->time = std::static_pointer_cast<kernel::NsIdentity>(nsf->ns());
        break;
    }
    target = std::move(one);
  } else if (auto pidfd = kernel::AsPidFd(f); pidfd.ok()) {
    if (nstype == 0 || (static_cast<uint64_t>(nstype) & ~kernel::kAllNsFlags)) {
      return Errno(EINVAL);
    }
    kinds = static_cast<uint64_t>(nstype);
    absl::MutexLock l(&t.kernel().mu());
    kernel::Task* owner = (*pidfd)->AnyLiveTask();
    if (!owner || (*pidfd)->Exited() || !owner->ns_) return Errno(ESRCH);
    // A pidfd's PID namespace is its process's own, not its pid_for_children.
    auto ns = std::make_shared<Namespaces>(*owner->ns_);
    ns->pid = owner->tg().pidns;
    target = std::move(ns);
    target_user = owner->tg().creds.user_ns;
  } else {
    return Errno(EINVAL);
  }
  auto next = std::make_shared<Namespaces>(t.ns());
  bool shared_fs = t.fs_.use_count() > 1;
  auto fs = std::make_shared<kernel::FsContext>(t.fs());
  kernel::Credentials creds;
  {
    absl::MutexLock l(&t.kernel().mu());
    creds = t.tg().creds;
  }
  // The user namespace first (Linux's order): the other kinds are then checked with the
  // capabilities it gives.
  if (kinds & CLONE_NEWUSER) {
    // Joining one's own user namespace through a pidfd is a no-op, not an error.
    if (!(target_user == creds.user_ns && !dynamic_cast<vfs::NsFile*>(f.get()))) {
      SENTRY_TRY(InstallUser(t, target_user, shared_fs, creds));
      Commit(t, t.ns_, nullptr, &creds);
    }
  }
  for (uint64_t bit = 1; bit; bit <<= 1) {
    if (!(kinds & bit) || bit == CLONE_NEWUSER) continue;
    SENTRY_TRY(Install(t, static_cast<int>(bit), *target, *next, *fs, shared_fs));
  }
  Commit(t, std::move(next), (kinds & CLONE_NEWNS) ? fs : nullptr);
  return 0;
}

Result<uint64_t> SysPivotRoot(Task& t, GuestAddr new_root_addr, GuestAddr put_old_addr) {
  vfs::Context ctx = t.VfsContext();
  if (!CapableIn(t, t.ns().mnt_owner.get(), CAP_SYS_ADMIN)) return Errno(EPERM);
  vfs::Path new_root = SENTRY_TRY(ResolveAt(t, ctx, AT_FDCWD, new_root_addr, 0));
  if (!new_root.inode()->IsDir()) return Errno(ENOTDIR);
  vfs::Path put_old = SENTRY_TRY(ResolveAt(t, ctx, AT_FDCWD, put_old_addr, 0));
  if (!put_old.inode()->IsDir()) return Errno(ENOTDIR);
  vfs::Vfs& v = t.kernel().vfs();
  if (v.NamespaceOf(ctx.root).get() != t.ns().mnt.get()) return Errno(EINVAL);
  vfs::Path old_root = ctx.root;
  vfs::Path root = SENTRY_TRY(v.PivotRoot(old_root, new_root, put_old));
  // Every task whose root or working directory was the old root moves to the new one, as
  // Linux's chroot_fs_refs.
  std::vector<std::shared_ptr<kernel::FsContext>> all;
  {
    absl::MutexLock l(&t.kernel().mu());
    for (auto& [tid, task] : t.kernel().tasks()) {
      if (task->fs_ref()) all.push_back(task->fs_ref());
    }
  }
  for (const auto& fs : all) {
    if (fs->root() == old_root) fs->set_root(root);
    if (fs->cwd() == old_root) fs->set_cwd(root);
  }
  return 0;
}

}  // namespace sentry::syscalls
