#include "netstack/unix.h"

#include <sys/un.h>

#include <cstring>

#include "absl/strings/str_format.h"
#include "netstack/stack.h"

namespace sentry::netstack {

namespace {
constexpr size_t kSunPathOffset = offsetof(struct sockaddr_un, sun_path);
constexpr int kSomaxconn = 4096;
constexpr size_t kMaxDgramQlen = 10;  // net.unix.max_dgram_qlen
constexpr size_t kMaxRights = 253;    // SCM_MAX_FD

// What a stream or seqpacket connection buffers per direction before a sender blocks: the
// default send buffer, as Linux charges unix sockets against the sender's sk_sndbuf.
constexpr size_t kStreamCapacity = 212992;

// Adds `s` to the senders to wake when a queue has room, once: a sender retrying (or polling)
// on a full queue must not grow the list. Compares owners, never locks: a socket's last
// reference must not go while a socket lock is held.
void AddSender(std::vector<std::weak_ptr<UnixSocket>>& senders, std::weak_ptr<UnixSocket> s) {
  std::erase_if(senders, [&](const std::weak_ptr<UnixSocket>& w) {
    return w.expired() || (!w.owner_before(s) && !s.owner_before(w));
  });
  senders.push_back(std::move(s));
}
}  // namespace

UnixSocket::UnixSocket(Stack& stack, int type, int flags, const Ucred& owner)
    : Socket(stack, AF_UNIX, type, 0, flags) {
  set_owner_uid(owner.uid);
}

UnixSocket::~UnixSocket() {
  stack_.Unregister(this);  // before any member goes: /proc/net/unix reads them
  std::deque<std::shared_ptr<UnixSocket>> pending;
  std::deque<Datagram> rx;
  std::shared_ptr<StreamConn> conn;
  int side;
  std::optional<UnixName> name;
  {
    absl::MutexLock l(&smu_);
    pending.swap(backlog_);
    rx.swap(rx_);
    conn = std::move(conn_);
    side = side_;
    name = std::move(name_);
  }
  if (conn) conn->Close(side, false);
  if (name && name->abstract) stack_.unix_names().Unbind(name->name, this);
  // Connections never accepted are reset, as Linux releases embryos.
  for (auto& s : pending) {
    absl::MutexLock l(&s->smu_);
    if (s->conn_) s->conn_->Close(s->side_, true);
    s->conn_.reset();
  }
  WakeBlockedSenders();
}

void UnixSocket::Pair(const std::shared_ptr<UnixSocket>& a, const std::shared_ptr<UnixSocket>& b,
                      const Ucred& cred) {
  if (a->type_ == SOCK_DGRAM) {
    absl::MutexLock la(&a->smu_);
    a->dgram_peer_ = b;
    a->dgram_connected_ = true;
    absl::MutexLock lb(&b->smu_);
    b->dgram_peer_ = a;
    b->dgram_connected_ = true;
    a->peer_cred_ = cred;
    b->peer_cred_ = cred;
    return;
  }
  auto conn = std::make_shared<StreamConn>(a->type_ == SOCK_SEQPACKET, kStreamCapacity);
  conn->Attach(0, &a->queue_);
  conn->Attach(1, &b->queue_);
  for (int i = 0; i < 2; i++) {
    UnixSocket& s = i == 0 ? *a : *b;
    absl::MutexLock l(&s.smu_);
    s.state_ = State::kConnected;
    s.conn_ = conn;
    s.side_ = i;
    s.peer_name_ = Unnamed();
    s.peer_cred_ = cred;
  }
}

SockAddr UnixSocket::Unnamed() {
  SockAddr a(sizeof(sa_family_t));
  sa_family_t f = AF_UNIX;
  std::memcpy(a.data(), &f, sizeof(f));
  return a;
}

Result<UnixSocket::UnixName> UnixSocket::ParseName(std::span<const uint8_t> addr) {
  if (addr.size() <= kSunPathOffset || addr.size() > sizeof(struct sockaddr_un)) {
    return Errno(EINVAL);
  }
  sa_family_t family;
  std::memcpy(&family, addr.data(), sizeof(family));
  if (family != AF_UNIX) return Errno(EINVAL);
  UnixName n;
  const char* path = reinterpret_cast<const char*>(addr.data() + kSunPathOffset);
  size_t len = addr.size() - kSunPathOffset;
  if (path[0] == '\0') {
    n.abstract = true;
    n.name.assign(path + 1, len - 1);
    n.raw.assign(addr.begin(), addr.end());
    return n;
  }
  n.name.assign(path, strnlen(path, len));
  n.raw.resize(kSunPathOffset + n.name.size() + 1);
  std::memcpy(n.raw.data(), &family, sizeof(family));
  std::memcpy(n.raw.data() + kSunPathOffset, n.name.data(), n.name.size());
  return n;
}

Result<std::shared_ptr<UnixSocket>> UnixSocket::Find(const UnixName& n, PathOps& paths) {
  std::shared_ptr<UnixSocket> s;
  if (n.abstract) {
    s = stack_.unix_names().FindAbstract(n.name);
  } else {
    NameKey key = SENTRY_TRY(paths.Lookup(n.name));
    s = stack_.unix_names().FindPath(key);
  }
  if (!s) return Errno(ECONNREFUSED);
  if (s->type_ != type_) return Errno(EPROTOTYPE);
  return s;
}

Result<void> UnixSocket::AutobindLocked() {
  if (name_) return Ok();
  std::string n = SENTRY_TRY(stack_.unix_names().Autobind(weak_from_this()));
  UnixName u;
  u.abstract = true;
  u.name = n;
  u.raw = Unnamed();
  u.raw.push_back(0);
  u.raw.insert(u.raw.end(), n.begin(), n.end());
  name_ = std::move(u);
  return Ok();
}

Result<void> UnixSocket::Bind(std::span<const uint8_t> addr, PathOps& paths) {
  if (addr.size() == kSunPathOffset) {
    sa_family_t family;
    std::memcpy(&family, addr.data(), sizeof(family));
    if (family != AF_UNIX) return Errno(EINVAL);
    absl::MutexLock l(&smu_);
    if (name_) return Errno(EINVAL);
    return AutobindLocked();
  }
  UnixName n = SENTRY_TRY(ParseName(addr));
  absl::MutexLock l(&smu_);
  if (name_) return Errno(EINVAL);
  if (n.abstract) {
    SENTRY_TRY(stack_.unix_names().BindAbstract(n.name, weak_from_this()));
  } else {
    auto key = paths.BindNode(n.name);
    if (!key.ok()) return key.error() == EEXIST ? Errno(EADDRINUSE) : key.error();
    stack_.unix_names().BindPath(*key, weak_from_this());
  }
  name_ = std::move(n);
  return Ok();
}

Result<void> UnixSocket::Listen(int backlog, const Ucred& cred) {
  if (type_ == SOCK_DGRAM) return Errno(EOPNOTSUPP);
  absl::MutexLock l(&smu_);
  if (state_ == State::kConnected) return Errno(EINVAL);
  if (!name_) return Errno(EINVAL);
  if (backlog < 0 || backlog > kSomaxconn) backlog = kSomaxconn;
  backlog_max_ = backlog;
  listen_cred_ = cred;
  state_ = State::kListening;
  queue_.Notify(kEventOut);  // connectors waiting for room
  return Ok();
}

Result<vfs::FileRef> UnixSocket::Accept(Caller& c, bool nonblock) {
  if (type_ == SOCK_DGRAM) return Errno(EOPNOTSUPP);
  using R = Result<vfs::FileRef>;
  return Block<vfs::FileRef>(c, kEventIn, nonblock, [&]() -> std::optional<R> {
    absl::MutexLock l(&smu_);
    if (state_ != State::kListening) return R(Errno(EINVAL));
    if (backlog_.empty()) return std::nullopt;
    std::shared_ptr<UnixSocket> s = std::move(backlog_.front());
    backlog_.pop_front();
    queue_.Notify(kEventOut);
    return R(vfs::FileRef(std::move(s)));
  });
}

Result<void> UnixSocket::Connect(Caller& c, std::span<const uint8_t> addr, PathOps& paths) {
  if (type_ == SOCK_DGRAM && addr.size() >= sizeof(sa_family_t)) {
    sa_family_t family;
    std::memcpy(&family, addr.data(), sizeof(family));
    if (family == AF_UNSPEC) {  // dissolve the association
      absl::MutexLock l(&smu_);
      dgram_peer_.reset();
      dgram_connected_ = false;
      return Ok();
    }
  }
  UnixName n = SENTRY_TRY(ParseName(addr));
  {
    absl::MutexLock l(&smu_);
    if (state_ == State::kConnected) return Errno(EISCONN);
    if (state_ == State::kListening) return Errno(EINVAL);
    if (passcred_) SENTRY_TRY(AutobindLocked());
  }
  auto target = SENTRY_TRY(Find(n, paths));
  if (type_ != SOCK_DGRAM) return ConnectStream(c, target);
  absl::MutexLock l(&smu_);
  dgram_peer_ = target;
  dgram_connected_ = true;
  return Ok();
}

Result<void> UnixSocket::ConnectStream(Caller& c, const std::shared_ptr<UnixSocket>& target) {
  auto server = std::make_shared<UnixSocket>(stack_, type_, 0, Ucred{});
  auto conn = std::make_shared<StreamConn>(type_ == SOCK_SEQPACKET, kStreamCapacity);
  SockAddr my_name;
  {
    absl::MutexLock l(&smu_);
    my_name = name_ ? name_->raw : Unnamed();
  }
  ScopedWait wait(target->queue_, c.blocker.waiter(), kEventOut);
  for (;;) {
    {
      absl::MutexLock lt(&target->smu_);
      if (target->state_ != State::kListening) return Errno(ECONNREFUSED);
      if (target->backlog_.size() <= static_cast<size_t>(target->backlog_max_)) {
        server->set_owner_uid(target->owner_uid());
        {
          absl::MutexLock ls(&server->smu_);
          server->state_ = State::kConnected;
          server->conn_ = conn;
          server->side_ = 1;
          server->name_ = target->name_;
          server->peer_name_ = my_name;
          server->peer_cred_ = c.cred;
        }
        conn->Attach(1, &server->queue_);
        {
          absl::MutexLock l(&smu_);
          if (state_ == State::kConnected) return Errno(EISCONN);
          state_ = State::kConnected;
          conn_ = conn;
          side_ = 0;
          peer_name_ = target->name_ ? target->name_->raw : Unnamed();
          peer_cred_ = target->listen_cred_;
          conn->Attach(0, &queue_);
        }
        target->backlog_.push_back(server);
        target->queue_.Notify(kEventIn);
        return Ok();
      }
    }
    if (NonBlocking()) return Errno(EAGAIN);
    SENTRY_TRY(Wait(c.blocker, true));
  }
}

Result<void> UnixSocket::Shutdown(int how) {
  if (how < SHUT_RD || how > SHUT_RDWR) return Errno(EINVAL);
  bool rd = how != SHUT_WR, wr = how != SHUT_RD;
  std::shared_ptr<StreamConn> conn;
  int side;
  {
    absl::MutexLock l(&smu_);
    // Linux's unix_shutdown works in any state.
    if (type_ == SOCK_DGRAM || state_ != State::kConnected) {
      shut_rd_ |= rd;
      shut_wr_ |= wr;
      queue_.Notify(kAllEvents);
      return Ok();
    }
    shut_rd_ |= rd;
    shut_wr_ |= wr;
    conn = conn_;
    side = side_;
  }
  // Linux also shuts the peer's opposite direction, which is what the half flags say.
  if (conn) conn->Shutdown(side, rd, wr);
  return Ok();
}

Result<SockAddr> UnixSocket::SockName() {
  absl::MutexLock l(&smu_);
  return name_ ? name_->raw : Unnamed();
}

Result<SockAddr> UnixSocket::PeerName() {
  // Declared before the lock: if another thread drops the peer meanwhile, its destructor must
  // run without our lock held (it takes registry and other socket locks).
  std::shared_ptr<UnixSocket> peer;
  absl::ReleasableMutexLock l(&smu_);
  if (type_ == SOCK_DGRAM) {
    peer = dgram_peer_.lock();
    if (!dgram_connected_ || !peer) return Errno(ENOTCONN);
    l.Release();  // never two sockets' locks at once
    absl::MutexLock lp(&peer->smu_);
    return peer->name_ ? peer->name_->raw : Unnamed();
  }
  if (state_ != State::kConnected) return Errno(ENOTCONN);
  return peer_name_;
}

std::shared_ptr<StreamConn> UnixSocket::conn() {
  absl::MutexLock l(&smu_);
  return conn_;
}

Result<size_t> UnixSocket::Send(Caller& c, SendRequest& req, PathOps& paths) {
  if (req.flags & MSG_OOB) return Errno(EOPNOTSUPP);
  if (req.control.rights.size() > kMaxRights) return Errno(EINVAL);
  if (type_ == SOCK_DGRAM) return SendDgram(c, req, paths);
  std::shared_ptr<StreamConn> conn;
  int side;
  {
    absl::MutexLock l(&smu_);
    if (type_ == SOCK_STREAM && !req.to.empty()) {
      return Errno(state_ == State::kConnected ? EISCONN : EOPNOTSUPP);
    }
    if (state_ != State::kConnected) return Errno(ENOTCONN);
    if (!conn_) return Errno(EPIPE);
    conn = conn_;
    side = side_;
    // Linux attaches the sender's credentials to every message; the receiver sees them
    // only with SO_PASSCRED.
    if (!req.control.creds) req.control.creds = c.real;
  }
  if (req.data.empty() && type_ == SOCK_STREAM) return size_t{0};
  ScopedWait wait(queue_, c.blocker.waiter(), kEventOut);
  return conn->Send(side, req.data, req.control, NonBlock(req.flags),
                    [&] { return Wait(c.blocker, true); });
}

Result<RecvResult> UnixSocket::Recv(Caller& c, std::span<uint8_t> dst, int flags) {
  if (flags & MSG_OOB) return Errno(EOPNOTSUPP);
  if (type_ == SOCK_DGRAM) return RecvDgram(c, dst, flags);
  std::shared_ptr<StreamConn> conn;
  int side;
  bool passcred;
  {
    absl::MutexLock l(&smu_);
    if (state_ != State::kConnected) {
      return Errno(type_ == SOCK_SEQPACKET ? ENOTCONN : EINVAL);
    }
    if (!conn_) return RecvResult{};
    conn = conn_;
    side = side_;
    passcred = passcred_;
  }
  if (type_ == SOCK_STREAM) flags &= ~MSG_TRUNC;  // meaningless on unix streams
  ScopedWait wait(queue_, c.blocker.waiter(), kEventIn);
  auto r = SENTRY_TRY(
      conn->Recv(side, dst, flags, NonBlock(flags), [&] { return Wait(c.blocker, false); }));
  if (!passcred) r.control.creds.reset();
  if (type_ == SOCK_STREAM) r.msg_flags &= ~MSG_EOR;
  absl::MutexLock l(&smu_);
  if (peer_name_.size() > sizeof(sa_family_t)) r.from = peer_name_;
  return r;
}

bool UnixSocket::Deliver(Datagram& d, const UnixSocket* from, size_t sender_sndbuf) {
  std::shared_ptr<UnixSocket> peer;  // released after smu_ (see PeerName)
  absl::MutexLock l(&smu_);
  // A peer that is connected back, and the socket itself (which Linux's queue length check
  // skips), are held back by the sender's buffer: without a bound, a socket sending to
  // itself would grow the Sentry's memory without end.
  peer = dgram_peer_.lock();
  bool connected_back = dgram_connected_ && peer.get() == from;
  bool full = connected_back || from == this
                  ? rx_bytes_ + d.data.size() > sender_sndbuf && !rx_.empty()
                  : rx_.size() >= kMaxDgramQlen;
  if (full) {
    AddSender(blocked_senders_, const_cast<UnixSocket*>(from)->weak_from_this());
    return false;
  }
  if (!passcred_) d.control.creds.reset();
  rx_bytes_ += d.data.size();
  rx_.push_back(std::move(d));
  queue_.Notify(kEventIn);
  return true;
}

void UnixSocket::WakeBlockedSenders() {
  std::vector<std::weak_ptr<UnixSocket>> senders;
  {
    absl::MutexLock l(&smu_);
    senders.swap(blocked_senders_);
  }
  for (auto& w : senders) {
    if (auto s = w.lock()) s->queue_.Notify(kEventOut);
  }
}

Result<size_t> UnixSocket::SendDgram(Caller& c, SendRequest& req, PathOps& paths) {
  std::shared_ptr<UnixSocket> target;
  Datagram d;
  int sndbuf;
  {
    absl::MutexLock l(&smu_);
    if (shut_wr_) return Errno(EPIPE);
    sndbuf = sndbuf_;
    if (passcred_) SENTRY_TRY(AutobindLocked());
    if (name_) d.from = name_->raw;  // an unnamed sender shows no address
    if (req.to.empty()) {
      target = dgram_peer_.lock();
      if (!dgram_connected_) return Errno(ENOTCONN);
      if (!target) {
        dgram_connected_ = false;
        return Errno(ECONNREFUSED);
      }
    }
  }
  if (!target) {
    UnixName n = SENTRY_TRY(ParseName(req.to));
    target = SENTRY_TRY(Find(n, paths));
  }
  if (req.data.size() > static_cast<size_t>(sndbuf) - 32) return Errno(EMSGSIZE);
  {
    std::shared_ptr<UnixSocket> tpeer;  // released after the lock (see PeerName)
    absl::MutexLock l(&target->smu_);
    tpeer = target->dgram_peer_.lock();
    if (target->dgram_connected_ && tpeer && tpeer.get() != this) return Errno(EPERM);
  }
  d.data.assign(req.data.begin(), req.data.end());
  d.control = std::move(req.control);
  if (!d.control.creds) d.control.creds = c.real;
  ScopedWait wait(queue_, c.blocker.waiter(), kEventOut);
  for (;;) {
    if (target->Deliver(d, this, sndbuf)) return req.data.size();
    if (NonBlock(req.flags)) return Errno(EAGAIN);
    SENTRY_TRY(Wait(c.blocker, true));
  }
}

Result<RecvResult> UnixSocket::RecvDgram(Caller& c, std::span<uint8_t> dst, int flags) {
  using R = Result<RecvResult>;
  return Block<RecvResult>(c, kEventIn, NonBlock(flags), [&]() -> std::optional<R> {
    RecvResult r;
    {
      absl::MutexLock l(&smu_);
      if (rx_.empty()) return shut_rd_ ? std::optional<R>(RecvResult{}) : std::nullopt;
      Datagram& d = rx_.front();
      r = CopyDatagram(d.data, dst);
      r.from = d.from;
      if (flags & MSG_PEEK) {
        r.control.rights = d.control.rights;
        r.control.creds = d.control.creds;
        return R(std::move(r));
      }
      r.control = std::move(d.control);
      rx_bytes_ -= d.data.size();
      rx_.pop_front();
    }
    WakeBlockedSenders();  // room for whoever found the queue full
    return R(std::move(r));
  });
}

EventMask UnixSocket::Readiness(EventMask mask) {
  EventMask m = 0;
  std::shared_ptr<StreamConn> conn;
  int side;
  {
    absl::ReleasableMutexLock l(&smu_);
    if (state_ == State::kListening) {
      if (!backlog_.empty()) m |= kEventIn;
      return m & mask;
    }
    if (error_) m |= kEventErr;
    if (type_ == SOCK_DGRAM) {
      if (!rx_.empty()) m |= kEventIn;
      if (shut_rd_) m |= kEventIn | kEventRdHup;
      if (shut_rd_ && shut_wr_) m |= kEventHup;
      m |= kEventOut;
      auto peer = dgram_connected_ ? dgram_peer_.lock() : nullptr;
      if (peer && peer.get() != this) {
        l.Release();
        absl::MutexLock lp(&peer->smu_);
        bool back = peer->dgram_connected_ && peer->dgram_peer_.lock().get() == this;
        if (!back && peer->rx_.size() >= kMaxDgramQlen) {
          m &= ~kEventOut;
          AddSender(peer->blocked_senders_, weak_from_this());
        }
      }
      return m & (mask | kEventHup | kEventErr);
    }
    if (state_ != State::kConnected) {
      // An unconnected stream socket: Linux reports it writable and hung up.
      return (m | kEventOut | kEventHup) & (mask | kEventHup | kEventErr);
    }
    conn = conn_;
    side = side_;
  }
  if (conn) m |= conn->Readiness(side);
  return m & (mask | kEventHup | kEventErr);
}

size_t UnixSocket::InQueue() {
  {
    absl::MutexLock l(&smu_);
    if (state_ == State::kListening) return 0;
    if (type_ == SOCK_DGRAM) return rx_.empty() ? 0 : rx_.front().data.size();
  }
  auto c = conn();
  return c ? c->InQueue(side_) : 0;
}

size_t UnixSocket::OutQueue() {
  auto c = conn();
  if (!c) return 0;
  absl::MutexLock l(&smu_);
  return c->OutQueue(side_);
}

Result<std::vector<uint8_t>> UnixSocket::GetOption(int level, int name) {
  if (level == SOL_SOCKET) {
    absl::MutexLock l(&smu_);
    switch (name) {
      case SO_PEERCRED: {
        struct ucred u = {0, static_cast<uid_t>(-1), static_cast<gid_t>(-1)};
        if (peer_cred_) u = {peer_cred_->pid, peer_cred_->uid, peer_cred_->gid};
        return OptionBytes(u);
      }
      case SO_ACCEPTCONN:
        return OptionBytes(int{state_ == State::kListening});
      case SO_PEERSEC:
        return Errno(ENOPROTOOPT);
      default:
        break;
    }
  }
  if (level != SOL_SOCKET) return Errno(EOPNOTSUPP);
  return Socket::GetOption(level, name);
}

Result<void> UnixSocket::SetOption(int level, int name, std::span<const uint8_t> val) {
  if (level != SOL_SOCKET) return Errno(EOPNOTSUPP);
  SENTRY_TRY(Socket::SetOption(level, name, val));
  if (name == SO_SNDBUF) {
    std::shared_ptr<StreamConn> c;
    int side, buf;
    {
      absl::MutexLock l(&smu_);
      c = conn_;
      side = side_;
      buf = sndbuf_;
    }
    if (c) c->SetCapacity(side, buf);
  }
  return Ok();
}

std::string UnixSocket::ProcLine() {
  absl::MutexLock l(&smu_);
  int st = 1;                                                   // SS_UNCONNECTED
  if (state_ == State::kConnected || dgram_connected_) st = 3;  // SS_CONNECTED
  int flags = state_ == State::kListening ? (1 << 16) : 0;      // __SO_ACCEPTCON
  std::string path;
  if (name_) path = name_->abstract ? "@" + name_->name : name_->name;
  for (char& ch : path) {
    if (ch == '\0') ch = '@';
  }
  return absl::StrFormat("0000000000000000: 00000002 00000000 %08X %04X %02X %5u%s%s\n", flags,
                         type_, st, ino_, path.empty() ? "" : " ", path);
}

}  // namespace sentry::netstack
