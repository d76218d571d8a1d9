// An inode whose attributes live in Sentry memory: the base of tmpfs, /dev, /proc and the
// overlay's upper layer.
#pragma once

#include <atomic>
#include <map>
#include <string>

#include "vfs/inode.h"

namespace sentry::vfs {

// The pages of file data that all in-memory file systems of this Sentry together may hold
// (the overlay's upper layer, every tmpfs, /dev/shm, memfds): one sandbox-wide budget, as
// a tmpfs's size= bounds one instance on Linux. Beyond it, writes and fallocate get ENOSPC.
// The default is half the host's RAM (Linux's default for one tmpfs); the front ends set it.
class MemBudget {
 public:
  static MemBudget& Global();
  void SetLimitBytes(uint64_t bytes) { limit_pages_.store(bytes / 4096); }
  uint64_t limit_pages() const { return limit_pages_.load(); }
  uint64_t used_pages() const { return used_pages_.load(); }
  // Takes `n` pages if they fit under the limit; false (and takes nothing) otherwise.
  bool TryCharge(uint64_t n);
  // Takes `n` pages that are already in use, over the limit if need be.
  void ForceCharge(uint64_t n);
  void Uncharge(uint64_t n);

 private:
  MemBudget();
  std::atomic<uint64_t> limit_pages_;
  std::atomic<uint64_t> used_pages_{0};
};

// Device number and inode numbers of one in-memory file system instance, and what its files
// hold against the budget (and against its own size= limit, if it was mounted with one).
class MemSuper {
 public:
  // `magic` is statfs's f_type (TMPFS_MAGIC unless given); `limit_pages` 0 means only the
  // sandbox-wide budget bounds this instance.
  explicit MemSuper(uint32_t magic = 0x01021994, uint64_t limit_pages = 0);
  dev_t dev() const { return dev_; }
  uint32_t magic() const { return magic_; }
  uint64_t NextIno() { return next_ino_.fetch_add(1); }

  // Page accounting for file data, in 4 KiB pages (see MemBudget).
  bool TryCharge(uint64_t n);
  void ForceCharge(uint64_t n);
  void Uncharge(uint64_t n);
  // What statfs reports: this instance's size and free pages.
  uint64_t total_pages() const;
  uint64_t free_pages() const;

 private:
  dev_t dev_;
  uint32_t magic_;
  const uint64_t limit_pages_;
  std::atomic<uint64_t> used_pages_{0};
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

  // Extended attributes, kept in memory on tmpfs instances (the overlay's upper layer is
  // one): the trusted.*, security.* and user.* namespaces; EOPNOTSUPP for other prefixes and
  // on other in-memory file systems (proc, sys, devpts), as Linux. Who may touch which
  // namespace is the VFS's check (vfs/xattr.h), not the inode's.
  Result<std::string> GetXattr(const std::string& name) override;
  Result<std::vector<std::string>> ListXattr() override;
  Result<void> SetXattr(const std::string& name, const std::string& value, int flags) override;
  Result<void> RemoveXattr(const std::string& name) override;

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
  std::map<std::string, std::string> xattrs_ ABSL_GUARDED_BY(mu_);

 private:
  // EOPNOTSUPP unless this is a tmpfs and `name` is in a namespace it stores.
  Result<void> CheckXattrName(const std::string& name) const;

  const MemSuperRef sb_;
  const uint32_t type_;
  const uint64_t ino_;
};

// A new, empty tmpfs; returns its root directory. `limit_bytes` is the mount's size= (0:
// bounded only by the sandbox-wide MemBudget).
InodeRef NewTmpfs(uint32_t mode, uint32_t uid, uint32_t gid, uint64_t limit_bytes = 0);

// A tmpfs size as mount's size= takes it: bytes with an optional k, m, g or t suffix (powers
// of 1024), or a percentage of the host's RAM ("50%"). EINVAL for anything else.
Result<uint64_t> ParseTmpfsSize(const std::string& text);

// The host memory file (memfd) that holds a tmpfs regular file's data from the moment it is
// first mapped: -1 if `inode` is not a tmpfs file, or if it has none yet and `create` is
// false, or if it cannot be made (the host is out of fds or memory).
int TmpfsHostFd(Inode& inode, bool create);

}  // namespace sentry::vfs
