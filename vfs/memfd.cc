#include "vfs/memfd.h"

#include <linux/falloc.h>
#include <unistd.h>

#include <atomic>

#include "vfs/mem_inode.h"

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010
#endif
#ifndef F_SEAL_EXEC
#define F_SEAL_EXEC 0x0020
#endif

namespace sentry::vfs {
namespace {

constexpr uint32_t kKnownSeals =
    F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_FUTURE_WRITE | F_SEAL_EXEC;

// The memfd's inode: the tmpfs file's attributes, with size changes checked against the seals.
class MemfdInode final : public Inode {
 public:
  MemfdInode(InodeRef data, uint32_t seals) : data_(std::move(data)), seals_(seals) {}

  uint32_t Type() const override { return data_->Type(); }
  Result<struct stat> Stat() override { return data_->Stat(); }
  Result<void> SetAttr(const SetAttrRequest& req) override {
    absl::MutexLock l(&seals_mu_);
    if (req.mask & kAttrSize) SENTRY_TRY(CheckResizeLocked(req.size));
    return data_->SetAttr(req);
  }
  Result<struct statfs> StatFs() override { return data_->StatFs(); }

  uint32_t seals() {
    absl::MutexLock l(&seals_mu_);
    return seals_;
  }
  // `host_fd` is the memfd holding the data once the file was mapped (-1 before): the host
  // then enforces the seals on the mappings too (F_SEAL_WRITE fails with EBUSY while a
  // writable shared mapping exists, a sealed memfd cannot be mapped writable).
  Result<void> AddSeals(uint32_t add, int host_fd) {
    absl::MutexLock l(&seals_mu_);
    if (seals_ & F_SEAL_SEAL) return Errno(EPERM);
    if (host_fd >= 0 && (add & kHostSeals)) SENTRY_TRY(AddHostSeals(host_fd, add & kHostSeals));
    seals_ |= add;
    return Ok();
  }
  // Gives a memfd that just became the file's storage the seals set so far.
  void SealHost(int host_fd) {
    absl::MutexLock l(&seals_mu_);
    if (host_sealed_ || host_fd < 0) return;
    if (seals_ & kHostSeals) fcntl(host_fd, F_ADD_SEALS, static_cast<int>(seals_ & kHostSeals));
    host_sealed_ = true;
  }
  // Checks a write of `len` bytes at `off` (or at the end if `append`) against the seals
  // and runs it with them held, so a seal cannot come in between.
  template <typename F>
  Result<size_t> Write(uint64_t off, size_t len, bool append, F&& write) {
    absl::MutexLock l(&seals_mu_);
    if (seals_ & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE)) return Errno(EPERM);
    if ((seals_ & F_SEAL_GROW) && len > 0) {
      uint64_t size = SENTRY_TRY(Size());
      if ((append ? size : off) + len > size) return Errno(EPERM);
    }
    return write();
  }
  Result<void> CheckAllocate(int mode, uint64_t off, uint64_t len) {
    absl::MutexLock l(&seals_mu_);
    if (seals_ & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE)) return Errno(EPERM);
    if ((seals_ & F_SEAL_GROW) && !(mode & FALLOC_FL_KEEP_SIZE) &&
        off + len > SENTRY_TRY(Size())) {
      return Errno(EPERM);
    }
    return Ok();
  }

 private:
  Result<uint64_t> Size() { return static_cast<uint64_t>(SENTRY_TRY(data_->Stat()).st_size); }
  Result<void> CheckResizeLocked(uint64_t size) ABSL_EXCLUSIVE_LOCKS_REQUIRED(seals_mu_) {
    uint64_t cur = SENTRY_TRY(Size());
    if (size < cur && (seals_ & F_SEAL_SHRINK)) return Errno(EPERM);
    if (size > cur && (seals_ & F_SEAL_GROW)) return Errno(EPERM);
    return Ok();
  }

  // EBUSY means a writable shared mapping exists. It may be the last one of a stub that a
  // process exit has killed but the host has not yet torn down (the Sentry reports the exit
  // without waiting for that): such a mapping goes within milliseconds, a guest's does not.
  static Result<void> AddHostSeals(int host_fd, uint32_t seals) {
    for (int tries = 0;; tries++) {
      if (fcntl(host_fd, F_ADD_SEALS, static_cast<int>(seals)) == 0) return Ok();
      if (errno != EBUSY || tries == 50) return Errno(errno);
      usleep(1000);
    }
  }

  // The seals the host applies to a memfd: F_SEAL_EXEC is newer than some hosts, and the
  // Sentry checks it itself.
  static constexpr uint32_t kHostSeals =
      F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_FUTURE_WRITE;

  const InodeRef data_;
  absl::Mutex seals_mu_;
  uint32_t seals_ ABSL_GUARDED_BY(seals_mu_);
  bool host_sealed_ ABSL_GUARDED_BY(seals_mu_) = false;
};

constexpr int kLargeFile = 0100000;  // O_LARGEFILE as the kernel sees it on x86_64
// The access of the tmpfs file behind every open memfd; the memfd's own flags decide.
constexpr int kDataFlags = O_RDWR | kLargeFile;

