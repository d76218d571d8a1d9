#include "sentry/base/host_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <map>

namespace sentry {
namespace {

// Written once by PreopenHostFiles before the Sentry's threads start, then only read.
std::map<std::string, int>& Kept() {
  static auto* kept = new std::map<std::string, int>;
  return *kept;
}

std::optional<std::string> ReadAll(int fd, bool from_start) {
  std::string text;
  char buf[8192];
  off_t off = 0;
  for (;;) {
    ssize_t n = from_start ? pread(fd, buf, sizeof(buf), off) : read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    off += n;
  }
  return text;
}

}  // namespace

void PreopenHostFiles(const std::vector<std::string>& paths) {
  for (const auto& path : paths) {
    if (Kept().count(path) != 0) continue;
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) Kept()[path] = fd;
  }
}

std::optional<std::string> ReadHostFile(const std::string& path) {
  auto it = Kept().find(path);
  if (it != Kept().end()) return ReadAll(it->second, true);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  auto text = ReadAll(fd, false);
  close(fd);
  return text;
}

const std::vector<std::string>& KernelHostFiles() {
  static const auto* files = new std::vector<std::string>{
      "/proc/meminfo",                           // sysinfo.cc: the guest's meminfo, sysinfo
      "/proc/loadavg",                           // host_limits.cc: tasks on the host
      "/proc/self/status",                       // host_limits.cc: the Sentry's own threads
      "/proc/self/cgroup",                       // host_limits.cc: the pids cgroup
      "/proc/sys/kernel/threads-max",            // host_limits.cc
      "/proc/sys/kernel/pid_max",                // host_limits.cc
      "/proc/sys/kernel/sched_rr_timeslice_ms",  // sched.cc
      "/sys/devices/system/cpu/possible",        // sched.cc: nr_cpu_ids
      "/proc/cpuinfo",                           // procfs_system.cc
      "/proc/vmstat",                            // procfs_system.cc
      "/proc/swaps",                             // procfs_system.cc
      "/proc/self/net/dev",                      // netstack/host_interfaces.cc: counters
  };
  return *files;
}

}  // namespace sentry
