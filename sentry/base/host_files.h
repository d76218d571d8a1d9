// The few host files the Sentry reads while the guest runs (/proc/meminfo for the guest's
// meminfo, /proc/loadavg for the task limit, /sys/devices/system/cpu/possible, ...). Once
// the Sentry has pivoted into its empty root (runtime-shim/namespaces.h) no host path is
// reachable, so each such file is opened once before, and read again from offset 0 of the
// fd it keeps: the contents stay live (procfs and sysfs files are generated at each read).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace sentry {

// Opens `paths` (read-only) and keeps their fds for ReadHostFile. A path that cannot be
// opened is skipped: its readers then see what they see for a missing file. Call before any
// thread reads these files.
void PreopenHostFiles(const std::vector<std::string>& paths);

// The whole contents of host file `path`: from the fd kept by PreopenHostFiles, else by
// opening it (which, after the pivot into the empty root, fails). nullopt if unreadable.
std::optional<std::string> ReadHostFile(const std::string& path);

// Every path ReadHostFile is asked for by the kernel (host_limits.cc, sysinfo.cc, sched.cc,
// procfs_system.cc), for PreopenHostFiles. Kept here, beside the reader, so that a new
// reader adds its path in one place.
const std::vector<std::string>& KernelHostFiles();

}  // namespace sentry
