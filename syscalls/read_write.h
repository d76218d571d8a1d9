// The read and write family's guest-buffer plumbing, shared with io_submit (sys_aio.cc).
#pragma once

#include <sys/uio.h>

#include <vector>

#include "syscalls/common.h"

namespace sentry::syscalls {

inline constexpr size_t kMaxRw = 0x7ffff000;  // MAX_RW_COUNT

// The guest buffer of a read or write: one range for read/write, the iovecs for readv/writev.
struct GuestBuffer {
  std::vector<struct iovec> segs;
  size_t total = 0;  // sum of the lengths, at most kMaxRw

  // Copies guest bytes [at, at + dst.size()) into dst; returns how many were readable.
  size_t CopyIn(Task& t, size_t at, std::span<uint8_t> dst) const {
    return Transfer(t, at, dst.data(), dst.size(), false);
  }
  // Copies src into guest bytes [at, ...); returns how many were writable.
  size_t CopyOut(Task& t, size_t at, std::span<const uint8_t> src) const {
    return Transfer(t, at, const_cast<uint8_t*>(src.data()), src.size(), true);
  }

 private:
  size_t Transfer(Task& t, size_t at, uint8_t* host, size_t len, bool out) const {
    size_t done = 0;
    for (const auto& s : segs) {
      if (done == len) break;
      if (at >= s.iov_len) {
        at -= s.iov_len;
        continue;
      }
      uint64_t addr = reinterpret_cast<uint64_t>(s.iov_base) + at;
      size_t n = std::min(s.iov_len - at, len - done);
      at = 0;
      if (addr + n < addr) return done;
      size_t got = out ? t.mm().as().WriteMemory(GuestAddr(addr), {host + done, n})
                       : t.mm().as().ReadMemory(GuestAddr(addr), {host + done, n});
      done += got;
      if (got < n) break;
    }
    return done;
  }
};

// One guest range, cut to kMaxRw as Linux does.
GuestBuffer OneRange(GuestAddr buf, size_t count);
// The `iovcnt` iovecs at `addr`: EINVAL for a count past 1024 or a negative length, EFAULT.
Result<GuestBuffer> CopyInIovecs(Task& t, GuestAddr addr, int iovcnt);
// Reads into / writes from the guest buffer, positionally when off >= 0, else at the file
// offset. EBADF when the file is not open for it; errors after some bytes give the count.
Result<uint64_t> DoRead(Task& t, const vfs::FileRef& f, const GuestBuffer& b, int64_t off);
Result<uint64_t> DoWrite(Task& t, const vfs::FileRef& f, const GuestBuffer& b, int64_t off);

}  // namespace sentry::syscalls
