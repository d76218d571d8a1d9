// sentry-run's watch over a whole sandbox: the wall-clock timeout (--timeout) and the host
// memory cgroup that backs the memory limit (--memory). A small parent process outside the
// sandbox does both, so that neither depends on the Sentry being well: it kills the Sentry
// (the stubs and the gofer die with it, PR_SET_PDEATHSIG / PTRACE_O_EXITKILL) and everything
// left in the cgroup.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sentry::shim {

// Exit statuses of sentry-run for a sandbox it ended (docs/sentry-run.md).
inline constexpr int kTimeoutStatus = 124;  // as timeout(1)
inline constexpr int kMemoryStatus = 137;   // 128 + SIGKILL, as an OOM kill looks to a shell

struct SuperviseOptions {
  int64_t timeout_ms = 0;     // 0: none
  uint64_t memory_bytes = 0;  // the guest's limit; 0: no cgroup
  bool debug = false;
  const char* who = "sentry-run";  // the prefix of its messages
  // The child is the Sentry in its own namespaces (namespaces.h), with a network namespace
  // of its own unless `new_net` is false (--net=host; the OCI runtime's container network).
  bool namespaces = false;
  bool new_net = true;
  // Also pass on the signals a container's init may get from `kill` (the OCI runtime), not
  // only those that ask a command to end.
  bool forward_all = false;
  // This process's fds the child alone must hold (e.g. the OCI set-up pipe, whose EOF its
  // reader waits for): closed here once the child runs.
  std::vector<int> close_in_parent;
  // If set: the child's wait status, as waitpid gave it, or the one the child passed to
  // ReportStatus (the init of a PID namespace cannot die of its own signal).
  int* child_status = nullptr;
  // If set, a failure to start the child is stored here instead of printed.
  std::string* start_error = nullptr;
};

// Forks (with `namespaces`, into the Sentry's namespaces). In the child (the future Sentry),
// returns nullopt: the caller runs the sandbox and exits. In this process, waits for the
// child and returns sentry-run's exit status: the child's own, or kTimeoutStatus /
// kMemoryStatus after one line on stderr ("sentry-run: timeout 2s reached; killed"), or 126
// after one line naming the confinement step that failed. Call it while the process has one
// thread.
std::optional<int> Supervise(const SuperviseOptions& opts);

// In the child of a Supervise with `child_status`: the wait status the parent should report
// instead of the child's own (the Sentry passes on its guest's death by a signal this way).
void ReportStatus(int status);

// "30s", "5m", "1.5h", "2d" or plain seconds ("10", "0.5"), in milliseconds; nullopt if it is
// not a positive duration.
std::optional<int64_t> ParseDuration(const std::string& text);

// A byte count with an optional k/m/g/t suffix (powers of 1024), as "512m"; nullopt if bad.
std::optional<uint64_t> ParseSize(const std::string& text);

// "512 MiB", "1.5 GiB", "4096 bytes": for messages.
std::string FormatSize(uint64_t bytes);

}  // namespace sentry::shim
