// The socket calls that set sockets up: socket, socketpair, bind, listen, accept, connect,
// shutdown, names and options. Data moves in sys_socket_msg.cc. The sockets themselves are
// netstack/'s; this file copies between guest memory and the netstack's host buffers and
// gives it the caller's view of the VFS for AF_UNIX path names.
#include "syscalls/sys_socket.h"

#include <linux/sockios.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/un.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "netstack/host_interfaces.h"
#include "netstack/stack.h"

namespace sentry::syscalls {

namespace {
constexpr int kMaxAddrLen = sizeof(struct sockaddr_storage);

// The key of the socket inode at `p`: what its st_dev/st_ino say.
Result<netstack::NameKey> KeyOf(const vfs::Path& p) {
  dev_t dev;
  uint64_t ino;
  if (p.inode()->Identity(&dev, &ino)) return netstack::NameKey{dev, ino};
  struct stat st = SENTRY_TRY(p.inode()->Stat());
  return netstack::NameKey{st.st_dev, st.st_ino};
}
}  // namespace

Result<netstack::NameKey> TaskPaths::BindNode(const std::string& path) {
  if (path.empty()) return Errno(ENOENT);
  vfs::Context ctx = t_.VfsContext();
  vfs::Path start = SENTRY_TRY(StartAt(t_, ctx, AT_FDCWD, path));
  vfs::Vfs& v = t_.kernel().vfs();
  SENTRY_TRY(v.Mknod(ctx, start, path, S_IFSOCK | 0777, 0));
  vfs::Path p = SENTRY_TRY(v.Resolve(ctx, start, path, false));
  return KeyOf(p);
}

Result<netstack::NameKey> TaskPaths::Lookup(const std::string& path) {
  if (path.empty()) return Errno(ENOENT);
  vfs::Context ctx = t_.VfsContext();
  vfs::Path start = SENTRY_TRY(StartAt(t_, ctx, AT_FDCWD, path));
  vfs::Vfs& v = t_.kernel().vfs();
  vfs::Path p = SENTRY_TRY(v.Resolve(ctx, start, path, true));
  SENTRY_TRY(v.Access(ctx, p, W_OK));
  if (!S_ISSOCK(p.inode()->Type())) return Errno(ECONNREFUSED);
  return KeyOf(p);
}

Caller::Caller(Task& t) : netstack::Caller{t, {}, {}} {
  absl::MutexLock l(&t.kernel().mu());
  const kernel::Credentials& c = t.tg().creds;
  cred = {t.tg().tgid, c.euid, c.egid};
  real = {t.tg().tgid, c.ruid, c.rgid};
  net_admin = c.CapableIn(t.ns().net->owner.get(), CAP_NET_ADMIN);
  net_raw = c.CapableIn(t.ns().net->owner.get(), CAP_NET_RAW);
}

netstack::Stack& NetStack(Task& t) { return *t.ns().net->stack; }

Result<std::pair<vfs::FileRef, netstack::Socket*>> GetSocket(Task& t, int fd) {
  auto f = SENTRY_TRY(GetFile(t, fd));
  netstack::Socket* s = netstack::AsSocket(*f);
  if (!s) return Errno(ENOTSOCK);
  return std::make_pair(std::move(f), s);
}

Result<std::vector<uint8_t>> CopyInAddr(Task& t, GuestAddr addr, int len) {
  if (len < 0 || len > kMaxAddrLen) return Errno(EINVAL);
  std::vector<uint8_t> a(len);
  if (len > 0) SENTRY_TRY(t.CopyInBytes(addr, a));
  return a;
}

Result<void> CopyOutAddr(Task& t, const std::vector<uint8_t>& a, GuestAddr addr,
                         GuestAddr len_addr) {
  if (len_addr.value() == 0) return Ok();
  int len = SENTRY_TRY(t.CopyIn<int>(len_addr));
  if (len < 0) return Errno(EINVAL);
  size_t n = std::min(static_cast<size_t>(len), a.size());
  if (n > 0) SENTRY_TRY(t.CopyOutBytes(addr, {a.data(), n}));
  return t.CopyOut(len_addr, static_cast<int>(a.size()));
}

Result<uint64_t> SysSocket(Task& t, int domain, int type, int protocol) {
  if (type & ~(0xf | SOCK_NONBLOCK | SOCK_CLOEXEC)) return Errno(EINVAL);
  if ((type & 0xf) == 0 || (type & 0xf) > SOCK_PACKET) {
    if (domain < 0 || domain >= AF_MAX) return Errno(EAFNOSUPPORT);
    return Errno(EINVAL);
  }
  if (domain < 0 || domain >= AF_MAX) return Errno(EAFNOSUPPORT);
  Caller c(t);
  auto f = SENTRY_TRY(NetStack(t).NewSocket(domain, type, protocol, c.cred, c.net_raw));
  return t.fds().Add(std::move(f), type & SOCK_CLOEXEC, 0, NofileLimit(t));
}

Result<uint64_t> SysSocketpair(Task& t, int domain, int type, int protocol, GuestAddr sv) {
  if (type & ~(0xf | SOCK_NONBLOCK | SOCK_CLOEXEC)) return Errno(EINVAL);
  if (domain < 0 || domain >= AF_MAX) return Errno(EAFNOSUPPORT);
  Caller c(t);
  auto [a, b] = SENTRY_TRY(NetStack(t).NewPair(domain, type, protocol, c.cred));
  uint64_t limit = NofileLimit(t);
  bool cloexec = type & SOCK_CLOEXEC;
  int fa = static_cast<int>(SENTRY_TRY(t.fds().Add(a, cloexec, 0, limit)));
  auto fb = t.fds().Add(b, cloexec, 0, limit);
  if (!fb.ok()) {
    (void)t.fds().Remove(fa);
    return fb.error();
  }
  int32_t fds[2] = {fa, static_cast<int32_t>(*fb)};
  if (auto r = t.CopyOut(sv, fds); !r.ok()) {
    (void)t.fds().Remove(fa);
    (void)t.fds().Remove(fds[1]);
    return r.error();
  }
  return 0;
}

Result<uint64_t> SysBind(Task& t, int fd, GuestAddr addr, int len) {
  auto [f, s] = SENTRY_TRY(GetSocket(t, fd));
  auto a = SENTRY_TRY(CopyInAddr(t, addr, len));
  TaskPaths paths(t);
  SENTRY_TRY(s->Bind(a, paths));
  return 0;
}

Result<uint64_t> SysListen(Task& t, int fd, int backlog) {
  auto [f, s] = SENTRY_TRY(GetSocket(t, fd));
  Caller c(t);
  SENTRY_TRY(s->Listen(backlog, c.cred));
  return 0;
}

Result<uint64_t> SysAccept4(Task& t, int fd, GuestAddr addr, GuestAddr len_addr, int flags) {
  if (flags & ~(SOCK_CLOEXEC | SOCK_NONBLOCK)) return Errno(EINVAL);
  auto [f, s] = SENTRY_TRY(GetSocket(t, fd));
  if (addr.value() != 0 && len_addr.value() != 0) {
    int len = SENTRY_TRY(t.CopyIn<int>(len_addr));
    if (len < 0) return Errno(EINVAL);
  }
  Caller c(t);
  auto nf = SENTRY_TRY(s->Accept(c, f->NonBlocking()));
  if (flags & SOCK_NONBLOCK) nf->SetStatusFlags(nf->flags() | O_NONBLOCK);
  if (addr.value() != 0) {
    auto peer = netstack::AsSocket(*nf)->PeerName();
    SENTRY_TRY(CopyOutAddr(t, peer.ok() ? *peer : netstack::SockAddr{}, addr, len_addr));
  }
  return t.fds().Add(std::move(nf), flags & SOCK_CLOEXEC, 0, NofileLimit(t));
}

Result<uint64_t> SysAccept(Task& t, int fd, GuestAddr addr, GuestAddr len_addr) {
  return SysAccept4(t, fd, addr, len_addr, 0);
}

Result<uint64_t> SysConnect(Task& t, int fd, GuestAddr addr, int len) {
  auto [f, s] = SENTRY_TRY(GetSocket(t, fd));
  auto a = SENTRY_TRY(CopyInAddr(t, addr, len));
  Caller c(t);
  TaskPaths paths(t);
  SENTRY_TRY(s->Connect(c, a, paths));
  return 0;
}

Result<uint64_t> SysShutdown(Task& t, int fd, int how) {
  auto [f, s] = SENTRY_TRY(GetSocket(t, fd));
  SENTRY_TRY(s->Shutdown(how));
  return 0;
}

Result<uint64_t> SysGetsockname(Task& t, int fd, GuestAddr addr, GuestAddr len_addr) {
  auto [f, s] = SENTRY_TRY(GetSocket(t, fd));
  auto a = SENTRY_TRY(s->SockName());
  SENTRY_TRY(CopyOutAddr(t, a, addr, len_addr));
  return 0;
}

Result<uint64_t> SysGetpeername(Task& t, int fd, GuestAddr addr, GuestAddr len_addr) {
  auto [f, s] = SENTRY_TRY(GetSocket(t, fd));
  auto a = SENTRY_TRY(s->PeerName());
  SENTRY_TRY(CopyOutAddr(t, a, addr, len_addr));
  return 0;
}

Result<uint64_t> SysSetsockopt(Task& t, int fd, int level, int name, GuestAddr val, int len) {
  auto [f, s] = SENTRY_TRY(GetSocket(t, fd));
  if (len < 0) return Errno(EINVAL);
  std::vector<uint8_t> v(std::min(len, 4096));
  if (!v.empty()) SENTRY_TRY(t.CopyInBytes(val, v));
  SENTRY_TRY(s->SetOption(level, name, v));
  return 0;
}

Result<uint64_t> SysGetsockopt(Task& t, int fd, int level, int name, GuestAddr val,
                               GuestAddr len_addr) {
  auto [f, s] = SENTRY_TRY(GetSocket(t, fd));
  int len = SENTRY_TRY(t.CopyIn<int>(len_addr));
  if (len < 0) return Errno(EINVAL);
  auto v = SENTRY_TRY(s->GetOption(level, name));
  // The stack keeps the peer's global pid; the caller sees its number in its PID namespace.
  if (level == SOL_SOCKET && name == SO_PEERCRED && v.size() >= sizeof(struct ucred)) {
    struct ucred u;
    std::memcpy(&u, v.data(), sizeof(u));
    u.pid = t.LocalPid(u.pid);
    std::memcpy(v.data(), &u, sizeof(u));
  }
  // Linux writes int options of fewer bytes as far as they go (and a single byte for some
  // IP options); others need the whole value.
  size_t n = std::min(static_cast<size_t>(len), v.size());
  if (n > 0) SENTRY_TRY(t.CopyOutBytes(val, {v.data(), n}));
  SENTRY_TRY(t.CopyOut(len_addr, static_cast<int>(n)));
  return 0;
}

}  // namespace sentry::syscalls

