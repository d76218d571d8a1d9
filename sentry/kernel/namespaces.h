// The namespaces a task is in, other than its user namespace (Linux's nsproxy): mount, UTS,
// IPC, network (a netstack::Stack each), the PID namespace its children are made in
// (pid_namespace.h), and the kinds this kernel keeps no separate state for yet (cgroup,
// time), which exist as identities only, so that /proc/PID/ns and setns see them.
//
// A task's Namespaces is shared and never changed in place: unshare, setns and clone with
// CLONE_NEW* give the task a new one. Task::ns_ is written by the task's own thread under
// Kernel::mu_ and read by others under it.
#pragma once

#include <sched.h>

#include <cstdint>
#include <memory>
#include <string>

#include "sentry/base/errno.h"
#include "sentry/kernel/pid_namespace.h"
#include "sentry/kernel/user_namespace.h"
#include "vfs/file.h"
#include "vfs/vfs.h"

namespace sentry::netstack {
class Stack;
}

namespace sentry::kernel {

class IpcNamespace;
class Kernel;
class Task;
struct Credentials;

// uname's node and domain names.
struct UtsNamespace {
  uint64_t ino = 0;
  UserNsRef owner;  // the user namespace it was made in (null: the first)
  // Guarded by Kernel::mu_.
  std::string hostname = "sentry";
  std::string domainname = "(none)";
};

// SysV IPC and POSIX message queues. The IpcNamespace itself is never destroyed (shared
// memory segments hear of VMAs going away as late as the last MemoryManager does), so the
// handle only points at it.
struct IpcHandle {
  uint64_t ino = 0;
  IpcNamespace* ipc = nullptr;
  UserNsRef owner;
};

// A network namespace: its own stack (lo, loopback ports, abstract AF_UNIX names). Sockets
// keep their stack alive on their own, so the namespace may go before them.
struct NetNamespace {
  uint64_t ino = 0;
  std::shared_ptr<netstack::Stack> stack;
  UserNsRef owner;
};

// A mount namespace and the user namespace that owns it, as nsfs files carry it.
struct MountNsHandle {
  vfs::MountNsRef mnt;
  UserNsRef owner;
};

// A namespace with no state of its own here: its identity (nsfs inode number) only.
struct NsIdentity {
  uint64_t ino = 0;
};

struct Namespaces {
  vfs::MountNsRef mnt;
  UserNsRef mnt_owner;  // the user namespace `mnt` was made in
  std::shared_ptr<UtsNamespace> uts;
  std::shared_ptr<IpcHandle> ipc;
  std::shared_ptr<NetNamespace> net;
  PidNsRef pid;  // pid_for_children: the process's own is ThreadGroup::pidns
  std::shared_ptr<NsIdentity> cgroup;
  std::shared_ptr<NsIdentity> time;  // time_for_children: the task's own stays with the process
};
using NamespacesRef = std::shared_ptr<const Namespaces>;

// The sandbox's first namespaces; `ipc` is the kernel's initial IPC namespace and `net` its
// network stack (which lives as long as the kernel).
std::shared_ptr<Namespaces> InitialNamespaces(vfs::Vfs& vfs, IpcNamespace* ipc,
                                              netstack::Stack& net);

// The CLONE_NEW* flags this kernel can make a namespace for.
inline constexpr uint64_t kSupportedNsFlags = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC |
                                              CLONE_NEWCGROUP | CLONE_NEWTIME | CLONE_NEWNET |
                                              CLONE_NEWPID;
// Every CLONE_NEW* flag.
inline constexpr uint64_t kAllNsFlags = kSupportedNsFlags | CLONE_NEWUSER;
// The kinds that unshare and clone make (CLONE_NEWUSER included).
inline constexpr uint64_t kMakeableNsFlags = kSupportedNsFlags | CLONE_NEWUSER;

// A copy of `from` with a new namespace of each kind in `flags` (CLONE_NEW*; the caller
// checked them and the privilege). A new mount namespace copies the old one's mounts, and the
// root and working directory in `root`/`cwd` move to the copies of their mounts. A new UTS
// namespace starts with the old names; a new network namespace has only lo, down; a new PID
// namespace is a child of `active_pid` (the caller's own), which must be `from.pid` (EINVAL,
// as Linux: one unshare(CLONE_NEWPID) per fork), at most kMaxPidNsLevel deep (ENOSPC).
// Preconditions: Kernel::mu_ not held.
Result<NamespacesRef> CopyNamespaces(Kernel& k, const Namespaces& from, uint64_t flags,
                                     vfs::Path* root, vfs::Path* cwd, const UserNsRef& owner,
                                     const PidNsRef& active_pid);

class FsContext;
// For clone and unshare: `t`'s namespaces with new ones of the kinds in `flags` (CLONE_NEW*,
// checked by the caller against kMakeableNsFlags); `fs` (the new task's, or the caller's
// own after unshare(CLONE_FS)) moves into a new mount namespace. `creds` (a copy of the
// caller's) become those of a new user namespace's creator with CLONE_NEWUSER; the other
// new namespaces belong to the user namespace in `creds`, and need CAP_SYS_ADMIN in it
// (EPERM).
Result<NamespacesRef> NewNamespaces(Task& t, uint64_t flags, FsContext& fs, Credentials* creds);

// The user namespace that owns `ns`'s namespace of kind `type` (null: the first).
const UserNamespace* NamespaceOwner(const Namespaces& ns, int type);

// The nsfs file of `ns`'s namespace of kind `type` (a CLONE_NEW* flag), or of `user` for
// CLONE_NEWUSER, for /proc/PID/ns and setns.
vfs::FileRef NamespaceFile(const Namespaces& ns, int type, const UserNsRef& user);
// The nsfs file of PID namespace `pid` (/proc/PID/ns/pid: the process's own).
vfs::FileRef PidNamespaceFile(const PidNsRef& pid);

}  // namespace sentry::kernel
