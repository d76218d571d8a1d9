// Extended attributes of in-memory inodes (tmpfs, the overlay's upper layer).
//
// Which namespaces: those of the host's tmpfs, the reference. Linux's tmpfs took user.* only
// in 6.6; the hosts here run 6.18, where /dev/shm takes trusted.*, security.* and user.*
// (and refuses system.* without ACLs, and other prefixes, with EOPNOTSUPP), so the Sentry's
// tmpfs does the same whatever kernel it runs on.
#include <sys/xattr.h>

#include <string_view>

#include "vfs/mem_inode.h"

namespace sentry::vfs {

namespace {

constexpr uint32_t kTmpfsMagic = 0x01021994;

// The namespaces Linux's tmpfs has handlers for (besides system.posix_acl_*, which needs
// ACL support we do not have).
constexpr const char* kPrefixes[] = {"trusted.", "security.", "user."};

// Bytes an inode's attributes may take together: Linux bounds tmpfs user.* attributes by the
// inode's share of the instance's inode space; a fixed bound keeps a guest from filling the
// Sentry's memory through xattrs alone.
constexpr size_t kMaxXattrBytesPerInode = 1 << 20;

}  // namespace

Result<void> MemInode::CheckXattrName(const std::string& name) const {
  if (sb_->magic() != kTmpfsMagic) return Errno(EOPNOTSUPP);
  for (const char* prefix : kPrefixes) {
    std::string_view p(prefix);
    if (name.starts_with(p)) {
      // A bare prefix names no attribute.
      if (name.size() == p.size()) return Errno(EINVAL);
      return Ok();
    }
  }
  return Errno(EOPNOTSUPP);
}

Result<std::string> MemInode::GetXattr(const std::string& name) {
  SENTRY_TRY(CheckXattrName(name));
  absl::MutexLock l(&mu_);
  auto it = xattrs_.find(name);
  if (it == xattrs_.end()) return Errno(ENODATA);
  return it->second;
}

Result<std::vector<std::string>> MemInode::ListXattr() {
  std::vector<std::string> names;
  if (sb_->magic() != kTmpfsMagic) return names;
  absl::MutexLock l(&mu_);
  for (const auto& [name, value] : xattrs_) names.push_back(name);
  return names;
}

Result<void> MemInode::SetXattr(const std::string& name, const std::string& value, int flags) {
  SENTRY_TRY(CheckXattrName(name));
  absl::MutexLock l(&mu_);
  auto it = xattrs_.find(name);
  if (it != xattrs_.end() && (flags & XATTR_CREATE)) return Errno(EEXIST);
  if (it == xattrs_.end() && (flags & XATTR_REPLACE)) return Errno(ENODATA);
  size_t total = name.size() + value.size();
  for (const auto& [n, v] : xattrs_) {
    if (n != name) total += n.size() + v.size();
  }
  if (total > kMaxXattrBytesPerInode) return Errno(ENOSPC);
  xattrs_[name] = value;
  ctime_ = NowTimespec();
  return Ok();
}

Result<void> MemInode::RemoveXattr(const std::string& name) {
  SENTRY_TRY(CheckXattrName(name));
  absl::MutexLock l(&mu_);
  if (xattrs_.erase(name) == 0) return Errno(ENODATA);
  ctime_ = NowTimespec();
  return Ok();
}

}  // namespace sentry::vfs
