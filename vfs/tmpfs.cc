// tmpfs: directories, regular files, symlinks, FIFOs and device nodes kept in Sentry memory.
#include <dirent.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>

#include "vfs/file.h"
#include "vfs/mem_inode.h"
#include "vfs/pipe.h"

namespace sentry::vfs {
namespace {

std::atomic<uint32_t> g_next_minor{1};

}  // namespace

MemSuper::MemSuper(uint32_t magic)
    : dev_(makedev(0, 100 + g_next_minor.fetch_add(1))), magic_(magic) {}

Result<struct statfs> MemInode::StatFs() {
  struct statfs s = SENTRY_TRY(Inode::StatFs());
  s.f_type = sb_->magic();
  s.f_fsid.__val[0] = static_cast<int>(sb_->dev());
  if (s.f_type != 0x01021994) s.f_blocks = s.f_bfree = s.f_bavail = s.f_files = s.f_ffree = 0;
  return s;
}

MemInode::MemInode(MemSuperRef sb, uint32_t mode, uint32_t uid, uint32_t gid)
    : mode_(mode & 07777),
      uid_(uid),
      gid_(gid),
      sb_(std::move(sb)),
      type_(mode & S_IFMT),
      ino_(sb_->NextIno()) {
  atime_ = mtime_ = ctime_ = NowTimespec();
  if (S_ISDIR(type_)) nlink_ = 2;
}

Result<struct stat> MemInode::Stat() {
  absl::MutexLock l(&mu_);
  struct stat st {};
  st.st_dev = sb_->dev();
  st.st_ino = ino_;
  st.st_mode = type_ | mode_;
  st.st_nlink = nlink_;
  st.st_uid = uid_;
  st.st_gid = gid_;
  st.st_rdev = rdev_;
  st.st_size = static_cast<off_t>(SizeLocked());
  st.st_blksize = 4096;
  st.st_blocks = static_cast<blkcnt_t>(BlocksLocked());
  st.st_atim = atime_;
  st.st_mtim = mtime_;
  st.st_ctim = ctime_;
  return st;
}

Result<void> MemInode::TruncateLocked(uint64_t) { return Errno(EINVAL); }

void MemInode::ModifiedLocked() { mtime_ = ctime_ = NowTimespec(); }

void MemInode::AccessedLocked() {
  auto not_after = [](const struct timespec& a, const struct timespec& b) {
    return a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec <= b.tv_nsec);
  };
  struct timespec now = NowTimespec();
  if (not_after(atime_, mtime_) || not_after(atime_, ctime_) ||
      now.tv_sec - atime_.tv_sec >= 24 * 3600) {
    atime_ = now;
  }
}

void MemInode::AdjustLinks(int delta) {
  absl::MutexLock l(&mu_);
  nlink_ += delta;
  ctime_ = NowTimespec();
}

Result<void> MemInode::SetAttr(const SetAttrRequest& req) {
  absl::MutexLock l(&mu_);
  struct timespec now = NowTimespec();
  if (req.mask & kAttrSize) {
    SENTRY_TRY(TruncateLocked(req.size));
    mtime_ = now;
  }
  if (req.mask & kAttrMode) mode_ = req.mode & 07777;
  if (req.mask & kAttrUid) uid_ = req.uid;
  if (req.mask & kAttrGid) gid_ = req.gid;
  if (req.mask & kAttrAtime) atime_ = req.atime.tv_nsec == UTIME_NOW ? now : req.atime;
  if (req.mask & kAttrMtime) mtime_ = req.mtime.tv_nsec == UTIME_NOW ? now : req.mtime;
  ctime_ = now;
  return Ok();
}

namespace {

// A regular file's bytes, kept sparse: only pages that were written (or fallocated) hold
// memory, so a truncate-grown file costs nothing and st_blocks counts the pages in use.
class TmpfsFile final : public MemInode {
 public:
  using MemInode::MemInode;

  Result<FileRef> Open(int flags) override;

