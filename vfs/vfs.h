// The virtual file system: dentries, mounts, path resolution and the path-based operations
// the syscalls call. File systems supply Inodes (inode.h); the VFS caches them by name in a
// dentry tree, crosses mount points, follows symlinks and checks permissions.
//
// Lock order: Vfs::mu_ (mount table and the dentry tree) -> Inode locks. mu_ is never held
// across an Inode call that may block on the gofer, except where noted.
#pragma once

#include <sys/mount.h>

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "vfs/file.h"
#include "vfs/inode.h"

namespace sentry::vfs {

class Mount;
class MountNamespace;
class Vfs;

// A node of the dentry tree: one name of an inode under its parent.
class Dentry {
 public:
  Dentry(std::string name, std::shared_ptr<Dentry> parent, InodeRef inode)
      : name_(std::move(name)), parent_(std::move(parent)), inode_(std::move(inode)) {}

  const InodeRef& inode() const { return inode_; }
  // True once the name was unlinked, removed or replaced by a rename.
  bool deleted() const { return deleted_.load(std::memory_order_acquire); }

 private:
  friend class Vfs;
  friend class MountNamespace;
  // Guarded by Vfs::mu_.
  std::string name_;
  std::shared_ptr<Dentry> parent_;  // null for a file system root
  InodeRef inode_;
  std::map<std::string, std::shared_ptr<Dentry>> children_;  // cache of looked-up names
  // Bumped whenever a name in children_ is dropped or moved (unlink, rename), so that a
  // lookup that ran meanwhile (unlocked, maybe before the change) does not cache its result.
  uint64_t generation_ = 0;
  int mount_count_ = 0;  // mounts whose mount point is this dentry
  std::atomic<bool> deleted_{false};  // written under Vfs::mu_, read anywhere
};
using DentryRef = std::shared_ptr<Dentry>;

// A file system mounted somewhere. The root mount of a namespace has no parent.
class Mount {
 public:
  uint64_t id() const { return id_; }
  // MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_NOATIME, MS_NODIRATIME, MS_RELATIME,
  // MS_STRICTATIME: the per-mount flags, which a remount may change at any time.
  int flags() const { return flags_.load(std::memory_order_acquire); }
  bool read_only() const { return flags() & MS_RDONLY; }
  // Made read-only by the sandbox's set-up (Vfs::LockReadOnly): a bind or a copy of it stays
  // read-only and no remount makes it writable, as Linux locks the read-only flag of mounts a
  // less privileged user namespace inherits.
  bool read_only_locked() const { return read_only_locked_; }
  const std::string& fstype() const { return fstype_; }
  const std::string& source() const { return source_; }
  const DentryRef& root() const { return root_; }
  Vfs* vfs() const { return vfs_; }

 private:
  friend class Vfs;
  friend class MountNamespace;
  Vfs* vfs_ = nullptr;
  uint64_t id_ = 0;
  std::atomic<int> flags_{0};
  bool read_only_locked_ = false;  // never cleared once set
  std::string fstype_;
  std::string source_;
  DentryRef root_;
  // Guarded by Vfs::mu_.
  std::shared_ptr<Mount> parent_;
  DentryRef mountpoint_;
  MountNamespace* ns_ = nullptr;  // null once unmounted (detached) or its namespace is gone
  // Propagation type as /proc/PID/mountinfo shows it: MS_SHARED (peer group `peer_group_`),
  // MS_SLAVE (of `master_`), MS_PRIVATE or MS_UNBINDABLE. Recorded, not acted on: mount
  // events do not propagate between peers.
  int propagation_ = MS_PRIVATE;
  uint64_t peer_group_ = 0;
  uint64_t master_ = 0;
  bool expiry_mark_ = false;  // umount2(MNT_EXPIRE) was asked once
};
using MountRef = std::shared_ptr<Mount>;

// A mount namespace: a mount table and its root. Every Mount belongs to at most one; a path
// walk crosses the mounts of the namespace its current mount is in. The tree of dentries
// under the mounts is shared by all namespaces (it belongs to the file systems).
class MountNamespace : public std::enable_shared_from_this<MountNamespace> {
 public:
  MountNamespace(Vfs* vfs, uint64_t ino) : vfs_(vfs), ino_(ino) {}
  // Its mounts are detached (as Linux drops a namespace's mounts with it); files open on
  // them keep working.
  ~MountNamespace();
  MountNamespace(const MountNamespace&) = delete;
  MountNamespace& operator=(const MountNamespace&) = delete;

  // The nsfs inode number (/proc/PID/ns/mnt).
  uint64_t ino() const { return ino_; }
  Vfs* vfs() const { return vfs_; }
  // The owning user namespace, opaque to the VFS (the kernel's UserNamespace); set once.
  std::shared_ptr<void> owner;

