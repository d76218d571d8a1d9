#include "vfs/file.h"

#include <poll.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "vfs/inotify.h"
#include "vfs/lock.h"
#include "vfs/tty.h"

namespace sentry::vfs {

FileDescription::~FileDescription() {
  if (!inode_) return;
  if (FileLocks* l = inode_->locks_if_any()) {
    l->ReleaseRecords(this);
    l->ReleaseFlock(this);
    l->ReleaseLease(this);
  }
  if (Writable()) inode_->write_opens().fetch_sub(1);
  if (!(flags() & O_PATH) && (flags() & O_ACCMODE) == O_RDONLY) {
    inode_->read_only_opens().fetch_sub(1);
  }
  bool last = inode_->open_files().fetch_sub(1) == 1;
  if (!InotifyActive()) return;
  if (!(flags() & O_PATH)) NotifyFile(*this, Writable() ? IN_CLOSE_WRITE : IN_CLOSE_NOWRITE);
  if (last) MaybeDeleteSelf(*inode_);
}

Result<size_t> FileDescription::Read(Blocker&, std::span<uint8_t>) { return Errno(EINVAL); }
Result<size_t> FileDescription::Write(Blocker&, std::span<const uint8_t>) {
  return Errno(EINVAL);
}
Result<size_t> FileDescription::PRead(Blocker&, std::span<uint8_t>, uint64_t) {
  return Errno(ESPIPE);
}
Result<size_t> FileDescription::PWrite(Blocker&, std::span<const uint8_t>, uint64_t) {
  return Errno(ESPIPE);
}
Result<uint64_t> FileDescription::Seek(int64_t, int) { return Errno(ESPIPE); }
Result<void> FileDescription::Stat(struct stat* st) {
  if (inode_) {
    *st = SENTRY_TRY(inode_->Stat());
    return Ok();
  }
  memset(st, 0, sizeof(*st));
  return Ok();
}
Result<uint64_t> FileDescription::Ioctl(Blocker&, uint64_t, uint64_t) { return Errno(ENOTTY); }

Result<std::string> ReadWhole(Inode& inode, size_t limit) {
  FileRef f = SENTRY_TRY(inode.Open(O_RDONLY));
  std::string out;
  std::vector<uint8_t> buf(std::min<size_t>(1 << 20, limit));
  NoWaitBlocker nb;
  while (out.size() < limit) {
    std::span<uint8_t> room(buf.data(), std::min(buf.size(), limit - out.size()));
    size_t n = SENTRY_TRY(f->PRead(nb, room, out.size()));
    if (n == 0) break;
    out.append(reinterpret_cast<const char*>(buf.data()), n);
  }
  return out;
}

Result<uint64_t> SeekOverHostFd(int host_fd, uint64_t* offset, int64_t off, int whence) {
  int64_t r;
  if (whence == SEEK_CUR) {
    r = static_cast<int64_t>(*offset) + off;
    if (r < 0) return Errno(EINVAL);
  } else {
    r = lseek(host_fd, off, whence);
    if (r < 0) return Errno(errno);
  }
  *offset = static_cast<uint64_t>(r);
  return *offset;
}

AsyncState& FileDescription::async() {
  absl::MutexLock l(&mu_);
  if (!async_) async_ = std::make_unique<AsyncState>();
  return *async_;
}

void FileDescription::StopAsync() {
  AsyncState* a;
  {
    absl::MutexLock l(&mu_);
    a = async_.get();
  }
  if (a != nullptr) a->Disable();
}

void FileDescription::SetStatusFlags(int flags) {
  constexpr int kSettable = O_APPEND | O_NONBLOCK | O_DIRECT | O_NOATIME;
  absl::MutexLock l(&mu_);
  flags_ = (flags_ & ~kSettable) | (flags & kSettable);
}

void FileDescription::SetAsyncFlag(bool on) {
  absl::MutexLock l(&mu_);
  flags_ = on ? flags_ | O_ASYNC : flags_ & ~O_ASYNC;
}

namespace {

// Character devices of /dev that need no host resource (getrandom serves urandom).
class DeviceFile final : public FileDescription {
 public:
  enum class Kind { kNull, kZero, kFull, kRandom };
  DeviceFile(Kind kind, int flags, std::string name, dev_t rdev)
      : FileDescription(flags), kind_(kind), name_(std::move(name)), rdev_(rdev) {}

  Result<size_t> Read(Blocker&, std::span<uint8_t> dst) override {
    switch (kind_) {
      case Kind::kNull:
        return size_t{0};
      case Kind::kZero:
      case Kind::kFull:
        memset(dst.data(), 0, dst.size());
        return dst.size();
      case Kind::kRandom: {
        size_t done = 0;
        while (done < dst.size()) {
          ssize_t n = getrandom(dst.data() + done, dst.size() - done, 0);
          if (n <= 0) break;
          done += n;
        }
        return done;
      }
    }
    return size_t{0};
  }
  Result<size_t> Write(Blocker&, std::span<const uint8_t> src) override {
    if (kind_ == Kind::kFull) return Errno(ENOSPC);
    return src.size();
  }
  Result<size_t> PRead(Blocker& b, std::span<uint8_t> dst, uint64_t) override {
    return Read(b, dst);
  }
  Result<size_t> PWrite(Blocker& b, std::span<const uint8_t> src, uint64_t) override {
    return Write(b, src);
  }
  Result<uint64_t> Seek(int64_t, int) override { return uint64_t{0}; }
  Result<void> Stat(struct stat* st) override {
    if (inode()) return FileDescription::Stat(st);
    memset(st, 0, sizeof(*st));
    st->st_mode = S_IFCHR | 0666;
    st->st_rdev = rdev_;
    st->st_dev = 5;
    st->st_ino = rdev_;
    st->st_nlink = 1;
    st->st_blksize = 4096;
    return Ok();
  }
  std::string Name() const override { return name_; }

