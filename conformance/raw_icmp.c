// Raw ICMP sockets (as root): socket(AF_INET, SOCK_RAW, IPPROTO_ICMP) and its IPv6 twin on
// loopback. IPv4: the guest's own id and checksum go out unchanged, recv returns the IPv4
// header and the message, and every raw socket sees the request on loopback before the
// reply; a wrong checksum or another type gets no answer, messages shorter than an ICMP
// header reach no raw socket. ICMP_FILTER, bind (the destination filter) and connect (the
// source filter), getsockname's protocol as port, a ping socket's echo seen by a raw one.
// IPv6: no header on recv, the checksum the kernel's, ICMP6_FILTER, IPV6_CHECKSUM fixed.
// EPERM without CAP_NET_RAW in the owner of the network namespace (capset, uid 1000, a user
// namespace of one's own, whose own network namespace allows it again).
//
// Everything runs in a network namespace of its own (lo brought up), so no other loopback
// traffic reaches the raw sockets, natively and in the sandbox alike.
#include "common.h"

#include <arpa/inet.h>
#include <linux/capability.h>
#include <net/if.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

// linux/icmp.h's, which cannot be included with net/if.h.
#define ICMP_FILTER 1
struct icmp_filter {
  uint32_t data;
};

static const char kPayload[] = "raw icmp payload";
static int have_v6;

static struct sockaddr_in addr4(uint32_t host_order) {
  struct sockaddr_in a;
  memset(&a, 0, sizeof(a));
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(host_order);
  return a;
}

static struct sockaddr_in6 lo6(void) {
  struct sockaddr_in6 a;
  memset(&a, 0, sizeof(a));
  a.sin6_family = AF_INET6;
  a.sin6_addr = in6addr_loopback;
  return a;
}

static uint32_t sum16(const uint8_t *p, size_t n, uint32_t sum) {
  for (size_t i = 0; i + 1 < n; i += 2) sum += (uint32_t)(p[i] << 8 | p[i + 1]);
  if (n & 1) sum += (uint32_t)(p[n - 1] << 8);
  return sum;
}

static uint16_t fold(uint32_t sum) {
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return (uint16_t)sum;
}

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

// An ICMP message: type, code, checksum (the IPv4 one computed unless `bad_sum`), id,
// sequence, payload. Returns its length.
static size_t icmp_message(uint8_t *buf, int type, uint16_t id, uint16_t seq, int bad_sum) {
  memset(buf, 0, 8);
  buf[0] = (uint8_t)type;
  buf[4] = (uint8_t)(id >> 8), buf[5] = (uint8_t)id;
  buf[6] = (uint8_t)(seq >> 8), buf[7] = (uint8_t)seq;
  memcpy(buf + 8, kPayload, sizeof(kPayload));
  size_t n = 8 + sizeof(kPayload);
  uint16_t sum = (uint16_t)~fold(sum16(buf, n, 0));
  if (bad_sum) sum ^= 0x0101;
  buf[2] = (uint8_t)(sum >> 8), buf[3] = (uint8_t)sum;
  return n;
}

// The next datagram on `s`, waiting up to two seconds; its length.
static ssize_t recv_next(int s, uint8_t *buf, size_t cap, void *from, socklen_t *flen) {
  struct pollfd p = {s, POLLIN, 0};
  CHECK_EQ(poll(&p, 1, 2000), 1);
  ssize_t n = recvfrom(s, buf, cap, MSG_DONTWAIT, (struct sockaddr *)from, flen);
  CHECK(n >= 0);
  return n;
}

// Nothing more arrives on `s` (loopback delivers within the send: a short wait suffices).
static void check_nothing(int s) {
  struct pollfd p = {s, POLLIN, 0};
  CHECK_EQ(poll(&p, 1, 20), 0);
}

