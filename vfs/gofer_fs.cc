// Inodes backed by the gofer. Data goes through host fds the gofer donated; only metadata
// crosses the socket (or, in direct mode, the in-process server).
//
// What is cached, and until when (docs/design-decisions.md, "File caches"):
//  - Under a read-only attach point (the default root, an image, a :ro bind), which is taken
//    not to change while the sandbox runs: attributes, names (the VFS's dentries), absent
//    names and the lists of extended attributes, until the sandbox ends.
//  - Under a read-write bind, which the host may change at any time (an agent's workspace):
//    attributes, and with them the dentry that names the inode, for kRevalidateAfter. An
//    older entry is checked against the host on its next use (Valid, Stat): gone, or another
//    file under the name, and the VFS looks the name up again. Opening a file refreshes its
//    attributes from the opened file. Absent names are never remembered, and directories are
//    listed from the host every time, so a file the host creates appears at once.
// Our own changes refresh or invalidate the cache in both cases.
#include "vfs/gofer_fs.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <ctime>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_set>

#include "vfs/file.h"
#include "vfs/host_fd_cache.h"
#include "vfs/mem_inode.h"

namespace sentry::vfs {

struct GoferSuper {
  std::shared_ptr<gofer::Client> client;
  dev_t dev;
  // The gofer refuses writes under this attach point. Open host fds are reused only here:
  // in a writable bind the host may replace a file while the sandbox runs (an editor's
  // atomic save in an agent's workspace), and the next open must see the new one.
  bool read_only = false;

  // What the host answers for an extended attribute a file does not have, learned once per
  // (host device, the name's namespace, whether the file is a regular file or directory):
  // ENODATA where the file system supports the namespace, EOPNOTSUPP where it does not. With
  // a file's list of names (GoferInode::XattrListed) it answers `ls -la`'s two questions per
  // file (an ACL, a security label) without a host call.
  using AbsentKey = std::tuple<dev_t, std::string, bool>;
  std::optional<int> AbsentXattrErrno(const AbsentKey& k) {
    absl::MutexLock l(&mu);
    auto it = absent_xattr.find(k);
    if (it == absent_xattr.end()) return std::nullopt;
    return it->second;
  }
  void LearnAbsentXattr(const AbsentKey& k, int err) {
    absl::MutexLock l(&mu);
    if (absent_xattr.size() < 1024) absent_xattr.emplace(k, err);
  }
  absl::Mutex mu;
  std::map<AbsentKey, int> absent_xattr ABSL_GUARDED_BY(mu);
};

// How long an inode's attributes under a read-write bind are trusted before the next use
// asks the host again (FUSE's default attr_timeout and entry_timeout, 1 s, for the same
// reason: a metadata walk gets the cache, an edit on the host shows within a second).
constexpr int64_t kRevalidateAfterNs = 1'000'000'000;

int64_t MonotonicNs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);  // the vDSO's: no system call
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

namespace {

class GoferInode;

// A regular file opened through the gofer: reads and writes go to the donated host fd, which
// the fd cache may close between operations (host_fd_cache.h). A regular file's read-only
// fd on a read-only attach point is shared by every read-only open of it: the descriptions
// keep their own offsets (pread), so they need nothing of the fd but the file.
class HostFileDescription final : public FileDescription {
 public:
  HostFileDescription(std::shared_ptr<ReopenableFd> fd, int flags, std::shared_ptr<GoferInode> ino);

  Result<size_t> Read(Blocker&, std::span<uint8_t> dst) override {
    if (!Readable()) return Errno(EBADF);
    auto hold = SENTRY_TRY(fd_->Get());
    absl::MutexLock l(&mu_);
    ssize_t n = pread(hold->fd, dst.data(), dst.size(), static_cast<off_t>(offset_));
    if (n < 0) return Errno(errno);
    offset_ += n;
    return static_cast<size_t>(n);
  }
  Result<size_t> Write(Blocker&, std::span<const uint8_t> src) override;
  Result<size_t> PRead(Blocker&, std::span<uint8_t> dst, uint64_t off) override {
    if (!Readable()) return Errno(EBADF);
    auto hold = SENTRY_TRY(fd_->Get());
    ssize_t n = pread(hold->fd, dst.data(), dst.size(), static_cast<off_t>(off));
    if (n < 0) return Errno(errno);
    return static_cast<size_t>(n);
  }
  Result<size_t> PWrite(Blocker&, std::span<const uint8_t> src, uint64_t off) override;
  Result<uint64_t> Seek(int64_t off, int whence) override {
    std::shared_ptr<SharedHostFd> hold;
    if (whence != SEEK_CUR) hold = SENTRY_TRY(fd_->Get());
    absl::MutexLock l(&mu_);
    return SeekOverHostFd(hold ? hold->fd : -1, &offset_, off, whence);
  }
  Result<void> Stat(struct stat* st) override;
  Result<uint64_t> Ioctl(Blocker&, uint64_t cmd, uint64_t) override {
    if (cmd != FIONREAD) return Errno(ENOTTY);
    auto hold = SENTRY_TRY(fd_->Get());
    struct stat st;
    if (fstat(hold->fd, &st) != 0) return Errno(errno);
    absl::MutexLock l(&mu_);
    return static_cast<uint64_t>(st.st_size) > offset_ ? st.st_size - offset_ : 0;
  }
  Result<void> Allocate(int mode, uint64_t off, uint64_t len) override;
  // fdatasync too is an fsync on the host: it gives the guest at least what it asked for,
  // and keeps fdatasync off the Sentry's allowlist (runtime-shim/confine.cc).
  Result<void> Sync(bool /*data_only*/) override {
    auto hold = SENTRY_TRY(fd_->Get());
    if (fsync(hold->fd) != 0) return Errno(errno);
    return Ok();
  }
  // Only a pinned fd (a FIFO's) stays the same; others are lent with HoldHostFd.
  int HostFd() const override { return pinned_fd_; }
  HostFdHold HoldHostFd() override {
    auto hold = fd_->Get();
    if (!hold.ok()) return {};
    return {(*hold)->fd, *hold};
  }

