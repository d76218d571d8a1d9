// Churn for syscall_fuzz -c: while the main thread fuzzes, other threads and a helper process
// keep the kernel busy in the ways a fuzz loop alone does not:
//
//  - mmap churn: a thread maps, fills, protects, moves (mremap), shares (a memfd mapped twice)
//    and drops (MADV_DONTNEED) pages in a region of its own, and checks every byte it reads
//    back: a wrong byte means the kernel (the Sentry's VMA bookkeeping) lost or mixed pages;
//  - threads: a thread starts and joins short-lived threads, each of which blocks briefly
//    (futex wait, poll, nanosleep) so that signals find it inside a syscall;
//  - signals during syscalls: a thread sends real-time signals to every churn thread and to
//    the fuzzing thread, one handler with SA_RESTART, one without, every ~200 us;
//  - fds passed between processes: a thread sends pipes, eventfds, memfds, epoll fds and unix
//    sockets (itself included, so that some stay in flight in a cycle) over an AF_UNIX
//    socketpair with SCM_RIGHTS to a forked helper, which checks each, closes some and sends
//    others back with fds of its own; received fds are checked with fstat.
//
// The churn keeps its fds at 300 and above and its memory in its own reservation, where the
// fuzzer's generators never reach. A failed check prints `churn: FAIL ...` on the saved stdout
// and aborts, which the fuzzer's parent reports as a crash. Timing decides the interleaving, so
// a seed does not replay a churn run exactly; it fixes the churn's own choices.
#define _GNU_SOURCE
#include "syscall_fuzz_churn.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { kFdBase = 300, kSlots = 16, kSlotPages = 16, kMaxTids = 8 };
#define kPageSize 4096ul

static atomic_int stop;
static int out_fd = 2;
static pthread_t threads[4];
static int thread_count;
static pid_t helper = -1;
static int sock = -1;  // our end of the socketpair to the helper
static atomic_int tids[kMaxTids];
static atomic_long n_maps, n_sent, n_received, n_signals_sent, n_handled, n_threads;

static void Fail(const char* what) {
  char buf[256];
  snprintf(buf, sizeof(buf), "churn: FAIL: %s (errno %d)\n", what, errno);
  if (write(out_fd, buf, strlen(buf)) < 0) abort();
  abort();
}