// Checks the IPv4 datagram `d` (length `n`) from `src` to `dst` carrying an ICMP message
// of `type` with `id`, `seq` and the payload.
static void check_v4(const uint8_t *d, ssize_t n, uint32_t src, uint32_t dst, int type, uint16_t id,
                     uint16_t seq) {
  CHECK_EQ(n, 20 + 8 + (ssize_t)sizeof(kPayload));
  CHECK_EQ(d[0], 0x45);  // version 4, IHL 5
  CHECK_EQ(get16(d + 2), n);
  CHECK(d[8] > 0);  // TTL
  CHECK_EQ(d[9], IPPROTO_ICMP);
  CHECK_EQ(fold(sum16(d, 20, 0)), 0xffff);
  uint32_t a;
  memcpy(&a, d + 12, 4);
  CHECK_EQ(ntohl(a), src);
  memcpy(&a, d + 16, 4);
  CHECK_EQ(ntohl(a), dst);
  const uint8_t *m = d + 20;
  CHECK_EQ(m[0], type);
  CHECK_EQ(m[1], 0);
  CHECK_EQ(get16(m + 4), id);
  CHECK_EQ(get16(m + 6), seq);
  CHECK(memcmp(m + 8, kPayload, sizeof(kPayload)) == 0);
  CHECK_EQ(fold(sum16(m, (size_t)n - 20, 0)), 0xffff);
}

static int raw4(void) {
  int s = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
  CHECK(s >= 0);
  return s;
}