 private:
  const std::shared_ptr<ReopenableFd> fd_;
  int pinned_fd_ = -1;
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
      if (FreshLocked()) return st_;
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
  // The dentry cache's question, on every walk through a cached name. Under a read-write
  // bind, once the attributes are older than kRevalidateAfterNs: whether the name still
  // names this file (a handle names its file by name, so a host's rename over it or removal
  // shows here as another inode number or type, or an error; a removed directory, which its
  // handle holds open, as no links).
  bool Valid() override {
    if (sb_->read_only) return true;
    ino_t ino;
    {
      absl::MutexLock l(&mu_);
      if (FreshLocked()) return true;
      ino = st_.st_ino;
    }
    Result<struct stat> st = sb_->client->Stat(h_);
    if (!st.ok() || (st->st_mode & S_IFMT) != type_ || st->st_ino != ino ||
        (S_ISDIR(type_) && st->st_nlink == 0)) {
      return false;
    }
    SetCached(*st);
    return true;
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

  // Absent names are remembered only under a read-only attach point (the default root, an
  // image, a :ro bind), which, like the shared read fds, is taken not to change while the
  // sandbox runs: a dynamic loader's library search and python's imports ask for the same
  // missing names again and again. In a writable bind the host may create files while the
  // sandbox runs (an agent's workspace), and the guest must then see them.
  Result<InodeRef> Lookup(const std::string& name) override {
    if (KnownAbsent(name)) return Errno(ENOENT);
    return Wrap(SENTRY_TRY(NoteAbsent(name, sb_->client->Walk(h_, name))));
  }
  Result<InodeRef> LookupForRead(const std::string& name) override {
    if (!sb_->read_only) return Lookup(name);  // the fd would be shared (Open)
    if (KnownAbsent(name)) return Errno(ENOENT);
    auto [node, fd] = SENTRY_TRY(NoteAbsent(name, sb_->client->WalkOpen(h_, name)));
    auto ino = std::make_shared<GoferInode>(sb_, node);
    if (fd >= 0) ino->SharedReadFd(fd);
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
    std::shared_ptr<ReopenableFd> fd;
    bool shareable = sb_->read_only && type_ == S_IFREG && (flags & O_ACCMODE) == O_RDONLY;
    if (shareable) {
      fd = SharedReadFd(-1);
    } else {
      int host_fd = TakeStashedFd();
      if (host_fd >= 0 && (flags & O_APPEND)) fcntl(host_fd, F_SETFL, O_APPEND);
      fd = NewFd(flags & (O_ACCMODE | O_APPEND), host_fd);
    }
    // The open itself must reach the host now (permissions, EMFILE); later uses reopen.
    auto hold = SENTRY_TRY(fd->Get());
    if (!sb_->read_only) RefreshFrom(hold->fd);
    if (type_ == S_IFIFO) fd->Pin();  // a FIFO opened again is a new reader or writer
    return FileRef(std::make_shared<HostFileDescription>(std::move(fd), flags, std::move(self)));
  }
  // The gofer's handles name the file by its name, which is about to go: its open files
  // (through any inode of it) then keep their fds for good, as they could not be reopened.
  void Unlinking() override {
    if (type_ != S_IFREG) return;
    dev_t dev;
    ino_t ino;
    {
      absl::MutexLock l(&mu_);
      dev = host_dev_;
      ino = st_.st_ino;  // a handle's file keeps its inode number; no round trip
    }
    PinHostFile(dev, ino);
  }
  Result<struct statfs> StatFs() override { return sb_->client->StatFs(h_); }
  Result<std::string> GetXattr(const std::string& name) override {
    std::optional<bool> listed = XattrListed(name);
    if (!listed || *listed) return sb_->client->GetXattr(h_, name);
    // Absent: the host's answer for this kind of file and namespace, asked once.
    size_t dot = name.find('.');
    GoferSuper::AbsentKey key{HostDev(), name.substr(0, dot == std::string::npos ? 0 : dot + 1),
                              type_ == S_IFREG || type_ == S_IFDIR};
    if (std::optional<int> err = sb_->AbsentXattrErrno(key)) return Errno(*err);
    Result<std::string> r = sb_->client->GetXattr(h_, name);
    if (!r.ok() && (r.error().code() == ENODATA || r.error().code() == EOPNOTSUPP)) {
      sb_->LearnAbsentXattr(key, r.error().code());
    }
    return r;
  }
  Result<std::vector<std::string>> ListXattr() override {
    SENTRY_TRY(Stat());  // current attributes: the list is kept only while ctime is
    {
      absl::MutexLock l(&mu_);
      if (XattrsCurrentLocked()) return std::vector<std::string>(xattrs_->begin(), xattrs_->end());
    }
    std::vector<std::string> names = SENTRY_TRY(sb_->client->ListXattr(h_));
    KeepXattrs(names);
    return names;
  }
  Result<void> SetXattr(const std::string& name, const std::string& value, int flags) override {
    DropXattrs();
    return sb_->client->SetXattr(h_, name, value, flags);
  }
  Result<void> RemoveXattr(const std::string& name) override {
    DropXattrs();
    return sb_->client->RemoveXattr(h_, name);
  }

 private:
  // Bounds the absent names one directory remembers (a few hundred bytes each at most).
  static constexpr size_t kMaxAbsent = 4096;

  InodeRef Wrap(const gofer::Node& n) { return std::make_shared<GoferInode>(sb_, n); }

  // Whether the cached attributes may be used without asking the host.
  bool FreshLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return valid_ && (sb_->read_only || MonotonicNs() - stamp_ns_ < kRevalidateAfterNs);
  }
  dev_t HostDev() {
    absl::MutexLock l(&mu_);
    return host_dev_;
  }
  // After an open under a read-write bind: the attributes of the file just opened, which is
  // what the name names now.
  void RefreshFrom(int fd) {
    struct stat st;
    if (fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == type_) SetCached(st);
  }