// Each thread's own random numbers (splitmix64).
static uint64_t Rand(uint64_t* s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Moves fd to kFdBase or above, out of the fuzzer's reach.
static int High(int fd) {
  if (fd < 0 || fd >= kFdBase) return fd;
  int high = fcntl(fd, F_DUPFD_CLOEXEC, kFdBase);
  close(fd);
  return high;
}

static void RegisterTid(void) {
  int tid = (int)syscall(SYS_gettid);
  for (int i = 0; i < kMaxTids; i++) {
    int zero = 0;
    if (atomic_compare_exchange_strong(&tids[i], &zero, tid)) return;
  }
}

static void UnregisterTid(void) {
  int tid = (int)syscall(SYS_gettid);
  for (int i = 0; i < kMaxTids; i++) {
    int mine = tid;
    if (atomic_compare_exchange_strong(&tids[i], &mine, 0)) return;
  }
}

static void OnSignal(int sig) {
  (void)sig;
  atomic_fetch_add(&n_handled, 1);
}

// ---- mmap churn ----

static uint8_t Pattern(uintptr_t slot, size_t page, uint8_t gen) {
  return (uint8_t)(slot * 31 + page * 7 + gen);
}

static void FillAndCheck(uint8_t* p, uintptr_t slot, uint8_t gen, int check_only) {
  for (size_t pg = 0; pg < kSlotPages; pg++) {
    uint8_t want = Pattern(slot, pg, gen);
    if (check_only) {
      if (p[pg * kPageSize] != want || p[pg * kPageSize + kPageSize - 1] != want)
        Fail("mmap churn: a page lost its contents");
    } else {
      memset(p + pg * kPageSize, want, kPageSize);
    }
  }
}

static void* MmapChurn(void* arg) {
  uint64_t rng = (uint64_t)(uintptr_t)arg;
  RegisterTid();
  size_t slot_size = kSlotPages * kPageSize;
  uint8_t* region =
      mmap(NULL, kSlots * slot_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (region == MAP_FAILED) Fail("mmap churn: reserve");
  int memfd = High((int)syscall(SYS_memfd_create, "churn", 0));
  if (memfd < 0 || ftruncate(memfd, (off_t)slot_size) != 0) Fail("mmap churn: memfd");
  uint8_t gens[kSlots] = {0};
  int used[kSlots] = {0};
  while (!atomic_load(&stop)) {
    uintptr_t s = Rand(&rng) % kSlots, t = Rand(&rng) % kSlots;
    uint8_t* p = region + s * slot_size;
    uint8_t* q = region + t * slot_size;
    switch (Rand(&rng) % 6) {
      case 0:  // map and fill
        if (mmap(p, slot_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
                 0) != p)
          Fail("mmap churn: map");
        gens[s]++;
        FillAndCheck(p, s, gens[s], 0);
        used[s] = 1;
        break;
      case 1:  // read-only, then check
        if (!used[s]) break;
        if (mprotect(p, slot_size, PROT_READ) != 0) Fail("mmap churn: mprotect");
        FillAndCheck(p, s, gens[s], 1);
        if (mprotect(p, slot_size, PROT_READ | PROT_WRITE) != 0) Fail("mmap churn: mprotect");
        break;
      case 2:  // move s to t; s is reserved again at once
        if (!used[s] || s == t) break;
        if (mremap(p, slot_size, slot_size, MREMAP_MAYMOVE | MREMAP_FIXED, q) != q)
          Fail("mmap churn: mremap");
        if (mmap(p, slot_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
                 -1, 0) != p)
          Fail("mmap churn: re-reserve");
        // The contents follow the pages: t now holds s's pattern.
        for (size_t pg = 0; pg < kSlotPages; pg++) {
          if (q[pg * kPageSize] != Pattern(s, pg, gens[s])) Fail("mmap churn: mremap lost data");
        }
        used[s] = 0;
        used[t] = 0;  // its pattern is s's, not its own: refill before the next check
        break;
      case 3:  // the same memfd page seen through two shared mappings
        if (s == t) break;
        if (mmap(p, slot_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, memfd, 0) != p ||
            mmap(q, slot_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, memfd, 0) != q)
          Fail("mmap churn: shared map");
        p[5] = (uint8_t)Rand(&rng);
        if (q[5] != p[5]) Fail("mmap churn: two shared mappings disagree");
        used[s] = used[t] = 0;
        break;
      case 4:  // dropped private pages read back as zeros
        if (!used[s]) break;
        if (madvise(p, slot_size, MADV_DONTNEED) != 0) Fail("mmap churn: madvise");
        if (p[0] != 0 || p[slot_size - 1] != 0) Fail("mmap churn: DONTNEED kept data");
        used[s] = 0;
        break;
      default:  // give the slot back (as a reservation)
        if (mmap(p, slot_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
                 -1, 0) != p)
          Fail("mmap churn: release");
        used[s] = 0;
    }
    atomic_fetch_add(&n_maps, 1);
  }
  munmap(region, kSlots * slot_size);
  close(memfd);
  UnregisterTid();
  return NULL;
}

// ---- thread churn: short-lived threads that block briefly ----

static void* Blocker(void* arg) {
  uint64_t rng = (uint64_t)(uintptr_t)arg;
  RegisterTid();
  int word = 0;
  struct timespec ms = {0, 1000000};
  for (int i = 0; i < 4; i++) {
    switch (Rand(&rng) % 3) {
      case 0: syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &ms, NULL, 0); break;
      case 1: poll(NULL, 0, 1); break;
      default: nanosleep(&ms, NULL);
    }
  }
  UnregisterTid();
  return NULL;
}

static void* ThreadChurn(void* arg) {
  uint64_t rng = (uint64_t)(uintptr_t)arg;
  RegisterTid();
  while (!atomic_load(&stop)) {
    pthread_t t[2];
    int made = 0;
    for (int i = 0; i < 2; i++) {
      if (pthread_create(&t[made], NULL, Blocker, (void*)(uintptr_t)Rand(&rng)) == 0) made++;
    }
    for (int i = 0; i < made; i++) pthread_join(t[i], NULL);
    atomic_fetch_add(&n_threads, made);
  }
  UnregisterTid();
  return NULL;
}

// ---- signals during syscalls ----

static void InstallHandlers(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = OnSignal;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGRTMIN + 1, &sa, NULL);
  sa.sa_flags = 0;
  sigaction(SIGRTMIN + 2, &sa, NULL);
}