  Result<size_t> ReadAt(std::span<uint8_t> dst, uint64_t off) {
    absl::MutexLock l(&mu_);
    if (!dst.empty()) AccessedLocked();
    if (off >= size_) return size_t{0};
    size_t n = std::min<uint64_t>(dst.size(), size_ - off);
    for (size_t done = 0; done < n;) {
      uint64_t pos = off + done;
      size_t in = pos % kPage;
      size_t chunk = std::min<size_t>(kPage - in, n - done);
      auto it = pages_.find(pos / kPage);
      if (it == pages_.end()) {
        memset(dst.data() + done, 0, chunk);
      } else {
        memcpy(dst.data() + done, it->second->data() + in, chunk);
      }
      done += chunk;
    }
    return n;
  }
  // Writes at `off`, or at the end if `append`; returns the offset after the write.
  Result<uint64_t> WriteAt(std::span<const uint8_t> src, uint64_t off, bool append) {
    absl::MutexLock l(&mu_);
    if (append) off = size_;
    if (off + src.size() < off || off + src.size() > kMaxSize) return Errno(EFBIG);
    for (size_t done = 0; done < src.size();) {
      uint64_t pos = off + done;
      size_t in = pos % kPage;
      size_t chunk = std::min<size_t>(kPage - in, src.size() - done);
      memcpy(PageLocked(pos / kPage).data() + in, src.data() + done, chunk);
      done += chunk;
    }
    size_ = std::max<uint64_t>(size_, off + src.size());
    if (!src.empty()) ModifiedLocked();
    return off + src.size();
  }
  uint64_t Size() {
    absl::MutexLock l(&mu_);
    return size_;
  }
  Result<void> Allocate(uint64_t off, uint64_t len, bool keep_size) {
    absl::MutexLock l(&mu_);
    if (off + len < off || off + len > kMaxSize) return Errno(EFBIG);
    for (uint64_t p = off / kPage; p < (off + len + kPage - 1) / kPage; p++) PageLocked(p);
    if (!keep_size) size_ = std::max(size_, off + len);
    ModifiedLocked();
    return Ok();
  }
  // lseek SEEK_DATA / SEEK_HOLE at page granularity, as Linux tmpfs.
  Result<uint64_t> SeekDataOrHole(uint64_t off, bool hole) {
    absl::MutexLock l(&mu_);
    if (off >= size_) return Errno(ENXIO);
    uint64_t idx = off / kPage;
    if (!hole) {
      auto it = pages_.lower_bound(idx);
      if (it == pages_.end()) return Errno(ENXIO);
      uint64_t at = std::max(off, it->first * kPage);
      if (at >= size_) return Errno(ENXIO);
      return at;
    }
    while (pages_.count(idx)) idx++;
    return std::min(size_, std::max(off, idx * kPage));
  }

 protected:
  uint64_t SizeLocked() const override { return size_; }
  uint64_t BlocksLocked() const override { return pages_.size() * (kPage / 512); }
  Result<void> TruncateLocked(uint64_t size) override {
    if (size > kMaxSize) return Errno(EFBIG);
    if (size < size_) {
      pages_.erase(pages_.lower_bound((size + kPage - 1) / kPage), pages_.end());
      // The cut-off bytes of a partial last page must read as zeros if the file grows.
      if (auto it = pages_.find(size / kPage); it != pages_.end()) {
        memset(it->second->data() + size % kPage, 0, kPage - size % kPage);
      }
    }
    size_ = size;
    return Ok();
  }

 private:
  static constexpr uint64_t kPage = 4096;
  static constexpr uint64_t kMaxSize = uint64_t{1} << 40;
  using Page = std::array<uint8_t, kPage>;

  // The page at index `idx`, allocated (zeroed) on first use.
  Page& PageLocked(uint64_t idx) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto& slot = pages_[idx];
    if (!slot) slot = std::make_unique<Page>();
    return *slot;
  }

  std::map<uint64_t, std::unique_ptr<Page>> pages_ ABSL_GUARDED_BY(mu_);  // by page index
  uint64_t size_ ABSL_GUARDED_BY(mu_) = 0;
};

class TmpfsFileDescription final : public FileDescription {
 public:
  TmpfsFileDescription(std::shared_ptr<TmpfsFile> f, int flags)
      : FileDescription(flags), file_(std::move(f)) {}

