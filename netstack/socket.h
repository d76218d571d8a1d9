// Sockets: Sentry file descriptions with the socket operations on top. The syscall layer
// copies addresses, option values and data between guest memory and host buffers; everything
// here works on host buffers, so the netstack knows nothing of tasks or guest memory.
//
// Lock order: Socket::smu_ -> (listener's) Socket::smu_ of a different socket is never taken
// while holding one's own, except a connecting socket, which may take a listener's smu_
// while holding its own -> StreamConn::mu_ -> WaitQueue::mu_.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "vfs/file.h"

namespace sentry::netstack {

class Stack;

// Who is on the other end: SO_PEERCRED and SCM_CREDENTIALS.
struct Ucred {
  int32_t pid = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
};

// The ancillary part of a message.
// An IP-level control message as recvmsg delivers it (IPV6_HOPLIMIT, IP_TOS, ...).
struct IpCmsg {
  int level = 0;
  int type = 0;
  std::vector<uint8_t> data;
};

struct Control {
  std::vector<vfs::FileRef> rights;  // SCM_RIGHTS
  std::optional<Ucred> creds;        // SCM_CREDENTIALS
  // Sent with one datagram (IPV6_HOPLIMIT / IP_TTL, IPV6_TCLASS / IP_TOS); -1: the default.
  int hoplimit = -1;
  int tclass = -1;
  // Received (UDP with IPV6_RECVHOPLIMIT, IP_PKTINFO...), in the order Linux writes them.
  std::vector<IpCmsg> ip;
  bool empty() const { return rights.empty() && !creds; }
};

// What the caller of a socket operation is: its credentials (SO_PEERCRED, default
// SCM_CREDENTIALS) and how it blocks.
struct Caller {
  Blocker& blocker;
  Ucred cred;  // effective ids: what SO_PEERCRED reports
  Ucred real;  // real ids: what SCM_CREDENTIALS carries by default
  // CAP_NET_ADMIN over the socket's network namespace: netlink changes to the interfaces.
  bool net_admin = false;
  // CAP_NET_RAW over the caller's network namespace: raw ICMP sockets.
  bool net_raw = false;
};

// The credentials of the task behind a Blocker, for read(2) and write(2) on sockets, which
// do not come through the socket calls. Set once by the kernel at start-up.
struct TaskCreds {
  Ucred effective;
  Ucred real;
};
void SetCredentialSource(TaskCreds (*fn)(Blocker&));
TaskCreds CredentialsOf(Blocker& b);

// A name as the guest gave or will receive it (struct sockaddr_*, raw bytes).
using SockAddr = std::vector<uint8_t>;

struct SendRequest {
  std::span<const uint8_t> data;
  std::span<const uint8_t> to;  // destination (sendto/sendmsg); empty: the connected peer
  int flags = 0;                // MSG_*
  Control control;
};

struct RecvResult {
  size_t copied = 0;  // bytes written to the buffer
  size_t length = 0;  // the whole datagram's length (recv with MSG_TRUNC returns it)
  int msg_flags = 0;  // MSG_TRUNC, MSG_EOR, ...
  SockAddr from;      // empty when the protocol reports no source
  Control control;
};

// What binding to or connecting to a path name needs from the VFS: the syscall layer
// supplies it, since only it knows the caller's root, cwd and credentials.
struct NameKey {
  uint64_t dev = 0;
  uint64_t ino = 0;
  bool operator<(const NameKey& o) const { return dev != o.dev ? dev < o.dev : ino < o.ino; }
  bool operator==(const NameKey& o) const { return dev == o.dev && ino == o.ino; }
};
class PathOps {
 public:
  // Creates a socket inode at `path` (EADDRINUSE if the name exists) and returns its key.
  virtual Result<NameKey> BindNode(const std::string& path) = 0;
  // Resolves `path` to a socket inode the caller may write to (ECONNREFUSED if it is not
  // a socket, EACCES, ENOENT...).
  virtual Result<NameKey> Lookup(const std::string& path) = 0;

 protected:
  ~PathOps() = default;
};

class Socket : public vfs::FileDescription {
 public:
  Socket(Stack& stack, int family, int type, int protocol, int flags);
  ~Socket() override;

  int family() const { return family_; }
  int type() const { return type_; }
  int protocol() const { return protocol_; }
  uint64_t ino() const { return ino_; }
  // The stack (network namespace) the socket was made in, for its whole life.
  Stack& stack() const { return stack_; }

  virtual Result<void> Bind(std::span<const uint8_t> addr, PathOps& paths) = 0;
  virtual Result<void> Listen(int backlog, const Ucred& cred) = 0;
  // A connected socket for the next pending connection; `Blocks` as accept(2).
  virtual Result<vfs::FileRef> Accept(Caller& c, bool nonblock) = 0;
  virtual Result<void> Connect(Caller& c, std::span<const uint8_t> addr, PathOps& paths) = 0;
  virtual Result<void> Shutdown(int how) = 0;
  virtual Result<SockAddr> SockName() = 0;
  virtual Result<SockAddr> PeerName() = 0;
  // Sends all of req.data unless the socket is nonblocking (or MSG_DONTWAIT), a timeout
  // passes or a signal comes after some bytes went: then the count so far. EPIPE means the
  // caller raises SIGPIPE unless MSG_NOSIGNAL.
  virtual Result<size_t> Send(Caller& c, SendRequest& req, PathOps& paths) = 0;
  virtual Result<RecvResult> Recv(Caller& c, std::span<uint8_t> dst, int flags) = 0;

  // getsockopt/setsockopt. Values are raw bytes; Get returns the whole value (the syscall
  // layer truncates to the guest's optlen).
  virtual Result<std::vector<uint8_t>> GetOption(int level, int name);
  virtual Result<void> SetOption(int level, int name, std::span<const uint8_t> val);

