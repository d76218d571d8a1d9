// Sockets: AF_UNIX stream/dgram/seqpacket (socketpair, path and abstract names, SCM_RIGHTS,
// SCM_CREDENTIALS, shutdown, EOF/EPIPE/ECONNRESET), loopback TCP (echo with 32 concurrent
// clients, half-close, reset, nonblocking connect with epoll, EADDRINUSE/ECONNREFUSED) and
// UDP, the errno table of bad arguments, SO_RCVTIMEO edge values, UDP level options and the
// bounds of netlink and unix datagram queues, all checked against the host kernel.
#include "common.h"

#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <stddef.h>
#include <sys/un.h>

static struct sockaddr_in lo4(int port) {
  struct sockaddr_in a;
  memset(&a, 0, sizeof(a));
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

static int port_of(int fd) {
  struct sockaddr_storage ss;
  socklen_t len = sizeof(ss);
  CHECK_OK(getsockname(fd, (struct sockaddr *)&ss, &len));
  if (ss.ss_family == AF_INET) return ntohs(((struct sockaddr_in *)&ss)->sin_port);
  return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
}

static int tcp_listener(int backlog) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  CHECK(s >= 0);
  struct sockaddr_in a = lo4(0);
  CHECK_OK(bind(s, (struct sockaddr *)&a, sizeof(a)));
  CHECK_OK(listen(s, backlog));
  return s;
}

static int tcp_connect(int port) {
  int c = socket(AF_INET, SOCK_STREAM, 0);
  CHECK(c >= 0);
  struct sockaddr_in a = lo4(port);
  CHECK_OK(connect(c, (struct sockaddr *)&a, sizeof(a)));
  return c;
}

TEST(unix_stream_pair) {
  int sv[2];
  CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
  CHECK_EQ(write(sv[0], "hello", 5), 5);
  char buf[16];
  CHECK_EQ(recv(sv[1], buf, sizeof(buf), MSG_PEEK), 5);
  int n = 0;
  CHECK_OK(ioctl(sv[1], FIONREAD, &n));
  CHECK_EQ(n, 5);
  CHECK_EQ(read(sv[1], buf, 3), 3);
  CHECK(memcmp(buf, "hel", 3) == 0);
  CHECK_EQ(read(sv[1], buf, sizeof(buf)), 2);
  CHECK_ERRNO(recv(sv[1], buf, sizeof(buf), MSG_DONTWAIT), EAGAIN);
  // Half close: EOF on the other side, writing the other way still works.
  CHECK_OK(shutdown(sv[0], SHUT_WR));
  CHECK_EQ(read(sv[1], buf, sizeof(buf)), 0);
  CHECK_ERRNO(send(sv[0], "x", 1, MSG_NOSIGNAL), EPIPE);
  CHECK_EQ(write(sv[1], "back", 4), 4);
  CHECK_EQ(read(sv[0], buf, sizeof(buf)), 4);
  struct pollfd p = {sv[1], POLLIN | POLLOUT | POLLRDHUP, 0};
  CHECK_EQ(poll(&p, 1, 0), 1);
  CHECK_EQ(p.revents & (POLLIN | POLLRDHUP), POLLIN | POLLRDHUP);
  close(sv[0]);
  // Writing to a closed peer: EPIPE and SIGPIPE.
  signal(SIGPIPE, SIG_IGN);
  CHECK_ERRNO(write(sv[1], "x", 1), EPIPE);
  signal(SIGPIPE, SIG_DFL);
  close(sv[1]);

  // Closing with unread data resets the peer.
  CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
  CHECK_EQ(write(sv[0], "unread", 6), 6);
  CHECK_EQ(write(sv[1], "data", 4), 4);
  close(sv[1]);
  CHECK_EQ(read(sv[0], buf, sizeof(buf)), 4);  // what was queued comes first
  CHECK_ERRNO(read(sv[0], buf, sizeof(buf)), ECONNRESET);
  CHECK_EQ(read(sv[0], buf, sizeof(buf)), 0);
  close(sv[0]);
}

TEST(unix_stream_sigpipe) {
  int sv[2];
  CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
  close(sv[1]);
  pid_t pid = fork();
  if (pid == 0) {
    signal(SIGPIPE, SIG_DFL);
    write(sv[0], "x", 1);
    _exit(0);
  }
  CHECK_KILLED(pid, SIGPIPE);
  close(sv[0]);
}

