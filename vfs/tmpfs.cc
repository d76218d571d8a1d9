// tmpfs: directories, regular files, symlinks, FIFOs and device nodes kept in Sentry memory.
#include <dirent.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>

#include "sentry/base/guest_memory.h"
#include "vfs/file.h"
#include "vfs/mem_inode.h"
#include "vfs/pipe.h"

namespace sentry::vfs {
namespace {

std::atomic<uint32_t> g_next_minor{1};

}  // namespace

MemBudget::MemBudget() {
  struct sysinfo si {};
  uint64_t ram = sysinfo(&si) == 0 ? static_cast<uint64_t>(si.totalram) * si.mem_unit : 0;
  limit_pages_ = ram / 2 / 4096;
}

MemBudget& MemBudget::Global() {
  static MemBudget* budget = new MemBudget();
  return *budget;
}

bool MemBudget::TryCharge(uint64_t n) {
  uint64_t used = used_pages_.load();
  do {
    if (used + n > limit_pages_.load() || used + n < used) return false;
  } while (!used_pages_.compare_exchange_weak(used, used + n));
  // File data also counts against the sandbox's memory limit (sentry/base/guest_memory.h).
  if (!GuestMemory::Global().TryChargeFile(n)) {
    used_pages_.fetch_sub(n);
    return false;
  }
  return true;
}

void MemBudget::ForceCharge(uint64_t n) {
  used_pages_.fetch_add(n);
  GuestMemory::Global().ForceChargeFile(n);
}

void MemBudget::Uncharge(uint64_t n) {
  used_pages_.fetch_sub(n);
  GuestMemory::Global().UnchargeFile(n);
}

Result<uint64_t> ParseTmpfsSize(const std::string& text) {
  if (text.empty() || !isdigit(static_cast<unsigned char>(text[0]))) return Errno(EINVAL);
  errno = 0;
  char* end = nullptr;
  unsigned long long n = strtoull(text.c_str(), &end, 10);
  if (errno != 0) return Errno(EINVAL);
  std::string suffix(end);
  if (suffix == "%") {
    if (n > 100) return Errno(EINVAL);
    struct sysinfo si {};
    if (sysinfo(&si) != 0) return Errno(errno);
    return static_cast<uint64_t>(si.totalram) * si.mem_unit / 100 * n;
  }
  int shift = 0;
  if (suffix.size() == 1) {
    switch (tolower(static_cast<unsigned char>(suffix[0]))) {
      case 'k': shift = 10; break;
      case 'm': shift = 20; break;
      case 'g': shift = 30; break;
      case 't': shift = 40; break;
      default: return Errno(EINVAL);
    }
  } else if (!suffix.empty()) {
    return Errno(EINVAL);
  }
  if (shift != 0 && n > (~0ULL >> shift)) return Errno(EINVAL);
  return static_cast<uint64_t>(n) << shift;
}

MemSuper::MemSuper(uint32_t magic, uint64_t limit_pages)
    : dev_(makedev(0, 100 + g_next_minor.fetch_add(1))),
      magic_(magic),
      limit_pages_(limit_pages) {}

bool MemSuper::TryCharge(uint64_t n) {
  if (n == 0) return true;
  if (limit_pages_ != 0) {
    uint64_t used = used_pages_.load();
    do {
      if (used + n > limit_pages_ || used + n < used) return false;
    } while (!used_pages_.compare_exchange_weak(used, used + n));
  } else {
    used_pages_.fetch_add(n);
  }
  if (MemBudget::Global().TryCharge(n)) return true;
  used_pages_.fetch_sub(n);
  return false;
}

void MemSuper::ForceCharge(uint64_t n) {
  used_pages_.fetch_add(n);
  MemBudget::Global().ForceCharge(n);
}

void MemSuper::Uncharge(uint64_t n) {
  used_pages_.fetch_sub(n);
  MemBudget::Global().Uncharge(n);
}

uint64_t MemSuper::total_pages() const {
  uint64_t global = MemBudget::Global().limit_pages();
  return limit_pages_ != 0 ? std::min(limit_pages_, global) : global;
}

uint64_t MemSuper::free_pages() const {
  MemBudget& b = MemBudget::Global();
  uint64_t global_free = b.limit_pages() > b.used_pages() ? b.limit_pages() - b.used_pages() : 0;
  if (limit_pages_ == 0) return global_free;
  uint64_t used = used_pages_.load();
  return std::min(global_free, limit_pages_ > used ? limit_pages_ - used : 0);
}

Result<struct statfs> MemInode::StatFs() {
  struct statfs s = SENTRY_TRY(Inode::StatFs());
  s.f_type = sb_->magic();
  s.f_fsid.__val[0] = static_cast<int>(sb_->dev());
  if (s.f_type != 0x01021994) {
    s.f_blocks = s.f_bfree = s.f_bavail = s.f_files = s.f_ffree = 0;
    return s;
  }
  s.f_blocks = sb_->total_pages();
  s.f_bfree = s.f_bavail = sb_->free_pages();
  return s;
}

MemInode::MemInode(MemSuperRef sb, uint32_t mode, uint32_t uid, uint32_t gid)
    : mode_(mode & 07777),
      uid_(uid),
      gid_(gid),
      sb_(std::move(sb)),
      type_(mode & S_IFMT),
      ino_(sb_->NextIno()) {
  atime_ = mtime_ = ctime_ = NowTimespec();
  if (S_ISDIR(type_)) nlink_ = 2;
}

Result<struct stat> MemInode::Stat() {
  absl::MutexLock l(&mu_);
  struct stat st {};
  st.st_dev = sb_->dev();
  st.st_ino = ino_;
  st.st_mode = type_ | mode_;
  st.st_nlink = nlink_;
  st.st_uid = uid_;
  st.st_gid = gid_;
  st.st_rdev = rdev_;
  st.st_size = static_cast<off_t>(SizeLocked());
  st.st_blksize = 4096;
  st.st_blocks = static_cast<blkcnt_t>(BlocksLocked());
  st.st_atim = atime_;
  st.st_mtim = mtime_;
  st.st_ctim = ctime_;
  return st;
}

Result<void> MemInode::TruncateLocked(uint64_t) { return Errno(EINVAL); }

void MemInode::ModifiedLocked() { mtime_ = ctime_ = NowTimespec(); }

void MemInode::AccessedLocked() {
  auto not_after = [](const struct timespec& a, const struct timespec& b) {
    return a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec <= b.tv_nsec);
  };
  struct timespec now = NowTimespec();
  if (not_after(atime_, mtime_) || not_after(atime_, ctime_) ||
      now.tv_sec - atime_.tv_sec >= 24 * 3600) {
    atime_ = now;
  }
}

