// socket_fuzz: makes many random socket system calls (socket, socketpair, bind, connect, listen,
// accept4, shutdown, get{sock,peer}name, send/recv in all their forms with control messages,
// {set,get}sockopt, socket ioctls, poll, epoll, close, dup, read/write) on a bounded pool of
// fds, with valid, wrong and hostile arguments, from two threads, and forks now and then a
// child that does some calls on the same sockets. Under the sandbox it checks that no such
// call crashes or hangs the Sentry or returns something Linux never returns; natively it must
// run to completion and be harmless.
//
//   socket_fuzz [-s SEED] [-n COUNT] [-t TIMEOUT_SECONDS] [-v]
//
// Prints `socket_fuzz: seed SEED, COUNT calls` first (a failure is replayed with that seed),
// then per call a count of results by errno, then `socket_fuzz: done COUNT calls` and exits 0.
// The fuzzing runs in a forked process so that its crash or hang is reported by the parent with
// the call it was in (exit 1); a call whose result is impossible (an errno Linux never gives,
// more bytes than asked for, ...) is printed and makes the exit status 1 too. -v logs each call.
//
// Natively this runs as root on a shared machine, so the arguments are hostile only to the
// calling process:
// - Domains are AF_UNIX, AF_INET, AF_INET6, AF_NETLINK and numbers no kernel knows (no module
//   is ever loaded for them); no raw or packet sockets; the only netlink protocol is ROUTE,
//   and bytes sent to a netlink (or unknown) socket are a sequence of well-formed requests
//   of GET kind (never more bytes than that), to the kernel or our own pid.
// - Every address, also one made of random bytes, is rewritten before use so that it names
//   only loopback (or the documentation nets 192.0.2.0/24 and 2001:db8::/32), ports of this
//   run's small set, unix paths in this run's temporary directory (the working directory:
//   path names are single components) and abstract names of this run.
// - Options that reach beyond the socket (netfilter, multicast joins, source routes, next
//   hops, binding to other interfaces, modules by name, buffer forcing, busy polling) are
//   never set; SO_LINGER gets no linger time; timeouts are short or negative.
// - ioctls are the socket getters (and FIONBIO with 1); no setter.
// - A second thread (the racer) makes calls on the same fds meanwhile; it never changes the
//   pool and sends only netlink-safe bytes, since any fd may be a netlink socket by then.
// - No call can block for long: every socket is non-blocking, or blocking with
//   SO_RCVTIMEO/SO_SNDTIMEO of 2 ms; poll and epoll_wait time out at once.
// - The kernel writes only into a scratch area with guard pages on both sides, or at
//   deliberately bad addresses (NULL, the guards, kernel and non-canonical addresses).
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/netlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define kPage 4096ul
#define kPoolMax 64
#define kMaxChildren 4
#define kHangSeconds 30

// ---- random numbers (splitmix64, deterministic for a seed) ----

// Per thread: the fuzzer runs a second thread on the same fds (see Racer).
static __thread uint64_t rng_state;
static __thread int in_racer;  // the second thread: reads the pool, never changes it

static uint64_t Next(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static uint64_t Below(uint64_t n) { return n ? Next() % n : 0; }
static int Percent(int p) { return (int)Below(100) < p; }
#define PICK(arr) ((arr)[Below(sizeof(arr) / sizeof((arr)[0]))])
#define COUNT_OF(arr) (sizeof(arr) / sizeof((arr)[0]))

// ---- the scratch area: everything the kernel reads or writes ----

// Regions, in this order; the msghdr arrays come last so that a long mmsghdr vector runs into
// the edge and then the upper guard page.
enum {
  kDataOff = 0,
  kDataSize = 128 * 1024,
  kAddrOff = kDataOff + kDataSize,  // sockaddrs in and out, 8 slots of 256
  kIovOff = kAddrOff + 2048,        // iovec arrays: one of 1024 or 8 of 128
  kIovSize = 1024 * 16,
  kCtlOff = kIovOff + kIovSize + 256,  // control buffers: one of 22K or 8 of 2.75K
  kCtlSize = 22 * 1024,
  kOptOff = kCtlOff + kCtlSize + 256,  // option values
  kMiscOff = kOptOff + 4096,           // lengths, ifreqs, pollfds, epoll events, timespecs
  kMiscSize = 16 * 1024,
  kMsgOff = kMiscOff + kMiscSize,  // msghdr / mmsghdr arrays
  kMsgSize = 8 * 1024,
  kEdgeOff = kMsgOff + kMsgSize,  // objects that straddle the upper guard page
  kScratchSize = (kEdgeOff + 4096 + 4095) / 4096 * 4096,
};
#define kMmsgMax 8  // mmsghdrs built per sendmmsg/recvmmsg (the vector may claim more)

static __thread uint8_t* scratch;
static __thread int edge_taken;  // the edge holds one object per call

static int InScratch(const void* p, size_t n) {
  return (const uint8_t*)p >= scratch && (const uint8_t*)p + n <= scratch + kScratchSize;
}

static void* BadPtr(void) {
  switch (Below(6)) {
    case 0: return scratch - kPage + Below(kPage);
    case 1: return scratch + kScratchSize + Below(kPage);
    case 2: return (void*)(uintptr_t)(1 + Below(kPage - 1));
    case 3: return (void*)(uintptr_t)0xffff888000000000ull;
    case 4: return (void*)(uintptr_t)0x8000000000000000ull;
    default: return (void*)(uintptr_t)0xfffffffffffff000ull;
  }
}

// The address of an object of `size` bytes the kernel reads (`src`: its bytes, copied there)
// or writes (`src` NULL): `good` percent of the time at `off` (sometimes unaligned); else
// NULL, a bad address, or straddling the upper guard page.
static void* Where(size_t off, size_t size, const void* src, int good) {
  if (Percent(good)) {
    uint8_t* p = scratch + off + (Percent(10) ? 1 + Below(7) : 0);
    if (src) memcpy(p, src, size);
    return p;
  }
  if (!edge_taken && size > 1 && Percent(40)) {
    edge_taken = 1;
    size_t keep = 1 + Below(size - 1);
    uint8_t* p = scratch + kScratchSize - keep;
    if (src) memcpy(p, src, keep);
    return p;
  }
  return Percent(30) ? NULL : BadPtr();
}

// ---- this run's names ----

static char tmpdir[64];
static pid_t main_pid;
static uint16_t port_base;  // ports port_base .. port_base + 5
// Names sockets of this run were bound to (bind succeeded) or have (getsockname: autobind),
// to connect and send to. Only AF_UNIX names and ports of this run's set.
#define kLearnedMax 16
static uint8_t learned[kLearnedMax][128];
static int learned_len[kLearnedMax];
static int learned_count;

static void Learn(const uint8_t* a, int len) {
  if (len < 3 || len > 128 || in_racer) return;
  uint16_t family;
  memcpy(&family, a, 2);
  if (family != AF_UNIX && family != AF_INET && family != AF_INET6) return;
  int i = learned_count < kLearnedMax ? learned_count++ : (int)Below(kLearnedMax);
  memcpy(learned[i], a, (size_t)len);
  learned_len[i] = len;
}

static uint16_t PickPort(void) {
  if (Percent(10)) return 0;
  return (uint16_t)(port_base + Below(6));
}

// ---- the fd pool ----

enum Kind { kKindSocket, kKindOther };
struct Slot {
  int fd;
  int kind;
  int domain;  // for sockets; -1 unknown
  int type;
  int protocol;
  int keep;       // never closed or replaced by the fuzzer
  int listening;  // listen() succeeded on it
  int name_len;   // > 0: the address bind() succeeded with
  uint8_t name[128];
};
static struct Slot pool[kPoolMax];
static int pool_count;
static int epoll_fd = -1;
static int last_closed = -1;

static struct Slot* SlotOf(int fd) {
  for (int i = 0; i < pool_count; i++) {
    if (pool[i].fd == fd) return &pool[i];
  }
  return NULL;
}

static void Forget(int fd) {
  for (int i = 0; i < pool_count; i++) {
    if (pool[i].fd == fd) {
      pool[i] = pool[--pool_count];
      return;
    }
  }
}

static int Evictable(void) {
  for (int tries = 0; tries < 16; tries++) {
    int i = (int)Below((uint64_t)pool_count);
    if (!pool[i].keep) return i;
  }
  return -1;
}

static void AddFd(int fd, int kind, int domain, int type, int protocol) {
  if (fd < 0) return;
  struct Slot* s = SlotOf(fd);
  if (!s) {
    if (pool_count == kPoolMax) {
      int victim = Evictable();
      if (victim < 0) {
        close(fd);
        return;
      }
      close(pool[victim].fd);
      pool[victim] = pool[--pool_count];
    }
    s = &pool[pool_count++];
  }
  memset(s, 0, sizeof(*s));
  s->fd = fd;
  s->kind = kind;
  s->domain = domain;
  s->type = type;
  s->protocol = protocol;
}

// A socket's domain, type and protocol as the kernel reports them (fds received or dup'ed).
static void AddUnknownFd(int fd) {
  int v[3];
  static const int kNames[] = {SO_DOMAIN, SO_TYPE, SO_PROTOCOL};
  for (int i = 0; i < 3; i++) {
    socklen_t len = sizeof(int);
    if (getsockopt(fd, SOL_SOCKET, kNames[i], &v[i], &len) != 0) {
      if (i == 0) {
        AddFd(fd, kKindOther, -1, 0, 0);
        return;
      }
      v[i] = -1;
    }
  }
  AddFd(fd, kKindSocket, v[0], v[1], v[2]);
}

// A new socket from socket/socketpair/accept: non-blocking, or (`timed`) blocking with 2 ms
// timeouts so that the blocking paths run too.
static void Adopt(int fd, int domain, int type, int protocol, int nonblocking, int timed) {
  if (fd < 0) return;
  if (!nonblocking && timed) {
    struct timeval tv = {0, 2000};
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0 &&
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) == 0)
      nonblocking = 1;  // as good as: nothing waits for long
  }
  if (!nonblocking) {
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl | O_NONBLOCK);
  }
  AddFd(fd, kKindSocket, domain, type, protocol);
}

// bind() gave `fd` the name `a`.
static void Named(int fd, const uint8_t* a, int len) {
  if (in_racer) return;
  Learn(a, len);
  struct Slot* s = SlotOf(fd);
  if (!s || len > 128) return;
  memcpy(s->name, a, (size_t)len);
  s->name_len = len;
}