TEST(unix_seqpacket_and_dgram_pairs) {
  int sv[2];
  char buf[16];
  CHECK_OK(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv));
  CHECK_EQ(send(sv[0], "abcdef", 6, 0), 6);
  CHECK_EQ(send(sv[0], "gh", 2, 0), 2);
  struct iovec iov = {buf, 4};
  struct msghdr m;
  memset(&m, 0, sizeof(m));
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  CHECK_EQ(recvmsg(sv[1], &m, 0), 4);
  CHECK(m.msg_flags & MSG_TRUNC);
  CHECK_EQ(recv(sv[1], buf, sizeof(buf), 0), 2);
  CHECK(memcmp(buf, "gh", 2) == 0);
  close(sv[0]);
  CHECK_EQ(recv(sv[1], buf, sizeof(buf), 0), 0);
  close(sv[1]);

  CHECK_OK(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
  CHECK_EQ(send(sv[0], "one", 3, 0), 3);
  CHECK_EQ(send(sv[0], "", 0, 0), 0);
  CHECK_EQ(recv(sv[1], buf, 2, MSG_TRUNC), 3);
  CHECK_EQ(recv(sv[1], buf, sizeof(buf), 0), 0);
  CHECK_ERRNO(recv(sv[1], buf, sizeof(buf), MSG_DONTWAIT), EAGAIN);
  close(sv[0]);
  close(sv[1]);
}

TEST(unix_names) {
  char dir[] = "/tmp/conf_sockXXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  struct sockaddr_un a;
  memset(&a, 0, sizeof(a));
  a.sun_family = AF_UNIX;
  snprintf(a.sun_path, sizeof(a.sun_path), "%s/s", dir);
  int l = socket(AF_UNIX, SOCK_STREAM, 0);
  CHECK_OK(bind(l, (struct sockaddr *)&a, sizeof(a)));
  struct stat st;
  CHECK_OK(stat(a.sun_path, &st));
  CHECK(S_ISSOCK(st.st_mode));
  int l2 = socket(AF_UNIX, SOCK_STREAM, 0);
  CHECK_ERRNO(bind(l2, (struct sockaddr *)&a, sizeof(a)), EADDRINUSE);
  int c = socket(AF_UNIX, SOCK_STREAM, 0);
  CHECK_ERRNO(connect(c, (struct sockaddr *)&a, sizeof(a)), ECONNREFUSED);  // not listening
  CHECK_OK(listen(l, 5));
  CHECK_OK(connect(c, (struct sockaddr *)&a, sizeof(a)));
  CHECK_ERRNO(connect(c, (struct sockaddr *)&a, sizeof(a)), EISCONN);
  struct sockaddr_un got;
  socklen_t len = sizeof(got);
  int s = accept(l, (struct sockaddr *)&got, &len);
  CHECK(s >= 0);
  CHECK_EQ(len, sizeof(sa_family_t));  // the client is unnamed
  len = sizeof(got);
  CHECK_OK(getpeername(c, (struct sockaddr *)&got, &len));
  CHECK_EQ(len, offsetof(struct sockaddr_un, sun_path) + strlen(a.sun_path) + 1);
  CHECK(strcmp(got.sun_path, a.sun_path) == 0);
  // A dgram socket cannot reach a stream listener.
  int d = socket(AF_UNIX, SOCK_DGRAM, 0);
  CHECK_ERRNO(connect(d, (struct sockaddr *)&a, sizeof(a)), EPROTOTYPE);
  // Missing path and non-socket path.
  struct sockaddr_un b = a;
  snprintf(b.sun_path, sizeof(b.sun_path), "%s/none", dir);
  CHECK_ERRNO(connect(d, (struct sockaddr *)&b, sizeof(b)), ENOENT);
  int fd = open(b.sun_path, O_CREAT | O_WRONLY, 0600);
  close(fd);
  CHECK_ERRNO(connect(d, (struct sockaddr *)&b, sizeof(b)), ECONNREFUSED);
  unlink(b.sun_path);
  // Once the name is unlinked, nobody reaches the socket by path.
  CHECK_OK(unlink(a.sun_path));
  int c2 = socket(AF_UNIX, SOCK_STREAM, 0);
  CHECK_ERRNO(connect(c2, (struct sockaddr *)&a, sizeof(a)), ENOENT);
  close(c2);
  close(d);
  close(s);
  close(c);
  close(l2);
  close(l);

  // Abstract names: exact length matters, and they leave no file.
  struct sockaddr_un ab;
  memset(&ab, 0, sizeof(ab));
  ab.sun_family = AF_UNIX;
  memcpy(ab.sun_path, "\0conf-abstract", 14);
  socklen_t ablen = offsetof(struct sockaddr_un, sun_path) + 14;
  int x = socket(AF_UNIX, SOCK_DGRAM, 0);
  CHECK_OK(bind(x, (struct sockaddr *)&ab, ablen));
  int y = socket(AF_UNIX, SOCK_DGRAM, 0);
  CHECK_ERRNO(bind(y, (struct sockaddr *)&ab, ablen), EADDRINUSE);
  CHECK_EQ(sendto(y, "hi", 2, 0, (struct sockaddr *)&ab, ablen), 2);
  CHECK_ERRNO(sendto(y, "hi", 2, 0, (struct sockaddr *)&ab, ablen - 1), ECONNREFUSED);
  char buf[8];
  struct sockaddr_un from;
  socklen_t flen = sizeof(from);
  CHECK_EQ(recvfrom(x, buf, sizeof(buf), 0, (struct sockaddr *)&from, &flen), 2);
  CHECK_EQ(flen, 0);  // an unnamed sender has no address at all
  // Autobind: a five-hex-digit abstract name.
  struct sockaddr_un au = {.sun_family = AF_UNIX};
  CHECK_OK(bind(y, (struct sockaddr *)&au, sizeof(sa_family_t)));
  socklen_t aulen = sizeof(au);
  CHECK_OK(getsockname(y, (struct sockaddr *)&au, &aulen));
  CHECK_EQ(aulen, offsetof(struct sockaddr_un, sun_path) + 6);
  CHECK_EQ(au.sun_path[0], 0);
  close(x);
  close(y);
  rmdir(dir);
}

