// ICMP echo ("ping") sockets on loopback: socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP) and its
// IPv6 twin. The echo reply carries the socket's ident (getsockname's port) as id whatever
// id was sent, the sequence and payload echoed and a valid checksum; the errno table of bad
// requests, connect, IP_RECVTTL / IPV6_RECVHOPLIMIT, IP_RECVERR's empty error queue,
// SO_RCVTIMEO, MSG_PEEK / MSG_TRUNC, poll; raw sockets refused without CAP_NET_RAW.
//
// Natively the host's net.ipv4.ping_group_range usually admits nobody ("1 0"), so as root the
// program first moves to a network namespace of its own (loopback up, the range opened to
// every group there), which changes nothing outside it. In the sandbox unshare is ENOSYS and
// the sandbox's own range already admits every group.
#include "common.h"

#include <arpa/inet.h>
#include <linux/capability.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>

#define ECHO_V4 8
#define REPLY_V4 0
#define ECHO_V6 128
#define REPLY_V6 129

// Whether the program sees only its own loopback (a fresh namespace, or the sandbox).
static int isolated;

static const char kPayload[] = "sentry ping payload";

static struct sockaddr_in lo4(void) {
  struct sockaddr_in a;
  memset(&a, 0, sizeof(a));
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

static struct sockaddr_in6 lo6(void) {
  struct sockaddr_in6 a;
  memset(&a, 0, sizeof(a));
  a.sin6_family = AF_INET6;
  a.sin6_addr = in6addr_loopback;
  return a;
}

// An echo request: type, code 0, checksum 0 (the kernel fills it), id, sequence, payload.
static size_t echo_request(uint8_t *buf, int type, uint16_t id, uint16_t seq) {
  memset(buf, 0, 8);
  buf[0] = (uint8_t)type;
  uint16_t nid = htons(id), nseq = htons(seq);
  memcpy(buf + 4, &nid, 2);
  memcpy(buf + 6, &nseq, 2);
  memcpy(buf + 8, kPayload, sizeof(kPayload));
  return 8 + sizeof(kPayload);
}

static uint32_t sum16(const uint8_t *p, size_t n, uint32_t sum) {
  for (size_t i = 0; i + 1 < n; i += 2) sum += (uint32_t)(p[i] << 8 | p[i + 1]);
  if (n & 1) sum += (uint32_t)(p[n - 1] << 8);
  return sum;
}

// 0xffff when a message's checksum (with `pseudo` summed in) is right.
static uint16_t fold(uint32_t sum) {
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return (uint16_t)sum;
}

static uint16_t id_of(const uint8_t *msg) {
  uint16_t v;
  memcpy(&v, msg + 4, 2);
  return ntohs(v);
}

static uint16_t port_of(int fd) {
  struct sockaddr_storage ss;
  socklen_t len = sizeof(ss);
  CHECK_OK(getsockname(fd, (struct sockaddr *)&ss, &len));
  if (ss.ss_family == AF_INET) return ntohs(((struct sockaddr_in *)&ss)->sin_port);
  return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
}

// Checks an IPv4 echo reply to echo_request(.., seq) on socket `s`.
static void check_reply_v4(const uint8_t *msg, ssize_t n, int s, uint16_t seq) {
  CHECK_EQ(n, 8 + (ssize_t)sizeof(kPayload));
  CHECK_EQ(msg[0], REPLY_V4);
  CHECK_EQ(msg[1], 0);
  CHECK_EQ(id_of(msg), port_of(s));
  uint16_t nseq;
  memcpy(&nseq, msg + 6, 2);
  CHECK_EQ(ntohs(nseq), seq);
  CHECK(memcmp(msg + 8, kPayload, sizeof(kPayload)) == 0);
  CHECK_EQ(fold(sum16(msg, (size_t)n, 0)), 0xffff);
}

static void bring_up_loopback(void) {
  int s = socket(AF_INET, SOCK_DGRAM, 0);
  CHECK(s >= 0);
  struct ifreq ifr;
  memset(&ifr, 0, sizeof(ifr));
  strcpy(ifr.ifr_name, "lo");
  CHECK_OK(ioctl(s, SIOCGIFFLAGS, &ifr));
  ifr.ifr_flags |= IFF_UP;
  CHECK_OK(ioctl(s, SIOCSIFFLAGS, &ifr));
  close(s);
}

static void setup(void) {
  if (unshare(CLONE_NEWNET) == 0) {
    bring_up_loopback();
    int fd = open("/proc/sys/net/ipv4/ping_group_range", O_WRONLY);
    CHECK(fd >= 0);
    const char range[] = "0 2147483647\n";
    CHECK_EQ(write(fd, range, strlen(range)), (long)strlen(range));
    close(fd);
    isolated = 1;
  } else {
    // ENOSYS: the sandbox, whose network (--net=none) is loopback only. EPERM: natively
    // without privileges, on the host's network.
    isolated = errno == ENOSYS;
  }
}

TEST(group_range) {
  FILE *f = fopen("/proc/sys/net/ipv4/ping_group_range", "r");
  CHECK(f != NULL);
  unsigned long lo = 0, hi = 0;
  CHECK_EQ(fscanf(f, "%lu %lu", &lo, &hi), 2);
  fclose(f);
  CHECK(lo <= getegid() && getegid() <= hi);
  int s = socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP);
  CHECK(s >= 0);
  int v = 0;
  socklen_t len = sizeof(v);
  CHECK_OK(getsockopt(s, SOL_SOCKET, SO_TYPE, &v, &len));
  CHECK_EQ(v, SOCK_DGRAM);
  CHECK_OK(getsockopt(s, SOL_SOCKET, SO_PROTOCOL, &v, &len));
  CHECK_EQ(v, IPPROTO_ICMP);
  close(s);
  // The protocol must match the family.
  CHECK_ERRNO(socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMPV6), EPROTONOSUPPORT);
  CHECK_ERRNO(socket(AF_INET6, SOCK_DGRAM, IPPROTO_ICMP), EPROTONOSUPPORT);
}

