#include "gofer/launch.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "gofer/protocol.h"
#include "gofer/server.h"
#include "sentry/base/status.h"

namespace sentry::gofer {
namespace {

constexpr int kStartupTimeoutMs = 30'000;

absl::Status CheckMounts(const std::vector<GoferMount>& mounts) {
  for (const auto& m : mounts) {
    if (m.name.empty() || m.name.find('=') != std::string::npos || m.host_path.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad gofer mount \"", m.name, "\" -> \"", m.host_path, "\""));
    }
  }
  return absl::OkStatus();
}

std::vector<std::string> GoferArgs(const std::string& binary, int sock,
                                   const std::vector<GoferMount>& mounts,
                                   const GoferOptions& options) {
  std::vector<std::string> args = {binary, "gofer", absl::StrCat("--sock-fd=", sock)};
  for (const auto& [dev, ino] : options.protected_files) {
    args.push_back(absl::StrCat("--protect=", dev, ":", ino));
  }
  for (const auto& [dev, ino, name] : options.protected_names) {
    args.push_back(absl::StrCat("--protect-name=", dev, ":", ino, ":", name));
  }
  for (const auto& [dev, ino] : options.hidden) {
    args.push_back(absl::StrCat("--hide=", dev, ":", ino));
  }
  if (options.owner) {
    args.push_back(absl::StrCat("--owner=", options.owner->uid, ":", options.owner->gid));
  }
  if (options.unsafe_no_confinement) args.push_back("--unsafe-no-confinement");
  for (const auto& m : mounts) {
    // Always the options: the gofer strips them once, so any host path survives.
    args.push_back(absl::StrCat("--attach=", m.name, "=", m.host_path, m.read_only ? ":ro" : ":rw",
                                ",submounts=", SubmountsName(m.submounts)));
  }
  return args;
}

// The child between fork and exec: async-signal-safe calls only. Reports an exec failure's
// errno on `status_fd` (close-on-exec, so a successful exec closes it silently).
[[noreturn]] void ExecGofer(char* const* argv, int sock, int status_fd, pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);  // the parent died before the signal was armed
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  int flags = fcntl(sock, F_GETFD);
  if (flags >= 0) fcntl(sock, F_SETFD, flags & ~FD_CLOEXEC);
  execv(argv[0], argv);
  int err = errno;
  (void)!write(status_fd, &err, sizeof(err));
  _exit(127);
}

// The child after fork when the gofer runs in a copy of the caller's image: no exec, so the
// binary is not loaded and linked a second time (about a third of sentry-run's start-up).
[[noreturn]] void RunGoferInChild(std::vector<char*> argv, int status_fd, pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  close(status_fd);  // as a successful exec would
  _exit(GoferMain(static_cast<int>(argv.size()) - 2, argv.data() + 1));
}

std::string DescribeExit(int status) {
  if (WIFEXITED(status)) return absl::StrCat("exited with status ", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return absl::StrCat("was killed by signal ", WTERMSIG(status));
  return "stopped";
}

// Waits for the gofer's hello. On failure the gofer is killed and reaped.
absl::Status AwaitHello(int sock, pid_t pid) {
  struct pollfd pfd = {sock, POLLIN, 0};
  int n;
  do {
    n = poll(&pfd, 1, kStartupTimeoutMs);
  } while (n < 0 && errno == EINTR);
  char buf[64];
  size_t len = 0;
  int fd = -1;
  int err = n > 0 ? RecvMessage(sock, buf, sizeof(buf), &len, &fd) : ETIMEDOUT;
  if (fd >= 0) close(fd);
  std::string hello = Writer().I32(0).Bytes(kHello).Take();
  if (err == 0 && std::string_view(buf, len) == hello) return absl::OkStatus();
  kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (err == ECONNRESET) {
    return absl::FailedPreconditionError(
        absl::StrCat("gofer ", DescribeExit(status), " during start-up"));
  }
  if (err == ETIMEDOUT) return absl::DeadlineExceededError("gofer did not start in time");
  return err != 0 ? ErrnoStatus("gofer start-up", err)
                  : absl::InternalError("gofer sent a bad hello");
}

}  // namespace

absl::StatusOr<GoferProcess> StartGofer(const std::string& sentry_binary,
                                        const std::vector<GoferMount>& mounts,
                                        const GoferOptions& options) {
  SENTRY_RETURN_IF_ERROR(CheckMounts(mounts));
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    return ErrnoStatus("socketpair");
  }
  int status_pipe[2];
  if (pipe2(status_pipe, O_CLOEXEC) != 0) {
    absl::Status s = ErrnoStatus("pipe2");
    close(sv[0]);
    close(sv[1]);
    return s;
  }
  // Everything the child needs is allocated before fork.
  std::vector<std::string> args = GoferArgs(sentry_binary, sv[1], mounts, options);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    if (sentry_binary.empty()) RunGoferInChild(std::move(argv), status_pipe[1], parent);
    ExecGofer(argv.data(), sv[1], status_pipe[1], parent);
  }
  int fork_errno = errno;
  close(sv[1]);
  close(status_pipe[1]);
  if (pid < 0) {
    close(sv[0]);
    close(status_pipe[0]);
    return ErrnoStatus("fork", fork_errno);
  }
  int exec_errno = 0;
  ssize_t n;
  do {
    n = read(status_pipe[0], &exec_errno, sizeof(exec_errno));
  } while (n < 0 && errno == EINTR);
  close(status_pipe[0]);
  if (n > 0) {
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    close(sv[0]);
    return ErrnoStatus(absl::StrCat("exec ", sentry_binary), exec_errno);
  }
  GoferProcess g{pid, sv[0]};
  if (!options.defer_hello) SENTRY_RETURN_IF_ERROR(AwaitGofer(g));
  return g;
}

absl::Status AwaitGofer(GoferProcess& g) {
  absl::Status hello = AwaitHello(g.sock, g.pid);
  if (!hello.ok()) {
    close(g.sock);
    g = GoferProcess{};
  }
  return hello;
}

}  // namespace sentry::gofer
