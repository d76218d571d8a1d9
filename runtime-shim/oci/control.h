// A running container's control socket: how `sentry exec`, `pause` and `resume`, which are
// separate invocations of the runtime, reach the Sentry that `create` started.
//
// The socket is CONTAINER_DIR/control.sock, a SOCK_SEQPACKET Unix socket; every message is one
// JSON object, with fds attached by SCM_RIGHTS where said.
//
//   {"op":"exec","args":[...],"env":[...],"cwd":"/","uid":0,"gid":0,"groups":[...],
//    "umask":18,"no_new_privs":false}
//       with the process's stdin, stdout and stderr attached. Reply: {"pid":N} (its PID in the
//       sandbox) or {"error":"..."}. While the process runs the client may send
//       {"op":"signal","signal":N}; when it exits the server sends {"exit":W} (the wait status)
//       and closes. The connection stands for the process: if the client goes away first,
//       the process is killed.
//   {"op":"pause"}, {"op":"resume"}: reply {"ok":true} or {"error":"..."}.
//   {"op":"kill","signal":N}: N to every guest process (kill --all). Reply {"ok":true,
//       "processes":COUNT} or {"error":"..."}.
//   {"op":"update","memory":BYTES}: the guest's memory limit (the Sentry's accounting) after
//       `update` changed the host cgroup's; -1 or 0: none. Reply {"ok":true}.
#pragma once

#include <linux/filter.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace sentry::kernel {
class Kernel;
}

namespace sentry::oci {

constexpr const char* kControlSocket = "control.sock";

// Makes the listening socket DIR/control.sock (DIR may be longer than a socket path can be).
absl::StatusOr<int> ListenControl(const std::string& dir);
// Connects to DIR/control.sock.
absl::StatusOr<int> ConnectControl(const std::string& dir);

// One message, with `fds` attached.
absl::Status SendControl(int sock, const nlohmann::json& msg, const std::vector<int>& fds = {});
// The next message; fds that came with it are appended to `fds` (closed if `fds` is null).
// A closed connection is an UnavailableError.
absl::StatusOr<nlohmann::json> ReceiveControl(int sock, std::vector<int>* fds = nullptr);

// One request to the Sentry of the container in DIR and its reply; a reply with "error" is
// a FailedPreconditionError carrying it.
absl::StatusOr<nlohmann::json> ControlRequest(const std::string& dir, const nlohmann::json& msg);

// Serves the control socket of the sandbox running in `k` until destroyed. `seccomp_filter`
// is the container's filter (linux.seccomp), which exec'd processes start with too.
class ControlServer {
 public:
  ControlServer(kernel::Kernel& k, int listen_fd, std::vector<sock_filter> seccomp_filter);
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sentry::oci
