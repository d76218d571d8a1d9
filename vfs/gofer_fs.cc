// Inodes backed by the gofer. Attributes are cached: every gofer mount is exclusive to its
// sandbox (the read-only root, or a bind the sandbox owns), so only our own changes move
// them, and each change refreshes or invalidates the cache. Data goes through host fds the
// gofer donated; only metadata crosses the socket.
#include "vfs/gofer_fs.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <array>

#include "vfs/file.h"
#include "vfs/mem_inode.h"

namespace sentry::vfs {

struct GoferSuper {
  std::shared_ptr<gofer::Client> client;
  dev_t dev;
  // The gofer refuses writes under this attach point. Open host fds are reused only here:
  // in a writable bind the host may replace a file while the sandbox runs (an editor's
  // atomic save in an agent's workspace), and the next open must see the new one.
  bool read_only = false;
};

namespace {

class GoferInode;

// A donated host fd, closed with its last user. A regular file's read-only fd is shared by
// every read-only open of it: the descriptions keep their own offsets (pread), so they
// need nothing of the fd but the file.
struct SharedHostFd {
  explicit SharedHostFd(int fd) : fd(fd) {}
  ~SharedHostFd() { close(fd); }
  SharedHostFd(const SharedHostFd&) = delete;
  SharedHostFd& operator=(const SharedHostFd&) = delete;
  const int fd;
};

// The read-only fds opened most recently stay open after their last close, so that a file
// opened again and again (ld.so.cache and libc.so.6 at every execve, headers, modules) costs
// no gofer round trip. A fixed number of host fds.
class RecentFds {
 public:
  void Keep(std::shared_ptr<SharedHostFd> fd) {
    absl::MutexLock l(&mu_);
    ring_[next_++ % ring_.size()] = std::move(fd);
  }

 private:
  absl::Mutex mu_;
  std::array<std::shared_ptr<SharedHostFd>, 128> ring_ ABSL_GUARDED_BY(mu_);
  size_t next_ ABSL_GUARDED_BY(mu_) = 0;
};

RecentFds& Recent() {
  static auto* r = new RecentFds;
  return *r;
}

// A regular file opened through the gofer: reads and writes go to the donated host fd.
class HostFileDescription final : public FileDescription {
 public:
  HostFileDescription(std::shared_ptr<SharedHostFd> fd, int flags, std::shared_ptr<GoferInode> ino);

  Result<size_t> Read(Blocker&, std::span<uint8_t> dst) override {
    if (!Readable()) return Errno(EBADF);
    absl::MutexLock l(&mu_);
    ssize_t n = pread(fd_, dst.data(), dst.size(), static_cast<off_t>(offset_));
    if (n < 0) return Errno(errno);
    offset_ += n;
    return static_cast<size_t>(n);
  }
  Result<size_t> Write(Blocker&, std::span<const uint8_t> src) override;
  Result<size_t> PRead(Blocker&, std::span<uint8_t> dst, uint64_t off) override {
    if (!Readable()) return Errno(EBADF);
    ssize_t n = pread(fd_, dst.data(), dst.size(), static_cast<off_t>(off));
    if (n < 0) return Errno(errno);
    return static_cast<size_t>(n);
  }
  Result<size_t> PWrite(Blocker&, std::span<const uint8_t> src, uint64_t off) override;
  Result<uint64_t> Seek(int64_t off, int whence) override {
    absl::MutexLock l(&mu_);
    int64_t r;
    if (whence == SEEK_CUR) {
      r = static_cast<int64_t>(offset_) + off;
      if (r < 0) return Errno(EINVAL);
    } else {
      r = lseek(fd_, off, whence);  // SET, END, DATA, HOLE against the host file
      if (r < 0) return Errno(errno);
    }
    offset_ = static_cast<uint64_t>(r);
    return offset_;
  }
  Result<void> Stat(struct stat* st) override;
  Result<uint64_t> Ioctl(Blocker&, uint64_t cmd, uint64_t) override {
    if (cmd != FIONREAD) return Errno(ENOTTY);
    struct stat st;
    if (fstat(fd_, &st) != 0) return Errno(errno);
    absl::MutexLock l(&mu_);
    return static_cast<uint64_t>(st.st_size) > offset_ ? st.st_size - offset_ : 0;
  }
  Result<void> Allocate(int mode, uint64_t off, uint64_t len) override;
  Result<void> Sync(bool data_only) override {
    if ((data_only ? fdatasync(fd_) : fsync(fd_)) != 0) return Errno(errno);
    return Ok();
  }
  int HostFd() const override { return fd_; }