TEST(scm_rights_and_credentials) {
  int sv[2], p[2];
  CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
  CHECK_OK(pipe(p));
  int inner[2];
  CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, inner));
  int fds[2] = {p[0], inner[0]};
  char cbuf[CMSG_SPACE(sizeof(fds))];
  memset(cbuf, 0, sizeof(cbuf));
  struct iovec iov = {"R", 1};
  struct msghdr m;
  memset(&m, 0, sizeof(m));
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = cbuf;
  m.msg_controllen = sizeof(cbuf);
  struct cmsghdr *c = CMSG_FIRSTHDR(&m);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(fds));
  memcpy(CMSG_DATA(c), fds, sizeof(fds));
  CHECK_EQ(sendmsg(sv[0], &m, 0), 1);
  close(p[0]);
  close(inner[0]);

  char data;
  char rbuf[CMSG_SPACE(sizeof(fds))];
  struct iovec riov = {&data, 1};
  struct msghdr r;
  memset(&r, 0, sizeof(r));
  r.msg_iov = &riov;
  r.msg_iovlen = 1;
  r.msg_control = rbuf;
  r.msg_controllen = sizeof(rbuf);
  CHECK_EQ(recvmsg(sv[1], &r, MSG_CMSG_CLOEXEC), 1);
  CHECK_EQ(r.msg_flags & MSG_CTRUNC, 0);
  struct cmsghdr *rc = CMSG_FIRSTHDR(&r);
  CHECK(rc != NULL);
  CHECK_EQ(rc->cmsg_type, SCM_RIGHTS);
  CHECK_EQ(rc->cmsg_len, CMSG_LEN(sizeof(fds)));
  int got[2];
  memcpy(got, CMSG_DATA(rc), sizeof(got));
  CHECK_EQ(fcntl(got[0], F_GETFD), FD_CLOEXEC);
  CHECK_EQ(write(p[1], "via", 3), 3);
  char buf[8];
  CHECK_EQ(read(got[0], buf, sizeof(buf)), 3);
  CHECK_EQ(write(inner[1], "sock", 4), 4);
  CHECK_EQ(read(got[1], buf, sizeof(buf)), 4);
  close(got[0]);
  close(got[1]);

  // Too small a control buffer: MSG_CTRUNC, and the files that did not fit are closed.
  CHECK_EQ(sendmsg(sv[0], &m, 0), -1);  // the fds in cbuf are closed now: EBADF
  CHECK_EQ(errno, EBADF);
  fds[0] = p[1];
  fds[1] = inner[1];
  memcpy(CMSG_DATA(c), fds, sizeof(fds));
  CHECK_EQ(sendmsg(sv[0], &m, 0), 1);
  char small[CMSG_LEN(sizeof(int))];
  r.msg_control = small;
  r.msg_controllen = sizeof(small);
  CHECK_EQ(recvmsg(sv[1], &r, 0), 1);
  CHECK(r.msg_flags & MSG_CTRUNC);
  CHECK_EQ(r.msg_controllen, CMSG_LEN(sizeof(int)));
  memcpy(got, CMSG_DATA(CMSG_FIRSTHDR(&r)), sizeof(int));
  close(got[0]);

  // SCM_CREDENTIALS: with SO_PASSCRED the receiver learns the sender's pid/uid/gid.
  int on = 1;
  CHECK_OK(setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)));
  CHECK_EQ(write(sv[0], "c", 1), 1);
  char crbuf[CMSG_SPACE(sizeof(struct ucred))];
  r.msg_control = crbuf;
  r.msg_controllen = sizeof(crbuf);
  CHECK_EQ(recvmsg(sv[1], &r, 0), 1);
  rc = CMSG_FIRSTHDR(&r);
  CHECK(rc != NULL);
  CHECK_EQ(rc->cmsg_type, SCM_CREDENTIALS);
  struct ucred u;
  memcpy(&u, CMSG_DATA(rc), sizeof(u));
  CHECK_EQ(u.pid, getpid());
  CHECK_EQ(u.uid, getuid());
  CHECK_EQ(u.gid, getgid());
  struct ucred pc;
  socklen_t pclen = sizeof(pc);
  CHECK_OK(getsockopt(sv[0], SOL_SOCKET, SO_PEERCRED, &pc, &pclen));
  CHECK_EQ(pclen, sizeof(pc));
  CHECK_EQ(pc.pid, getpid());
  close(sv[0]);
  close(sv[1]);
  close(p[1]);
  close(inner[1]);
}

