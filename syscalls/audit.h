// The audit trail (sentry-run --audit, --audit-summary): one JSON line per event of what the
// guest did — programs run and their ends, files created, written, deleted, renamed and
// chmod'ed, connections, binds and listens, and every policy denial. docs/audit.md describes
// the events; docs/audit.schema.json is their schema.
//
// Events are observed at the syscall boundary (Dispatch calls Before and After around a
// call), so they say what the guest asked for and what the kernel answered, whatever file
// system or socket served it. With the trail off, the cost is one relaxed load per syscall.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "sentry/kernel/kernel.h"
#include "syscalls/table.h"

namespace sentry::syscalls::audit {

namespace internal {
inline std::atomic<bool> enabled{false};
}

inline bool Enabled() { return internal::enabled.load(std::memory_order_relaxed); }

// Starts the trail: events go to host fd `fd` (taken over; -1: kept only for the summary),
// and with `summary`, Finish prints a short account on stderr. Call before the guest starts.
void Start(kernel::Kernel& k, int fd, bool summary);
// Flushes the writes still counted on open files and prints the summary; the trail stops.
void Finish();

// What must be seen before a call runs: paths that the call removes or replaces, the program
// and argv an execve replaces, whether an O_CREAT open creates.
struct Pre {
  bool wanted = false;
  std::string path;   // absolute guest path of the call's (first) path argument
  std::string path2;  // rename's and link's destination, symlink's target
  std::vector<std::string> argv;
  bool existed = false;
  vfs::FileRef file;  // write family: the file written; close: the file closed
};
void Before(kernel::Task& t, uint64_t nr, const SyscallArgs& a, Pre& pre);
void After(kernel::Task& t, uint64_t nr, const SyscallArgs& a, int64_t ret, Pre& pre);

// A network destination the egress policy refused (netstack's denial observer).
void NetDenied(const char* what, const std::string& dst, const std::string& why);

}  // namespace sentry::syscalls::audit