 private:
  const std::shared_ptr<SharedHostFd> host_fd_;
  const int fd_;  // host_fd_->fd
  std::shared_ptr<GoferInode> ino_;
};

class GoferInode final : public Inode {
 public:
  GoferInode(std::shared_ptr<GoferSuper> sb, gofer::Node node)
      : sb_(std::move(sb)), h_(node.handle), type_(node.st.st_mode & S_IFMT) {
    SetCached(node.st);
  }
  ~GoferInode() override { sb_->client->Close(h_); }

  uint32_t Type() const override { return type_; }
  Result<struct stat> Stat() override {
    {
      absl::MutexLock l(&mu_);
      if (valid_) return st_;
    }
    struct stat st = SENTRY_TRY(sb_->client->Stat(h_));
    SetCached(st);
    absl::MutexLock l(&mu_);
    return st_;
  }
  void Invalidate() {
    absl::MutexLock l(&mu_);
    valid_ = false;
  }

  dev_t dev() const { return sb_->dev; }

  Result<void> SetAttr(const SetAttrRequest& r) override {
    gofer::SetAttrRequest g;
    g.mask = r.mask;  // the AttrMask and gofer::SetAttrMask bits agree
    g.mode = r.mode;
    g.uid = r.uid;
    g.gid = r.gid;
    g.size = r.size;
    g.atime = r.atime;
    g.mtime = r.mtime;
    SetCached(SENTRY_TRY(sb_->client->SetAttr(h_, g)));
    return Ok();
  }

