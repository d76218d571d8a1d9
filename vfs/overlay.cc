// overlay: a read-only lower tree (the gofer's root) under an in-memory upper (tmpfs), as
// Linux overlayfs does it. Reads come from the lower until a file is written; the first
// write copies it up. Deleting a lower name leaves a whiteout; a directory created over a
// whiteout is opaque (the lower directory of that name no longer shows through).
//
// Whiteouts, opacity and the set of looked-up children live in the overlay's own directory
// inodes, which stay cached for the life of the mount, so the upper stays a plain tmpfs.
// Renaming a directory that has a lower part fails with EXDEV (overlayfs without
// redirect_dir); tools such as mv then copy.
//
// Lock order: OverlaySuper::mu_ (all structure: lookups, copy-up, changes) -> layer inodes.
#include "vfs/overlay.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/sysmacros.h>

#include <map>
#include <set>

#include "vfs/file.h"
#include "vfs/mem_inode.h"

namespace sentry::vfs {
namespace {

struct OverlaySuper {
  absl::Mutex mu_;
  dev_t dev;
  InodeRef upper_root;  // statfs: the space left is the upper's (the in-memory budget)
  InodeRef lower_root;  // statfs: what the lower holds counts as used
  OverlayOptions opts;

  // `rel` is a protected path or lies below one.
  bool Protects(const std::string& rel) const {
    for (const auto& p : opts.protected_paths) {
      if (rel == p ||
          (rel.size() > p.size() && rel.compare(0, p.size(), p) == 0 && rel[p.size()] == '/')) {
        return true;
      }
    }
    return false;
  }
  // `rel` is a directory on the way to a protected path: it may not go away or move.
  bool OnTheWay(const std::string& rel) const {
    for (const auto& p : opts.protected_paths) {
      if (p.size() > rel.size() && p.compare(0, rel.size(), rel) == 0 && p[rel.size()] == '/') {
        return true;
      }
    }
    return false;
  }
};

class OverlayInode final : public Inode {
 public:
  OverlayInode(std::shared_ptr<OverlaySuper> sb, std::shared_ptr<OverlayInode> parent,
               std::string name, InodeRef upper, InodeRef lower, uint32_t type, uint64_t ino)
      : sb_(std::move(sb)),
        parent_(std::move(parent)),
        name_(std::move(name)),
        upper_(std::move(upper)),
        lower_(std::move(lower)),
        type_(type),
        ino_(ino) {}

  uint32_t Type() const override { return type_; }

  Result<struct stat> Stat() override {
    InodeRef layer = Top();
    struct stat st = SENTRY_TRY(layer->Stat());
    st.st_dev = sb_->dev;
    st.st_ino = ino_;
    return st;
  }

  Result<void> SetAttr(const SetAttrRequest& req) override {
    absl::MutexLock l(&sb_->mu_);
    bool truncating_to_zero = (req.mask & kAttrSize) && req.size == 0;
    SENTRY_TRY(CopyUpLocked(!truncating_to_zero));
    return upper_->SetAttr(req);
  }

  Result<InodeRef> Lookup(const std::string& name) override {
    absl::MutexLock l(&sb_->mu_);
    return LookupLocked(name);
  }
  Result<InodeRef> LookupForRead(const std::string& name) override {
    absl::MutexLock l(&sb_->mu_);
    return LookupLocked(name, /*for_read=*/true);
  }

  Result<std::vector<DirEntry>> ReadDir() override {
    absl::MutexLock l(&sb_->mu_);
    return ReadDirLocked();
  }

