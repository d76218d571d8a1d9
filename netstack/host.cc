#include "netstack/host.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <thread>

#include "absl/synchronization/mutex.h"

namespace sentry::netstack {
namespace {

// The thread that turns host socket events into WaitQueue notifications.
class HostPoller {
 public:
  static HostPoller& Get() {
    static HostPoller* p = new HostPoller();  // never destroyed: its thread runs to the end
    return *p;
  }

  Result<uint64_t> Watch(int fd, WaitQueue* queue) {
    absl::MutexLock l(&mu_);
    if (epfd_ < 0) {
      epfd_ = epoll_create1(EPOLL_CLOEXEC);
      if (epfd_ < 0) return Errno(errno);
      std::thread([this] { Loop(); }).detach();
    }
    uint64_t id = next_id_++;
    struct epoll_event ev {};
    ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLPRI | EPOLLET;
    ev.data.u64 = id;
    if (epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev) != 0) return Errno(errno);
    queues_[id] = queue;
    return id;
  }

  // Once this returns, `id`'s queue is not notified again.
  void Unwatch(int fd, uint64_t id) {
    absl::MutexLock l(&mu_);
    queues_.erase(id);
    epoll_ctl(epfd_, EPOLL_CTL_DEL, fd, nullptr);
  }

 private:
  void Loop() {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    struct epoll_event evs[64];
    for (;;) {
      int n = epoll_wait(epfd_, evs, 64, -1);
      if (n < 0) continue;
      absl::MutexLock l(&mu_);
      for (int i = 0; i < n; i++) {
        auto it = queues_.find(evs[i].data.u64);
        // EPOLL* and the kEvent* masks share their bits, as poll's do.
        if (it != queues_.end()) it->second->Notify(evs[i].events & 0xffff);
      }
    }
  }

