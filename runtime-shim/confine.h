// The Sentry's own confinement, applied once start-up is over (the gofer is running, the
// platform's stub factory exists) and before the guest's first instruction: a seccomp
// allowlist of the host system calls the Sentry makes, compiled with libseccomp from the one
// list in confine.cc and installed on every thread of the process (SECCOMP_FILTER_FLAG_TSYNC;
// threads started later inherit it), with PR_SET_NO_NEW_PRIVS. A call outside the list kills
// the whole Sentry (SECCOMP_RET_KILL_PROCESS), or, with --debug, raises SIGSYS, whose handler
// names the call on stderr and aborts. The stubs never inherit it: they descend from the stub
// factory (platform/stub/stub_factory.h), which was started before.
#pragma once

#include <linux/filter.h>

#include <cstdio>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace sentry::shim {

struct ConfineOptions {
  bool net_host = false;  // --net=host: the host socket calls are added
  bool debug = false;     // TRAP and a readable report instead of KILL_PROCESS
  bool control_socket = false;  // an OCI container's control socket is served (accept4)
  // Direct file access (gofer/client.h: GoDirect): the *at calls of the gofer's request
  // handlers, with their arguments filtered (no AT_FDCWD, no symlink followed).
  bool direct_files = false;

  bool operator==(const ConfineOptions&) const = default;
};

// The allowlist for `opts`, compiled to a BPF program. Compiling takes ~0.5 ms of CPU, so
// start-up does it on another thread while it builds the file system.
struct SentryFilter {
  ConfineOptions opts;  // what it was compiled for
  std::vector<sock_filter> program;
};
absl::StatusOr<SentryFilter> CompileSentryFilter(const ConfineOptions& opts);

// Makes the Sentry non-dumpable (no core, /proc/PID of it owned by root, no ptrace attach
// by the caller's uid) and installs the allowlist on every thread: `compiled` if it was
// compiled for the same options, else one compiled here. Fails, with the reason, if
// libseccomp or the kernel refuse it; the caller then refuses to run the guest.
absl::Status ConfineSentry(const ConfineOptions& opts, const SentryFilter* compiled = nullptr);

// `sentry debug syscalls-allowed`: prints the list, one call a line with its reason, and the
// count per mode.
void PrintAllowlist(FILE* out);

// The loud line for --unsafe-no-confinement.
void WarnUnconfined(const char* who);

}  // namespace sentry::shim