static void send4(int s, const uint8_t *m, size_t n, uint32_t to_host_order) {
  struct sockaddr_in to = addr4(to_host_order);
  CHECK_EQ(sendto(s, m, n, 0, (struct sockaddr *)&to, sizeof(to)), (ssize_t)n);
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

TEST(socket_basics) {
  CHECK_ERRNO(socket(AF_INET, SOCK_RAW, 0), EPROTONOSUPPORT);
  CHECK_ERRNO(socket(AF_INET6, SOCK_RAW, 0), EPROTONOSUPPORT);
  CHECK_ERRNO(socket(AF_INET, SOCK_RAW, 300), EINVAL);
  int s = raw4();
  int v = 0;
  socklen_t len = sizeof(v);
  CHECK_OK(getsockopt(s, SOL_SOCKET, SO_TYPE, &v, &len));
  CHECK_EQ(v, SOCK_RAW);
  CHECK_OK(getsockopt(s, SOL_SOCKET, SO_PROTOCOL, &v, &len));
  CHECK_EQ(v, IPPROTO_ICMP);
  CHECK_OK(getsockopt(s, IPPROTO_IP, IP_HDRINCL, &v, &len));
  CHECK_EQ(v, 0);
  CHECK_OK(getsockopt(s, SOL_SOCKET, SO_REUSEADDR, &v, &len));
  CHECK_EQ(v, 1);  // raw sockets start with it, as ping sockets
  struct sockaddr_in a;
  socklen_t alen = sizeof(a);
  CHECK_OK(getsockname(s, (struct sockaddr *)&a, &alen));
  CHECK_EQ(alen, sizeof(a));
  CHECK_EQ(ntohs(a.sin_port), IPPROTO_ICMP);  // a raw socket's "port" is its protocol
  CHECK_EQ(a.sin_addr.s_addr, htonl(INADDR_ANY));
  alen = sizeof(a);
  CHECK_ERRNO(getpeername(s, (struct sockaddr *)&a, &alen), ENOTCONN);
  uint8_t m[64];
  size_t n = icmp_message(m, ICMP_ECHO, 1, 1, 0);
  CHECK_ERRNO(send(s, m, n, 0), EDESTADDRREQ);
  struct sockaddr_in to = addr4(INADDR_LOOPBACK);
  CHECK_ERRNO(sendto(s, m, n, 0, (struct sockaddr *)&to, 8), EINVAL);
  to.sin_family = AF_UNIX;
  CHECK_ERRNO(sendto(s, m, n, 0, (struct sockaddr *)&to, sizeof(to)), EAFNOSUPPORT);
  to.sin_family = AF_INET;
  CHECK_ERRNO(sendto(s, m, 1, 0, (struct sockaddr *)&to, sizeof(to)), EFAULT);
  CHECK_ERRNO(sendto(s, m, n, MSG_OOB, (struct sockaddr *)&to, sizeof(to)), EOPNOTSUPP);
  close(s);
}

TEST(echo_v4) {
  int s = raw4();
  uint8_t m[64], d[256];
  size_t n = icmp_message(m, ICMP_ECHO, 0x1234, 7, 0);
  send4(s, m, n, INADDR_LOOPBACK);
  // The request first, as it went out (Linux loops it back to raw sockets), then the reply.
  struct sockaddr_in from;
  socklen_t flen = sizeof(from);
  ssize_t r = recv_next(s, d, sizeof(d), &from, &flen);
  check_v4(d, r, INADDR_LOOPBACK, INADDR_LOOPBACK, ICMP_ECHO, 0x1234, 7);
  CHECK_EQ(d[6] & 0x40, 0x40);  // a raw socket's datagrams have Don't Fragment
  CHECK_EQ(d[8], 64);
  CHECK_EQ(flen, sizeof(from));
  CHECK_EQ(from.sin_family, AF_INET);
  CHECK_EQ(from.sin_port, 0);
  CHECK_EQ(ntohl(from.sin_addr.s_addr), INADDR_LOOPBACK);
  r = recv_next(s, d, sizeof(d), &from, &flen);
  check_v4(d, r, INADDR_LOOPBACK, INADDR_LOOPBACK, ICMP_ECHOREPLY, 0x1234, 7);
  check_nothing(s);
  close(s);
  // IP_TTL is the request's TTL; IP_RECVTTL reports each datagram's.
  int ttl = 9, one = 1;
  struct iovec iov = {d, sizeof(d)};
  char control[64];
  struct msghdr mh;
  memset(&mh, 0, sizeof(mh));
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = control;
  mh.msg_controllen = sizeof(control);
  s = raw4();
  CHECK_OK(setsockopt(s, IPPROTO_IP, IP_TTL, &ttl, sizeof(ttl)));
  CHECK_OK(setsockopt(s, IPPROTO_IP, IP_RECVTTL, &one, sizeof(one)));
  send4(s, m, n, 0x7f000005);
  struct pollfd p = {s, POLLIN, 0};
  CHECK_EQ(poll(&p, 1, 2000), 1);
  r = recvmsg(s, &mh, 0);
  // Another loopback address: the request goes from lo's own address to it.
  check_v4(d, r, INADDR_LOOPBACK, 0x7f000005, ICMP_ECHO, 0x1234, 7);
  CHECK_EQ(d[8], 9);
  struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
  CHECK(c != NULL);
  CHECK_EQ(c->cmsg_level, IPPROTO_IP);
  CHECK_EQ(c->cmsg_type, IP_TTL);
  memcpy(&ttl, CMSG_DATA(c), sizeof(ttl));
  CHECK_EQ(ttl, 9);
  r = recv_next(s, d, sizeof(d), NULL, NULL);
  check_v4(d, r, 0x7f000005, INADDR_LOOPBACK, ICMP_ECHOREPLY, 0x1234, 7);
  close(s);
}

TEST(no_answer) {
  int s = raw4();
  uint8_t m[64], d[256];
  // A wrong checksum: seen by raw sockets, not answered.
  size_t n = icmp_message(m, ICMP_ECHO, 3, 3, 1);
  send4(s, m, n, INADDR_LOOPBACK);
  ssize_t r = recv_next(s, d, sizeof(d), NULL, NULL);
  CHECK_EQ(r, 20 + (ssize_t)n);
  CHECK(memcmp(d + 20, m, n) == 0);
  check_nothing(s);
  // Another type: seen, not answered.
  n = icmp_message(m, 30, 4, 4, 0);
  send4(s, m, n, INADDR_LOOPBACK);
  r = recv_next(s, d, sizeof(d), NULL, NULL);
  check_v4(d, r, INADDR_LOOPBACK, INADDR_LOOPBACK, 30, 4, 4);
  check_nothing(s);
  // Shorter than an ICMP header: sent, but no raw ICMP socket receives it.
  n = icmp_message(m, ICMP_ECHO, 5, 5, 0);
  struct sockaddr_in to = addr4(INADDR_LOOPBACK);
  CHECK_EQ(sendto(s, m, 6, 0, (struct sockaddr *)&to, sizeof(to)), 6);
  check_nothing(s);
  close(s);
}

TEST(icmp_filter) {
  int s = raw4();
  struct icmp_filter f = {1u << ICMP_ECHOREPLY};
  CHECK_OK(setsockopt(s, SOL_RAW, ICMP_FILTER, &f, sizeof(f)));
  uint8_t m[64], d[256];
  size_t n = icmp_message(m, ICMP_ECHO, 9, 1, 0);
  send4(s, m, n, INADDR_LOOPBACK);
  ssize_t r = recv_next(s, d, sizeof(d), NULL, NULL);
  check_v4(d, r, INADDR_LOOPBACK, INADDR_LOOPBACK, ICMP_ECHO, 9, 1);
  check_nothing(s);  // the reply is filtered out
  uint32_t got[2] = {0, 0};
  socklen_t len = sizeof(got);
  CHECK_OK(getsockopt(s, SOL_RAW, ICMP_FILTER, got, &len));
  CHECK_EQ(len, 4);
  CHECK_EQ(got[0], 1u << ICMP_ECHOREPLY);
  // A shorter value replaces the start of the mask.
  uint16_t low = 0xff00;
  CHECK_OK(setsockopt(s, SOL_RAW, ICMP_FILTER, &low, sizeof(low)));
  len = sizeof(got[0]);
  CHECK_OK(getsockopt(s, SOL_RAW, ICMP_FILTER, got, &len));
  CHECK_EQ(got[0], 0xff00u);
  // ICMP6_FILTER is IPv6's.
  CHECK_ERRNO(setsockopt(s, IPPROTO_ICMPV6, ICMP6_FILTER, got, 32), ENOPROTOOPT);
  close(s);
}

TEST(bind_connect) {
  int bound = raw4(), open_ = raw4(), conn = raw4();
  struct sockaddr_in a = addr4(0x7f000002);
  a.sin_port = htons(5);
  CHECK_OK(bind(bound, (struct sockaddr *)&a, sizeof(a)));
  CHECK_OK(bind(bound, (struct sockaddr *)&a, sizeof(a)));  // again: allowed
  socklen_t alen = sizeof(a);
  CHECK_OK(getsockname(bound, (struct sockaddr *)&a, &alen));
  CHECK_EQ(ntohl(a.sin_addr.s_addr), 0x7f000002);
  CHECK_EQ(ntohs(a.sin_port), IPPROTO_ICMP);
  struct sockaddr_in far = addr4(0x08080808);
  CHECK_ERRNO(bind(open_, (struct sockaddr *)&far, sizeof(far)), EADDRNOTAVAIL);
  struct sockaddr_in peer = addr4(0x7f000003);
  peer.sin_port = htons(7);
  CHECK_OK(connect(conn, (struct sockaddr *)&peer, sizeof(peer)));
  alen = sizeof(a);
  CHECK_OK(getpeername(conn, (struct sockaddr *)&a, &alen));
  CHECK_EQ(ntohl(a.sin_addr.s_addr), 0x7f000003);
  CHECK_EQ(ntohs(a.sin_port), 7);

  // From the bound socket: the request (to 127.0.0.1) is not for it, the reply is; the
  // unbound socket sees both; the connected one neither (neither comes from its peer).
  uint8_t m[64], d[256];
  size_t n = icmp_message(m, ICMP_ECHO, 0x4242, 1, 0);
  send4(bound, m, n, INADDR_LOOPBACK);
  ssize_t r = recv_next(bound, d, sizeof(d), NULL, NULL);
  check_v4(d, r, INADDR_LOOPBACK, 0x7f000002, ICMP_ECHOREPLY, 0x4242, 1);
  check_nothing(bound);
  r = recv_next(open_, d, sizeof(d), NULL, NULL);
  check_v4(d, r, 0x7f000002, INADDR_LOOPBACK, ICMP_ECHO, 0x4242, 1);
  r = recv_next(open_, d, sizeof(d), NULL, NULL);
  check_v4(d, r, INADDR_LOOPBACK, 0x7f000002, ICMP_ECHOREPLY, 0x4242, 1);
  check_nothing(open_);
  check_nothing(conn);

  // From the connected socket (send without an address): only the reply comes from its
  // peer.
  n = icmp_message(m, ICMP_ECHO, 0x4343, 2, 0);
  CHECK_EQ(send(conn, m, n, 0), (ssize_t)n);
  r = recv_next(conn, d, sizeof(d), NULL, NULL);
  check_v4(d, r, 0x7f000003, INADDR_LOOPBACK, ICMP_ECHOREPLY, 0x4343, 2);
  check_nothing(conn);
  r = recv_next(open_, d, sizeof(d), NULL, NULL);
  check_v4(d, r, INADDR_LOOPBACK, 0x7f000003, ICMP_ECHO, 0x4343, 2);
  r = recv_next(open_, d, sizeof(d), NULL, NULL);
  check_v4(d, r, 0x7f000003, INADDR_LOOPBACK, ICMP_ECHOREPLY, 0x4343, 2);
  check_nothing(bound);
  close(bound);
  close(open_);
  close(conn);
}

TEST(ping_socket_seen) {
  int raw = raw4();
  int ping = socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP);
  CHECK(ping >= 0);
  uint8_t m[64], d[256];
  size_t n = icmp_message(m, ICMP_ECHO, 1, 11, 0);
  send4(ping, m, n, INADDR_LOOPBACK);
  struct sockaddr_in a;
  socklen_t alen = sizeof(a);
  CHECK_OK(getsockname(ping, (struct sockaddr *)&a, &alen));
  uint16_t ident = ntohs(a.sin_port);
  // The raw socket sees the request as it went out (the ident as id) and the reply.
  ssize_t r = recv_next(raw, d, sizeof(d), NULL, NULL);
  check_v4(d, r, INADDR_LOOPBACK, INADDR_LOOPBACK, ICMP_ECHO, ident, 11);
  r = recv_next(raw, d, sizeof(d), NULL, NULL);
  check_v4(d, r, INADDR_LOOPBACK, INADDR_LOOPBACK, ICMP_ECHOREPLY, ident, 11);
  check_nothing(raw);
  r = recv_next(ping, d, sizeof(d), NULL, NULL);
  CHECK_EQ(r, (ssize_t)n);
  CHECK_EQ(d[0], ICMP_ECHOREPLY);
  close(ping);
  close(raw);
}

