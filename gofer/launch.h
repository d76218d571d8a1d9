// Starting a gofer process from the Sentry.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace sentry::gofer {

struct GoferMount {
  std::string name;       // what the Sentry passes to Client::Attach, e.g. "/" or "/work"
  std::string host_path;  // a host directory
  bool read_only = false;
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
                                        const std::vector<GoferMount>& mounts);

}  // namespace sentry::gofer