TEST(echo_v4) {
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_ICMP);
  CHECK(s >= 0);
  CHECK_EQ(port_of(s), 0);  // no ident before the first send or bind
  struct sockaddr_in to = lo4();
  uint8_t req[64], rep[128];
  size_t n = echo_request(req, ECHO_V4, 0x1234, 7);
  CHECK_EQ(sendto(s, req, n, 0, (struct sockaddr *)&to, sizeof(to)), (long)n);
  CHECK(port_of(s) != 0);
  struct sockaddr_in from;
  socklen_t flen = sizeof(from);
  ssize_t r = recvfrom(s, rep, sizeof(rep), 0, (struct sockaddr *)&from, &flen);
  check_reply_v4(rep, r, s, 7);
  CHECK_EQ(flen, sizeof(from));
  CHECK_EQ(from.sin_family, AF_INET);
  CHECK_EQ(from.sin_port, 0);
  CHECK_EQ(ntohl(from.sin_addr.s_addr), INADDR_LOOPBACK);
  // Another loopback address answers from itself.
  to.sin_addr.s_addr = htonl(0x7f000005);
  CHECK_EQ(sendto(s, req, n, 0, (struct sockaddr *)&to, sizeof(to)), (long)n);
  flen = sizeof(from);
  r = recvfrom(s, rep, sizeof(rep), 0, (struct sockaddr *)&from, &flen);
  check_reply_v4(rep, r, s, 7);
  CHECK_EQ(ntohl(from.sin_addr.s_addr), 0x7f000005);
  close(s);
}

