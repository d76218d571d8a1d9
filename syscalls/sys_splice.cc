// sendfile, splice, tee and copy_file_range: moving bytes between two files without a trip
// through guest memory. Pipe contents are peeked, written on and only then consumed, so a
// failed write loses nothing; other files go through a Sentry buffer in chunks.
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>

#include "syscalls/common.h"
#include "vfs/inotify.h"
#include "vfs/pipe.h"

namespace sentry::syscalls {
namespace {

constexpr size_t kMaxRw = 0x7ffff000;  // MAX_RW_COUNT
constexpr size_t kChunk = 64 * 1024;
constexpr unsigned kSpliceFlags = SPLICE_F_MOVE | SPLICE_F_NONBLOCK | SPLICE_F_MORE | SPLICE_F_GIFT;

// One side of a transfer: the file, its pipe if it is one, and where in it (an explicit
// offset, or the file position when `has_off` is false).
struct End {
  vfs::FileRef file;
  std::shared_ptr<vfs::Pipe> pipe;
  bool has_off = false;
  int64_t off = 0;
};

Result<End> GetEnd(Task& t, int fd) {
  End e;
  e.file = SENTRY_TRY(GetFile(t, fd));
  e.pipe = vfs::PipeOf(*e.file);
  return e;
}

// Reads the guest's loff_t at `addr` into `e` (no-op for a null pointer). The caller checks
// its sign (EINVAL), at the point Linux does.
Result<void> CopyInOffset(Task& t, GuestAddr addr, End& e) {
  if (addr.IsNull()) return Ok();
  e.off = SENTRY_TRY(t.CopyIn<int64_t>(addr));
  e.has_off = true;
  return Ok();
}

Result<void> CopyOutOffset(Task& t, GuestAddr addr, const End& e) {
  if (addr.IsNull()) return Ok();
  return t.CopyOut(addr, e.off);
}

Result<size_t> ReadFrom(Task& t, End& in, std::span<uint8_t> dst) {
  if (!in.has_off) return in.file->Read(t, dst);
  size_t n = SENTRY_TRY(in.file->PRead(t, dst, static_cast<uint64_t>(in.off)));
  in.off += static_cast<int64_t>(n);
  return n;
}

Result<size_t> WriteTo(Task& t, End& out, std::span<const uint8_t> src) {
  SENTRY_TRY(RemovePrivsForWrite(t, out.file));
  if (!out.has_off) return out.file->Write(t, src);
  size_t n = SENTRY_TRY(out.file->PWrite(t, src, static_cast<uint64_t>(out.off)));
  out.off += static_cast<int64_t>(n);
  return n;
}

bool NonBlocking(const End& e, unsigned flags) {
  return (flags & SPLICE_F_NONBLOCK) || e.file->NonBlocking();
}

// A file into a pipe: reads no more than the pipe can take, so nothing read is lost.
Result<size_t> FileToPipe(Task& t, End& in, End& out, size_t len, unsigned flags) {
  size_t room = SENTRY_TRY(out.pipe->WaitRoom(t, NonBlocking(out, flags)));
  std::vector<uint8_t> buf(std::min(len, room));
  size_t n = SENTRY_TRY(ReadFrom(t, in, buf));
  if (n == 0) return n;
  return out.pipe->Write(t, {buf.data(), n}, /*nonblock=*/true);
}

// A pipe into a file or another pipe; `consume` is false for tee.
Result<size_t> FromPipe(Task& t, End& in, End& out, size_t len, unsigned flags, bool consume) {
  size_t avail = SENTRY_TRY(in.pipe->WaitData(t, NonBlocking(in, flags)));
  if (avail == 0) return avail;
  if (out.pipe) avail = std::min(avail, SENTRY_TRY(out.pipe->WaitRoom(t, NonBlocking(out, flags))));
  std::vector<uint8_t> buf(std::min(len, avail));
  size_t n = in.pipe->Peek(buf);
  size_t done = out.pipe ? SENTRY_TRY(out.pipe->Write(t, {buf.data(), n}, /*nonblock=*/true))
                         : SENTRY_TRY(WriteTo(t, out, {buf.data(), n}));
  if (consume) in.pipe->Consume(done);
  return done;
}

// Moves `in`'s position back by `n` bytes that were read but not delivered.
void GiveBack(End& in, size_t n) {
  if (in.has_off) {
    in.off -= static_cast<int64_t>(n);
  } else {
    (void)in.file->Seek(-static_cast<int64_t>(n), SEEK_CUR);
  }
}

// sendfile's loop: file to file (or pipe) in chunks until `count`, end of file, or a
// destination that cannot take more without blocking after some progress.
Result<size_t> Transfer(Task& t, End& in, End& out, size_t count) {
  size_t done = 0;
  std::vector<uint8_t> buf;
  while (done < count) {
    size_t want = std::min(count - done, kChunk);
    Result<size_t> r = size_t{0};
    if (out.pipe) {
      r = FileToPipe(t, in, out, want, done ? SPLICE_F_NONBLOCK : 0);
    } else {
      buf.resize(want);
      r = ReadFrom(t, in, buf);
      if (r.ok() && *r > 0) {
        size_t got = *r;
        // A destination that takes less (a nonblocking socket, a full disk) must not lose
        // the rest: the input goes back to just past what was written.
        r = WriteTo(t, out, {buf.data(), got});
        size_t unwritten = got - (r.ok() ? *r : 0);
        if (unwritten > 0) GiveBack(in, unwritten);
        if (r.ok() && *r < got) {
          done += *r;
          break;
        }
      }
    }
    if (!r.ok()) {
      if (done) return done;
      return r.error();
    }
    if (*r == 0) break;
    done += *r;
  }
  return done;
}

// inotify: a transfer of `n` bytes read `in` and modified `out`.
void NotifyMoved(const End& in, const End& out, size_t n) {
  if (n == 0) return;
  vfs::NotifyFile(*in.file, IN_ACCESS);
  vfs::NotifyFile(*out.file, IN_MODIFY);
}

// The errno of a failed transfer; EPIPE also raises SIGPIPE, as a write would.
Errno Failed(Task& t, const Errno& e) {
  if (e == EPIPE) RaiseSigpipe(t);
  return e;
}

}  // namespace

Result<uint64_t> SysSendfile(Task& t, int out_fd, int in_fd, GuestAddr offset, size_t count) {
  End in = SENTRY_TRY(GetEnd(t, in_fd));
  if (!in.file->Readable()) return Errno(EBADF);
  if (!offset.IsNull()) {
    if (in.pipe || !in.file->Seek(0, SEEK_CUR).ok()) return Errno(ESPIPE);
    SENTRY_TRY(CopyInOffset(t, offset, in));
    if (in.off < 0) return Errno(EINVAL);
  }
  End out = SENTRY_TRY(GetEnd(t, out_fd));
  if (!out.file->Writable()) return Errno(EBADF);
  if (in.pipe || (!out.pipe && (out.file->flags() & O_APPEND))) return Errno(EINVAL);
  auto r = Transfer(t, in, out, std::min(count, kMaxRw));
  if (!r.ok()) return Failed(t, r.error());
  NotifyMoved(in, out, *r);
  SENTRY_TRY(CopyOutOffset(t, offset, in));
  return *r;
}

Result<uint64_t> SysSplice(Task& t, int fd_in, GuestAddr off_in, int fd_out, GuestAddr off_out,
                           size_t len, unsigned flags) {
  if (len == 0) return 0;
  if (flags & ~kSpliceFlags) return Errno(EINVAL);
  End in = SENTRY_TRY(GetEnd(t, fd_in));
  End out = SENTRY_TRY(GetEnd(t, fd_out));
  if ((in.pipe && !off_in.IsNull()) || (out.pipe && !off_out.IsNull())) return Errno(ESPIPE);
  SENTRY_TRY(CopyInOffset(t, off_in, in));
  SENTRY_TRY(CopyInOffset(t, off_out, out));
  if (!in.file->Readable() || !out.file->Writable()) return Errno(EBADF);
  if (!in.pipe && !out.pipe) return Errno(EINVAL);
  if (in.pipe && in.pipe == out.pipe) return Errno(EINVAL);
  if (!out.pipe && (out.file->flags() & O_APPEND)) return Errno(EINVAL);
  if (in.off < 0 || out.off < 0) return Errno(EINVAL);
  len = std::min(len, kMaxRw);
  auto r = in.pipe ? FromPipe(t, in, out, len, flags, /*consume=*/true)
                   : FileToPipe(t, in, out, std::min(len, vfs::kPipeCapacity), flags);
  if (!r.ok()) return Failed(t, r.error());
  NotifyMoved(in, out, *r);
  SENTRY_TRY(CopyOutOffset(t, off_in, in));
  SENTRY_TRY(CopyOutOffset(t, off_out, out));
  return *r;
}

Result<uint64_t> SysTee(Task& t, int fd_in, int fd_out, size_t len, unsigned flags) {
  if (flags & ~kSpliceFlags) return Errno(EINVAL);  // before the length, unlike splice
  if (len == 0) return 0;
  End in = SENTRY_TRY(GetEnd(t, fd_in));
  End out = SENTRY_TRY(GetEnd(t, fd_out));
  if (!in.file->Readable() || !out.file->Writable()) return Errno(EBADF);
  if (!in.pipe || !out.pipe || in.pipe == out.pipe) return Errno(EINVAL);
  auto r = FromPipe(t, in, out, std::min(len, kMaxRw), flags, /*consume=*/false);
  if (!r.ok()) return Failed(t, r.error());
  return *r;
}

Result<uint64_t> SysCopyFileRange(Task& t, int fd_in, GuestAddr off_in, int fd_out,
                                  GuestAddr off_out, size_t len, unsigned flags) {
  End in = SENTRY_TRY(GetEnd(t, fd_in));
  End out = SENTRY_TRY(GetEnd(t, fd_out));
  SENTRY_TRY(CopyInOffset(t, off_in, in));
  SENTRY_TRY(CopyInOffset(t, off_out, out));
  if (flags != 0) return Errno(EINVAL);
  struct stat sin, sout;
  SENTRY_TRY(in.file->Stat(&sin));
  SENTRY_TRY(out.file->Stat(&sout));
  if (S_ISDIR(sin.st_mode) || S_ISDIR(sout.st_mode)) return Errno(EISDIR);
  if (!S_ISREG(sin.st_mode) || !S_ISREG(sout.st_mode)) return Errno(EINVAL);
  if (!in.file->Readable() || !out.file->Writable() || (out.file->flags() & O_APPEND)) {
    return Errno(EBADF);
  }
  auto wraps = [len](int64_t off) {
    return static_cast<uint64_t>(off) + len < static_cast<uint64_t>(off);
  };
  if (wraps(in.off) || wraps(out.off)) return Errno(EOVERFLOW);
  if (in.off < 0 || out.off < 0) return Errno(EINVAL);
  // Where the copy starts, for the end-of-file and overlap checks. Without an offset the
  // transfer itself goes through the file position (Read/Write), which any file has.
  auto start = [](const End& e) -> int64_t {
    if (e.has_off) return e.off;
    auto pos = e.file->Seek(0, SEEK_CUR);
    return pos.ok() ? static_cast<int64_t>(*pos) : 0;
  };
  int64_t in_at = start(in), out_at = start(out);
  uint64_t left = sin.st_size > in_at ? static_cast<uint64_t>(sin.st_size - in_at) : 0;
  len = std::min<uint64_t>({len, left, kMaxRw});
  bool same = sin.st_dev == sout.st_dev && sin.st_ino == sout.st_ino;
  if (same && out_at + static_cast<int64_t>(len) > in_at &&
      out_at < in_at + static_cast<int64_t>(len)) {
    return Errno(EINVAL);
  }
  size_t done = len ? SENTRY_TRY(Transfer(t, in, out, len)) : 0;
  NotifyMoved(in, out, done);
  SENTRY_TRY(CopyOutOffset(t, off_in, in));
  SENTRY_TRY(CopyOutOffset(t, off_out, out));
  return done;
}

}  // namespace sentry::syscalls
