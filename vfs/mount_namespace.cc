// Mount tables: mount, bind, remount, move, propagation types, umount, pivot_root, and the
// copy of a namespace that unshare(CLONE_NEWNS) makes. See vfs.h for the model: one dentry
// tree shared by every namespace, one mount table per namespace.
#include <sys/sysmacros.h>

#include <cstdio>

#include "vfs/nsfs.h"
#include "vfs/vfs.h"

namespace sentry::vfs {
namespace {

// Whether `anc` is `d` or one of its ancestors in the dentry tree.
bool DentryUnder(const Dentry* d, const Dentry* anc, const DentryRef& (*parent)(const Dentry*)) {
  for (; d; d = parent(d).get()) {
    if (d == anc) return true;
  }
  return false;
}

// A path as /proc/PID/mounts and mountinfo show it: space, tab, newline and backslash as
// octal escapes, as Linux's mangle(), so that the fields can be split on spaces.
std::string Mangle(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\\') {
      char buf[5];
      snprintf(buf, sizeof(buf), "\\%03o", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

MountNamespace::~MountNamespace() {
  absl::MutexLock l(&vfs_->mu_);
  for (const MountRef& m : all_) {
    if (m->ns_ != this) continue;
    if (m->mountpoint_) m->mountpoint_->mount_count_--;
    m->ns_ = nullptr;
    m->parent_ = nullptr;
    m->mountpoint_ = nullptr;
  }
}

MountRef Vfs::NewMount(int flags, std::string fstype, std::string source, DentryRef root) {
  auto m = std::make_shared<Mount>();
  m->vfs_ = this;
  m->flags_ = flags;
  m->fstype_ = std::move(fstype);
  m->source_ = std::move(source);
  m->root_ = std::move(root);
  return m;
}

void Vfs::Attach(MountNamespace& ns, const MountRef& m, const Path& where) {
  if (m->id_ == 0) m->id_ = next_mount_id_++;
  if (m->ns_ != &ns) ns.all_.push_back(m);
  m->ns_ = &ns;
  m->parent_ = where.mnt;
  m->mountpoint_ = where.d;
  where.d->mount_count_++;
  ns.mounts_[{where.mnt.get(), where.d.get()}] = m;
}

void Vfs::Detach(const MountRef& m) {
  MountNamespace* ns = m->ns_;
  if (!ns) return;
  MountRef keep = m;  // `m` may be an element of the tables changed below
  if (keep->parent_) {
    ns->mounts_.erase({keep->parent_.get(), keep->mountpoint_.get()});
    keep->mountpoint_->mount_count_--;
  }
  std::erase(ns->all_, keep);
  keep->ns_ = nullptr;
  keep->parent_ = nullptr;
  keep->mountpoint_ = nullptr;
}

std::vector<MountRef> Vfs::Subtree(const MountRef& m) {
  std::vector<MountRef> out{m};
  if (!m->ns_) return out;
  for (size_t i = 0; i < out.size(); i++) {
    for (const MountRef& x : m->ns_->all_) {
      if (x->parent_ == out[i]) out.push_back(x);
    }
  }
  return out;
}

bool Vfs::Reachable(const Path& p, const Path& top) {
  auto parent = [](const Dentry* d) -> const DentryRef& { return d->parent_; };
  Path cur = p;
  for (;;) {
    if (cur.mnt == top.mnt) return DentryUnder(cur.d.get(), top.d.get(), parent);
    if (!cur.mnt->parent_) return false;
    cur = {cur.mnt->parent_, cur.mnt->mountpoint_};
  }
}

MountNsRef Vfs::NamespaceOf(const Path& p) {
  absl::MutexLock l(&mu_);
  return p.mnt->ns_ ? p.mnt->ns_->weak_from_this().lock() : nullptr;
}

Path Vfs::NamespaceRoot(const MountNamespace& ns) {
  absl::MutexLock l(&mu_);
  return {ns.root_, ns.root_->root_};
}

MountNsRef Vfs::CopyNamespace(const MountNamespace& src, std::vector<Path*> fix) {
  auto ns = std::make_shared<MountNamespace>(this, NewNsInode());
  absl::MutexLock l(&mu_);
  std::map<const Mount*, MountRef> copy;
  for (const MountRef& m : src.all_) {
    MountRef c = NewMount(m->flags(), m->fstype_, m->source_, m->root_);
    c->read_only_locked_ = m->read_only_locked_;
    c->propagation_ = m->propagation_;
    c->peer_group_ = m->peer_group_;
    c->master_ = m->master_;
    c->id_ = next_mount_id_++;
    copy[m.get()] = c;
  }
  for (const MountRef& m : src.all_) {
    const MountRef& c = copy[m.get()];
    if (m->parent_) {
      Attach(*ns, c, {copy[m->parent_.get()], m->mountpoint_});
    } else {
      c->ns_ = ns.get();
      ns->all_.push_back(c);
    }
  }
  ns->root_ = copy[src.root_.get()];
  for (Path* p : fix) {
    auto it = copy.find(p->mnt.get());
    if (it != copy.end()) p->mnt = it->second;
  }
  return ns;
}

Result<void> Vfs::MountAt(const Path& target, InodeRef root, std::string fstype, std::string source,
                          int flags) {
  // A directory over a directory, or a file over a file (a bind mount of a host file).
  if (target.inode()->IsDir() != root->IsDir()) return Errno(ENOTDIR);
  MountRef m = NewMount(flags, std::move(fstype), std::move(source),
                        std::make_shared<Dentry>("", nullptr, std::move(root)));
  absl::MutexLock l(&mu_);
  MountNamespace* ns = target.mnt->ns_;
  if (!ns) return Errno(EINVAL);
  Attach(*ns, m, CrossMounts(target));
  return Ok();
}

Result<void> Vfs::BindAt(const Path& target, const Path& source, int flags, bool recursive) {
  if (target.inode()->IsDir() != source.inode()->IsDir()) return Errno(ENOTDIR);
  absl::MutexLock l(&mu_);
  MountNamespace* ns = target.mnt->ns_;
  if (!ns) return Errno(EINVAL);
  if (source.mnt->propagation_ == MS_UNBINDABLE) return Errno(EINVAL);
  // A bind joins its source's peer group and has its master, as Linux's clone_mnt.
  auto copy_of = [this](const Mount& from, int f, DentryRef root) {
    MountRef c = NewMount(f, from.fstype_, from.source_, std::move(root));
    c->propagation_ = from.propagation_;
    c->peer_group_ = from.peer_group_;
    c->master_ = from.master_;
    if (from.read_only_locked_) {
      c->flags_ |= MS_RDONLY;
      c->read_only_locked_ = true;
    }
    return c;
  };
  // What lies below the source is taken before the bind, which may land inside it.
  std::vector<MountRef> below;
  if (recursive) below = Subtree(source.mnt);
  MountRef top = copy_of(*source.mnt, flags, source.d);
  Attach(*ns, top, CrossMounts(target));
  std::map<const Mount*, MountRef> copy{{source.mnt.get(), top}};
  auto parent = [](const Dentry* d) -> const DentryRef& { return d->parent_; };
  for (size_t i = 1; i < below.size(); i++) {
    const MountRef& x = below[i];
    auto p = copy.find(x->parent_.get());
    if (p == copy.end() || x->propagation_ == MS_UNBINDABLE) continue;
    if (x->parent_ == source.mnt && !DentryUnder(x->mountpoint_.get(), source.d.get(), parent)) {
      continue;
    }
    MountRef c = copy_of(*x, x->flags(), x->root_);
    Attach(*ns, c, {p->second, x->mountpoint_});
    copy[x.get()] = c;
  }
  return Ok();
}

void Vfs::LockReadOnly(const Path& p) {
  p.mnt->flags_ |= MS_RDONLY;
  p.mnt->read_only_locked_ = true;
}

Result<void> Vfs::Remount(const Path& p, int flags) {
  absl::MutexLock l(&mu_);
  const MountRef& m = p.mnt;
  if (!m->ns_ || p.d != m->root_) return Errno(EINVAL);
  if (m->read_only_locked_ && !(flags & MS_RDONLY)) return Errno(EPERM);
  m->flags_ = flags;
  return Ok();
}

Result<void> Vfs::SetPropagation(const Path& p, int type, bool recursive) {
  absl::MutexLock l(&mu_);
  if (!p.mnt->ns_ || p.d != p.mnt->root_) return Errno(EINVAL);
  std::vector<MountRef> targets = recursive ? Subtree(p.mnt) : std::vector<MountRef>{p.mnt};
  for (const MountRef& m : targets) {
    switch (type) {
      case MS_SHARED:
        if (m->propagation_ != MS_SHARED) m->peer_group_ = next_peer_group_++;
        if (m->propagation_ == MS_UNBINDABLE) m->master_ = 0;
        break;
      case MS_SLAVE: {
        // A shared mount becomes a slave of its peers, or keeps its old master (if any)
        // when it has none; a private one stays private. Peers are looked for in this
        // namespace only.
        if (m->propagation_ != MS_SHARED && m->propagation_ != MS_SLAVE) {
          m->master_ = 0;
          m->propagation_ = MS_PRIVATE;
          continue;
        }
        bool peers = false;
        for (const MountRef& x : m->ns_->all_) {
          peers |= x != m && x->propagation_ == MS_SHARED && x->peer_group_ == m->peer_group_;
        }
        if (m->propagation_ == MS_SHARED && peers) m->master_ = m->peer_group_;
        m->peer_group_ = 0;
        if (!m->master_) {
          m->propagation_ = MS_PRIVATE;
          continue;
        }
        break;
      }
      default:  // MS_PRIVATE, MS_UNBINDABLE
        m->peer_group_ = 0;
        m->master_ = 0;
        break;
    }
    m->propagation_ = type;
  }
  return Ok();
}

Result<void> Vfs::MoveMount(const Path& from, const Path& to) {
  absl::MutexLock l(&mu_);
  MountRef m = from.mnt;
  MountNamespace* ns = m->ns_;
  // As Linux's do_move_mount: EINVAL for anything but an attached mount root of this
  // namespace, or one whose parent is shared; ELOOP for a move below itself.
  if (!ns || to.mnt->ns_ != ns || from.d != m->root_ || !m->parent_) return Errno(EINVAL);
  if (to.inode()->IsDir() != from.inode()->IsDir()) return Errno(EINVAL);
  if (m->parent_->propagation_ == MS_SHARED) return Errno(EINVAL);
  Path top = CrossMounts(to);
  if (Reachable(top, {m, m->root_})) return Errno(ELOOP);
  ns->mounts_.erase({m->parent_.get(), m->mountpoint_.get()});
  m->mountpoint_->mount_count_--;
  Attach(*ns, m, top);
  return Ok();
}

Result<void> Vfs::Umount(const Context& ctx, const Path& target, int flags) {
  absl::MutexLock l(&mu_);
  const MountRef& m = target.mnt;
  MountNamespace* ns = m->ns_;
  if (!ns || target.d != m->root_) return Errno(EINVAL);
  if (!m->parent_) return Errno(EINVAL);  // the namespace's root
  bool detach = flags & MNT_DETACH;
  // Held by the namespace's tables and by `target`; any other holder (an open file, a
  // working directory, a mount below it) keeps it busy, as Linux's mount reference count.
  bool has_children = false;
  for (const MountRef& x : ns->all_) has_children |= x->parent_ == m;
  bool busy = has_children || m.use_count() > 3;
  if (flags & MNT_EXPIRE) {
    if (m == ctx.root.mnt || (flags & (MNT_FORCE | MNT_DETACH))) return Errno(EINVAL);
    if (busy) return Errno(EBUSY);
    if (!m->expiry_mark_) {
      m->expiry_mark_ = true;
      return Errno(EAGAIN);
    }
  }
  if (!detach && (m == ctx.root.mnt || busy)) return Errno(EBUSY);
  std::vector<MountRef> tree = Subtree(m);
  for (auto it = tree.rbegin(); it != tree.rend(); ++it) Detach(*it);
  return Ok();
}

Result<Path> Vfs::PivotRoot(const Path& root, const Path& new_root, const Path& put_old) {
  absl::MutexLock l(&mu_);
  MountRef root_mnt = root.mnt, new_mnt = new_root.mnt, old_mnt = put_old.mnt;
  MountNamespace* ns = root_mnt->ns_;
  auto shared = [](const MountRef& x) { return x && x->propagation_ == MS_SHARED; };
  if (shared(old_mnt) || shared(new_mnt->parent_) || shared(root_mnt->parent_)) {
    return Errno(EINVAL);
  }
  if (!ns || new_mnt->ns_ != ns) return Errno(EINVAL);
  if (new_root.d->deleted_) return Errno(ENOENT);
  if (new_mnt == root_mnt || old_mnt == root_mnt) return Errno(EBUSY);
  if (root.d != root_mnt->root_) return Errno(EINVAL);
  if (new_root.d != new_mnt->root_ || !new_mnt->parent_) return Errno(EINVAL);
  if (!Reachable(put_old, new_root) || !Reachable(new_root, root)) return Errno(EINVAL);
  // The namespace's root mount has no parent here (Linux's sits on rootfs): the new root
  // then becomes the namespace's root itself.
  MountRef root_parent = root_mnt->parent_;
  DentryRef root_mp = root_mnt->mountpoint_;
  ns->mounts_.erase({new_mnt->parent_.get(), new_mnt->mountpoint_.get()});
  new_mnt->mountpoint_->mount_count_--;
  if (root_parent) {
    ns->mounts_.erase({root_parent.get(), root_mp.get()});
    root_mp->mount_count_--;
  }
  Attach(*ns, root_mnt, {old_mnt, put_old.d});
  if (root_parent) {
    Attach(*ns, new_mnt, {root_parent, root_mp});
  } else {
    new_mnt->parent_ = nullptr;
    new_mnt->mountpoint_ = nullptr;
    ns->root_ = new_mnt;
  }
  return Path{new_mnt, new_mnt->root_};
}

std::string Vfs::MountOptions(const Mount& m, bool info) {
  int f = m.flags();
  std::string o = (f & MS_RDONLY) ? "ro" : "rw";
  if (f & MS_NOSUID) o += ",nosuid";
  if (f & MS_NODEV) o += ",nodev";
  if (f & MS_NOEXEC) o += ",noexec";
  if (f & MS_NOATIME) o += ",noatime";
  if (f & MS_NODIRATIME) o += ",nodiratime";
  // Linux's default atime mode; strictatime shows nothing.
  if (!(f & (MS_NOATIME | MS_STRICTATIME))) o += ",relatime";
  (void)info;
  return o;
}

std::string Vfs::Mounts(const MountNamespace& ns, const Path& root, bool info) {
  struct Line {
    MountRef m;
    std::string where, fs_root, optional;
    uint64_t parent;
  };
  std::vector<Line> lines;
  {
    absl::MutexLock l(&mu_);
    for (const MountRef& m : ns.all_) {
      if (m != root.mnt && !Reachable({m, m->root_}, root)) continue;  // outside a chroot
      std::string where = m->parent_ ? PathStringLocked(root, {m->parent_, m->mountpoint_}) : "/";
      Line x{m, Mangle(where), "", "", m->parent_ ? m->parent_->id_ : m->id_};
      for (const Dentry* d = m->root_.get(); d->parent_; d = d->parent_.get()) {
        x.fs_root = "/" + d->name_ + x.fs_root;
      }
      x.fs_root = x.fs_root.empty() ? "/" : Mangle(x.fs_root);
      if (m->propagation_ == MS_SHARED) x.optional += " shared:" + std::to_string(m->peer_group_);
      if (m->master_) x.optional += " master:" + std::to_string(m->master_);
      if (m->propagation_ == MS_UNBINDABLE) x.optional += " unbindable";
      lines.push_back(std::move(x));
    }
  }
  std::string out;
  for (const Line& x : lines) {
    const Mount& m = *x.m;
    std::string opts = MountOptions(m, info);
    std::string super = m.read_only() ? "ro" : "rw";
    if (info) {
      // The device number stat(2) reports for files of this mount.
      auto st = m.root_->inode()->Stat();
      dev_t dev = st.ok() ? st->st_dev : 0;
      out += std::to_string(m.id_) + " " + std::to_string(x.parent) + " " +
             std::to_string(major(dev)) + ":" + std::to_string(minor(dev)) + " " + x.fs_root + " " +
             x.where + " " + opts + x.optional + " - " + m.fstype_ + " " + m.source_ + " " + super +
             "\n";
    } else {
      out += m.source_ + " " + x.where + " " + m.fstype_ + " " + opts + " 0 0\n";
    }
  }
  return out;
}

}  // namespace sentry::vfs
