#include "runtime-shim/confine.h"

#include <fcntl.h>
#include <sched.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace sentry::shim {
namespace {

// Which configurations need a call: the default one, or only --net=host.
enum class Need { kAlways, kNetHost, kControl, kDirect };

// One entry of the allowlist. `only` lists the argument patterns the call is allowed with
// (any one of them; each pattern's comparisons all hold); empty: any arguments.
struct Allowed {
  const char* name;
  Need need;
  const char* reason;
  std::vector<std::vector<scmp_arg_cmp>> only = {};
};

// The flags glibc's pthread_create passes to clone: a thread, never a process or a namespace.
constexpr scmp_datum_t kThreadFlags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
                                      CLONE_THREAD | CLONE_SYSVSEM | CLONE_SETTLS |
                                      CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID;

std::vector<scmp_arg_cmp> Arg(unsigned arg, scmp_datum_t value) {
  return {scmp_arg_cmp{arg, SCMP_CMP_EQ, value, 0}};
}
std::vector<scmp_arg_cmp> ArgMasked(unsigned arg, scmp_datum_t mask, scmp_datum_t value) {
  return {scmp_arg_cmp{arg, SCMP_CMP_MASKED_EQ, mask, value}};
}
// Arguments equal to values, and (if `type_is` is set) arg 1 a socket type of that kind
// whatever its SOCK_NONBLOCK / SOCK_CLOEXEC flags.
std::vector<scmp_arg_cmp> Args(std::vector<std::pair<unsigned, scmp_datum_t>> eq,
                               std::optional<scmp_datum_t> type_is = std::nullopt) {
  std::vector<scmp_arg_cmp> v;
  for (auto [arg, value] : eq) v.push_back(scmp_arg_cmp{arg, SCMP_CMP_EQ, value, 0});
  if (type_is) v.push_back(scmp_arg_cmp{1, SCMP_CMP_MASKED_EQ, 0xf, *type_is});
  return v;
}
constexpr scmp_datum_t kDgram = SOCK_DGRAM;

// Direct file access: argument `arg` is an fd (0..INT_MAX), never AT_FDCWD. The kernel reads
// a dirfd as an int, the low 32 bits of the register, and glibc leaves the high ones zero
// (AT_FDCWD arrives as 0x00000000ffffff9c): so the test is on bit 31 alone, whatever the
// high half holds.
constexpr scmp_datum_t kLow32 = 0xffffffffu;
scmp_arg_cmp RealFd(unsigned arg) { return scmp_arg_cmp{arg, SCMP_CMP_MASKED_EQ, 0x80000000u, 0}; }
scmp_arg_cmp HasFlag(unsigned arg, scmp_datum_t flag) {
  return scmp_arg_cmp{arg, SCMP_CMP_MASKED_EQ, flag, flag};
}

// The allowlist. Every entry says why the Sentry needs it; keep it that way. A call is here
// because the Sentry was seen making it (strace, or SENTRY_SECCOMP_LOG, docs/security.md)
// over the test suites on both platforms.
const std::vector<Allowed>& Allowlist() {
  static const auto* list = new std::vector<Allowed>{
      // Memory of the Sentry itself. No executable mapping is made after start-up.
      {"mmap", Need::kAlways, "malloc, thread stacks, the memory file's mappings",
       {ArgMasked(2, PROT_EXEC, 0)}},
      {"munmap", Need::kAlways, "free, thread exit, the memory file's mappings"},
      {"mprotect", Need::kAlways, "thread stack guard pages; never PROT_EXEC",
       {ArgMasked(2, PROT_EXEC, 0)}},
      {"madvise", Need::kAlways, "malloc trimming, freed thread stacks"},
      {"brk", Need::kAlways, "malloc's main arena"},
      // Threads, time and waiting.
      {"clone", Need::kAlways, "a Sentry thread per guest thread; thread flags only",
       {Arg(0, kThreadFlags)}},
      {"futex", Need::kAlways, "absl::Mutex, condition variables, thread joins"},
      {"sched_getparam", Need::kAlways,
       "absl::Mutex reads a waiting thread's priority (pthread_getschedparam) now and then"},
      {"sched_getscheduler", Need::kAlways, "absl::Mutex, with sched_getparam"},
      {"rseq", Need::kAlways,
       "glibc, at every new thread (a failure is fatal once the main thread has one)"},
      {"exit", Need::kAlways, "thread exit"},
      {"exit_group", Need::kAlways, "the sandbox's exit"},
      {"sched_yield", Need::kAlways, "the guest's sched_yield; spinning waits"},
      {"sched_setaffinity", Need::kAlways, "the seccomp platform puts a thread next to its stub"},
      {"sched_getaffinity", Need::kAlways,
       "glibc's get_nprocs (malloc's arena count) once /sys is out of reach"},
      {"membarrier", Need::kAlways, "the guest's membarrier: the host's covers its stubs"},
      {"clock_gettime", Need::kAlways, "clocks the vDSO does not serve (CPU-time clocks)"},
      {"clock_nanosleep", Need::kAlways, "timers and sleeps of Sentry threads"},
      {"restart_syscall", Need::kAlways,
       "the kernel's restart of a sleep or a timed poll that an ignored signal (SIGCHLD of an "
       "orphaned stub) interrupted"},
      {"sysinfo", Need::kAlways, "the guest's sysinfo and /proc/meminfo (host memory)"},
      {"getrandom", Need::kAlways, "the guest's getrandom, AT_RANDOM and /dev/urandom"},
      {"prlimit64", Need::kAlways, "the Sentry's own limits (host_limits.cc; OCI: no core)",
       {Arg(0, 0)}},
      // Identity and signals of the Sentry.
      {"getpid", Need::kAlways, "interrupting a Sentry thread (tgkill); abort()"},
      {"gettid", Need::kAlways, "interrupting a Sentry thread; logging"},
      {"rt_sigaction", Need::kAlways, "the terminal relay's SIGWINCH; the OCI init's exit"},
      {"rt_sigprocmask", Need::kAlways, "signal masks around thread creation and waits"},
      {"rt_sigreturn", Need::kAlways, "return from the Sentry's signal handlers"},
      {"tgkill", Need::kAlways, "kicking a Sentry thread out of a blocking host call"},
      // Driving stubs.
      {"ptrace", Need::kAlways, "tracing stubs: registers, resuming, injected calls"},
      {"wait4", Need::kAlways, "ptrace stops and deaths of stubs; the gofer's exit"},
      {"kill", Need::kAlways, "SIGKILL and SIGSTOP to stubs; SIGKILL to the gofer"},
      {"process_vm_readv", Need::kAlways, "reading guest memory (the only doorway)"},
      {"process_vm_writev", Need::kAlways, "writing guest memory (the only doorway)"},
      {"pidfd_open", Need::kAlways, "a guest stub's death, seen by poll; pidfd_getfd"},
      {"pidfd_getfd", Need::kAlways, "taking a guest stub's seccomp listener"},
      {"ioctl", Need::kAlways,
       "seccomp notifications; the caller's terminal (size, modes); host socket queues",
       {Arg(1, SECCOMP_IOCTL_NOTIF_RECV), Arg(1, SECCOMP_IOCTL_NOTIF_SEND),
        Arg(1, SECCOMP_IOCTL_NOTIF_ADDFD), Arg(1, SECCOMP_IOCTL_NOTIF_ID_VALID),
        Arg(1, TCGETS), Arg(1, TCSETS), Arg(1, TCSETSW), Arg(1, TCSETSF), Arg(1, TIOCGWINSZ),
        Arg(1, FIONREAD), Arg(1, TIOCOUTQ)}},
      // Files the Sentry holds: the gofer's donated fds, its memory files, stdio, pipes.
      {"read", Need::kAlways, "host files, stdio, eventfds"},
      {"write", Need::kAlways, "stdio, logs, eventfds"},
      {"pread64", Need::kAlways, "files the gofer donated; the memory file"},
      {"pwrite64", Need::kAlways, "files the gofer donated; the memory file"},
      {"lseek", Need::kAlways, "files the gofer donated (SEEK_DATA/HOLE, sizes)"},
      {"newfstatat", Need::kAlways,
       "fstat (glibc's) of a held fd; res_ninit's stat of /etc/resolv.conf"},
      {"fcntl", Need::kAlways, "status flags of stdio and host sockets"},
      {"close", Need::kAlways, "every fd the Sentry drops"},
      {"fsync", Need::kAlways, "the guest's fsync and fdatasync of a file the gofer donated"},
      {"ftruncate", Need::kAlways, "sizing the memory files behind tmpfs and shared memory"},
      {"fallocate", Need::kAlways, "punching holes in the memory files"},
      {"memfd_create", Need::kAlways, "the memory files behind tmpfs and shared memory"},
      {"eventfd2", Need::kAlways, "waking a Sentry thread that waits for a guest stub"},
      {"poll", Need::kAlways, "waiting for a guest stub, its death, or the terminal"},
      {"socketpair", Need::kAlways, "the fd channel of a new address space (AF_UNIX)",
       {Arg(0, AF_UNIX)}},
      {"sendmsg", Need::kAlways, "the gofer protocol; lending fds to stubs"},
      {"recvmsg", Need::kAlways, "the gofer protocol; draining stub channels"},
      // --net=host: the guest's connections leave through host sockets; DNS through
      // res_nquery.
      // TCP and UDP sockets with protocol 0 (what HostLink and glibc's resolver pass), and
      // ICMP echo ("ping") sockets, SOCK_DGRAM only: a raw socket stays impossible.
      {"socket", Need::kNetHost,
       "host sockets for the guest's connections, datagrams, echoes (ping) and DNS",
       {Args({{0, AF_INET}, {2, 0}}), Args({{0, AF_INET6}, {2, 0}}),
        Args({{0, AF_INET}, {2, IPPROTO_ICMP}}, kDgram),
        Args({{0, AF_INET6}, {2, IPPROTO_ICMPV6}}, kDgram)}},
      {"connect", Need::kNetHost, "the guest's connections; DNS"},
      {"bind", Need::kNetHost, "--publish: the host port of a published guest listener"},
      {"listen", Need::kNetHost, "--publish: the host port of a published guest listener"},
      {"accept", Need::kNetHost, "connections to the guest's listening host sockets"},
      {"shutdown", Need::kNetHost, "the guest's shutdown"},
      {"sendto", Need::kNetHost, "the guest's datagrams; DNS queries"},
      {"recvfrom", Need::kNetHost, "the guest's datagrams; DNS answers"},
      {"setsockopt", Need::kNetHost, "the guest's socket options"},
      {"getsockopt", Need::kNetHost, "the guest's socket options; SO_ERROR of a connect"},
      {"getsockname", Need::kNetHost, "the guest's getsockname"},
      {"epoll_create1", Need::kNetHost, "waiting for host sockets"},
      {"epoll_ctl", Need::kNetHost, "waiting for host sockets"},
      {"epoll_wait", Need::kNetHost, "waiting for host sockets"},
      {"uname", Need::kNetHost, "res_ninit (the host's name for DNS)"},
      // An OCI container's control socket (runtime-shim/oci/control.h): exec, pause, resume.
      {"accept4", Need::kControl, "a connection to the container's control socket"},
      // Direct file access (gofer/client.h: GoDirect): the calls of the gofer's request
      // handlers (gofer/server_*.cc) that read, which name a host file only relative to a
      // directory fd they hold, one component at a time. Never AT_FDCWD; never following a
      // symlink where the call has a flag for it. (newfstatat, fstat, lseek, ftruncate and
      // fcntl are above.) Every change to the host file system (mkdirat, unlinkat,
      // renameat2, linkat, symlinkat, mknodat, fchownat, fchmodat, utimensat, fsetxattr...)
      // is made by the gofer on fds the Sentry lends it (gofer/lend.cc): none is here.
      {"openat", Need::kDirect, "direct files: walk, open, create; O_NOFOLLOW only",
       {{RealFd(0), HasFlag(2, O_NOFOLLOW)}}},
      {"statx", Need::kDirect, "direct files: attributes, mount ids; AT_SYMLINK_NOFOLLOW only",
       {{RealFd(0), HasFlag(2, AT_SYMLINK_NOFOLLOW)}}},
      {"getdents64", Need::kDirect, "direct files: directory listings"},
      {"fstatfs", Need::kDirect, "direct files: statfs, the submount policy"},
      {"readlinkat", Need::kDirect, "direct files: readlink", {{RealFd(0)}}},
      {"fgetxattr", Need::kDirect, "direct files: getxattr"},
      {"flistxattr", Need::kDirect, "direct files: listxattr"},
  };
  return *list;
}

// Filled before the filter is installed: the SIGSYS handler may not allocate.
const char* const* g_names = nullptr;
constexpr int kMaxNr = 512;

void OnSigsys(int, siginfo_t* info, void*) {
  int nr = info->si_syscall;
  const char* name = nr >= 0 && nr < kMaxNr && g_names[nr] ? g_names[nr] : "?";
  char num[16];
  int len = 0;
  char digits[16];
  unsigned v = static_cast<unsigned>(nr);
  do {
    digits[len++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  for (int i = 0; i < len; i++) num[i] = digits[len - 1 - i];
  auto put = [](const char* s, size_t n) { (void)!write(STDERR_FILENO, s, n); };
  const char head[] = "sentry: the Sentry made host system call ";
  const char tail[] =
      ", which is not on its allowlist (runtime-shim/confine.cc); aborting\n";
  put(head, sizeof(head) - 1);
  put(name, strlen(name));
  put(" (", 2);
  put(num, len);
  put(")", 1);
  put(tail, sizeof(tail) - 1);
  abort();
}

absl::Status InstallTrapHandler() {
  auto* names = new const char*[kMaxNr]();
  for (int nr = 0; nr < kMaxNr; nr++) {
    names[nr] = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);  // kept for good
  }
  g_names = names;
  struct sigaction sa {};
  sa.sa_sigaction = OnSigsys;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGSYS, &sa, nullptr) != 0) {
    return absl::InternalError(std::string("sigaction(SIGSYS): ") + strerror(errno));
  }
  return absl::OkStatus();
}

