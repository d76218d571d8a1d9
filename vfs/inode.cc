#include "vfs/inode.h"

#include <dirent.h>
#include <sys/sysinfo.h>
#include <time.h>

#include "vfs/file.h"
#include "vfs/inotify.h"
#include "vfs/lock.h"

namespace sentry::vfs {

Inode::~Inode() { delete watches_.load(); }

InodeWatches& Inode::watches() {
  absl::MutexLock l(&locks_mu_);
  if (!watches_.load()) watches_.store(new InodeWatches, std::memory_order_release);
  return *watches_.load();
}

FileLocks& Inode::locks() {
  absl::MutexLock l(&locks_mu_);
  if (!locks_) locks_ = std::make_unique<FileLocks>();
  return *locks_;
}

FileLocks* Inode::locks_if_any() {
  absl::MutexLock l(&locks_mu_);
  return locks_.get();
}

Result<void> Inode::SetAttr(const SetAttrRequest&) { return Errno(EPERM); }
Result<InodeRef> Inode::Lookup(const std::string&) { return Errno(ENOTDIR); }
Result<std::vector<DirEntry>> Inode::ReadDir() { return Errno(ENOTDIR); }
Result<InodeRef> Inode::Mknod(const std::string&, uint32_t, dev_t, const Creds&) {
  return Errno(IsDir() ? EPERM : ENOTDIR);
}
Result<InodeRef> Inode::Mkdir(const std::string&, uint32_t, const Creds&) {
  return Errno(IsDir() ? EPERM : ENOTDIR);
}
Result<InodeRef> Inode::Symlink(const std::string&, const std::string&, const Creds&) {
  return Errno(IsDir() ? EPERM : ENOTDIR);
}
Result<void> Inode::Link(const std::string&, const InodeRef&) {
  return Errno(IsDir() ? EPERM : ENOTDIR);
}
Result<void> Inode::Unlink(const std::string&, bool) { return Errno(IsDir() ? EPERM : ENOTDIR); }
Result<void> Inode::Rename(const std::string&, Inode&, const std::string&, unsigned) {
  return Errno(IsDir() ? EPERM : ENOTDIR);
}
Result<std::string> Inode::ReadLink() { return Errno(EINVAL); }
Result<FileRef> Inode::Open(int) { return Errno(ENXIO); }
Result<struct statfs> Inode::StatFs() {
  struct statfs s {};
  s.f_type = 0x01021994;  // TMPFS_MAGIC
  s.f_bsize = 4096;
  s.f_frsize = 4096;
  s.f_namelen = 255;
  // Sized as Linux sizes a tmpfs by default: half the RAM. Use is not accounted.
  struct sysinfo si {};
  if (sysinfo(&si) == 0) {
    s.f_blocks = static_cast<uint64_t>(si.totalram) * si.mem_unit / 2 / 4096;
    s.f_bfree = s.f_bavail = s.f_blocks;
    s.f_files = s.f_ffree = static_cast<uint64_t>(si.totalram) * si.mem_unit / 2 / 8192;
  }
  return s;
}
Result<std::string> Inode::GetXattr(const std::string&) { return Errno(ENODATA); }
Result<std::vector<std::string>> Inode::ListXattr() { return std::vector<std::string>{}; }
Result<void> Inode::SetXattr(const std::string&, const std::string&, int) {
  return Errno(EOPNOTSUPP);
}
Result<void> Inode::RemoveXattr(const std::string&) { return Errno(ENODATA); }

uint8_t DirentType(uint32_t mode) {
  switch (mode & S_IFMT) {
    case S_IFREG: return DT_REG;
    case S_IFDIR: return DT_DIR;
    case S_IFLNK: return DT_LNK;
    case S_IFCHR: return DT_CHR;
    case S_IFBLK: return DT_BLK;
    case S_IFIFO: return DT_FIFO;
    case S_IFSOCK: return DT_SOCK;
    default: return DT_UNKNOWN;
  }
}

struct timespec NowTimespec() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts;
}

}  // namespace sentry::vfs