TEST(bind_ident) {
  int s = socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP);
  CHECK(s >= 0);
  struct sockaddr_in a = lo4();
  a.sin_port = htons(0x4242);
  CHECK_OK(bind(s, (struct sockaddr *)&a, sizeof(a)));
  CHECK_EQ(port_of(s), 0x4242);
  CHECK_ERRNO(bind(s, (struct sockaddr *)&a, sizeof(a)), EINVAL);
  // Ping sockets are made with SO_REUSEADDR on, so an ident is shared unless one side
  // turned it off.
  int t = socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP);
  CHECK(t >= 0);
  int v = 0;
  socklen_t len = sizeof(v);
  CHECK_OK(getsockopt(t, SOL_SOCKET, SO_REUSEADDR, &v, &len));
  CHECK_EQ(v, 1);
  v = 0;
  CHECK_OK(setsockopt(t, SOL_SOCKET, SO_REUSEADDR, &v, sizeof(v)));
  CHECK_ERRNO(bind(t, (struct sockaddr *)&a, sizeof(a)), EADDRINUSE);
  int u = socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP);
  CHECK(u >= 0);
  CHECK_OK(bind(u, (struct sockaddr *)&a, sizeof(a)));
  CHECK_EQ(port_of(u), 0x4242);
  close(u);
  CHECK_ERRNO(bind(t, (struct sockaddr *)&a, sizeof(a) - 1), EINVAL);
  struct sockaddr_in6 six = lo6();
  CHECK_ERRNO(bind(t, (struct sockaddr *)&six, sizeof(six)), EAFNOSUPPORT);
  a.sin_port = 0;
  a.sin_addr.s_addr = htonl(0xc6120001);  // 198.18.0.1: not an address of ours
  CHECK_ERRNO(bind(t, (struct sockaddr *)&a, sizeof(a)), EADDRNOTAVAIL);
  uint8_t req[64], rep[128];
  size_t n = echo_request(req, ECHO_V4, 0, 1);
  struct sockaddr_in to = lo4();
  CHECK_EQ(sendto(s, req, n, 0, (struct sockaddr *)&to, sizeof(to)), (long)n);
  ssize_t r = recv(s, rep, sizeof(rep), 0);
  check_reply_v4(rep, r, s, 1);
  CHECK_EQ(id_of(rep), 0x4242);
  close(t);
  close(s);
}

TEST(bad_requests) {
  int s = socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP);
  CHECK(s >= 0);
  struct sockaddr_in to = lo4();
  uint8_t req[64];
  size_t n = echo_request(req, ECHO_V4, 1, 1);
  const struct sockaddr *sa = (struct sockaddr *)&to;
  CHECK_ERRNO(sendto(s, req, 7, 0, sa, sizeof(to)), EINVAL);  // shorter than a header
  CHECK_ERRNO(send(s, req, n, 0), EDESTADDRREQ);
  CHECK_ERRNO(sendto(s, req, n, 0, sa, sizeof(to) - 1), EINVAL);
  CHECK_ERRNO(sendto(s, req, n, MSG_OOB, sa, sizeof(to)), EOPNOTSUPP);
  struct sockaddr_in6 six = lo6();
  CHECK_ERRNO(sendto(s, req, n, 0, (struct sockaddr *)&six, sizeof(six)), EAFNOSUPPORT);
  req[0] = 13;  // a timestamp request: not an echo
  CHECK_ERRNO(sendto(s, req, n, 0, sa, sizeof(to)), EINVAL);
  req[0] = ECHO_V4;
  req[1] = 1;  // code 1
  CHECK_ERRNO(sendto(s, req, n, 0, sa, sizeof(to)), EINVAL);
  req[1] = 0;
  req[0] = ECHO_V6;
  CHECK_ERRNO(sendto(s, req, n, 0, sa, sizeof(to)), EINVAL);
  req[0] = ECHO_V4;
  if (isolated) {  // nothing but loopback: no route anywhere else
    to.sin_addr.s_addr = htonl(0xc6120001);
    CHECK_ERRNO(sendto(s, req, n, 0, sa, sizeof(to)), ENETUNREACH);
  }
  CHECK_ERRNO(listen(s, 1), EOPNOTSUPP);
  CHECK_ERRNO(accept(s, NULL, NULL), EOPNOTSUPP);
  CHECK_ERRNO(getpeername(s, (struct sockaddr *)&to, &(socklen_t){sizeof(to)}), ENOTCONN);
  close(s);
}