  Result<InodeRef> Mknod(const std::string& name, uint32_t mode, dev_t rdev,
                         const Creds& c) override {
    return CreateChild(name, [&](Inode& up) { return up.Mknod(name, mode, rdev, c); });
  }
  Result<InodeRef> Mkdir(const std::string& name, uint32_t mode, const Creds& c) override {
    return CreateChild(name, [&](Inode& up) { return up.Mkdir(name, mode, c); });
  }
  Result<InodeRef> Symlink(const std::string& name, const std::string& target,
                           const Creds& c) override {
    return CreateChild(name, [&](Inode& up) { return up.Symlink(name, target, c); });
  }
  Result<void> Link(const std::string& name, const InodeRef& target) override {
    auto* t = dynamic_cast<OverlayInode*>(target.get());
    if (!t || t->sb_ != sb_) return Errno(EXDEV);
    absl::MutexLock l(&sb_->mu_);
    SENTRY_TRY(CheckWritableLocked(name, false));
    SENTRY_TRY(t->CopyUpLocked(true));
    SENTRY_TRY(CopyUpLocked(false));
    SENTRY_TRY(upper_->Link(name, t->upper_));
    // The new name shares the upper inode; it is a separate overlay inode here (its st_ino
    // comes from the shared upper so both names agree).
    auto child =
        std::make_shared<OverlayInode>(sb_, Self(), name, t->upper_, nullptr, t->type_, t->ino_);
    whiteouts_.erase(name);
    children_[name] = child;
    return Ok();
  }

  Result<void> Unlink(const std::string& name, bool dir) override {
    absl::MutexLock l(&sb_->mu_);
    auto child = SENTRY_TRY(LookupLocked(name));
    auto* c = static_cast<OverlayInode*>(child.get());
    SENTRY_TRY(CheckWritableLocked(name, true));
    if (dir) {
      auto entries = SENTRY_TRY(c->ReadDirLocked());
      if (!entries.empty()) return Errno(ENOTEMPTY);
    }
    SENTRY_TRY(CopyUpLocked(false));
    if (c->upper_) SENTRY_TRY(upper_->Unlink(name, dir));
    if (c->lower_) whiteouts_.insert(name);
    children_.erase(name);
    return Ok();
  }

  Result<void> Rename(const std::string& old_name, Inode& new_dir, const std::string& new_name,
                      unsigned flags) override;

