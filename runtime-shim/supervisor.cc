#include "runtime-shim/supervisor.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "runtime-shim/cgroup.h"
#include "runtime-shim/namespaces.h"
#include "sentry/base/startup_trace.h"

namespace sentry::shim {
namespace {

// Room in the host cgroup above the guest's limit for what is not the guest's: the Sentry's
// own heap and threads, the gofer, the stubs' page tables. The guest's memory is bounded by
// the Sentry's accounting first; the cgroup is the backstop.
constexpr uint64_t kHostHeadroom = uint64_t{128} << 20;

int64_t NowMs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

std::string FormatDuration(int64_t ms) {
  char buf[64];
  if (ms % 1000 == 0) {
    snprintf(buf, sizeof(buf), "%llds", static_cast<long long>(ms / 1000));
  } else {
    snprintf(buf, sizeof(buf), "%.3gs", ms / 1000.0);
  }
  return buf;
}

// The signals the parent waits for: the child's end, and those it passes on to the child.
// With `all`, also those a container's init may be sent (`sentry kill`); not SIGWINCH, which
// the terminal's resize sends the child directly (it shares our process group).
sigset_t WatchedSignals(bool all) {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGCHLD, SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2}) {
    sigaddset(&set, sig);
  }
  if (all) {
    for (int sig : {SIGALRM, SIGCONT, SIGTSTP, SIGTTIN, SIGTTOU}) sigaddset(&set, sig);
  }
  return set;
}

// fork(), or with `opts.namespaces` a clone into the Sentry's namespaces; -1 after printing
// why.
pid_t StartChild(const SuperviseOptions& opts) {
  if (!opts.namespaces) {
    pid_t child = fork();
    if (child < 0) fprintf(stderr, "%s: fork: %s\n", opts.who, strerror(errno));
    return child;
  }
  absl::StatusOr<pid_t> child = CloneIntoNamespaces(opts.new_net);
  if (child.ok()) return *child;
  if (opts.start_error != nullptr) {
    *opts.start_error = std::string(child.status().message());
    return -1;
  }
  fprintf(stderr, "%s: %s (--unsafe-no-confinement runs without it, for debugging only)\n",
          opts.who, std::string(child.status().message()).c_str());
  return -1;
}

// The host memory cgroup for `opts`, with this process in it (so that what it forks is too);
// null if there is no memory limit or no group could be made (--debug says why).
std::unique_ptr<Cgroup> JoinNewGroup(const SuperviseOptions& opts) {
  if (opts.memory_bytes == 0) return nullptr;
  // Swap would let the group hold more than the limit: memory+swap gets the same bound.
  int64_t limit = static_cast<int64_t>(opts.memory_bytes + kHostHeadroom);
  auto made = Cgroup::Create("sentry-run-" + std::to_string(getpid()),
                             {.memory = limit, .memory_swap = limit});
  absl::Status joined = made.ok() ? (*made)->Join(0) : made.status();
  if (!joined.ok()) {
    if (opts.debug) {
      fprintf(stderr,
              "%s: no host memory cgroup (%s): the memory limit rests on the Sentry's "
              "accounting alone\n",
              opts.who, std::string(joined.message()).c_str());
    }
    return nullptr;
  }
  if (opts.debug) {
    fprintf(stderr, "%s: host memory cgroup %s, limit %s (the guest's %s + %s)\n", opts.who,
            (*made)->path().c_str(), FormatSize(opts.memory_bytes + kHostHeadroom).c_str(),
            FormatSize(opts.memory_bytes).c_str(), FormatSize(kHostHeadroom).c_str());
  }
  return std::move(*made);
}

int g_report_fd = -1;  // ReportStatus's pipe, in the child

enum class Ended { kByItself, kTimeout, kMemory };

// Waits for `child` (its wait status in `status`), passing the watched signals on, until it
// exits, or the deadline passes, or the host OOM-kills in `group`: then kills the sandbox.
Ended Watch(pid_t child, const sigset_t& watched, int64_t deadline, Cgroup* group, int& status) {
  Ended ended = Ended::kByItself;
  while (waitpid(child, &status, WNOHANG) != child) {
    if (group != nullptr && group->OomKills() > 0) ended = Ended::kMemory;
    if (deadline != 0 && NowMs() >= deadline) ended = Ended::kTimeout;
    if (ended != Ended::kByItself) {
      // The stubs and the gofer die with the Sentry; the cgroup catches anything else.
      kill(child, SIGKILL);
      if (group != nullptr) group->KillAll();
      waitpid(child, &status, 0);
      return ended;
    }
    struct timespec wait = {0, 50 * 1000000};
    siginfo_t info;
    int sig = sigtimedwait(&watched, &info, &wait);
    // A terminal's ^C or ^\ reaches the child's process group already; other senders'
    // signals are passed on.
    bool from_tty = (sig == SIGINT || sig == SIGQUIT) && info.si_code == SI_KERNEL;
    if (sig > 0 && sig != SIGCHLD && !from_tty) kill(child, sig);
  }
  // An OOM kill of a stub ends its guest process; the sandbox reports it as the limit's.
  return group != nullptr && group->OomKills() > 0 ? Ended::kMemory : Ended::kByItself;
}

}  // namespace