struct echo_arg {
  int listener;
  int clients;
};

static void *echo_server(void *arg) {
  struct echo_arg *e = arg;
  for (int i = 0; i < e->clients; i++) {
    int s = accept(e->listener, NULL, NULL);
    CHECK(s >= 0);
    char buf[4096];
    ssize_t n;
    while ((n = read(s, buf, sizeof(buf))) > 0) CHECK_EQ(write(s, buf, n), n);
    CHECK_EQ(n, 0);
    close(s);
  }
  return NULL;
}

static void *echo_client(void *arg) {
  int port = (int)(intptr_t)arg;
  int c = tcp_connect(port);
  char out[3000], in[3000];
  for (size_t i = 0; i < sizeof(out); i++) out[i] = (char)(i * 7 + port);
  CHECK_EQ(write(c, out, sizeof(out)), sizeof(out));
  CHECK_OK(shutdown(c, SHUT_WR));
  size_t got = 0;
  ssize_t n;
  while ((n = read(c, in + got, sizeof(in) - got)) > 0) got += n;
  CHECK_EQ(n, 0);
  CHECK_EQ(got, sizeof(out));
  CHECK(memcmp(in, out, sizeof(out)) == 0);
  close(c);
  return NULL;
}

TEST(tcp_echo_32_clients) {
  int l = tcp_listener(64);
  int port = port_of(l);
  struct echo_arg e = {l, 32};
  pthread_t srv, cl[32];
  CHECK_EQ(pthread_create(&srv, NULL, echo_server, &e), 0);
  for (int i = 0; i < 32; i++) {
    CHECK_EQ(pthread_create(&cl[i], NULL, echo_client, (void *)(intptr_t)port), 0);
  }
  for (int i = 0; i < 32; i++) pthread_join(cl[i], NULL);
  pthread_join(srv, NULL);
  close(l);
}

