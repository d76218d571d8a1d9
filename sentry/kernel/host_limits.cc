#include "sentry/kernel/host_limits.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "sentry/base/host_files.h"

namespace sentry::kernel {
namespace {

constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max();

// The first number in `path` ("max" reads as unlimited), or -1 if unreadable.
int64_t ReadNumber(const std::string& path) {
  std::istringstream in(ReadHostFile(path).value_or(""));
  std::string word;
  if (!(in >> word)) return -1;
  if (word == "max") return kUnlimited;
  try {
    return std::stoll(word);
  } catch (...) {
    return -1;
  }
}

// The pids cgroup directory this process is in (v1, or else v2), or "".
std::string PidsCgroupDir() {
  std::istringstream in(ReadHostFile("/proc/self/cgroup").value_or(""));
  std::string line;
  std::string dir;
  while (std::getline(in, line)) {
    // v1: "N:pids:/path"; v2: "0::/path" (used if there is no v1 pids line).
    size_t a = line.find(':');
    size_t b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    std::string controllers = line.substr(a + 1, b - a - 1);
    std::string path = line.substr(b + 1);
    if (controllers == "pids") {
      dir = "/sys/fs/cgroup/pids" + path;
      break;
    }
    if (controllers.empty() && dir.empty()) dir = "/sys/fs/cgroup" + path;
  }
  return dir;
}

// The cgroup directories whose limits apply to this process: its own and its ancestors'.
std::vector<std::string> PidsCgroupDirs() {
  std::vector<std::string> dirs;
  std::string dir = PidsCgroupDir();
  while (!dir.empty()) {
    dirs.push_back(dir);
    if (dir == "/sys/fs/cgroup" || dir == "/sys/fs/cgroup/pids") break;
    dir = dir.substr(0, dir.rfind('/'));
  }
  return dirs;
}

// The headroom of the pids cgroup this process is in, over all its ancestors (each level's
// limit applies to everything below it).
int64_t CgroupHeadroom() {
  int64_t headroom = kUnlimited;
  for (const std::string& dir : PidsCgroupDirs()) {
    int64_t max = ReadNumber(dir + "/pids.max");
    int64_t current = ReadNumber(dir + "/pids.current");
    if (max >= 0 && max != kUnlimited && current >= 0) {
      headroom = std::min(headroom, max - current);
    }
  }
  return headroom;
}

// Tasks (threads) on the host now: the 4th field of /proc/loadavg is "running/total".
int64_t HostTasks() {
  std::istringstream in(ReadHostFile("/proc/loadavg").value_or(""));
  std::string a, b, c, d;
  if (!(in >> a >> b >> c >> d)) return 0;
  size_t slash = d.find('/');
  if (slash == std::string::npos) return 0;
  try {
    return std::stoll(d.substr(slash + 1));
  } catch (...) {
    return 0;
  }
}

int64_t OwnTasks() {
  std::istringstream in(ReadHostFile("/proc/self/status").value_or(""));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::stoll(line.substr(8));
  }
  return 1;
}

}  // namespace

std::vector<std::string> HostLimitFiles() {
  std::vector<std::string> files;
  for (const std::string& dir : PidsCgroupDirs()) {
    files.push_back(dir + "/pids.max");
    files.push_back(dir + "/pids.current");
  }
  return files;
}

int64_t DefaultTaskLimit(int host_tasks_per_task) {
  int64_t headroom = CgroupHeadroom();
  int64_t host_tasks = HostTasks();
  for (const char* knob : {"/proc/sys/kernel/threads-max", "/proc/sys/kernel/pid_max"}) {
    int64_t max = ReadNumber(knob);
    if (max > 0) headroom = std::min(headroom, max - host_tasks);
  }
  struct rlimit rl;
  if (geteuid() != 0 && getrlimit(RLIMIT_NPROC, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    headroom = std::min(headroom, static_cast<int64_t>(rl.rlim_cur) - OwnTasks());
  }
  if (headroom == kUnlimited) return kMaxGuestTasks;
  int64_t tasks = (headroom - kReservedHostTasks) / std::max(host_tasks_per_task, 1);
  return std::clamp<int64_t>(tasks, 1, kMaxGuestTasks);
}

}  // namespace sentry::kernel