static int PickSlot(int sockets_only) {
  if (pool_count == 0) return -1;
  for (int tries = 0; tries < 8; tries++) {
    int i = (int)Below((uint64_t)pool_count);
    if (!sockets_only || pool[i].kind == kKindSocket) return i;
  }
  return (int)Below((uint64_t)pool_count);
}

// An fd for a call: mostly a pool socket, sometimes another pool fd, a bad number, or (when
// `std_ok`) 0..2.
static int PickFd(int std_ok) {
  uint64_t r = Below(100);
  if (r < 92 || (!std_ok && r >= 97)) {
    int i = PickSlot(r < 80);
    if (i >= 0) return pool[i].fd;
  }
  if (r < 97) {
    const int bad[] = {-1, 1 << 20, 0x7fffffff, last_closed, 1023, -100};
    return PICK(bad);
  }
  return (int)Below(3);
}

// Whether bytes sent on `fd` must be netlink-safe: it may be a netlink socket (or unknown).
static int NetlinkLike(int fd, int* protocol) {
  if (in_racer) {  // the pool may change under it: any fd may be a netlink socket by now
    *protocol = NETLINK_ROUTE;
    return 1;
  }
  struct Slot* s = SlotOf(fd);
  *protocol = s ? s->protocol : -1;
  if (!s) return 1;
  if (s->kind != kKindSocket) return 0;
  return s->domain == AF_NETLINK || s->domain == -1;
}

// ---- results ----

enum Op {
  kOpSocket,
  kOpSocketpair,
  kOpBind,
  kOpConnect,
  kOpListen,
  kOpAccept,
  kOpShutdown,
  kOpGetsockname,
  kOpGetpeername,
  kOpSendto,
  kOpRecvfrom,
  kOpSendmsg,
  kOpRecvmsg,
  kOpSendmmsg,
  kOpRecvmmsg,
  kOpSetsockopt,
  kOpGetsockopt,
  kOpIoctl,
  kOpPoll,
  kOpEpollCtl,
  kOpEpollWait,
  kOpClose,
  kOpDup,
  kOpRead,
  kOpWrite,
  kOpReadv,
  kOpWritev,
  kOpProcNet,
  kOpServer,  // socket + bind + listen
  kOpCount
};
static const char* const kOpNames[kOpCount] = {
    "socket",   "socketpair",  "bind",        "connect",    "listen",     "accept4",
    "shutdown", "getsockname", "getpeername", "sendto",     "recvfrom",   "sendmsg",
    "recvmsg",  "sendmmsg",    "recvmmsg",    "setsockopt", "getsockopt", "ioctl",
    "poll",     "epoll_ctl",   "epoll_wait",  "close",      "dup",        "read",
    "write",    "readv",       "writev",      "procnet",    "server"};
static const int kOpWeights[kOpCount] = {6, 4, 6, 6, 4, 5, 2, 2, 2, 8, 8, 9, 9, 3, 3,
                                         7, 5, 4, 3, 2, 2, 4, 2, 2, 2, 1, 1, 1, 2};

#define kErrnoMax 134  // errnos 1..133; 0 counts successes
static uint32_t results[kOpCount][kErrnoMax];

// Shared with the supervising parent (and written by forked children too).
struct Progress {
  volatile long calls;
  volatile long impossible;
  char last[kMaxChildren + 2][200];  // [0]: the fuzzer; [1..]: its children; then the racer
};
static struct Progress* progress;
static __thread int progress_slot;  // which `last` this process or thread writes
static int verbose;
static int in_child;

static void Out(const char* s) {
  size_t n = strlen(s);
  while (n > 0) {
    ssize_t w = write(1, s, n);
    if (w <= 0) return;
    s += w;
    n -= (size_t)w;
  }
}

static __thread char current[200];

static void Publish(void) { memcpy(progress->last[progress_slot], current, sizeof(current)); }

static void Describe(int op, long a0, long a1, long a2, long a3) {
  snprintf(current, sizeof(current), "%s(%ld, %#lx, %#lx, %#lx)", kOpNames[op], a0,
           (unsigned long)a1, (unsigned long)a2, (unsigned long)a3);
  Publish();
}

static void Impossible(const char* why, long ret) {
  char buf[400];
  snprintf(buf, sizeof(buf), "socket_fuzz: IMPOSSIBLE: %s = %ld (errno %d) in call %ld%s: %s\n",
           current, ret, ret < 0 ? errno : 0, progress->calls, in_child ? " (child)" : "", why);
  Out(buf);
  __sync_fetch_and_add(&progress->impossible, 1);
}

// Counts one call's result; returns it with errno intact.
static long Done(int op, long ret) {
  int e = errno;
  if (ret < 0) {
    if (e <= 0 || e >= kErrnoMax || e == ENOSYS) {
      Impossible("errno Linux never returns", ret);
      e = 0;
    }
    __sync_fetch_and_add(&results[op][e], 1);
  } else {
    __sync_fetch_and_add(&results[op][0], 1);
  }
  if (verbose) {
    char buf[300];
    snprintf(buf, sizeof(buf), "%ld%s %s = %ld%s%s\n", progress->calls,
             in_child   ? "c"
             : in_racer ? "r"
                        : "",
             current, ret, ret < 0 ? " " : "", ret < 0 ? strerrorname_np(e) ?: "?" : "");
    Out(buf);
  }
  if (!in_child) __sync_fetch_and_add(&progress->calls, 1);
  errno = e;
  return ret;
}

// ---- generators ----

static const uint32_t kLoopback4[] = {0x7f000001, 0x7f000001, 0x7f000002, 0};

static void PutIp4(uint8_t* a) {
  uint32_t ip = Percent(3) ? 0xc0000201 : PICK(kLoopback4);  // 192.0.2.1: TEST-NET-1
  ip = htonl(ip);
  memcpy(a, &ip, 4);
}

static void PutIp6(uint8_t* a) {
  memset(a, 0, 16);
  switch (Percent(3) ? 4 : Below(4)) {
    case 0: a[15] = 1; break;  // ::1
    case 1: break;             // ::
    case 2:                    // ::ffff:127.0.0.1
      a[10] = a[11] = 0xff;
      a[12] = 127;
      a[15] = 1;
      break;
    case 3: a[10] = a[11] = 0xff; break;  // ::ffff:0.0.0.0
    default:                              // 2001:db8::1, documentation
      a[0] = 0x20;
      a[1] = 0x01;
      a[2] = 0x0d;
      a[3] = 0xb8;
      a[15] = 1;
  }
}

static int Ip4Ok(const uint8_t* a) {
  return a[0] == 127 || !memcmp(a, "\0\0\0\0", 4) || !memcmp(a, "\xc0\0\x02\x01", 4);
}

static int Ip6Ok(const uint8_t* a) {
  static const uint8_t kZero[10] = {0};
  if (!memcmp(a, kZero, 10)) {
    if (!memcmp(a + 10, "\0\0\0\0\0\0", 5) && (a[15] == 0 || a[15] == 1)) return 1;
    if (a[10] == 0xff && a[11] == 0xff) return Ip4Ok(a + 12);
    return 0;
  }
  return !memcmp(a, "\x20\x01\x0d\xb8", 4);
}

static int PortOk(const uint8_t* a) {
  uint16_t p = (uint16_t)(a[0] << 8 | a[1]);
  return p == 0 || (p >= port_base && p < port_base + 6);
}

static void PutPort(uint8_t* a) {
  uint16_t p = PickPort();
  a[0] = (uint8_t)(p >> 8);
  a[1] = (uint8_t)p;
}

// Rewrites the address in `a` (kAddrMax bytes, of which the kernel reads at most 128) so that
// it can only name this run's things, whatever its bytes were (see the header). `bind`:
// netlink groups and pids stay as they are (they are only our subscriptions and port id).
#define kAddrMax 256
static void Sanitize(uint8_t* a, int len, int bind) {
  uint16_t family;
  memcpy(&family, a, 2);
  if (family == AF_INET || family == AF_UNSPEC) {  // UDP sends to AF_UNSPEC as to AF_INET
    if (!PortOk(a + 2)) PutPort(a + 2);
    if (!Ip4Ok(a + 4)) PutIp4(a + 4);
  }
  if (family == AF_INET6) {
    if (!PortOk(a + 2)) PutPort(a + 2);
    if (!Ip6Ok(a + 8)) PutIp6(a + 8);
  }
  if (family == AF_NETLINK && !bind) {
    uint32_t pid, groups = 0;
    memcpy(&pid, a + 4, 4);
    if (pid != 0 && pid != (uint32_t)main_pid) pid = 0;
    memcpy(a + 4, &pid, 4);
    memcpy(a + 8, &groups, 4);
  }
  if (family == AF_UNIX && a[2] != 0) {
    // A path: ours in tmpdir by its full name, else one relative component (cwd is tmpdir).
    size_t n = len < 2 ? 0 : (size_t)len - 2;
    if (n > 108) n = 108;
    char* path = (char*)a + 2;
    size_t plen = strnlen(path, n);
    size_t dlen = strlen(tmpdir);
    int ours = plen > dlen + 1 && !memcmp(path, tmpdir, dlen) && path[dlen] == '/' &&
               !memchr(path + dlen + 1, '/', plen - dlen - 1);
    if (!ours) {
      for (size_t i = 0; i < 108; i++) {
        if (path[i] == '/') path[i] = 'x';
      }
    }
  }
}

