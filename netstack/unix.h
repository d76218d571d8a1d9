// AF_UNIX sockets, entirely inside the Sentry: stream and seqpacket over a StreamConn,
// datagrams queued on the receiving socket. Names are abstract (in the Stack's own table,
// never the host's) or paths (a socket inode in the sandbox's VFS).
#pragma once

#include <deque>
#include <memory>
#include <optional>

#include "netstack/socket.h"
#include "netstack/stream.h"

namespace sentry::netstack {

class UnixSocket final : public Socket, public std::enable_shared_from_this<UnixSocket> {
 public:
  UnixSocket(Stack& stack, int type, int flags, const Ucred& owner);
  ~UnixSocket() override;

  // Connects two new sockets (socketpair).
  static void Pair(const std::shared_ptr<UnixSocket>& a, const std::shared_ptr<UnixSocket>& b,
                   const Ucred& cred);

  Result<void> Bind(std::span<const uint8_t> addr, PathOps& paths) override;
  Result<void> Listen(int backlog, const Ucred& cred) override;
  Result<vfs::FileRef> Accept(Caller& c, bool nonblock) override;
  Result<void> Connect(Caller& c, std::span<const uint8_t> addr, PathOps& paths) override;
  Result<void> Shutdown(int how) override;
  Result<SockAddr> SockName() override;
  Result<SockAddr> PeerName() override;
  Result<size_t> Send(Caller& c, SendRequest& req, PathOps& paths) override;
  Result<RecvResult> Recv(Caller& c, std::span<uint8_t> dst, int flags) override;
  Result<std::vector<uint8_t>> GetOption(int level, int name) override;
  Result<void> SetOption(int level, int name, std::span<const uint8_t> val) override;
  EventMask Readiness(EventMask mask) override;
  size_t InQueue() override;
  size_t OutQueue() override;

  // For /proc/net/unix.
  std::string ProcLine();

 private:
  enum class State { kUnconnected, kListening, kConnected };
  struct Datagram {
    std::vector<uint8_t> data;
    SockAddr from;
    Control control;
  };
  // A parsed sockaddr_un: an abstract name (with its leading NUL) or a path.
  struct UnixName {
    bool abstract = false;
    std::string name;  // abstract: the bytes after the NUL; path: the path
    SockAddr raw;      // as getsockname reports it
  };

  static Result<UnixName> ParseName(std::span<const uint8_t> addr);
  static SockAddr Unnamed();
  bool stream_like() const { return type_ != SOCK_DGRAM; }
  // The socket a name refers to (ECONNREFUSED when nobody is bound there).
  Result<std::shared_ptr<UnixSocket>> Find(const UnixName& n, PathOps& paths);
  Result<void> AutobindLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(smu_);
  Result<void> ConnectStream(Caller& c, const std::shared_ptr<UnixSocket>& target);
  Result<size_t> SendDgram(Caller& c, SendRequest& req, PathOps& paths);
  Result<RecvResult> RecvDgram(Caller& c, std::span<uint8_t> dst, int flags);
  // Datagram delivery into this socket; false when its queue is full for `from`.
  bool Deliver(Datagram& d, const UnixSocket* from, size_t sender_sndbuf);
  void WakeBlockedSenders();
  std::shared_ptr<StreamConn> conn();

  State state_ ABSL_GUARDED_BY(smu_) = State::kUnconnected;
  std::optional<UnixName> name_ ABSL_GUARDED_BY(smu_);
  // Stream and seqpacket, connected.
  std::shared_ptr<StreamConn> conn_ ABSL_GUARDED_BY(smu_);
  int side_ ABSL_GUARDED_BY(smu_) = 0;
  SockAddr peer_name_ ABSL_GUARDED_BY(smu_);
  std::optional<Ucred> peer_cred_ ABSL_GUARDED_BY(smu_);
  bool shut_rd_ ABSL_GUARDED_BY(smu_) = false;
  bool shut_wr_ ABSL_GUARDED_BY(smu_) = false;
  // Listening.
  std::deque<std::shared_ptr<UnixSocket>> backlog_ ABSL_GUARDED_BY(smu_);
  int backlog_max_ ABSL_GUARDED_BY(smu_) = 0;
  Ucred listen_cred_ ABSL_GUARDED_BY(smu_);
  // Datagrams.
  std::weak_ptr<UnixSocket> dgram_peer_ ABSL_GUARDED_BY(smu_);
  bool dgram_connected_ ABSL_GUARDED_BY(smu_) = false;
  std::deque<Datagram> rx_ ABSL_GUARDED_BY(smu_);
  size_t rx_bytes_ ABSL_GUARDED_BY(smu_) = 0;
  std::vector<std::weak_ptr<UnixSocket>> blocked_senders_ ABSL_GUARDED_BY(smu_);
};

}  // namespace sentry::netstack
