// Open files. A FileDescription is what an fd points at: an offset, status flags and the
// operations of whatever it is (pipe end, device, host file). vfs/ does not know about tasks:
// blocking goes through the Blocker interface of sentry/base.
//
// Lock order: FdTable::mu_ -> FileDescription::mu_ -> (pipe) Pipe::mu_ -> WaitQueue::mu_.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "absl/synchronization/mutex.h"
#include "sentry/base/errno.h"
#include "sentry/base/wait_queue.h"
#include "vfs/async.h"
#include "vfs/inode.h"

namespace sentry::vfs {

class Dentry;
class Mount;

class FileDescription {
 public:
  explicit FileDescription(int flags) : flags_(flags) {}
  // Drops the OFD and flock locks this open file held; reports the close to inotify.
  virtual ~FileDescription();

  // Reads or writes at the file offset (for seekable files) and advances it.
  virtual Result<size_t> Read(Blocker& b, std::span<uint8_t> dst);
  virtual Result<size_t> Write(Blocker& b, std::span<const uint8_t> src);
  // Positional I/O; ESPIPE for files without offsets.
  virtual Result<size_t> PRead(Blocker& b, std::span<uint8_t> dst, uint64_t off);
  virtual Result<size_t> PWrite(Blocker& b, std::span<const uint8_t> src, uint64_t off);
  virtual Result<uint64_t> Seek(int64_t off, int whence);
  // Current readiness, as poll(2) events. Files that can block expose a queue to wait on.
  virtual EventMask Readiness(EventMask mask) {
    return mask & (kEventIn | kEventOut | kEventRdNorm | kEventWrNorm);
  }
  virtual WaitQueue* Queue() { return nullptr; }
  // Defaults to the inode's attributes (or zeros for anonymous files).
  virtual Result<void> Stat(struct stat* st);
  virtual Result<uint64_t> Ioctl(Blocker& b, uint64_t cmd, uint64_t arg);
  // fallocate(2); fsync(2) (data_only for fdatasync).
  virtual Result<void> Allocate(int mode, uint64_t off, uint64_t len) {
    (void)mode, (void)off, (void)len;
    return Errno(ENODEV);
  }
  virtual Result<void> Sync(bool data_only) {
    (void)data_only;
    return Ok();
  }
  // The host fd behind this file, if any, for as long as the file is open. -1 otherwise.
  virtual int HostFd() const { return -1; }
  // The host fd behind this file (for mmap), and what keeps it open while held: files whose
  // host fd may be closed between uses (host_fd_cache.h) lend it only this way.
  struct HostFdHold {
    int fd = -1;
    std::shared_ptr<void> keep;
  };
  virtual HostFdHold HoldHostFd() { return {HostFd(), nullptr}; }
  virtual Result<size_t> GetDents(std::span<uint8_t> dst) {
    (void)dst;
    return Errno(ENOTDIR);
  }
  // A name for /proc/PID/fd and strace: "pipe:[7]", "/dev/null", "/etc/passwd". Files
  // opened by path get their path from the VFS (see Vfs::PathString) and return "" here.
  virtual std::string Name() const { return ""; }
  // Opening this file again through a magic link (/proc/PID/fd/N) when it has no place to
  // open by path: a new open file of the same object with `flags`, or null when the walk
  // yields this very open file (a pipe, for now).
  virtual Result<FileRef> Reopen(int flags) {
    (void)flags;
    return FileRef();
  }

  // Signal-driven I/O (vfs/async.h). Files with a fasync operation on Linux (pipes, FIFOs,
  // ttys, inotify, sockets) return true and notify Queue() when they become ready; O_ASYNC
  // then makes those notifications signals to the F_SETOWN owner. Other files keep the flag
  // and owner but never signal, as Linux.
  virtual bool SignalsAsync() const { return false; }
  // True for a file whose Queue() also carries another file's events (a pty's two ends):
  // notifications are then checked against Readiness() before they become signals.
  virtual bool AsyncChecksReadiness() const { return false; }
  // The owner, signal and O_ASYNC watch; created on first use, lives as long as the file.
  AsyncState& async();
  // Stops the O_ASYNC watch: a file whose destructor notifies its queue (a pipe end going
  // away) calls this first, so that it does not signal about its own close.
  void StopAsync();