// A socket address of (mostly) `domain`'s family in `a`; returns its natural length.
static int BuildAddr(int domain, uint8_t* a) {
  for (int i = 0; i < kAddrMax; i += 8) {
    uint64_t r = Next();
    memcpy(a + i, &r, 8);
  }
  static const int kFamilies[] = {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK, AF_UNSPEC, 12345};
  if (learned_count && Percent(35)) {
    // Mostly a name of the socket's own family.
    int i = (int)Below((uint64_t)learned_count);
    for (int tries = 0; tries < 8 && Percent(90); tries++) {
      if (*(const uint16_t*)learned[i] == domain) break;
      i = (int)Below((uint64_t)learned_count);
    }
    memcpy(a, learned[i], (size_t)learned_len[i]);
    return learned_len[i];
  }
  int family = (Percent(70) && domain >= 0) ? domain : PICK(kFamilies);
  if (Percent(5)) return (int)Below(kAddrMax);  // random bytes of the chosen... any family
  uint16_t f16 = (uint16_t)family;
  memcpy(a, &f16, 2);
  switch (family) {
    case AF_UNIX: {
      char* path = (char*)a + 2;
      int k = (int)Below(8);
      switch (Below(9)) {
        case 0:
        case 1: snprintf(path, 108, "s%d", k); return (int)(2 + strlen(path) + Below(2));
        case 2: snprintf(path, 108, "%s/s%d", tmpdir, k); return (int)(2 + strlen(path) + 1);
        case 3:
        case 4:
          path[0] = 0;
          snprintf(path + 1, 107, "\x7fsfz%d-%d", (int)main_pid, k);
          return (int)(3 + strlen(path + 1));
        case 5:
        case 6: return 2;                                   // autobind
        case 7: path[0] = 0; return (int)(3 + Below(106));  // random abstract name
        default: return (int)sizeof(struct sockaddr_un);    // unterminated random path
      }
    }
    case AF_INET: {
      PutPort(a + 2);
      PutIp4(a + 4);
      memset(a + 8, 0, 8);
      return sizeof(struct sockaddr_in);
    }
    case AF_INET6: {
      PutPort(a + 2);
      uint32_t flow = Percent(90) ? 0 : (uint32_t)Next(),
               scope = Percent(90) ? 0 : (uint32_t)Below(3);
      memcpy(a + 4, &flow, 4);
      PutIp6(a + 8);
      memcpy(a + 24, &scope, 4);
      return Percent(90) ? (int)sizeof(struct sockaddr_in6) : 24;
    }
    case AF_NETLINK: {
      uint32_t pid = Percent(70) ? 0 : Percent(50) ? (uint32_t)main_pid : (uint32_t)Next();
      uint32_t groups = Percent(70) ? 0 : (uint32_t)Next();
      memset(a + 2, 0, 2);
      memcpy(a + 4, &pid, 4);
      memcpy(a + 8, &groups, 4);
      return sizeof(struct sockaddr_nl);
    }
    default: return (int)(2 + Below(30));
  }
}

static int AddrLen(int natural) {
  if (Percent(80)) return natural;
  static const int kLens[] = {0,   1,   2,   3,   8,   15,   16, 24,         27,     28,
                              110, 111, 112, 128, 129, 4096, -1, 0x7fffffff, INT_MIN};
  if (Percent(30)) return natural + (Percent(50) ? 1 : -1);
  return PICK(kLens);
}

// An address argument: built, sanitized, placed. Sets *len.
static void* PlaceAddr(int domain, int bind, size_t slot, int* len) {
  static __thread uint8_t a[kAddrMax];
  *len = AddrLen(BuildAddr(domain, a));
  Sanitize(a, *len < 0 || *len > 128 ? 128 : *len, bind);
  return Where(kAddrOff + slot * 256, 128, a, 90);
}

static int SockDomain(int fd) {
  struct Slot* s = SlotOf(fd);
  return s && s->kind == kKindSocket ? s->domain : -1;
}

// A length (for data) with mostly small values.
static size_t DataLen(size_t cap) {
  switch (Below(20)) {
    case 0: return 0;
    case 1: return (size_t)1 << 31;
    case 2: return ~(size_t)0 >> Below(2);
    case 3: return cap;
    case 4:
    case 5: return 1 + Below(cap);
    case 6:
    case 7:
    case 8:
    case 9: return 65 + Below(4032);
    default: return 1 + Below(64);
  }
}

static const int kMsgFlags[] = {
    MSG_OOB,        MSG_PEEK,    MSG_DONTROUTE, MSG_CTRUNC,   MSG_PROXY,        MSG_TRUNC,
    MSG_EOR,        MSG_WAITALL, MSG_CONFIRM,   MSG_ERRQUEUE, MSG_NOSIGNAL,     MSG_MORE,
    MSG_WAITFORONE, MSG_BATCH,   MSG_ZEROCOPY,  MSG_FASTOPEN, MSG_CMSG_CLOEXEC, 0x80000000};

// Send/recv flags; always MSG_DONTWAIT unless the socket waits only briefly anyway.
static int MsgFlags(void) {
  int f = MSG_DONTWAIT | MSG_NOSIGNAL;
  int n = (int)Below(3);
  for (int i = 0; i < n; i++) f |= PICK(kMsgFlags);
  if (Percent(10)) f &= ~MSG_NOSIGNAL;  // SIGPIPE is ignored
  // The fd is non-blocking or has 2 ms timeouts; but the racer may name an fd that was just
  // made and is not yet either.
  if (Percent(20) && !in_racer) f &= ~MSG_DONTWAIT;
  return f;
}

// Netlink requests of GET kind only (and NOOP/DONE/ERROR, which the kernel skips), each with
// its true length, the last maybe with a wrong one (which ends the parsing): nothing a root
// process sends this way changes the host.
static size_t BuildNetlink(uint8_t* p, size_t cap) {
  static const uint16_t kTypes[] = {NLMSG_NOOP, NLMSG_ERROR, NLMSG_DONE, 0,   18,  22,  26,    30,
                                    34,         38,          42,         58,  66,  74,  78,    82,
                                    86,         90,          94,         102, 106, 114, 0x7ffe};
  size_t at = 0;
  int n = 1 + (int)Below(3);
  for (int i = 0; i < n; i++) {
    size_t body = Percent(30) ? 0 : Below(64);
    size_t len = NLMSG_HDRLEN + body;
    if (at + NLMSG_ALIGN(len) > cap) break;
    struct nlmsghdr h;
    h.nlmsg_len = (uint32_t)len;
    h.nlmsg_type = PICK(kTypes);
    if ((h.nlmsg_type & 3) != 2 && h.nlmsg_type > NLMSG_DONE) h.nlmsg_type = 18;
    h.nlmsg_flags = (uint16_t)(Percent(50) ? NLM_F_REQUEST | NLM_F_DUMP : Next());
    h.nlmsg_seq = (uint32_t)Next();
    h.nlmsg_pid = Percent(80) ? 0 : (uint32_t)Next();
    int last = i == n - 1;
    if (last && Percent(10)) h.nlmsg_len = Percent(50) ? (uint32_t)Below(NLMSG_HDRLEN) : 0xffff;
    memcpy(p + at, &h, sizeof(h));
    for (size_t j = 0; j < body; j++) p[at + NLMSG_HDRLEN + j] = (uint8_t)Next();
    at += last ? len : NLMSG_ALIGN(len);
  }
  return at;
}

// The bytes of one send on `fd` at data offset `off` (at most `cap`): random bytes, or for a
// netlink (or unknown) socket the output of BuildNetlink and never more. Sets *strict when the
// length must not be exceeded.
static size_t Payload(int fd, size_t off, size_t cap, int* strict) {
  int protocol;
  *strict = NetlinkLike(fd, &protocol);
  if (!*strict) {
    size_t len = DataLen(cap);
    for (size_t i = 0; i < 64 && i < cap; i++) scratch[off + i] = (uint8_t)Next();
    return len;
  }
  if (protocol != NETLINK_ROUTE) return 0;
  size_t len = BuildNetlink(scratch + off, cap);
  return Percent(15) ? Below(len + 1) : len;
}

// An iovec array at iov region `slot` (of `slots`) over [p, p+len); `strict`: exactly those
// bytes in order, else also bad bases, huge lengths and random offsets. Returns the array's
// address (Where) and sets *count.
static void* BuildIov(uint8_t* p, size_t len, int strict, int slot, int slots, size_t* count) {
  static __thread struct iovec v[1024];
  size_t max = (size_t)kIovSize / 16 / (size_t)slots;
  size_t n;
  switch (Below(20)) {
    case 0: n = 0; break;
    case 1: n = max; break;
    case 2: n = Percent(50) ? 1025 : (size_t)1 << 40; break;
    case 3:
    case 4:
    case 5:
    case 6: n = 2 + Below(7); break;
    case 7: n = 9 + Below(max - 8); break;
    default: n = 1;
  }
  size_t built = n < max ? n : max;
  size_t left = len;
  uint8_t* at = p;
  for (size_t i = 0; i < built; i++) {
    size_t seg = (i == built - 1) ? left : (Percent(20) ? 0 : Below(left + 1));
    v[i].iov_base = at;
    v[i].iov_len = seg;
    if (seg == 0 && Percent(30)) v[i].iov_base = Percent(50) ? NULL : BadPtr();
    if (!strict && Percent(5)) v[i].iov_base = BadPtr();
    if (!strict && Percent(2)) v[i].iov_len = (size_t)1 << 63 | Below(100);
    if (!strict && Percent(3)) v[i].iov_base = scratch + kDataOff + Below(kDataSize);
    at += seg;
    left -= seg;
  }
  if (strict && n > built) n = built;  // no iovec may reach beyond the request
  *count = n;
  size_t bytes = built * sizeof(struct iovec);
  return built ? Where(kIovOff + (size_t)slot * max * 16, bytes, v, strict ? 95 : 92)
               : (Percent(50) ? NULL : BadPtr());
}

