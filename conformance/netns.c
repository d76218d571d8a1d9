// Network namespaces (as root): a namespace made by unshare or clone has only lo, down (no
// addresses in netlink, ENETUNREACH to 127.0.0.1, EADDRNOTAVAIL for ::1, no route out);
// bringing lo up by ioctl and by RTM_NEWLINK; loopback ports and abstract AF_UNIX names
// kept per namespace while path names are shared; a socket stays in the namespace it was
// made in; /proc/net/tcp and ping_group_range per namespace; setns back; EPERM unprivileged.
//
// Every case runs in a forked child, so the test process keeps its own namespace.

#define _GNU_SOURCE  // before any system header (common.h defines it too)

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <grp.h>
#include <sched.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "common.h"

static const char *tmp;  // the scratch directory

static struct sockaddr_in v4(uint32_t host_ip, uint16_t port) {
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
  a.sin_addr.s_addr = htonl(host_ip);
  return a;
}

static int lo_flags(int fd) {
  struct ifreq r;
  memset(&r, 0, sizeof(r));
  strcpy(r.ifr_name, "lo");
  CHECK_OK(ioctl(fd, SIOCGIFFLAGS, &r));
  return r.ifr_flags;
}

static void lo_up_ioctl(void) {
  int s = socket(AF_INET, SOCK_DGRAM, 0);
  CHECK(s >= 0);
  struct ifreq r;
  memset(&r, 0, sizeof(r));
  strcpy(r.ifr_name, "lo");
  r.ifr_flags = (short)(lo_flags(s) | IFF_UP);
  CHECK_OK(ioctl(s, SIOCSIFFLAGS, &r));
  close(s);
}

// RTM_NEWLINK for lo (by name when by_name, else by index 1) with IFF_UP set or cleared;
// returns the errno of the acknowledgement (0: done).
static int lo_set_netlink(int up, int by_name) {
  int s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  CHECK(s >= 0);
  struct {
    struct nlmsghdr h;
    struct ifinfomsg i;
    char attrs[64];
  } req;
  memset(&req, 0, sizeof(req));
  req.h.nlmsg_type = RTM_NEWLINK;
  req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
  req.h.nlmsg_seq = 7;
  req.i.ifi_family = AF_UNSPEC;
  req.i.ifi_index = by_name ? 0 : 1;
  req.i.ifi_change = IFF_UP;
  req.i.ifi_flags = up ? IFF_UP : 0;
  req.h.nlmsg_len = NLMSG_LENGTH(sizeof(req.i));
  if (by_name) {
    struct rtattr *a = (struct rtattr *)((char *)&req + NLMSG_ALIGN(req.h.nlmsg_len));
    a->rta_type = IFLA_IFNAME;
    a->rta_len = RTA_LENGTH(3);
    memcpy(RTA_DATA(a), "lo", 3);
    req.h.nlmsg_len = NLMSG_ALIGN(req.h.nlmsg_len) + RTA_ALIGN(a->rta_len);
  }
  struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
  CHECK_EQ(sendto(s, &req, req.h.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)),
           (long)req.h.nlmsg_len);
  char buf[4096];
  ssize_t n = recv(s, buf, sizeof(buf), 0);
  CHECK(n >= (ssize_t)NLMSG_LENGTH(sizeof(struct nlmsgerr)));
  struct nlmsghdr *h = (struct nlmsghdr *)buf;
  CHECK_EQ(h->nlmsg_type, NLMSG_ERROR);
  CHECK_EQ(h->nlmsg_seq, 7);
  int err = -((struct nlmsgerr *)NLMSG_DATA(h))->error;
  close(s);
  return err;
}

// getifaddrs: how many addresses of `family` lo has, and whether it is up.
static int lo_addrs(int family, int *up) {
  struct ifaddrs *list;
  CHECK_OK(getifaddrs(&list));
  int n = 0;
  *up = 0;
  for (struct ifaddrs *i = list; i; i = i->ifa_next) {
    if (strcmp(i->ifa_name, "lo") != 0) continue;
    if (i->ifa_flags & IFF_UP) *up = 1;
    if (i->ifa_addr && i->ifa_addr->sa_family == family) n++;
  }
  freeifaddrs(list);
  return n;
}

static void ns_link(const char *path, char *out, size_t cap) {
  ssize_t n = readlink(path, out, cap - 1);
  CHECK(n > 0);
  out[n] = '\0';
}