void MemInode::AdjustLinks(int delta) {
  absl::MutexLock l(&mu_);
  nlink_ += delta;
  ctime_ = NowTimespec();
}

Result<void> MemInode::SetAttr(const SetAttrRequest& req) {
  absl::MutexLock l(&mu_);
  struct timespec now = NowTimespec();
  if (req.mask & kAttrSize) {
    SENTRY_TRY(TruncateLocked(req.size));
    mtime_ = now;
  }
  if (req.mask & kAttrMode) mode_ = req.mode & 07777;
  if (req.mask & kAttrUid) uid_ = req.uid;
  if (req.mask & kAttrGid) gid_ = req.gid;
  if (req.mask & kAttrAtime) atime_ = req.atime.tv_nsec == UTIME_NOW ? now : req.atime;
  if (req.mask & kAttrMtime) mtime_ = req.mtime.tv_nsec == UTIME_NOW ? now : req.mtime;
  ctime_ = now;
  return Ok();
}

namespace {

// A regular file's bytes. They start in Sentry memory, kept sparse: only pages that were
// written (or fallocated) hold memory, so a truncate-grown file costs nothing and st_blocks
// counts the pages in use. The first mmap of the file moves them into a host memory file
// (memfd) that the stubs map directly, so shared mappings are coherent with read/write and
// with each other, and a page past EOF faults with SIGBUS, all by the host kernel; from then
// on read/write go to the memfd too. Files that are never mapped cost no host fd.
//
// Every page held is charged to the superblock (and through it to the sandbox-wide
// MemBudget) before it is taken. Pages a guest first touches through a shared mapping are
// counted at the file's next write, truncate, fallocate or stat (the host allocated them).
class TmpfsFile final : public MemInode {
 public:
  using MemInode::MemInode;
  ~TmpfsFile() override {
    super()->Uncharge(charged_);
    if (memfd_ >= 0) close(memfd_);
  }

