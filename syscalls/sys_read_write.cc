// read, write and their vectored and positional variants.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/uio.h>

#include <memory>

#include "syscalls/common.h"
#include "syscalls/read_write.h"
#include "vfs/inotify.h"

namespace sentry::syscalls {
namespace {

// The largest host buffer one read or write stages guest data in: a guest may ask for 2 GiB,
// and larger transfers go in several rounds.
constexpr size_t kStage = 1 << 20;

// The calling thread's staging buffer, at least min(len, kStage) bytes: allocated once per
// thread and never cleared (every byte handed out is written before it is read).
std::span<uint8_t> Stage(size_t len) {
  thread_local std::unique_ptr<uint8_t[]> buf;
  thread_local size_t size = 0;
  size_t want = std::min(len, kStage);
  if (size < want) {
    size = std::max(want, size_t{64} * 1024);
    buf.reset(new uint8_t[size]);
  }
  return {buf.get(), want};
}

}  // namespace

GuestBuffer OneRange(GuestAddr buf, size_t count) {
  count = std::min(count, kMaxRw);
  return {{{reinterpret_cast<void*>(buf.value()), count}}, count};
}

Result<GuestBuffer> CopyInIovecs(Task& t, GuestAddr addr, int iovcnt) {
  if (iovcnt < 0 || iovcnt > 1024) return Errno(EINVAL);
  GuestBuffer b;
  b.segs.resize(iovcnt);
  if (iovcnt) {
    SENTRY_TRY(t.CopyInBytes(
        addr, {reinterpret_cast<uint8_t*>(b.segs.data()), b.segs.size() * sizeof(struct iovec)}));
  }
  for (auto& i : b.segs) {
    if (static_cast<ssize_t>(i.iov_len) < 0) return Errno(EINVAL);
    // Like Linux, the total is silently cut to MAX_RW_COUNT.
    i.iov_len = std::min(i.iov_len, kMaxRw - b.total);
    b.total += i.iov_len;
  }
  return b;
}

// Reads into the guest buffer through a bounded host buffer (positional when off >= 0).
// Regular files are read in rounds until the buffer is full or the file ends; anything else
// is read once, since a second read could block after the first returned data.
Result<uint64_t> DoRead(Task& t, const vfs::FileRef& f, const GuestBuffer& b, int64_t off) {
  if (!f->Readable()) return Errno(EBADF);
  const vfs::InodeRef& ino = f->inode();
  bool rounds = ino && S_ISREG(ino->Type());
  std::span<uint8_t> data = Stage(b.total);
  size_t done = 0;
  do {
    std::span<uint8_t> chunk = data.first(std::min(b.total - done, data.size()));
    auto r = off >= 0 ? f->PRead(t, chunk, off + done) : f->Read(t, chunk);
    if (!r.ok()) {
      if (done > 0) break;
      return r.error();
    }
    size_t copied = b.CopyOut(t, done, chunk.first(*r));
    done += copied;
    if (copied < *r) {
      if (done == 0) return Errno(EFAULT);
      break;
    }
    if (*r < chunk.size()) break;
  } while (rounds && done < b.total);
  if (done > 0) vfs::NotifyFile(*f, IN_ACCESS);
  return done;
}

Result<void> CheckFileSizeLimit(Task& t, uint64_t new_size) {
  uint64_t limit = t.tg().rlimits[RLIMIT_FSIZE].cur;
  if (limit == RLIM_INFINITY || new_size <= limit) return Ok();
  abi::SigInfo info{};
  info.signo = SIGXFSZ;
  info.code = abi::kSI_KERNEL;
  absl::MutexLock l(&t.kernel().mu());
  t.kernel().SendTaskSignal(t, info);
  return Errno(EFBIG);
}

namespace {

// RLIMIT_FSIZE for a write of `count` bytes to a regular file at `off` (-1: the file offset,
// or the end with O_APPEND), as Linux's generic_write_checks: the write is cut at the limit,
// and one that would start at or past it raises SIGXFSZ and fails with EFBIG.
Result<size_t> FileSizeAllowance(Task& t, const vfs::FileRef& f, int64_t off, size_t count) {
  uint64_t limit = t.tg().rlimits[RLIMIT_FSIZE].cur;
  const vfs::InodeRef& ino = f->inode();
  if (limit == RLIM_INFINITY || count == 0 || !ino || !S_ISREG(ino->Type())) return count;
  // A file whose position cannot be told (a host stream that is a regular file on the host)
  // is left to the write itself.
  uint64_t pos;
  if (off >= 0) {
    pos = static_cast<uint64_t>(off);
  } else if (f->flags() & O_APPEND) {
    auto st = ino->Stat();
    if (!st.ok()) return count;
    pos = static_cast<uint64_t>(st->st_size);
  } else {
    auto cur = f->Seek(0, SEEK_CUR);
    if (!cur.ok()) return count;
    pos = *cur;
  }
  if (pos >= limit) SENTRY_TRY(CheckFileSizeLimit(t, pos + 1));
  return std::min<uint64_t>(count, limit - pos);
}

}  // namespace

// Writes the guest buffer through a bounded host buffer. A fault part-way writes what was
// readable before it (EFAULT if nothing was); a short or failed round ends the write.
Result<uint64_t> DoWrite(Task& t, const vfs::FileRef& f, const GuestBuffer& b, int64_t off) {
  if (!f->Writable()) return Errno(EBADF);
  size_t total = SENTRY_TRY(FileSizeAllowance(t, f, off, b.total));
  SENTRY_TRY(RemovePrivsForWrite(t, f));
  std::span<uint8_t> data = Stage(total);
  size_t done = 0;
  do {
    size_t want = std::min(total - done, data.size());
    size_t got = b.CopyIn(t, done, {data.data(), want});
    if (got == 0 && want > 0) {
      if (done > 0) break;
      return Errno(EFAULT);
    }
    std::span<const uint8_t> chunk(data.data(), got);
    auto r = off >= 0 ? f->PWrite(t, chunk, off + done) : f->Write(t, chunk);
    if (!r.ok()) {
      if (done > 0) break;
      if (r.error() == EPIPE) RaiseSigpipe(t);
      return r.error();
    }
    done += *r;
    if (*r < got || got < want) break;
  } while (done < total);
  if (done > 0) vfs::NotifyFile(*f, IN_MODIFY);
  return done;
}

Result<void> RemovePrivsForWrite(Task& t, const vfs::FileRef& f) {
  const vfs::InodeRef& ino = f->inode();
  if (!ino || !S_ISREG(ino->Type())) return Ok();
  {
    absl::MutexLock l(&t.kernel().mu());
    if (t.tg().creds.HasCapability(CAP_FSETID)) return Ok();
  }
  struct stat st = SENTRY_TRY(ino->Stat());
  uint32_t kill = st.st_mode & S_ISUID;
  if ((st.st_mode & S_ISGID) && (st.st_mode & S_IXGRP)) kill |= S_ISGID;
  if (!kill) return Ok();
  vfs::SetAttrRequest req;
  req.mask = vfs::kAttrMode;
  req.mode = st.st_mode & 07777 & ~kill;
  return ino->SetAttr(req);
}

Result<uint64_t> SysRead(Task& t, int fd, GuestAddr buf, size_t count) {
  auto f = SENTRY_TRY(GetFile(t, fd));
  return DoRead(t, f, OneRange(buf, count), -1);
}

Result<uint64_t> SysWrite(Task& t, int fd, GuestAddr buf, size_t count) {
  auto f = SENTRY_TRY(GetFile(t, fd));
  return DoWrite(t, f, OneRange(buf, count), -1);
}

Result<uint64_t> SysPread64(Task& t, int fd, GuestAddr buf, size_t count, int64_t off) {
  auto f = SENTRY_TRY(GetFile(t, fd));
  if (off < 0) return Errno(EINVAL);
  return DoRead(t, f, OneRange(buf, count), off);
}

Result<uint64_t> SysPwrite64(Task& t, int fd, GuestAddr buf, size_t count, int64_t off) {
  auto f = SENTRY_TRY(GetFile(t, fd));
  if (off < 0) return Errno(EINVAL);
  return DoWrite(t, f, OneRange(buf, count), off);
}

Result<uint64_t> SysReadv(Task& t, int fd, GuestAddr iov, int iovcnt) {
  auto f = SENTRY_TRY(GetFile(t, fd));
  return DoRead(t, f, SENTRY_TRY(CopyInIovecs(t, iov, iovcnt)), -1);
}

Result<uint64_t> SysWritev(Task& t, int fd, GuestAddr iov, int iovcnt) {
  auto f = SENTRY_TRY(GetFile(t, fd));
  return DoWrite(t, f, SENTRY_TRY(CopyInIovecs(t, iov, iovcnt)), -1);
}

Result<uint64_t> SysPreadv(Task& t, int fd, GuestAddr iov, int iovcnt, int64_t off) {
  auto f = SENTRY_TRY(GetFile(t, fd));
  auto b = SENTRY_TRY(CopyInIovecs(t, iov, iovcnt));
  if (off < 0) return Errno(EINVAL);
  return DoRead(t, f, b, off);
}

Result<uint64_t> SysPwritev(Task& t, int fd, GuestAddr iov, int iovcnt, int64_t off) {
  auto f = SENTRY_TRY(GetFile(t, fd));
  auto b = SENTRY_TRY(CopyInIovecs(t, iov, iovcnt));
  if (off < 0) return Errno(EINVAL);
  return DoWrite(t, f, b, off);
}

namespace {

// preadv2/pwritev2's flags (Linux 6.1's RWF_SUPPORTED).
constexpr int kRwfHipri = 0x1;    // poll for completion: nothing to poll here
constexpr int kRwfDsync = 0x2;    // O_DSYNC for this write
constexpr int kRwfSync = 0x4;     // O_SYNC for this write
constexpr int kRwfNowait = 0x8;   // fail with EAGAIN instead of waiting
constexpr int kRwfAppend = 0x10;  // O_APPEND for this write
constexpr int kRwfSupported = kRwfHipri | kRwfDsync | kRwfSync | kRwfNowait | kRwfAppend;

// RWF_NOWAIT: a file that could block (it has a wait queue) and is not ready would wait.
// Regular files never wait for data here.
Result<void> CheckNowait(const vfs::FileRef& f, int flags, EventMask want) {
  if ((flags & kRwfNowait) && f->Queue() != nullptr && !(f->Readiness(want) & want)) {
    return Errno(EAGAIN);
  }
  return Ok();
}

}  // namespace

// preadv2/pwritev2: x86-64 passes the whole offset in `off` (pos_h is for 32-bit ABIs); -1
// means the file offset, as readv/writev.
Result<uint64_t> SysPreadv2(Task& t, int fd, GuestAddr iov, int iovcnt, int64_t off,
                            int64_t off_high, int flags) {
  (void)off_high;
  if (off < -1) return Errno(EINVAL);
  auto f = SENTRY_TRY(GetFile(t, fd));
  auto b = SENTRY_TRY(CopyInIovecs(t, iov, iovcnt));
  if (!f->Readable()) return Errno(EBADF);
  if (flags & ~kRwfSupported) return Errno(EOPNOTSUPP);
  SENTRY_TRY(CheckNowait(f, flags, kEventIn));
  return DoRead(t, f, b, off);
}

Result<uint64_t> SysPwritev2(Task& t, int fd, GuestAddr iov, int iovcnt, int64_t off,
                             int64_t off_high, int flags) {
  (void)off_high;
  if (off < -1) return Errno(EINVAL);
  auto f = SENTRY_TRY(GetFile(t, fd));
  auto b = SENTRY_TRY(CopyInIovecs(t, iov, iovcnt));
  if (!f->Writable()) return Errno(EBADF);
  if (flags & ~kRwfSupported) return Errno(EOPNOTSUPP);
  SENTRY_TRY(CheckNowait(f, flags, kEventOut));
  // RWF_APPEND: at the end of a regular file, whatever `off` says; with -1 the file offset
  // then ends up after the data, as an O_APPEND write leaves it.
  const vfs::InodeRef& ino = f->inode();
  bool append = (flags & kRwfAppend) && ino && S_ISREG(ino->Type());
  int64_t at = off;
  if (append) {
    struct stat st;
    SENTRY_TRY(f->Stat(&st));
    at = st.st_size;
  }
  uint64_t n = SENTRY_TRY(DoWrite(t, f, b, at));
  if (append && off == -1) SENTRY_TRY(f->Seek(at + static_cast<int64_t>(n), SEEK_SET));
  if (flags & (kRwfDsync | kRwfSync)) SENTRY_TRY(f->Sync(!(flags & kRwfSync)));
  return n;
}

Result<uint64_t> SysLseek(Task& t, int fd, int64_t off, int whence) {
  auto f = SENTRY_TRY(GetFile(t, fd));
  if (whence < 0 || whence > 4) return Errno(EINVAL);
  return f->Seek(off, whence);
}

}  // namespace sentry::syscalls
