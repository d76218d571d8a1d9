// The Sentry's own process model (DESIGN.md section 9, docs/security.md): it runs as the init
// of fresh user, mount, PID, IPC, UTS and (unless the network is the host's) network
// namespaces, pivoted into an empty read-only tmpfs, with no capability at all.
//
//   host:      sentry-run / `sentry do` / the OCI sandbox process   waits (supervisor.h)
//   new ns:      └── the Sentry, PID 1                             PrepareHostView, then
//                      ├── the gofer (forked before the pivot)     EnterEmptyRoot
//                      └── the stub factory and every stub
//
// User namespace: as root, the whole uid and gid range maps to itself (so the gofer still
// serves every host file, with the capabilities it keeps inside); rootless, only the caller's
// uid and gid. Either way the Sentry holds no capability in the host's user namespace, and
// once it has dropped those of its own namespace, none anywhere. The PID namespace ties the
// sandbox's life to the Sentry's: when PID 1 dies, the kernel kills the gofer and every stub.
#pragma once

#include <sys/types.h>

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gofer/client.h"

namespace sentry::shim {

// The parent's side: clones a child (as fork would, SIGCHLD at its exit) in new user, mount,
// PID, IPC, UTS and, with `new_net`, network namespaces, writes its uid and gid maps and lets
// it go on. Returns the child's PID in the parent and 0 in the child; an error names the step
// that failed (e.g. user namespaces disabled). Call it while the process has one thread.
absl::StatusOr<pid_t> CloneIntoNamespaces(bool new_net);

// Whether this process is the Sentry that CloneIntoNamespaces started.
bool InSentryNamespaces();

// In the child, first: mounts a procfs of the new PID namespace over /proc, and opens what the
// Sentry will read of the host once its root is empty: the host files of
// sentry::KernelHostFiles() and the resolver's, the stub executable, and that procfs (for the
// stub factory's layout, until ForgetHostProc).
absl::Status PrepareHostView();

// In the child, once the gofer runs (it inherits the host view) and before any other thread
// exists (capabilities are per thread): pivot_root into an empty read-only tmpfs, the old
// root detached; then every capability dropped (inheritable, ambient, bounding, and
// effective and permitted but those in `keep`, a mask of 1 << CAP_*) and the securebits
// locked so that no execve gains any back. `keep` is FileCapabilities in direct file access,
// else 0.
absl::Status EnterEmptyRoot(uint64_t keep = 0);

// The capabilities the Sentry keeps when it serves some attach point itself
// (docs/design-decisions.md): CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH, the gofer's for
// reading and opening; the changes, with CAP_FOWNER and CAP_CHOWN, stay the gofer's
// (gofer/lend.cc). 0 in gofer mode. Decided by the option, before the gofer answers (so
// that the Sentry can leave the host's root while the gofer starts): were no root donated
// after all, the two are kept unused.
uint64_t FileCapabilities(bool direct_files);

// Closes PrepareHostView's procfs once the platform has started: from then on, the Sentry
// reaches no path outside its empty root.
void ForgetHostProc();

}  // namespace sentry::shim