std::optional<int> Supervise(const SuperviseOptions& opts) {
  std::unique_ptr<Cgroup> group = JoinNewGroup(opts);
  struct termios saved_tty;
  bool tty = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved_tty) == 0;
  sigset_t watched = WatchedSignals(opts.forward_all), old_mask;
  sigprocmask(SIG_BLOCK, &watched, &old_mask);
  pid_t parent = getpid();
  int report[2] = {-1, -1};
  if (opts.child_status != nullptr && pipe2(report, O_CLOEXEC | O_NONBLOCK) != 0) {
    fprintf(stderr, "%s: pipe2: %s\n", opts.who, strerror(errno));
    return 126;
  }
  pid_t child = StartChild(opts);
  if (child == 0) {
    startup::Mark("Sentry running in its namespaces");
    if (report[0] >= 0) close(report[0]);
    g_report_fd = report[1];
    // Without its watcher the sandbox would outlive its timeout: it goes with it. (In new
    // namespaces CloneIntoNamespaces did this, and the parent's death shows otherwise.)
    if (!opts.namespaces) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(137);
    }
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    (void)group.release();  // the parent owns the cgroup; the child only lives in it
    return std::nullopt;
  }
  if (group) (void)group->Leave(0);  // the parent stays outside, to clean up after the child
  if (child < 0) {
    if (group) group->Destroy();
    return 126;
  }
  for (int fd : opts.close_in_parent) close(fd);
  if (report[1] >= 0) close(report[1]);
  int64_t deadline = opts.timeout_ms > 0 ? NowMs() + opts.timeout_ms : 0;
  int status = 0;
  startup::Mark("Sentry cloned (parent)");
  Ended ended = Watch(child, watched, deadline, group.get(), status);
  startup::Mark("Sentry reaped (parent)");
  startup::Report("sentry-run");
  if (group) group->Destroy();  // kills what is left, removes the cgroup
  if (opts.child_status != nullptr) {
    int reported;
    bool got = read(report[0], &reported, sizeof(reported)) == sizeof(reported);
    *opts.child_status = got ? reported : status;
  }
  if (report[0] >= 0) close(report[0]);
  // The watched signals stay blocked: this process only reports and exits now.
  if (ended != Ended::kByItself && tty) tcsetattr(STDIN_FILENO, TCSANOW, &saved_tty);
  if (ended == Ended::kTimeout) {
    fprintf(stderr, "%s: timeout %s reached; killed\n", opts.who,
            FormatDuration(opts.timeout_ms).c_str());
    return kTimeoutStatus;
  }
  if (ended == Ended::kMemory) {
    fprintf(stderr, "%s: memory limit %s reached; killed\n", opts.who,
            FormatSize(opts.memory_bytes).c_str());
    return kMemoryStatus;
  }
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

void ReportStatus(int status) {
  if (g_report_fd >= 0) (void)!write(g_report_fd, &status, sizeof(status));
}

std::optional<int64_t> ParseDuration(const std::string& text) {
  if (text.empty() || !(isdigit(static_cast<unsigned char>(text[0])) || text[0] == '.')) {
    return std::nullopt;
  }
  char* end = nullptr;
  double n = strtod(text.c_str(), &end);
  std::string unit = end;
  double scale = unit.empty() || unit == "s" ? 1
                 : unit == "m"               ? 60
                 : unit == "h"               ? 3600
                 : unit == "d"               ? 86400
                                             : 0;
  double ms = n * scale * 1000;
  if (scale == 0 || !std::isfinite(ms) || ms < 1 || ms > 1e15) return std::nullopt;
  return static_cast<int64_t>(ms);
}

std::optional<uint64_t> ParseSize(const std::string& text) {
  if (text.empty() || !isdigit(static_cast<unsigned char>(text[0]))) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  unsigned long long n = strtoull(text.c_str(), &end, 10);
  std::string unit = end;
  int shift = unit.empty()                 ? 0
              : unit == "k" || unit == "K" ? 10
              : unit == "m" || unit == "M" ? 20
              : unit == "g" || unit == "G" ? 30
              : unit == "t" || unit == "T" ? 40
                                           : -1;
  if (errno != 0 || shift < 0 || n == 0 || n > (~0ull >> shift)) return std::nullopt;
  return static_cast<uint64_t>(n) << shift;
}

std::string FormatSize(uint64_t bytes) {
  static const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  char buf[64];
  if (bytes < 1024) {
    snprintf(buf, sizeof(buf), "%llu bytes", static_cast<unsigned long long>(bytes));
    return buf;
  }
  double v = bytes;
  int u = -1;
  while (v >= 1024 && u < 3) {
    v /= 1024;
    u++;
  }
  if (v == std::floor(v)) {
    snprintf(buf, sizeof(buf), "%.0f %s", v, kUnits[u]);
  } else {
    snprintf(buf, sizeof(buf), "%.1f %s", v, kUnits[u]);
  }
  return buf;
}

}  // namespace sentry::shim
