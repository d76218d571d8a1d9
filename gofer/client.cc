// The Sentry's side of the gofer protocol (see protocol.h for the wire format).
//
// The gofer is less trusted than the Sentry: every reply is bounds-checked, a malformed one
// yields EIO, and an errno outside 1..4095 is reported as EIO.
#include "gofer/client.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <utility>

#include "gofer/protocol.h"
#include "gofer/server_internal.h"

namespace sentry::gofer {
namespace {

constexpr int kMaxErrno = 4095;

uint32_t Code(Op op) { return static_cast<uint32_t>(op); }

// Decodes "h, st" into a Node; EIO if malformed.
Result<Node> ReadNode(Reader& r) {
  Node n;
  n.handle = r.U64();
  n.st = r.Raw<struct stat>();
  if (!r.ok() || n.handle == 0) return Errno(EIO);
  return n;
}

// Decodes a reply that is exactly "h, st".
Result<Node> NodeReply(Result<std::string> reply) {
  std::string payload = SENTRY_TRY(std::move(reply));
  Reader r(payload);
  Node n = SENTRY_TRY(ReadNode(r));
  if (!r.done()) return Errno(EIO);
  return n;
}

Result<void> EmptyReply(Result<std::string> reply) {
  SENTRY_TRY(std::move(reply));
  return Ok();
}

template <typename T>
Result<T> RawReply(Result<std::string> reply) {
  std::string payload = SENTRY_TRY(std::move(reply));
  Reader r(payload);
  T v = r.Raw<T>();
  if (!r.ok() || !r.done()) return Errno(EIO);
  return v;
}

Result<std::string> StrReply(Result<std::string> reply) {
  std::string payload = SENTRY_TRY(std::move(reply));
  Reader r(payload);
  std::string s = r.Str();
  if (!r.ok() || !r.done()) return Errno(EIO);
  return s;
}

}  // namespace

// Checks a reply (errno first) from the gofer or the local server and returns its payload;
// `fd` is the fd that came with it (or -1, or kFdLost), given to `fd_out` or closed.
Result<std::string> DecodeReply(const char* buf, size_t len, int fd, int* fd_out) {
  Reader r(buf, len);
  int32_t err = r.I32();
  if (!r.ok() || err < 0 || err > kMaxErrno || (err != 0 && fd >= 0)) {
    if (fd >= 0) close(fd);
    return Errno(EIO);
  }
  if (err != 0) return Errno(err);
  // The gofer sent an fd that this process had no room for (kFdLost): the reply stands, the
  // caller sees the fd as lost (Open fails with EMFILE or ENFILE).
  if (fd == kFdLost && fd_out == nullptr) fd = -1;
  if (fd_out != nullptr) {
    *fd_out = fd;
  } else if (fd >= 0) {
    close(fd);
  }
  return std::string(buf + sizeof(int32_t), len - sizeof(int32_t));
}

Client::Client(int sock) : sock_(sock) {}

Client::~Client() {
  if (watcher_.joinable()) {
    uint64_t one = 1;
    (void)!write(watcher_wake_, &one, sizeof(one));
    watcher_.join();
  }
  if (watcher_wake_ >= 0) close(watcher_wake_);
  if (sock_ >= 0) close(sock_);
}

bool Client::MarkDeadLocked() { return !dead_.exchange(true, std::memory_order_acq_rel); }

Result<std::string> Client::Call(uint32_t op, const std::string& request, int* fd_out, int lend,
                                 int lend2) {
  if (fd_out != nullptr) *fd_out = -1;
  if (dead()) return Errno(EIO);
  // A request that lends fds is for the gofer itself (kLend), never the local server.
  if (lend < 0 && local_ != nullptr && IsLocal(op, request)) {
    return CallLocal(op, request, fd_out);
  }
  bool died = false;
  Result<std::string> r = Errno(EIO);
  {
    absl::MutexLock lock(&mu_);
    r = CallLocked(op, request, fd_out, &died, lend, lend2);
  }
  if (died && on_death_) on_death_();
  return r;
}

Result<std::string> Client::CallLocked(uint32_t op, const std::string& request, int* fd_out,
                                       bool* died, int lend, int lend2) {
  if (dead()) return Errno(EIO);
  FollowCallerLocked();
  Writer w;
  w.U32(op);
  std::string msg = w.Take() + request;
  if (SendMessage(sock_, msg, lend, lend2) != 0) {
    *died = MarkDeadLocked();
    return Errno(EIO);
  }
  if (reply_buf_.empty()) reply_buf_.resize(kMaxMessage);
  size_t len = 0;
  int fd = -1;
  if (RecvMessage(sock_, reply_buf_.data(), reply_buf_.size(), &len, &fd) != 0) {
    // EOF, a socket error or a reply we cannot have asked for: the stream is unusable.
    *died = MarkDeadLocked();
    return Errno(EIO);
  }
  return DecodeReply(reply_buf_.data(), len, fd, fd_out);
}

void Client::FollowCallerLocked() {
  if (!follow_caller_) return;
  int cpu = sched_getcpu();
  if (cpu < 0 || cpu == peer_cpu_ || cpu >= CPU_SETSIZE) return;
  // One-way, ahead of the request. A gofer that cannot move (a CPU taken away) only costs
  // speed; one that is gone fails the request that follows.
  Writer w;
  w.U32(Code(Op::kPlace)).U32(static_cast<uint32_t>(cpu));
  if (SendMessage(sock_, w.Take()) == 0) peer_cpu_ = cpu;
}

void Client::Post(uint32_t op, const std::string& request) {
  if (dead()) return;
  if (local_ != nullptr && IsLocal(op, request)) {
    (void)CallLocal(op, request, nullptr);  // kClose has no reply
    return;
  }
  bool died = false;
  {
    absl::MutexLock lock(&mu_);
    if (dead()) return;
    Writer w;
    w.U32(op);
    if (SendMessage(sock_, w.Take() + request) != 0) died = MarkDeadLocked();
  }
  if (died && on_death_) on_death_();
}

Result<Node> Client::Attach(const std::string& name, bool* read_only) {
  std::string payload = SENTRY_TRY(Call(Code(Op::kAttach), Writer().Str(name).Take(), nullptr));
  Reader r(payload);
  Node n = SENTRY_TRY(ReadNode(r));
  uint8_t ro = r.U8();
  if (!r.ok() || !r.done()) return Errno(EIO);
  if (read_only != nullptr) *read_only = ro != 0;
  return n;
}

Result<Node> Client::Walk(Handle dir, const std::string& name) {
  return NodeReply(Call(Code(Op::kWalk), Writer().U64(dir).Str(name).Take(), nullptr));
}

Result<struct stat> Client::Stat(Handle h) {
  return RawReply<struct stat>(Call(Code(Op::kStat), Writer().U64(h).Take(), nullptr));
}

Result<std::pair<Node, int>> Client::WalkOpen(Handle dir, const std::string& name) {
  int fd = -1;
  Result<Node> n = NodeReply(Call(Code(Op::kWalkOpen), Writer().U64(dir).Str(name).Take(), &fd));
  if (fd == kFdLost) fd = -1;  // the walk stands; the open will ask again
  if (!n.ok()) {
    if (fd >= 0) close(fd);
    return n.error();
  }
  return std::make_pair(*n, fd);
}

namespace {

// Why a donated fd did not arrive: this process is out of fds (EMFILE), or the host is
// (ENFILE). Asked of the host by trying for one.
Errno FdShortage(int sock) {
  int probe = fcntl(sock, F_DUPFD_CLOEXEC, 0);
  if (probe < 0) return Errno(errno == ENFILE ? ENFILE : EMFILE);
  close(probe);
  return Errno(EMFILE);  // there was none a moment ago
}

}  // namespace

Result<int> Client::Open(Handle h, int flags) {
  int fd = -1;
  SENTRY_TRY(Call(Code(Op::kOpen), Writer().U64(h).I32(flags).Take(), &fd));
  if (fd == kFdLost) return FdShortage(sock_);
  if (fd < 0) return Errno(EIO);
  return fd;
}

Result<std::pair<Node, int>> Client::Create(Handle dir, const std::string& name, int flags,
                                            uint32_t mode, uint32_t uid, uint32_t gid) {
  Writer w;
  w.U64(dir).Str(name).I32(flags).U32(mode).U32(uid).U32(gid);
  int fd = -1;
  Result<Node> n = NodeReply(Call(Code(Op::kCreate), w.Take(), &fd));
  if (n.ok() && fd >= 0) return std::make_pair(*n, fd);
  // Created, but no room for its fd here: the caller opens it again when it needs one.
  if (n.ok() && fd == kFdLost) return std::make_pair(*n, -1);
  if (fd >= 0) close(fd);
  if (n.ok()) {
    Close(n->handle);
    return Errno(EIO);
  }
  return n.error();
}

Result<Node> Client::Mkdir(Handle dir, const std::string& name, uint32_t mode, uint32_t uid,
                           uint32_t gid) {
  Writer w;
  w.U64(dir).Str(name).U32(mode).U32(uid).U32(gid);
  return NodeReply(Call(Code(Op::kMkdir), w.Take(), nullptr));
}

Result<Node> Client::Symlink(Handle dir, const std::string& name, const std::string& target,
                             uint32_t uid, uint32_t gid) {
  Writer w;
  w.U64(dir).Str(name).Str(target).U32(uid).U32(gid);
  return NodeReply(Call(Code(Op::kSymlink), w.Take(), nullptr));
}

Result<Node> Client::Mknod(Handle dir, const std::string& name, uint32_t mode, uint32_t uid,
                           uint32_t gid) {
  Writer w;
  w.U64(dir).Str(name).U32(mode).U32(uid).U32(gid);
  return NodeReply(Call(Code(Op::kMknod), w.Take(), nullptr));
}

Result<void> Client::Link(Handle dir, const std::string& name, Handle target) {
  return EmptyReply(Call(Code(Op::kLink), Writer().U64(dir).Str(name).U64(target).Take(), nullptr));
}

Result<void> Client::Unlink(Handle dir, const std::string& name, int flags) {
  return EmptyReply(
      Call(Code(Op::kUnlink), Writer().U64(dir).Str(name).I32(flags).Take(), nullptr));
}

Result<void> Client::Rename(Handle old_dir, const std::string& old_name, Handle new_dir,
                            const std::string& new_name, unsigned flags) {
  Writer w;
  w.U64(old_dir).Str(old_name).U64(new_dir).Str(new_name).U32(flags);
  return EmptyReply(Call(Code(Op::kRename), w.Take(), nullptr));
}

Result<std::string> Client::ReadLink(Handle h) {
  return StrReply(Call(Code(Op::kReadLink), Writer().U64(h).Take(), nullptr));
}

Result<struct stat> Client::SetAttr(Handle h, const SetAttrRequest& req) {
  return RawReply<struct stat>(Call(Code(Op::kSetAttr), Writer().U64(h).Raw(req).Take(), nullptr));
}

Result<std::vector<DirEntry>> Client::ReadDir(Handle dir) {
  std::vector<DirEntry> out;
  uint64_t offset = 0;
  for (;;) {
    std::string payload =
        SENTRY_TRY(Call(Code(Op::kReadDir), Writer().U64(dir).U64(offset).Take(), nullptr));
    Reader r(payload);
    bool eof = r.U8() != 0;
    uint64_t next = r.U64();
    uint32_t n = r.U32();
    for (uint32_t i = 0; i < n && r.ok(); i++) {
      DirEntry e;
      e.name = r.Str();
      e.ino = r.U64();
      e.type = r.U8();
      out.push_back(std::move(e));
    }
    if (!r.ok() || !r.done()) return Errno(EIO);
    // A page that neither ends the directory nor moves the offset would loop forever.
    if (eof || next == offset) return out;
    offset = next;
  }
}

Result<struct statfs> Client::StatFs(Handle h) {
  return RawReply<struct statfs>(Call(Code(Op::kStatFs), Writer().U64(h).Take(), nullptr));
}

Result<std::string> Client::GetXattr(Handle h, const std::string& name) {
  return StrReply(Call(Code(Op::kGetXattr), Writer().U64(h).Str(name).Take(), nullptr));
}

Result<std::vector<std::string>> Client::ListXattr(Handle h) {
  std::string list =
      SENTRY_TRY(StrReply(Call(Code(Op::kListXattr), Writer().U64(h).Take(), nullptr)));
  if (!list.empty() && list.back() != '\0') return Errno(EIO);
  std::vector<std::string> names;
  for (size_t pos = 0; pos < list.size();) {
    size_t end = list.find('\0', pos);
    names.push_back(list.substr(pos, end - pos));
    pos = end + 1;
  }
  return names;
}

Result<void> Client::SetXattr(Handle h, const std::string& name, const std::string& value,
                              int flags) {
  Writer w;
  w.U64(h).Str(name).Str(value).I32(flags);
  return EmptyReply(Call(Code(Op::kSetXattr), w.Take(), nullptr));
}

Result<void> Client::RemoveXattr(Handle h, const std::string& name) {
  return EmptyReply(Call(Code(Op::kRemoveXattr), Writer().U64(h).Str(name).Take(), nullptr));
}

void Client::Close(Handle h) {
  if (h != 0) Post(Code(Op::kClose), Writer().U64(h).Take());
}

}  // namespace sentry::gofer