// A TCP connection over loopback in the current namespace, one byte each way.
static void loopback_roundtrip(uint16_t port) {
  int l = socket(AF_INET, SOCK_STREAM, 0);
  CHECK(l >= 0);
  int one = 1;
  CHECK_OK(setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)));
  struct sockaddr_in a = v4(INADDR_LOOPBACK, port);
  CHECK_OK(bind(l, (struct sockaddr *)&a, sizeof(a)));
  CHECK_OK(listen(l, 1));
  int c = socket(AF_INET, SOCK_STREAM, 0);
  CHECK_OK(connect(c, (struct sockaddr *)&a, sizeof(a)));
  int s = accept(l, NULL, NULL);
  CHECK(s >= 0);
  char b = 'x';
  CHECK_EQ(write(c, &b, 1), 1);
  b = 0;
  CHECK_EQ(read(s, &b, 1), 1);
  CHECK_EQ(b, 'x');
  close(s);
  close(c);
  close(l);
}

static void fresh_down_child(void) {
  char before[64], after[64];
  ns_link("/proc/self/ns/net", before, sizeof(before));
  CHECK_OK(unshare(CLONE_NEWNET));
  ns_link("/proc/self/ns/net", after, sizeof(after));
  CHECK(strncmp(after, "net:[", 5) == 0);
  CHECK(strcmp(before, after) != 0);
  int u = socket(AF_INET, SOCK_DGRAM, 0);
  CHECK(u >= 0);
  CHECK_EQ(lo_flags(u) & (IFF_UP | IFF_LOOPBACK), IFF_LOOPBACK);
  int up;
  CHECK_EQ(lo_addrs(AF_INET, &up), 0);
  CHECK_EQ(lo_addrs(AF_INET6, &up), 0);
  CHECK_EQ(up, 0);
  // IPv4 loopback binds but is unreachable; ::1 is not even assigned.
  struct sockaddr_in a = v4(INADDR_LOOPBACK, 5001);
  int t = socket(AF_INET, SOCK_STREAM, 0);
  CHECK_OK(bind(t, (struct sockaddr *)&a, sizeof(a)));
  int c = socket(AF_INET, SOCK_STREAM, 0);
  CHECK_ERRNO(connect(c, (struct sockaddr *)&a, sizeof(a)), ENETUNREACH);
  CHECK_ERRNO(sendto(u, "x", 1, 0, (struct sockaddr *)&a, sizeof(a)), ENETUNREACH);
  struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons(5002)};
  a6.sin6_addr = in6addr_loopback;
  int t6 = socket(AF_INET6, SOCK_STREAM, 0);
  CHECK_ERRNO(bind(t6, (struct sockaddr *)&a6, sizeof(a6)), EADDRNOTAVAIL);
  int c6 = socket(AF_INET6, SOCK_STREAM, 0);
  CHECK_ERRNO(connect(c6, (struct sockaddr *)&a6, sizeof(a6)), EADDRNOTAVAIL);
  // No route out, whatever the outer network is.
  struct sockaddr_in out = v4(0xC0000201, 80);  // 192.0.2.1
  int e = socket(AF_INET, SOCK_STREAM, 0);
  CHECK_ERRNO(connect(e, (struct sockaddr *)&out, sizeof(out)), ENETUNREACH);
  CHECK_ERRNO(sendto(u, "x", 1, 0, (struct sockaddr *)&out, sizeof(out)), ENETUNREACH);
  // Brought up, lo carries a TCP connection and has its addresses.
  lo_up_ioctl();
  CHECK_EQ(lo_flags(u) & IFF_UP, IFF_UP);
  CHECK_EQ(lo_addrs(AF_INET, &up), 1);
  CHECK_EQ(lo_addrs(AF_INET6, &up), 1);
  CHECK_EQ(up, 1);
  loopback_roundtrip(5003);
  CHECK_ERRNO(connect(e, (struct sockaddr *)&out, sizeof(out)), ENETUNREACH);
}

TEST(fresh_namespace_lo_down) { conf_in_child(fresh_down_child); }