TEST(connect_send) {
  int s = socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP);
  CHECK(s >= 0);
  struct sockaddr_in to = lo4();
  to.sin_port = htons(99);  // kept for getpeername, though an echo has no port
  CHECK_OK(connect(s, (struct sockaddr *)&to, sizeof(to)));
  struct sockaddr_in peer;
  socklen_t plen = sizeof(peer);
  CHECK_OK(getpeername(s, (struct sockaddr *)&peer, &plen));
  CHECK_EQ(ntohl(peer.sin_addr.s_addr), INADDR_LOOPBACK);
  CHECK_EQ(ntohs(peer.sin_port), 99);
  CHECK(port_of(s) != 0);
  uint8_t req[64], rep[128];
  size_t n = echo_request(req, ECHO_V4, 5, 42);
  CHECK_EQ(write(s, req, n), (long)n);
  ssize_t r = read(s, rep, sizeof(rep));
  check_reply_v4(rep, r, s, 42);
  close(s);
}

TEST(recv_options) {
  int s = socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP);
  CHECK(s >= 0);
  uint8_t req[64], rep[128];
  CHECK_ERRNO(recv(s, rep, sizeof(rep), MSG_DONTWAIT), EAGAIN);
  struct timeval tv = {0, 50000};
  CHECK_OK(setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
  CHECK_ERRNO(recv(s, rep, sizeof(rep), 0), EAGAIN);
  int one = 1;
  CHECK_OK(setsockopt(s, IPPROTO_IP, IP_RECVTTL, &one, sizeof(one)));
  CHECK_OK(setsockopt(s, IPPROTO_IP, IP_RECVERR, &one, sizeof(one)));
  CHECK_ERRNO(recv(s, rep, sizeof(rep), MSG_ERRQUEUE | MSG_DONTWAIT), EAGAIN);
  struct pollfd p = {s, POLLIN | POLLOUT, 0};
  CHECK_EQ(poll(&p, 1, 0), 1);
  CHECK_EQ(p.revents, POLLOUT);
  struct sockaddr_in to = lo4();
  size_t n = echo_request(req, ECHO_V4, 9, 3);
  CHECK_EQ(sendto(s, req, n, 0, (struct sockaddr *)&to, sizeof(to)), (long)n);
  CHECK_EQ(poll(&p, 1, 1000), 1);
  CHECK_EQ(p.revents, POLLIN | POLLOUT);
  // A peek, then a cut read: MSG_TRUNC says so, and the rest of the datagram is gone.
  CHECK_EQ(recv(s, rep, sizeof(rep), MSG_PEEK), (long)n);
  struct iovec iov = {rep, 4};
  char control[64];
  struct msghdr mh;
  memset(&mh, 0, sizeof(mh));
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = control;
  mh.msg_controllen = sizeof(control);
  CHECK_EQ(recvmsg(s, &mh, 0), 4);
  CHECK(mh.msg_flags & MSG_TRUNC);
  struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
  CHECK(c != NULL);
  CHECK_EQ(c->cmsg_level, IPPROTO_IP);
  CHECK_EQ(c->cmsg_type, IP_TTL);
  int ttl;
  memcpy(&ttl, CMSG_DATA(c), sizeof(ttl));
  CHECK_EQ(ttl, 64);
  CHECK(CMSG_NXTHDR(&mh, c) == NULL);
  CHECK_ERRNO(recv(s, rep, sizeof(rep), MSG_DONTWAIT), EAGAIN);
  int v = 0;
  socklen_t len = sizeof(v);
  CHECK_OK(getsockopt(s, IPPROTO_IP, IP_RECVTTL, &v, &len));
  CHECK_EQ(v, 1);
  close(s);
}