  // Absent names are not remembered: the host may create files in a bind mount while the
  // sandbox runs (an agent's workspace), and the guest must then see them.
  Result<InodeRef> Lookup(const std::string& name) override {
    return Wrap(SENTRY_TRY(sb_->client->Walk(h_, name)));
  }
  Result<InodeRef> LookupForRead(const std::string& name) override {
    if (!sb_->read_only) return Lookup(name);  // the fd would be shared (Open)
    auto [node, fd] = SENTRY_TRY(sb_->client->WalkOpen(h_, name));
    auto ino = std::make_shared<GoferInode>(sb_, node);
    if (fd >= 0) ino->ShareReadFd(std::make_shared<SharedHostFd>(fd));
    return InodeRef(ino);
  }
  Result<std::vector<DirEntry>> ReadDir() override {
    auto entries = SENTRY_TRY(sb_->client->ReadDir(h_));
    std::vector<DirEntry> out;
    out.reserve(entries.size());
    for (auto& e : entries) out.push_back({std::move(e.name), e.ino, e.type});
    return out;
  }
  Result<InodeRef> Mknod(const std::string& name, uint32_t mode, dev_t rdev,
                         const Creds& c) override {
    Invalidate();
    if (S_ISREG(mode)) {
      auto [node, fd] = SENTRY_TRY(sb_->client->Create(h_, name, O_RDWR, mode & 07777, c.uid,
                                                       c.gid));
      auto ino = std::make_shared<GoferInode>(sb_, node);
      ino->StashFd(fd);
      return InodeRef(ino);
    }
    if (rdev != 0) return Errno(EPERM);
    return Wrap(SENTRY_TRY(sb_->client->Mknod(h_, name, mode, c.uid, c.gid)));
  }
  Result<InodeRef> Mkdir(const std::string& name, uint32_t mode, const Creds& c) override {
    Invalidate();
    return Wrap(SENTRY_TRY(sb_->client->Mkdir(h_, name, mode, c.uid, c.gid)));
  }
  Result<InodeRef> Symlink(const std::string& name, const std::string& target,
                           const Creds& c) override {
    Invalidate();
    return Wrap(SENTRY_TRY(sb_->client->Symlink(h_, name, target, c.uid, c.gid)));
  }
  Result<void> Link(const std::string& name, const InodeRef& target) override {
    auto* t = dynamic_cast<GoferInode*>(target.get());
    if (!t || t->sb_ != sb_) return Errno(EXDEV);
    Invalidate();
    t->Invalidate();
    return sb_->client->Link(h_, name, t->h_);
  }
  Result<void> Unlink(const std::string& name, bool dir) override {
    Invalidate();
    return sb_->client->Unlink(h_, name, dir ? AT_REMOVEDIR : 0);
  }
  Result<void> Rename(const std::string& old_name, Inode& new_dir, const std::string& new_name,
                      unsigned flags) override {
    auto* nd = dynamic_cast<GoferInode*>(&new_dir);
    if (!nd || nd->sb_ != sb_) return Errno(EXDEV);
    Invalidate();
    nd->Invalidate();
    return sb_->client->Rename(h_, old_name, nd->h_, new_name, flags);
  }
  Result<std::string> ReadLink() override {
    absl::MutexLock l(&mu_);
    if (!link_target_.empty()) return link_target_;
    link_target_ = SENTRY_TRY(sb_->client->ReadLink(h_));
    return link_target_;
  }
  Result<FileRef> Open(int flags) override {
    if (type_ == S_IFCHR || type_ == S_IFBLK || type_ == S_IFSOCK) return Errno(ENXIO);
    auto self = std::static_pointer_cast<GoferInode>(shared_from_this());
    std::shared_ptr<SharedHostFd> fd;
    bool shareable = sb_->read_only && type_ == S_IFREG && (flags & O_ACCMODE) == O_RDONLY;
    if (shareable) fd = SharedReadFd();
    if (!fd) {
      int host_fd = TakeStashedFd();
      if (host_fd < 0) {
        host_fd = SENTRY_TRY(sb_->client->Open(h_, flags & (O_ACCMODE | O_APPEND)));
      } else if (flags & O_APPEND) {
        fcntl(host_fd, F_SETFL, O_APPEND);
      }
      fd = std::make_shared<SharedHostFd>(host_fd);
      if (shareable) ShareReadFd(fd);
    }
    return FileRef(std::make_shared<HostFileDescription>(std::move(fd), flags, std::move(self)));
  }
  Result<struct statfs> StatFs() override { return sb_->client->StatFs(h_); }
  Result<std::string> GetXattr(const std::string& name) override {
    return sb_->client->GetXattr(h_, name);
  }
  Result<std::vector<std::string>> ListXattr() override { return sb_->client->ListXattr(h_); }
  Result<void> SetXattr(const std::string& name, const std::string& value, int flags) override {
    return sb_->client->SetXattr(h_, name, value, flags);
  }
  Result<void> RemoveXattr(const std::string& name) override {
    return sb_->client->RemoveXattr(h_, name);
  }

 private:
  InodeRef Wrap(const gofer::Node& n) { return std::make_shared<GoferInode>(sb_, n); }
  std::shared_ptr<SharedHostFd> SharedReadFd() {
    absl::MutexLock l(&mu_);
    return read_fd_.lock();
  }
  void ShareReadFd(const std::shared_ptr<SharedHostFd>& fd) {
    {
      absl::MutexLock l(&mu_);
      read_fd_ = fd;
    }
    Recent().Keep(fd);
  }
  void SetCached(const struct stat& st) {
    absl::MutexLock l(&mu_);
    st_ = st;
    st_.st_dev = sb_->dev;
    valid_ = true;
  }
  // The fd Create returned, kept for the open that follows the create.
  void StashFd(int fd) {
    absl::MutexLock l(&mu_);
    stashed_fd_ = fd;
  }
  int TakeStashedFd() {
    absl::MutexLock l(&mu_);
    return std::exchange(stashed_fd_, -1);
  }