  Result<FileRef> Open(int flags) override;

  Result<size_t> ReadAt(std::span<uint8_t> dst, uint64_t off) {
    absl::MutexLock l(&mu_);
    if (!dst.empty()) AccessedLocked();
    if (off >= size_) return size_t{0};
    size_t n = std::min<uint64_t>(dst.size(), size_ - off);
    if (memfd_ >= 0) return HostReadLocked(dst.first(n), off);
    for (size_t done = 0; done < n;) {
      uint64_t pos = off + done;
      size_t in = pos % kPage;
      size_t chunk = std::min<size_t>(kPage - in, n - done);
      auto it = pages_.find(pos / kPage);
      if (it == pages_.end()) {
        memset(dst.data() + done, 0, chunk);
      } else {
        memcpy(dst.data() + done, it->second->data() + in, chunk);
      }
      done += chunk;
    }
    return n;
  }

  struct Written {
    uint64_t offset;  // where the bytes went (the end of the file for O_APPEND)
    size_t count;     // short when the budget ran out part way
  };
  // Writes at `off`, or at the end if `append`. ENOSPC if not a byte fits in the budget.
  Result<Written> WriteAt(std::span<const uint8_t> src, uint64_t off, bool append) {
    absl::MutexLock l(&mu_);
    if (append) off = size_;
    if (off + src.size() < off || off + src.size() > kMaxSize) return Errno(EFBIG);
    size_t n = memfd_ >= 0 ? SENTRY_TRY(HostWriteLocked(src, off)) : HeapWriteLocked(src, off);
    if (n == 0 && !src.empty()) return Errno(ENOSPC);
    size_ = std::max<uint64_t>(size_, off + n);
    if (n > 0) ModifiedLocked();
    return Written{off, n};
  }
  uint64_t Size() {
    absl::MutexLock l(&mu_);
    return size_;
  }
  // fallocate(2) with the modes Linux's tmpfs has: allocate (KEEP_SIZE or not) and
  // PUNCH_HOLE|KEEP_SIZE.
  Result<void> Allocate(int mode, uint64_t off, uint64_t len) {
    absl::MutexLock l(&mu_);
    if (off + len < off || off + len > kMaxSize) return Errno(EFBIG);
    if (mode & FALLOC_FL_PUNCH_HOLE) {
      SENTRY_TRY(PunchLocked(off, len));
    } else {
      SENTRY_TRY(memfd_ >= 0 ? HostAllocateLocked(off, len) : HeapAllocateLocked(off, len));
      if (!(mode & FALLOC_FL_KEEP_SIZE)) size_ = std::max(size_, off + len);
    }
    ModifiedLocked();
    return Ok();
  }
  // lseek SEEK_DATA / SEEK_HOLE at page granularity, as Linux tmpfs.
  Result<uint64_t> SeekDataOrHole(uint64_t off, bool hole) {
    absl::MutexLock l(&mu_);
    if (off >= size_) return Errno(ENXIO);
    if (memfd_ >= 0) {
      off_t r = lseek(memfd_, static_cast<off_t>(off), hole ? SEEK_HOLE : SEEK_DATA);
      if (r < 0) return Errno(errno);
      return static_cast<uint64_t>(r);
    }
    uint64_t idx = off / kPage;
    if (!hole) {
      auto it = pages_.lower_bound(idx);
      if (it == pages_.end()) return Errno(ENXIO);
      uint64_t at = std::max(off, it->first * kPage);
      if (at >= size_) return Errno(ENXIO);
      return at;
    }
    while (pages_.count(idx)) idx++;
    return std::min(size_, std::max(off, idx * kPage));
  }
  // See TmpfsHostFd.
  int HostFd(bool create) {
    absl::MutexLock l(&mu_);
    if (memfd_ < 0 && create) MoveToHostLocked();
    return memfd_;
  }