TEST(echo_v6) {
  int s = socket(AF_INET6, SOCK_DGRAM, IPPROTO_ICMPV6);
  CHECK(s >= 0);
  struct sockaddr_in6 to = lo6();
  uint8_t req[64], rep[128];
  size_t n = echo_request(req, ECHO_V4, 1, 1);
  CHECK_ERRNO(sendto(s, req, n, 0, (struct sockaddr *)&to, sizeof(to)), EINVAL);
  struct sockaddr_in lo = lo4();
  CHECK_ERRNO(sendto(s, req, n, 0, (struct sockaddr *)&lo, sizeof(lo)), EINVAL);
  int one = 1;
  CHECK_OK(setsockopt(s, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, &one, sizeof(one)));
  n = echo_request(req, ECHO_V6, 0x7777, 9);
  CHECK_EQ(sendto(s, req, n, 0, (struct sockaddr *)&to, sizeof(to)), (long)n);
  struct sockaddr_in6 from;
  struct iovec iov = {rep, sizeof(rep)};
  char control[64];
  struct msghdr mh;
  memset(&mh, 0, sizeof(mh));
  mh.msg_name = &from;
  mh.msg_namelen = sizeof(from);
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = control;
  mh.msg_controllen = sizeof(control);
  ssize_t r = recvmsg(s, &mh, 0);
  CHECK_EQ(r, (long)n);
  CHECK_EQ(rep[0], REPLY_V6);
  CHECK_EQ(rep[1], 0);
  CHECK_EQ(id_of(rep), port_of(s));
  CHECK(memcmp(rep + 6, req + 6, n - 6) == 0);  // sequence and payload
  CHECK_EQ(mh.msg_namelen, sizeof(from));
  CHECK_EQ(from.sin6_family, AF_INET6);
  CHECK_EQ(from.sin6_port, 0);
  CHECK(IN6_IS_ADDR_LOOPBACK(&from.sin6_addr));
  // The checksum covers the pseudo-header: ::1 to ::1, the length, next header 58.
  uint32_t pseudo = sum16(in6addr_loopback.s6_addr, 16, 0);
  pseudo = sum16(in6addr_loopback.s6_addr, 16, pseudo) + (uint32_t)r + IPPROTO_ICMPV6;
  CHECK_EQ(fold(sum16(rep, (size_t)r, pseudo)), 0xffff);
  struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
  CHECK(c != NULL);
  CHECK_EQ(c->cmsg_level, IPPROTO_IPV6);
  CHECK_EQ(c->cmsg_type, IPV6_HOPLIMIT);
  int hops;
  memcpy(&hops, CMSG_DATA(c), sizeof(hops));
  CHECK_EQ(hops, 64);
  close(s);
}

// Last: it drops CAP_NET_RAW for good.
TEST(raw_refused) {
  struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct d[2];
  CHECK_OK(syscall(SYS_capget, &h, d));
  d[CAP_NET_RAW / 32].effective &= ~(1u << (CAP_NET_RAW % 32));
  d[CAP_NET_RAW / 32].permitted &= ~(1u << (CAP_NET_RAW % 32));
  CHECK_OK(syscall(SYS_capset, &h, d));
  CHECK_ERRNO(socket(AF_INET, SOCK_RAW, IPPROTO_ICMP), EPERM);
  CHECK_ERRNO(socket(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6), EPERM);
  CHECK_ERRNO(socket(AF_PACKET, SOCK_DGRAM, 0), EPERM);
  // Ping sockets need no capability.
  int s = socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP);
  CHECK(s >= 0);
  close(s);
}

int main(void) {
  setup();
  if (!isolated) {
    FILE *f = fopen("/proc/sys/net/ipv4/ping_group_range", "r");
    unsigned long lo = 1, hi = 0;
    if (f) {
      if (fscanf(f, "%lu %lu", &lo, &hi) != 2) lo = 1, hi = 0;
      fclose(f);
    }
    if (getegid() < lo || getegid() > hi) {
      // Unprivileged on a host that admits nobody: all that can be checked is the refusal.
      CHECK_ERRNO(socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP), EACCES);
      fprintf(stderr, "ping: not root and ping_group_range excludes us; echo cases skipped\n");
      PASS("ping");
      return 0;
    }
  }
  RUN(group_range);
  RUN(echo_v4);
  RUN(bind_ident);
  RUN(bad_requests);
  RUN(connect_send);
  RUN(recv_options);
  RUN(echo_v6);
  RUN(raw_refused);
  PASS("ping");
  return 0;
}