bool Wanted(const Allowed& a, const ConfineOptions& opts) {
  return a.need == Need::kAlways || (a.need == Need::kNetHost && opts.net_host) ||
         (a.need == Need::kControl && opts.control_socket) ||
         (a.need == Need::kDirect && opts.direct_files);
}

absl::Status Fail(const std::string& what, int err) {
  return absl::InternalError("Sentry confinement: " + what + ": " + strerror(err));
}

}  // namespace

absl::StatusOr<SentryFilter> CompileSentryFilter(const ConfineOptions& opts) {
  // SENTRY_SECCOMP_LOG (a developer's tool, docs/security.md): =1 allows the calls outside
  // the list and has the host kernel log them (dmesg, audit type 1326) instead of killing;
  // =all installs a filter that allows everything, whose seccomp() call marks the end of
  // start-up in a `perf trace` of the Sentry.
  const char* log_mode = getenv("SENTRY_SECCOMP_LOG");
  bool log = log_mode != nullptr && *log_mode != '\0';
  bool log_all = log && strcmp(log_mode, "all") == 0;
  uint32_t deny = log_all      ? SCMP_ACT_ALLOW
                  : log        ? SCMP_ACT_LOG
                  : opts.debug ? SCMP_ACT_TRAP
                               : SCMP_ACT_KILL_PROCESS;
  scmp_filter_ctx ctx = seccomp_init(deny);
  if (ctx == nullptr) return Fail("seccomp_init", ENOMEM);
  int memfd = -1;
  auto release = [&](absl::Status st) {
    seccomp_release(ctx);
    if (memfd >= 0) close(memfd);
    return st;
  };
  int err = 0;
  // glibc tries clone3 first for a new thread; its arguments sit in memory, out of a
  // filter's sight, so it is answered ENOSYS and glibc falls back to clone, whose flags
  // the filter checks.
  if (!log_all) err = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
  if (err != 0) return release(Fail("clone3", -err));
  // glibc registers each new thread's robust-futex list, and carries on without it (the
  // Sentry shares no robust mutex with another process): it answers ENOSYS.
  if (!log_all) {
    err = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(set_robust_list), 0);
  }
  if (err != 0) return release(Fail("set_robust_list", -err));
  // The Sentry's root is an empty tmpfs (namespaces.h) and the host files it reads were
  // opened before: an open by path finds nothing. glibc still tries a few (the resolver's
  // /etc/resolv.conf, tzset's /etc/localtime); they get the ENOENT the empty root would give.
  // With direct file access, that is an open relative to AT_FDCWD; the allowlist has the
  // opens relative to a held directory, and any other openat kills.
  if (!log_all && opts.direct_files) {
    err = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOENT), SCMP_SYS(openat), 1,
                           SCMP_A0(SCMP_CMP_MASKED_EQ, kLow32, static_cast<uint32_t>(AT_FDCWD)));
  } else if (!log_all) {
    err = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOENT), SCMP_SYS(openat), 0);
  }
  if (err != 0) return release(Fail("openat", -err));
  for (const Allowed& a : Allowlist()) {
    if (log_all || !Wanted(a, opts)) continue;
    int nr = seccomp_syscall_resolve_name(a.name);
    if (nr == __NR_SCMP_ERROR) return release(Fail(std::string("unknown call ") + a.name, EINVAL));
    if (a.only.empty()) {
      err = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, 0, nullptr);
    }
    for (const auto& cmp : a.only) {
      err = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, cmp.size(), cmp.data());
      if (err != 0) break;
    }
    if (err != 0) return release(Fail(std::string("rule for ") + a.name, -err));
  }
  // The host kernel skips the program for a call it allows whatever the arguments (its
  // per-filter action cache); a call with argument rules runs it, down a list libseccomp
  // orders by rule count, which put ioctl, the seccomp platform's two calls per guest
  // syscall, last of ~60. The calls with argument rules that the Sentry makes often come
  // first, in this order.
  static constexpr const char* kHotFirst[] = {"ioctl", "openat", "statx", "mmap", "mprotect"};
  for (size_t i = 0; i < std::size(kHotFirst) && !log_all; i++) {
    err = seccomp_syscall_priority(ctx, seccomp_syscall_resolve_name(kHotFirst[i]),
                                   static_cast<uint8_t>(255 - i));
    if (err != 0) return release(Fail(std::string("priority of ") + kHotFirst[i], -err));
  }
  // libseccomp writes the program to an fd; it is read back here and loaded by
  // ConfineSentry, maybe on another thread than this one.
  memfd = static_cast<int>(syscall(SYS_memfd_create, "sentry-allowlist", MFD_CLOEXEC));
  if (memfd < 0) return release(Fail("memfd_create", errno));
  err = seccomp_export_bpf(ctx, memfd);
  if (err != 0) return release(Fail("seccomp_export_bpf", -err));
  struct stat st {};
  if (fstat(memfd, &st) != 0) return release(Fail("fstat", errno));
  if (st.st_size <= 0 || st.st_size % sizeof(sock_filter) != 0 ||
      st.st_size / sizeof(sock_filter) > BPF_MAXINSNS) {
    return release(Fail("seccomp_export_bpf", EINVAL));
  }
  SentryFilter filter;
  filter.opts = opts;
  filter.program.resize(st.st_size / sizeof(sock_filter));
  if (pread(memfd, filter.program.data(), st.st_size, 0) != st.st_size) {
    return release(Fail("reading the exported filter", errno ? errno : EIO));
  }
  (void)release(absl::OkStatus());
  return filter;
}