 protected:
  uint64_t SizeLocked() const override { return size_; }
  uint64_t BlocksLocked() const override {
    if (memfd_ < 0) return pages_.size() * (kPage / 512);
    struct stat st;
    return fstat(memfd_, &st) == 0 ? static_cast<uint64_t>(st.st_blocks) : charged_ * 8;
  }
  Result<void> TruncateLocked(uint64_t size) override {
    if (size > kMaxSize) return Errno(EFBIG);
    if (memfd_ >= 0) {
      if (ftruncate(memfd_, static_cast<off_t>(size)) != 0) return Errno(errno);
      size_ = size;
      SettleLocked(0);
      return Ok();
    }
    if (size < size_) {
      auto first = pages_.lower_bound((size + kPage - 1) / kPage);
      uint64_t freed = static_cast<uint64_t>(std::distance(first, pages_.end()));
      pages_.erase(first, pages_.end());
      UnchargeLocked(freed);
      // The cut-off bytes of a partial last page must read as zeros if the file grows.
      if (auto it = pages_.find(size / kPage); it != pages_.end()) {
        memset(it->second->data() + size % kPage, 0, kPage - size % kPage);
      }
    }
    size_ = size;
    return Ok();
  }

 private:
  static constexpr uint64_t kPage = 4096;
  static constexpr uint64_t kMaxSize = uint64_t{1} << 40;
  using Page = std::array<uint8_t, kPage>;

  static uint64_t SpanPages(uint64_t off, uint64_t len) {
    return len == 0 ? 0 : (off + len - 1) / kPage - off / kPage + 1;
  }
  void UnchargeLocked(uint64_t n) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    super()->Uncharge(n);
    charged_ -= n;
  }

  // --- Pages in Sentry memory ---