namespace sentry::syscalls {

namespace {
// The stack's one interface, as the SIOCGIF* ioctls describe it (up or down).
constexpr int kLoIndex = 1;
constexpr short kLoUpFlags = IFF_UP | IFF_LOOPBACK | IFF_RUNNING;

void PutIn4(struct sockaddr* sa, uint32_t host_ip) {
  struct sockaddr_in sin {};
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(host_ip);
  std::memcpy(sa, &sin, sizeof(sin));
}

// The container's own interfaces (netstack/host_interfaces.h) that `stack` shows: the first
// stack's in host mode only.
const std::vector<netstack::HostInterface>& ContainerInterfaces(const netstack::Stack& stack) {
  static const std::vector<netstack::HostInterface> kNone;
  return stack.mode() == netstack::NetMode::kHost ? netstack::HostInterfaces() : kNone;
}

// The loopback interface of `stack`, described as the container's are.
netstack::HostInterface Loopback(const netstack::Stack& stack) {
  netstack::HostInterface lo;
  lo.index = kLoIndex;
  lo.name = "lo";
  lo.flags = stack.loopback_up() ? kLoUpFlags : static_cast<short>(IFF_LOOPBACK);
  lo.mtu = 65536;
  lo.v4.push_back({htonl(INADDR_LOOPBACK), 8, 0});
  return lo;
}

// SIOCGIF* for interface `h` (of hardware type `hw_type`: ARPHRD_*) into `r`; the first IPv4
// address is the one reported.
Result<void> InterfaceIoctl(const netstack::HostInterface& h, unsigned short hw_type,
                            uint64_t cmd, struct ifreq& r) {
  netstack::HostInterface::V4 v4 = h.v4.empty() ? netstack::HostInterface::V4{} : h.v4[0];
  switch (cmd) {
    case SIOCGIFNAME:
      std::memset(r.ifr_name, 0, sizeof(r.ifr_name));
      std::strncpy(r.ifr_name, h.name.c_str(), IFNAMSIZ - 1);
      break;
    case SIOCGIFINDEX:
      r.ifr_ifindex = h.index;
      break;
    case SIOCGIFFLAGS:
      r.ifr_flags = static_cast<short>(h.flags);
      break;
    case SIOCGIFADDR:
    case SIOCGIFNETMASK:
    case SIOCGIFBRDADDR: {
      if (h.v4.empty()) return Errno(EADDRNOTAVAIL);
      uint32_t mask = v4.prefix == 0 ? 0 : ~uint32_t{0} << (32 - v4.prefix);
      uint32_t value = cmd == SIOCGIFADDR      ? ntohl(v4.addr)
                       : cmd == SIOCGIFNETMASK ? mask
                                               : ntohl(v4.broadcast);
      PutIn4(&r.ifr_addr, value);
      break;
    }
    case SIOCGIFMTU:
      r.ifr_mtu = static_cast<int>(h.mtu);
      break;
    case SIOCGIFTXQLEN:
      r.ifr_qlen = 1000;
      break;
    case SIOCGIFMETRIC:
      r.ifr_metric = 0;
      break;
    case SIOCGIFHWADDR:
      std::memset(&r.ifr_hwaddr, 0, sizeof(r.ifr_hwaddr));
      r.ifr_hwaddr.sa_family = hw_type;
      std::memcpy(r.ifr_hwaddr.sa_data, h.mac.data(), h.mac.size());
      break;
  }
  return Ok();
}
}  // namespace

Result<uint64_t> SocketIoctl(Task& t, vfs::FileDescription& f, uint64_t cmd, uint64_t arg) {
  GuestAddr a(arg);
  // The interface of the socket's own namespace, whichever namespace the caller is in now.
  netstack::Stack& stack = netstack::AsSocket(f)->stack();
  switch (cmd) {
    case SIOCOUTQ: {
      int n = static_cast<int>(netstack::AsSocket(f)->OutQueue());
      SENTRY_TRY(t.CopyOut(a, n));
      return 0;
    }
    case SIOCGIFCONF: {
      struct ifconf ifc = SENTRY_TRY(t.CopyIn<struct ifconf>(a));
      // Only interfaces with an IPv4 address are listed, one entry per address.
      std::vector<struct ifreq> list;
      if (stack.loopback_v4_assigned()) {
        struct ifreq r {};
        std::strcpy(r.ifr_name, "lo");
        PutIn4(&r.ifr_addr, INADDR_LOOPBACK);
        list.push_back(r);
      }
      for (const auto& h : ContainerInterfaces(stack)) {
        for (const auto& v : h.v4) {
          struct ifreq r {};
          std::strncpy(r.ifr_name, h.name.c_str(), IFNAMSIZ - 1);
          PutIn4(&r.ifr_addr, ntohl(v.addr));
          list.push_back(r);
        }
      }
      if (ifc.ifc_buf == nullptr) {
        ifc.ifc_len = static_cast<int>(list.size() * sizeof(struct ifreq));
      } else {
        size_t fit = std::min(list.size(),
                              static_cast<size_t>(std::max(ifc.ifc_len, 0)) / sizeof(struct ifreq));
        GuestAddr buf(reinterpret_cast<uint64_t>(ifc.ifc_buf));
        for (size_t i = 0; i < fit; i++) {
          SENTRY_TRY(t.CopyOut(GuestAddr(buf.value() + i * sizeof(struct ifreq)), list[i]));
        }
        ifc.ifc_len = static_cast<int>(fit * sizeof(struct ifreq));
      }
      SENTRY_TRY(t.CopyOut(a, ifc));
      return 0;
    }
    case SIOCGIFNAME:
    case SIOCGIFINDEX:
    case SIOCGIFFLAGS:
    case SIOCGIFADDR:
    case SIOCGIFNETMASK:
    case SIOCGIFBRDADDR:
    case SIOCGIFMTU:
    case SIOCGIFHWADDR:
    case SIOCGIFTXQLEN:
    case SIOCGIFMETRIC: {
      struct ifreq r = SENTRY_TRY(t.CopyIn<struct ifreq>(a));
      auto named = [&](const netstack::HostInterface& h) {
        return cmd == SIOCGIFNAME ? r.ifr_ifindex == h.index
                                  : strncmp(r.ifr_name, h.name.c_str(), IFNAMSIZ) == 0;
      };
      const netstack::HostInterface* found = nullptr;
      for (const auto& h : ContainerInterfaces(stack)) {
        if (named(h)) {
          found = &h;
          break;
        }
      }
      netstack::HostInterface lo = Loopback(stack);
      if (found == nullptr && !named(lo)) return Errno(ENODEV);
      if (found != nullptr) {
        SENTRY_TRY(InterfaceIoctl(*found, ARPHRD_ETHER, cmd, r));
      } else {
        SENTRY_TRY(InterfaceIoctl(lo, ARPHRD_LOOPBACK, cmd, r));
      }
      SENTRY_TRY(t.CopyOut(a, r));
      return 0;
    }
    case SIOCSIFFLAGS: {
      // ifconfig lo up: as RTM_NEWLINK does, only lo's IFF_UP in a namespace's own stack.
      struct ifreq r = SENTRY_TRY(t.CopyIn<struct ifreq>(a));
      if (strncmp(r.ifr_name, "lo", IFNAMSIZ) != 0) return Errno(ENODEV);
      if (!Caller(t).net_admin) return Errno(EPERM);
      SENTRY_TRY(stack.SetLoopbackUp(r.ifr_flags & IFF_UP));
      return 0;
    }
    case SIOCSIFADDR:
    case SIOCSIFMTU:
    case SIOCSIFNETMASK:
    case SIOCSIFNAME:
    case SIOCSIFHWADDR:
    case SIOCADDRT:
    case SIOCDELRT:
      return Errno(EPERM);  // interfaces and routes are not configurable from inside
    default:
      return Errno(ENOTTY);
  }
}

}  // namespace sentry::syscalls