// A control buffer for sendmsg at control slot `slot` (of `slots`); returns its address and
// sets *len.
static void* BuildControl(int domain, int slot, int slots, size_t* len) {
  static __thread uint8_t c[kCtlSize];
  size_t cap = (size_t)kCtlSize / (size_t)slots;
  if (Percent(40)) {
    *len = Percent(80) ? 0 : Below(64);
    memset(c, 0, 64);
    return Percent(50) ? NULL : Where(kCtlOff + (size_t)slot * cap, 64, c, 90);
  }
  size_t at = 0;
  int n = 1 + (int)Below(3);
  for (int i = 0; i < n && at + 64 < cap; i++) {
    struct cmsghdr h;
    uint8_t* d = c + at + CMSG_LEN(0);
    size_t dlen = 0;
    h.cmsg_level = SOL_SOCKET;
    switch (Below(12)) {
      case 0:
      case 1:
      case 2:
      case 3: {  // SCM_RIGHTS
        size_t nfd = Percent(90) ? 1 + Below(4) : Percent(70) ? 1 + Below(253) : 254 + Below(10);
        size_t room = (cap - at - CMSG_LEN(0)) / sizeof(int);
        if (nfd > room) nfd = room;
        for (size_t j = 0; j < nfd; j++) {
          // Not 0..2: a received copy would be written to like our other fds.
          int fd = Percent(5) ? epoll_fd : PickFd(0);
          memcpy(d + j * sizeof(int), &fd, sizeof(int));
        }
        h.cmsg_type = SCM_RIGHTS;
        dlen = nfd * sizeof(int);
        break;
      }
      case 4:
      case 5: {  // SCM_CREDENTIALS
        struct ucred u = {getpid(), getuid(), getgid()};
        if (Percent(20)) u.pid = (pid_t)Below(100000);
        if (Percent(20)) u.uid = (uid_t)Below(70000);
        if (Percent(20)) u.gid = (gid_t)Below(70000);
        memcpy(d, &u, sizeof(u));
        h.cmsg_type = SCM_CREDENTIALS;
        dlen = Percent(90) ? sizeof(u) : Below(16);
        break;
      }
      case 6:
      case 7: {  // IP level: hop limits, traffic classes, packet info (only loopback, lo)
        int v[2] = {Percent(80) ? (int)Below(256) : PICK(((const int[]){-1, -2, 256, 0x7fffffff})),
                    (int)Next()};
        int six = domain == AF_INET6 ? Percent(80) : Percent(20);
        h.cmsg_level = six ? IPPROTO_IPV6 : IPPROTO_IP;
        dlen = Percent(90) ? sizeof(int) : Percent(50) ? 1 : 8;
        memcpy(d, v, sizeof(v));
        switch (Below(4)) {
          case 0: h.cmsg_type = six ? IPV6_HOPLIMIT : IP_TTL; break;
          case 1: h.cmsg_type = six ? IPV6_TCLASS : IP_TOS; break;
          case 2: h.cmsg_type = six ? IPV6_DONTFRAG : IP_TOS; break;
          default:
            if (six) {
              struct in6_pktinfo pi;
              memset(&pi, 0, sizeof(pi));
              if (Percent(50)) pi.ipi6_addr.s6_addr[15] = 1;
              pi.ipi6_ifindex = (int)Below(2);
              memcpy(d, &pi, sizeof(pi));
              h.cmsg_type = IPV6_PKTINFO;
              dlen = sizeof(pi);
            } else {
              struct in_pktinfo pi;
              memset(&pi, 0, sizeof(pi));
              pi.ipi_ifindex = (int)Below(2);
              if (Percent(50)) pi.ipi_spec_dst.s_addr = htonl(0x7f000001);
              if (Percent(50)) pi.ipi_addr.s_addr = htonl(0x7f000001);
              memcpy(d, &pi, sizeof(pi));
              h.cmsg_type = IP_PKTINFO;
              dlen = sizeof(pi);
            }
        }
        break;
      }
      case 8: {  // unknown SOL_SOCKET types and unknown levels
        h.cmsg_level = Percent(50) ? SOL_SOCKET : PICK(((const int[]){1000, -1, 0x7fffffff, 263}));
        h.cmsg_type = PICK(((const int[]){0, 3, 99, -1, 0x7fffffff}));
        dlen = Below(32);
        for (size_t j = 0; j < dlen; j++) d[j] = (uint8_t)Next();
        break;
      }
      default: {  // a header with a bad length, or a cut one
        h.cmsg_type = Percent(50) ? SCM_RIGHTS : SCM_CREDENTIALS;
        int fd = PickFd(0);
        memcpy(d, &fd, sizeof(fd));
        dlen = sizeof(int);
        h.cmsg_len = PICK(((const size_t[]){0, 1, 15, 17, 0xffffffff, (size_t)1 << 40, 4096}));
        memcpy(c + at, &h, sizeof(h));
        at += Percent(50) ? CMSG_SPACE(dlen) : Below(sizeof(h));
        continue;
      }
    }
    h.cmsg_len = CMSG_LEN(dlen);
    memcpy(c + at, &h, sizeof(h));
    at += (i == n - 1 && Percent(20)) ? CMSG_LEN(dlen) : CMSG_SPACE(dlen);
  }
  *len = at;
  if (Percent(5)) *len = PICK(((const size_t[]){at - 1, at + 8, 1, (size_t)1 << 32, 0x7fffffff}));
  return Where(kCtlOff + (size_t)slot * cap, at, c, 92);
}

// The fds a recvmsg delivered in the control buffer at `c` (`len` bytes): into the pool.
// `check`: `len` is what the kernel wrote last (recvmmsg's data may land on earlier msghdrs).
static void AdoptRights(const uint8_t* c, size_t len, size_t provided, int check) {
  if (len > provided) {
    if (check) Impossible("msg_controllen grew", (long)len);
    return;
  }
  if (!c || !InScratch(c, len) || in_racer) return;  // the racer's go to Sweep
  size_t at = 0;
  while (at + sizeof(struct cmsghdr) <= len) {
    struct cmsghdr h;
    memcpy(&h, c + at, sizeof(h));
    if (h.cmsg_len < CMSG_LEN(0) || h.cmsg_len > len - at) break;
    if (h.cmsg_level == SOL_SOCKET && h.cmsg_type == SCM_RIGHTS) {
      size_t n = (h.cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < n; i++) {
        int fd;
        memcpy(&fd, c + at + CMSG_LEN(0) + i * sizeof(int), sizeof(int));
        if (fd < 0) {
          Impossible("negative fd in SCM_RIGHTS", fd);
          continue;
        }
        AddUnknownFd(fd);
      }
    }
    at += CMSG_ALIGN(h.cmsg_len);
  }
}

// ---- the calls ----

static int PickDomain(void) {
  static const int kJunk[] = {AF_UNSPEC, -1, 64, 100, 255, 0x7fffffff, INT_MIN};
  uint64_t r = Below(100);
  if (r < 38) return AF_UNIX;
  if (r < 58) return AF_INET;
  if (r < 78) return AF_INET6;
  if (r < 90) return AF_NETLINK;
  return PICK(kJunk);
}

static int PickType(int domain) {
  static const int kTypes[] = {SOCK_STREAM, SOCK_RAW, SOCK_RDM, 0, 7, 11, 15};
  int t;
  do
    t = Percent(85) ? PICK(((const int[]){SOCK_STREAM, SOCK_STREAM, SOCK_DGRAM, SOCK_DGRAM,
                                          SOCK_SEQPACKET}))
                    : PICK(kTypes);
  while ((domain == AF_INET || domain == AF_INET6) && (t == SOCK_RAW || t == 7));
  if (Percent(20)) t |= SOCK_NONBLOCK;
  if (Percent(30)) t |= SOCK_CLOEXEC;
  if (Percent(2)) t |= 0x100;
  return t;
}

static int PickProtocol(int domain, int type) {
  static const int kJunk[] = {-1, 1000, 0x7fffffff, INT_MIN};
  if (Percent(5)) return PICK(kJunk);
  switch (domain) {
    case AF_UNIX: return Percent(90) ? 0 : 1;
    case AF_INET:
    case AF_INET6:
      if (Percent(60)) return 0;
      if (Percent(85)) return type == SOCK_STREAM ? IPPROTO_TCP : IPPROTO_UDP;
      return PICK(
          ((const int[]){IPPROTO_TCP, IPPROTO_UDP, IPPROTO_UDPLITE, IPPROTO_ICMP, IPPROTO_ICMPV6}));
    case AF_NETLINK:
      // Only NETLINK_ROUTE, to which our bytes are harmless, is ever made (the racer cannot
      // tell one netlink socket from another).
      if (Percent(85)) return NETLINK_ROUTE;
      return PICK(((const int[]){32, 1000, -5}));
    default: return (int)Below(300);
  }
}

static void OpSocket(void) {
  int domain = PickDomain();
  int type = PickType(domain);
  int protocol = PickProtocol(domain, type & 0xf);
  Describe(kOpSocket, domain, type, protocol, 0);
  long fd = Done(kOpSocket, syscall(SYS_socket, domain, type, protocol));
  if (fd >= 0) Adopt((int)fd, domain, type & 0xf, protocol, type & SOCK_NONBLOCK, Percent(15));
}

static void OpSocketpair(void) {
  int domain = Percent(75) ? AF_UNIX : PickDomain();
  int type = PickType(domain);
  int protocol = PickProtocol(domain, type & 0xf);
  int* sv = Where(kMiscOff, 8, NULL, 90);
  Describe(kOpSocketpair, domain, type, protocol, (long)sv);
  long r = Done(kOpSocketpair, syscall(SYS_socketpair, domain, type, protocol, sv));
  if (r != 0) return;
  if (!InScratch(sv, 8)) {
    Impossible("socketpair wrote fds through a bad pointer", r);
    return;
  }
  int fds[2];
  memcpy(fds, sv, sizeof(fds));
  if (fds[0] < 0 || fds[1] < 0 || fds[0] == fds[1]) {
    Impossible("socketpair fds", fds[0]);
    return;
  }
  int timed = Percent(15);
  for (int i = 0; i < 2; i++)
    Adopt(fds[i], domain, type & 0xf, protocol, type & SOCK_NONBLOCK, timed);
}

static void OpBindConnect(int op) {
  int fd = PickFd(0);
  int len;
  void* a = PlaceAddr(SockDomain(fd), op == kOpBind, 0, &len);
  if (op == kOpConnect && Percent(40)) {
    // The name of a listening socket of the same domain, as clients do.
    for (int tries = 0; tries < 16; tries++) {
      const struct Slot* l = &pool[Below((uint64_t)pool_count)];
      if (l->listening && l->name_len > 0 && l->domain == SockDomain(fd)) {
        memcpy(scratch + kAddrOff, l->name, (size_t)l->name_len);
        a = scratch + kAddrOff;
        len = l->name_len;
        break;
      }
    }
  }
  Describe(op, fd, (long)a, len, 0);
  long r = Done(op, syscall(op == kOpBind ? SYS_bind : SYS_connect, fd, a, len));
  if (r == 0 && op == kOpBind && InScratch(a, 128)) Named(fd, a, len);
}

