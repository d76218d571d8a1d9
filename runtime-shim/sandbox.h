// Runs one command in a fresh sandbox: the shared core of `sentry-run` and `sentry do`.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gofer/submounts.h"
#include "netstack/policy.h"

namespace sentry::shim {

struct SandboxOptions {
  std::string platform = "seccomp";
  bool strace = false;
  bool debug = false;
  std::vector<std::string> argv;  // argv[0] is the program
  std::vector<std::string> env;   // extra KEY=VALUE
  // The guest's root: a host directory seen read-only under an in-memory upper layer.
  std::string rootfs = "/";
  struct Bind {
    std::string host;
    std::string guest;
    bool read_only = false;
  };
  std::vector<Bind> binds;  // --bind HOST:GUEST[:ro], and --workspace DIR (read-write)
  std::string cwd;          // initial working directory (default: the workspace, or /)
  // Bytes of file data the in-memory layer (overlay upper, tmpfs mounts, /dev/shm, memfds)
  // may hold in all; 0 keeps the default, half the host's RAM. Beyond it: ENOSPC.
  uint64_t tmpfs_size = 0;
  // The most guest tasks (threads) at once, --pids; 0: derived from what the host gives
  // (kernel/host_limits.h).
  int64_t max_tasks = 0;
  // Which host mounts below the root and the binds the gofer serves (gofer/submounts.h).
  gofer::Submounts submounts = gofer::Submounts::kAuto;
  // --net=host: destinations outside the sandbox through host sockets, under the policy of
  // allow_net and deny_net (netstack/policy.h). Otherwise loopback only.
  bool net_host = false;
  std::vector<netstack::NetRule> allow_net;
  std::vector<netstack::NetRule> deny_net;
  // --tty=auto: when sentry-run's stdin is a terminal, the guest gets a pty of its own as its
  // controlling terminal, relayed to the caller's (runtime-shim/terminal.h); never: the
  // caller's fds as they are.
  bool tty = true;
};

// Parses "HOST:GUEST[:ro]" (or ":rw"); GUEST defaults to HOST.
absl::StatusOr<SandboxOptions::Bind> ParseBind(const std::string& spec);

// Returns the guest's exit status as a shell reports it (128+N for death by signal N).
absl::StatusOr<int> RunSandbox(const SandboxOptions& opts);

}  // namespace sentry::shim