TEST(echo_v6) {
  int s = socket(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6);
  CHECK(s >= 0);
  struct sockaddr_in6 a;
  socklen_t alen = sizeof(a);
  CHECK_OK(getsockname(s, (struct sockaddr *)&a, &alen));
  CHECK_EQ(alen, sizeof(a));
  CHECK_EQ(ntohs(a.sin6_port), IPPROTO_ICMPV6);
  int v = 0;
  socklen_t len = sizeof(v);
  CHECK_OK(getsockopt(s, IPPROTO_IPV6, IPV6_CHECKSUM, &v, &len));
  CHECK_EQ(v, 2);
  CHECK_ERRNO(setsockopt(s, IPPROTO_IPV6, IPV6_CHECKSUM, &v, sizeof(v)), EINVAL);
  // At SOL_RAW it may be set (busybox ping6 sets the offset it has anyway).
  CHECK_OK(setsockopt(s, SOL_RAW, IPV6_CHECKSUM, &v, sizeof(v)));
  struct icmp_filter f4 = {0};
  CHECK_ERRNO(setsockopt(s, SOL_RAW, ICMP_FILTER, &f4, sizeof(f4)), ENOPROTOOPT);

  // The checksum field is left for the kernel: garbage in it changes nothing.
  uint8_t m[64], d[256];
  size_t n = icmp_message(m, ICMP6_ECHO_REQUEST, 0x5151, 3, 1);
  struct sockaddr_in6 to = lo6();
  CHECK_EQ(sendto(s, m, n, 0, (struct sockaddr *)&to, sizeof(to)), (ssize_t)n);
  uint32_t pseudo = sum16(in6addr_loopback.s6_addr, 16, 0);
  pseudo = sum16(in6addr_loopback.s6_addr, 16, pseudo) + (uint32_t)n + IPPROTO_ICMPV6;
  for (int i = 0; i < 2; i++) {
    struct sockaddr_in6 from;
    socklen_t flen = sizeof(from);
    ssize_t r = recv_next(s, d, sizeof(d), &from, &flen);
    CHECK_EQ(r, (ssize_t)n);  // no IP header
    CHECK_EQ(d[0], i == 0 ? ICMP6_ECHO_REQUEST : ICMP6_ECHO_REPLY);
    CHECK_EQ(get16(d + 4), 0x5151);
    CHECK_EQ(get16(d + 6), 3);
    CHECK(memcmp(d + 8, kPayload, sizeof(kPayload)) == 0);
    CHECK_EQ(fold(sum16(d, (size_t)r, pseudo)), 0xffff);
    CHECK_EQ(from.sin6_family, AF_INET6);
    CHECK_EQ(from.sin6_port, 0);
    CHECK(IN6_IS_ADDR_LOOPBACK(&from.sin6_addr));
  }
  check_nothing(s);

  // ICMP6_FILTER drops the reply.
  struct icmp6_filter f;
  ICMP6_FILTER_SETPASSALL(&f);
  ICMP6_FILTER_SETBLOCK(ICMP6_ECHO_REPLY, &f);
  CHECK_OK(setsockopt(s, IPPROTO_ICMPV6, ICMP6_FILTER, &f, sizeof(f)));
  // RFC 2292's hop limit option, which busybox ping6 uses, reports the hop limit too.
  int one = 1;
  CHECK_OK(setsockopt(s, IPPROTO_IPV6, IPV6_2292HOPLIMIT, &one, sizeof(one)));
  to.sin6_port = htons(IPPROTO_ICMPV6);  // a port is the protocol: the socket's own is fine
  CHECK_EQ(sendto(s, m, n, 0, (struct sockaddr *)&to, sizeof(to)), (ssize_t)n);
  struct iovec iov = {d, sizeof(d)};
  char control[64];
  struct msghdr mh;
  memset(&mh, 0, sizeof(mh));
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = control;
  mh.msg_controllen = sizeof(control);
  struct pollfd p = {s, POLLIN, 0};
  CHECK_EQ(poll(&p, 1, 2000), 1);
  ssize_t r = recvmsg(s, &mh, 0);
  CHECK_EQ(d[0], ICMP6_ECHO_REQUEST);
  CHECK_EQ(r, (ssize_t)n);
  struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
  CHECK(c != NULL);
  CHECK_EQ(c->cmsg_level, IPPROTO_IPV6);
  CHECK_EQ(c->cmsg_type, IPV6_2292HOPLIMIT);
  int hops = 0;
  memcpy(&hops, CMSG_DATA(c), sizeof(hops));
  CHECK_EQ(hops, 64);
  check_nothing(s);
  struct icmp6_filter got;
  len = sizeof(got) + 8;
  CHECK_OK(getsockopt(s, IPPROTO_ICMPV6, ICMP6_FILTER, &got, &len));
  CHECK_EQ(len, sizeof(got));
  CHECK(ICMP6_FILTER_WILLBLOCK(ICMP6_ECHO_REPLY, &got));
  CHECK(ICMP6_FILTER_WILLPASS(ICMP6_ECHO_REQUEST, &got));

  // The errnos of rawv6_sendmsg.
  to.sin6_port = htons(3);
  CHECK_ERRNO(sendto(s, m, n, 0, (struct sockaddr *)&to, sizeof(to)), EINVAL);
  to.sin6_port = 0;
  CHECK_ERRNO(sendto(s, m, 3, 0, (struct sockaddr *)&to, sizeof(to)), EINVAL);
  CHECK_ERRNO(sendto(s, m, 1, 0, (struct sockaddr *)&to, sizeof(to)), EFAULT);
  struct sockaddr_in lo = addr4(INADDR_LOOPBACK);
  CHECK_ERRNO(sendto(s, m, n, 0, (struct sockaddr *)&lo, sizeof(lo)), EINVAL);
  struct sockaddr_in6 mapped = lo6();
  inet_pton(AF_INET6, "::ffff:127.0.0.1", &mapped.sin6_addr);
  CHECK_ERRNO(sendto(s, m, n, 0, (struct sockaddr *)&mapped, sizeof(mapped)), ENETUNREACH);
  close(s);
}