  size_t HeapWriteLocked(std::span<const uint8_t> src, uint64_t off)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    size_t done = 0;
    while (done < src.size()) {
      uint64_t pos = off + done;
      size_t in = pos % kPage;
      size_t chunk = std::min<size_t>(kPage - in, src.size() - done);
      Page* page = PageLocked(pos / kPage);
      if (page == nullptr) break;
      memcpy(page->data() + in, src.data() + done, chunk);
      done += chunk;
    }
    return done;
  }
  Result<void> HeapAllocateLocked(uint64_t off, uint64_t len) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    uint64_t first = off / kPage, end = (off + len + kPage - 1) / kPage;
    uint64_t missing = end - first;
    for (auto it = pages_.lower_bound(first); it != pages_.end() && it->first < end; ++it) {
      missing--;
    }
    if (!super()->TryCharge(missing)) return Errno(ENOSPC);
    charged_ += missing;
    for (uint64_t p = first; p < end; p++) {
      auto& slot = pages_[p];
      if (!slot) slot = std::make_unique<Page>();
    }
    return Ok();
  }
  // The page at index `idx`, allocated (zeroed) on first use; null when the budget is out.
  Page* PageLocked(uint64_t idx) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto it = pages_.find(idx);
    if (it != pages_.end()) return it->second.get();
    if (!super()->TryCharge(1)) return nullptr;
    charged_++;
    return pages_.emplace(idx, std::make_unique<Page>()).first->second.get();
  }

  // --- Pages in the host memory file ---

  // Moves the pages into a new memfd. Leaves memfd_ at -1 if the host refuses one.
  void MoveToHostLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    int fd = memfd_create("sentry-tmpfs", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return;
    bool ok = ftruncate(fd, static_cast<off_t>(size_)) == 0;
    for (auto it = pages_.begin(); ok && it != pages_.end(); ++it) {
      uint64_t pos = it->first * kPage;
      if (pos >= size_) {  // fallocated past EOF with KEEP_SIZE
        ok = fallocate(fd, FALLOC_FL_KEEP_SIZE, static_cast<off_t>(pos), kPage) == 0;
        continue;
      }
      size_t n = std::min<uint64_t>(kPage, size_ - pos);
      ok = pwrite(fd, it->second->data(), n, static_cast<off_t>(pos)) == static_cast<ssize_t>(n);
    }
    if (!ok) {
      close(fd);
      return;
    }
    memfd_ = fd;
    pages_.clear();
    SettleLocked(0);
  }
  // Brings charged_ to what the memfd holds now; `reserved` pages were charged ahead of an
  // operation and are given back or kept as the host's count says.
  void SettleLocked(uint64_t reserved) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    charged_ += reserved;
    struct stat st;
    if (fstat(memfd_, &st) != 0) return;
    uint64_t held = static_cast<uint64_t>(st.st_blocks) / (kPage / 512);
    if (held > charged_) {
      super()->ForceCharge(held - charged_);
      charged_ = held;
    } else if (held < charged_) {
      UnchargeLocked(charged_ - held);
    }
  }
  // The pages of [off, off+len) the memfd does not hold yet.
  uint64_t HostHolePagesLocked(uint64_t off, uint64_t len) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    uint64_t first = off / kPage * kPage, end = off + len, holes = 0;
    for (uint64_t pos = first; pos < end;) {
      off_t data = lseek(memfd_, static_cast<off_t>(pos), SEEK_DATA);
      uint64_t hole_end = data < 0 ? end : std::min<uint64_t>(end, static_cast<uint64_t>(data));
      if (hole_end > pos) holes += SpanPages(pos, hole_end - pos);
      if (data < 0 || hole_end >= end) break;
      off_t hole = lseek(memfd_, data, SEEK_HOLE);
      if (hole < 0) break;
      pos = static_cast<uint64_t>(hole);
    }
    return holes;
  }
  // Charges what an operation on [off, off+len) may allocate: at most every page of the
  // range, or, when that does not fit, exactly the holes in it.
  Result<uint64_t> ReserveHostLocked(uint64_t off, uint64_t len)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    uint64_t worst = SpanPages(off, len);
    if (super()->TryCharge(worst)) return worst;
    uint64_t holes = HostHolePagesLocked(off, len);
    if (!super()->TryCharge(holes)) return Errno(ENOSPC);
    return holes;
  }
  Result<size_t> HostReadLocked(std::span<uint8_t> dst, uint64_t off)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    size_t done = 0;
    while (done < dst.size()) {
      ssize_t r = pread(memfd_, dst.data() + done, dst.size() - done,
                        static_cast<off_t>(off + done));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return Errno(errno);
      if (r == 0) {  // shrunk under us: cannot happen while mu_ is held, but read as zeros
        memset(dst.data() + done, 0, dst.size() - done);
        break;
      }
      done += static_cast<size_t>(r);
    }
    return dst.size();
  }
  Result<size_t> HostWriteLocked(std::span<const uint8_t> src, uint64_t off)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    uint64_t reserved = SENTRY_TRY(ReserveHostLocked(off, src.size()));
    size_t done = 0;
    int err = 0;
    while (done < src.size()) {
      ssize_t w = pwrite(memfd_, src.data() + done, src.size() - done,
                         static_cast<off_t>(off + done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        err = w < 0 ? errno : ENOSPC;
        break;
      }
      done += static_cast<size_t>(w);
    }
    SettleLocked(reserved);
    if (done == 0 && err != 0) return Errno(err);
    return done;
  }
  Result<void> HostAllocateLocked(uint64_t off, uint64_t len) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    uint64_t reserved = SENTRY_TRY(ReserveHostLocked(off, len));
    int r = fallocate(memfd_, FALLOC_FL_KEEP_SIZE, static_cast<off_t>(off),
                      static_cast<off_t>(len));
    int err = errno;
    SettleLocked(reserved);
    if (r != 0) return Errno(err);
    return Ok();
  }

  // Frees the whole pages of [off, off+len) and zeroes the partial ones at its ends.
  Result<void> PunchLocked(uint64_t off, uint64_t len) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (memfd_ >= 0) {
      if (fallocate(memfd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(off),
                    static_cast<off_t>(len)) != 0) {
        return Errno(errno);
      }
      SettleLocked(0);
      return Ok();
    }
    uint64_t end = off + len;
    for (auto it = pages_.lower_bound(off / kPage); it != pages_.end() && it->first * kPage < end;) {
      uint64_t pos = it->first * kPage;
      if (pos >= off && pos + kPage <= end) {
        it = pages_.erase(it);
        UnchargeLocked(1);
        continue;
      }
      uint64_t from = std::max(off, pos), to = std::min(end, pos + kPage);
      memset(it->second->data() + (from - pos), 0, to - from);
      ++it;
    }
    return Ok();
  }

  std::map<uint64_t, std::unique_ptr<Page>> pages_ ABSL_GUARDED_BY(mu_);  // by page index
  uint64_t size_ ABSL_GUARDED_BY(mu_) = 0;
  int memfd_ ABSL_GUARDED_BY(mu_) = -1;       // see the class comment
  uint64_t charged_ ABSL_GUARDED_BY(mu_) = 0;  // pages charged to super()
};