static void* Signaller(void* arg) {
  uint64_t rng = (uint64_t)(uintptr_t)arg;
  pid_t pid = getpid();
  struct timespec pause = {0, 200000};
  for (long n = 0; !atomic_load(&stop); n++) {
    // The fuzzer's rt_sigaction may set them to SIG_IGN, which would make them harmless.
    if (n % 256 == 0) InstallHandlers();
    int tid = atomic_load(&tids[Rand(&rng) % kMaxTids]);
    int sig = SIGRTMIN + 1 + (int)(Rand(&rng) % 2);
    if (tid != 0 && syscall(SYS_tgkill, pid, tid, sig) == 0) atomic_fetch_add(&n_signals_sent, 1);
    nanosleep(&pause, NULL);
  }
  return NULL;
}

// ---- fds passed between processes ----

// Sends up to 3 fds with SCM_RIGHTS; returns how many went.
static int SendFds(int s, const int* fds, int n) {
  char byte = 'f';
  struct iovec iov = {&byte, 1};
  union {
    struct cmsghdr align;
    char buf[CMSG_SPACE(3 * sizeof(int))];
  } u;
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
  if (n > 0) {
    msg.msg_control = u.buf;
    msg.msg_controllen = CMSG_SPACE((size_t)n * sizeof(int));
    struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN((size_t)n * sizeof(int));
    memcpy(CMSG_DATA(c), fds, (size_t)n * sizeof(int));
  }
  return sendmsg(s, &msg, MSG_DONTWAIT | MSG_NOSIGNAL) == 1 ? n : 0;
}

// Receives one message; its fds (checked with fstat) go to out[], at most 3. -1: none waiting,
// -2: the stop byte or the peer is gone.
static int RecvFds(int s, int* out, int flags) {
  char byte;
  struct iovec iov = {&byte, 1};
  union {
    struct cmsghdr align;
    char buf[CMSG_SPACE(8 * sizeof(int))];
  } u;
  struct msghdr msg = {
      .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf)};
  ssize_t r = recvmsg(s, &msg, MSG_CMSG_CLOEXEC | flags);
  if (r < 0) return errno == EAGAIN || errno == EINTR ? -1 : -2;
  if (r == 0 || byte == 'q') return -2;
  int n = 0;
  for (struct cmsghdr* c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    int count = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
    int fds[8];
    memcpy(fds, CMSG_DATA(c), (size_t)count * sizeof(int));
    for (int i = 0; i < count; i++) {
      struct stat st;
      if (fstat(fds[i], &st) != 0) {
        char what[160];
        snprintf(what, sizeof(what),
                 "fd passing: received fd %d (%d of %d: %d %d %d, in the %s) does not fstat",
                 fds[i], i + 1, count, fds[0], count > 1 ? fds[1] : -1, count > 2 ? fds[2] : -1,
                 helper == 0 ? "helper" : "fuzzer");
        Fail(what);
      }
      if (n < 3) {
        out[n++] = High(fds[i]);
      } else {
        close(fds[i]);
      }
    }
  }
  return n;
}

// A new fd of a random kind, at kFdBase or above.
static int MakeFd(uint64_t* rng, int s) {
  int p[2];
  switch (Rand(rng) % 6) {
    case 0: {
      if (pipe2(p, O_NONBLOCK | O_CLOEXEC) != 0) return -1;
      int keep = (int)(Rand(rng) % 2);
      close(p[1 - keep]);
      return High(p[keep]);
    }
    case 1: return High(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    case 2: return High((int)syscall(SYS_memfd_create, "passed", MFD_CLOEXEC));
    case 3: return High(epoll_create1(EPOLL_CLOEXEC));
    case 4:
      if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, p) != 0) return -1;
      close(p[1]);
      return High(p[0]);
    default: return High(fcntl(s, F_DUPFD_CLOEXEC, kFdBase));  // the socket itself: a cycle
  }
}