// Drops CAP_NET_RAW from the effective set (the permitted set keeps it).
static void drop_net_raw(void) {
  struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct d[2];
  CHECK_OK(syscall(SYS_capget, &h, d));
  d[CAP_NET_RAW / 32].effective &= ~(1u << (CAP_NET_RAW % 32));
  CHECK_OK(syscall(SYS_capset, &h, d));
}

static void refused_child(void) {
  drop_net_raw();
  CHECK_ERRNO(socket(AF_INET, SOCK_RAW, IPPROTO_ICMP), EPERM);
  CHECK_ERRNO(socket(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6), EPERM);
  CHECK_ERRNO(socket(AF_INET, SOCK_RAW, IPPROTO_UDP), EPERM);
  CHECK_ERRNO(socket(AF_INET, SOCK_RAW, 0), EPROTONOSUPPORT);
  // A socket made before keeps working.
  _exit(0);
}

static void uid_1000_child(void) {
  CHECK_OK(setresuid(1000, 1000, 1000));
  CHECK_ERRNO(socket(AF_INET, SOCK_RAW, IPPROTO_ICMP), EPERM);
  CHECK_ERRNO(socket(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6), EPERM);
  _exit(0);
}

TEST(refused_without_cap_net_raw) {
  conf_in_child(refused_child);
  conf_in_child(uid_1000_child);
  // A socket made with the capability keeps working once it is dropped.
  int s = raw4();
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    drop_net_raw();
    uint8_t m[64], d[256];
    size_t n = icmp_message(m, ICMP_ECHO, 77, 1, 0);
    send4(s, m, n, INADDR_LOOPBACK);
    ssize_t r = recv_next(s, d, sizeof(d), NULL, NULL);
    check_v4(d, r, INADDR_LOOPBACK, INADDR_LOOPBACK, ICMP_ECHO, 77, 1);
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
  close(s);
}