absl::Status ConfineSentry(const ConfineOptions& opts, const SentryFilter* compiled) {
  // The stubs are separate executables, unaffected: the Sentry still traces them.
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return Fail("PR_SET_DUMPABLE", errno);
  const char* log_mode = getenv("SENTRY_SECCOMP_LOG");
  bool log = log_mode != nullptr && *log_mode != '\0';
  if (log) {
    fprintf(stderr,
            "sentry: WARNING: SENTRY_SECCOMP_LOG=%s: the Sentry's allowlist %s; for finding "
            "missing entries only\n",
            log_mode,
            strcmp(log_mode, "all") == 0 ? "allows everything" : "logs what it should kill");
  }
  if (!log && opts.debug) {
    absl::Status st = InstallTrapHandler();
    if (!st.ok()) return st;
  }
  std::optional<SentryFilter> own;
  if (compiled == nullptr || !(compiled->opts == opts)) {
    auto f = CompileSentryFilter(opts);
    if (!f.ok()) return f.status();
    own = std::move(*f);
    compiled = &*own;
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return Fail("PR_SET_NO_NEW_PRIVS", errno);
  struct sock_fprog prog {};
  prog.len = static_cast<unsigned short>(compiled->program.size());
  prog.filter = const_cast<sock_filter*>(compiled->program.data());
  // On every thread at once; a positive result names a thread that could not take it.
  long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
  if (r < 0) return Fail("seccomp(SET_MODE_FILTER, TSYNC)", errno);
  if (r > 0) {
    return Fail("seccomp(TSYNC): thread " + std::to_string(r) + " not synchronized", EBUSY);
  }
  return absl::OkStatus();
}

void PrintAllowlist(FILE* out) {
  int always = 0, net = 0, control = 0, direct = 0;
  for (const Allowed& a : Allowlist()) {
    const char* mode = a.need == Need::kAlways    ? ""
                       : a.need == Need::kNetHost ? " [--net=host]"
                       : a.need == Need::kDirect  ? " [--file-access=direct, the default]"
                                                  : " [OCI containers]";
    const char* args = a.only.empty() ? "" : " [some arguments only]";
    fprintf(out, "%-20s %s%s%s\n", a.name, a.reason, args, mode);
    bool by_default = a.need == Need::kAlways || a.need == Need::kDirect;
    (by_default ? always : a.need == Need::kNetHost ? net : control)++;
    direct += a.need == Need::kDirect;
  }
  fprintf(out,
          "%d host system calls in the default configuration, %d more with --net=host, %d "
          "more in an OCI container; %d fewer with --file-access=gofer; clone3 and "
          "set_robust_list answer ENOSYS and openat relative to AT_FDCWD ENOENT; any other call "
          "kills the Sentry\n",
          always, net, control, direct);
}

void WarnUnconfined(const char* who) {
  fprintf(stderr,
          "%s: WARNING: --unsafe-no-confinement: the Sentry and the gofer run WITHOUT their "
          "seccomp allowlists and namespaces; a bug in them is a bug on the host. For "
          "debugging only.\n",
          who);
}

}  // namespace sentry::shim
