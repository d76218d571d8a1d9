// create, start and run.
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "netstack/policy.h"
#include "nlohmann/json.hpp"
#include "runtime-shim/oci/container.h"
#include "runtime-shim/oci/control.h"
#include "runtime-shim/oci/hooks.h"
#include "runtime-shim/oci/oci.h"
#include "runtime-shim/oci/resources.h"
#include "runtime-shim/oci/spec.h"
#include "runtime-shim/supervisor.h"
#include "sentry/base/status.h"

namespace sentry::oci {
namespace {

// The sandbox process's end of the set-up pipe: "ok" once the sandbox waits for `start`,
// otherwise the error.
constexpr int kReadyFd = 3;
constexpr int kTerminalFd = 4;  // the container's end of its terminal, if it has one

// Holds the guest init until `start`. The FIFO `fd` was opened for reading without blocking
// (so a `start` that comes at once finds a reader, and before the Sentry's root became
// empty) and is polled: `start` writes one byte; a writer that closes without writing
// (`delete` of a created container) cancels.
absl::Status WaitForStart(int fd) {
  (void)!write(kReadyFd, "ok", 2);
  close(kReadyFd);
  struct pollfd p = {fd, POLLIN, 0};
  while (poll(&p, 1, -1) < 0 && errno == EINTR) {
  }
  char b;
  ssize_t n = read(fd, &b, 1);
  close(fd);
  if (n != 1) return absl::CancelledError("the container was deleted before it started");
  return absl::OkStatus();
}

// Reports a set-up failure to `create` and ends the sandbox process.
[[noreturn]] void SetupFailed(const std::string& msg) {
  std::string out = "error: " + msg;
  (void)!write(kReadyFd, out.data(), out.size());
  _exit(126);
}

// The sandbox process's host network namespace (BundleSpec::netns_path). Without the
// privilege to make one (rootless), it stays in the caller's. Returns whether the namespace
// is the container's own.
bool EnterNetworkNamespace(const Globals& g, const BundleSpec& spec) {
  if (!spec.netns_path.empty()) {
    int fd = open(spec.netns_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) {
      SetupFailed("joining the network namespace " + spec.netns_path + ": " + strerror(errno));
    }
    close(fd);
    return true;
  }
  if (unshare(CLONE_NEWNET) != 0) {
    LogDebug(g, std::string("no network namespace of its own for the sandbox: ") + strerror(errno));
    return false;
  }
  return true;
}

// linux.sysctl's net.* keys, in the container's network namespace (this process's now). Docker
// passes net.ipv4.ip_unprivileged_port_start=0, which lets the Sentry, holding no capability
// there, listen on the guest's port 80.
void SetNetSysctls(const BundleSpec& spec) {
  for (const auto& [key, value] : spec.net_sysctls) {
    std::string path = "/proc/sys/" + key;
    std::replace(path.begin() + 10, path.end(), '.', '/');
    int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, value.data(), value.size()) != static_cast<ssize_t>(value.size())) {
      SetupFailed("linux.sysctl " + key + "=" + value + ": " + strerror(errno));
    }
    close(fd);
  }
}

// In a network namespace of its own, the container's network is the one its interfaces give
// (Docker's bridge and -p, a CNI network, or only lo): the Sentry's sockets to destinations
// outside the sandbox are host sockets there, with no egress rule of ours (the container's
// network is the policy, as under runc) and no DNS answered by the Sentry (the container's
// resolv.conf names its server), and every guest listener on the wildcard address listens
// there too, so that ports forwarded to the container reach it.
void UseContainerNetwork(shim::SandboxOptions& sandbox) {
  sandbox.net_host = true;
  std::string err;
  for (const char* all : {"0.0.0.0/0", "::/0"}) {
    sandbox.allow_net.push_back(*netstack::ParseNetRule(all, &err));
  }
  sandbox.publish_all = true;
  sandbox.answer_dns = false;
  sandbox.show_host_interfaces = true;
  // Docker's embedded DNS on user-defined networks (and docker compose's service names):
  // resolv.conf names 127.0.0.11, which Docker's DNAT rules in the container's namespace
  // lead to its resolver there; the guest's own lo has nothing on it.
  constexpr uint32_t kDockerDns = 0x7f00000b;  // 127.0.0.11
  sandbox.host_loopback = {netstack::InetAddr::V4(kDockerDns, 53)};
}

