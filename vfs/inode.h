// Inodes: what each file system implements. The VFS (vfs.h) walks paths, checks permissions
// and keeps the dentry cache; an Inode only answers for itself and, if it is a directory, for
// its direct children by name. Names handed to an Inode are single components, never "",
// "." or "..", never containing '/'.
//
// Lock order: Vfs::mu_ -> Inode::mu_ (each file system's own) -> FileDescription::mu_.
#pragma once

#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "sentry/base/errno.h"
#include "vfs/lock.h"

namespace sentry::vfs {

class FileDescription;
using FileRef = std::shared_ptr<FileDescription>;
class Inode;
using InodeRef = std::shared_ptr<Inode>;

// The credentials a file operation runs with (the task's fs uid/gid and groups).
struct Creds {
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::vector<uint32_t> groups;
  // The effective capability set (bit n is capability n, as <linux/capability.h>). A
  // default-made Creds is the sandbox's root with every capability.
  uint64_t caps = ~uint64_t{0};
  bool Capable(int cap) const { return (caps >> cap) & 1; }
  bool InGroup(uint32_t g) const;
};

struct DirEntry {
  std::string name;
  uint64_t ino = 0;
  uint8_t type = 0;  // DT_*
};

// Which fields SetAttr changes.
enum AttrMask : uint32_t {
  kAttrMode = 1 << 0,
  kAttrUid = 1 << 1,
  kAttrGid = 1 << 2,
  kAttrSize = 1 << 3,
  kAttrAtime = 1 << 4,  // atime.tv_nsec may be UTIME_NOW
  kAttrMtime = 1 << 5,
};

struct SetAttrRequest {
  uint32_t mask = 0;
  uint32_t mode = 0;  // permission bits only (07777)
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint64_t size = 0;
  struct timespec atime {};
  struct timespec mtime {};
};

uint8_t DirentType(uint32_t mode);
struct timespec NowTimespec();

class FileLocks;
struct InodeWatches;

class Inode : public std::enable_shared_from_this<Inode> {
 public:
  virtual ~Inode();

  // S_IFMT bits; fixed for the life of the inode.
  virtual uint32_t Type() const = 0;
  virtual Result<struct stat> Stat() = 0;
  virtual Result<void> SetAttr(const SetAttrRequest& req);

  // Directories. Defaults fail with ENOTDIR.
  virtual Result<InodeRef> Lookup(const std::string& name);
  // Lookup of a name about to be opened for reading: a file system whose open costs a round
  // trip may open the file on the way (the gofer's kWalkOpen).
  virtual Result<InodeRef> LookupForRead(const std::string& name) { return Lookup(name); }
  virtual Result<std::vector<DirEntry>> ReadDir();
  // Regular files, FIFOs, sockets and device nodes (`mode` holds the type).
  virtual Result<InodeRef> Mknod(const std::string& name, uint32_t mode, dev_t rdev,
                                 const Creds& c);
  virtual Result<InodeRef> Mkdir(const std::string& name, uint32_t mode, const Creds& c);
  virtual Result<InodeRef> Symlink(const std::string& name, const std::string& target,
                                   const Creds& c);
  virtual Result<void> Link(const std::string& name, const InodeRef& target);
  // rmdir if `dir`, else unlink. The VFS has checked the type and emptiness rules it can.
  virtual Result<void> Unlink(const std::string& name, bool dir);
  // Called before this inode loses a name (unlink, or a rename over it): a file system that
  // reopens open files by name must keep them open from now on.
  virtual void Unlinking() {}
  // renameat2 within one file system; `flags` RENAME_NOREPLACE / RENAME_EXCHANGE.
  virtual Result<void> Rename(const std::string& old_name, Inode& new_dir,
                              const std::string& new_name, unsigned flags);

  // Symlinks.
  virtual Result<std::string> ReadLink();
  // A "magic link" (/proc/PID/fd/N, /proc/PID/exe, cwd): following it yields this open
  // file's own place, or, for a file with no place (a pipe), the open file itself.
  virtual FileRef MagicFile() { return nullptr; }

  // Opens the inode for I/O. O_TRUNC has been applied by the VFS already.
  virtual Result<FileRef> Open(int flags);

  virtual Result<struct statfs> StatFs();
  // The (st_dev, st_ino) this inode shows, when a file system stacks it over another's
  // (overlay) and an open file of the lower inode must report the stacked identity. False
  // for everyone else: their Stat is the identity.
  virtual bool Identity(dev_t* dev, uint64_t* ino) {
    (void)dev, (void)ino;
    return false;
  }
  virtual Result<std::string> GetXattr(const std::string& name);
  virtual Result<std::vector<std::string>> ListXattr();
  virtual Result<void> SetXattr(const std::string& name, const std::string& value, int flags);
  virtual Result<void> RemoveXattr(const std::string& name);

  // False once the object behind a cached name is gone (a /proc/PID of an exited process):
  // the dentry cache then looks the name up again.
  virtual bool Valid() { return true; }

  bool IsDir() const { return S_ISDIR(Type()); }
  bool IsSymlink() const { return S_ISLNK(Type()); }

  // The advisory locks on this inode (created on first use).
  FileLocks& locks();
  // Null when no lock was ever taken.
  FileLocks* locks_if_any();

  // The inotify watches on this inode (vfs/inotify.h; created on first use, null before).
  InodeWatches& watches();
  InodeWatches* watches_if_any() const { return watches_.load(std::memory_order_acquire); }
  // Open files of this inode (counted by FileDescription): IN_DELETE_SELF waits for the last.
  std::atomic<int>& open_files() { return open_files_; }
  // Of those, the ones open for writing, and for reading only (leases count them).
  std::atomic<int>& write_opens() { return write_opens_; }
  std::atomic<int>& read_only_opens() { return read_only_opens_; }

 private:
  absl::Mutex locks_mu_;
  std::unique_ptr<FileLocks> locks_ ABSL_GUARDED_BY(locks_mu_);
  std::atomic<InodeWatches*> watches_{nullptr};  // owned, written once under locks_mu_
  std::atomic<int> open_files_{0};
  std::atomic<int> write_opens_{0};
  std::atomic<int> read_only_opens_{0};
};

// Permission check of `want` (MAY_* bits: 4 read, 2 write, 1 exec/search) against a stat.
Result<void> CheckPermission(const Creds& c, const struct stat& st, int want);

}  // namespace sentry::vfs
