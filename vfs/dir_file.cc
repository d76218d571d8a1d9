// Directories opened for reading. The listing is taken when reading starts at offset 0 (open
// or rewind) and served from that snapshot, so entries removed meanwhile do not upset a
// reader; the offset of an entry is its index plus one.
#include <dirent.h>

#include <cstring>

#include "vfs/file.h"
#include "vfs/vfs.h"

namespace sentry::vfs {
namespace {

class DirFile final : public FileDescription {
 public:
  DirFile(int flags, InodeRef dir, uint64_t parent_ino)
      : FileDescription(flags), dir_(std::move(dir)), parent_ino_(parent_ino) {}

  Result<size_t> Read(Blocker&, std::span<uint8_t>) override { return Errno(EISDIR); }
  Result<size_t> Write(Blocker&, std::span<const uint8_t>) override { return Errno(EBADF); }
  Result<size_t> PRead(Blocker&, std::span<uint8_t>, uint64_t) override { return Errno(EISDIR); }
  Result<uint64_t> Seek(int64_t off, int whence) override {
    absl::MutexLock l(&mu_);
    int64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? static_cast<int64_t>(offset_)
                                                               : -1;
    if (base < 0 || base + off < 0) return Errno(EINVAL);
    offset_ = base + off;
    return offset_;
  }

  Result<size_t> GetDents(std::span<uint8_t> dst) override {
    // A removed directory lists nothing, not even "." and "..".
    if (dentry() && dentry()->deleted()) return Errno(ENOENT);
    absl::MutexLock l(&mu_);
    if (offset_ == 0 || !snapshot_loaded_) SENTRY_TRY(LoadLocked());
    size_t used = 0;
    while (offset_ < entries_.size()) {
      const DirEntry& e = entries_[offset_];
      size_t reclen = (offsetof(struct dirent64, d_name) + e.name.size() + 1 + 7) & ~size_t{7};
      if (used + reclen > dst.size()) {
        if (used == 0) return Errno(EINVAL);
        break;
      }
      struct dirent64 d {};
      d.d_ino = e.ino;
      d.d_off = static_cast<int64_t>(offset_ + 1);
      d.d_reclen = static_cast<uint16_t>(reclen);
      d.d_type = e.type;
      memset(dst.data() + used, 0, reclen);
      memcpy(dst.data() + used, &d, offsetof(struct dirent64, d_name));
      memcpy(dst.data() + used + offsetof(struct dirent64, d_name), e.name.data(), e.name.size());
      used += reclen;
      offset_++;
    }
    return used;
  }

 private:
  Result<void> LoadLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto st = SENTRY_TRY(dir_->Stat());
    std::vector<DirEntry> children = SENTRY_TRY(dir_->ReadDir());
    entries_.clear();
    entries_.push_back({".", st.st_ino, DT_DIR});
    entries_.push_back({"..", parent_ino_ ? parent_ino_ : st.st_ino, DT_DIR});
    entries_.insert(entries_.end(), children.begin(), children.end());
    snapshot_loaded_ = true;
    return Ok();
  }

  InodeRef dir_;
  uint64_t parent_ino_;
  bool snapshot_loaded_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<DirEntry> entries_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

FileRef NewDirFile(int flags, InodeRef dir, uint64_t parent_ino) {
  return std::make_shared<DirFile>(flags, std::move(dir), parent_ino);
}

}  // namespace sentry::vfs