// The helper: returns some fds, closes others, adds its own, until the stop byte.
static void HelperMain(int s, uint64_t rng) {
  for (;;) {
    struct pollfd pfd = {s, POLLIN, 0};
    poll(&pfd, 1, 50);
    int got[3];
    int n = RecvFds(s, got, MSG_DONTWAIT);
    if (n == -2) _exit(0);
    if (n < 0) continue;
    int back[3], nb = 0;
    for (int i = 0; i < n; i++) {
      if (Rand(&rng) % 2 && nb < 3) back[nb++] = got[i];
    }
    if (nb < 3 && Rand(&rng) % 2) {
      int fd = MakeFd(&rng, s);
      if (fd >= 0) back[nb++] = fd;
    }
    SendFds(s, back, nb);
    for (int i = 0; i < n; i++) close(got[i]);
    for (int i = 0; i < nb; i++) {
      int mine = 1;
      for (int j = 0; j < n; j++) mine &= back[i] != got[j];
      if (mine) close(back[i]);
    }
  }
}

static void* FdPasser(void* arg) {
  uint64_t rng = (uint64_t)(uintptr_t)arg;
  RegisterTid();
  int held[kSlots];
  for (int i = 0; i < kSlots; i++) held[i] = -1;
  while (!atomic_load(&stop)) {
    int fds[3], n = 1 + (int)(Rand(&rng) % 3), made = 0;
    for (int i = 0; i < n; i++) {
      int fd = MakeFd(&rng, sock);
      if (fd >= 0) fds[made++] = fd;
    }
    atomic_fetch_add(&n_sent, SendFds(sock, fds, made));
    for (int i = 0; i < made; i++) close(fds[i]);
    struct pollfd pfd = {sock, POLLIN, 0};
    poll(&pfd, 1, 2);
    int got[3];
    int r = RecvFds(sock, got, MSG_DONTWAIT);
    for (int i = 0; i < r; i++) {
      int slot = (int)(Rand(&rng) % kSlots);
      if (held[slot] >= 0) close(held[slot]);
      held[slot] = got[i];
      atomic_fetch_add(&n_received, 1);
    }
  }
  for (int i = 0; i < kSlots; i++) {
    if (held[i] >= 0) close(held[i]);
  }
  UnregisterTid();
  return NULL;
}

// ---- start and stop ----

int ChurnStart(uint64_t seed, int saved_stdout) {
  out_fd = saved_stdout;
  InstallHandlers();
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) != 0) return -1;
  sock = High(sv[0]);
  int theirs = High(sv[1]);
  uint64_t rng = seed ^ 0x636875726eull;
  helper = fork();
  if (helper < 0) return -1;
  if (helper == 0) {
    close(sock);
    HelperMain(theirs, Rand(&rng));
  }
  close(theirs);
  RegisterTid();  // the fuzzing thread gets signals too
  void* (*fns[])(void*) = {MmapChurn, ThreadChurn, Signaller, FdPasser};
  for (int i = 0; i < 4; i++) {
    if (pthread_create(&threads[thread_count], NULL, fns[i], (void*)(uintptr_t)Rand(&rng)) == 0)
      thread_count++;
  }
  return thread_count == 4 ? 0 : -1;
}

void ChurnStop(char* summary, size_t size) {
  UnregisterTid();
  atomic_store(&stop, 1);
  for (int i = 0; i < thread_count; i++) pthread_join(threads[i], NULL);
  if (helper > 0) {
    char q = 'q';
    send(sock, &q, 1, MSG_NOSIGNAL);
    int status;
    // A fuzzed wait4 may have reaped it already.
    if (waitpid(helper, &status, 0) == helper && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
      Fail("fd passing: the helper did not exit 0");
  }
  close(sock);
  snprintf(summary, size,
           "churn: %ld mmap operations, %ld threads made, %ld signals sent (%ld handled), "
           "%ld fds passed, %ld received\n",
           atomic_load(&n_maps), atomic_load(&n_threads), atomic_load(&n_signals_sent),
           atomic_load(&n_handled), atomic_load(&n_sent), atomic_load(&n_received));
}