 private:
  Kind kind_;
  std::string name_;
  dev_t rdev_;
};

// A host fd the sandbox was handed (sentry-run's stdio). Reads wait for readiness with the
// blocker so a signal can interrupt them.
class HostStreamFile final : public FileDescription {
 public:
  HostStreamFile(int fd, int flags, std::string name)
      : FileDescription(flags), fd_(fd), name_(std::move(name)) {}
  ~HostStreamFile() override { close(fd_); }

  Result<size_t> Read(Blocker& b, std::span<uint8_t> dst) override {
    if (dst.empty()) return size_t{0};
    for (;;) {
      if (!NonBlocking()) SENTRY_TRY(b.WaitHostFd(fd_, POLLIN));
      struct pollfd p = {fd_, POLLIN, 0};
      if (poll(&p, 1, 0) == 0) {
        if (NonBlocking()) return Errno(EAGAIN);
        continue;
      }
      ssize_t n = read(fd_, dst.data(), dst.size());
      if (n >= 0) return static_cast<size_t>(n);
      if (errno != EAGAIN && errno != EINTR) return Errno(errno);
      if (NonBlocking()) return Errno(EAGAIN);
    }
  }
  Result<size_t> Write(Blocker& b, std::span<const uint8_t> src) override {
    size_t done = 0;
    while (done < src.size()) {
      ssize_t n = write(fd_, src.data() + done, src.size() - done);
      if (n > 0) {
        done += n;
        continue;
      }
      if (n < 0 && errno == EAGAIN) {
        if (NonBlocking()) return done ? Result<size_t>(done) : Errno(EAGAIN);
        auto w = b.WaitHostFd(fd_, POLLOUT);
        if (!w.ok()) return done ? Result<size_t>(done) : w.error();
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (done) return done;
      return Errno(n < 0 ? errno : EIO);
    }
    return done;
  }
  Result<uint64_t> Seek(int64_t off, int whence) override {
    off_t r = lseek(fd_, off, whence);
    if (r < 0) return Errno(errno);
    return static_cast<uint64_t>(r);
  }
  EventMask Readiness(EventMask mask) override {
    struct pollfd p = {fd_, static_cast<short>(mask & 0xffff), 0};
    if (poll(&p, 1, 0) <= 0) return 0;
    return p.revents;
  }
  Result<void> Stat(struct stat* st) override {
    if (fstat(fd_, st) != 0) return Errno(errno);
    return Ok();
  }
  Result<uint64_t> Ioctl(Blocker&, uint64_t cmd, uint64_t) override {
    // Terminal ioctls would change the caller's terminal; only answer "is it a tty?" later.
    (void)cmd;
    return Errno(ENOTTY);
  }
  int HostFd() const override { return fd_; }
  std::string Name() const override { return name_; }

 private:
  int fd_;
  std::string name_;
};

}  // namespace

Result<FileRef> OpenDevice(dev_t rdev, int flags) {
  using K = DeviceFile::Kind;
  struct Known {
    dev_t rdev;
    K kind;
    const char* name;
  };
  static const Known kKnown[] = {
      {makedev(1, 3), K::kNull, "/dev/null"},     {makedev(1, 5), K::kZero, "/dev/zero"},
      {makedev(1, 7), K::kFull, "/dev/full"},     {makedev(1, 8), K::kRandom, "/dev/random"},
      {makedev(1, 9), K::kRandom, "/dev/urandom"},
  };
  for (const Known& k : kKnown) {
    if (k.rdev == rdev) return FileRef(std::make_shared<DeviceFile>(k.kind, flags, k.name, rdev));
  }
  if (rdev == makedev(5, 0)) return OpenControllingTty(flags);
  if (rdev == makedev(5, 2)) return OpenPtmx(flags);
  return Errno(ENXIO);
}

// A file opened with O_PATH: it names a place; every I/O fails with EBADF.
class PathFile final : public FileDescription {
 public:
  explicit PathFile(int flags) : FileDescription(flags) {}
  Result<size_t> Read(Blocker&, std::span<uint8_t>) override { return Errno(EBADF); }
  Result<size_t> Write(Blocker&, std::span<const uint8_t>) override { return Errno(EBADF); }
  Result<size_t> PRead(Blocker&, std::span<uint8_t>, uint64_t) override { return Errno(EBADF); }
  Result<size_t> PWrite(Blocker&, std::span<const uint8_t>, uint64_t) override {
    return Errno(EBADF);
  }
  Result<uint64_t> Seek(int64_t, int) override { return Errno(EBADF); }
  Result<uint64_t> Ioctl(Blocker&, uint64_t, uint64_t) override { return Errno(EBADF); }
  Result<size_t> GetDents(std::span<uint8_t>) override { return Errno(EBADF); }
};

FileRef NewPathFile(int flags) { return std::make_shared<PathFile>(flags); }

FileRef NewHostStreamFile(int host_fd, int flags, std::string name) {
  return std::make_shared<HostStreamFile>(host_fd, flags, std::move(name));
}

}  // namespace sentry::vfs
