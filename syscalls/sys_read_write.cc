// read, write and their vectored and positional variants.
#include <sys/uio.h>

#include "syscalls/common.h"
#include "vfs/inotify.h"

namespace sentry::syscalls {
namespace {

constexpr size_t kMaxRw = 0x7ffff000;  // MAX_RW_COUNT

Result<std::vector<struct iovec>> CopyInIovecs(Task& t, GuestAddr addr, int iovcnt) {
  if (iovcnt < 0 || iovcnt > 1024) return Errno(EINVAL);
  std::vector<struct iovec> v(iovcnt);
  if (iovcnt) {
    SENTRY_TRY(t.CopyInBytes(addr, {reinterpret_cast<uint8_t*>(v.data()), v.size() * sizeof(struct iovec)}));
  }
  size_t total = 0;
  for (auto& i : v) {
    if (static_cast<ssize_t>(i.iov_len) < 0) return Errno(EINVAL);
    total += i.iov_len;
    if (total > kMaxRw) return Errno(EINVAL);
  }
  return v;
}

// Reads the guest buffers of `v` into one host buffer (for writev-style calls).
Result<std::vector<uint8_t>> Gather(Task& t, const std::vector<struct iovec>& v) {
  std::vector<uint8_t> data;
  for (auto& i : v) {
    size_t at = data.size();
    data.resize(at + i.iov_len);
    SENTRY_TRY(t.CopyInBytes(GuestAddr(reinterpret_cast<uint64_t>(i.iov_base)), {data.data() + at, i.iov_len}));
  }
  return data;
}

// Spreads the first `n` bytes of `data` over the guest buffers of `v` (readv-style calls).
Result<void> Scatter(Task& t, const std::vector<struct iovec>& v, const std::vector<uint8_t>& data,
                     size_t n) {
  size_t done = 0;
  for (auto& i : v) {
    size_t c = std::min(i.iov_len, n - done);
    if (c == 0) break;
    SENTRY_TRY(t.CopyOutBytes(GuestAddr(reinterpret_cast<uint64_t>(i.iov_base)), {data.data() + done, c}));
    done += c;
  }
  return Ok();
}

size_t TotalLength(const std::vector<struct iovec>& v) {
  size_t total = 0;
  for (auto& i : v) total += i.iov_len;
  return total;
}

// Reads into a host buffer, then copies out (positional when off >= 0).
Result<uint64_t> DoRead(Task& t, const vfs::FileRef& f, GuestAddr buf, size_t count,
                        int64_t off) {
  if (!f->Readable()) return Errno(EBADF);
  count = std::min(count, kMaxRw);
  std::vector<uint8_t> data(std::min<size_t>(count, 1 << 20));
  size_t n = off >= 0 ? SENTRY_TRY(f->PRead(t, data, off)) : SENTRY_TRY(f->Read(t, data));
  if (n > 0) vfs::NotifyFile(*f, IN_ACCESS);
  SENTRY_TRY(t.CopyOutBytes(buf, {data.data(), n}));
  return n;
}

Result<uint64_t> DoWrite(Task& t, const vfs::FileRef& f, GuestAddr buf, size_t count,
                         int64_t off) {
  if (!f->Writable()) return Errno(EBADF);
  count = std::min(count, kMaxRw);
  std::vector<uint8_t> data(count);
  SENTRY_TRY(t.CopyInBytes(buf, data));
  SENTRY_TRY(RemovePrivsForWrite(t, f));
  auto r = off >= 0 ? f->PWrite(t, data, off) : f->Write(t, data);
  if (!r.ok() && r.error() == EPIPE) RaiseSigpipe(t);
  if (!r.ok()) return r.error();
  if (*r > 0) vfs::NotifyFile(*f, IN_MODIFY);
  return *r;
}

}  // namespace

Result<void> RemovePrivsForWrite(Task& t, const vfs::FileRef& f) {
  const vfs::InodeRef& ino = f->inode();
  if (!ino || !S_ISREG(ino->Type())) return Ok();
  {
    absl::MutexLock l(&t.kernel().mu());
    if (t.tg().creds.fsuid == 0) return Ok();  // CAP_FSETID
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
  return DoRead(t, f, buf, count, -1);
}

Result<uint64_t> SysWrite(Task& t, int fd, GuestAddr buf, size_t count) {
  auto f = SENTRY_TRY(GetFile(t, fd));
  return DoWrite(t, f, buf, count, -1);
}

Result<uint64_t> SysPread64(Task& t, int fd, GuestAddr buf, size_t count, int64_t off) {
  auto f = SENTRY_TRY(GetFile(t, fd));
  if (off < 0) return Errno(EINVAL);
  return DoRead(t, f, buf, count, off);
}

Result<uint64_t> SysPwrite64(Task& t, int fd, GuestAddr buf, size_t count, int64_t off) {
  auto f = SENTRY_TRY(GetFile(t, fd));
  if (off < 0) return Errno(EINVAL);
  return DoWrite(t, f, buf, count, off);
}

Result<uint64_t> SysReadv(Task& t, int fd, GuestAddr iov, int iovcnt) {
  auto f = SENTRY_TRY(GetFile(t, fd));
  auto v = SENTRY_TRY(CopyInIovecs(t, iov, iovcnt));
  // One read into a host buffer, scattered afterwards: the read is atomic as a whole.
  if (!f->Readable()) return Errno(EBADF);
  std::vector<uint8_t> data(TotalLength(v));
  size_t n = SENTRY_TRY(f->Read(t, data));
  if (n > 0) vfs::NotifyFile(*f, IN_ACCESS);
  SENTRY_TRY(Scatter(t, v, data, n));
  return n;
}

Result<uint64_t> SysWritev(Task& t, int fd, GuestAddr iov, int iovcnt) {
  auto f = SENTRY_TRY(GetFile(t, fd));
  auto v = SENTRY_TRY(CopyInIovecs(t, iov, iovcnt));
  if (!f->Writable()) return Errno(EBADF);
  std::vector<uint8_t> data = SENTRY_TRY(Gather(t, v));
  SENTRY_TRY(RemovePrivsForWrite(t, f));
  auto r = f->Write(t, data);
  if (!r.ok() && r.error() == EPIPE) RaiseSigpipe(t);
  if (!r.ok()) return r.error();
  if (*r > 0) vfs::NotifyFile(*f, IN_MODIFY);
  return *r;
}

Result<uint64_t> SysPreadv(Task& t, int fd, GuestAddr iov, int iovcnt, int64_t off) {
  auto f = SENTRY_TRY(GetFile(t, fd));
  auto v = SENTRY_TRY(CopyInIovecs(t, iov, iovcnt));
  if (off < 0) return Errno(EINVAL);
  if (!f->Readable()) return Errno(EBADF);
  std::vector<uint8_t> data(TotalLength(v));
  size_t n = SENTRY_TRY(f->PRead(t, data, off));
  if (n > 0) vfs::NotifyFile(*f, IN_ACCESS);
  SENTRY_TRY(Scatter(t, v, data, n));
  return n;
}

Result<uint64_t> SysPwritev(Task& t, int fd, GuestAddr iov, int iovcnt, int64_t off) {
  auto f = SENTRY_TRY(GetFile(t, fd));
  auto v = SENTRY_TRY(CopyInIovecs(t, iov, iovcnt));
  if (off < 0) return Errno(EINVAL);
  if (!f->Writable()) return Errno(EBADF);
  std::vector<uint8_t> data = SENTRY_TRY(Gather(t, v));
  SENTRY_TRY(RemovePrivsForWrite(t, f));
  size_t n = SENTRY_TRY(f->PWrite(t, data, off));
  if (n > 0) vfs::NotifyFile(*f, IN_MODIFY);
  return n;
}

Result<uint64_t> SysLseek(Task& t, int fd, int64_t off, int whence) {
  auto f = SENTRY_TRY(GetFile(t, fd));
  if (whence < 0 || whence > 4) return Errno(EINVAL);
  return f->Seek(off, whence);
}

}  // namespace sentry::syscalls
