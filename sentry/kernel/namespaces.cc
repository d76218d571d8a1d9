#include "sentry/kernel/namespaces.h"

#include "netstack/stack.h"
#include "sentry/kernel/ipc.h"
#include "sentry/kernel/kernel.h"
#include "vfs/nsfs.h"

namespace sentry::kernel {
namespace {

// Linux's fixed inode numbers of the initial namespaces (PROC_*_INIT_INO); the mount and
// network ones are allocated, as there.
constexpr uint64_t kInitIpcIno = 0xEFFFFFFF;
constexpr uint64_t kInitUtsIno = 0xEFFFFFFE;
constexpr uint64_t kInitPidIno = 0xEFFFFFFC;
constexpr uint64_t kInitCgroupIno = 0xEFFFFFFB;
constexpr uint64_t kInitTimeIno = 0xEFFFFFFA;

std::shared_ptr<NsIdentity> Identity(uint64_t ino) {
  auto id = std::make_shared<NsIdentity>();
  id->ino = ino;
  return id;
}

}  // namespace

std::shared_ptr<Namespaces> InitialNamespaces(vfs::Vfs& vfs, IpcNamespace* ipc,
                                              netstack::Stack& net) {
  auto ns = std::make_shared<Namespaces>();
  ns->mnt = vfs.InitialNamespace();
  ns->uts = std::make_shared<UtsNamespace>();
  ns->uts->ino = kInitUtsIno;
  ns->ipc = std::make_shared<IpcHandle>(IpcHandle{kInitIpcIno, ipc});
  // The kernel owns its stack; the namespace (and the sockets, through weak_from_this)
  // refer to it without owning it.
  ns->net = std::make_shared<NetNamespace>(
      NetNamespace{vfs::NewNsInode(), std::shared_ptr<netstack::Stack>(&net, [](auto*) {})});
  ns->pid = std::make_shared<PidNamespace>(kInitPidIno);
  ns->cgroup = Identity(kInitCgroupIno);
  ns->time = Identity(kInitTimeIno);
  return ns;
}

Result<NamespacesRef> CopyNamespaces(Kernel& k, const Namespaces& from, uint64_t flags,
                                     vfs::Path* root, vfs::Path* cwd, const UserNsRef& owner,
                                     const PidNsRef& active_pid) {
  auto ns = std::make_shared<Namespaces>(from);
  if (flags & CLONE_NEWPID) {
    // Linux's copy_pid_ns and create_pid_namespace, checked before anything is made.
    if (from.pid != active_pid) return Errno(EINVAL);
    if (active_pid->level() + 1 > kMaxPidNsLevel) return Errno(ENOSPC);
    ns->pid = std::make_shared<PidNamespace>(active_pid, owner, vfs::NewNsInode());
  }
  if (flags & CLONE_NEWNS) {
    ns->mnt = k.vfs().CopyNamespace(*from.mnt, {root, cwd});
    ns->mnt_owner = owner;
  }
  if (flags & CLONE_NEWUTS) {
    auto uts = std::make_shared<UtsNamespace>();
    uts->ino = vfs::NewNsInode();
    uts->owner = owner;
    absl::MutexLock l(&k.mu());
    uts->hostname = from.uts->hostname;
    uts->domainname = from.uts->domainname;
    ns->uts = std::move(uts);
  }
  if (flags & CLONE_NEWIPC) {
    // Never freed: see IpcHandle.
    ns->ipc = std::make_shared<IpcHandle>(IpcHandle{vfs::NewNsInode(), new IpcNamespace(), owner});
  }
  if (flags & CLONE_NEWNET) {
    ns->net = std::make_shared<NetNamespace>(
        NetNamespace{vfs::NewNsInode(), netstack::Stack::NewNamespace(*from.net->stack), owner});
  }
  if (flags & CLONE_NEWCGROUP) ns->cgroup = Identity(vfs::NewNsInode());
  if (flags & CLONE_NEWTIME) ns->time = Identity(vfs::NewNsInode());
  return NamespacesRef(std::move(ns));
}

Result<NamespacesRef> NewNamespaces(Task& t, uint64_t flags, FsContext& fs, Credentials* creds) {
  if (flags & CLONE_NEWUSER) {
    // Linux's create_user_ns and set_cred_user_ns: any process may make one, and is
    // everything inside it.
    UserNsRef user = SENTRY_TRY(NewUserNamespace(*creds));
    creds->user_ns = std::move(user);
    creds->cap_permitted = creds->cap_effective = creds->cap_bounding = kCapFullSet;
    creds->cap_inheritable = creds->cap_ambient = 0;
    creds->securebits = 0;
  }
  if ((flags & ~uint64_t{CLONE_NEWUSER} & kAllNsFlags) && !creds->CapableInOwn(CAP_SYS_ADMIN)) {
    return Errno(EPERM);
  }
  if (!(flags & ~uint64_t{CLONE_NEWUSER} & kAllNsFlags)) return t.ns_;
  vfs::Path root = fs.root(), cwd = fs.cwd();
  PidNsRef active_pid;
  {
    absl::MutexLock l(&t.kernel().mu());
    active_pid = t.tg().pidns;
  }
  NamespacesRef ns = SENTRY_TRY(
      CopyNamespaces(t.kernel(), t.ns(), flags, &root, &cwd, creds->user_ns, active_pid));
  if (flags & CLONE_NEWNS) {
    fs.set_root(root);
    fs.set_cwd(cwd);
  }
  return ns;
}

const UserNamespace* NamespaceOwner(const Namespaces& ns, int type) {
  switch (type) {
    case CLONE_NEWNS:
      return ns.mnt_owner.get();
    case CLONE_NEWUTS:
      return ns.uts->owner.get();
    case CLONE_NEWIPC:
      return ns.ipc->owner.get();
    case CLONE_NEWNET:
      return ns.net->owner.get();
    case CLONE_NEWPID:
      return ns.pid->owner().get();
  }
  return nullptr;  // cgroup and time namespaces: the sandbox's (none made inside yet)
}

vfs::FileRef NamespaceFile(const Namespaces& ns, int type, const UserNsRef& user) {
  auto file = [type](uint64_t ino, std::shared_ptr<void> obj) {
    return std::make_shared<vfs::NsFile>(type, ino, std::move(obj), O_RDONLY);
  };
  switch (type) {
    case CLONE_NEWNS:
      return file(ns.mnt->ino(),
                  std::make_shared<MountNsHandle>(MountNsHandle{ns.mnt, ns.mnt_owner}));
    case CLONE_NEWUTS:
      return file(ns.uts->ino, ns.uts);
    case CLONE_NEWIPC:
      return file(ns.ipc->ino, ns.ipc);
    case CLONE_NEWNET:
      return file(ns.net->ino, ns.net);
    case CLONE_NEWPID:
      return PidNamespaceFile(ns.pid);
    case CLONE_NEWCGROUP:
      return file(ns.cgroup->ino, ns.cgroup);
    case CLONE_NEWTIME:
      return file(ns.time->ino, ns.time);
    case CLONE_NEWUSER:
      // The first namespace is null: its file carries no object.
      return file(UserNsIno(user.get()), std::const_pointer_cast<UserNamespace>(user));
  }
  return nullptr;
}

vfs::FileRef PidNamespaceFile(const PidNsRef& pid) {
  return std::make_shared<vfs::NsFile>(CLONE_NEWPID, pid->ino(), pid, O_RDONLY);
}

}  // namespace sentry::kernel