// The child side of create: becomes the container's sandbox process.
[[noreturn]] void SandboxProcess(const Globals& g, BundleSpec& spec, const std::string& fifo,
                                 int ready, int terminal, shim::Cgroup* group) {
  // First of all, so that the gofer and every stub start inside the container's cgroup.
  if (group != nullptr) {
    if (absl::Status s = group->Join(0); !s.ok()) SetupFailed(std::string(s.message()));
  }
  if (spec.oom_score_adj) {
    int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    std::string v = std::to_string(*spec.oom_score_adj);
    if (fd < 0 || write(fd, v.data(), v.size()) != static_cast<ssize_t>(v.size())) {
      SetupFailed("process.oomScoreAdj: " + std::string(strerror(errno)));
    }
    close(fd);
  }
  // Our own session: the caller's terminal signals reach the guest only through `kill`.
  setsid();
  // Nothing the caller left open (containerd-shim leaks its socket as fd 3) reaches the
  // sandbox: only stdio, the set-up pipe and the container's terminal.
  if (ready != kReadyFd) {
    dup2(ready, kReadyFd);
    close(ready);
  }
  if (terminal >= 0 && terminal != kTerminalFd) {
    dup2(terminal, kTerminalFd);
    close(terminal);
  }
  syscall(SYS_close_range, terminal >= 0 ? kTerminalFd + 1 : kReadyFd + 1, ~0U, 0);
  fcntl(kReadyFd, F_SETFD, FD_CLOEXEC);
  if (terminal >= 0) {
    // The container's terminal is this process's controlling terminal: a resize of the
    // console (TIOCSWINSZ on its master) brings SIGWINCH here, for the relay to pass on.
    fcntl(kTerminalFd, F_SETFD, FD_CLOEXEC);
    (void)ioctl(kTerminalFd, TIOCSCTTY, 0);
    spec.sandbox.terminal_fd = kTerminalFd;
    // The terminal is our stdio too, as it is a runc container init's: the pipe the caller
    // gave `create` for its own output must close when `create` exits (containerd's shim
    // reads it to the end before it goes on to `start`).
    for (int fd = 0; fd < 3; fd++) dup2(kTerminalFd, fd);
  }
  KeepLogOpen(g);
  if (EnterNetworkNamespace(g, spec)) {
    UseContainerNetwork(spec.sandbox);
    SetNetSysctls(spec);
  }
  int fifo_fd = open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fifo_fd < 0) SetupFailed("open " + fifo + ": " + strerror(errno));
  bool waiting = false;
  spec.sandbox.before_start = [&] {
    waiting = true;
    return WaitForStart(fifo_fd);
  };
  spec.sandbox.forward_signals = true;
  // exec, pause and resume reach this sandbox through its control socket.
  std::string dir = fifo.substr(0, fifo.rfind('/'));
  auto control = ListenControl(dir);
  if (!control.ok()) SetupFailed(std::string(control.status().message()));
  spec.sandbox.attach = [fd = *control, filter = spec.sandbox.seccomp_filter](
                            kernel::Kernel& k) -> std::shared_ptr<void> {
    return std::make_shared<ControlServer>(k, fd, filter);
  };
  // A container's terminal is process.terminal with --console-socket, never ours.
  spec.sandbox.tty = false;
  int wait_status = 0;
  if (!spec.sandbox.unsafe_no_confinement) {
    // The Sentry as the init of its own namespaces (runtime-shim/namespaces.h), in the
    // container's network namespace entered above. This process (the container's PID for
    // `state`, `kill` and `ps`) waits, passes signals on, and exits as the Sentry did.
    std::string error;
    std::optional<int> parent = shim::Supervise({.who = "sentry",
                                                 .namespaces = true,
                                                 .new_net = false,
                                                 .forward_all = true,
                                                 .close_in_parent = {kReadyFd, fifo_fd},
                                                 .child_status = &wait_status,
                                                 .start_error = &error});
    if (parent && !error.empty()) SetupFailed(error);
    if (parent) ExitLikeGuest(wait_status);
  }
  spec.sandbox.wait_status = &wait_status;
  auto r = shim::RunSandbox(spec.sandbox);
  if (r.ok()) {
    // The Sentry, init of its PID namespace, cannot die of its own signal: its parent does.
    shim::ReportStatus(wait_status);
    ExitLikeGuest(wait_status);
  }
  std::string msg = std::string(r.status().message());
  if (!waiting) {
    SetupFailed(msg);
  } else if (!absl::IsCancelled(r.status())) {
    LogError(g, "container init: " + msg);
  }
  _exit(absl::IsNotFound(r.status()) ? 127 : 126);
}

// Runs the hooks create runs (prestart, createRuntime, createContainer). A sandbox left in the
// caller's network namespace (rootless, where none can be made) has loopback only: a network
// set up for it there (interfaces other than lo) fails here, clearly, instead of leaving the
// guest silently without it.
absl::Status RunCreateHooks(const BundleSpec& spec, const ContainerState& st) {
  std::string state = HookState(st, "created");
  for (const auto& [kind, hook] : spec.create_hooks) {
    SENTRY_RETURN_IF_ERROR(RunHook(kind, hook, state));
  }
  struct stat ours, theirs;
  bool own_netns = stat("/proc/self/ns/net", &ours) == 0 &&
                   stat(("/proc/" + std::to_string(st.pid) + "/ns/net").c_str(), &theirs) == 0 &&
                   ours.st_ino != theirs.st_ino;
  std::vector<std::string> extra = own_netns ? std::vector<std::string>{} : ExtraInterfaces(st.pid);
  if (!extra.empty()) {
    return absl::UnimplementedError(
        "the container's network namespace has the interface " + extra[0] +
        " but the sandbox could not get a network namespace of its own (rootless?): only "
        "--network=none works there");
  }
  return absl::OkStatus();
}