class TmpfsFileDescription final : public FileDescription {
 public:
  TmpfsFileDescription(std::shared_ptr<TmpfsFile> f, int flags)
      : FileDescription(flags), file_(std::move(f)) {}

  Result<size_t> Read(Blocker& b, std::span<uint8_t> dst) override {
    if (!Readable()) return Errno(EBADF);
    absl::MutexLock l(&mu_);
    size_t n = SENTRY_TRY(file_->ReadAt(dst, offset_));
    offset_ += n;
    (void)b;
    return n;
  }
  Result<size_t> Write(Blocker&, std::span<const uint8_t> src) override {
    if (!Writable()) return Errno(EBADF);
    absl::MutexLock l(&mu_);
    TmpfsFile::Written w = SENTRY_TRY(file_->WriteAt(src, offset_, flags_ & O_APPEND));
    offset_ = w.offset + w.count;
    return w.count;
  }
  Result<size_t> PRead(Blocker&, std::span<uint8_t> dst, uint64_t off) override {
    if (!Readable()) return Errno(EBADF);
    return file_->ReadAt(dst, off);
  }
  Result<size_t> PWrite(Blocker&, std::span<const uint8_t> src, uint64_t off) override {
    if (!Writable()) return Errno(EBADF);
    // Linux quirk kept: pwrite on an O_APPEND file appends.
    return SENTRY_TRY(file_->WriteAt(src, off, flags() & O_APPEND)).count;
  }
  Result<uint64_t> Seek(int64_t off, int whence) override {
    absl::MutexLock l(&mu_);
    int64_t size = static_cast<int64_t>(file_->Size());
    int64_t base;
    switch (whence) {
      case SEEK_SET: base = 0; break;
      case SEEK_CUR: base = static_cast<int64_t>(offset_); break;
      case SEEK_END: base = size; break;
      case SEEK_DATA:
      case SEEK_HOLE:
        if (off < 0) return Errno(ENXIO);
        offset_ = SENTRY_TRY(file_->SeekDataOrHole(off, whence == SEEK_HOLE));
        return offset_;
      default: return Errno(EINVAL);
    }
    if (base + off < 0) return Errno(EINVAL);
    offset_ = base + off;
    return offset_;
  }
  Result<uint64_t> Ioctl(Blocker&, uint64_t cmd, uint64_t) override {
    if (cmd == FIONREAD) {
      absl::MutexLock l(&mu_);
      uint64_t size = file_->Size();
      return size > offset_ ? size - offset_ : 0;
    }
    return Errno(ENOTTY);
  }
  Result<void> Allocate(int mode, uint64_t off, uint64_t len) override {
    if (!Writable()) return Errno(EBADF);
    if (mode & ~(FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE)) return Errno(EOPNOTSUPP);
    return file_->Allocate(mode, off, len);
  }
  // The memfd the pages move to at the first mmap (see TmpfsFile).
  int HostFd() const override { return file_->HostFd(true); }

 private:
  std::shared_ptr<TmpfsFile> file_;
};

Result<FileRef> TmpfsFile::Open(int flags) {
  auto self = std::static_pointer_cast<TmpfsFile>(shared_from_this());
  return FileRef(std::make_shared<TmpfsFileDescription>(std::move(self), flags));
}