 private:
  friend class Vfs;
  Vfs* vfs_;
  uint64_t ino_;
  // Guarded by Vfs::mu_.
  MountRef root_;
  std::map<std::pair<Mount*, Dentry*>, MountRef> mounts_;  // (parent, mount point) -> child
  std::vector<MountRef> all_;  // in mount order, for /proc/PID/mounts
};
using MountNsRef = std::shared_ptr<MountNamespace>;

// A place in the tree: a dentry as seen through a mount.
struct Path {
  MountRef mnt;
  DentryRef d;
  explicit operator bool() const { return d != nullptr; }
  const InodeRef& inode() const { return d->inode(); }
  bool operator==(const Path& o) const { return mnt == o.mnt && d == o.d; }
};

// What a path operation needs from the calling task.
struct Context {
  Path root;  // chroot
  Path cwd;
  Creds creds;
  uint32_t umask = 022;
  // The calling thread, for opens that wait (a FIFO's other end, a lease break). Null: such
  // opens do not wait.
  Blocker* blocker = nullptr;
  // openat2's RESOLVE_* flags (linux/openat2.h), limiting every walk made with this context:
  // NO_XDEV, NO_MAGICLINKS, NO_SYMLINKS, and BENEATH (with `beneath`, the starting directory
  // the walk may not leave). RESOLVE_IN_ROOT is a `root` set to the starting directory,
  // with magic links refused.
  uint64_t resolve = 0;
  Path beneath;
};

class Vfs {
 public:
  // Mounts `root_inode` (a directory) as the root of the mount namespace.
  Vfs(InodeRef root_inode, std::string fstype, std::string source, int flags);

  Path Root();

  // Resolves `path` relative to `start` (absolute paths start at ctx.root). `follow` says
  // whether a symlink in the last component is followed. A trailing '/' requires a directory.
  // If the walk ends on a magic link to a file with no place (/proc/self/fd/N of a pipe),
  // the link's own path is returned and `*magic` (when given) is set to that file.
  Result<Path> Resolve(const Context& ctx, const Path& start, const std::string& path,
                       bool follow, FileRef* magic = nullptr);

  // openat(2): flags as given by the guest; `mode` before the umask.
  Result<FileRef> Open(const Context& ctx, const Path& start, const std::string& path,
                       int flags, uint32_t mode);
  // Opens an already resolved path (exec, O_PATH reopen). `exec` opens a program for
  // execve: the caller checked execute permission, and read permission is not needed.
  Result<FileRef> OpenPath(const Context& ctx, const Path& p, int flags, bool exec = false);

  Result<void> Mknod(const Context& ctx, const Path& start, const std::string& path,
                     uint32_t mode, dev_t rdev);
  Result<void> Mkdir(const Context& ctx, const Path& start, const std::string& path,
                     uint32_t mode);
  Result<void> Symlink(const Context& ctx, const std::string& target, const Path& start,
                       const std::string& path);
  Result<void> Link(const Context& ctx, const Path& old_start, const std::string& old_path,
                    const Path& new_start, const std::string& new_path, bool follow);
  // linkat(2) with AT_EMPTY_PATH: `old` is an open file's place.
  Result<void> LinkPath(const Context& ctx, const Path& old, const Path& new_start,
                        const std::string& new_path);
  // unlinkat(2); `dir` for rmdir / AT_REMOVEDIR.
  Result<void> Unlink(const Context& ctx, const Path& start, const std::string& path,
                      bool dir);
  Result<void> Rename(const Context& ctx, const Path& old_start, const std::string& old_path,
                      const Path& new_start, const std::string& new_path, unsigned flags);
  Result<std::string> ReadLink(const Context& ctx, const Path& start, const std::string& path);

  // chmod/chown/truncate/utimes on a resolved path, with Linux's permission rules.
  Result<void> SetAttr(const Context& ctx, const Path& p, const SetAttrRequest& req);
  // access(2) mode bits (R_OK/W_OK/X_OK) for `p`.
  Result<void> Access(const Context& ctx, const Path& p, int mode);

  // mount(2) of a new file system (root inode) or a bind of `source` on `target`.
  Result<void> MountAt(const Path& target, InodeRef root, std::string fstype,
                       std::string source, int flags);
  // A bind of a locked read-only mount is read-only whatever `flags` say. With `recursive`
  // (MS_REC), the mounts below `source` are bound too, each with its own flags. EINVAL for an
  // unbindable source.
  Result<void> BindAt(const Path& target, const Path& source, int flags, bool recursive = false);
  // Makes the mount at `p` read-only for good (no bind or remount inside the guest makes a
  // writable view of it). Precondition: called during set-up, before any guest task runs.
  void LockReadOnly(const Path& p);
  // MS_REMOUNT: replaces the per-mount flags of the mount whose root is `p` (EINVAL
  // otherwise); EPERM to clear the read-only flag of a locked mount.
  Result<void> Remount(const Path& p, int flags);
  // MS_SHARED / MS_SLAVE / MS_PRIVATE / MS_UNBINDABLE on the mount whose root is `p`, and with
  // `recursive` on every mount below it.
  Result<void> SetPropagation(const Path& p, int type, bool recursive);
  // MS_MOVE: moves the mount whose root is `from` (with everything mounted below it) to `to`.
  Result<void> MoveMount(const Path& from, const Path& to);
  // umount2(2) of the mount whose root is `target`, with its MNT_* flags (the caller checked
  // the privilege). A mount in use (open files, working directories, mounts below it) is
  // EBUSY unless MNT_DETACH takes it out of the tree at once.
  Result<void> Umount(const Context& ctx, const Path& target, int flags = 0);
  // pivot_root(2): `new_root` becomes the root of its namespace and the old root, `root`,
  // moves to `put_old`, with Linux's checks. Returns the new root's place.
  Result<Path> PivotRoot(const Path& root, const Path& new_root, const Path& put_old);