  // OverlayChanges: appends this directory's changes, then its subdirectories'.
  Result<void> CollectChanges(std::vector<OverlayChange>& out) {
    absl::MutexLock l(&sb_->mu_);
    return CollectChangesLocked(out);
  }
  Result<void> CollectChangesLocked(std::vector<OverlayChange>& out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(sb_->mu_);

  Result<std::string> ReadLink() override { return Top()->ReadLink(); }

  Result<FileRef> Open(int flags) override {
    if ((flags & O_ACCMODE) != O_RDONLY) {
      absl::MutexLock l(&sb_->mu_);
      SENTRY_TRY(CopyUpLocked(true));
    }
    return Top()->Open(flags);
  }

  bool Identity(dev_t* dev, uint64_t* ino) override {
    *dev = sb_->dev;
    *ino = ino_;
    return true;
  }

  // What the guest can still write is the upper's free space; what is there already (the
  // lower's files and the upper's) counts as used, so `df /` and disk-usage checks see both.
  Result<struct statfs> StatFs() override {
    struct statfs s = SENTRY_TRY(sb_->upper_root->StatFs());
    s.f_type = 0x794c7630;  // OVERLAYFS_SUPER_MAGIC
    auto low = sb_->lower_root->StatFs();
    if (low.ok() && low->f_bsize > 0 && s.f_bsize > 0 && low->f_blocks >= low->f_bfree) {
      uint64_t used = (low->f_blocks - low->f_bfree) * static_cast<uint64_t>(low->f_bsize) /
                      static_cast<uint64_t>(s.f_bsize);
      s.f_blocks += used;
      if (low->f_files >= low->f_ffree) s.f_files += low->f_files - low->f_ffree;
    }
    return s;
  }
  Result<std::string> GetXattr(const std::string& name) override { return Top()->GetXattr(name); }
  Result<std::vector<std::string>> ListXattr() override { return Top()->ListXattr(); }
  Result<void> SetXattr(const std::string& name, const std::string& value, int flags) override {
    absl::MutexLock l(&sb_->mu_);
    SENTRY_TRY(CopyUpLocked(true));
    return upper_->SetXattr(name, value, flags);
  }
  Result<void> RemoveXattr(const std::string& name) override {
    absl::MutexLock l(&sb_->mu_);
    SENTRY_TRY(CopyUpLocked(true));
    return upper_->RemoveXattr(name);
  }

 private:
  std::shared_ptr<OverlayInode> Self() {
    return std::static_pointer_cast<OverlayInode>(shared_from_this());
  }
  InodeRef Top() {
    absl::MutexLock l(&sb_->mu_);
    return upper_ ? upper_ : lower_;
  }

  // This inode's path from the overlay's root ("" for the root itself).
  std::string PathLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(sb_->mu_) {
    if (!parent_) return "";
    std::string up = parent_->PathLocked();
    return up.empty() ? name_ : up + "/" + name_;
  }
  std::string ChildPathLocked(const std::string& name) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(sb_->mu_) {
    std::string here = PathLocked();
    return here.empty() ? name : here + "/" + name;
  }
  // EROFS when `name` in this directory is a protected path or below one (or, with
  // `or_on_the_way`, a directory on the way to one). Costs nothing when no path is
  // protected: every overlay but a workspace under review.
  Result<void> CheckWritableLocked(const std::string& name, bool or_on_the_way) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(sb_->mu_) {
    if (sb_->opts.protected_paths.empty()) return Ok();
    std::string rel = ChildPathLocked(name);
    if (sb_->Protects(rel) || (or_on_the_way && sb_->OnTheWay(rel))) return Errno(EROFS);
    return Ok();
  }

  Result<InodeRef> LookupLocked(const std::string& name, bool for_read = false)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(sb_->mu_) {
    if (!IsDir()) return Errno(ENOTDIR);
    if (auto it = children_.find(name); it != children_.end()) return InodeRef(it->second);
    InodeRef up, low;
    if (upper_) {
      auto r = upper_->Lookup(name);
      if (r.ok()) {
        up = *r;
      } else if (r.error().code() != ENOENT) {
        return r.error();
      }
    }
    bool lower_visible = lower_ && !opaque_ && !whiteouts_.count(name) &&
                         !lower_absent_.count(name) && (!up || up->IsDir());
    if (lower_visible) {
      // Only a lower file that will be the one opened may be opened on the way.
      auto r = for_read && !up ? lower_->LookupForRead(name) : lower_->Lookup(name);
      if (r.ok()) {
        low = *r;
        if (up && !low->IsDir()) low = nullptr;  // an upper dir over a lower file: opaque
      } else if (r.error().code() == ENOENT) {
        lower_absent_.insert(name);
      } else {
        return r.error();
      }
    }
    if (!up && !low) return Errno(ENOENT);
    InodeRef top = up ? up : low;
    uint32_t type = top->Type();
    // A directory in both layers keeps the lower's number, as readdir shows it.
    uint64_t ino = low ? SENTRY_TRY(low->Stat()).st_ino : SENTRY_TRY(UpperIno(*up));
    auto child = std::make_shared<OverlayInode>(sb_, Self(), name, up, low, type, ino);
    children_[name] = child;
    return InodeRef(child);
  }

  Result<std::vector<DirEntry>> ReadDirLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(sb_->mu_) {
    if (!IsDir()) return Errno(ENOTDIR);
    if (!upper_ && lower_ && whiteouts_.empty()) {
      // Nothing to merge (the common case of a tree only read): the lower's listing in its
      // order, as overlayfs passes a directory that is not merged through. The merge (a
      // sorted map of every name) was 4% of the Sentry's samples for `du -s /usr/share/man`.
      std::vector<DirEntry> out = SENTRY_TRY(lower_->ReadDir());
      if (children_.empty()) return out;
      for (DirEntry& e : out) {
        if (auto it = children_.find(e.name); it != children_.end()) e.ino = it->second->ino_;
      }
      return out;
    }
    std::map<std::string, DirEntry> merged;
    if (lower_ && !opaque_) {
      for (auto& e : SENTRY_TRY(lower_->ReadDir())) {
        if (!whiteouts_.count(e.name)) merged[e.name] = e;
      }
    }
    if (upper_) {
      for (auto& e : SENTRY_TRY(upper_->ReadDir())) {
        auto [it, added] = merged.try_emplace(e.name, e);
        if (added) {
          it->second.ino |= kUpperInoBit;  // see UpperIno
        } else {
          uint64_t lower_ino = it->second.ino;  // a copied-up file keeps the lower's number
          it->second = e;
          it->second.ino = lower_ino;
        }
      }
    }
    std::vector<DirEntry> out;
    out.reserve(merged.size());
    for (auto& [name, e] : merged) {
      if (auto it = children_.find(name); it != children_.end()) e.ino = it->second->ino_;
      out.push_back(std::move(e));
    }
    return out;
  }

  // A file made in the upper layer is numbered apart from the lower's files, whose numbers
  // are the host's: a tmpfs inode number with a high bit set (as overlayfs's xino puts the
  // layer in the high bits), below 2^53 so that JavaScript's numbers hold it exactly. A file
  // copied up keeps its lower number for life.
  static constexpr uint64_t kUpperInoBit = uint64_t{1} << 52;
  static Result<uint64_t> UpperIno(Inode& up) {
    return SENTRY_TRY(up.Stat()).st_ino | kUpperInoBit;
  }

  // Gives this inode an upper copy (and its parents first). `with_data` copies a regular
  // file's bytes; without it the upper file starts empty (the caller truncates anyway).
  Result<void> CopyUpLocked(bool with_data) ABSL_EXCLUSIVE_LOCKS_REQUIRED(sb_->mu_) {
    if (upper_) return Ok();
    if (!parent_) return Errno(EIO);  // the root always has an upper
    SENTRY_TRY(parent_->CheckWritableLocked(name_, false));
    SENTRY_TRY(parent_->CopyUpLocked(false));
    struct stat st = SENTRY_TRY(lower_->Stat());
    copied_from_ = st;
    Creds owner{st.st_uid, st.st_gid, {}};
    Inode& pu = *parent_->upper_;
    InodeRef up;
    switch (type_) {
      case S_IFDIR:
        up = SENTRY_TRY(pu.Mkdir(name_, st.st_mode & 07777, owner));
        break;
      case S_IFLNK:
        up = SENTRY_TRY(pu.Symlink(name_, SENTRY_TRY(lower_->ReadLink()), owner));
        break;
      case S_IFREG:
        up = SENTRY_TRY(pu.Mknod(name_, st.st_mode, 0, owner));
        if (with_data) SENTRY_TRY(CopyData(*lower_, *up));
        break;
      default:
        up = SENTRY_TRY(pu.Mknod(name_, st.st_mode, st.st_rdev, owner));
        break;
    }
    SetAttrRequest attrs;
    attrs.mask = kAttrMode | kAttrUid | kAttrGid | kAttrAtime | kAttrMtime;
    attrs.mode = st.st_mode & 07777;
    attrs.uid = st.st_uid;
    attrs.gid = st.st_gid;
    attrs.atime = st.st_atim;
    attrs.mtime = st.st_mtim;
    if (type_ != S_IFLNK) SENTRY_TRY(up->SetAttr(attrs));
    CopyXattrs(*lower_, *up);
    upper_ = std::move(up);
    return Ok();
  }

  // The lower file's attributes go up with it, as Linux's ovl_copy_xattr; those the upper
  // cannot hold (a namespace it has no handler for) are left behind, not an error.
  static void CopyXattrs(Inode& from, Inode& to) {
    auto names = from.ListXattr();
    if (!names.ok()) return;
    for (const std::string& name : *names) {
      auto value = from.GetXattr(name);
      if (value.ok()) (void)to.SetXattr(name, *value, 0);
    }
  }

  static Result<void> CopyData(Inode& from, Inode& to) {
    FileRef src = SENTRY_TRY(from.Open(O_RDONLY));
    FileRef dst = SENTRY_TRY(to.Open(O_WRONLY));
    std::vector<uint8_t> buf(1 << 20);
    uint64_t off = 0;
    NoWaitBlocker nb;
    for (;;) {
      size_t n = SENTRY_TRY(src->PRead(nb, buf, off));
      if (n == 0) break;
      SENTRY_TRY(dst->PWrite(nb, {buf.data(), n}, off));
      off += n;
    }
    return Ok();
  }

  template <typename Fn>
  Result<InodeRef> CreateChild(const std::string& name, Fn make) {
    absl::MutexLock l(&sb_->mu_);
    if (children_.count(name)) return Errno(EEXIST);
    SENTRY_TRY(CheckWritableLocked(name, false));
    SENTRY_TRY(CopyUpLocked(false));
    InodeRef up = SENTRY_TRY(make(*upper_));
    bool was_whiteout = whiteouts_.erase(name) > 0;
    uint64_t ino = SENTRY_TRY(UpperIno(*up));
    auto child = std::make_shared<OverlayInode>(sb_, Self(), name, up, nullptr, up->Type(), ino);
    // A directory made where a lower one was deleted must not show the lower's entries.
    child->opaque_ = was_whiteout;
    lower_absent_.erase(name);
    children_[name] = child;
    return InodeRef(child);
  }

  friend class OverlayRename;

  const std::shared_ptr<OverlaySuper> sb_;
  // All below guarded by sb_->mu_.
  std::shared_ptr<OverlayInode> parent_;
  std::string name_;
  InodeRef upper_;
  InodeRef lower_;
  const uint32_t type_;
  const uint64_t ino_;
  bool opaque_ = false;
  std::optional<struct stat> copied_from_;  // the lower's attributes at copy-up
  std::map<std::string, std::shared_ptr<OverlayInode>> children_;
  std::set<std::string> whiteouts_;
  std::set<std::string> lower_absent_;
};

Result<void> OverlayInode::Rename(const std::string& old_name, Inode& new_dir_inode,
                                  const std::string& new_name, unsigned flags) {
  auto* nd = dynamic_cast<OverlayInode*>(&new_dir_inode);
  if (!nd || nd->sb_ != sb_) return Errno(EXDEV);
  absl::MutexLock l(&sb_->mu_);
  SENTRY_TRY(CheckWritableLocked(old_name, true));
  SENTRY_TRY(nd->CheckWritableLocked(new_name, true));
  auto moving_ref = SENTRY_TRY(LookupLocked(old_name));
  auto moving = std::static_pointer_cast<OverlayInode>(moving_ref);
  std::shared_ptr<OverlayInode> replaced;
  if (auto r = nd->LookupLocked(new_name); r.ok()) {
    replaced = std::static_pointer_cast<OverlayInode>(*r);
  } else if (r.error().code() != ENOENT) {
    return r.error();
  }
  if ((moving->IsDir() && moving->lower_) ||
      ((flags & RENAME_EXCHANGE) && replaced && replaced->IsDir() && replaced->lower_)) {
    return Errno(EXDEV);
  }
  if (replaced && replaced->IsDir() && !(flags & RENAME_EXCHANGE)) {
    auto entries = SENTRY_TRY(replaced->ReadDirLocked());
    if (!entries.empty()) return Errno(ENOTEMPTY);
  }
  SENTRY_TRY(moving->CopyUpLocked(true));
  if (replaced && (flags & RENAME_EXCHANGE)) SENTRY_TRY(replaced->CopyUpLocked(true));
  SENTRY_TRY(nd->CopyUpLocked(false));
  // A replaced entry that exists only in the lower has no upper name to overwrite.
  SENTRY_TRY(upper_->Rename(old_name, *nd->upper_, new_name, flags));
  children_.erase(old_name);
  if (moving->lower_) whiteouts_.insert(old_name);
  if (replaced && (flags & RENAME_EXCHANGE)) {
    replaced->parent_ = Self();
    replaced->name_ = old_name;
    children_[old_name] = replaced;
    whiteouts_.erase(old_name);
  }
  nd->whiteouts_.erase(new_name);
  if (replaced && !(flags & RENAME_EXCHANGE) && replaced->lower_ && moving->IsDir()) {
    moving->opaque_ = true;
  }
  moving->parent_ = nd->Self();
  moving->name_ = new_name;
  nd->children_[new_name] = moving;
  return Ok();
}

Result<void> OverlayInode::CollectChangesLocked(std::vector<OverlayChange>& out) {
  using Kind = OverlayChange::Kind;
  std::string here = PathLocked();
  auto rel = [&](const std::string& name) { return here.empty() ? name : here + "/" + name; };
  // What the lower holds under `name`, if the guest could have seen it there.
  auto before_of = [&](const std::string& name) -> Result<InodeRef> {
    if (!lower_ || opaque_) return InodeRef();
    auto r = lower_->Lookup(name);
    if (r.ok()) return *r;
    if (r.error().code() == ENOENT) return InodeRef();
    return r.error();
  };
  auto deleted = [&](const std::string& name, const InodeRef& before) -> Result<void> {
    struct stat st = SENTRY_TRY(before->Stat());
    out.push_back({Kind::kDelete, rel(name), st.st_mode, nullptr, before, st});
    return Ok();
  };
  for (const std::string& name : whiteouts_) {
    InodeRef before = SENTRY_TRY(before_of(name));
    if (before) SENTRY_TRY(deleted(name, before));
  }
  if (!upper_) return Ok();
  for (const DirEntry& e : SENTRY_TRY(upper_->ReadDir())) {
    auto child_ref = SENTRY_TRY(LookupLocked(e.name));
    auto child = std::static_pointer_cast<OverlayInode>(child_ref);
    if (!child->upper_) continue;
    InodeRef before = SENTRY_TRY(before_of(e.name));
    struct stat now = SENTRY_TRY(child->upper_->Stat());
    std::optional<struct stat> base;
    if (before) base = SENTRY_TRY(before->Stat());
    bool same_kind = before && (base->st_mode & S_IFMT) == (now.st_mode & S_IFMT);
    if (before && (!same_kind || (child->IsDir() && child->opaque_))) {
      SENTRY_TRY(deleted(e.name, before));
      before = nullptr;
      base.reset();
    }
    // A file the guest changed in place: what the host had when the guest first wrote it.
    if (before && child->copied_from_ && child->copied_from_->st_ino == base->st_ino) {
      base = child->copied_from_;
    }
    switch (now.st_mode & S_IFMT) {
      case S_IFDIR:
        if (!before || (base->st_mode & 07777) != (now.st_mode & 07777)) {
          out.push_back({Kind::kDir, rel(e.name), now.st_mode, child->upper_, before, base});
        }
        SENTRY_TRY(child->CollectChangesLocked(out));
        break;
      case S_IFREG:
        out.push_back({Kind::kFile, rel(e.name), now.st_mode, child->upper_, before, base});
        break;
      case S_IFLNK:
        out.push_back({Kind::kSymlink, rel(e.name), now.st_mode, child->upper_, before, base});
        break;
      default:
        break;  // devices, fifos and sockets made in the sandbox stay there
    }
  }
  return Ok();
}

std::atomic<uint32_t> g_next_overlay_minor{1};

}  // namespace

Result<InodeRef> NewOverlayRoot(InodeRef upper_root, InodeRef lower_root, OverlayOptions options) {
  auto sb = std::make_shared<OverlaySuper>();
  sb->opts = std::move(options);
  sb->dev = makedev(0, 30 + g_next_overlay_minor.fetch_add(1));
  sb->upper_root = upper_root;
  sb->lower_root = lower_root;
  struct stat st = SENTRY_TRY(lower_root->Stat());
  SetAttrRequest attrs;
  attrs.mask = kAttrMode | kAttrUid | kAttrGid;
  attrs.mode = st.st_mode & 07777;
  attrs.uid = st.st_uid;
  attrs.gid = st.st_gid;
  SENTRY_TRY(upper_root->SetAttr(attrs));
  return InodeRef(std::make_shared<OverlayInode>(std::move(sb), nullptr, "", std::move(upper_root),
                                                 std::move(lower_root), S_IFDIR, st.st_ino));
}

Result<std::vector<OverlayChange>> OverlayChanges(const InodeRef& root) {
  auto* o = dynamic_cast<OverlayInode*>(root.get());
  if (o == nullptr) return Errno(EINVAL);
  std::vector<OverlayChange> out;
  SENTRY_TRY(o->CollectChanges(out));
  return out;
}

}  // namespace sentry::vfs