// A server as programs make one: socket, bind to a name of this run, listen (streams), so
// that connects and sends find someone. Counted as the calls they are.
static void OpServer(void) {
  static const int kKinds[][2] = {{AF_UNIX, SOCK_STREAM},  {AF_UNIX, SOCK_SEQPACKET},
                                  {AF_UNIX, SOCK_DGRAM},   {AF_INET, SOCK_STREAM},
                                  {AF_INET6, SOCK_STREAM}, {AF_INET, SOCK_DGRAM},
                                  {AF_INET6, SOCK_DGRAM}};
  int k = (int)Below(COUNT_OF(kKinds));
  int domain = kKinds[k][0], type = kKinds[k][1];
  Describe(kOpSocket, domain, type, 0, 0);
  long fd = Done(kOpSocket, syscall(SYS_socket, domain, type | SOCK_NONBLOCK, 0));
  if (fd < 0) return;
  Adopt((int)fd, domain, type, 0, 1, 0);
  static __thread uint8_t a[kAddrMax];
  int len;
  do len = BuildAddr(domain, a);
  while (*(uint16_t*)a != domain || (domain == AF_UNIX && len <= 2));
  Sanitize(a, len, 1);
  memcpy(scratch + kAddrOff, a, 128);
  Describe(kOpBind, fd, (long)(scratch + kAddrOff), len, 0);
  if (Done(kOpBind, syscall(SYS_bind, fd, scratch + kAddrOff, len)) != 0) return;
  Named((int)fd, a, len);
  if (type == SOCK_DGRAM) return;
  Describe(kOpListen, fd, 8, 0, 0);
  if (Done(kOpListen, syscall(SYS_listen, fd, 8)) != 0) return;
  if (SlotOf((int)fd)) SlotOf((int)fd)->listening = 1;
  if (Percent(30)) return;
  // And a client, connected and accepted.
  Describe(kOpSocket, domain, type, 0, 0);
  long c = Done(kOpSocket, syscall(SYS_socket, domain, type, 0));
  if (c < 0) return;
  Adopt((int)c, domain, type, 0, 0, Percent(30));
  Describe(kOpConnect, c, (long)(scratch + kAddrOff), len, 0);
  Done(kOpConnect, syscall(SYS_connect, c, scratch + kAddrOff, len));
  Describe(kOpAccept, fd, 0, 0, SOCK_NONBLOCK);
  long r = Done(kOpAccept, syscall(SYS_accept4, fd, NULL, NULL, SOCK_NONBLOCK));
  if (r >= 0) Adopt((int)r, domain, type, 0, 1, 0);
}

static void OpListen(void) {
  static const int kBacklogs[] = {-1, 0, 1, 2, 5, 128, 4096, 0x7fffffff, INT_MIN};
  int fd = PickFd(0);
  int backlog = PICK(kBacklogs);
  Describe(kOpListen, fd, backlog, 0, 0);
  long r = Done(kOpListen, syscall(SYS_listen, fd, backlog));
  if (r == 0 && !in_racer && SlotOf(fd)) SlotOf(fd)->listening = 1;
}

// A socklen_t in/out argument at misc offset `off`, holding one of the usual values.
static socklen_t* PlaceLen(size_t off, int typical) {
  static const int kLens[] = {0, 1, 2, 4, 8, 16, 28, 110, 128, 4096, -1, 0x7fffffff};
  int v = Percent(70) ? typical : PICK(kLens);
  return Where(kMiscOff + off, sizeof(v), &v, 88);
}

static void OpAccept(void) {
  int fd = PickFd(0);
  if (Percent(70)) {
    for (int tries = 0; tries < 16; tries++) {
      int i = (int)Below((uint64_t)pool_count);
      if (pool[i].listening) {
        fd = pool[i].fd;
        break;
      }
    }
  }
  void* addr = Percent(30) ? NULL : Where(kAddrOff, 128, NULL, 90);
  socklen_t* len = Percent(20) ? NULL : PlaceLen(0, 128);
  int flags = 0;
  if (Percent(50)) flags |= SOCK_NONBLOCK;
  if (Percent(30)) flags |= SOCK_CLOEXEC;
  if (Percent(3)) flags |= PICK(((const int[]){1, O_APPEND, 0x40000000}));
  Describe(kOpAccept, fd, (long)addr, (long)len, flags);
  long r = Done(kOpAccept, syscall(SYS_accept4, fd, addr, len, flags));
  if (r < 0 || in_racer) return;  // the racer's go to Sweep
  struct Slot* s = SlotOf(fd);
  if (s && s->kind == kKindSocket) {
    Adopt((int)r, s->domain, s->type, s->protocol, flags & SOCK_NONBLOCK, Percent(15));
  } else {
    AddUnknownFd((int)r);
  }
}

static void OpShutdown(void) {
  int fd = PickFd(0);
  int how = Percent(90) ? (int)Below(3) : PICK(((const int[]){3, -1, 0x7fffffff}));
  Describe(kOpShutdown, fd, how, 0, 0);
  Done(kOpShutdown, syscall(SYS_shutdown, fd, how));
}

static void OpName(int op) {
  int fd = PickFd(1);
  void* addr = Where(kAddrOff, 128, NULL, 90);
  socklen_t* len = Percent(5) ? NULL : PlaceLen(0, 128);
  int given = len && InScratch(len, 4) ? (int)*len : -1;
  Describe(op, fd, (long)addr, (long)len, given);
  long r =
      Done(op, syscall(op == kOpGetsockname ? SYS_getsockname : SYS_getpeername, fd, addr, len));
  if (r != 0 || !InScratch(len, 4) || !InScratch(addr, 128)) return;
  int got = (int)*len;
  if (got < 0 || got > 128) Impossible("address length", got);
  // Remember AF_UNIX names (autobind) to connect and send to later; an inet address only
  // with a port of this run's set.
  uint16_t family;
  memcpy(&family, addr, 2);
  if (got <= given && op == kOpGetsockname) {
    uint8_t* b = addr;
    if (family == AF_UNIX || (PortOk(b + 2) && (b[2] | b[3]))) Learn(addr, got);
  }
}

static void OpSendto(void) {
  int fd = PickFd(0);
  int strict;
  size_t off = Below(kDataSize / 2);
  size_t len = Payload(fd, off, kDataSize - off, &strict);
  void* buf = Percent(95) || strict ? scratch + off : BadPtr();
  int alen = 0;
  void* a = Percent(50) ? NULL : PlaceAddr(SockDomain(fd), 0, 0, &alen);
  int flags = MsgFlags();
  Describe(kOpSendto, fd, (long)buf, (long)len, flags);
  long r = Done(kOpSendto, syscall(SYS_sendto, fd, buf, len, flags, a, alen));
  if (r > 0 && (size_t)r > len) Impossible("sent more than asked", r);
}

static void OpRecvfrom(void) {
  int fd = PickFd(0);
  size_t off = Below(kDataSize / 2);
  size_t len = DataLen(kDataSize - off);
  void* buf = Percent(95) ? scratch + off : BadPtr();
  void* addr = Percent(40) ? NULL : Where(kAddrOff, 128, NULL, 90);
  socklen_t* alen = Percent(20) ? NULL : PlaceLen(0, 128);
  int flags = MsgFlags();
  Describe(kOpRecvfrom, fd, (long)buf, (long)len, flags);
  long r = Done(kOpRecvfrom, syscall(SYS_recvfrom, fd, buf, len, flags, addr, alen));
  // TCP urgent data: Linux returns the byte count even for a 0-byte buffer.
  if (r > 0 && (size_t)r > len && !(flags & (MSG_TRUNC | MSG_OOB))) {
    Impossible("received more than asked", r);
  }
}

// One msghdr for sendmsg/sendmmsg (message `i` of `n`), written to `m`.
static void BuildSendMsg(int fd, int i, int n, struct msghdr* m) {
  memset(m, 0, sizeof(*m));
  size_t chunk = kDataSize / (size_t)n;
  size_t off = (size_t)i * chunk;
  int strict;
  size_t len = Payload(fd, off, chunk, &strict);
  if (len > chunk && strict) len = chunk;
  m->msg_iov = BuildIov(scratch + off, len, strict, i, n, &m->msg_iovlen);
  if (Percent(40)) {
    int alen;
    m->msg_name = PlaceAddr(SockDomain(fd), 0, (size_t)i, &alen);
    m->msg_namelen = (socklen_t)alen;
  } else if (Percent(5)) {
    m->msg_name = BadPtr();
    m->msg_namelen = (socklen_t)Below(200);
  }
  m->msg_control = BuildControl(SockDomain(fd), i, n, &m->msg_controllen);
  m->msg_flags = (int)Next();
}

// One msghdr for recvmsg/recvmmsg.
static void BuildRecvMsg(int i, int n, struct msghdr* m) {
  memset(m, 0, sizeof(*m));
  size_t chunk = kDataSize / (size_t)n;
  size_t off = (size_t)i * chunk;
  size_t len = Percent(90) ? DataLen(chunk) : chunk;
  m->msg_iov = BuildIov(scratch + off, len, 0, i, n, &m->msg_iovlen);
  if (Percent(60)) {
    m->msg_name = Where(kAddrOff + (size_t)i * 256, 128, NULL, 90);
    m->msg_namelen = (socklen_t)PICK(((const int[]){128, 110, 16, 28, 12, 2, 0, 1, -1}));
  }
  size_t cap = (size_t)kCtlSize / (size_t)n;
  if (Percent(70)) {
    m->msg_controllen = PICK(((const size_t[]){16, 20, 24, 28, 32, 40, 64, 256, 1024}));
    if (Percent(10)) m->msg_controllen = Percent(50) ? cap : (size_t)1 << 40;
    m->msg_control = Where(kCtlOff + (size_t)i * cap, cap < 1024 ? cap : 1024, NULL, 90);
    if (m->msg_controllen > cap && InScratch(m->msg_control, 1)) m->msg_controllen = cap - 8;
  }
}

static void OpSendmsg(void) {
  int fd = PickFd(0);
  struct msghdr m;
  BuildSendMsg(fd, 0, 1, &m);
  void* mp = Where(kMsgOff, sizeof(m), &m, 95);
  int flags = MsgFlags();
  Describe(kOpSendmsg, fd, (long)mp, flags, (long)m.msg_controllen);
  long r = Done(kOpSendmsg, syscall(SYS_sendmsg, fd, mp, flags));
  if (r > 0 && r > 0x7ffff000) Impossible("sent more than MAX_RW_COUNT", r);
}