// In a user namespace of its own the caller has CAP_NET_RAW there, not over the network
// namespace it is in (owned by the outer one); a network namespace it then makes is owned
// by its user namespace, and raw sockets are allowed there.
static void userns_child(void) {
  if (unshare(CLONE_NEWUSER) != 0) {
    fprintf(stderr, "raw_icmp: no user namespaces here (%s); case skipped\n", strerror(errno));
    _exit(0);
  }
  CHECK_ERRNO(socket(AF_INET, SOCK_RAW, IPPROTO_ICMP), EPERM);
  CHECK_OK(unshare(CLONE_NEWNET));
  bring_up_loopback();
  int s = raw4();
  uint8_t m[64], d[256];
  size_t n = icmp_message(m, ICMP_ECHO, 88, 1, 0);
  send4(s, m, n, INADDR_LOOPBACK);
  ssize_t r = recv_next(s, d, sizeof(d), NULL, NULL);
  check_v4(d, r, INADDR_LOOPBACK, INADDR_LOOPBACK, ICMP_ECHO, 88, 1);
  r = recv_next(s, d, sizeof(d), NULL, NULL);
  check_v4(d, r, INADDR_LOOPBACK, INADDR_LOOPBACK, ICMP_ECHOREPLY, 88, 1);
  _exit(0);
}

