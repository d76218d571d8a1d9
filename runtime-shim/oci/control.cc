#include "runtime-shim/oci/control.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <list>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "runtime-shim/guest_user.h"
#include "runtime-shim/oci/oci.h"
#include "runtime-shim/oci/spec.h"
#include "runtime-shim/terminal.h"
#include "sentry/base/guest_memory.h"
#include "sentry/base/status.h"
#include "sentry/kernel/kernel.h"
#include "vfs/file.h"

namespace sentry::oci {
namespace {

using nlohmann::json;

constexpr size_t kMaxMessage = 256 * 1024;
constexpr int kMaxFds = 8;

// The socket's path for bind and connect: through an O_PATH fd of DIR, since a container's
// directory under Docker's --root is longer than sun_path allows. Returns the fd to close.
absl::StatusOr<int> SocketAddress(const std::string& dir, sockaddr_un* addr) {
  int dfd = open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return ErrnoStatus("open " + dir);
  *addr = {};
  addr->sun_family = AF_UNIX;
  snprintf(addr->sun_path, sizeof(addr->sun_path), "/proc/self/fd/%d/%s", dfd, kControlSocket);
  return dfd;
}

// A guest program's path: argv[0] as given if it names a path, else the first match on the
// PATH of `env`, looked up in the sandbox's own file system (which may differ from the
// bundle's root after the container wrote to it), as runc's exec does in the container.
absl::StatusOr<std::string> FindGuestProgram(kernel::Kernel& k, const std::string& prog,
                                             const std::vector<std::string>& env) {
  if (prog.find('/') != std::string::npos) return prog;
  vfs::Context ctx;
  ctx.root = ctx.cwd = k.vfs().Root();
  for (const std::string& dir : SearchPath(env)) {
    auto found = k.vfs().Resolve(ctx, ctx.root, dir + "/" + prog, true);
    if (found.ok() && !found->inode()->IsDir()) return dir + "/" + prog;
  }
  return absl::NotFoundError("exec: \"" + prog + "\": executable file not found in $PATH");
}

// What the exit callback (run under the kernel's lock, where it may not block) leaves for the
// connection's thread: the wait status, and an eventfd that wakes the thread.
struct ExitNote {
  int event = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  std::atomic<int> status{0};
  ~ExitNote() { close(event); }
};

}  // namespace

absl::StatusOr<int> ListenControl(const std::string& dir) {
  sockaddr_un addr;
  SENTRY_ASSIGN_OR_RETURN(int dfd, SocketAddress(dir, &addr));
  int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  unlink(addr.sun_path);
  if (s < 0 || bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(s, 16) != 0) {
    absl::Status st = ErrnoStatus("control socket in " + dir);
    if (s >= 0) close(s);
    close(dfd);
    return st;
  }
  close(dfd);
  return s;
}

absl::StatusOr<int> ConnectControl(const std::string& dir) {
  sockaddr_un addr;
  SENTRY_ASSIGN_OR_RETURN(int dfd, SocketAddress(dir, &addr));
  int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (s < 0 || connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    absl::Status st = ErrnoStatus("connecting to the container's sandbox");
    if (s >= 0) close(s);
    close(dfd);
    return st;
  }
  close(dfd);
  return s;
}

absl::Status SendControl(int sock, const json& msg, const std::vector<int>& fds) {
  std::string text = msg.dump();
  iovec iov = {text.data(), text.size()};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  alignas(cmsghdr) char cbuf[CMSG_SPACE(sizeof(int) * kMaxFds)];
  if (!fds.empty()) {
    if (fds.size() > kMaxFds) return absl::InvalidArgumentError("too many fds for one message");
    size_t len = sizeof(int) * fds.size();
    mh.msg_control = cbuf;
    mh.msg_controllen = CMSG_SPACE(len);
    cmsghdr* c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(len);
    memcpy(CMSG_DATA(c), fds.data(), len);
  }
  ssize_t n;
  do {
    n = sendmsg(sock, &mh, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return ErrnoStatus("control socket: send");
  return absl::OkStatus();
}

absl::StatusOr<json> ReceiveControl(int sock, std::vector<int>* fds) {
  std::string buf(kMaxMessage, '\0');
  iovec iov = {buf.data(), buf.size()};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  alignas(cmsghdr) char cbuf[CMSG_SPACE(sizeof(int) * kMaxFds)];
  mh.msg_control = cbuf;
  mh.msg_controllen = sizeof(cbuf);
  ssize_t n;
  do {
    n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return ErrnoStatus("control socket: receive");
  for (cmsghdr* c = CMSG_FIRSTHDR(&mh); c != nullptr; c = CMSG_NXTHDR(&mh, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; i++) {
      int fd;
      memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      if (fds != nullptr) {
        fds->push_back(fd);
      } else {
        close(fd);
      }
    }
  }
  if (n == 0) return absl::UnavailableError("the control connection was closed");
  if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
    return absl::InvalidArgumentError("control socket: message too long");
  }
  buf.resize(n);
  json msg = json::parse(buf, nullptr, false);
  if (!msg.is_object()) return absl::InvalidArgumentError("control socket: not a JSON object");
  return msg;
}

struct ControlServer::Impl {
  kernel::Kernel& k;
  int listen_fd;
  std::vector<sock_filter> filter;
  int stop[2] = {-1, -1};  // the write end is closed to stop every thread
  std::thread acceptor;

  struct Conn {
    int fd;
    std::thread thread;
    std::atomic<bool> done{false};
  };
  absl::Mutex mu;
  std::list<Conn> conns ABSL_GUARDED_BY(mu);

  Impl(kernel::Kernel& kernel, int fd, std::vector<sock_filter> f)
      : k(kernel), listen_fd(fd), filter(std::move(f)) {}

  void AcceptLoop() {
    for (;;) {
      pollfd p[2] = {{listen_fd, POLLIN, 0}, {stop[0], POLLIN, 0}};
      if (poll(p, 2, -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (p[1].revents != 0) return;
      int c = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      absl::MutexLock l(&mu);
      // Finished connections leave the list here, so that a container exec'd into every few
      // seconds (Docker health checks) does not collect threads.
      for (auto it = conns.begin(); it != conns.end();) {
        if (it->done) {
          it->thread.join();
          it = conns.erase(it);
        } else {
          ++it;
        }
      }
      Conn& conn = conns.emplace_back();
      conn.fd = c;
      conn.thread = std::thread([this, &conn] {
        Serve(conn.fd);
        close(conn.fd);
        conn.done = true;
      });
    }
  }

  void Reply(int sock, const json& msg) { (void)SendControl(sock, msg); }

  void Serve(int sock) {
    std::vector<int> fds;
    auto msg = ReceiveControl(sock, &fds);
    if (!msg.ok()) {
      for (int fd : fds) close(fd);
      return;
    }
    std::string op = msg->value("op", "");
    if (op == "pause") {
      k.Freeze();
      Reply(sock, {{"ok", true}});
    } else if (op == "resume") {
      k.Thaw();
      Reply(sock, {{"ok", true}});
    } else if (op == "exec") {
      Exec(sock, *msg, fds);
      return;
    } else if (op == "kill") {
      Reply(sock, KillAll(msg->value("signal", 0)));
    } else if (op == "update") {
      // The host cgroup has the new limit already; the guest's ENOMEM comes at the same one.
      if (msg->contains("memory")) {
        int64_t bytes = msg->value("memory", int64_t{0});
        GuestMemory::Global().SetLimitBytes(bytes > 0 ? static_cast<uint64_t>(bytes) : 0);
      }
      Reply(sock, {{"ok", true}});
    } else {
      Reply(sock, {{"error", "unknown request \"" + op + "\""}});
    }
    for (int fd : fds) close(fd);
  }

  // kill --all: `sig` for every guest process, as kill(2) from outside the sandbox would send
  // it (a zombie gets nothing).
  json KillAll(int sig) {
    if (sig <= 0 || sig > abi::kNumSignals) return {{"error", "invalid signal"}};
    abi::SigInfo info{};
    info.signo = sig;
    absl::MutexLock l(&k.mu());
    int sent = 0;
    for (kernel::ThreadGroup* g : k.AllGroups()) {
      if (g->zombie) continue;
      k.SendGroupSignal(*g, info);
      sent++;
    }
    return {{"ok", true}, {"processes", sent}};
  }

  // Starts the process a client asked for and stays with it until it exits.
  void Exec(int sock, const json& msg, std::vector<int>& fds) {
    auto fail = [&](const std::string& why) {
      for (int fd : fds) close(fd);
      Reply(sock, {{"error", why}});
    };
    bool terminal = msg.value("terminal", false);
    if (fds.size() != (terminal ? 1 : 3)) {
      return fail(terminal ? "exec with a terminal needs the terminal's fd"
                           : "exec needs the process's stdin, stdout and stderr");
    }
    {
      absl::MutexLock l(&k.mu());
      if (k.frozen()) return fail("cannot exec in a paused container");
    }
    kernel::Kernel::StartOptions so;
    try {
      so.argv = msg.at("args").get<std::vector<std::string>>();
      so.envp = msg.value("env", std::vector<std::string>{});
      so.cwd = msg.value("cwd", std::string("/"));
      so.uid = msg.value("uid", int64_t{0});
      so.gid = msg.value("gid", int64_t{0});
      so.groups = msg.value("groups", std::vector<uint32_t>{});
      so.umask = msg.value("umask", uint32_t{022}) & 0777;
      so.no_new_privs = msg.value("no_new_privs", false);
      if (msg.contains("caps")) so.caps = oci::CapabilitiesFromJson(msg["caps"]);
    } catch (const json::exception& e) {
      return fail(std::string("bad exec request: ") + e.what());
    }
    if (so.argv.empty()) return fail("exec: no program given");
    shim::AddHomeFromPasswd(k.vfs(), static_cast<uint32_t>(so.uid), so.envp);
    auto prog = FindGuestProgram(k, so.argv[0], so.envp);
    if (!prog.ok()) return fail(std::string(prog.status().message()));
    so.path = *prog;
    so.seccomp_filter = filter;
    // With a terminal: the process's own pty of the sandbox's devpts, its controlling
    // terminal, relayed to the host pty whose master the client sent to the console socket.
    std::unique_ptr<shim::TerminalRelay> relay;
    int host_tty = -1;
    if (terminal) {
      auto r = shim::TerminalRelay::Start(k.vfs(), fds[0], /*sigwinch=*/false);
      if (!r.ok()) return fail(std::string(r.status().message()));
      relay = std::move(*r);
      host_tty = fds[0];
      for (int i = 0; i < 3; i++) so.stdio.push_back(relay->slave());
      so.before_start = [&relay](int pid) { relay->AttachSession(pid, pid); };
    } else {
      const char* names[] = {"stdin", "stdout", "stderr"};
      for (int i = 0; i < 3; i++) {
        int fl = fcntl(fds[i], F_GETFL);
        if (fl < 0) fl = O_RDWR;
        so.stdio.push_back(
            vfs::NewHostStreamFile(fds[i], fl & (O_ACCMODE | O_APPEND), names[i]));
      }
    }
    fds.clear();  // the files (or, for the terminal, host_tty below) own them now
    struct TerminalDone {
      std::unique_ptr<shim::TerminalRelay>& relay;
      int fd;
      // What the process wrote last reaches the host pty before its exit is reported.
      ~TerminalDone() {
        if (relay) relay->Finish();
        if (fd >= 0) close(fd);
      }
    } terminal_done{relay, host_tty};
    auto note = std::make_shared<ExitNote>();
    if (note->event < 0) return fail("eventfd: out of fds");
    so.on_exit = [note](int status) {
      note->status = status;
      uint64_t one = 1;
      (void)!write(note->event, &one, sizeof(one));
    };
    auto pid = k.Spawn(std::move(so));
    if (!pid.ok()) return fail(std::string(pid.status().message()));
    Reply(sock, {{"pid", *pid}});

    for (;;) {
      pollfd p[3] = {{note->event, POLLIN, 0}, {sock, POLLIN, 0}, {stop[0], POLLIN, 0}};
      if (poll(p, 3, -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (p[0].revents != 0) {
        if (relay) relay->Finish();
        Reply(sock, {{"exit", note->status.load()}});
        return;
      }
      if (p[2].revents != 0) {
        // The sandbox is ending: its init has exited, so the process is gone or going.
        uint64_t n;
        bool exited = read(note->event, &n, sizeof(n)) == sizeof(n);
        Reply(sock, {{"exit", exited ? note->status.load() : SIGKILL}});
        return;
      }
      auto req = ReceiveControl(sock);
      int sig = SIGKILL;  // the client went away: so does the process
      if (req.ok()) {
        if (req->value("op", "") != "signal") continue;
        sig = req->value("signal", 0);
        if (sig <= 0 || sig >= 65) continue;
      }
      absl::MutexLock l(&k.mu());
      if (kernel::ThreadGroup* tg = k.GroupByTgid(*pid)) {
        abi::SigInfo info{};
        info.signo = sig;
        k.SendGroupSignal(*tg, info);
      }
      if (!req.ok()) return;
    }
  }
};

absl::StatusOr<json> ControlRequest(const std::string& dir, const json& msg) {
  SENTRY_ASSIGN_OR_RETURN(int sock, ConnectControl(dir));
  absl::Status sent = SendControl(sock, msg);
  auto reply = sent.ok() ? ReceiveControl(sock) : absl::StatusOr<json>(sent);
  close(sock);
  if (!reply.ok()) return reply.status();
  if (reply->contains("error")) {
    return absl::FailedPreconditionError(reply->value("error", "request failed"));
  }
  return *reply;
}

ControlServer::ControlServer(kernel::Kernel& k, int listen_fd,
                             std::vector<sock_filter> seccomp_filter)
    : impl_(std::make_unique<Impl>(k, listen_fd, std::move(seccomp_filter))) {
  if (pipe2(impl_->stop, O_CLOEXEC) != 0) return;
  impl_->acceptor = std::thread([this] { impl_->AcceptLoop(); });
}

ControlServer::~ControlServer() {
  close(impl_->stop[1]);  // every poll in the threads sees it
  if (impl_->acceptor.joinable()) impl_->acceptor.join();
  absl::MutexLock l(&impl_->mu);
  for (auto& c : impl_->conns) c.thread.join();
  close(impl_->stop[0]);
  close(impl_->listen_fd);
}

}  // namespace sentry::oci
