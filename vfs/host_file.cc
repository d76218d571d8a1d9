#include "vfs/host_file.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vfs/file.h"

namespace sentry::vfs {
namespace {

class HostFileInode final : public Inode {
 public:
  HostFileInode(int fd, bool read_only) : fd_(fd), read_only_(read_only) {}
  ~HostFileInode() override { close(fd_); }

  uint32_t Type() const override { return S_IFREG; }
  Result<struct stat> Stat() override {
    struct stat st;
    if (fstat(fd_, &st) != 0) return Errno(errno);
    return st;
  }
  Result<void> SetAttr(const SetAttrRequest& req) override {
    if (req.mask & ~kAttrSize) return Errno(EPERM);
    if (read_only_) return Errno(EROFS);
    if (ftruncate(fd_, static_cast<off_t>(req.size)) != 0) return Errno(errno);
    return Ok();
  }
  Result<FileRef> Open(int flags) override;

  int fd() const { return fd_; }
  bool read_only() const { return read_only_; }

 private:
  const int fd_;
  const bool read_only_;
};

// An open file of it: its own offset over the inode's one host fd (positional I/O only).
class HostFile final : public FileDescription {
 public:
  HostFile(std::shared_ptr<HostFileInode> ino, int flags)
      : FileDescription(flags), ino_(std::move(ino)) {}

  Result<size_t> Read(Blocker&, std::span<uint8_t> dst) override {
    if (!Readable()) return Errno(EBADF);
    absl::MutexLock l(&mu_);
    size_t n = SENTRY_TRY(ReadAt(dst, offset_));
    offset_ += n;
    return n;
  }
  Result<size_t> PRead(Blocker&, std::span<uint8_t> dst, uint64_t off) override {
    if (!Readable()) return Errno(EBADF);
    return ReadAt(dst, off);
  }
  Result<size_t> Write(Blocker&, std::span<const uint8_t> src) override {
    if (!Writable()) return Errno(EBADF);
    absl::MutexLock l(&mu_);
    uint64_t at = offset_;
    if (flags_ & O_APPEND) at = static_cast<uint64_t>(SENTRY_TRY(ino_->Stat()).st_size);
    size_t n = SENTRY_TRY(WriteAt(src, at));
    offset_ = at + n;
    return n;
  }
  Result<size_t> PWrite(Blocker&, std::span<const uint8_t> src, uint64_t off) override {
    // pwrite(2) on an O_APPEND file appends, as on Linux.
    if (!Writable()) return Errno(EBADF);
    if (flags() & O_APPEND) off = static_cast<uint64_t>(SENTRY_TRY(ino_->Stat()).st_size);
    return WriteAt(src, off);
  }
  Result<uint64_t> Seek(int64_t off, int whence) override {
    absl::MutexLock l(&mu_);
    return SeekOverHostFd(ino_->fd(), &offset_, off, whence);
  }
  Result<void> Allocate(int mode, uint64_t off, uint64_t len) override {
    if (!Writable()) return Errno(EBADF);
    if (fallocate(ino_->fd(), mode, static_cast<off_t>(off), static_cast<off_t>(len)) != 0) {
      return Errno(errno);
    }
    return Ok();
  }
  Result<void> Sync(bool) override {
    if (fsync(ino_->fd()) != 0) return Errno(errno);
    return Ok();
  }
  Result<uint64_t> Ioctl(Blocker&, uint64_t cmd, uint64_t) override {
    if (cmd != FIONREAD) return Errno(ENOTTY);
    uint64_t size = static_cast<uint64_t>(SENTRY_TRY(ino_->Stat()).st_size);
    absl::MutexLock l(&mu_);
    return size > offset_ ? size - offset_ : 0;
  }
  // For mmap: the host file itself, so a shared mapping shares the host's pages.
  int HostFd() const override { return ino_->fd(); }

 private:
  // The callers have checked the access mode (Readable/Writable take mu_).
  Result<size_t> ReadAt(std::span<uint8_t> dst, uint64_t off) {
    ssize_t n = pread(ino_->fd(), dst.data(), dst.size(), static_cast<off_t>(off));
    if (n < 0) return Errno(errno);
    return static_cast<size_t>(n);
  }
  Result<size_t> WriteAt(std::span<const uint8_t> src, uint64_t off) {
    if (ino_->read_only()) return Errno(EROFS);
    ssize_t n = pwrite(ino_->fd(), src.data(), src.size(), static_cast<off_t>(off));
    if (n < 0) return Errno(errno);
    return static_cast<size_t>(n);
  }

  const std::shared_ptr<HostFileInode> ino_;
};

Result<FileRef> HostFileInode::Open(int flags) {
  if (read_only_ && (flags & O_ACCMODE) != O_RDONLY) return Errno(EROFS);
  return FileRef(std::make_shared<HostFile>(
      std::static_pointer_cast<HostFileInode>(shared_from_this()), flags));
}

}  // namespace

InodeRef NewHostFileInode(int fd, bool read_only) {
  return std::make_shared<HostFileInode>(fd, read_only);
}

}  // namespace sentry::vfs