class TmpfsSymlink final : public MemInode {
 public:
  TmpfsSymlink(MemSuperRef sb, std::string target, uint32_t uid, uint32_t gid)
      : MemInode(std::move(sb), S_IFLNK | 0777, uid, gid), target_(std::move(target)) {}
  Result<std::string> ReadLink() override { return target_; }

 protected:
  uint64_t SizeLocked() const override { return target_.size(); }

 private:
  const std::string target_;
};

// FIFOs, sockets and device nodes.
class TmpfsSpecial final : public MemInode {
 public:
  TmpfsSpecial(MemSuperRef sb, uint32_t mode, dev_t rdev, uint32_t uid, uint32_t gid)
      : MemInode(std::move(sb), mode, uid, gid) {
    absl::MutexLock l(&mu_);
    rdev_ = rdev;
  }
  Result<FileRef> Open(int flags) override {
    switch (Type()) {
      case S_IFIFO: {
        absl::MutexLock l(&mu_);
        if (!pipe_) pipe_ = NewFifoPipe();
        return OpenFifo(pipe_, flags);
      }
      case S_IFCHR: {
        dev_t rdev;
        {
          absl::MutexLock l(&mu_);
          rdev = rdev_;
        }
        return OpenDevice(rdev, flags);
      }
      default:
        return Errno(ENXIO);
    }
  }

 private:
  std::shared_ptr<Pipe> pipe_ ABSL_GUARDED_BY(mu_);
};

class TmpfsDir final : public MemInode {
 public:
  using MemInode::MemInode;

  Result<InodeRef> Lookup(const std::string& name) override {
    absl::MutexLock l(&mu_);
    auto it = children_.find(name);
    if (it == children_.end()) return Errno(ENOENT);
    return it->second;
  }
  Result<std::vector<DirEntry>> ReadDir() override {
    absl::MutexLock l(&mu_);
    std::vector<DirEntry> out;
    out.reserve(children_.size());
    for (auto& [name, ino] : children_) {
      auto* m = static_cast<MemInode*>(ino.get());
      out.push_back({name, m->ino(), DirentType(m->Type())});
    }
    return out;
  }
  Result<InodeRef> Mknod(const std::string& name, uint32_t mode, dev_t rdev,
                         const Creds& c) override {
    InodeRef ino;
    if (S_ISREG(mode)) {
      ino = std::make_shared<TmpfsFile>(super(), mode, c.uid, GroupFor(c));
    } else {
      ino = std::make_shared<TmpfsSpecial>(super(), mode, rdev, c.uid, GroupFor(c));
    }
    SENTRY_TRY(Insert(name, ino));
    return ino;
  }
  Result<InodeRef> Mkdir(const std::string& name, uint32_t mode, const Creds& c) override {
    uint32_t perm = mode & 07777;
    {
      absl::MutexLock l(&mu_);
      if (mode_ & S_ISGID) perm |= S_ISGID;  // setgid directories propagate
    }
    auto ino = std::make_shared<TmpfsDir>(super(), S_IFDIR | perm, c.uid, GroupFor(c));
    SENTRY_TRY(Insert(name, ino));
    AdjustLinks(1);
    return InodeRef(ino);
  }
  Result<InodeRef> Symlink(const std::string& name, const std::string& target,
                           const Creds& c) override {
    InodeRef ino = std::make_shared<TmpfsSymlink>(super(), target, c.uid, GroupFor(c));
    SENTRY_TRY(Insert(name, ino));
    return ino;
  }
  Result<void> Link(const std::string& name, const InodeRef& target) override {
    auto* m = dynamic_cast<MemInode*>(target.get());
    if (!m || m->super() != super()) return Errno(EXDEV);
    SENTRY_TRY(Insert(name, target));
    m->AdjustLinks(1);
    return Ok();
  }
  Result<void> Unlink(const std::string& name, bool dir) override {
    InodeRef victim;
    {
      absl::MutexLock l(&mu_);
      auto it = children_.find(name);
      if (it == children_.end()) return Errno(ENOENT);
      victim = it->second;
      if (dir != victim->IsDir()) return Errno(dir ? ENOTDIR : EISDIR);
      if (dir && !static_cast<TmpfsDir*>(victim.get())->Empty()) return Errno(ENOTEMPTY);
      children_.erase(it);
      ModifiedLocked();
      if (dir) nlink_--;
    }
    static_cast<MemInode*>(victim.get())->AdjustLinks(dir ? -2 : -1);
    return Ok();
  }
  Result<void> Rename(const std::string& old_name, Inode& new_dir_inode,
                      const std::string& new_name, unsigned flags) override;

