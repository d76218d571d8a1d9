#include "vfs/vfs.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <linux/limits.h>
#include <linux/openat2.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstring>

#include "vfs/inotify.h"
#include "vfs/nsfs.h"
#include "vfs/pipe.h"

namespace sentry::vfs {
namespace {

constexpr int kMayRead = 4;
constexpr int kMayWrite = 2;
constexpr int kMayExec = 1;

std::vector<std::string> SplitPath(const std::string& p) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < p.size()) {
    size_t j = p.find('/', i);
    if (j == std::string::npos) j = p.size();
    if (j > i) out.push_back(p.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

bool IsDotOrDotDot(const std::string& n) { return n == "." || n == ".."; }

Result<struct stat> StatOf(const InodeRef& ino) { return ino->Stat(); }

// The inotify events of a change of attributes, as Linux's fsnotify_change.
uint32_t SetAttrEvents(uint32_t mask) {
  uint32_t ev = 0;
  if (mask & (kAttrMode | kAttrUid | kAttrGid)) ev |= IN_ATTRIB;
  if (mask & kAttrSize) ev |= IN_MODIFY;
  if ((mask & (kAttrAtime | kAttrMtime)) == (kAttrAtime | kAttrMtime)) {
    ev |= IN_ATTRIB;
  } else if (mask & kAttrAtime) {
    ev |= IN_ACCESS;
  } else if (mask & kAttrMtime) {
    ev |= IN_MODIFY;
  }
  return ev;
}

// The inotify events of a rename: IN_MOVED_FROM and IN_MOVED_TO with one cookie, the
// replaced file's link count, IN_MOVE_SELF on the moved one; twice for RENAME_EXCHANGE.
void NotifyRename(const Path& old_parent, const std::string& old_name, const InodeRef& moved,
                  const Path& new_parent, const std::string& new_name, const InodeRef& other,
                  bool exchange) {
  if (!InotifyActive()) return;
  auto move = [](Inode& from, const std::string& from_name, Inode& to,
                 const std::string& to_name, Inode& what) {
    uint32_t cookie = NewMoveCookie();
    NotifyChild(from, IN_MOVED_FROM, from_name, what.IsDir(), cookie);
    NotifyChild(to, IN_MOVED_TO, to_name, what.IsDir(), cookie);
  };
  move(*old_parent.inode(), old_name, *new_parent.inode(), new_name, *moved);
  if (other && !exchange) NotifyInode(*other, IN_ATTRIB);
  NotifyInode(*moved, IN_MOVE_SELF);
  if (exchange) {
    move(*new_parent.inode(), new_name, *old_parent.inode(), old_name, *other);
    NotifyInode(*other, IN_MOVE_SELF);
  } else if (other) {
    MaybeDeleteSelf(*other);
  }
}

}  // namespace

// State of one path resolution: the symlink budget is shared by every nested walk.
struct Vfs::Walker {
  Vfs& vfs;
  const Context& ctx;
  int links = 0;
  FileRef magic;  // set when a walk ends on a magic link to a file with no place
  bool read_intent = false;  // the walk's last component is to be opened for reading

  Result<Path> Step(const Path& dir, const std::string& name, bool for_read = false) {
    if (!dir.inode()->IsDir()) return Errno(ENOTDIR);
    auto st = SENTRY_TRY(StatOf(dir.inode()));
    SENTRY_TRY(CheckPermission(ctx.creds, st, kMayExec));
    if (name == ".") return dir;
    bool no_xdev = ctx.resolve & RESOLVE_NO_XDEV;
    if (name == "..") {
      if ((ctx.resolve & RESOLVE_BENEATH) && dir == ctx.beneath) return Errno(EXDEV);
      Path up = vfs.Parent(ctx, dir);
      if (no_xdev && up.mnt != dir.mnt) return Errno(EXDEV);
      return up;
    }
    if (name.size() > NAME_MAX) return Errno(ENAMETOOLONG);
    DentryRef child = SENTRY_TRY(vfs.Child(dir.d, name, for_read));
    absl::MutexLock l(&vfs.mu_);
    Path p = vfs.CrossMounts({dir.mnt, child});
    if (no_xdev && p.mnt != dir.mnt) return Errno(EXDEV);
    return p;
  }

  // Follows `p` (found in `dir`) while it is a symlink.
  Result<Path> Follow(const Path& dir, Path p) {
    while (p.inode()->IsSymlink()) {
      if (ctx.resolve & RESOLVE_NO_SYMLINKS) return Errno(ELOOP);
      if (++links > kMaxSymlinks) return Errno(ELOOP);
      if (FileRef f = p.inode()->MagicFile()) {
        if (ctx.resolve & RESOLVE_NO_MAGICLINKS) return Errno(ELOOP);
        if (ctx.resolve & (RESOLVE_BENEATH | RESOLVE_IN_ROOT)) return Errno(EXDEV);
        if (!f->dentry()) {
          magic = std::move(f);
          return p;
        }
        p = {f->mount(), f->dentry()};
        continue;
      }
      std::string target = SENTRY_TRY(p.inode()->ReadLink());
      if (target.empty()) return Errno(ENOENT);
      p = SENTRY_TRY(Walk(dir, target, true));
    }
    return p;
  }

  Result<std::pair<Path, std::string>> WalkParent(const Path& start, const std::string& path,
                                                  bool* trailing) {
    if (path.empty()) return Errno(ENOENT);
    if (path.size() >= PATH_MAX) return Errno(ENAMETOOLONG);
    *trailing = path.back() == '/';
    std::vector<std::string> comps = SplitPath(path);
    if (path[0] == '/') {
      if (ctx.resolve & RESOLVE_BENEATH) return Errno(EXDEV);
      if ((ctx.resolve & RESOLVE_NO_XDEV) && ctx.root.mnt != start.mnt) return Errno(EXDEV);
    }
    Path cur = path[0] == '/' ? ctx.root : start;
    if (comps.empty()) return std::make_pair(cur, std::string());
    for (size_t i = 0; i + 1 < comps.size(); i++) {
      Path next = SENTRY_TRY(Step(cur, comps[i]));
      cur = SENTRY_TRY(Follow(cur, std::move(next)));
    }
    return std::make_pair(cur, comps.back());
  }

  Result<Path> Walk(const Path& start, const std::string& path, bool follow) {
    bool trailing = false;
    auto [parent, last] = SENTRY_TRY(WalkParent(start, path, &trailing));
    if (last.empty()) return parent;
    Path p = SENTRY_TRY(Step(parent, last, std::exchange(read_intent, false)));
    if (follow || trailing) p = SENTRY_TRY(Follow(parent, std::move(p)));
    if (trailing && !p.inode()->IsDir()) return Errno(ENOTDIR);
    return p;
  }
};

bool Creds::InGroup(uint32_t g) const {
  if (g == gid) return true;
  for (uint32_t x : groups) {
    if (x == g) return true;
  }
  return false;
}

// Linux's generic_permission: the mode bits of the caller's class, then the capabilities
// that override them.
Result<void> CheckPermission(const Creds& c, const struct stat& st, int want) {
  want &= kMayRead | kMayWrite | kMayExec;
  uint32_t bits = st.st_mode;
  if (c.uid == st.st_uid) {
    bits >>= 6;
  } else if (c.InGroup(st.st_gid)) {
    bits >>= 3;
  }
  if ((bits & want) == static_cast<uint32_t>(want)) return Ok();
  if (S_ISDIR(st.st_mode)) {
    // Reading and searching directories is CAP_DAC_READ_SEARCH's; anything CAP_DAC_OVERRIDE's.
    if (!(want & kMayWrite) && c.Capable(CAP_DAC_READ_SEARCH)) return Ok();
    if (c.Capable(CAP_DAC_OVERRIDE)) return Ok();
    return Errno(EACCES);
  }
  // Even CAP_DAC_OVERRIDE cannot execute a file nobody may execute.
  if ((!(want & kMayExec) || (st.st_mode & 0111)) && c.Capable(CAP_DAC_OVERRIDE)) return Ok();
  if (want == kMayRead && c.Capable(CAP_DAC_READ_SEARCH)) return Ok();
  return Errno(EACCES);
}

Vfs::Vfs(InodeRef root_inode, std::string fstype, std::string source, int flags) {
  init_ns_ = std::make_shared<MountNamespace>(this, NewNsInode());
  MountRef root = NewMount(flags, std::move(fstype), std::move(source),
                           std::make_shared<Dentry>("", nullptr, std::move(root_inode)));
  absl::MutexLock l(&mu_);
  root->id_ = next_mount_id_++;
  root->ns_ = init_ns_.get();
  init_ns_->root_ = root;
  init_ns_->all_.push_back(std::move(root));
}

Path Vfs::Root() {
  absl::MutexLock l(&mu_);
  return {init_ns_->root_, init_ns_->root_->root_};
}

// A cached name is checked with Inode::Valid outside mu_: a file system may ask the host
// (a gofer inode under a read-write bind whose attributes are old, vfs/gofer_fs.cc). A name
// found stale is looked up again; if it is gone, its dentry is dropped as an unlink would.
Result<DentryRef> Vfs::Child(const DentryRef& dir, const std::string& name, bool for_read) {
  for (int attempt = 0;; attempt++) {
    uint64_t generation;
    DentryRef cached;
    {
      absl::MutexLock l(&mu_);
      if (dir->deleted_) return Errno(ENOENT);
      auto it = dir->children_.find(name);
      if (it != dir->children_.end()) cached = it->second;
      generation = dir->generation_;
    }
    if (cached && cached->inode()->Valid()) return cached;
    Result<InodeRef> found =
        for_read ? dir->inode()->LookupForRead(name) : dir->inode()->Lookup(name);
    if (!found.ok()) {
      if (cached && found.error().code() == ENOENT) DropStale(dir, name, cached);
      return found.error();
    }
    InodeRef ino = std::move(*found);
    absl::MutexLock l(&mu_);
    if (dir->generation_ != generation) {
      // The directory changed while we looked: what we found may be what a rename or unlink
      // just replaced. Look again; under a storm of changes, answer without caching.
      if (attempt < 8) continue;
      return std::make_shared<Dentry>(name, dir, std::move(ino));
    }
    auto& slot = dir->children_[name];
    if (!slot || slot->inode() != ino) {
      if (cached && slot == cached) cached->deleted_ = true;  // the host replaced it
      slot = std::make_shared<Dentry>(name, dir, std::move(ino));
    }
    return slot;
  }
}

void Vfs::DropStale(const DentryRef& dir, const std::string& name, const DentryRef& stale) {
  absl::MutexLock l(&mu_);
  auto it = dir->children_.find(name);
  if (it == dir->children_.end() || it->second != stale) return;
  dir->generation_++;
  stale->deleted_ = true;
  dir->children_.erase(it);
}

DentryRef Vfs::Created(const DentryRef& dir, const std::string& name, InodeRef ino,
                       uint64_t generation) {
  absl::MutexLock l(&mu_);
  if (dir->deleted_ || dir->generation_ != generation) {
    return std::make_shared<Dentry>(name, dir, std::move(ino));
  }
  auto& slot = dir->children_[name];
  if (!slot || slot->inode() != ino) slot = std::make_shared<Dentry>(name, dir, std::move(ino));
  return slot;
}

uint64_t Vfs::Generation(const DentryRef& dir) {
  absl::MutexLock l(&mu_);
  return dir->generation_;
}

void Vfs::Forget(const DentryRef& dir, const std::string& name) {
  absl::MutexLock l(&mu_);
  auto it = dir->children_.find(name);
  dir->generation_++;
  if (it == dir->children_.end()) return;
  it->second->deleted_ = true;
  dir->children_.erase(it);
}

Path Vfs::CrossMounts(Path p) {
  while (p.d->mount_count_ > 0) {
    MountNamespace* ns = p.mnt->ns_;
    if (!ns) break;  // a detached mount shows no mounts below it
    auto it = ns->mounts_.find({p.mnt.get(), p.d.get()});
    if (it == ns->mounts_.end()) break;
    p = {it->second, it->second->root_};
  }
  return p;
}

Path Vfs::ParentLocked(const Path& root, const Path& p) {
  Path cur = p;
  if (cur == root) return cur;
  while (cur.d == cur.mnt->root_ && cur.mnt->parent_) {
    cur = {cur.mnt->parent_, cur.mnt->mountpoint_};
    if (cur == root) return cur;
  }
  if (cur.d == cur.mnt->root_ || !cur.d->parent_) return cur;
  return {cur.mnt, cur.d->parent_};
}

Path Vfs::Parent(const Context& ctx, const Path& p) {
  absl::MutexLock l(&mu_);
  return ParentLocked(ctx.root, p);
}

void Vfs::NotifyDentry(const DentryRef& d, uint32_t mask) {
  if (!InotifyActive()) return;
  DentryRef parent;
  std::string name;
  {
    absl::MutexLock l(&mu_);
    parent = d->parent_;
    name = d->name_;
  }
  if (parent) NotifyChild(*parent->inode(), mask, name, d->inode()->IsDir());
  NotifyInode(*d->inode(), mask);
}

Result<Path> Vfs::Resolve(const Context& ctx, const Path& start, const std::string& path,
                          bool follow, FileRef* magic) {
  Walker w{*this, ctx};
  Path p = SENTRY_TRY(w.Walk(start, path, follow));
  if (magic) *magic = std::move(w.magic);
  return p;
}

Result<std::pair<Path, std::string>> Vfs::ResolveParent(const Context& ctx, const Path& start,
                                                        const std::string& path,
                                                        bool* trailing_slash) {
  Walker w{*this, ctx};
  return w.WalkParent(start, path, trailing_slash);
}

Result<void> Vfs::CheckWritableDir(const Context& ctx, const Path& dir) {
  if (!dir.inode()->IsDir()) return Errno(ENOTDIR);
  // Linux asks the mount for write access (mnt_want_write) before it checks permissions.
  if (dir.mnt->read_only()) return Errno(EROFS);
  auto st = SENTRY_TRY(StatOf(dir.inode()));
  SENTRY_TRY(CheckPermission(ctx.creds, st, kMayWrite | kMayExec));
  {
    absl::MutexLock l(&mu_);
    if (dir.d->deleted_) return Errno(ENOENT);
  }
  return Ok();
}

// The sticky bit on a directory lets only the owner of an entry (or of the directory)
// remove or rename it.
Result<void> Vfs::CheckSticky(const Context& ctx, const InodeRef& dir, const InodeRef& victim) {
  if (ctx.creds.Capable(CAP_FOWNER)) return Ok();
  auto dst = SENTRY_TRY(StatOf(dir));
  if (!(dst.st_mode & S_ISVTX)) return Ok();
  auto vst = SENTRY_TRY(StatOf(victim));
  if (vst.st_uid == ctx.creds.uid || dst.st_uid == ctx.creds.uid) return Ok();
  return Errno(EPERM);
}

Result<FileRef> Vfs::Open(const Context& ctx, const Path& start, const std::string& path,
                          int flags, uint32_t mode) {
  Walker w{*this, ctx};
  if (!(flags & O_CREAT)) {
    bool follow = !(flags & O_NOFOLLOW);
    w.read_intent = (flags & O_ACCMODE) == O_RDONLY && !(flags & (O_PATH | O_TRUNC));
    Path p = SENTRY_TRY(w.Walk(start, path, follow));
    if (w.magic) {
      // /proc/self/fd/N of a file with no place: a new open file of it (a memfd), or the
      // same open file (a pipe).
      FileRef again = SENTRY_TRY(w.magic->Reopen(flags));
      return again ? again : w.magic;
    }
    return OpenPath(ctx, p, flags);
  }
  bool trailing = false;
  auto [parent, last] = SENTRY_TRY(w.WalkParent(start, path, &trailing));
  if (last.empty() || IsDotOrDotDot(last) || trailing) return Errno(EISDIR);
  for (;;) {
    auto found = w.Step(parent, last);
    if (found.ok()) {
      if (flags & O_EXCL) return Errno(EEXIST);
      Path p = *found;
      if (!p.inode()->IsSymlink()) return OpenPath(ctx, p, flags);
      if (flags & O_NOFOLLOW) return Errno(ELOOP);
      if (++w.links > kMaxSymlinks) return Errno(ELOOP);
      // A symlink, maybe dangling: O_CREAT creates its target.
      std::string target = SENTRY_TRY(p.inode()->ReadLink());
      auto next = SENTRY_TRY(w.WalkParent(parent, target, &trailing));
      if (next.second.empty() || IsDotOrDotDot(next.second) || trailing) return Errno(EISDIR);
      parent = next.first;
      last = next.second;
      continue;
    }
    if (found.error().code() != ENOENT) return found.error();
    break;
  }
  SENTRY_TRY(CheckWritableDir(ctx, parent));
  if (last.size() > NAME_MAX) return Errno(ENAMETOOLONG);
  uint32_t perm = mode & 07777 & ~ctx.umask;
  uint64_t generation = Generation(parent.d);
  InodeRef ino = SENTRY_TRY(parent.inode()->Mknod(last, S_IFREG | perm, 0, ctx.creds));
  NotifyChild(*parent.inode(), IN_CREATE, last, false);
  DentryRef d = Created(parent.d, last, ino, generation);
  // The creator may use the new file in any access mode, whatever its permission bits.
  FileRef f = SENTRY_TRY(ino->Open(flags & ~(O_CREAT | O_EXCL | O_TRUNC | O_NOCTTY)));
  f->set_location(parent.mnt, d, ino);
  NotifyDentry(d, IN_OPEN);
  return f;
}

Result<FileRef> Vfs::OpenPath(const Context& ctx, const Path& p, int flags, bool exec) {
  const InodeRef& ino = p.inode();
  if (flags & O_PATH) {
    if ((flags & O_DIRECTORY) && !ino->IsDir()) return Errno(ENOTDIR);
    FileRef f = NewPathFile(flags & (O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    f->set_location(p.mnt, p.d, ino);
    return f;
  }
  // Access mode 3 checks both permissions but allows neither reading nor writing.
  int acc = flags & O_ACCMODE;
  if (ino->IsSymlink()) return Errno(ELOOP);
  if ((flags & O_DIRECTORY) && !ino->IsDir()) return Errno(ENOTDIR);
  if (ino->IsDir() && (acc != O_RDONLY || (flags & (O_CREAT | O_TRUNC)))) return Errno(EISDIR);
  bool write = acc != O_RDONLY;
  int want = (acc != O_WRONLY ? kMayRead : 0) | (write ? kMayWrite : 0);
  auto st = SENTRY_TRY(StatOf(ino));
  // Linux's do_open takes write access to the mount for O_TRUNC of a regular file before it
  // checks permissions: such an open on a read-only mount is EROFS even where it would be
  // EACCES (a shell's `>` onto a root-owned file of a read-only /proc/sys, as non-root).
  if ((flags & O_TRUNC) && S_ISREG(st.st_mode) && p.mnt->read_only()) return Errno(EROFS);
  if (!exec) SENTRY_TRY(CheckPermission(ctx.creds, st, want));
  bool regular = S_ISREG(st.st_mode) || S_ISDIR(st.st_mode);
  if (write && regular && p.mnt->read_only()) return Errno(EROFS);
  // O_TRUNC truncates even with O_RDONLY, given write permission.
  if ((flags & O_TRUNC) && acc == O_RDONLY && S_ISREG(st.st_mode)) {
    SENTRY_TRY(CheckPermission(ctx.creds, st, kMayWrite));
    if (p.mnt->read_only()) return Errno(EROFS);
  }
  // Not updating access times is for the owner (or CAP_FOWNER) to ask.
  if ((flags & O_NOATIME) && ctx.creds.uid != st.st_uid && !ctx.creds.Capable(CAP_FOWNER)) {
    return Errno(EPERM);
  }
  bool truncate = (flags & O_TRUNC) && S_ISREG(st.st_mode);
  // Leases are broken before the open (and its truncation) happens, as Linux's
  // do_dentry_open.
  FileLocks* locks = ino->locks_if_any();
  if (locks && S_ISREG(st.st_mode) && ctx.blocker) {
    SENTRY_TRY(locks->BreakLeases(*ctx.blocker, nullptr, write || truncate, flags & O_NONBLOCK));
  }
  if (truncate && st.st_size != 0) {
    SetAttrRequest req;
    req.mask = kAttrSize;
    SENTRY_TRY(ino->SetAttr(req));
  }
  constexpr int kOpenOnly = O_CREAT | O_EXCL | O_TRUNC | O_NOCTTY;  // not kept in F_GETFL
  FileRef f = ino->IsDir() ? NewDirFile(flags & ~kOpenOnly, ino, 0)
                           : SENTRY_TRY(ino->Open(flags & ~kOpenOnly));
  f->set_location(p.mnt, p.d, ino);
  // A FIFO end opened alone waits for the other (dropping `f` undoes the open).
  if (S_ISFIFO(st.st_mode) && ctx.blocker && !(flags & O_NONBLOCK)) {
    SENTRY_TRY(WaitFifoPartner(*ctx.blocker, *f));
  }
  NotifyDentry(p.d, IN_OPEN);
  if (truncate) NotifyDentry(p.d, IN_MODIFY);  // after IN_OPEN, even if it was empty: as Linux
  return f;
}

// Resolves the parent of a name to be created and fails with EEXIST if the name exists.
#define SENTRY_CREATE_PREAMBLE(ctx, start, path)                                 \
  Walker w{*this, ctx};                                                          \
  bool trailing = false;                                                         \
  auto [parent, last] = SENTRY_TRY(w.WalkParent(start, path, &trailing));        \
  if (last.empty() || IsDotOrDotDot(last)) return Errno(EEXIST);                 \
  if (last.size() > NAME_MAX) return Errno(ENAMETOOLONG);                        \
  if (auto found = w.Step(parent, last); found.ok()) return Errno(EEXIST);       \
  else if (found.error().code() != ENOENT) return found.error();                 \
  SENTRY_TRY(CheckWritableDir(ctx, parent))

Result<void> Vfs::Mknod(const Context& ctx, const Path& start, const std::string& path,
                        uint32_t mode, dev_t rdev) {
  SENTRY_CREATE_PREAMBLE(ctx, start, path);
  if (trailing) return Errno(ENOENT);
  uint32_t type = mode & S_IFMT;
  if (type == 0) type = S_IFREG;
  if ((type == S_IFCHR || type == S_IFBLK) && !ctx.creds.Capable(CAP_MKNOD)) return Errno(EPERM);
  if (type != S_IFREG && type != S_IFCHR && type != S_IFBLK && type != S_IFIFO &&
      type != S_IFSOCK) {
    return Errno(EINVAL);
  }
  SENTRY_TRY(parent.inode()->Mknod(last, type | (mode & 07777 & ~ctx.umask), rdev, ctx.creds));
  NotifyChild(*parent.inode(), IN_CREATE, last, false);
  return Ok();
}

Result<void> Vfs::Mkdir(const Context& ctx, const Path& start, const std::string& path,
                        uint32_t mode) {
  SENTRY_CREATE_PREAMBLE(ctx, start, path);
  SENTRY_TRY(parent.inode()->Mkdir(last, mode & 07777 & ~ctx.umask, ctx.creds));
  NotifyChild(*parent.inode(), IN_CREATE, last, true);
  return Ok();
}

Result<void> Vfs::Symlink(const Context& ctx, const std::string& target, const Path& start,
                          const std::string& path) {
  if (target.empty()) return Errno(ENOENT);
  if (target.size() >= PATH_MAX) return Errno(ENAMETOOLONG);
  SENTRY_CREATE_PREAMBLE(ctx, start, path);
  if (trailing) return Errno(ENOENT);
  SENTRY_TRY(parent.inode()->Symlink(last, target, ctx.creds));
  NotifyChild(*parent.inode(), IN_CREATE, last, false);
  return Ok();
}

Result<void> Vfs::Link(const Context& ctx, const Path& old_start, const std::string& old_path,
                       const Path& new_start, const std::string& new_path, bool follow) {
  Walker ow{*this, ctx};
  Path old = SENTRY_TRY(ow.Walk(old_start, old_path, follow));
  return LinkPath(ctx, old, new_start, new_path);
}

Result<void> Vfs::LinkPath(const Context& ctx, const Path& old, const Path& new_start,
                           const std::string& new_path) {
  SENTRY_CREATE_PREAMBLE(ctx, new_start, new_path);
  if (old.inode()->IsDir()) return Errno(EPERM);
  if (old.mnt != parent.mnt) return Errno(EXDEV);
  SENTRY_TRY(parent.inode()->Link(last, old.inode()));
  NotifyInode(*old.inode(), IN_ATTRIB);  // its link count
  NotifyChild(*parent.inode(), IN_CREATE, last, false);
  return Ok();
}

#undef SENTRY_CREATE_PREAMBLE

Result<void> Vfs::Unlink(const Context& ctx, const Path& start, const std::string& path,
                         bool dir) {
  Walker w{*this, ctx};
  bool trailing = false;
  auto [parent, last] = SENTRY_TRY(w.WalkParent(start, path, &trailing));
  if (last.empty()) return Errno(dir ? EBUSY : EISDIR);
  if (last == ".") return Errno(dir ? EINVAL : EISDIR);
  if (last == "..") return Errno(dir ? ENOTEMPTY : EISDIR);
  if (!parent.inode()->IsDir()) return Errno(ENOTDIR);
  // As Linux's do_unlinkat/do_rmdir: a read-only mount fails before the name is looked up,
  // whether it exists or has the wrong type.
  if (parent.mnt->read_only()) return Errno(EROFS);
  DentryRef child = SENTRY_TRY(Child(parent.d, last));
  const InodeRef& ino = child->inode();
  if (dir && !ino->IsDir()) return Errno(ENOTDIR);
  if (!dir && ino->IsDir()) return Errno(EISDIR);
  if (!dir && trailing) return Errno(ENOTDIR);
  SENTRY_TRY(CheckWritableDir(ctx, parent));
  SENTRY_TRY(CheckSticky(ctx, parent.inode(), ino));
  {
    absl::MutexLock l(&mu_);
    if (child->mount_count_ > 0) return Errno(EBUSY);
  }
  ino->Unlinking();
  SENTRY_TRY(parent.inode()->Unlink(last, dir));
  Forget(parent.d, last);
  if (!dir) NotifyInode(*ino, IN_ATTRIB);  // its link count
  MaybeDeleteSelf(*ino);
  NotifyChild(*parent.inode(), IN_DELETE, last, dir);
  return Ok();
}

Result<void> Vfs::Rename(const Context& ctx, const Path& old_start, const std::string& old_path,
                         const Path& new_start, const std::string& new_path, unsigned flags) {
  if ((flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE)) ||
      ((flags & RENAME_NOREPLACE) && (flags & RENAME_EXCHANGE))) {
    return Errno(EINVAL);
  }
  Walker w{*this, ctx};
  bool old_trailing = false, new_trailing = false;
  auto [old_parent, old_last] = SENTRY_TRY(w.WalkParent(old_start, old_path, &old_trailing));
  auto [new_parent, new_last] = SENTRY_TRY(w.WalkParent(new_start, new_path, &new_trailing));
  if (!old_parent.inode()->IsDir() || !new_parent.inode()->IsDir()) return Errno(ENOTDIR);
  // Linux's do_renameat2 order: other mount, "." or "..", read-only mount, then the lookups.
  if (old_parent.mnt != new_parent.mnt) return Errno(EXDEV);
  if (old_last.empty() || IsDotOrDotDot(old_last)) return Errno(EBUSY);
  if (new_last.empty() || IsDotOrDotDot(new_last)) return Errno(EBUSY);
  if (old_parent.mnt->read_only()) return Errno(EROFS);
  DentryRef old_d = SENTRY_TRY(Child(old_parent.d, old_last));
  auto new_found = Child(new_parent.d, new_last);
  if (!new_found.ok() && new_found.error().code() != ENOENT) return new_found.error();
  DentryRef new_d = new_found.ok() ? *new_found : nullptr;
  bool old_dir = old_d->inode()->IsDir();
  if ((old_trailing || new_trailing) && !old_dir) return Errno(ENOTDIR);
  if ((flags & RENAME_EXCHANGE) && !new_d) return Errno(ENOENT);
  if (new_d && (flags & RENAME_NOREPLACE)) return Errno(EEXIST);
  SENTRY_TRY(CheckWritableDir(ctx, old_parent));
  SENTRY_TRY(CheckWritableDir(ctx, new_parent));
  SENTRY_TRY(CheckSticky(ctx, old_parent.inode(), old_d->inode()));
  if (new_d) {
    // Two names of one file: rename does nothing.
    if (new_d->inode() == old_d->inode()) return Ok();
    auto os = SENTRY_TRY(StatOf(old_d->inode()));
    auto ns = SENTRY_TRY(StatOf(new_d->inode()));
    if (os.st_dev == ns.st_dev && os.st_ino == ns.st_ino) return Ok();
    SENTRY_TRY(CheckSticky(ctx, new_parent.inode(), new_d->inode()));
    bool new_dir = new_d->inode()->IsDir();
    if (!(flags & RENAME_EXCHANGE)) {
      if (old_dir && !new_dir) return Errno(ENOTDIR);
      if (!old_dir && new_dir) return Errno(EISDIR);
    }
  }
  {
    absl::MutexLock l(&mu_);
    if (old_d->mount_count_ > 0 || (new_d && new_d->mount_count_ > 0)) return Errno(EBUSY);
    // A directory cannot move below itself (nor, when exchanging, the other way round).
    for (Dentry* a = new_parent.d.get(); a; a = a->parent_.get()) {
      if (a == old_d.get()) return Errno(EINVAL);
    }
    if ((flags & RENAME_EXCHANGE) && new_d) {
      for (Dentry* a = old_parent.d.get(); a; a = a->parent_.get()) {
        if (a == new_d.get()) return Errno(EINVAL);
      }
    }
  }
  if (new_d && !(flags & RENAME_EXCHANGE)) new_d->inode()->Unlinking();
  SENTRY_TRY(old_parent.inode()->Rename(old_last, *new_parent.inode(), new_last, flags));
  NotifyRename(old_parent, old_last, old_d->inode(), new_parent, new_last,
               new_d ? new_d->inode() : nullptr, flags & RENAME_EXCHANGE);
  absl::MutexLock l(&mu_);
  old_parent.d->generation_++;
  new_parent.d->generation_++;
  old_parent.d->children_.erase(old_last);
  new_parent.d->children_.erase(new_last);
  if (new_d && (flags & RENAME_EXCHANGE)) {
    new_d->name_ = old_last;
    new_d->parent_ = old_parent.d;
    old_parent.d->children_[old_last] = new_d;
  } else if (new_d) {
    new_d->deleted_ = true;
  }
  old_d->name_ = new_last;
  old_d->parent_ = new_parent.d;
  new_parent.d->children_[new_last] = old_d;
  return Ok();
}

Result<std::string> Vfs::ReadLink(const Context& ctx, const Path& start,
                                  const std::string& path) {
  Path p = SENTRY_TRY(Resolve(ctx, start, path, false));
  if (!p.inode()->IsSymlink()) return Errno(EINVAL);
  return p.inode()->ReadLink();
}

Result<void> Vfs::SetAttr(const Context& ctx, const Path& p, const SetAttrRequest& req) {
  const InodeRef& ino = p.inode();
  auto st = SENTRY_TRY(StatOf(ino));
  const Creds& c = ctx.creds;
  bool owner = c.Capable(CAP_FOWNER) || c.uid == st.st_uid;
  SetAttrRequest r = req;
  if (r.mask & kAttrSize) {
    if (S_ISDIR(st.st_mode)) return Errno(EISDIR);
    if (!S_ISREG(st.st_mode)) return Errno(EINVAL);
  }
  // A read-only mount fails before any permission check, as in Linux (chmod_common,
  // chown_common, vfs_utimes and vfs_truncate take mnt_want_write first).
  if (p.mnt->read_only()) return Errno(EROFS);
  if ((r.mask & kAttrMode) && !owner) return Errno(EPERM);
  // Only root gives a file away; an owner may "change" it to itself, and its group to one
  // it belongs to.
  if ((r.mask & kAttrUid) && !c.Capable(CAP_CHOWN) && !(c.uid == st.st_uid && r.uid == st.st_uid)) {
    return Errno(EPERM);
  }
  if ((r.mask & kAttrGid) && !c.Capable(CAP_CHOWN) &&
      !(c.uid == st.st_uid && (r.gid == st.st_gid || c.InGroup(r.gid)))) {
    return Errno(EPERM);
  }
  if (r.mask & kAttrSize) SENTRY_TRY(CheckPermission(c, st, kMayWrite));
  if (r.mask & (kAttrAtime | kAttrMtime)) {
    bool both_now = (!(r.mask & kAttrAtime) || r.atime.tv_nsec == UTIME_NOW) &&
                    (!(r.mask & kAttrMtime) || r.mtime.tv_nsec == UTIME_NOW);
    if (!owner) {
      if (!both_now) return Errno(EPERM);
      SENTRY_TRY(CheckPermission(c, st, kMayWrite));
    }
  }
  // chmod by someone outside the file's (new) group silently drops set-group-ID.
  if ((r.mask & kAttrMode) && (r.mode & S_ISGID) && !c.Capable(CAP_FSETID) &&
      !c.InGroup((r.mask & kAttrGid) ? r.gid : st.st_gid)) {
    r.mode &= ~S_ISGID;
  }
  // chown by anyone clears set-user-ID and set-group-ID on non-directories.
  if ((r.mask & (kAttrUid | kAttrGid)) && !S_ISDIR(st.st_mode) && !(r.mask & kAttrMode) &&
      (st.st_mode & (S_ISUID | S_ISGID))) {
    r.mask |= kAttrMode;
    r.mode = st.st_mode & 07777 & ~(S_ISUID | S_ISGID);
  }
  SENTRY_TRY(ino->SetAttr(r));
  NotifyDentry(p.d, SetAttrEvents(r.mask));
  return Ok();
}

Result<void> Vfs::Access(const Context& ctx, const Path& p, int mode) {
  if (mode == F_OK) return Ok();
  auto st = SENTRY_TRY(StatOf(p.inode()));
  if ((mode & W_OK) && p.mnt->read_only() && (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode) ||
                                              S_ISLNK(st.st_mode))) {
    return Errno(EROFS);
  }
  return CheckPermission(ctx.creds, st, mode & 7);
}

std::string Vfs::PathString(const Path& root, const Path& p) {
  absl::MutexLock l(&mu_);
  return PathStringLocked(root, p);
}

std::string Vfs::PathStringLocked(const Path& root, const Path& p) {
  std::vector<const std::string*> parts;
  Path cur = p;
  while (!(cur == root)) {
    if (cur.d == cur.mnt->root_) {
      if (!cur.mnt->parent_) break;
      cur = {cur.mnt->parent_, cur.mnt->mountpoint_};
      continue;
    }
    if (!cur.d->parent_) break;
    parts.push_back(&cur.d->name_);
    cur = {cur.mnt, cur.d->parent_};
  }
  std::string out;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) out += "/" + **it;
  if (out.empty()) out.push_back('/');  // (assigning "/" trips gcc 12's -Wrestrict)
  if (p.d->deleted_) out += " (deleted)";
  return out;
}

}  // namespace sentry::vfs