TEST(user_namespace_owner) { conf_in_child(userns_child); }

int main(int argc, char **argv) {
  conf_init(argc, argv);
  if (geteuid() != 0) {
    // Unprivileged: all that can be checked is the refusal.
    CHECK_ERRNO(socket(AF_INET, SOCK_RAW, IPPROTO_ICMP), EPERM);
    fprintf(stderr, "raw_icmp: not root; only the refusal checked\n");
    PASS("raw_icmp");
    return 0;
  }
  CHECK_OK(unshare(CLONE_NEWNET));
  bring_up_loopback();
  // Ping sockets for every group in this namespace (its own setting, Linux's "1 0" at first).
  int fd = open("/proc/sys/net/ipv4/ping_group_range", O_WRONLY);
  CHECK(fd >= 0);
  const char range[] = "0 2147483647\n";
  CHECK_EQ(write(fd, range, strlen(range)), (ssize_t)strlen(range));
  close(fd);
  int probe = socket(AF_INET6, SOCK_DGRAM, 0);
  struct sockaddr_in6 l6 = lo6();
  have_v6 = probe >= 0 && bind(probe, (struct sockaddr *)&l6, sizeof(l6)) == 0;
  if (probe >= 0) close(probe);
  RUN(socket_basics);
  RUN(echo_v4);
  RUN(no_answer);
  RUN(icmp_filter);
  RUN(bind_connect);
  RUN(ping_socket_seen);
  if (have_v6) {
    RUN(echo_v6);
  } else {
    fprintf(stderr, "raw_icmp: no ::1 here; IPv6 case skipped\n");
  }
  RUN(refused_without_cap_net_raw);
  RUN(user_namespace_owner);
  PASS("raw_icmp");
  return 0;
}
