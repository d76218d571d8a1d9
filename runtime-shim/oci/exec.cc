// exec, pause and resume: the commands that talk to a running container's Sentry through its
// control socket (control.h).
//
// `exec` starts a process in the sandbox and leaves a host process behind that stands for it
// (the "exec proxy"): the container's shim reaps the PID in --pid-file and takes its exit
// status as the exec'd process's, as it does with runc, whose exec'd process is a real host
// process. The proxy passes on the signals it receives and ends the way the guest process
// ended; killing the proxy kills the process.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include "nlohmann/json.hpp"
#include "runtime-shim/oci/container.h"
#include "runtime-shim/oci/control.h"
#include "runtime-shim/oci/oci.h"
#include "runtime-shim/oci/spec.h"
#include "sentry/base/status.h"

namespace sentry::oci {
namespace {

using nlohmann::json;

// The proxy's end of the pipe that tells `exec` whether the process started.
constexpr int kReportFd = 3;

// "UID[:GID]", numbers only (names would have to be looked up in the container's files).
absl::Status ParseUser(const std::string& user, json& req) {
  size_t colon = user.find(':');
  std::string uid = user.substr(0, colon);
  std::string gid = colon == std::string::npos ? "" : user.substr(colon + 1);
  auto number = [](const std::string& s) {
    return !s.empty() && s.size() < 10 && s.find_first_not_of("0123456789") == std::string::npos;
  };
  if (!number(uid) || (colon != std::string::npos && !number(gid))) {
    return absl::InvalidArgumentError("exec --user " + user +
                                      ": expected UID[:GID] as numbers");
  }
  req["uid"] = std::stoll(uid);
  if (!gid.empty()) req["gid"] = std::stoll(gid);
  return absl::OkStatus();
}

// The exec request: --process FILE as Docker passes it, or the container's own process
// (config.json) with the command line's args, --env, --cwd and --user over it, as runc does.
absl::StatusOr<json> BuildRequest(const ExecFlags& f, const std::string& bundle) {
  json process;
  std::string from = f.process.empty() ? bundle + "/config.json" : f.process;
  std::ifstream in(from);
  if (!in) return ErrnoStatus("exec: " + from);
  try {
    json j = json::parse(in);
    process = f.process.empty() ? j.at("process") : j;
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError("exec: " + from + ": " + e.what());
  }
  json req = {{"op", "exec"}};
  try {
    req["args"] = process.at("args").get<std::vector<std::string>>();
    req["env"] = process.value("env", std::vector<std::string>{});
    req["cwd"] = process.value("cwd", std::string("/"));
    if (process.contains("user")) {
      const json& u = process["user"];
      req["uid"] = u.value("uid", int64_t{0});
      req["gid"] = u.value("gid", int64_t{0});
      req["groups"] = u.value("additionalGids", std::vector<uint32_t>{});
      if (u.contains("umask")) req["umask"] = u["umask"].get<uint32_t>() & 0777;
    }
    req["no_new_privs"] = process.value("noNewPrivileges", false);
    auto caps = ReadCapabilities(process, "process");
    if (!caps.ok()) {
      return absl::InvalidArgumentError("exec: " + from + ": " +
                                        std::string(caps.status().message()));
    }
    if (*caps) req["caps"] = CapabilitiesToJson(**caps);
    if (!f.process.empty()) req["terminal"] = process.value("terminal", false);
    if (process.contains("consoleSize")) {
      req["rows"] = process["consoleSize"].value("height", 0);
      req["cols"] = process["consoleSize"].value("width", 0);
    }
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError("exec: " + from + ": process: " + e.what());
  }
  if (f.process.empty()) {
    if (f.args.empty()) return absl::InvalidArgumentError("exec: no command given");
    req["args"] = f.args;
  }
  for (const auto& e : f.env) {
    if (e.find('=') == std::string::npos) {
      return absl::InvalidArgumentError("exec --env " + e + ": expected KEY=VALUE");
    }
    req["env"].push_back(e);
  }
  if (!f.cwd.empty()) {
    if (f.cwd[0] != '/') return absl::InvalidArgumentError("exec --cwd must be absolute");
    req["cwd"] = f.cwd;
  }
  if (!f.user.empty()) SENTRY_RETURN_IF_ERROR(ParseUser(f.user, req));
  for (const auto& g : f.additional_gids) {
    if (g.empty() || g.find_first_not_of("0123456789") != std::string::npos || g.size() > 9) {
      return absl::InvalidArgumentError("exec --additional-gids " + g + ": expected a number");
    }
    req["groups"].push_back(std::stoul(g));
  }
  if (f.tty) req["terminal"] = true;
  if (f.no_new_privs) req["no_new_privs"] = true;
  return req;
}

int g_signal_pipe = -1;  // the proxy's: signal numbers from its handler

[[noreturn]] void Proxy(const std::string& dir, const json& req,
                        const std::string& console_socket) {
  auto report = [](const std::string& s) { (void)!write(kReportFd, s.data(), s.size()); };
  // With a terminal, the process gets a host pty's slave (relayed in the sandbox to a pty of
  // its own) and the master goes to the console socket; else our stdio.
  std::vector<int> stdio = {0, 1, 2};
  if (req.value("terminal", false)) {
    auto slave = SendConsole(console_socket, req.value("rows", 0), req.value("cols", 0));
    if (!slave.ok()) {
      report("error: " + std::string(slave.status().message()));
      _exit(1);
    }
    stdio = {*slave};
  }
  auto sock = ConnectControl(dir);
  if (!sock.ok()) {
    report("error: " + std::string(sock.status().message()));
    _exit(1);
  }
  absl::Status sent = SendControl(*sock, req, stdio);
  if (stdio.size() == 1) close(stdio[0]);
  auto reply = sent.ok() ? ReceiveControl(*sock) : absl::StatusOr<json>(sent);
  if (!reply.ok()) {
    report("error: the sandbox went away: " + std::string(reply.status().message()));
    _exit(1);
  }
  if (reply->contains("error")) {
    report("error: " + reply->value("error", std::string("exec failed")));
    _exit(1);
  }
  report("ok " + std::to_string(reply->value("pid", 0)));
  close(kReportFd);
  // The guest process holds the stdio now: ours must not keep a pipe open past its end.
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; fd < 3; fd++) dup2(null, fd);
  close(null);