TEST(tcp_errors_and_names) {
  int l = tcp_listener(4);
  int port = port_of(l);
  // The same port again: EADDRINUSE; with SO_REUSEADDR still (a listener holds it).
  int b = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = lo4(port);
  CHECK_ERRNO(bind(b, (struct sockaddr *)&a, sizeof(a)), EADDRINUSE);
  int on = 1;
  CHECK_OK(setsockopt(b, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)));
  CHECK_OK(setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)));
  CHECK_ERRNO(bind(b, (struct sockaddr *)&a, sizeof(a)), EADDRINUSE);
  struct sockaddr_in any = a;
  any.sin_addr.s_addr = htonl(INADDR_ANY);
  CHECK_ERRNO(bind(b, (struct sockaddr *)&any, sizeof(any)), EADDRINUSE);
  struct sockaddr_in far = lo4(0);
  far.sin_addr.s_addr = inet_addr("192.0.2.1");
  CHECK_ERRNO(bind(b, (struct sockaddr *)&far, sizeof(far)), EADDRNOTAVAIL);
  CHECK_ERRNO(bind(b, (struct sockaddr *)&a, sizeof(a) - 1), EINVAL);
  close(b);

  int c = tcp_connect(port);
  int s = accept(l, NULL, NULL);
  CHECK(s >= 0);
  struct sockaddr_in me, peer;
  socklen_t len = sizeof(me);
  CHECK_OK(getsockname(c, (struct sockaddr *)&me, &len));
  len = sizeof(peer);
  CHECK_OK(getpeername(s, (struct sockaddr *)&peer, &len));
  CHECK_EQ(me.sin_port, peer.sin_port);
  CHECK_EQ(peer.sin_addr.s_addr, htonl(INADDR_LOOPBACK));
  CHECK(ntohs(me.sin_port) >= 32768 && ntohs(me.sin_port) <= 60999);
  int v;
  socklen_t vl = sizeof(v);
  CHECK_OK(getsockopt(l, SOL_SOCKET, SO_ACCEPTCONN, &v, &vl));
  CHECK_EQ(v, 1);
  CHECK_OK(getsockopt(s, SOL_SOCKET, SO_TYPE, &v, &vl));
  CHECK_EQ(v, SOCK_STREAM);
  v = 1;
  CHECK_OK(setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &v, sizeof(v)));
  v = 0;
  CHECK_OK(getsockopt(c, IPPROTO_TCP, TCP_NODELAY, &v, &vl));
  CHECK_EQ(v, 1);

  // Reset: closing with unread data gives the peer ECONNRESET.
  CHECK_EQ(write(c, "unread", 6), 6);
  conf_sleep_ms(20);
  close(s);
  conf_sleep_ms(20);
  char buf[8];
  CHECK_ERRNO(read(c, buf, sizeof(buf)), ECONNRESET);
  close(c);

  // A refused connection, blocking and not.
  close(l);
  int r = socket(AF_INET, SOCK_STREAM, 0);
  CHECK_ERRNO(connect(r, (struct sockaddr *)&a, sizeof(a)), ECONNREFUSED);
  close(r);
  r = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  CHECK_ERRNO(connect(r, (struct sockaddr *)&a, sizeof(a)), EINPROGRESS);
  struct pollfd p = {r, POLLOUT, 0};
  CHECK_EQ(poll(&p, 1, 1000), 1);
  CHECK(p.revents & POLLOUT);
  CHECK_OK(getsockopt(r, SOL_SOCKET, SO_ERROR, &v, &vl));
  CHECK_EQ(v, ECONNREFUSED);
  close(r);
  // Not connected yet.
  r = socket(AF_INET, SOCK_STREAM, 0);
  CHECK_ERRNO(getpeername(r, (struct sockaddr *)&peer, &len), ENOTCONN);
  CHECK_ERRNO(recv(r, buf, 1, 0), ENOTCONN);
  CHECK_ERRNO(send(r, buf, 1, MSG_NOSIGNAL), EPIPE);
  CHECK_ERRNO(accept(r, NULL, NULL), EINVAL);
  close(r);
}

