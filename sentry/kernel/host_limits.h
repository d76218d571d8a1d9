// What the host will give the sandbox: the default guest task limit is derived from it, so
// that a guest's fork or thread bomb meets EAGAIN from the Sentry (like RLIMIT_NPROC or a
// pids cgroup) well before the host refuses the Sentry a process or a thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sentry::kernel {

// The guest tasks allowed at most: 32768 (the Sentry's own table sizes) unless the host's
// headroom is smaller. The headroom is the least of
//   - for each level of the calling process's pids cgroup (v1 or v2): pids.max - pids.current,
//   - /proc/sys/kernel/threads-max minus the host's current task count,
//   - /proc/sys/kernel/pid_max minus the host's current task count,
//   - RLIMIT_NPROC minus this process's own tasks (unless root, whom Linux does not limit);
// from it, kReservedHostTasks are kept for the Sentry itself (its service threads, the
// gofer, the fresh stubs of an execve and stubs killed but not reaped yet), and the rest is
// divided by `host_tasks_per_task`, what one guest task costs on the platform.
int64_t DefaultTaskLimit(int host_tasks_per_task);

// The cgroup files DefaultTaskLimit reads beyond sentry::KernelHostFiles() (pids.max and
// pids.current of each level), for sentry::PreopenHostFiles before the Sentry's pivot_root.
std::vector<std::string> HostLimitFiles();

inline constexpr int64_t kMaxGuestTasks = 32768;
inline constexpr int64_t kReservedHostTasks = 16;

}  // namespace sentry::kernel
