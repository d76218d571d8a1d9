// An inode whose attributes live in Sentry memory: the base of tmpfs, /dev, /proc and the
// overlay's upper layer.
#pragma once

#include <atomic>

#include "vfs/inode.h"

namespace sentry::vfs {

// Device number and inode numbers of one in-memory file system instance.
class MemSuper {
 public:
  // `magic` is statfs's f_type (TMPFS_MAGIC unless given).
  explicit MemSuper(uint32_t magic = 0x01021994);
  dev_t dev() const { return dev_; }
  uint32_t magic() const { return magic_; }
  uint64_t NextIno() { return next_ino_.fetch_add(1); }

 private:
  dev_t dev_;
  uint32_t magic_;
  std::atomic<uint64_t> next_ino_{2};
};
using MemSuperRef = std::shared_ptr<MemSuper>;

class MemInode : public Inode {
 public:
  MemInode(MemSuperRef sb, uint32_t mode, uint32_t uid, uint32_t gid);

  uint32_t Type() const override { return type_; }
  Result<struct stat> Stat() override;
  Result<void> SetAttr(const SetAttrRequest& req) override;
  Result<struct statfs> StatFs() override;

  uint64_t ino() const { return ino_; }
  const MemSuperRef& super() const { return sb_; }
  void AdjustLinks(int delta);

 protected:
  virtual uint64_t SizeLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return 0; }
  // st_blocks (512-byte units); by default the size rounded up to whole pages.
  virtual uint64_t BlocksLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return (SizeLocked() + 4095) / 4096 * 8;
  }
  virtual Result<void> TruncateLocked(uint64_t size) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Updates mtime and ctime to now (contents changed).
  void ModifiedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A read: updates atime with relatime rules (older than mtime or ctime, or a day old).
  void AccessedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  uint32_t mode_ ABSL_GUARDED_BY(mu_);  // permission bits
  uint32_t uid_ ABSL_GUARDED_BY(mu_);
  uint32_t gid_ ABSL_GUARDED_BY(mu_);
  uint64_t nlink_ ABSL_GUARDED_BY(mu_) = 1;
  dev_t rdev_ ABSL_GUARDED_BY(mu_) = 0;
  struct timespec atime_ ABSL_GUARDED_BY(mu_);
  struct timespec mtime_ ABSL_GUARDED_BY(mu_);
  struct timespec ctime_ ABSL_GUARDED_BY(mu_);

 private:
  const MemSuperRef sb_;
  const uint32_t type_;
  const uint64_t ino_;
};

// A new, empty tmpfs; returns its root directory.
InodeRef NewTmpfs(uint32_t mode, uint32_t uid, uint32_t gid);

}  // namespace sentry::vfs