TEST(tcp_nonblocking_connect_epoll) {
  int l = tcp_listener(4);
  int c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  struct sockaddr_in a = lo4(port_of(l));
  CHECK_ERRNO(connect(c, (struct sockaddr *)&a, sizeof(a)), EINPROGRESS);
  int ep = epoll_create1(0);
  struct epoll_event ev = {.events = EPOLLOUT | EPOLLET, .data.fd = c};
  CHECK_OK(epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev));
  struct epoll_event le = {.events = EPOLLIN, .data.fd = l};
  CHECK_OK(epoll_ctl(ep, EPOLL_CTL_ADD, l, &le));
  struct epoll_event out[4];
  int seen_out = 0, seen_in = 0;
  for (int round = 0; round < 4 && !(seen_out && seen_in); round++) {
    int n = epoll_wait(ep, out, 4, 1000);
    CHECK(n >= 1);
    for (int i = 0; i < n; i++) {
      if (out[i].data.fd == c && (out[i].events & EPOLLOUT)) seen_out = 1;
      if (out[i].data.fd == l && (out[i].events & EPOLLIN)) seen_in = 1;
    }
  }
  CHECK(seen_out && seen_in);
  int v;
  socklen_t vl = sizeof(v);
  CHECK_OK(getsockopt(c, SOL_SOCKET, SO_ERROR, &v, &vl));
  CHECK_EQ(v, 0);
  int s = accept4(l, NULL, NULL, SOCK_NONBLOCK);
  CHECK(s >= 0);
  CHECK(fcntl(s, F_GETFL) & O_NONBLOCK);
  char buf[4];
  CHECK_ERRNO(read(s, buf, sizeof(buf)), EAGAIN);
  CHECK_EQ(write(c, "ping", 4), 4);
  struct epoll_event se = {.events = EPOLLIN, .data.fd = s};
  CHECK_OK(epoll_ctl(ep, EPOLL_CTL_ADD, s, &se));
  CHECK_EQ(epoll_wait(ep, out, 4, 1000) >= 1, 1);
  CHECK_EQ(read(s, buf, sizeof(buf)), 4);
  close(ep);
  close(s);
  close(c);
  close(l);
}

TEST(udp_loopback) {
  int u = socket(AF_INET, SOCK_DGRAM, 0);
  struct sockaddr_in a = lo4(0);
  CHECK_OK(bind(u, (struct sockaddr *)&a, sizeof(a)));
  a = lo4(port_of(u));
  int v = socket(AF_INET, SOCK_DGRAM, 0);
  char buf[16];
  CHECK_ERRNO(send(v, "x", 1, 0), EDESTADDRREQ);
  CHECK_EQ(sendto(v, "dgram", 5, 0, (struct sockaddr *)&a, sizeof(a)), 5);
  CHECK_EQ(sendto(v, "", 0, 0, (struct sockaddr *)&a, sizeof(a)), 0);
  struct sockaddr_in from;
  socklen_t flen = sizeof(from);
  CHECK_EQ(recvfrom(u, buf, 2, 0, (struct sockaddr *)&from, &flen), 2);  // truncated
  CHECK_EQ(from.sin_port, htons(port_of(v)));
  CHECK_EQ(recv(u, buf, sizeof(buf), 0), 0);
  // A connected socket hears about a port nobody listens on.
  int w = socket(AF_INET, SOCK_DGRAM, 0);
  struct sockaddr_in wa = lo4(0);
  CHECK_OK(bind(w, (struct sockaddr *)&wa, sizeof(wa)));
  struct sockaddr_in dead = lo4(port_of(w));
  close(w);
  CHECK_OK(connect(v, (struct sockaddr *)&dead, sizeof(dead)));
  CHECK_EQ(send(v, "x", 1, 0), 1);
  conf_sleep_ms(20);
  CHECK_ERRNO(send(v, "x", 1, 0), ECONNREFUSED);
  close(u);
  close(v);
}