  absl::Mutex mu_;
  int epfd_ ABSL_GUARDED_BY(mu_) = -1;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<uint64_t, WaitQueue*> queues_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

socklen_t HostSockaddr(const InetAddr& dst, bool v4, struct sockaddr_storage* out) {
  std::memset(out, 0, sizeof(*out));
  if (v4) {
    auto* sin = reinterpret_cast<struct sockaddr_in*>(out);
    sin->sin_family = AF_INET;
    sin->sin_port = htons(dst.port);
    std::memcpy(&sin->sin_addr, &dst.ip[12], 4);
    return sizeof(*sin);
  }
  auto* sin6 = reinterpret_cast<struct sockaddr_in6*>(out);
  sin6->sin6_family = AF_INET6;
  sin6->sin6_port = htons(dst.port);
  sin6->sin6_flowinfo = dst.flowinfo;
  sin6->sin6_scope_id = dst.scope_id;
  std::memcpy(&sin6->sin6_addr, dst.ip.data(), 16);
  return sizeof(*sin6);
}

InetAddr FromHostSockaddr(const struct sockaddr_storage& ss) {
  if (ss.ss_family == AF_INET) {
    const auto* sin = reinterpret_cast<const struct sockaddr_in*>(&ss);
    return InetAddr::V4(ntohl(sin->sin_addr.s_addr), ntohs(sin->sin_port));
  }
  InetAddr a;
  const auto* sin6 = reinterpret_cast<const struct sockaddr_in6*>(&ss);
  std::memcpy(a.ip.data(), &sin6->sin6_addr, 16);
  a.port = ntohs(sin6->sin6_port);
  a.flowinfo = sin6->sin6_flowinfo;
  a.scope_id = sin6->sin6_scope_id;
  return a;
}

Result<std::unique_ptr<HostLink>> HostLink::Open(const InetAddr& dst, int type, WaitQueue* queue,
                                                 int protocol) {
  bool v4 = dst.IsV4();
  int fd = socket(v4 ? AF_INET : AF_INET6, type | SOCK_NONBLOCK | SOCK_CLOEXEC, protocol);
  if (fd < 0) return Errno(errno == EAFNOSUPPORT ? ENETUNREACH : errno);
  std::unique_ptr<HostLink> link(new HostLink(fd, v4));
  link->watch_id_ = SENTRY_TRY(HostPoller::Get().Watch(fd, queue));
  return link;
}

Result<std::unique_ptr<HostLink>> HostLink::Listen(const InetAddr& local, bool v6only, int backlog,
                                                   WaitQueue* queue) {
  std::unique_ptr<HostLink> link = SENTRY_TRY(Bound(local, SOCK_STREAM, v6only, queue));
  if (listen(link->fd_, backlog) != 0) return Errno(errno);
  return link;
}

Result<std::unique_ptr<HostLink>> HostLink::Bound(const InetAddr& local, int type, bool v6only,
                                                  WaitQueue* queue) {
  bool v4 = local.IsV4();
  int fd = socket(v4 ? AF_INET : AF_INET6, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Errno(errno == EAFNOSUPPORT ? EADDRNOTAVAIL : errno);
  std::unique_ptr<HostLink> link(new HostLink(fd, v4));
  int one = 1, v6o = v6only ? 1 : 0;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (!v4) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6o, sizeof(v6o));
  struct sockaddr_storage ss;
  socklen_t len = HostSockaddr(local, v4, &ss);
  if (bind(fd, reinterpret_cast<struct sockaddr*>(&ss), len) != 0) return Errno(errno);
  link->watch_id_ = SENTRY_TRY(HostPoller::Get().Watch(fd, queue));
  return link;
}

Result<std::unique_ptr<HostLink>> HostLink::Adopt(int fd, bool v4, WaitQueue* queue) {
  std::unique_ptr<HostLink> link(new HostLink(fd, v4));
  link->watch_id_ = SENTRY_TRY(HostPoller::Get().Watch(fd, queue));
  return link;
}

Result<int> HostLink::AcceptFd(InetAddr* peer) {
  struct sockaddr_storage ss {};
  socklen_t len = sizeof(ss);
  // accept, not accept4: the Sentry's allowlist keeps accept4 for the OCI control socket.
  int fd = accept(fd_, reinterpret_cast<struct sockaddr*>(&ss), &len);
  if (fd < 0) return Errno(errno == EWOULDBLOCK ? EAGAIN : errno);
  if (fcntl(fd, F_SETFL, O_RDWR | O_NONBLOCK) != 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) {
    int err = errno;
    close(fd);
    return Errno(err);
  }
  *peer = FromHostSockaddr(ss);
  return fd;
}

Result<InetAddr> HostLink::LocalAddr() {
  struct sockaddr_storage ss {};
  socklen_t len = sizeof(ss);
  if (getsockname(fd_, reinterpret_cast<struct sockaddr*>(&ss), &len) != 0) return Errno(errno);
  return FromHostSockaddr(ss);
}

HostLink::~HostLink() {
  if (watch_id_ != 0) HostPoller::Get().Unwatch(fd_, watch_id_);
  close(fd_);
}

Result<void> HostLink::Connect(const InetAddr& dst) {
  struct sockaddr_storage ss;
  socklen_t len = HostSockaddr(dst, v4_, &ss);
  if (connect(fd_, reinterpret_cast<struct sockaddr*>(&ss), len) == 0) return Ok();
  return Errno(errno);
}

Result<size_t> HostLink::Send(std::span<const uint8_t> data, int flags, const InetAddr* to) {
  struct sockaddr_storage ss;
  socklen_t len = to ? HostSockaddr(*to, v4_, &ss) : 0;
  // Only the flags that change what goes out; the rest is the Sentry's business.
  int pass = flags & (MSG_MORE | MSG_EOR | MSG_DONTROUTE | MSG_CONFIRM);
  ssize_t n = sendto(fd_, data.data(), data.size(), pass | MSG_DONTWAIT | MSG_NOSIGNAL,
                     to ? reinterpret_cast<struct sockaddr*>(&ss) : nullptr, len);
  if (n < 0) return Errno(errno);
  return static_cast<size_t>(n);
}

Result<size_t> HostLink::Recv(std::span<uint8_t> dst, int flags, InetAddr* from, size_t* length,
                              int* msg_flags, int* ttl) {
  struct sockaddr_storage ss {};
  struct iovec iov = {dst.data(), dst.size()};
  struct msghdr mh {};
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int)) * 2];
  mh.msg_name = &ss;
  mh.msg_namelen = sizeof(ss);
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  if (ttl) {
    mh.msg_control = control;
    mh.msg_controllen = sizeof(control);
  }
  int pass = flags & (MSG_PEEK | MSG_TRUNC | MSG_WAITALL);
  ssize_t n = recvmsg(fd_, &mh, (pass & ~MSG_WAITALL) | MSG_DONTWAIT);
  if (n < 0) return Errno(errno);
  if (from && mh.msg_namelen > 0) *from = FromHostSockaddr(ss);
  if (length) *length = static_cast<size_t>(n);
  if (msg_flags) *msg_flags = mh.msg_flags & MSG_TRUNC;
  for (struct cmsghdr* c = ttl ? CMSG_FIRSTHDR(&mh) : nullptr; c; c = CMSG_NXTHDR(&mh, c)) {
    bool is_ttl = (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TTL) ||
                  (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_HOPLIMIT);
    if (is_ttl && c->cmsg_len >= CMSG_LEN(sizeof(int))) std::memcpy(ttl, CMSG_DATA(c), sizeof(int));
  }
  return std::min(static_cast<size_t>(n), dst.size());
}

Result<void> HostLink::SetIntOption(int level, int name, int value) {
  if (setsockopt(fd_, level, name, &value, sizeof(value)) != 0) return Errno(errno);
  return Ok();
}

EventMask HostLink::Readiness() {
  struct pollfd p = {fd_, POLLIN | POLLOUT | POLLPRI | POLLRDHUP, 0};
  if (poll(&p, 1, 0) <= 0) return 0;
  return static_cast<EventMask>(p.revents);
}

int HostLink::TakeError() {
  int err = 0;
  socklen_t len = sizeof(err);
  if (getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len) != 0) return errno;
  return err;
}

Result<void> HostLink::Shutdown(int how) {
  if (shutdown(fd_, how) != 0) return Errno(errno);
  return Ok();
}

size_t HostLink::InQueue() {
  int n = 0;
  if (ioctl(fd_, FIONREAD, &n) != 0) return 0;
  return static_cast<size_t>(n);
}

size_t HostLink::OutQueue() {
  int n = 0;
  if (ioctl(fd_, TIOCOUTQ, &n) != 0) return 0;
  return static_cast<size_t>(n);
}

}  // namespace sentry::netstack