  int sp[2];
  if (pipe2(sp, O_CLOEXEC | O_NONBLOCK) == 0) {
    g_signal_pipe = sp[1];
    struct sigaction sa {};
    sa.sa_handler = [](int sig) {
      int saved = errno;
      unsigned char b = static_cast<unsigned char>(sig);
      (void)!write(g_signal_pipe, &b, 1);
      errno = saved;
    };
    sa.sa_flags = SA_RESTART;
    for (int sig : {SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2, SIGTERM, SIGALRM, SIGCONT,
                    SIGTSTP, SIGTTIN, SIGTTOU, SIGWINCH}) {
      sigaction(sig, &sa, nullptr);
    }
  }
  for (;;) {
    pollfd p[2] = {{*sock, POLLIN, 0}, {sp[0], POLLIN, 0}};
    if (poll(p, 2, -1) < 0) continue;
    if (p[1].revents != 0) {
      unsigned char b;
      while (read(sp[0], &b, 1) == 1) {
        (void)SendControl(*sock, {{"op", "signal"}, {"signal", b}});
      }
    }
    if (p[0].revents != 0) {
      auto msg = ReceiveControl(*sock);
      // No word from the sandbox: it ended, and the process with it.
      if (!msg.ok()) ExitLikeGuest(SIGKILL);
      if (msg->contains("exit")) ExitLikeGuest(msg->value("exit", 0));
    }
  }
}

// Sends `op` (pause, resume) to the container's Sentry.
absl::Status Request(const std::string& dir, const std::string& op) {
  return ControlRequest(dir, {{"op", op}}).status();
}

}  // namespace

absl::Status Exec(const Globals& g, const ExecFlags& f, int* exit_code) {
  *exit_code = 0;
  std::string dir, bundle;
  {
    // The container's lock is held only for the check: a long exec must not block kill or
    // delete.
    SENTRY_ASSIGN_OR_RETURN(Container c, Container::Open(g.root, f.id));
    Status s = c.CurrentStatus();
    if (s == Status::kPaused && !f.ignore_paused) {
      return absl::FailedPreconditionError("cannot exec in a paused container");
    }
    if (s != Status::kRunning && s != Status::kPaused) {
      return absl::FailedPreconditionError("cannot exec in container " + f.id + ": it is " +
                                           StatusName(s));
    }
    dir = c.dir();
    bundle = c.state().bundle;
  }
  SENTRY_ASSIGN_OR_RETURN(json req, BuildRequest(f, bundle));
  bool terminal = req.value("terminal", false);
  if (terminal && f.console_socket.empty()) {
    return absl::InvalidArgumentError(
        "exec with a terminal needs --console-socket: the terminal's master goes there");
  }
  if (!terminal && !f.console_socket.empty()) {
    return absl::InvalidArgumentError(
        "exec --console-socket is only for a process with a terminal (--tty, or terminal in "
        "--process)");
  }
  if (f.preserve_fds > 0) LogDebug(g, "exec --preserve-fds: extra fds are not passed");
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) return ErrnoStatus("pipe");
  pid_t pid = fork();
  if (pid < 0) return ErrnoStatus("fork");
  if (pid == 0) {
    close(report[0]);
    if (report[1] != kReportFd) {
      dup2(report[1], kReportFd);
      close(report[1]);
    }
    syscall(SYS_close_range, kReportFd + 1, ~0U, 0);
    Proxy(dir, req, f.console_socket);
  }
  close(report[1]);
  std::string answer = ReadAll(report[0]);
  close(report[0]);
  if (answer.rfind("ok", 0) != 0) {
    waitpid(pid, nullptr, 0);
    if (answer.rfind("error: ", 0) == 0) return absl::InternalError(answer.substr(7));
    return absl::InternalError("exec: the process did not start");
  }
  LogDebug(g, "exec " + f.id + ": guest pid " + answer.substr(3) + ", host pid " +
                  std::to_string(pid));
  if (!f.pid_file.empty()) SENTRY_RETURN_IF_ERROR(WritePidFile(f.pid_file, pid));
  if (f.detach) return absl::OkStatus();
  *exit_code = WaitForwardingSignals(pid);
  return absl::OkStatus();
}

absl::Status Pause(const Globals& g, const std::string& id) {
  SENTRY_ASSIGN_OR_RETURN(Container c, Container::Open(g.root, id));
  Status s = c.CurrentStatus();
  if (s != Status::kRunning) {
    return absl::FailedPreconditionError("cannot pause container " + id + ": it is " +
                                         StatusName(s));
  }
  SENTRY_RETURN_IF_ERROR(Request(c.dir(), "pause"));
  return c.SetPaused(true);
}

absl::Status Resume(const Globals& g, const std::string& id) {
  SENTRY_ASSIGN_OR_RETURN(Container c, Container::Open(g.root, id));
  Status s = c.CurrentStatus();
  if (s != Status::kPaused) {
    return absl::FailedPreconditionError("cannot resume container " + id + ": it is " +
                                         StatusName(s) + ", not paused");
  }
  SENTRY_RETURN_IF_ERROR(Request(c.dir(), "resume"));
  return c.SetPaused(false);
}

}  // namespace sentry::oci