TEST(ipv6_and_mapped) {
  int l = socket(AF_INET6, SOCK_STREAM, 0);
  CHECK(l >= 0);
  struct sockaddr_in6 a6;
  memset(&a6, 0, sizeof(a6));
  a6.sin6_family = AF_INET6;
  a6.sin6_addr = in6addr_any;
  CHECK_OK(bind(l, (struct sockaddr *)&a6, sizeof(a6)));
  CHECK_OK(listen(l, 4));
  int port = port_of(l);
  // An IPv4 client reaches a dual-stack listener and shows as ::ffff:127.0.0.1.
  int c = tcp_connect(port);
  struct sockaddr_in6 peer;
  socklen_t len = sizeof(peer);
  int s = accept(l, (struct sockaddr *)&peer, &len);
  CHECK(s >= 0);
  CHECK_EQ(len, sizeof(peer));
  CHECK(IN6_IS_ADDR_V4MAPPED(&peer.sin6_addr));
  close(s);
  close(c);
  // ::1 works too.
  int c6 = socket(AF_INET6, SOCK_STREAM, 0);
  a6.sin6_addr = in6addr_loopback;
  a6.sin6_port = htons(port);
  CHECK_OK(connect(c6, (struct sockaddr *)&a6, sizeof(a6)));
  s = accept(l, NULL, NULL);
  CHECK(s >= 0);
  close(s);
  close(c6);
  // V6ONLY listeners refuse IPv4 and the option is fixed once bound.
  int v = 1;
  CHECK_ERRNO(setsockopt(l, IPPROTO_IPV6, IPV6_V6ONLY, &v, sizeof(v)), EINVAL);
  close(l);
}

TEST(errno_table) {
  CHECK_ERRNO(socket(AF_MAX + 5, SOCK_STREAM, 0), EAFNOSUPPORT);
  CHECK_ERRNO(socket(AF_INET, 99, 0), EINVAL);
  CHECK_ERRNO(socket(AF_INET, SOCK_STREAM | 0x100000, 0), EINVAL);
  CHECK_ERRNO(socket(AF_INET, SOCK_STREAM, IPPROTO_UDP), EPROTONOSUPPORT);
  CHECK_ERRNO(socket(AF_UNIX, SOCK_STREAM, 5), EPROTONOSUPPORT);
  int sv[2];
  CHECK_ERRNO(socketpair(AF_INET, SOCK_STREAM, 0, sv), EOPNOTSUPP);
  CHECK_ERRNO(connect(9999, NULL, 0), EBADF);
  CHECK_ERRNO(listen(0, 1) == -1 && errno == ENOTSOCK ? -1 : 0, ENOTSOCK);
  int u = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un a = {.sun_family = AF_INET};
  CHECK_ERRNO(bind(u, (struct sockaddr *)&a, sizeof(a)), EINVAL);
  CHECK_ERRNO(listen(u, 1), EINVAL);  // unbound
  CHECK_ERRNO(accept(u, NULL, NULL), EINVAL);
  char buf[4];
  CHECK_ERRNO(recv(u, buf, 1, 0), EINVAL);
  CHECK_ERRNO(send(u, buf, 1, MSG_NOSIGNAL), ENOTCONN);
  CHECK_OK(shutdown(u, SHUT_RD));  // unix sockets shut down in any state
  CHECK_ERRNO(getsockopt(u, SOL_SOCKET, 12345, buf, &(socklen_t){4}), ENOPROTOOPT);
  close(u);
  int t = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in6 a6 = {.sin6_family = AF_INET6};
  CHECK_ERRNO(connect(t, (struct sockaddr *)&a6, sizeof(a6)), EAFNOSUPPORT);
  CHECK_ERRNO(bind(t, (struct sockaddr *)&a6, 4), EINVAL);
  CHECK_ERRNO(shutdown(t, 7), EINVAL);
  close(t);
}

// SO_RCVTIMEO/SO_SNDTIMEO: {0, 0} waits forever, a negative time does not wait at all (and
// reads back as {0, 0}), anything else is a bound on the wait.
TEST(socket_timeouts) {
  int sv[2];
  CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
  struct timeval tv = {-1, 0}, got;
  socklen_t len = sizeof(got);
  CHECK_OK(setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
  CHECK_OK(getsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &got, &len));
  CHECK_EQ(got.tv_sec, 0);
  CHECK_EQ(got.tv_usec, 0);
  char c;
  CHECK_ERRNO(recv(sv[0], &c, 1, 0), EAGAIN);
  tv = (struct timeval){0, 20000};
  CHECK_OK(setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
  CHECK_OK(getsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &got, &len));
  CHECK_EQ(got.tv_usec, 20000);
  CHECK_ERRNO(recv(sv[0], &c, 1, 0), EAGAIN);
  tv = (struct timeval){0, 0};
  CHECK_OK(setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
  CHECK_OK(getsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &got, &len));
  CHECK_EQ(got.tv_usec, 0);
  close(sv[0]);
  close(sv[1]);
}