  // read/write are recv/send without flags.
  Result<size_t> Read(Blocker& b, std::span<uint8_t> dst) override;
  Result<size_t> Write(Blocker& b, std::span<const uint8_t> src) override;
  Result<size_t> PRead(Blocker&, std::span<uint8_t>, uint64_t) override { return Errno(ESPIPE); }
  Result<size_t> PWrite(Blocker&, std::span<const uint8_t>, uint64_t) override {
    return Errno(ESPIPE);
  }
  Result<uint64_t> Seek(int64_t, int) override { return Errno(ESPIPE); }
  WaitQueue* Queue() override { return &queue_; }
  // O_ASYNC: SIGIO when the socket becomes readable or writable (vfs/file.h). Notifications
  // may be broad (kAllEvents on a shutdown), so they are checked against Readiness().
  bool SignalsAsync() const override { return true; }
  bool AsyncChecksReadiness() const override { return true; }
  Result<void> Stat(struct stat* st) override;
  std::string Name() const override { return "socket:[" + std::to_string(ino_) + "]"; }
  Result<uint64_t> Ioctl(Blocker& b, uint64_t cmd, uint64_t arg) override;
  // Bytes waiting to be read (FIONREAD/SIOCINQ) and not yet taken by the peer (SIOCOUTQ).
  virtual size_t InQueue() { return 0; }
  virtual size_t OutQueue() { return 0; }

  // The Ucred of the task that made the socket (for the /proc/net tables' uid).
  uint32_t owner_uid() const { return owner_uid_; }
  void set_owner_uid(uint32_t uid) { owner_uid_ = uid; }

 protected:
  // The deadline of a blocking receive or send (SO_RCVTIMEO / SO_SNDTIMEO).
  absl::Time Deadline(bool send);
  // Waits on this socket's queue; a timeout becomes EAGAIN, and a signal EINTR when a
  // timeout is set (Linux restarts only calls without one).
  Result<void> Wait(Blocker& b, bool send);
  bool NonBlock(int msg_flags) const { return (msg_flags & MSG_DONTWAIT) || NonBlocking(); }
  // Takes the pending SO_ERROR.
  int TakeError();
  // A datagram (or record) into `dst`: what fits, its whole length, MSG_TRUNC if cut.
  static RecvResult CopyDatagram(const std::vector<uint8_t>& data, std::span<uint8_t> dst);
  // The blocking loop of accept and the datagram receives: runs `attempt` (returning
  // std::optional<Result<T>>; nullopt means "not yet") until it answers, waiting on this
  // socket's queue for `events` in between, or EAGAIN at once when `nonblock`.
  template <typename T, typename Attempt>
  Result<T> Block(Caller& c, EventMask events, bool nonblock, Attempt attempt) {
    ScopedWait wait(queue_, c.blocker.waiter(), events);
    for (;;) {
      if (std::optional<Result<T>> r = attempt()) return std::move(*r);
      if (nonblock) return Errno(EAGAIN);
      SENTRY_TRY(Wait(c.blocker, false));
    }
  }

  // Holds the namespace's stack while the socket lives (null for a stack no shared_ptr
  // owns). First, so that it goes last.
  const std::shared_ptr<Stack> stack_ref_;
  Stack& stack_;
  const int family_;
  const int type_;
  const int protocol_;
  const uint64_t ino_;
  WaitQueue queue_;

  mutable absl::Mutex smu_;
  int error_ ABSL_GUARDED_BY(smu_) = 0;  // SO_ERROR
  // SO_RCVTIMEO / SO_SNDTIMEO: infinite by default (a zero timeval), zero after a negative
  // one (Linux then does not wait at all).
  absl::Duration rcvtimeo_ ABSL_GUARDED_BY(smu_) = absl::InfiniteDuration();
  absl::Duration sndtimeo_ ABSL_GUARDED_BY(smu_) = absl::InfiniteDuration();
  int sndbuf_ ABSL_GUARDED_BY(smu_);
  int rcvbuf_ ABSL_GUARDED_BY(smu_);
  bool reuseaddr_ ABSL_GUARDED_BY(smu_) = false;
  bool reuseport_ ABSL_GUARDED_BY(smu_) = false;
  bool keepalive_ ABSL_GUARDED_BY(smu_) = false;
  bool broadcast_ ABSL_GUARDED_BY(smu_) = false;
  bool passcred_ ABSL_GUARDED_BY(smu_) = false;
  bool oobinline_ ABSL_GUARDED_BY(smu_) = false;
  bool dontroute_ ABSL_GUARDED_BY(smu_) = false;
  bool timestamp_ ABSL_GUARDED_BY(smu_) = false;
  int priority_ ABSL_GUARDED_BY(smu_) = 0;
  int rcvlowat_ ABSL_GUARDED_BY(smu_) = 1;
  int mark_ ABSL_GUARDED_BY(smu_) = 0;
  struct linger linger_ ABSL_GUARDED_BY(smu_) = {0, 0};
  uint32_t owner_uid_ = 0;
};

using SocketRef = std::shared_ptr<Socket>;

// The socket behind `f`, or null.
Socket* AsSocket(const vfs::FileDescription& f);

// Helpers for option values.
template <typename T>
std::vector<uint8_t> OptionBytes(const T& v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  return std::vector<uint8_t>(p, p + sizeof(T));
}
// An int option as setsockopt reads it: at least sizeof(int) bytes (EINVAL), and Linux
// also accepts a single byte for some IP options (the caller decides).
Result<int> OptionInt(std::span<const uint8_t> val);

}  // namespace sentry::netstack