  // Where the file was opened (null for pipes and other anonymous files). Set once by the
  // VFS right after Inode::Open.
  void set_location(std::shared_ptr<Mount> mnt, std::shared_ptr<Dentry> d, InodeRef inode) {
    mnt_ = std::move(mnt);
    dentry_ = std::move(d);
    inode_ = std::move(inode);
    if (!inode_) return;
    inode_->open_files().fetch_add(1);
    if (Writable()) inode_->write_opens().fetch_add(1);
    if (!(flags() & O_PATH) && (flags() & O_ACCMODE) == O_RDONLY) {
      inode_->read_only_opens().fetch_add(1);
    }
  }
  const std::shared_ptr<Mount>& mount() const { return mnt_; }
  const std::shared_ptr<Dentry>& dentry() const { return dentry_; }
  const InodeRef& inode() const { return inode_; }

  int flags() const {
    absl::MutexLock l(&mu_);
    return flags_;
  }
  // F_SETFL: only O_APPEND, O_NONBLOCK, O_DIRECT and O_NOATIME change. O_ASYNC follows the
  // O_ASYNC watch (vfs/async.h) and changes with SetAsyncFlag.
  void SetStatusFlags(int flags);
  void SetAsyncFlag(bool on);
  bool NonBlocking() const { return flags() & O_NONBLOCK; }
  // Access mode 3 (O_RDWR|O_WRONLY) is neither readable nor writable, as on Linux.
  bool Readable() const {
    int acc = flags() & O_ACCMODE;
    return acc == O_RDONLY || acc == O_RDWR;
  }
  bool Writable() const {
    int acc = flags() & O_ACCMODE;
    return acc == O_WRONLY || acc == O_RDWR;
  }

 protected:
  mutable absl::Mutex mu_;
  int flags_ ABSL_GUARDED_BY(mu_);
  uint64_t offset_ ABSL_GUARDED_BY(mu_) = 0;

 private:
  std::shared_ptr<Mount> mnt_;
  std::shared_ptr<Dentry> dentry_;
  InodeRef inode_;
  std::unique_ptr<AsyncState> async_ ABSL_GUARDED_BY(mu_);
};

using FileRef = std::shared_ptr<FileDescription>;

// lseek(2) of a file whose offset the Sentry keeps (`*offset`, guarded by the caller) over
// host regular file `host_fd`: SEEK_CUR moves the offset alone (`host_fd` may then be -1);
// SEEK_SET, SEEK_END, SEEK_DATA and SEEK_HOLE ask the host file.
Result<uint64_t> SeekOverHostFd(int host_fd, uint64_t* offset, int64_t off, int whence);

// The content of regular file `inode`, its first `limit` bytes at most, read by the Sentry
// itself (no permission check, never waiting): for set-up and review code, not for a guest.
Result<std::string> ReadWhole(Inode& inode, size_t limit = SIZE_MAX);

// Opens the character device `rdev` (null, zero, full, random, urandom). ENXIO otherwise.
Result<FileRef> OpenDevice(dev_t rdev, int flags);

// An O_PATH file: no I/O, only a place for *at() calls, fstat and fchdir.
FileRef NewPathFile(int flags);

// A directory opened for reading: getdents64 over Inode::ReadDir, "." and ".." first.
FileRef NewDirFile(int flags, InodeRef dir, uint64_t parent_ino);

// A host fd wrapped as a file: the caller's stdin/stdout/stderr for sentry-run.
FileRef NewHostStreamFile(int host_fd, int flags, std::string name);

}  // namespace sentry::vfs