// Makes the container and its waiting sandbox process; returns the process's PID (a child of
// this process). The container's lock is released on return.
absl::StatusOr<pid_t> CreateContainer(const Globals& g, const CreateFlags& f) {
  SENTRY_RETURN_IF_ERROR(CheckId(f.id));
  char bundle[PATH_MAX];
  if (realpath(f.bundle.c_str(), bundle) == nullptr) {
    return ErrnoStatus("bundle " + f.bundle);
  }
  SENTRY_ASSIGN_OR_RETURN(BundleSpec spec, LoadSpec(bundle));
  if (spec.terminal && f.console_socket.empty()) {
    return absl::InvalidArgumentError(
        "process.terminal needs --console-socket: the terminal's master goes there");
  }
  int terminal = -1;
  if (spec.terminal) {
    auto t = SendConsole(f.console_socket, spec.console_rows, spec.console_cols);
    if (!t.ok()) return t.status();
    terminal = *t;
  }
  struct CloseTerminal {
    int fd;
    ~CloseTerminal() {
      if (fd >= 0) close(fd);
    }
  } close_terminal{terminal};
  spec.sandbox.platform = g.platform;
  spec.sandbox.direct_files = g.file_access == "direct";
  spec.sandbox.strace = g.strace;
  spec.sandbox.debug = g.debug;
  spec.sandbox.unsafe_no_confinement = g.unsafe_no_confinement;
  for (const auto& line : spec.ignored) LogDebug(g, line);
  if (f.preserve_fds > 0) LogDebug(g, "--preserve-fds: extra fds are not passed to the guest");

  SENTRY_ASSIGN_OR_RETURN(Container c, Container::New(g.root, f.id));
  std::unique_ptr<shim::Cgroup> group;
  auto fail = [&](absl::Status s) {
    if (group) group->Destroy();
    (void)c.Remove();
    return s;
  };
  if (spec.cgroup) {
    auto made = shim::Cgroup::Create(CgroupName(spec.cgroups_path, f.id), spec.limits);
    if (made.ok()) {
      group = std::move(*made);
      // The guest sees its limits there (read-only), as a runc container does.
      spec.sandbox.cgroup_view = group->dirs();
      spec.sandbox.cgroup_view_v2 = group->v2();
    } else if (HasLimits(spec.limits)) {
      // Limits the caller relies on are never dropped silently.
      return fail(absl::FailedPreconditionError("linux.resources: " +
                                                std::string(made.status().message())));
    } else {
      LogDebug(g, "no cgroup for the container: " + std::string(made.status().message()));
    }
  }
  std::string fifo = c.FifoPath();
  if (mkfifo(fifo.c_str(), 0600) != 0) return fail(ErrnoStatus("mkfifo " + fifo));
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) != 0) return fail(ErrnoStatus("pipe"));
  pid_t pid = fork();
  if (pid < 0) return fail(ErrnoStatus("fork"));
  if (pid == 0) {
    close(ready[0]);
    SandboxProcess(g, spec, fifo, ready[1], terminal, group.get());
  }
  close(ready[1]);
  std::string reply = ReadAll(ready[0]);
  close(ready[0]);
  if (reply != "ok") {
    waitpid(pid, nullptr, 0);
    if (reply.rfind("error: ", 0) == 0) return fail(absl::InternalError(reply.substr(7)));
    return fail(absl::InternalError("the sandbox process exited while setting up"));
  }
  ContainerState& st = c.state();
  st.pid = pid;
  st.pid_start = ProcessStartTime(pid);
  st.bundle = bundle;
  st.rootfs = spec.rootfs;
  st.created = NowRfc3339();
  st.annotations = spec.annotations;
  st.later_hooks = spec.later_hooks;
  if (group) {
    st.cgroup_v2 = group->v2();
    st.cgroup_dirs = group->dirs();
  }
  absl::Status finished = c.Save();
  if (finished.ok()) finished = RunCreateHooks(spec, st);
  if (finished.ok() && !f.pid_file.empty()) {
    finished = WritePidFile(f.pid_file, pid);
  }
  if (!finished.ok()) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    return fail(finished);
  }
  return pid;
}

pid_t g_waited_child = 0;

}  // namespace

