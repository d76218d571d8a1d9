// The wire format between the Sentry (client.cc) and the gofer (server.cc).
//
// Transport: a connected AF_UNIX SOCK_SEQPACKET socket; one message per request and one per
// reply, in order, one request in flight. Both ends are the same binary, so fixed-size
// structs (struct stat, struct statfs, SetAttrRequest) travel raw.
//
//   request: u32 op, then the op's arguments
//   reply:   i32 errno (0 = success), then the op's results if errno == 0; at most one fd
//            rides along as SCM_RIGHTS (Open, Create, WalkOpen)
//
// Strings are u32 length + bytes. kClose is one-way: it has no reply. Right after start-up the
// gofer sends one unsolicited reply (errno 0, payload kHello) to say it is serving.
//
// Arguments and results per op (h = u64 handle, st = struct stat):
//   kAttach      str name                            -> h, st, u8 read_only
//   kWalk        h dir, str name                     -> h, st
//   kStat        h                                   -> st
//   kOpen        h, i32 flags                        -> (fd)
//   kCreate      h dir, str name, i32 flags, u32 mode, u32 uid, u32 gid -> h, st, (fd)
//   kMkdir       h dir, str name, u32 mode, u32 uid, u32 gid -> h, st
//   kSymlink     h dir, str name, str target, u32 uid, u32 gid -> h, st
//   kMknod       h dir, str name, u32 mode, u32 uid, u32 gid -> h, st
//   kLink        h dir, str name, h target           -> ()
//   kUnlink      h dir, str name, i32 flags          -> ()
//   kRename      h old_dir, str old, h new_dir, str new, u32 flags -> ()
//   kReadLink    h                                   -> str target
//   kSetAttr     h, SetAttrRequest                   -> st
//   kReadDir     h dir, u64 offset                   -> u8 eof, u64 next_offset, u32 n,
//                                                       n x (str name, u64 ino, u8 type)
//   kStatFs      h                                   -> struct statfs
//   kGetXattr    h, str name                         -> str value
//   kListXattr   h                                   -> str names (each NUL-terminated)
//   kSetXattr    h, str name, str value, i32 flags   -> ()
//   kRemoveXattr h, str name                         -> ()
//   kClose       h                                   (no reply)
//   kWalkOpen    h dir, str name                     -> h, st, (fd: a regular file opened
//                                                       read-only, when the host allows it)
//   kDonateRoot  str name                            -> u8 read_only, u8 submounts (0 auto,
//                                                       1 none), (fd: the attach root)
//   kLend        u32 call, its arguments (lend.cc)    -> ()   (fds: one or two, lent)
//   kPlace       u32 cpu                             (no reply; the gofer pins itself there)
//
// kReadDir is paged: the client repeats it with next_offset until eof; offsets are the host
// directory's own d_off cookies.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include "sentry/base/errno.h"

namespace sentry::gofer {

enum class Op : uint32_t {
  kAttach = 1,
  kWalk,
  kStat,
  kOpen,
  kCreate,
  kMkdir,
  kSymlink,
  kMknod,
  kLink,
  kUnlink,
  kRename,
  kReadLink,
  kSetAttr,
  kReadDir,
  kStatFs,
  kGetXattr,
  kListXattr,
  kSetXattr,
  kRemoveXattr,
  kClose,
  kWalkOpen,  // a walk for an open: saves the kOpen round trip that would follow
  // Direct file access (client.h, Client::GoDirect): the Sentry takes an attach root's
  // directory fd and serves that attach point itself from then on.
  kDonateRoot,
  // Direct file access: one change of the host file system (server_internal.h: Mutations)
  // on the directory or file fds the Sentry lends with the request.
  kLend,
  // The client's CPU changed: the gofer moves itself there, so that a round trip wakes it on
  // the caller's core (client.h, set_follow_caller).
  kPlace,
};

// The calls of kLend (gofer/lend.cc), and the fds each lends.
enum class LendOp : uint32_t {
  kMkdir = 1,   // dir; str name, u32 mode
  kMknod,       // dir; str name, u32 mode
  kSymlink,     // dir; str target, str name
  kLink,        // old dir, new dir; str old name, str new name
  kUnlink,      // dir; str name, i32 flags
  kRename,      // old dir, new dir; str old name, str new name, u32 flags
  kChown,       // dir; str name, u32 uid, u32 gid, i32 flags
  kChmod,       // dir; str name, u32 mode, i32 flags
  kClearBits,   // file; u32 mode
  kUtimes,      // dir; str name, timespec atime, timespec mtime, i32 flags
  kSetXattr,    // file or dir; str name, str value, i32 flags
  kRemoveXattr  // file or dir; str name
};

// Upper bound of one message either way: a 64 KiB xattr value plus its name and header.
inline constexpr size_t kMaxMessage = 72 * 1024;
// getdents64 buffer per kReadDir page; its encoding is never larger than the raw dirents.
inline constexpr size_t kReadDirChunk = 48 * 1024;
inline constexpr std::string_view kHello = "gofer-ready";

// Appends little fixed-size fields and length-prefixed strings to a message.
class Writer {
 public:
  template <typename T>
  Writer& Raw(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    size_t at = out_.size();
    out_.resize(at + sizeof(T));
    memcpy(out_.data() + at, &v, sizeof(T));
    return *this;
  }
  Writer& U8(uint8_t v) { return Raw(v); }
  Writer& U32(uint32_t v) { return Raw(v); }
  Writer& I32(int32_t v) { return Raw(v); }
  Writer& U64(uint64_t v) { return Raw(v); }
  // Appends bytes as they are, without a length.
  Writer& Bytes(std::string_view s) {
    out_.append(s.data(), s.size());
    return *this;
  }
  Writer& Str(std::string_view s) {
    U32(static_cast<uint32_t>(s.size()));
    out_.append(s.data(), s.size());
    return *this;
  }