  Result<size_t> Read(Blocker& b, std::span<uint8_t> dst) override {
    if (!Readable()) return Errno(EBADF);
    absl::MutexLock l(&mu_);
    size_t n = SENTRY_TRY(file_->ReadAt(dst, offset_));
    offset_ += n;
    (void)b;
    return n;
  }
  Result<size_t> Write(Blocker&, std::span<const uint8_t> src) override {
    if (!Writable()) return Errno(EBADF);
    absl::MutexLock l(&mu_);
    offset_ = SENTRY_TRY(file_->WriteAt(src, offset_, flags_ & O_APPEND));
    return src.size();
  }
  Result<size_t> PRead(Blocker&, std::span<uint8_t> dst, uint64_t off) override {
    if (!Readable()) return Errno(EBADF);
    return file_->ReadAt(dst, off);
  }
  Result<size_t> PWrite(Blocker&, std::span<const uint8_t> src, uint64_t off) override {
    if (!Writable()) return Errno(EBADF);
    // Linux quirk kept: pwrite on an O_APPEND file appends.
    SENTRY_TRY(file_->WriteAt(src, off, flags() & O_APPEND));
    return src.size();
  }
  Result<uint64_t> Seek(int64_t off, int whence) override {
    absl::MutexLock l(&mu_);
    int64_t size = static_cast<int64_t>(file_->Size());
    int64_t base;
    switch (whence) {
      case SEEK_SET: base = 0; break;
      case SEEK_CUR: base = static_cast<int64_t>(offset_); break;
      case SEEK_END: base = size; break;
      case SEEK_DATA:
      case SEEK_HOLE:
        if (off < 0) return Errno(ENXIO);
        offset_ = SENTRY_TRY(file_->SeekDataOrHole(off, whence == SEEK_HOLE));
        return offset_;
      default: return Errno(EINVAL);
    }
    if (base + off < 0) return Errno(EINVAL);
    offset_ = base + off;
    return offset_;
  }
  Result<uint64_t> Ioctl(Blocker&, uint64_t cmd, uint64_t) override {
    if (cmd == FIONREAD) {
      absl::MutexLock l(&mu_);
      uint64_t size = file_->Size();
      return size > offset_ ? size - offset_ : 0;
    }
    return Errno(ENOTTY);
  }
  Result<void> Allocate(int mode, uint64_t off, uint64_t len) override {
    if (!Writable()) return Errno(EBADF);
    if (mode & ~FALLOC_FL_KEEP_SIZE) return Errno(EOPNOTSUPP);
    return file_->Allocate(off, len, mode & FALLOC_FL_KEEP_SIZE);
  }

 private:
  std::shared_ptr<TmpfsFile> file_;
};

Result<FileRef> TmpfsFile::Open(int flags) {
  auto self = std::static_pointer_cast<TmpfsFile>(shared_from_this());
  return FileRef(std::make_shared<TmpfsFileDescription>(std::move(self), flags));
}

class TmpfsSymlink final : public MemInode {
 public:
  TmpfsSymlink(MemSuperRef sb, std::string target, uint32_t uid, uint32_t gid)
      : MemInode(std::move(sb), S_IFLNK | 0777, uid, gid), target_(std::move(target)) {}
  Result<std::string> ReadLink() override { return target_; }

 protected:
  uint64_t SizeLocked() const override { return target_.size(); }

 private:
  const std::string target_;
};

// FIFOs, sockets and device nodes.
class TmpfsSpecial final : public MemInode {
 public:
  TmpfsSpecial(MemSuperRef sb, uint32_t mode, dev_t rdev, uint32_t uid, uint32_t gid)
      : MemInode(std::move(sb), mode, uid, gid) {
    absl::MutexLock l(&mu_);
    rdev_ = rdev;
  }
  Result<FileRef> Open(int flags) override {
    switch (Type()) {
      case S_IFIFO: {
        absl::MutexLock l(&mu_);
        if (!pipe_) pipe_ = NewFifoPipe();
        return OpenFifo(pipe_, flags);
      }
      case S_IFCHR: {
        dev_t rdev;
        {
          absl::MutexLock l(&mu_);
          rdev = rdev_;
        }
        return OpenDevice(rdev, flags);
      }
      default:
        return Errno(ENXIO);
    }
  }

 private:
  std::shared_ptr<Pipe> pipe_ ABSL_GUARDED_BY(mu_);
};

class TmpfsDir final : public MemInode {
 public:
  using MemInode::MemInode;

  Result<InodeRef> Lookup(const std::string& name) override {
    absl::MutexLock l(&mu_);
    auto it = children_.find(name);
    if (it == children_.end()) return Errno(ENOENT);
    return it->second;
  }
  Result<std::vector<DirEntry>> ReadDir() override {
    absl::MutexLock l(&mu_);
    std::vector<DirEntry> out;
    out.reserve(children_.size());
    for (auto& [name, ino] : children_) {
      auto* m = static_cast<MemInode*>(ino.get());
      out.push_back({name, m->ino(), DirentType(m->Type())});
    }
    return out;
  }
  Result<InodeRef> Mknod(const std::string& name, uint32_t mode, dev_t rdev,
                         const Creds& c) override {
    InodeRef ino;
    if (S_ISREG(mode)) {
      ino = std::make_shared<TmpfsFile>(super(), mode, c.uid, GroupFor(c));
    } else {
      ino = std::make_shared<TmpfsSpecial>(super(), mode, rdev, c.uid, GroupFor(c));
    }
    SENTRY_TRY(Insert(name, ino));
    return ino;
  }
  Result<InodeRef> Mkdir(const std::string& name, uint32_t mode, const Creds& c) override {
    uint32_t perm = mode & 07777;
    {
      absl::MutexLock l(&mu_);
      if (mode_ & S_ISGID) perm |= S_ISGID;  // setgid directories propagate
    }
    auto ino = std::make_shared<TmpfsDir>(super(), S_IFDIR | perm, c.uid, GroupFor(c));
    SENTRY_TRY(Insert(name, ino));
    AdjustLinks(1);
    return InodeRef(ino);
  }
  Result<InodeRef> Symlink(const std::string& name, const std::string& target,
                           const Creds& c) override {
    InodeRef ino = std::make_shared<TmpfsSymlink>(super(), target, c.uid, GroupFor(c));
    SENTRY_TRY(Insert(name, ino));
    return ino;
  }
  Result<void> Link(const std::string& name, const InodeRef& target) override {
    auto* m = dynamic_cast<MemInode*>(target.get());
    if (!m || m->super() != super()) return Errno(EXDEV);
    SENTRY_TRY(Insert(name, target));
    m->AdjustLinks(1);
    return Ok();
  }
  Result<void> Unlink(const std::string& name, bool dir) override {
    InodeRef victim;
    {
      absl::MutexLock l(&mu_);
      auto it = children_.find(name);
      if (it == children_.end()) return Errno(ENOENT);
      victim = it->second;
      if (dir != victim->IsDir()) return Errno(dir ? ENOTDIR : EISDIR);
      if (dir && !static_cast<TmpfsDir*>(victim.get())->Empty()) return Errno(ENOTEMPTY);
      children_.erase(it);
      ModifiedLocked();
      if (dir) nlink_--;
    }
    static_cast<MemInode*>(victim.get())->AdjustLinks(dir ? -2 : -1);
    return Ok();
  }
  Result<void> Rename(const std::string& old_name, Inode& new_dir_inode,
                      const std::string& new_name, unsigned flags) override;