// An open memfd: the tmpfs file's own open file does the I/O (and keeps the offset).
class MemfdFile final : public FileDescription {
 public:
  MemfdFile(FileRef data, std::shared_ptr<MemfdInode> inode, std::string name,
            int flags)
      : FileDescription(flags), data_(std::move(data)),
        memfd_inode_(std::move(inode)),
        name_(std::move(name)) {}

  Result<size_t> Read(Blocker& b, std::span<uint8_t> dst) override {
    return data_->Read(b, dst);
  }
  Result<size_t> PRead(Blocker& b, std::span<uint8_t> dst, uint64_t off) override {
    return data_->PRead(b, dst, off);
  }
  Result<size_t> Write(Blocker& b, std::span<const uint8_t> src) override {
    data_->SetStatusFlags(flags());  // O_APPEND set on this file applies to the data's
    uint64_t off = SENTRY_TRY(data_->Seek(0, SEEK_CUR));
    return memfd_inode_->Write(off, src.size(), flags() & O_APPEND,
                         [&] { return data_->Write(b, src); });
  }
  Result<size_t> PWrite(Blocker& b, std::span<const uint8_t> src, uint64_t off) override {
    data_->SetStatusFlags(flags());
    return memfd_inode_->Write(off, src.size(), flags() & O_APPEND,
                         [&] { return data_->PWrite(b, src, off); });
  }
  Result<uint64_t> Seek(int64_t off, int whence) override { return data_->Seek(off, whence); }
  Result<uint64_t> Ioctl(Blocker& b, uint64_t cmd, uint64_t arg) override {
    return data_->Ioctl(b, cmd, arg);
  }
  Result<void> Allocate(int mode, uint64_t off, uint64_t len) override {
    SENTRY_TRY(memfd_inode_->CheckAllocate(mode, off, len));
    return data_->Allocate(mode, off, len);
  }
  std::string Name() const override { return name_; }
  int HostFd() const override {
    int fd = data_->HostFd();
    memfd_inode_->SealHost(fd);
    return fd;
  }
  // The host memfd if the data moved there already, else -1.
  int ExistingHostFd() const { return TmpfsHostFd(*data_->inode(), false); }
  // A new open file of the same memory file, at offset 0. Partial: O_TRUNC is not applied.
  Result<FileRef> Reopen(int flags) override {
    const InodeRef& data_inode = data_->inode();
    FileRef data = SENTRY_TRY(data_inode->Open(kDataFlags));
    data->set_location(nullptr, nullptr, data_inode);
    int kept = (flags & ~(O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_CLOEXEC)) | kLargeFile;
    auto file = std::make_shared<MemfdFile>(std::move(data), memfd_inode_, name_, kept);
    file->set_location(nullptr, nullptr, memfd_inode_);
    return FileRef(std::move(file));
  }

  MemfdInode& memfd_inode() { return *memfd_inode_; }

 private:
  const FileRef data_;
  const std::shared_ptr<MemfdInode> memfd_inode_;
  const std::string name_;
};

// Where memfds live: one tmpfs no path reaches, like Linux's internal shm mount.
InodeRef& HiddenTmpfs() {
  static InodeRef* root = new InodeRef(NewTmpfs(01777, 0, 0));
  return *root;
}

std::atomic<uint64_t> g_next_memfd{1};

}  // namespace

Result<FileRef> NewMemfd(const std::string& name, bool allow_sealing, const Creds& creds) {
  InodeRef& root = HiddenTmpfs();
  std::string slot = "memfd-" + std::to_string(g_next_memfd.fetch_add(1));
  InodeRef data = SENTRY_TRY(root->Mknod(slot, S_IFREG | 0777, 0, creds));
  SENTRY_TRY(root->Unlink(slot, false));
  constexpr int kFlags = kDataFlags;
  FileRef data_file = SENTRY_TRY(data->Open(kFlags));
  data_file->set_location(nullptr, nullptr, data);
  auto inode = std::make_shared<MemfdInode>(data, allow_sealing ? 0 : F_SEAL_SEAL);
  auto file = std::make_shared<MemfdFile>(std::move(data_file), inode,
                                          "/memfd:" + name + " (deleted)", kFlags);
  file->set_location(nullptr, nullptr, inode);
  return FileRef(std::move(file));
}

Result<void> AddSeals(const FileRef& file, uint32_t seals) {
  auto* m = dynamic_cast<MemfdFile*>(file.get());
  if (!m) return Errno(EINVAL);
  if (seals & ~kKnownSeals) return Errno(EINVAL);
  if (!file->Writable()) return Errno(EPERM);
  return m->memfd_inode().AddSeals(seals, m->ExistingHostFd());
}

Result<uint32_t> GetSeals(const FileRef& file) {
  auto* m = dynamic_cast<MemfdFile*>(file.get());
  if (!m) return Errno(EINVAL);
  return m->memfd_inode().seals();
}

}  // namespace sentry::vfs