static void OpRecvmsg(void) {
  int fd = PickFd(0);
  struct msghdr m;
  BuildRecvMsg(0, 1, &m);
  struct msghdr* mp = Where(kMsgOff, sizeof(m), &m, 95);
  int flags = MsgFlags();
  Describe(kOpRecvmsg, fd, (long)mp, flags, (long)m.msg_controllen);
  long r = Done(kOpRecvmsg, syscall(SYS_recvmsg, fd, mp, flags));
  if (r < 0 || !InScratch(mp, sizeof(*mp))) return;
  if (m.msg_control) AdoptRights(m.msg_control, mp->msg_controllen, m.msg_controllen, 1);
}

static void OpSendmmsg(void) {
  int fd = PickFd(0);
  static __thread struct mmsghdr v[kMmsgMax];
  int n = 1 + (int)Below(kMmsgMax);
  for (int i = 0; i < n; i++) {
    BuildSendMsg(fd, i, kMmsgMax, &v[i].msg_hdr);
    v[i].msg_len = (unsigned)Next();
  }
  memset(scratch + kMsgOff, 0, kMsgSize);
  unsigned vlen = Percent(80) ? (unsigned)n : PICK(((const unsigned[]){0, 64, 1024, 1025, ~0u}));
  // A vector longer than built holds zeroed msghdrs, then runs into the guard page; a netlink
  // target gets only the built ones.
  int protocol;
  if (NetlinkLike(fd, &protocol) && vlen > (unsigned)n) vlen = (unsigned)n;
  void* vp = Where(kMsgOff, (size_t)n * sizeof(v[0]), v, 95);
  int flags = MsgFlags();
  Describe(kOpSendmmsg, fd, (long)vp, vlen, flags);
  long r = Done(kOpSendmmsg, syscall(SYS_sendmmsg, fd, vp, vlen, flags));
  if (r > (long)vlen || r > 1024) Impossible("sent more messages than given", r);
}

static void OpRecvmmsg(void) {
  int fd = PickFd(0);
  static __thread struct mmsghdr v[kMmsgMax];
  int n = 1 + (int)Below(kMmsgMax);
  for (int i = 0; i < n; i++) {
    BuildRecvMsg(i, kMmsgMax, &v[i].msg_hdr);
    v[i].msg_len = (unsigned)Next();
  }
  memset(scratch + kMsgOff, 0, kMsgSize);
  unsigned vlen = Percent(85) ? (unsigned)n : PICK(((const unsigned[]){0, 64, 1024, 1025, ~0u}));
  struct mmsghdr* vp = Where(kMsgOff, (size_t)n * sizeof(v[0]), v, 95);
  struct timespec ts[] = {{0, 0}, {0, 1000000}, {-1, 0}, {0, 2000000000}, {0, 1}};
  void* tp = Percent(70) ? NULL : Where(kMiscOff + 512, sizeof(ts[0]), &PICK(ts), 90);
  int flags = MsgFlags();
  Describe(kOpRecvmmsg, fd, (long)vp, vlen, flags);
  long r = Done(kOpRecvmmsg, syscall(SYS_recvmmsg, fd, vp, vlen, flags, tp));
  if (r > (long)vlen || r > 1024) Impossible("received more messages than given", r);
  if (r <= 0 || !InScratch(vp, (size_t)n * sizeof(v[0]))) return;
  for (int i = 0; i < r && i < n; i++) {
    if (v[i].msg_hdr.msg_control) {
      AdoptRights(v[i].msg_hdr.msg_control, vp[i].msg_hdr.msg_controllen,
                  v[i].msg_hdr.msg_controllen, 0);
    }
  }
}

// Option names that reach beyond the socket (see the header); never set.
static int Unsafe(int level, int name, int set) {
  switch (level) {
    case SOL_SOCKET:
      return set && (name == 32 || name == 33 || name == 46 || name == 62 || name == 69 ||
                     name == 70 || name == 73);
    case IPPROTO_IP:
      return set && (name == 4 || name == 16 || name == 17 || name == 32 ||
                     (name >= 35 && name <= 48) || name == 50 || name >= 64);
    case IPPROTO_IPV6:
      return set && (name == 5 || name == 6 || name == 9 || name == 17 || name == 20 ||
                     name == 21 || name == 27 || name == 28 || name == 32 || name == 34 ||
                     name == 35 || (name >= 42 && name <= 48) || name == 57 || name == 64 ||
                     name == 65 || name == 76 || name > 80);
    case IPPROTO_TCP: return name == 35 || (set && (name == 13 || name == 31 || name == 33));
    case IPPROTO_UDP: return set && name == 100;
    default: return 0;
  }
}

static void PickOption(int domain, int set, int* level, int* name) {
  static const int kJunkLevels[] = {-1, 2, 255, 263, 1000, 0x7fffffff, INT_MIN};
  for (;;) {
    uint64_t r = Below(100);
    if (r < 40) {
      *level = SOL_SOCKET;
    } else if (r < 60 && domain >= 0) {
      *level = domain == AF_INET      ? IPPROTO_IP
               : domain == AF_INET6   ? (Percent(70) ? IPPROTO_IPV6 : IPPROTO_IP)
               : domain == AF_NETLINK ? SOL_NETLINK
                                      : SOL_SOCKET;
    } else if (r < 90) {
      *level = PICK(((const int[]){IPPROTO_IP, IPPROTO_IPV6, IPPROTO_TCP, IPPROTO_TCP, IPPROTO_UDP,
                                   SOL_NETLINK}));
    } else {
      *level = PICK(kJunkLevels);
    }
    *name = Percent(95) ? (int)Below(82) : PICK(((const int[]){-1, 1000, 0x7fffffff, 100, 103}));
    if (*level == IPPROTO_UDP && Percent(30)) *name = 100 + (int)Below(6);
    if (!Unsafe(*level, *name, set)) return;
  }
}

// Makes an option value in `v` (256 bytes) harmless: short or negative timeouts, no linger
// time, no device but lo or none.
static void SanitizeOption(int level, int name, uint8_t* v) {
  if (level != SOL_SOCKET) return;
  if (name == SO_RCVTIMEO_OLD || name == SO_SNDTIMEO_OLD || name == SO_RCVTIMEO_NEW ||
      name == SO_SNDTIMEO_NEW) {
    int64_t tv[2];
    memcpy(tv, v, sizeof(tv));
    if (tv[0] >= 0) {  // a negative time means "don't wait" to Linux
      tv[0] = 0;
      if (tv[1] >= 0 && tv[1] < 1000000) tv[1] = 1 + tv[1] % 20000;
    }
    memcpy(v, tv, sizeof(tv));
  }
  if (name == SO_LINGER) memset(v + 4, 0, 4);
  if (name == SO_BINDTODEVICE) {
    static const char* const kDevs[] = {"lo", "", "sfz0", "lo\0junk"};
    memset(v, 0, 16);
    if (Percent(80)) {
      memcpy(v, PICK(kDevs), 8);
    } else {
      v[0] = 0x80 | (uint8_t)Next();
    }
  }
}

static void OpSetsockopt(void) {
  int fd = PickFd(0);
  int level, name;
  PickOption(SockDomain(fd), 1, &level, &name);
  static __thread uint8_t v[256];
  static const int kInts[] = {0,   1,   -1,   2,    3,     4,     7,       8,          16,     64,
                              255, 256, 1024, 4096, 65535, 65536, 1 << 20, 0x7fffffff, INT_MIN};
  for (int i = 0; i < 256; i += 8) {
    uint64_t r = Next();
    memcpy(v + i, &r, 8);
  }
  if (Percent(70)) {
    int x = PICK(kInts);
    memcpy(v, &x, 4);
  }
  if (name == SO_RCVTIMEO_OLD && level == SOL_SOCKET && Percent(50)) {
    int64_t tv[2] = {Percent(50) ? -1 : 0, (int64_t)Below(3000)};
    memcpy(v, tv, sizeof(tv));
  }
  SanitizeOption(level, name, v);
  static const int kLens[] = {0,  1,  2,  3,  4,  4,   4,   4,  8,         12,
                              16, 16, 24, 32, 64, 100, 256, -1, 0x7fffffff};
  int len = PICK(kLens);
  void* p = Where(kOptOff, 256, v, 90);
  Describe(kOpSetsockopt, fd, level, name, len);
  Done(kOpSetsockopt, syscall(SYS_setsockopt, fd, level, name, p, len));
}

static void OpGetsockopt(void) {
  int fd = PickFd(1);
  int level, name;
  PickOption(SockDomain(fd), 0, &level, &name);
  void* v = Where(kOptOff, 4096, NULL, 90);
  static const int kLens[] = {0, 1, 2, 4, 4, 4, 8, 16, 32, 64, 128, 256, 4096, -1, 0x7fffffff};
  socklen_t* len = Percent(5) ? NULL : PlaceLen(0, PICK(kLens));
  Describe(kOpGetsockopt, fd, level, name, (long)len);
  Done(kOpGetsockopt, syscall(SYS_getsockopt, fd, level, name, v, len));
}

static void OpIoctl(void) {
  static const unsigned long kCmds[] = {FIONREAD,       SIOCOUTQ,
                                        SIOCOUTQNSD,    SIOCATMARK,
                                        SIOCGSTAMP,     SIOCGSTAMPNS,
                                        FIONBIO,        SIOCGIFCONF,
                                        SIOCGIFNAME,    SIOCGIFINDEX,
                                        SIOCGIFFLAGS,   SIOCGIFADDR,
                                        SIOCGIFDSTADDR, SIOCGIFBRDADDR,
                                        SIOCGIFNETMASK, SIOCGIFMETRIC,
                                        SIOCGIFMTU,     SIOCGIFHWADDR,
                                        SIOCGIFTXQLEN,  SIOCGIFMAP,
                                        SIOCGIFPFLAGS,  SIOCGPGRP,
                                        FIOGETOWN,      0x5401,
                                        0x12345678,     0};
  int fd = PickFd(0);
  unsigned long cmd = PICK(kCmds);
  static __thread uint8_t arg[64];
  for (int i = 0; i < 64; i++) arg[i] = (uint8_t)Next();
  if (cmd == FIONBIO) {
    int one = 1;
    memcpy(arg, &one, 4);
  } else if (cmd == SIOCGIFCONF) {
    struct ifconf ifc;
    ifc.ifc_len = Percent(20) ? (int)Next() : (int)Below(kDataSize);
    ifc.ifc_buf = Percent(20) ? NULL : Percent(90) ? (char*)scratch : BadPtr();
    memcpy(arg, &ifc, sizeof(ifc));
  } else if (Percent(80)) {
    static const char* const kNames[] = {"lo", "eth0", "", "sfz0", "lo\0x"};
    memcpy(arg, PICK(kNames), 6);
    if (Percent(10)) memset(arg, 'l', IFNAMSIZ);  // unterminated
    if (cmd == SIOCGIFNAME) {
      int index = (int)Below(4) - 1;
      memcpy(arg + IFNAMSIZ, &index, 4);
    }
  }
  void* p = Where(kMiscOff + 1024, sizeof(arg), arg, 88);
  Describe(kOpIoctl, fd, (long)cmd, (long)p, 0);
  Done(kOpIoctl, syscall(SYS_ioctl, fd, cmd, p));
}