  const std::shared_ptr<GoferSuper> sb_;
  const gofer::Handle h_;
  const uint32_t type_;
  absl::Mutex mu_;
  struct stat st_ ABSL_GUARDED_BY(mu_) {};
  bool valid_ ABSL_GUARDED_BY(mu_) = false;
  std::string link_target_ ABSL_GUARDED_BY(mu_);
  int stashed_fd_ ABSL_GUARDED_BY(mu_) = -1;
  std::weak_ptr<SharedHostFd> read_fd_ ABSL_GUARDED_BY(mu_);  // shared by read-only opens
};

HostFileDescription::HostFileDescription(std::shared_ptr<SharedHostFd> fd, int flags,
                                         std::shared_ptr<GoferInode> ino)
    : FileDescription(flags), host_fd_(std::move(fd)), fd_(host_fd_->fd), ino_(std::move(ino)) {}

Result<size_t> HostFileDescription::Write(Blocker&, std::span<const uint8_t> src) {
  if (!Writable()) return Errno(EBADF);
  absl::MutexLock l(&mu_);
  ssize_t n;
  if (flags_ & O_APPEND) {
    n = write(fd_, src.data(), src.size());  // the host fd has O_APPEND too
    if (n >= 0) offset_ = static_cast<uint64_t>(lseek(fd_, 0, SEEK_CUR));
  } else {
    n = pwrite(fd_, src.data(), src.size(), static_cast<off_t>(offset_));
    if (n >= 0) offset_ += n;
  }
  ino_->Invalidate();
  if (n < 0) return Errno(errno);
  return static_cast<size_t>(n);
}

Result<size_t> HostFileDescription::PWrite(Blocker&, std::span<const uint8_t> src,
                                           uint64_t off) {
  if (!Writable()) return Errno(EBADF);
  ssize_t n = pwrite(fd_, src.data(), src.size(), static_cast<off_t>(off));
  ino_->Invalidate();
  if (n < 0) return Errno(errno);
  return static_cast<size_t>(n);
}

// From the open file itself: current even if another fd wrote, and still answering after
// the file's name is gone (the gofer's handle then fails with ENOENT).
Result<void> HostFileDescription::Stat(struct stat* st) {
  if (fstat(fd_, st) != 0) return Errno(errno);
  st->st_dev = ino_->dev();
  // Opened through another file system's inode (the overlay root's): the identity a stat of
  // the path reports, or cp and install take the file for replaced while they copy it.
  if (inode() && inode().get() != ino_.get()) {
    struct stat outer = SENTRY_TRY(inode()->Stat());
    st->st_dev = outer.st_dev;
    st->st_ino = outer.st_ino;
  }
  return Ok();
}

Result<void> HostFileDescription::Allocate(int mode, uint64_t off, uint64_t len) {
  if (!Writable()) return Errno(EBADF);
  if (fallocate(fd_, mode, static_cast<off_t>(off), static_cast<off_t>(len)) != 0) {
    return Errno(errno);
  }
  ino_->Invalidate();
  return Ok();
}

std::atomic<uint32_t> g_next_gofer_minor{1};

}  // namespace

Result<InodeRef> NewGoferRoot(std::shared_ptr<gofer::Client> client, const std::string& attach,
                              bool* read_only) {
  auto sb = std::make_shared<GoferSuper>();
  sb->client = std::move(client);
  sb->dev = makedev(0, 50 + g_next_gofer_minor.fetch_add(1));
  gofer::Node root = SENTRY_TRY(sb->client->Attach(attach, read_only));
  sb->read_only = *read_only;
  if (!S_ISDIR(root.st.st_mode)) return Errno(ENOTDIR);
  return InodeRef(std::make_shared<GoferInode>(std::move(sb), root));
}

}  // namespace sentry::vfs