static void netlink_child(void) {
  CHECK_OK(unshare(CLONE_NEWNET));
  CHECK_EQ(lo_set_netlink(1, 1), 0);  // by name, as `ip link set lo up`
  int up;
  CHECK_EQ(lo_addrs(AF_INET, &up), 1);
  CHECK_EQ(up, 1);
  loopback_roundtrip(5004);
  CHECK_EQ(lo_set_netlink(0, 0), 0);  // down again, by index
  // 127.0.0.1 stays assigned once lo has been up; ::1 goes with it. (A connection to
  // 127.0.0.1 now is not answered at all natively: not tested.)
  CHECK_EQ(lo_addrs(AF_INET, &up), 1);
  CHECK_EQ(lo_addrs(AF_INET6, &up), 0);
  CHECK_EQ(up, 0);
  struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons(5005)};
  a6.sin6_addr = in6addr_loopback;
  int t6 = socket(AF_INET6, SOCK_STREAM, 0);
  CHECK_ERRNO(bind(t6, (struct sockaddr *)&a6, sizeof(a6)), EADDRNOTAVAIL);
  CHECK_EQ(lo_set_netlink(1, 0), 0);
  CHECK_EQ(lo_addrs(AF_INET6, &up), 1);
  CHECK_OK(bind(t6, (struct sockaddr *)&a6, sizeof(a6)));
}

TEST(netlink_link_up_down) { conf_in_child(netlink_child); }

// Binds an abstract AF_UNIX stream listener named `name`.
static int abstract_listener(const char *name, struct sockaddr_un *a, socklen_t *len) {
  memset(a, 0, sizeof(*a));
  a->sun_family = AF_UNIX;
  strcpy(a->sun_path + 1, name);
  *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name));
  int l = socket(AF_UNIX, SOCK_STREAM, 0);
  CHECK_OK(bind(l, (struct sockaddr *)a, *len));
  CHECK_OK(listen(l, 4));
  return l;
}

static void isolation_child(void) {
  // Made before unshare: these stay in the outer namespace.
  int outer_l = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  CHECK_OK(setsockopt(outer_l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)));
  struct sockaddr_in a = v4(INADDR_LOOPBACK, 0);
  CHECK_OK(bind(outer_l, (struct sockaddr *)&a, sizeof(a)));
  CHECK_OK(listen(outer_l, 4));
  socklen_t alen = sizeof(a);
  CHECK_OK(getsockname(outer_l, (struct sockaddr *)&a, &alen));
  int outer_c = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_un ua;
  socklen_t ulen;
  char name[64];
  snprintf(name, sizeof(name), "conf-netns-%d", getpid());
  int outer_u = abstract_listener(name, &ua, &ulen);
  char path[PATH_MAX];
  snprintf(path, sizeof(path), "%s/sock", tmp);
  unlink(path);
  struct sockaddr_un pa = {.sun_family = AF_UNIX};
  strcpy(pa.sun_path, path);
  int outer_p = socket(AF_UNIX, SOCK_STREAM, 0);
  CHECK_OK(bind(outer_p, (struct sockaddr *)&pa, sizeof(pa)));
  CHECK_OK(listen(outer_p, 4));

  CHECK_OK(unshare(CLONE_NEWNET));
  lo_up_ioctl();
  // The outer listener's port is free here, and nothing listens on it.
  int c = socket(AF_INET, SOCK_STREAM, 0);
  CHECK_ERRNO(connect(c, (struct sockaddr *)&a, sizeof(a)), ECONNREFUSED);
  int inner_l = socket(AF_INET, SOCK_STREAM, 0);
  CHECK_OK(bind(inner_l, (struct sockaddr *)&a, sizeof(a)));
  close(inner_l);
  // A socket made before unshare still reaches the outer namespace's listener, and its
  // ioctls see the outer lo.
  CHECK_OK(connect(outer_c, (struct sockaddr *)&a, sizeof(a)));
  int s = accept(outer_l, NULL, NULL);
  CHECK(s >= 0);
  close(s);
  CHECK_EQ(lo_flags(outer_c) & IFF_UP, IFF_UP);
  // Abstract names are per namespace; path names are file system objects.
  int u = socket(AF_UNIX, SOCK_STREAM, 0);
  CHECK_ERRNO(connect(u, (struct sockaddr *)&ua, ulen), ECONNREFUSED);
  int inner_u = abstract_listener(name, &ua, &ulen);  // the name is free here
  close(inner_u);
  int p = socket(AF_UNIX, SOCK_STREAM, 0);
  CHECK_OK(connect(p, (struct sockaddr *)&pa, sizeof(pa)));
  s = accept(outer_p, NULL, NULL);
  CHECK(s >= 0);
  close(s);
  close(outer_u);
  unlink(path);
}

