// Starting a gofer process from the Sentry.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "gofer/submounts.h"

namespace sentry::gofer {

struct GoferMount {
  std::string name;       // what the Sentry passes to Client::Attach, e.g. "/" or "/work"
  std::string host_path;  // a host directory
  bool read_only = false;
  Submounts submounts = Submounts::kAuto;  // which host mounts below host_path are served
};

struct GoferOptions {
  // If set, the files the gofer creates belong to this uid and gid whatever the guest asks,
  // and the guest's chowns do not reach the host (sentry-run: the invoking user).
  struct Owner {
    uint32_t uid;
    uint32_t gid;
  };
  std::optional<Owner> owner;
  // Host files, as (device, inode), that the gofer acts as if absent (filesystem.denyRead).
  std::vector<std::pair<uint64_t, uint64_t>> hidden;
  // Host files the guest may not change (nor, for a directory, add to or remove from), and
  // names in directories (device, inode, name) it may not create, remove or rename
  // (sentry-run's protected files).
  std::vector<std::pair<uint64_t, uint64_t>> protected_files;
  std::vector<std::tuple<uint64_t, uint64_t, std::string>> protected_names;
  // The gofer serves even if a confinement step fails (gofer --unsafe-no-confinement); by
  // default such a failure stops it before it serves anything.
  bool unsafe_no_confinement = false;
  // StartGofer returns as soon as the gofer is forked; AwaitGofer then waits for it to serve
  // (its set-up, ~1 ms of namespaces and mounts, overlaps the caller's own).
  bool defer_hello = false;
};

struct GoferProcess {
  pid_t pid = -1;  // the caller reaps it (waitpid) once it has exited
  int sock = -1;   // the Sentry's end: pass to Client
};

// Runs `sentry_binary gofer --sock-fd=N --attach=...` over a fresh SOCK_SEQPACKET pair and
// waits until the gofer says it serves. The gofer is SIGKILLed when the thread that called
// StartGofer exits (PR_SET_PDEATHSIG), so call it from a thread that lives as long as the
// Sentry. Errors: exec failure, or the gofer exiting during start-up (e.g. a host path that
// cannot be opened; the gofer says why on stderr). Thread-safe; async-signal-safe after fork.
// With an empty `sentry_binary` the forked child runs the gofer itself without exec, which
// saves loading the binary again; only a single-threaded caller may do that.
absl::StatusOr<GoferProcess> StartGofer(const std::string& sentry_binary,
                                        const std::vector<GoferMount>& mounts,
                                        const GoferOptions& options = {});

// Waits until a gofer started with `defer_hello` says it serves. On failure the gofer is
// killed and reaped, its socket closed, and `g` reset.
absl::Status AwaitGofer(GoferProcess& g);

}  // namespace sentry::gofer