absl::StatusOr<int> SendConsole(const std::string& socket_path, int rows, int cols) {
  int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) {
    if (master >= 0) close(master);
    return ErrnoStatus("a terminal for the container");
  }
  char name[64];
  if (ptsname_r(master, name, sizeof(name)) != 0) {
    close(master);
    return ErrnoStatus("ptsname");
  }
  if (rows > 0 && cols > 0) {
    struct winsize ws {};
    ws.ws_row = static_cast<uint16_t>(rows);
    ws.ws_col = static_cast<uint16_t>(cols);
    (void)ioctl(master, TIOCSWINSZ, &ws);
  }
  int slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un addr {};
  addr.sun_family = AF_UNIX;
  bool ok = slave >= 0 && sock >= 0 && socket_path.size() < sizeof(addr.sun_path);
  if (ok) {
    memcpy(addr.sun_path, socket_path.data(), socket_path.size());
    ok = connect(sock, reinterpret_cast<struct sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  if (ok) {
    struct iovec iov = {name, strlen(name)};
    alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    struct msghdr msg {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    struct cmsghdr* cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &master, sizeof(int));
    ok = sendmsg(sock, &msg, 0) >= 0;
  }
  int err = errno;
  if (sock >= 0) close(sock);
  close(master);
  if (!ok) {
    if (slave >= 0) close(slave);
    errno = err;
    return ErrnoStatus("--console-socket " + socket_path);
  }
  return slave;
}

[[noreturn]] void ExitLikeGuest(int status) {
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, nullptr);
    raise(sig);
  }
  _exit(WEXITSTATUS(status));
}

std::string ReadAll(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    out.append(buf, n);
  }
  return out;
}

std::vector<std::string> SearchPath(const std::vector<std::string>& env) {
  std::string path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  for (const auto& e : env) {
    if (e.rfind("PATH=", 0) == 0) path = e.substr(5);
  }
  std::vector<std::string> dirs;
  size_t i = 0;
  while (i <= path.size()) {
    size_t j = path.find(':', i);
    if (j == std::string::npos) j = path.size();
    std::string dir = path.substr(i, j - i);
    i = j + 1;
    if (!dir.empty() && dir[0] == '/') dirs.push_back(dir);
  }
  return dirs;
}

int WaitForwardingSignals(pid_t child) {
  g_waited_child = child;
  struct sigaction sa {};
  sa.sa_handler = [](int sig) { kill(g_waited_child, sig); };
  sa.sa_flags = SA_RESTART;
  for (int sig : {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGWINCH}) {
    sigaction(sig, &sa, nullptr);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

absl::Status WritePidFile(const std::string& path, pid_t pid) {
  std::string tmp = path + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("open " + tmp);
  std::string text = std::to_string(pid);
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  if (!ok || rename(tmp.c_str(), path.c_str()) != 0) return ErrnoStatus("write " + path);
  return absl::OkStatus();
}

absl::Status Create(const Globals& g, const CreateFlags& f) {
  return CreateContainer(g, f).status();
}

absl::Status Start(const Globals& g, const std::string& id) {
  SENTRY_ASSIGN_OR_RETURN(Container c, Container::Open(g.root, id));
  Status s = c.CurrentStatus();
  if (s != Status::kCreated) {
    return absl::FailedPreconditionError("cannot start container " + id + ": it is " +
                                         StatusName(s) + ", not created");
  }
  // startContainer hooks, before the guest's program runs; a failing one stops the
  // container, as the init's failure does under runc.
  for (const auto& [kind, hook] : c.state().later_hooks) {
    if (kind != "startContainer") continue;
    absl::Status s = RunHook(kind, hook, HookState(c.state(), "created"));
    if (!s.ok()) {
      kill(c.state().pid, SIGKILL);
      return s;
    }
  }
  std::string fifo = c.FifoPath();
  int fd = open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("start " + id + ": the sandbox process is not waiting");
  bool sent = write(fd, "1", 1) == 1;
  close(fd);
  if (!sent) return ErrnoStatus("start " + id + ": write " + fifo);
  unlink(fifo.c_str());
  RunLaterHooks(g, c.state(), "poststart", "running");
  return absl::OkStatus();
}

absl::Status Run(const Globals& g, const CreateFlags& f, int* exit_code) {
  *exit_code = 0;
  SENTRY_ASSIGN_OR_RETURN(pid_t pid, CreateContainer(g, f));
  if (absl::Status s = Start(g, f.id); !s.ok()) {
    (void)Delete(g, f.id, true);
    return s;
  }
  if (f.detach) return absl::OkStatus();
  // The sandbox is in its own session: pass on what a terminal or a supervisor sends us.
  *exit_code = WaitForwardingSignals(pid);
  if (!f.keep) return Delete(g, f.id, true);
  return absl::OkStatus();
}

}  // namespace sentry::oci
