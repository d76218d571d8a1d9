#include "netstack/socket.h"

#include <linux/sockios.h>
#include <netinet/in.h>
#include <sys/ioctl.h>

#include <cstring>

#include "netstack/stack.h"

namespace sentry::netstack {

namespace {
// Linux's defaults (net.core.wmem_default / rmem_default) and the floors setsockopt keeps.
constexpr int kDefaultBuf = 212992;
constexpr int kMinSndBuf = 4608;
constexpr int kMinRcvBuf = 2304;
constexpr int kMaxBuf = 212992;  // net.core.{w,r}mem_max: what unprivileged callers get

TaskCreds (*g_cred_source)(Blocker&) = nullptr;
}  // namespace

void SetCredentialSource(TaskCreds (*fn)(Blocker&)) { g_cred_source = fn; }
TaskCreds CredentialsOf(Blocker& b) { return g_cred_source ? g_cred_source(b) : TaskCreds{}; }

Socket::Socket(Stack& stack, int family, int type, int protocol, int flags)
    : vfs::FileDescription(O_RDWR | (flags & O_NONBLOCK)),
      stack_ref_(stack.weak_from_this().lock()),
      stack_(stack),
      family_(family),
      type_(type),
      protocol_(protocol),
      ino_(Stack::NextIno()),
      sndbuf_(kDefaultBuf),
      rcvbuf_(kDefaultBuf) {
  stack_.Register(this);
}

Socket::~Socket() { stack_.Unregister(this); }

Socket* AsSocket(const vfs::FileDescription& f) {
  return dynamic_cast<Socket*>(const_cast<vfs::FileDescription*>(&f));
}

Result<int> OptionInt(std::span<const uint8_t> val) {
  if (val.size() < sizeof(int)) return Errno(EINVAL);
  int v;
  std::memcpy(&v, val.data(), sizeof(v));
  return v;
}

absl::Time Socket::Deadline(bool send) {
  absl::MutexLock l(&smu_);
  absl::Duration d = send ? sndtimeo_ : rcvtimeo_;
  return d == absl::InfiniteDuration() ? absl::InfiniteFuture() : absl::Now() + d;
}

Result<void> Socket::Wait(Blocker& b, bool send) {
  absl::Duration timeo;
  {
    absl::MutexLock l(&smu_);
    timeo = send ? sndtimeo_ : rcvtimeo_;
  }
  if (timeo == absl::ZeroDuration()) return Errno(EAGAIN);
  bool forever = timeo == absl::InfiniteDuration();
  auto r = b.Wait(forever ? absl::InfiniteFuture() : absl::Now() + timeo);
  if (r.ok()) return Ok();
  if (r.error() == ETIMEDOUT) return Errno(EAGAIN);
  if (r.error() == kERESTARTSYS && !forever) return Errno(EINTR);
  return r.error();
}

RecvResult Socket::CopyDatagram(const std::vector<uint8_t>& data, std::span<uint8_t> dst) {
  RecvResult r;
  r.length = data.size();
  r.copied = std::min(dst.size(), data.size());
  std::memcpy(dst.data(), data.data(), r.copied);
  if (r.copied < r.length) r.msg_flags |= MSG_TRUNC;
  return r;
}

int Socket::TakeError() {
  absl::MutexLock l(&smu_);
  return std::exchange(error_, 0);
}

Result<size_t> Socket::Read(Blocker& b, std::span<uint8_t> dst) {
  TaskCreds tc = CredentialsOf(b);
  Caller c{b, tc.effective, tc.real};
  auto r = SENTRY_TRY(Recv(c, dst, 0));
  return r.copied;
}

Result<size_t> Socket::Write(Blocker& b, std::span<const uint8_t> src) {
  TaskCreds tc = CredentialsOf(b);
  Caller c{b, tc.effective, tc.real};
  SendRequest req;
  req.data = src;
  struct NoPaths final : PathOps {
    Result<NameKey> BindNode(const std::string&) override { return Errno(EINVAL); }
    Result<NameKey> Lookup(const std::string&) override { return Errno(EINVAL); }
  } none;
  return Send(c, req, none);
}

Result<void> Socket::Stat(struct stat* st) {
  std::memset(st, 0, sizeof(*st));
  st->st_mode = S_IFSOCK | 0777;
  st->st_ino = ino_;
  st->st_dev = 8;  // sockfs
  st->st_nlink = 1;
  st->st_uid = owner_uid_;
  st->st_blksize = 4096;
  return Ok();
}

Result<uint64_t> Socket::Ioctl(Blocker&, uint64_t cmd, uint64_t) {
  switch (cmd) {
    case FIONREAD:  // == SIOCINQ
      return static_cast<uint64_t>(InQueue());
    case SIOCOUTQ:
      return static_cast<uint64_t>(OutQueue());
    default:
      return Errno(ENOTTY);
  }
}

Result<std::vector<uint8_t>> Socket::GetOption(int level, int name) {
  if (level != SOL_SOCKET) return Errno(ENOPROTOOPT);
  absl::MutexLock l(&smu_);
  switch (name) {
    case SO_TYPE:
      return OptionBytes(type_);
    case SO_DOMAIN:
      return OptionBytes(family_);
    case SO_PROTOCOL:
      return OptionBytes(protocol_);
    case SO_ERROR:
      return OptionBytes(std::exchange(error_, 0));
    case SO_SNDBUF:
      return OptionBytes(sndbuf_);
    case SO_RCVBUF:
      return OptionBytes(rcvbuf_);
    case SO_REUSEADDR:
      return OptionBytes(int{reuseaddr_});
    case SO_REUSEPORT:
      return OptionBytes(int{reuseport_});
    case SO_KEEPALIVE:
      return OptionBytes(int{keepalive_});
    case SO_BROADCAST:
      return OptionBytes(int{broadcast_});
    case SO_PASSCRED:
      return OptionBytes(int{passcred_});
    case SO_OOBINLINE:
      return OptionBytes(int{oobinline_});
    case SO_DONTROUTE:
      return OptionBytes(int{dontroute_});
    case SO_TIMESTAMP:
      return OptionBytes(int{timestamp_});
    case SO_PRIORITY:
      return OptionBytes(priority_);
    case SO_RCVLOWAT:
      return OptionBytes(rcvlowat_);
    case SO_SNDLOWAT:
      return OptionBytes(1);
    case SO_MARK:
      return OptionBytes(mark_);
    case SO_LINGER:
      return OptionBytes(linger_);
    case SO_RCVTIMEO_OLD:
    case SO_SNDTIMEO_OLD: {
      absl::Duration d = name == SO_RCVTIMEO_OLD ? rcvtimeo_ : sndtimeo_;
      return OptionBytes(absl::ToTimeval(d == absl::InfiniteDuration() ? absl::ZeroDuration() : d));
    }
    case SO_ACCEPTCONN:
      return OptionBytes(0);
    case SO_PASSSEC:
      return OptionBytes(0);
    case SO_BINDTODEVICE:
      return std::vector<uint8_t>();
    case SO_INCOMING_CPU:
      return OptionBytes(-1);
    case SO_COOKIE:
      return OptionBytes(uint64_t{ino_});
    default:
      return Errno(ENOPROTOOPT);
  }
}

Result<void> Socket::SetOption(int level, int name, std::span<const uint8_t> val) {
  if (level != SOL_SOCKET) return Errno(ENOPROTOOPT);
  if (name == SO_LINGER) {
    if (val.size() < sizeof(struct linger)) return Errno(EINVAL);
    absl::MutexLock l(&smu_);
    std::memcpy(&linger_, val.data(), sizeof(linger_));
    linger_.l_onoff = linger_.l_onoff != 0;
    return Ok();
  }
  if (name == SO_RCVTIMEO_OLD || name == SO_SNDTIMEO_OLD) {
    struct timeval tv;
    if (val.size() < sizeof(tv)) return Errno(EINVAL);
    std::memcpy(&tv, val.data(), sizeof(tv));
    if (tv.tv_usec < 0 || tv.tv_usec >= 1000000) return Errno(EDOM);
    // Linux: {0, 0} waits forever, a negative time not at all.
    absl::Duration d = absl::DurationFromTimeval(tv);
    if (tv.tv_sec < 0) {
      d = absl::ZeroDuration();
    } else if (d == absl::ZeroDuration()) {
      d = absl::InfiniteDuration();
    }
    absl::MutexLock l(&smu_);
    (name == SO_RCVTIMEO_OLD ? rcvtimeo_ : sndtimeo_) = d;
    return Ok();
  }
  if (name == SO_BINDTODEVICE) return Ok();  // only "lo" exists; binding to it changes nothing
  int v = SENTRY_TRY(OptionInt(val));
  absl::MutexLock l(&smu_);
  switch (name) {
    case SO_SNDBUF:
      sndbuf_ = std::max(kMinSndBuf, 2 * std::min(std::max(v, 0), kMaxBuf));
      return Ok();
    case SO_RCVBUF:
      rcvbuf_ = std::max(kMinRcvBuf, 2 * std::min(std::max(v, 0), kMaxBuf));
      return Ok();
    case SO_REUSEADDR:
      reuseaddr_ = v != 0;
      return Ok();
    case SO_REUSEPORT:
      reuseport_ = v != 0;
      return Ok();
    case SO_KEEPALIVE:
      keepalive_ = v != 0;
      return Ok();
    case SO_BROADCAST:
      broadcast_ = v != 0;
      return Ok();
    case SO_PASSCRED:
      passcred_ = v != 0;
      return Ok();
    case SO_OOBINLINE:
      oobinline_ = v != 0;
      return Ok();
    case SO_DONTROUTE:
      dontroute_ = v != 0;
      return Ok();
    case SO_TIMESTAMP:
      timestamp_ = v != 0;
      return Ok();
    case SO_PRIORITY:
      if (v < 0 || v > 6) return Errno(EPERM);  // 7 and up need CAP_NET_ADMIN
      priority_ = v;
      return Ok();
    case SO_RCVLOWAT:
      rcvlowat_ = v < 1 ? 1 : v;
      return Ok();
    case SO_SNDLOWAT:
      return Errno(ENOPROTOOPT);
    case SO_MARK:
      return Errno(EPERM);
    case SO_PASSSEC:
      return Ok();
    case SO_ZEROCOPY:
      return Ok();
    case SO_TYPE:
    case SO_DOMAIN:
    case SO_PROTOCOL:
    case SO_ERROR:
    case SO_ACCEPTCONN:
    case SO_PEERCRED:
      return Errno(ENOPROTOOPT);
    default:
      return Errno(ENOPROTOOPT);
  }
}

}  // namespace sentry::netstack