  bool Empty() {
    absl::MutexLock l(&mu_);
    return children_.empty();
  }

 private:
  uint32_t GroupFor(const Creds& c) {
    absl::MutexLock l(&mu_);
    return (mode_ & S_ISGID) ? gid_ : c.gid;
  }
  Result<void> Insert(const std::string& name, InodeRef ino) {
    absl::MutexLock l(&mu_);
    if (!children_.emplace(name, std::move(ino)).second) return Errno(EEXIST);
    ModifiedLocked();
    return Ok();
  }

  std::map<std::string, InodeRef> children_ ABSL_GUARDED_BY(mu_);
  static absl::Mutex rename_mu_;
};

absl::Mutex TmpfsDir::rename_mu_(absl::kConstInit);

// Serialized by one mutex per process: renames are rare next to lookups, and taking two
// directory locks in a fixed order is then simple.
Result<void> TmpfsDir::Rename(const std::string& old_name, Inode& new_dir_inode,
                              const std::string& new_name, unsigned flags) {
  auto* nd = dynamic_cast<TmpfsDir*>(&new_dir_inode);
  if (!nd || nd->super() != super()) return Errno(EXDEV);
  absl::MutexLock rl(&rename_mu_);
  InodeRef moving = SENTRY_TRY(Lookup(old_name));
  auto existing = nd->Lookup(new_name);
  InodeRef replaced = existing.ok() ? *existing : nullptr;
  if (replaced && (flags & RENAME_NOREPLACE)) return Errno(EEXIST);
  if (!replaced && (flags & RENAME_EXCHANGE)) return Errno(ENOENT);
  if (replaced && !(flags & RENAME_EXCHANGE) && replaced->IsDir() &&
      !static_cast<TmpfsDir*>(replaced.get())->Empty()) {
    return Errno(ENOTEMPTY);
  }
  auto set = [](TmpfsDir* d, const std::string& n, InodeRef ino) {
    absl::MutexLock l(&d->mu_);
    if (ino) {
      d->children_[n] = std::move(ino);
    } else {
      d->children_.erase(n);
    }
    d->ModifiedLocked();
  };
  bool moving_dir = moving->IsDir();
  if (flags & RENAME_EXCHANGE) {
    set(this, old_name, replaced);
    set(nd, new_name, moving);
    if (moving_dir != replaced->IsDir() && nd != this) {
      int d = moving_dir ? 1 : -1;
      nd->AdjustLinks(d);
      AdjustLinks(-d);
    }
    return Ok();
  }
  set(this, old_name, nullptr);
  set(nd, new_name, moving);
  if (replaced) {
    static_cast<MemInode*>(replaced.get())->AdjustLinks(replaced->IsDir() ? -2 : -1);
    if (replaced->IsDir()) nd->AdjustLinks(-1);
  }
  if (moving_dir && nd != this) {
    AdjustLinks(-1);
    nd->AdjustLinks(1);
  }
  static_cast<MemInode*>(moving.get())->AdjustLinks(0);  // ctime
  return Ok();
}

}  // namespace

InodeRef NewTmpfs(uint32_t mode, uint32_t uid, uint32_t gid) {
  return std::make_shared<TmpfsDir>(std::make_shared<MemSuper>(), S_IFDIR | (mode & 07777), uid,
                                    gid);
}

}  // namespace sentry::vfs
