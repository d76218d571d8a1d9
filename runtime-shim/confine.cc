#include "runtime-shim/confine.h"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace sentry::shim {
namespace {

// Which configurations need a call: the default one, or only --net=host.
enum class Need { kAlways, kNetHost };

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

// The allowlist. Every entry says why the Sentry needs it; keep it that way. A call is here
// because the Sentry was seen making it (strace, or SENTRY_SECCOMP_LOG, docs/security.md)
// over the test suites on both platforms.
const std::vector<Allowed>& Allowlist() {
  static const auto* list = new std::vector<Allowed>{
      // Memory of the Sentry itself (malloc, thread stacks). No executable mapping is made
      // after start-up, so none is allowed.
      {"mmap", Need::kAlways, "malloc, thread stacks, the memory file's mappings",
       {ArgMasked(2, PROT_EXEC, 0)}},
      {"munmap", Need::kAlways, "free, thread exit"},
      {"mprotect", Need::kAlways, "thread stack guard pages", {ArgMasked(2, PROT_EXEC, 0)}},
      {"mremap", Need::kAlways, "realloc of large blocks"},
      {"madvise", Need::kAlways, "malloc trimming, freed thread stacks"},
      {"brk", Need::kAlways, "malloc's main arena"},
      // Threads and waiting.
      {"clone", Need::kAlways, "Sentry threads (one per guest thread); threads only",
       {Arg(0, kThreadFlags)}},
      {"futex", Need::kAlways, "absl::Mutex, condition variables, thread joins"},
      {"set_robust_list", Need::kAlways, "glibc, at every new thread"},
      {"rseq", Need::kAlways, "glibc registers every new thread"},
      {"sched_yield", Need::kAlways, "absl::Mutex spinning, the seccomp platform's wait"},
      {"sched_getaffinity", Need::kAlways, "the seccomp platform's CPU placement"},
      {"sched_setaffinity", Need::kAlways, "the seccomp platform pins a thread with its stub"},
      {"exit", Need::kAlways, "thread exit"},
      {"exit_group", Need::kAlways, "the sandbox's exit"},
      {"nanosleep", Need::kAlways, "guest nanosleep and retry back-off"},
      {"clock_nanosleep", Need::kAlways, "guest sleeps, timers"},
      {"clock_gettime", Need::kAlways, "every clock the guest reads (the vDSO falls back)"},
      {"gettid", Need::kAlways, "logging, thread identity"},
      {"getpid", Need::kAlways, "abort(), logging"},
      // Signals of the Sentry.
      {"rt_sigaction", Need::kAlways, "signal handlers (interrupting a blocked thread)"},
      {"rt_sigprocmask", Need::kAlways, "blocking signals around thread creation"},
      {"rt_sigreturn", Need::kAlways, "return from a signal handler"},
      {"tgkill", Need::kAlways, "interrupting a Sentry thread; abort()"},
      // Driving stubs.
      {"ptrace", Need::kAlways, "tracing stubs: register access, resuming, injected calls"},
      {"wait4", Need::kAlways, "ptrace stops and exits of stubs"},
      {"kill", Need::kAlways, "SIGKILL and SIGSTOP to stubs; signals to the gofer"},
      {"process_vm_readv", Need::kAlways, "reading guest memory"},
      {"process_vm_writev", Need::kAlways, "writing guest memory"},
      {"pidfd_open", Need::kAlways, "a stub's death, seen by poll; pidfd_getfd"},
      {"pidfd_getfd", Need::kAlways, "taking a guest stub's seccomp listener"},
      {"ioctl", Need::kAlways,
       "seccomp notifications; the caller's terminal (size, modes); host socket queues",
       {Arg(1, SECCOMP_IOCTL_NOTIF_RECV), Arg(1, SECCOMP_IOCTL_NOTIF_SEND),
        Arg(1, SECCOMP_IOCTL_NOTIF_ADDFD), Arg(1, SECCOMP_IOCTL_NOTIF_ID_VALID),
        Arg(1, TCGETS), Arg(1, TCSETS), Arg(1, TCSETSW), Arg(1, TCSETSF), Arg(1, TIOCGWINSZ),
        Arg(1, FIONREAD), Arg(1, TIOCOUTQ)}},
      // Files the Sentry holds: gofer-donated host fds, its memory file, stdio, pipes.
      {"read", Need::kAlways, "host files the gofer donated, stdio, pipes, eventfds"},
      {"write", Need::kAlways, "stdio, logs, eventfds, pipes"},
      {"readv", Need::kAlways, "stdio and host files"},
      {"writev", Need::kAlways, "stdio, logs"},
      {"pread64", Need::kAlways, "host files the gofer donated"},
      {"pwrite64", Need::kAlways, "host files the gofer donated"},
      {"preadv", Need::kAlways, "host files the gofer donated"},
      {"pwritev", Need::kAlways, "host files the gofer donated"},
      {"close", Need::kAlways, "every fd the Sentry drops"},
      {"fstat", Need::kAlways, "host files (size, identity of a lent file)"},
      {"lseek", Need::kAlways, "host files"},
      {"fcntl", Need::kAlways, "status flags and close-on-exec of host fds; F_DUPFD"},
      {"ftruncate", Need::kAlways, "the memory file behind tmpfs and shared memory"},
      {"fallocate", Need::kAlways, "punching holes in the memory file"},
      {"memfd_create", Need::kAlways, "memory files for tmpfs and shared mappings"},
      {"eventfd2", Need::kAlways, "waking a thread blocked on a guest stub"},
      {"pipe2", Need::kAlways, "wake-up pipes"},
      {"ppoll", Need::kAlways, "waiting for host fds and stub deaths"},
      {"poll", Need::kAlways, "waiting for host fds"},
      {"epoll_create1", Need::kAlways, "waiting for many host fds"},
      {"epoll_ctl", Need::kAlways, "waiting for many host fds"},
      {"epoll_wait", Need::kAlways, "waiting for many host fds"},
      {"sendmsg", Need::kAlways, "the gofer protocol; lending fds to stubs"},
      {"recvmsg", Need::kAlways, "the gofer protocol; draining stub channels"},
      {"socketpair", Need::kAlways, "a new address space's fd channel",
       {Arg(0, AF_UNIX)}},
      {"getrandom", Need::kAlways, "the guest's getrandom and AT_RANDOM"},
      // --net=host: the guest's connections leave through host sockets.
      {"socket", Need::kNetHost, "host sockets for the guest's connections",
       {Arg(0, AF_INET), Arg(0, AF_INET6)}},
      {"connect", Need::kNetHost, "the guest's outgoing connections"},
      {"bind", Need::kNetHost, "the guest's bound sockets"},
      {"listen", Need::kNetHost, "the guest's listening sockets"},
      {"accept4", Need::kNetHost, "the guest's listening sockets"},
      {"getsockname", Need::kNetHost, "the guest's getsockname"},
      {"getpeername", Need::kNetHost, "the guest's getpeername"},
      {"setsockopt", Need::kNetHost, "the guest's socket options"},
      {"getsockopt", Need::kNetHost, "the guest's socket options; SO_ERROR of a connect"},
      {"sendto", Need::kNetHost, "the guest's datagrams"},
      {"recvfrom", Need::kNetHost, "the guest's datagrams"},
      {"shutdown", Need::kNetHost, "the guest's shutdown"},
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
  return a.need == Need::kAlways || (a.need == Need::kNetHost && opts.net_host);
}

absl::Status Fail(const std::string& what, int err) {
  return absl::InternalError("Sentry confinement: " + what + ": " + strerror(err));
}

}  // namespace

absl::Status ConfineSentry(const ConfineOptions& opts) {
  // SENTRY_SECCOMP_LOG (a developer's tool, docs/security.md): =1 allows the calls outside
  // the list and has the host kernel log them (dmesg, audit type 1326) instead of killing;
  // =all installs a filter that allows everything, whose seccomp() call marks the end of
  // start-up in a `perf trace` of the Sentry.
  const char* log_mode = getenv("SENTRY_SECCOMP_LOG");
  bool log = log_mode != nullptr && *log_mode != '\0';
  bool log_all = log && strcmp(log_mode, "all") == 0;
  uint32_t deny = log_all ? SCMP_ACT_ALLOW
                  : log   ? SCMP_ACT_LOG
                  : opts.debug ? SCMP_ACT_TRAP
                               : SCMP_ACT_KILL_PROCESS;
  if (!log && opts.debug) {
    absl::Status st = InstallTrapHandler();
    if (!st.ok()) return st;
  }
  scmp_filter_ctx ctx = seccomp_init(deny);
  if (ctx == nullptr) return Fail("seccomp_init", ENOMEM);
  auto release = [&](absl::Status st) {
    seccomp_release(ctx);
    return st;
  };
  int err = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
  if (err == 0) err = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 1);
  if (err != 0) return release(Fail("seccomp_attr_set", -err));
  // glibc tries clone3 first for a new thread; its arguments sit in memory, out of a
  // filter's sight, so it is answered ENOSYS and glibc falls back to clone, whose flags
  // the filter checks.
  if (!log_all) err = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
  if (err != 0) return release(Fail("clone3", -err));
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
  err = seccomp_load(ctx);
  return release(err == 0 ? absl::OkStatus() : Fail("seccomp_load", -err));
}

void PrintAllowlist(FILE* out) {
  int always = 0, net = 0;
  for (const Allowed& a : Allowlist()) {
    const char* mode = a.need == Need::kAlways ? "" : " [--net=host]";
    const char* args = a.only.empty() ? "" : " [some arguments only]";
    fprintf(out, "%-20s %s%s%s\n", a.name, a.reason, args, mode);
    (a.need == Need::kAlways ? always : net)++;
  }
  fprintf(out,
          "%d host system calls in the default configuration, %d more with --net=host; "
          "clone3 answers ENOSYS; any other call kills the Sentry\n",
          always, net);
}

void WarnUnconfined(const char* who) {
  fprintf(stderr,
          "%s: WARNING: --unsafe-no-confinement: the Sentry and the gofer run WITHOUT their "
          "seccomp allowlists and namespaces; a bug in them is a bug on the host. For "
          "debugging only.\n",
          who);
}

}  // namespace sentry::shim
