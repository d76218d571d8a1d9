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

namespace sentry::vfs {

class FileDescription {
 public:
  explicit FileDescription(int flags) : flags_(flags) {}
  virtual ~FileDescription() = default;

  // Reads or writes at the file offset (for seekable files) and advances it.
  virtual Result<size_t> Read(Blocker& b, std::span<uint8_t> dst);
  virtual Result<size_t> Write(Blocker& b, std::span<const uint8_t> src);
  // Positional I/O; ESPIPE for files without offsets.
  virtual Result<size_t> PRead(Blocker& b, std::span<uint8_t> dst, uint64_t off);
  virtual Result<size_t> PWrite(Blocker& b, std::span<const uint8_t> src, uint64_t off);
  virtual Result<uint64_t> Seek(int64_t off, int whence);
  // Current readiness, as poll(2) events. Files that can block expose a queue to wait on.
  virtual EventMask Readiness(EventMask mask) { return mask & (kEventIn | kEventOut); }
  virtual WaitQueue* Queue() { return nullptr; }
  virtual Result<void> Stat(struct stat* st);
  virtual Result<uint64_t> Ioctl(Blocker& b, uint64_t cmd, uint64_t arg);
  // The host fd behind this file, if any (for mmap of files). -1 otherwise.
  virtual int HostFd() const { return -1; }
  virtual Result<size_t> GetDents(std::span<uint8_t> dst) {
    (void)dst;
    return Errno(ENOTDIR);
  }
  // A name for /proc/PID/fd and strace: "pipe:[7]", "/dev/null", "/etc/passwd".
  virtual std::string Name() const = 0;

  int flags() const {
    absl::MutexLock l(&mu_);
    return flags_;
  }
  // F_SETFL: only O_APPEND, O_NONBLOCK (and O_ASYNC, O_DIRECT, O_NOATIME) change.
  void SetStatusFlags(int flags);
  bool NonBlocking() const { return flags() & O_NONBLOCK; }
  bool Readable() const { return (flags() & O_ACCMODE) != O_WRONLY; }
  bool Writable() const { return (flags() & O_ACCMODE) != O_RDONLY; }

 protected:
  mutable absl::Mutex mu_;
  int flags_ ABSL_GUARDED_BY(mu_);
  uint64_t offset_ ABSL_GUARDED_BY(mu_) = 0;
};

using FileRef = std::shared_ptr<FileDescription>;

// Creates /dev/null, /dev/zero, /dev/full, /dev/urandom (and /dev/random) files.
Result<FileRef> OpenDevice(const std::string& name, int flags);
bool IsDevice(const std::string& name);

// A host fd wrapped as a file: the caller's stdin/stdout/stderr for sentry-run.
FileRef NewHostStreamFile(int host_fd, int flags, std::string name);

}  // namespace sentry::vfs