  // Extended attributes. A file's list of names is kept while its ctime (which every change
  // of an extended attribute moves) stays what it was when listed; under a read-only attach
  // point that is until the sandbox ends. Whether `name` is among them; nullopt if the list
  // could not be had (then ask for the attribute itself).
  std::optional<bool> XattrListed(const std::string& name) {
    if (!Stat().ok()) return std::nullopt;
    {
      absl::MutexLock l(&mu_);
      if (XattrsCurrentLocked()) return xattrs_->count(name) != 0;
    }
    Result<std::vector<std::string>> names = sb_->client->ListXattr(h_);
    if (!names.ok()) return std::nullopt;
    KeepXattrs(*names);
    return std::find(names->begin(), names->end(), name) != names->end();
  }
  bool XattrsCurrentLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return xattrs_ && valid_ && xattrs_ctime_.tv_sec == st_.st_ctim.tv_sec &&
           xattrs_ctime_.tv_nsec == st_.st_ctim.tv_nsec;
  }
  // Keeps `names`, listed after the attributes now cached were taken.
  void KeepXattrs(const std::vector<std::string>& names) {
    absl::MutexLock l(&mu_);
    if (!valid_) return;
    xattrs_ = std::make_unique<std::set<std::string>>(names.begin(), names.end());
    xattrs_ctime_ = st_.st_ctim;
  }
  void DropXattrs() {
    absl::MutexLock l(&mu_);
    xattrs_.reset();
    valid_ = false;  // the change moves ctime
  }
  bool KnownAbsent(const std::string& name) {
    if (!sb_->read_only) return false;
    absl::MutexLock l(&mu_);
    return absent_.count(name) != 0;
  }
  // Passes `r` on, remembering `name` as absent if `r` says so on a read-only attach point.
  template <typename T>
  Result<T> NoteAbsent(const std::string& name, Result<T> r) {
    if (!r.ok() && r.error().code() == ENOENT && sb_->read_only) {
      absl::MutexLock l(&mu_);
      if (absent_.size() < kMaxAbsent) absent_.insert(name);
    }
    return r;
  }
  // A reopenable fd of this file, opened with `flags`; `host_fd` >= 0 is one open already.
  std::shared_ptr<ReopenableFd> NewFd(int flags, int host_fd) {
    std::weak_ptr<GoferSuper> sb = sb_;
    gofer::Handle h = h_;
    return std::make_shared<ReopenableFd>(
        [sb, h, flags]() -> Result<int> {
          auto s = sb.lock();
          if (!s) return Errno(EBADF);
          return s->client->Open(h, flags);
        },
        host_fd);
  }
  // The read-only fd shared by read-only opens (made with `host_fd` if there is none yet).
  // The inode keeps it: the cache then keeps recently used files open between opens.
  std::shared_ptr<ReopenableFd> SharedReadFd(int host_fd) {
    absl::MutexLock l(&mu_);
    if (!read_fd_) {
      read_fd_ = NewFd(O_RDONLY, host_fd);
      // Into the cache now: an fd prefetched for an open that never comes (EACCES) must not
      // stay open outside it.
      if (host_fd >= 0) (void)read_fd_->Get();
    } else if (host_fd >= 0) {
      close(host_fd);
    }
    return read_fd_;
  }
  void SetCached(const struct stat& st) {
    absl::MutexLock l(&mu_);
    st_ = st;
    host_dev_ = st.st_dev;
    st_.st_dev = sb_->dev;
    valid_ = true;
    stamp_ns_ = sb_->read_only ? 0 : MonotonicNs();
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
  dev_t host_dev_ ABSL_GUARDED_BY(mu_) = 0;  // st_.st_dev is the sandbox's device number
  bool valid_ ABSL_GUARDED_BY(mu_) = false;
  int64_t stamp_ns_ ABSL_GUARDED_BY(mu_) = 0;  // when st_ was taken (read-write binds)
  std::unique_ptr<std::set<std::string>> xattrs_ ABSL_GUARDED_BY(mu_);  // XattrListed
  struct timespec xattrs_ctime_ ABSL_GUARDED_BY(mu_) {};
  std::unordered_set<std::string> absent_ ABSL_GUARDED_BY(mu_);  // read-only attach only
  std::string link_target_ ABSL_GUARDED_BY(mu_);
  int stashed_fd_ ABSL_GUARDED_BY(mu_) = -1;
  std::shared_ptr<ReopenableFd> read_fd_ ABSL_GUARDED_BY(mu_);  // shared by read-only opens
};

HostFileDescription::HostFileDescription(std::shared_ptr<ReopenableFd> fd, int flags,
                                         std::shared_ptr<GoferInode> ino)
    : FileDescription(flags), fd_(std::move(fd)), ino_(std::move(ino)) {
  if (ino_->Type() == S_IFIFO) {
    if (auto hold = fd_->Get(); hold.ok()) pinned_fd_ = (*hold)->fd;  // pinned: stays open
  }
}

Result<size_t> HostFileDescription::Write(Blocker&, std::span<const uint8_t> src) {
  if (!Writable()) return Errno(EBADF);
  auto hold = SENTRY_TRY(fd_->Get());
  int fd = hold->fd;
  absl::MutexLock l(&mu_);
  ssize_t n;
  if (flags_ & O_APPEND) {
    n = write(fd, src.data(), src.size());  // the host fd has O_APPEND too
    if (n >= 0) offset_ = static_cast<uint64_t>(lseek(fd, 0, SEEK_CUR));
  } else {
    n = pwrite(fd, src.data(), src.size(), static_cast<off_t>(offset_));
    if (n >= 0) offset_ += n;
  }
  ino_->Invalidate();
  if (n < 0) return Errno(errno);
  return static_cast<size_t>(n);
}

Result<size_t> HostFileDescription::PWrite(Blocker&, std::span<const uint8_t> src,
                                           uint64_t off) {
  if (!Writable()) return Errno(EBADF);
  auto hold = SENTRY_TRY(fd_->Get());
  ssize_t n = pwrite(hold->fd, src.data(), src.size(), static_cast<off_t>(off));
  ino_->Invalidate();
  if (n < 0) return Errno(errno);
  return static_cast<size_t>(n);
}

// From the open file itself: current even if another fd wrote, and still answering after
// the file's name is gone (the gofer's handle then fails with ENOENT).
// Opened through the overlay, the file shows the overlay's identity, as its path does.
Result<void> HostFileDescription::Stat(struct stat* st) {
  auto hold = SENTRY_TRY(fd_->Get());
  if (fstat(hold->fd, st) != 0) return Errno(errno);
  dev_t dev;
  uint64_t ino;
  if (inode() && inode()->Identity(&dev, &ino)) {
    st->st_dev = dev;
    st->st_ino = ino;
  } else {
    st->st_dev = ino_->dev();
  }
  return Ok();
}

Result<void> HostFileDescription::Allocate(int mode, uint64_t off, uint64_t len) {
  if (!Writable()) return Errno(EBADF);
  auto hold = SENTRY_TRY(fd_->Get());
  if (fallocate(hold->fd, mode, static_cast<off_t>(off), static_cast<off_t>(len)) != 0) {
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