static void OpPoll(void) {
  struct pollfd* pf = (struct pollfd*)(scratch + kMiscOff + 2048);
  int n = (int)Below(9);
  static const short kEvents[] = {POLLIN, POLLOUT, POLLPRI, POLLRDHUP, POLLIN | POLLOUT, -1, 0};
  for (int i = 0; i < n; i++) {
    pf[i].fd = PickFd(1);
    pf[i].events = PICK(kEvents);
    pf[i].revents = (short)Next();
  }
  struct pollfd copy[8];
  memcpy(copy, pf, sizeof(copy));
  unsigned long nfds =
      Percent(95) ? (unsigned long)n : PICK(((const unsigned long[]){100000, ~0ul}));
  void* p = n == 0 || Percent(95) ? (void*)pf : BadPtr();
  Describe(kOpPoll, (long)p, (long)nfds, 0, 0);
  long r = Done(kOpPoll, syscall(SYS_poll, p, nfds, 0));
  if (r > n) Impossible("more ready fds than given", r);
  if (r < 0 || p != pf) return;
  for (int i = 0; i < n; i++) {
    short extra = (short)(POLLERR | POLLHUP | POLLNVAL);
    short ev = copy[i].events;
    // Linux maps POLLIN/POLLOUT to their RDNORM/WRNORM twins and back.
    if (ev & POLLIN) ev |= POLLRDNORM;
    if (ev & POLLOUT) ev |= POLLWRNORM | POLLWRBAND;
    if (pf[i].revents & ~(ev | extra)) Impossible("revents not asked for", pf[i].revents);
  }
}

static void OpEpollCtl(void) {
  static const int kOps[] = {EPOLL_CTL_ADD, EPOLL_CTL_ADD, EPOLL_CTL_MOD, EPOLL_CTL_DEL, 0, 4};
  static const uint32_t kEvents[] = {EPOLLIN,
                                     EPOLLOUT,
                                     EPOLLIN | EPOLLOUT | EPOLLRDHUP,
                                     EPOLLIN | EPOLLET,
                                     EPOLLIN | EPOLLONESHOT,
                                     EPOLLIN | EPOLLEXCLUSIVE,
                                     0,
                                     0xffffffff};
  int fd = Percent(5) ? epoll_fd : PickFd(1);
  struct epoll_event ev = {PICK(kEvents), {.u64 = Next()}};
  void* p = Where(kMiscOff + 4096, sizeof(ev), &ev, 92);
  int op = PICK(kOps);
  int ep = Percent(95) ? epoll_fd : PickFd(1);
  Describe(kOpEpollCtl, ep, op, fd, (long)ev.events);
  Done(kOpEpollCtl, syscall(SYS_epoll_ctl, ep, op, fd, p));
}

static void OpEpollWait(void) {
  int max = Percent(90) ? 1 + (int)Below(16) : PICK(((const int[]){0, -1, 0x7fffffff}));
  void* p = Where(kMiscOff + 4096, 16 * sizeof(struct epoll_event), NULL, 92);
  int ep = Percent(95) ? epoll_fd : PickFd(1);
  Describe(kOpEpollWait, ep, (long)p, max, 0);
  long r = Done(kOpEpollWait, syscall(SYS_epoll_wait, ep, p, max, 0));
  if (r > 0 && r > max) Impossible("more events than room", r);
}

static void OpClose(void) {
  int i = Evictable();
  if (i < 0 || Percent(3)) {
    int fd = PICK(((const int[]){-1, 1 << 20, 1023}));
    Describe(kOpClose, fd, 0, 0, 0);
    Done(kOpClose, syscall(SYS_close, fd));
    return;
  }
  int fd = pool[i].fd;
  Describe(kOpClose, fd, 0, 0, 0);
  long r = Done(kOpClose, syscall(SYS_close, fd));
  if (r != 0 && errno != EINTR) Impossible("close of an open fd failed", r);
  pool[i] = pool[--pool_count];
  last_closed = fd;
}

static void OpDup(void) {
  int fd = PickFd(0);
  struct Slot* from = SlotOf(fd);
  struct Slot copy = {.fd = -1, .kind = kKindOther, .domain = -1};
  if (from) copy = *from;
  long r;
  if (Percent(40)) {
    Describe(kOpDup, fd, 0, 0, 0);
    r = Done(kOpDup, syscall(SYS_dup, fd));
  } else {
    // Onto another pool fd (replacing it) or a fresh number; never onto a kept fd or 0..2.
    int i = Evictable();
    int target = (i >= 0 && Percent(50)) ? pool[i].fd : 100 + (int)Below(50);
    struct Slot* t = SlotOf(target);
    if (t && t->keep) return;
    int flags = Percent(90) ? (Percent(50) ? 0 : O_CLOEXEC) : 1;
    Describe(kOpDup, fd, target, flags, 0);
    r = Done(kOpDup, syscall(SYS_dup3, fd, target, flags));
    if (r >= 0 && r != target) Impossible("dup3 returned another fd", r);
    if (r >= 0) Forget(target);
  }
  if (r < 0) return;
  if (copy.fd >= 0) {
    AddFd((int)r, copy.kind, copy.domain, copy.type, copy.protocol);
    struct Slot* s = SlotOf((int)r);
    if (s) {
      copy.fd = s->fd;
      copy.keep = 0;
      *s = copy;
    }
  } else {
    AddUnknownFd((int)r);
  }
}

static void OpReadWrite(int op) {
  int fd = PickFd(0);
  int write = op == kOpWrite || op == kOpWritev;
  size_t off = Below(kDataSize / 2);
  int strict = 0;
  size_t len = write ? Payload(fd, off, kDataSize - off, &strict) : DataLen(kDataSize - off);
  struct Slot* s = SlotOf(fd);
  if (write && s && s->kind == kKindOther && len > 512) len = 512;  // a file grows
  long r;
  if (op == kOpRead || op == kOpWrite) {
    Describe(op, fd, (long)(scratch + off), (long)len, 0);
    r = Done(op, syscall(write ? SYS_write : SYS_read, fd, scratch + off, len));
  } else {
    size_t n;
    void* v = BuildIov(scratch + off, len, strict, 0, 1, &n);
    Describe(op, fd, (long)v, (long)n, 0);
    r = Done(op, syscall(write ? SYS_writev : SYS_readv, fd, v, n));
  }
  if (r > 0 && (size_t)r > len && op != kOpReadv && op != kOpWritev) {
    Impossible("moved more bytes than asked", r);
  }
}

static void OpProcNet(void) {
  static const char* const kFiles[] = {"/proc/net/unix", "/proc/net/tcp",  "/proc/net/tcp6",
                                       "/proc/net/udp",  "/proc/net/udp6", "/proc/net/netlink"};
  const char* path = PICK(kFiles);
  snprintf(current, sizeof(current), "read %s", path);
  Publish();
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  long r = fd;
  if (fd >= 0) {
    while ((r = read(fd, scratch, kDataSize)) > 0) {
    }
    close(fd);
  }
  Done(kOpProcNet, r);
}