// UDP level options: the known names at SOL_UDP or SOL_UDPLITE, ENOPROTOOPT for the rest.
TEST(udp_options) {
  int u = socket(AF_INET, SOCK_DGRAM, 0);
  CHECK(u >= 0);
  int one = 1, v = 0;
  socklen_t len = sizeof(v);
  CHECK_OK(setsockopt(u, IPPROTO_UDP, 1 /* UDP_CORK */, &one, sizeof(one)));
  CHECK_OK(getsockopt(u, IPPROTO_UDPLITE, 1, &v, &len));
  CHECK_EQ(v, 1);
  CHECK_ERRNO(setsockopt(u, IPPROTO_UDP, 12345, &one, sizeof(one)), ENOPROTOOPT);
  CHECK_ERRNO(getsockopt(u, IPPROTO_UDP, 12345, &v, &len), ENOPROTOOPT);
  CHECK_ERRNO(setsockopt(u, IPPROTO_UDP, 10 /* UDPLITE_SEND_CSCOV */, &one, sizeof(one)),
              ENOPROTOOPT);
  close(u);
}

// Requests whose replies are never read: once the receive buffer is full, replies are dropped
// and the next receive reports ENOBUFS (poll: POLLERR), then the queued replies follow.
TEST(netlink_overrun) {
  int s = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK, NETLINK_ROUTE);
  CHECK(s >= 0);
  struct {
    struct nlmsghdr h;
    struct ifinfomsg i;
  } req;
  memset(&req, 0, sizeof(req));
  req.h.nlmsg_len = sizeof(req);
  req.h.nlmsg_type = RTM_GETLINK;
  req.h.nlmsg_flags = NLM_F_REQUEST;
  req.i.ifi_index = 1;  // lo
  for (int i = 0; i < 20000; i++) CHECK_EQ(send(s, &req, sizeof(req), 0), (ssize_t)sizeof(req));
  struct pollfd p = {s, POLLIN, 0};
  CHECK_EQ(poll(&p, 1, 0), 1);
  CHECK_EQ(p.revents, POLLIN | POLLERR);
  char buf[8192];
  CHECK_ERRNO(recv(s, buf, sizeof(buf), 0), ENOBUFS);
  CHECK(recv(s, buf, sizeof(buf), 0) > 0);
  close(s);
}

// A unix datagram socket sending to itself is held back by its send buffer: EAGAIN (when
// non-blocking) long before 100000 datagrams, and room again once one is read.
TEST(unix_dgram_self_send) {
  int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0);
  CHECK(s >= 0);
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, "conf-self-send-%d", (int)getpid());
  socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(a.sun_path + 1));
  CHECK_OK(bind(s, (struct sockaddr *)&a, len));
  static char buf[1000];
  int sent = 0;
  while (sent < 100000 && sendto(s, buf, sizeof(buf), 0, (struct sockaddr *)&a, len) > 0) sent++;
  CHECK(sent < 100000);
  CHECK_EQ(errno, EAGAIN);
  CHECK_EQ(recv(s, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
  CHECK_EQ(sendto(s, buf, sizeof(buf), 0, (struct sockaddr *)&a, len), (ssize_t)sizeof(buf));
  close(s);
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  RUN(unix_stream_pair);
  RUN(unix_stream_sigpipe);
  RUN(unix_seqpacket_and_dgram_pairs);
  RUN(unix_names);
  RUN(scm_rights_and_credentials);
  RUN(tcp_echo_32_clients);
  RUN(tcp_errors_and_names);
  RUN(tcp_nonblocking_connect_epoll);
  RUN(udp_loopback);
  RUN(ipv6_and_mapped);
  RUN(errno_table);
  RUN(socket_timeouts);
  RUN(udp_options);
  RUN(netlink_overrun);
  RUN(unix_dgram_self_send);
  PASS("sockets");
  return 0;
}