  // Mount namespaces. The initial one is made with the Vfs.
  MountNsRef InitialNamespace() { return init_ns_; }
  // The namespace `p`'s mount is in (null for a detached mount).
  MountNsRef NamespaceOf(const Path& p);
  // The root of `ns`.
  Path NamespaceRoot(const MountNamespace& ns);
  // A copy of `src`'s mount table (unshare/clone CLONE_NEWNS), with new mount ids. Each path
  // in `fix` (a task's root and cwd) is moved to the copy of its mount.
  MountNsRef CopyNamespace(const MountNamespace& src, std::vector<Path*> fix);

  // The path of `p` as seen from `root` (getcwd, /proc/PID/fd). Paths outside `root` are
  // shown from the real root, as Linux does; deleted files get " (deleted)".
  std::string PathString(const Path& root, const Path& p);
  // One line per mount of `ns` that `root` sees, /proc/PID/mounts style (mountinfo if `info`).
  std::string Mounts(const MountNamespace& ns, const Path& root, bool info);
  // The same for the initial namespace.
  std::string Mounts(const Path& root, bool info) { return Mounts(*init_ns_, root, info); }

  // The parent of `p` ("..") within ctx.root.
  Path Parent(const Context& ctx, const Path& p);

  // inotify (vfs/inotify.h): reports `mask` to the watches on the directory holding `d`,
  // with its name, then to those on `d`'s inode.
  void NotifyDentry(const DentryRef& d, uint32_t mask);

 private:
  struct Walker;
  // `for_read`: the child is about to be opened for reading (Inode::LookupForRead).
  Result<DentryRef> Child(const DentryRef& dir, const std::string& name, bool for_read = false);
  // The dentry of `name` in `dir` that was just created as `ino`, `generation` being dir's
  // before the create. It holds `ino` itself, so that the creator's open file and later
  // lookups share one inode (a gofer inode's cached attributes are invalidated by writes
  // through its own files only). Not cached if `dir` changed meanwhile.
  DentryRef Created(const DentryRef& dir, const std::string& name, InodeRef ino,
                    uint64_t generation);
  uint64_t Generation(const DentryRef& dir);
  // Drops `stale`, the dentry of `name` in `dir` whose file the host removed, if it is still
  // there.
  void DropStale(const DentryRef& dir, const std::string& name, const DentryRef& stale);
  Path CrossMounts(Path p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string PathStringLocked(const Path& root, const Path& p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Path ParentLocked(const Path& root, const Path& p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Resolves all but the last component; returns the parent and the last name ("" when the
  // path names the start or a root, "." / ".." kept as is). `trailing_slash` is set when
  // the path ended in '/'.
  Result<std::pair<Path, std::string>> ResolveParent(const Context& ctx, const Path& start,
                                                     const std::string& path,
                                                     bool* trailing_slash);
  Result<void> CheckWritableDir(const Context& ctx, const Path& dir);
  Result<void> CheckSticky(const Context& ctx, const InodeRef& dir, const InodeRef& victim);
  void Forget(const DentryRef& dir, const std::string& name);
  friend class MountNamespace;

  // Mount-table helpers (mount_namespace.cc).
  MountRef NewMount(int flags, std::string fstype, std::string source, DentryRef root);
  // Attaches `m` at `where` (already the top of its mount stack) in `ns`.
  void Attach(MountNamespace& ns, const MountRef& m, const Path& where)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Takes `m` out of its parent (and its namespace's table), keeping its own children.
  void Detach(const MountRef& m) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // `m` and every mount below it, parents first.
  std::vector<MountRef> Subtree(const MountRef& m) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether `p` lies in the tree of mounts under `top` (including top itself).
  bool Reachable(const Path& p, const Path& top) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string MountOptions(const Mount& m, bool info);

  absl::Mutex mu_;
  MountNsRef init_ns_;
  uint64_t next_mount_id_ ABSL_GUARDED_BY(mu_) = 1;
  uint64_t next_peer_group_ ABSL_GUARDED_BY(mu_) = 1;
};

constexpr int kMaxSymlinks = 40;

}  // namespace sentry::vfs