// Closes every fd the pool does not know (received through a bad control pointer,
// SO_PEERPIDFD, ...), so that the table stays bounded.
static void Sweep(void) {
  int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return;
  char buf[4096];
  int stray[256];
  int n = 0;
  long got;
  while ((got = syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0) {
    for (long at = 0; at < got;) {
      struct dirent64* d = (struct dirent64*)(buf + at);
      at += d->d_reclen;
      if (d->d_name[0] < '0' || d->d_name[0] > '9') continue;
      int fd = atoi(d->d_name);
      if (fd > 2 && fd != dir && !SlotOf(fd) && n < 256) stray[n++] = fd;
    }
  }
  close(dir);
  for (int i = 0; i < n; i++) close(stray[i]);
}

static void RunOne(void) {
  static int total_weight;
  if (!total_weight) {
    for (int i = 0; i < kOpCount; i++) total_weight += kOpWeights[i];
  }
  int w = (int)Below((uint64_t)total_weight);
  int op = 0;
  while (w >= kOpWeights[op]) w -= kOpWeights[op++];
  edge_taken = 0;
  switch (op) {
    case kOpSocket: OpSocket(); break;
    case kOpSocketpair: OpSocketpair(); break;
    case kOpBind:
    case kOpConnect: OpBindConnect(op); break;
    case kOpListen: OpListen(); break;
    case kOpAccept: OpAccept(); break;
    case kOpShutdown: OpShutdown(); break;
    case kOpGetsockname:
    case kOpGetpeername: OpName(op); break;
    case kOpSendto: OpSendto(); break;
    case kOpRecvfrom: OpRecvfrom(); break;
    case kOpSendmsg: OpSendmsg(); break;
    case kOpRecvmsg: OpRecvmsg(); break;
    case kOpSendmmsg: OpSendmmsg(); break;
    case kOpRecvmmsg: OpRecvmmsg(); break;
    case kOpSetsockopt: OpSetsockopt(); break;
    case kOpGetsockopt: OpGetsockopt(); break;
    case kOpIoctl: OpIoctl(); break;
    case kOpPoll: OpPoll(); break;
    case kOpEpollCtl: OpEpollCtl(); break;
    case kOpEpollWait: OpEpollWait(); break;
    case kOpClose: OpClose(); break;
    case kOpDup: OpDup(); break;
    case kOpProcNet: OpProcNet(); break;
    case kOpServer: OpServer(); break;
    default: OpReadWrite(op); break;
  }
}

// ---- the racer: a second thread on the same fds ----

// While the fuzzer's thread creates, closes and dups fds, this one makes the calls that do
// not change the pool on whatever fds the pool names at the moment (often just closed or
// reused ones), so that calls race with close, dup3 and each other on one fd table. It sends
// only netlink-safe bytes (any fd may be a netlink socket by the time it sends) and leaves
// the fds it receives to Sweep.
static volatile int racer_stop;
static uint64_t racer_seed;

static void* Racer(void* arg) {
  (void)arg;
  in_racer = 1;
  progress_slot = kMaxChildren + 1;
  rng_state = racer_seed;
  uint8_t* s = mmap(NULL, kScratchSize + 2 * kPage, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (s == MAP_FAILED || mprotect(s + kPage, kScratchSize, PROT_READ | PROT_WRITE) != 0) {
    return NULL;
  }
  scratch = s + kPage;
  // Only calls that cannot block: the fd may have been made a moment ago, before the fuzzer
  // made it non-blocking (so no read, write, connect or accept, and MSG_DONTWAIT always).
  static const int kOps[] = {kOpListen,   kOpShutdown,   kOpGetsockname, kOpSendto,
                             kOpRecvfrom, kOpSendmsg,    kOpRecvmsg,     kOpSendmmsg,
                             kOpRecvmmsg, kOpSetsockopt, kOpGetsockopt,  kOpIoctl,
                             kOpPoll,     kOpEpollCtl,   kOpEpollWait,   kOpBind};
  while (!racer_stop) {
    edge_taken = 0;
    int op = PICK(kOps);
    switch (op) {
      case kOpBind: OpBindConnect(op); break;
      case kOpListen: OpListen(); break;
      case kOpShutdown: OpShutdown(); break;
      case kOpGetsockname: OpName(op); break;
      case kOpSendto: OpSendto(); break;
      case kOpRecvfrom: OpRecvfrom(); break;
      case kOpSendmsg: OpSendmsg(); break;
      case kOpRecvmsg: OpRecvmsg(); break;
      case kOpSendmmsg: OpSendmmsg(); break;
      case kOpRecvmmsg: OpRecvmmsg(); break;
      case kOpSetsockopt: OpSetsockopt(); break;
      case kOpGetsockopt: OpGetsockopt(); break;
      case kOpIoctl: OpIoctl(); break;
      case kOpPoll: OpPoll(); break;
      case kOpEpollCtl: OpEpollCtl(); break;
      default: OpEpollWait(); break;
    }
  }
  return NULL;
}

// ---- the fuzzing process ----

static void Die(const char* what) {
  char buf[256];
  snprintf(buf, sizeof(buf), "socket_fuzz: %s: %s\n", what, strerror(errno));
  Out(buf);
  _exit(2);
}

static void SetUp(void) {
  uint8_t* s = mmap(NULL, kScratchSize + 2 * kPage, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (s == MAP_FAILED) Die("mmap scratch");
  if (mprotect(s, kPage, PROT_NONE) != 0 ||
      mprotect(s + kPage + kScratchSize, kPage, PROT_NONE) != 0)
    Die("mprotect guards");
  scratch = s + kPage;
  for (size_t i = 0; i < kScratchSize; i++) scratch[i] = (uint8_t)Next();
  signal(SIGPIPE, SIG_IGN);
  signal(SIGIO, SIG_IGN);
  signal(SIGURG, SIG_IGN);
  // Only the pool's fds may be named: close whatever was inherited.
  if (syscall(SYS_close_range, 3, ~0u, 0) != 0) {
    for (int fd = 3; fd < 1024; fd++) close(fd);
  }
  if (chdir(tmpdir) != 0) Die("chdir");
  epoll_fd = epoll_create1(0);
  int p[2];
  if (epoll_fd < 0 || pipe2(p, O_NONBLOCK) != 0) Die("epoll/pipe");
  AddFd(epoll_fd, kKindOther, -1, 0, 0);
  AddFd(p[0], kKindOther, -1, 0, 0);
  AddFd(p[1], kKindOther, -1, 0, 0);
  AddFd(eventfd(0, EFD_NONBLOCK), kKindOther, -1, 0, 0);
  AddFd(open("/dev/null", O_RDWR), kKindOther, -1, 0, 0);
  AddFd(open("file", O_RDWR | O_CREAT | O_TRUNC, 0600), kKindOther, -1, 0, 0);
  for (int i = 0; i < pool_count; i++) pool[i].keep = 1;
}

// A child of the fuzzer: some calls on the inherited pool, then exit.
static void Child(int slot, uint64_t seed) {
  in_child = 1;
  progress_slot = slot;
  rng_state = seed;
  long n = 50 + (long)Below(800);
  for (long i = 0; i < n; i++) RunOne();
  _exit(0);
}

static pid_t children[kMaxChildren];

static int Reap(int block) {
  int failed = 0;
  for (int i = 0; i < kMaxChildren; i++) {
    if (children[i] <= 0) continue;
    int status;
    pid_t w = waitpid(children[i], &status, block ? 0 : WNOHANG);
    if (w != children[i]) continue;
    children[i] = 0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      char buf[200];
      snprintf(buf, sizeof(buf), "socket_fuzz: FAIL: child %d: status %#x, last call %s\n", i + 1,
               status, progress->last[i + 1]);
      Out(buf);
      failed = 1;
    }
  }
  return failed;
}

static int Fuzz(uint64_t seed, long count) {
  rng_state = seed;
  main_pid = getpid();
  port_base = (uint16_t)(24000 + (main_pid % 1000) * 8);
  SetUp();
  racer_seed = Next();
  pthread_t racer;
  int racing = pthread_create(&racer, NULL, Racer, NULL) == 0;
  int failed = 0;
  for (long i = 0; progress->calls < count; i++) {
    RunOne();
    if (i % 500 == 499) Sweep();
    failed |= Reap(0);
    if (Below(700) == 0) {
      for (int c = 0; c < kMaxChildren; c++) {
        if (children[c] > 0) continue;
        uint64_t child_seed = Next();
        pid_t pid = fork();
        if (pid == 0) Child(c + 1, child_seed);
        children[c] = pid;
        break;
      }
    }
  }
  racer_stop = 1;
  if (racing) pthread_join(racer, NULL);
  failed |= Reap(1);
  char buf[200];
  for (int op = 0; op < kOpCount; op++) {
    uint32_t total = 0;
    for (int e = 0; e < kErrnoMax; e++) total += results[op][e];
    if (total == 0) continue;
    snprintf(buf, sizeof(buf), "%-11s %6u:", kOpNames[op], total);
    Out(buf);
    for (int e = 0; e < kErrnoMax; e++) {
      if (!results[op][e]) continue;
      const char* name = e ? strerrorname_np(e) : "ok";
      snprintf(buf, sizeof(buf), " %s %u", name ? name : "?", results[op][e]);
      Out(buf);
    }
    Out("\n");
  }
  return failed || progress->impossible ? 1 : 0;
}

// ---- the supervising parent ----

static void Usage(const char* argv0) {
  fprintf(stderr, "usage: %s [-s SEED] [-n COUNT] [-t TIMEOUT_SECONDS] [-v]\n", argv0);
  exit(2);
}

static void RemoveTmpdir(void) {
  DIR* d = opendir(tmpdir);
  if (d) {
    struct dirent* e;
    while ((e = readdir(d)) != NULL) {
      if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) unlinkat(dirfd(d), e->d_name, 0);
    }
    closedir(d);
  }
  rmdir(tmpdir);
}

int main(int argc, char** argv) {
  uint64_t seed = (uint64_t)time(NULL);
  long count = 100000;
  unsigned timeout = 1200;
  int opt;
  while ((opt = getopt(argc, argv, "s:n:t:v")) != -1) {
    switch (opt) {
      case 's': seed = strtoull(optarg, NULL, 0); break;
      case 'n': count = strtol(optarg, NULL, 0); break;
      case 't': timeout = (unsigned)strtoul(optarg, NULL, 0); break;
      case 'v': verbose = 1; break;
      default: Usage(argv[0]);
    }
  }
  if (optind != argc || count < 0) Usage(argv[0]);
  printf("socket_fuzz: seed %llu, %ld calls\n", (unsigned long long)seed, count);
  fflush(stdout);
  snprintf(tmpdir, sizeof(tmpdir), "/tmp/socket_fuzz.XXXXXX");
  if (!mkdtemp(tmpdir)) {
    perror("socket_fuzz: mkdtemp");
    return 2;
  }
  progress =
      mmap(NULL, sizeof(*progress), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (progress == MAP_FAILED) {
    perror("socket_fuzz: mmap");
    return 2;
  }
  pid_t child = fork();
  if (child < 0) {
    perror("socket_fuzz: fork");
    return 2;
  }
  if (child == 0) _exit(Fuzz(seed, count));

  // Watch: the fuzzer must make progress (no call may hang) and finish within `timeout`.
  int status = 0;
  long last_calls = -1;
  unsigned still = 0, elapsed = 0;
  for (;;) {
    pid_t w = waitpid(child, &status, WNOHANG);
    if (w == child) break;
    if (w < 0) {
      perror("socket_fuzz: waitpid");
      return 2;
    }
    struct timespec tick = {1, 0};
    nanosleep(&tick, NULL);
    elapsed++;
    long calls = progress->calls;
    still = calls == last_calls ? still + 1 : 0;
    last_calls = calls;
    if (still >= kHangSeconds || elapsed >= timeout) {
      printf("socket_fuzz: FAIL: %s after call %ld: %s\n",
             still >= kHangSeconds ? "no progress for 30 s" : "timed out", calls,
             progress->last[0]);
      for (int i = 1; i < kMaxChildren + 2; i++) {
        if (progress->last[i][0]) {
          printf("socket_fuzz:   %s %d was last in %s\n", i <= kMaxChildren ? "child" : "racer", i,
                 progress->last[i]);
        }
      }
      fflush(stdout);
      kill(child, SIGKILL);
      waitpid(child, &status, 0);
      RemoveTmpdir();
      return 1;
    }
  }
  RemoveTmpdir();
  if (WIFSIGNALED(status)) {
    printf("socket_fuzz: FAIL: fuzzer killed by signal %d (%s) in call %ld: %s\n", WTERMSIG(status),
           strsignal(WTERMSIG(status)), progress->calls, progress->last[0]);
    return 1;
  }
  if (WEXITSTATUS(status) != 0) {
    printf("socket_fuzz: FAIL: fuzzer exited with status %d (%ld impossible results)\n",
           WEXITSTATUS(status), progress->impossible);
    return 1;
  }
  printf("socket_fuzz: done %ld calls\n", progress->calls);
  return 0;
}