  const std::string& data() const { return out_; }
  std::string Take() { return std::move(out_); }
  size_t size() const { return out_.size(); }

 private:
  std::string out_;
};

// Reads fields back. A read past the end sets !ok() and yields zeros, so a caller may decode
// a whole message and check ok() once at the end.
class Reader {
 public:
  Reader(const char* p, size_t n) : p_(p), end_(p + n) {}
  explicit Reader(std::string_view s) : Reader(s.data(), s.size()) {}

  template <typename T>
  T Raw() {
    static_assert(std::is_trivially_copyable_v<T>);
    T v{};
    Copy(&v, sizeof(T));
    return v;
  }
  uint8_t U8() { return Raw<uint8_t>(); }
  uint32_t U32() { return Raw<uint32_t>(); }
  int32_t I32() { return Raw<int32_t>(); }
  uint64_t U64() { return Raw<uint64_t>(); }
  std::string Str() {
    uint32_t n = U32();
    if (static_cast<size_t>(end_ - p_) < n) {
      ok_ = false;
      p_ = end_;
      return {};
    }
    std::string s(p_, n);
    p_ += n;
    return s;
  }

  bool ok() const { return ok_; }
  bool done() const { return p_ == end_; }

 private:
  // Copies the next `n` bytes to `dst`, or fails the reader. Out of line: inlined into
  // callers, GCC cannot see the bounds check and warns about reading past a std::string.
  void Copy(void* dst, size_t n);

  const char* p_;
  const char* end_;
  bool ok_ = true;
};

// Sends one message, with `fd` (and then `fd2`) attached if >= 0 (the caller keeps its
// copies). Retries EINTR, never raises SIGPIPE. Returns 0 or an errno.
int SendMessage(int sock, std::string_view msg, int fd = -1, int fd2 = -1);

// Receives one message of at most `cap` bytes into `buf`. On success returns 0, sets `*len`
// and, if the message carried an fd, `*fd` (close-on-exec; otherwise -1). Returns ECONNRESET
// on EOF, EMSGSIZE if the message or its control data was truncated (any fd received is
// closed), or the socket's errno. An fd the host could not install because the receiver is
// out of fds (MSG_CTRUNC with no fd received, the message whole) is not a protocol failure:
// the message is returned with `*fd` == kFdLost. A second fd goes to `*fd2` if given (-1 if
// none came), else it is closed.
inline constexpr int kFdLost = -2;
int RecvMessage(int sock, char* buf, size_t cap, size_t* len, int* fd, int* fd2 = nullptr);

// The client's check of a reply (errno first, then the op's results), from the gofer or
// from the server in direct mode: returns the results, or the errno (EIO if malformed).
// `fd` is the fd that came with it, -1 or kFdLost; it goes to `*fd_out` if that is set,
// else it is closed. Implemented in client.cc.
Result<std::string> DecodeReply(const char* buf, size_t len, int fd, int* fd_out);

}  // namespace sentry::gofer