TEST(isolation) { conf_in_child(isolation_child); }

// Whether /proc/net/tcp lists a listener on `port`.
static int proc_net_tcp_has(uint16_t port) {
  FILE *f = fopen("/proc/net/tcp", "r");
  CHECK(f != NULL);
  char line[512];
  int found = 0;
  CHECK(fgets(line, sizeof(line), f) != NULL);  // the header
  while (fgets(line, sizeof(line), f)) {
    unsigned ip, p, st;
    if (sscanf(line, " %*d: %x:%x %*x:%*x %x", &ip, &p, &st) == 3 && p == port && st == 0x0A) {
      found = 1;
    }
  }
  fclose(f);
  return found;
}

static void procfs_child(void) {
  int l = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = v4(INADDR_LOOPBACK, 0);
  CHECK_OK(bind(l, (struct sockaddr *)&a, sizeof(a)));
  CHECK_OK(listen(l, 1));
  socklen_t alen = sizeof(a);
  CHECK_OK(getsockname(l, (struct sockaddr *)&a, &alen));
  uint16_t port = ntohs(a.sin_port);
  CHECK(proc_net_tcp_has(port));
  char outer_range[64];
  conf_get_file("/proc/sys/net/ipv4/ping_group_range", outer_range, sizeof(outer_range));
  int outer = open("/proc/self/ns/net", O_RDONLY);
  CHECK(outer >= 0);
  CHECK_OK(unshare(CLONE_NEWNET));
  CHECK(!proc_net_tcp_has(port));
  // ping_group_range starts at "1 0" (nobody) in a new namespace, and is its own.
  char buf[64];
  conf_get_file("/proc/sys/net/ipv4/ping_group_range", buf, sizeof(buf));
  CHECK(strcmp(buf, "1\t0\n") == 0);
  CHECK_ERRNO(socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP), EACCES);
  int fd = open("/proc/sys/net/ipv4/ping_group_range", O_WRONLY);
  CHECK(fd >= 0);
  CHECK_EQ(write(fd, "0 0\n", 4), 4);
  close(fd);
  lo_up_ioctl();
  int ping = socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP);
  CHECK(ping >= 0);
  close(ping);
  // setns back: the outer namespace and its listener again.
  char here[64], there[64];
  ns_link("/proc/self/ns/net", here, sizeof(here));
  CHECK_OK(setns(outer, CLONE_NEWNET));
  ns_link("/proc/self/ns/net", there, sizeof(there));
  CHECK(strcmp(here, there) != 0);
  CHECK(proc_net_tcp_has(port));
  conf_get_file("/proc/sys/net/ipv4/ping_group_range", buf, sizeof(buf));
  CHECK(strcmp(buf, outer_range) == 0);  // the inner write stayed inside
}

TEST(procfs_and_setns) { conf_in_child(procfs_child); }

static int clone_child_fn(void *arg) {
  (void)arg;
  int u = socket(AF_INET, SOCK_DGRAM, 0);
  if (u < 0) return 2;
  struct ifreq r;
  memset(&r, 0, sizeof(r));
  strcpy(r.ifr_name, "lo");
  if (ioctl(u, SIOCGIFFLAGS, &r) != 0) return 3;
  return (r.ifr_flags & IFF_UP) ? 4 : 0;
}

TEST(clone_newnet) {
  static char stack[64 * 1024];
  pid_t pid = clone(clone_child_fn, stack + sizeof(stack), CLONE_NEWNET | SIGCHLD, NULL);
  CHECK(pid > 0);
  CHECK_EXIT(pid, 0);
}

static void unprivileged_child(void) {
  CHECK_OK(setgroups(0, NULL));
  CHECK_OK(setresgid(1000, 1000, 1000));
  CHECK_OK(setresuid(1000, 1000, 1000));
  CHECK_ERRNO(unshare(CLONE_NEWNET), EPERM);
}

TEST(unprivileged) { conf_in_child(unprivileged_child); }

int main(int argc, char **argv) {
  conf_init(argc, argv);
  tmp = conf_tmpdir("netns");
  RUN(fresh_namespace_lo_down);
  RUN(netlink_link_up_down);
  RUN(isolation);
  RUN(procfs_and_setns);
  RUN(clone_newnet);
  RUN(unprivileged);
  conf_tmpdir_remove();
  PASS("netns");
  return 0;
}