  bool Empty() {
    absl::MutexLock l(&mu_);
    return children_.empty();
  }

 private:
  uint32_t GroupFor(const Creds& c) {
    absl::MutexLock l(&mu_);
    return (mode_ & S_ISGID) ? gid_ : c.gid;
  }
  Result<void> Insert(const std::string& name, InodeRef ino) {
    absl::MutexLock l(&mu_);
    if (!children_.emplace(name, std::move(ino)).second) return Errno(EEXIST);
    ModifiedLocked();
    return Ok();
  }

  std::map<std::string, InodeRef> children_ ABSL_GUARDED_BY(mu_);
  static absl::Mutex rename_mu_;
};

absl::Mutex TmpfsDir::rename_mu_(absl::kConstInit);

// Serialized by one mutex per process: renames are rare next to lookups, and taking two
// directory locks in a fixed order is then simple.
Result<void> TmpfsDir::Rename(const std::string& old_name, Inode& new_dir_inode,
                              const std::string& new_name, unsigned flags) {
  auto* nd = dynamic_cast<TmpfsDir*>(&new_dir_inode);
  if (!nd || nd->super() != super()) return Errno(EXDEV);
  absl::MutexLock rl(&rename_mu_);
  InodeRef moving = SENTRY_TRY(Lookup(old_name));
  auto existing = nd->Lookup(new_name);
  InodeRef replaced = existing.ok() ? *existing : nullptr;
  if (replaced && (flags & RENAME_NOREPLACE)) return Errno(EEXIST);
  if (!replaced && (flags & RENAME_EXCHANGE)) return Errno(ENOENT);
  if (replaced && !(flags & RENAME_EXCHANGE) && replaced->IsDir() &&
      !static_cast<TmpfsDir*>(replaced.get())->Empty()) {
    return Errno(ENOTEMPTY);
  }
  auto set = [](TmpfsDir* d, const std::string& n, InodeRef ino) {
    absl::MutexLock l(&d->mu_);
    if (ino) {
      d->children_[n] = std::move(ino);
    } else {
      d->children_.erase(n);
    }
    d->ModifiedLocked();
  };
  bool moving_dir = moving->IsDir();
  if (flags & RENAME_EXCHANGE) {
    set(this, old_name, replaced);
    set(nd, new_name, moving);
    if (moving_dir != replaced->IsDir() && nd != this) {
      int d = moving_dir ? 1 : -1;
      nd->AdjustLinks(d);
      AdjustLinks(-d);
    }
    return Ok();
  }
  set(this, old_name, nullptr);
  set(nd, new_name, moving);
  if (replaced) {
    static_cast<MemInode*>(replaced.get())->AdjustLinks(replaced->IsDir() ? -2 : -1);
    if (replaced->IsDir()) nd->AdjustLinks(-1);
  }
  if (moving_dir && nd != this) {
    AdjustLinks(-1);
    nd->AdjustLinks(1);
  }
  static_cast<MemInode*>(moving.get())->AdjustLinks(0);  // ctime
  return Ok();
}

}  // namespace

InodeRef NewTmpfs(uint32_t mode, uint32_t uid, uint32_t gid, uint64_t limit_bytes) {
  uint64_t limit_pages = (limit_bytes + 4095) / 4096;
  return std::make_shared<TmpfsDir>(std::make_shared<MemSuper>(0x01021994, limit_pages),
                                    S_IFDIR | (mode & 07777), uid, gid);
}

int TmpfsHostFd(Inode& inode, bool create) {
  auto* f = dynamic_cast<TmpfsFile*>(&inode);
  return f ? f->HostFd(create) : -1;
}

}  // namespace sentry::vfs
