// Moving data through sockets: sendto/recvfrom, sendmsg/recvmsg (with SCM_RIGHTS and
// SCM_CREDENTIALS) and their batched forms sendmmsg/recvmmsg.
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <cstring>

#include "syscalls/read_write.h"
#include "syscalls/sys_socket.h"

namespace sentry::syscalls {

namespace {

constexpr size_t kRound = 1 << 20;     // stream data moves in rounds of this much
// No datagram, record or UDP message of ours is bigger (unix: SO_SNDBUF at most 425984).
constexpr size_t kMaxMessage = 1 << 20;
constexpr size_t kMaxControl = 20480;  // net.core.optmem_max
constexpr int kUioMaxIov = 1024;

// The iovecs of a message: readv's, but with sendmsg's EMSGSIZE for too many.
Result<GuestBuffer> CopyInIov(Task& t, GuestAddr addr, size_t count) {
  if (count > kUioMaxIov) return Errno(EMSGSIZE);
  return CopyInIovecs(t, addr, static_cast<int>(count));
}

std::vector<uint8_t>& Stage(size_t n) {
  thread_local std::vector<uint8_t> buf;
  if (buf.size() < n) buf.resize(n);
  return buf;
}

// An IPPROTO_IP / IPPROTO_IPV6 control message of sendmsg: a per-datagram hop limit or
// traffic class (-1 keeps the socket's); packet info is accepted and has nothing to change.
Result<void> ParseIpCmsg(const struct cmsghdr& h, const uint8_t* data, size_t dlen,
                         netstack::Control& out) {
  auto int_value = [&](int lo) -> Result<int> {
    if (dlen != sizeof(int)) return Errno(EINVAL);
    int v;
    std::memcpy(&v, data, sizeof(v));
    if (v < lo || v > 255) return Errno(EINVAL);
    return v;
  };
  if (h.cmsg_level == IPPROTO_IPV6) {
    if (h.cmsg_type == IPV6_HOPLIMIT) out.hoplimit = SENTRY_TRY(int_value(-1));
    if (h.cmsg_type == IPV6_TCLASS) out.tclass = SENTRY_TRY(int_value(-1));
  } else if (h.cmsg_level == IPPROTO_IP) {
    if (h.cmsg_type == IP_TTL) out.hoplimit = SENTRY_TRY(int_value(1));
    if (h.cmsg_type == IP_TOS) {
      if (dlen == 1) {
        out.tclass = data[0];
      } else {
        out.tclass = SENTRY_TRY(int_value(0));
      }
    }
  }
  return Ok();
}

// Parses sendmsg's control buffer into `out` (SCM_RIGHTS files, SCM_CREDENTIALS).
Result<void> ParseControl(Task& t, netstack::Socket& s, GuestAddr addr, size_t len,
                          netstack::Control& out) {
  if (len == 0) return Ok();
  if (len > INT32_MAX) return Errno(ENOBUFS);
  if (len > kMaxControl) return Errno(ENOBUFS);
  if (len < sizeof(struct cmsghdr)) return Errno(EINVAL);
  std::vector<uint8_t> buf(len);
  SENTRY_TRY(t.CopyInBytes(addr, buf));
  size_t off = 0;
  while (off + sizeof(struct cmsghdr) <= len) {
    struct cmsghdr h;
    std::memcpy(&h, buf.data() + off, sizeof(h));
    if (h.cmsg_len < sizeof(h) || h.cmsg_len > len - off) return Errno(EINVAL);
    const uint8_t* data = buf.data() + off + CMSG_LEN(0);
    size_t dlen = h.cmsg_len - CMSG_LEN(0);
    if (s.family() == AF_INET || s.family() == AF_INET6) {
      if (h.cmsg_level != SOL_SOCKET) {
        SENTRY_TRY(ParseIpCmsg(h, data, dlen, out));
        off += CMSG_ALIGN(h.cmsg_len);
        continue;
      }
    }
    if (h.cmsg_level == SOL_SOCKET) {
      if (s.family() != AF_UNIX) return Errno(EINVAL);
      if (h.cmsg_type == SCM_RIGHTS) {
        size_t n = dlen / sizeof(int);
        if (n + out.rights.size() > 253) return Errno(EINVAL);
        for (size_t i = 0; i < n; i++) {
          int fd;
          std::memcpy(&fd, data + i * sizeof(int), sizeof(int));
          out.rights.push_back(SENTRY_TRY(GetFile(t, fd)));
        }
      } else if (h.cmsg_type == SCM_CREDENTIALS) {
        struct ucred u;
        if (dlen != sizeof(u)) return Errno(EINVAL);
        std::memcpy(&u, data, sizeof(u));
        absl::MutexLock l(&t.kernel().mu());
        const kernel::Credentials& c = t.tg().creds;
        bool root = c.euid == 0;
        // The pid is the sender's namespace's number; the message carries the global one.
        int global = t.ToGlobalPid(u.pid);
        if (global != t.tg().tgid && !root) return Errno(EPERM);
        if (global == 0) return Errno(ESRCH);
        u.pid = global;
        if (!root && u.uid != c.ruid && u.uid != c.euid && u.uid != c.suid) return Errno(EPERM);
        if (!root && u.gid != c.rgid && u.gid != c.egid && u.gid != c.sgid) return Errno(EPERM);
        out.creds = netstack::Ucred{u.pid, u.uid, u.gid};
      } else {
        return Errno(EINVAL);
      }
    }
    off += CMSG_ALIGN(h.cmsg_len);
  }
  return Ok();
}

// Writes recvmsg's control messages; returns the bytes used and sets MSG_CTRUNC in *flags
// when something did not fit. Files that do not fit (or fail to install) are dropped.
Result<size_t> WriteControl(Task& t, netstack::Control& c, GuestAddr addr, size_t len,
                            int recv_flags, int* flags) {
  std::vector<uint8_t> out;
  auto put = [&](int level, int type, const void* data, size_t dlen) {
    size_t room = len > out.size() ? len - out.size() : 0;
    if (room < CMSG_LEN(0)) {
      *flags |= MSG_CTRUNC;
      return;
    }
    size_t clen = CMSG_LEN(dlen);
    if (clen > room) {
      *flags |= MSG_CTRUNC;
      clen = room;
    }
    struct cmsghdr h {};
    h.cmsg_len = clen;
    h.cmsg_level = level;
    h.cmsg_type = type;
    size_t at = out.size();
    out.resize(at + std::min(CMSG_SPACE(dlen), room));
    std::memcpy(out.data() + at, &h, sizeof(h));
    std::memcpy(out.data() + at + CMSG_LEN(0), data, clen - CMSG_LEN(0));
  };
  if (c.creds) {
    // The receiver's number for the sender (0 when it has none in its PID namespace).
    struct ucred u = {t.LocalPid(c.creds->pid), c.creds->uid, c.creds->gid};
    put(SOL_SOCKET, SCM_CREDENTIALS, &u, sizeof(u));
  }
  if (!c.rights.empty()) {
    size_t room = len > out.size() + CMSG_LEN(0) ? len - out.size() - CMSG_LEN(0) : 0;
    size_t fit = std::min(c.rights.size(), room / sizeof(int));
    std::vector<int> fds;
    uint64_t limit = NofileLimit(t);
    for (size_t i = 0; i < fit; i++) {
      auto fd = t.fds().Add(c.rights[i], recv_flags & MSG_CMSG_CLOEXEC, 0, limit);
      if (!fd.ok()) break;
      fds.push_back(static_cast<int>(*fd));
    }
    if (fds.size() < c.rights.size()) *flags |= MSG_CTRUNC;
    if (!fds.empty()) put(SOL_SOCKET, SCM_RIGHTS, fds.data(), fds.size() * sizeof(int));
  }
  for (const auto& m : c.ip) put(m.level, m.type, m.data.data(), m.data.size());
  if (!out.empty()) SENTRY_TRY(t.CopyOutBytes(addr, out));
  return out.size();
}

struct MsgOut {
  uint64_t bytes = 0;
  netstack::SockAddr from;
  int msg_flags = 0;
  size_t control_len = 0;
};

// One send: data from `iov`, to `to` (empty: the peer), with `control`.
Result<uint64_t> DoSend(Task& t, netstack::Socket& s, const GuestBuffer& iov,
                        std::span<const uint8_t> to, int flags, netstack::Control control) {
  Caller c(t);
  TaskPaths paths(t);
  bool stream = s.type() == SOCK_STREAM;
  if (!stream && iov.total > kMaxMessage) return Errno(EMSGSIZE);
  size_t done = 0;
  do {
    size_t want = stream ? std::min(iov.total - done, kRound) : iov.total;
    auto& buf = Stage(want);
    size_t got = iov.CopyIn(t, done, {buf.data(), want});
    if (got < want && (got == 0 || !stream)) {
      if (done > 0) break;
      return Errno(EFAULT);
    }
    netstack::SendRequest req;
    req.data = {buf.data(), got};
    req.to = to;
    req.flags = flags;
    req.control = std::move(control);
    control = netstack::Control();
    auto r = s.Send(c, req, paths);
    if (!r.ok()) {
      if (done > 0) break;
      if (r.error() == EPIPE && !(flags & MSG_NOSIGNAL)) RaiseSigpipe(t);
      return r.error();
    }
    done += *r;
    if (*r < got || got < want) break;
  } while (done < iov.total);
  return done;
}

// One receive into `iov`.
Result<MsgOut> DoRecv(Task& t, netstack::Socket& s, const GuestBuffer& iov, int flags,
                      GuestAddr control, size_t control_len) {
  Caller c(t);
  bool stream = s.type() == SOCK_STREAM;
  MsgOut out;
  size_t want = stream ? std::min(iov.total, kRound) : std::min(iov.total, kMaxMessage);
  if (flags & MSG_TRUNC) want = std::min(iov.total, kMaxMessage);
  auto& buf = Stage(want);
  auto r = SENTRY_TRY(s.Recv(c, {buf.data(), want}, flags));
  // TCP's MSG_TRUNC discards the bytes (the netstack did not copy them).
  bool discard = (flags & MSG_TRUNC) && stream && s.family() != AF_UNIX;
  size_t copied = discard ? 0 : r.copied;
  size_t put = iov.CopyOut(t, 0, {buf.data(), copied});
  if (put < copied && put == 0) return Errno(EFAULT);
  out.bytes = ((flags & MSG_TRUNC) && !stream) ? r.length : r.copied;
  out.from = std::move(r.from);
  out.msg_flags = r.msg_flags;
  if (control.value() != 0 || !r.control.rights.empty() || r.control.creds ||
      !r.control.ip.empty()) {
    if (control_len > 0 && control.value() != 0) {
      out.control_len =
          SENTRY_TRY(WriteControl(t, r.control, control, control_len, flags, &out.msg_flags));
    } else if (!r.control.empty() || !r.control.ip.empty()) {
      out.msg_flags |= MSG_CTRUNC;  // no room at all: Linux's put_cmsg says so
    }
  }
  return out;
}

// sendmsg of one guest msghdr.
Result<uint64_t> SendMsghdr(Task& t, netstack::Socket& s, const struct msghdr& m, int flags) {
  auto iov =
      SENTRY_TRY(CopyInIov(t, GuestAddr(reinterpret_cast<uint64_t>(m.msg_iov)), m.msg_iovlen));
  std::vector<uint8_t> to;
  if (m.msg_name && m.msg_namelen) {
    to = SENTRY_TRY(CopyInAddr(t, GuestAddr(reinterpret_cast<uint64_t>(m.msg_name)),
                               static_cast<int>(m.msg_namelen)));
  }
  netstack::Control control;
  SENTRY_TRY(ParseControl(t, s, GuestAddr(reinterpret_cast<uint64_t>(m.msg_control)),
                          m.msg_controllen, control));
  return DoSend(t, s, iov, to, flags, std::move(control));
}

// recvmsg of one guest msghdr at `addr`, written back there.
Result<uint64_t> RecvMsghdr(Task& t, netstack::Socket& s, GuestAddr addr, int flags) {
  auto m = SENTRY_TRY(t.CopyIn<struct msghdr>(addr));
  if (static_cast<int>(m.msg_namelen) < 0) return Errno(EINVAL);
  auto iov =
      SENTRY_TRY(CopyInIov(t, GuestAddr(reinterpret_cast<uint64_t>(m.msg_iov)), m.msg_iovlen));
  auto out = SENTRY_TRY(DoRecv(
      t, s, iov, flags, GuestAddr(reinterpret_cast<uint64_t>(m.msg_control)), m.msg_controllen));
  if (m.msg_name) {
    size_t n = std::min<size_t>(m.msg_namelen, out.from.size());
    if (n) {
      SENTRY_TRY(
          t.CopyOutBytes(GuestAddr(reinterpret_cast<uint64_t>(m.msg_name)), {out.from.data(), n}));
    }
    m.msg_namelen = out.from.size();
  } else {
    m.msg_namelen = 0;
  }
  m.msg_controllen = out.control_len;
  m.msg_flags = out.msg_flags;
  SENTRY_TRY(t.CopyOut(addr, m));
  return out.bytes;
}

}  // namespace

Result<uint64_t> SysSendto(Task& t, int fd, GuestAddr buf, size_t len, int flags, GuestAddr addr,
                           int addrlen) {
  auto [f, s] = SENTRY_TRY(GetSocket(t, fd));
  std::vector<uint8_t> to;
  if (addr.value() != 0 && addrlen != 0) to = SENTRY_TRY(CopyInAddr(t, addr, addrlen));
  return DoSend(t, *s, OneRange(buf, len), to, flags, {});
}

Result<uint64_t> SysRecvfrom(Task& t, int fd, GuestAddr buf, size_t len, int flags, GuestAddr addr,
                             GuestAddr len_addr) {
  auto [f, s] = SENTRY_TRY(GetSocket(t, fd));
  if (addr.value() != 0 && len_addr.value() != 0) {
    int l = SENTRY_TRY(t.CopyIn<int>(len_addr));
    if (l < 0) return Errno(EINVAL);
  }
  auto out = SENTRY_TRY(DoRecv(t, *s, OneRange(buf, len), flags, GuestAddr(0), 0));
  if (addr.value() != 0) SENTRY_TRY(CopyOutAddr(t, out.from, addr, len_addr));
  return out.bytes;
}

Result<uint64_t> SysSendmsg(Task& t, int fd, GuestAddr msg, int flags) {
  auto [f, s] = SENTRY_TRY(GetSocket(t, fd));
  auto m = SENTRY_TRY(t.CopyIn<struct msghdr>(msg));
  return SendMsghdr(t, *s, m, flags);
}

Result<uint64_t> SysRecvmsg(Task& t, int fd, GuestAddr msg, int flags) {
  auto [f, s] = SENTRY_TRY(GetSocket(t, fd));
  return RecvMsghdr(t, *s, msg, flags);
}

Result<uint64_t> SysSendmmsg(Task& t, int fd, GuestAddr vec, unsigned vlen, int flags) {
  auto [f, s] = SENTRY_TRY(GetSocket(t, fd));
  vlen = std::min(vlen, static_cast<unsigned>(kUioMaxIov));
  unsigned i = 0;
  for (; i < vlen; i++) {
    GuestAddr at(vec.value() + i * sizeof(struct mmsghdr));
    auto mm = t.CopyIn<struct mmsghdr>(at);
    if (!mm.ok()) {
      if (i > 0) break;
      return mm.error();
    }
    auto r = SendMsghdr(t, *s, mm->msg_hdr, flags);
    if (!r.ok()) {
      if (i > 0) break;
      return r.error();
    }
    unsigned len = static_cast<unsigned>(*r);
    SENTRY_TRY(t.CopyOut(GuestAddr(at.value() + offsetof(struct mmsghdr, msg_len)), len));
  }
  return i;
}

Result<uint64_t> SysRecvmmsg(Task& t, int fd, GuestAddr vec, unsigned vlen, int flags,
                             GuestAddr timeout) {
  auto [f, s] = SENTRY_TRY(GetSocket(t, fd));
  absl::Time deadline = absl::InfiniteFuture();
  if (timeout.value() != 0) deadline = absl::Now() + SENTRY_TRY(CopyInDuration(t, timeout));
  vlen = std::min(vlen, static_cast<unsigned>(kUioMaxIov));
  unsigned i = 0;
  for (; i < vlen; i++) {
    GuestAddr at(vec.value() + i * sizeof(struct mmsghdr));
    auto r = RecvMsghdr(t, *s, at, flags);
    if (!r.ok()) {
      if (i > 0) break;
      return r.error();
    }
    unsigned len = static_cast<unsigned>(*r);
    SENTRY_TRY(t.CopyOut(GuestAddr(at.value() + offsetof(struct mmsghdr, msg_len)), len));
    if (flags & MSG_WAITFORONE) flags |= MSG_DONTWAIT;
    if (absl::Now() >= deadline) {
      i++;
      break;
    }
  }
  return i;
}

}  // namespace sentry::syscalls
