#include "runtime-shim/memory_cgroup.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace sentry::shim {
namespace {

constexpr char kV1Root[] = "/sys/fs/cgroup/memory";
constexpr char kV2Root[] = "/sys/fs/cgroup";

// This process's path in the hierarchy whose /proc/self/cgroup line has `controllers`
// ("memory" for v1, "" for the v2 line "0::/path").
std::string OwnGroup(const std::string& controllers) {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::string list = line.substr(a + 1, b - a - 1);
    bool match = controllers.empty()
                     ? list.empty() && line.compare(0, a, "0") == 0
                     : ("," + list + ",").find("," + controllers + ",") != std::string::npos;
    if (match) return line.substr(b + 1);
  }
  return "";
}

absl::Status WriteFile(const std::string& path, const std::string& value) {
  std::ofstream out(path);
  out << value;
  out.flush();
  if (!out) return absl::PermissionDeniedError(path + ": " + strerror(errno));
  return absl::OkStatus();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

}  // namespace

absl::StatusOr<std::unique_ptr<MemoryCgroup>> MemoryCgroup::Create(uint64_t limit_bytes) {
  bool v2 = false;
  std::string parent;
  if (Exists(std::string(kV1Root) + "/memory.limit_in_bytes")) {
    parent = std::string(kV1Root) + OwnGroup("memory");
  } else if (ReadFile(std::string(kV2Root) + "/cgroup.controllers").find("memory") !=
             std::string::npos) {
    v2 = true;
    parent = std::string(kV2Root) + OwnGroup("");
  } else {
    return absl::UnavailableError("the host has no memory cgroup controller");
  }
  while (parent.size() > 1 && parent.back() == '/') parent.pop_back();
  std::string dir = parent + "/sentry-run-" + std::to_string(getpid());
  if (mkdir(dir.c_str(), 0755) != 0) {
    return absl::PermissionDeniedError("mkdir " + dir + ": " + strerror(errno));
  }
  auto group = std::unique_ptr<MemoryCgroup>(new MemoryCgroup(dir, parent, v2));
  std::string limit = std::to_string(limit_bytes);
  absl::Status s =
      v2 ? WriteFile(dir + "/memory.max", limit) : WriteFile(dir + "/memory.limit_in_bytes", limit);
  if (!s.ok()) return s;
  // Swap would let the group hold more than the limit: none for v2, and the same bound on
  // memory+swap for v1 when the host accounts swap (memsw files exist).
  if (v2 && Exists(dir + "/memory.swap.max")) (void)WriteFile(dir + "/memory.swap.max", "0");
  if (!v2 && Exists(dir + "/memory.memsw.limit_in_bytes")) {
    (void)WriteFile(dir + "/memory.memsw.limit_in_bytes", limit);
  }
  return group;
}

MemoryCgroup::~MemoryCgroup() {
  KillAll();
  // The last processes' memory is uncharged shortly after they are reaped: retry a little.
  for (int i = 0; i < 50 && rmdir(dir_.c_str()) != 0 && errno == EBUSY; i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

absl::Status MemoryCgroup::Join(pid_t pid) {
  return WriteFile(dir_ + "/cgroup.procs", std::to_string(pid == 0 ? getpid() : pid));
}

absl::Status MemoryCgroup::Leave(pid_t pid) {
  return WriteFile(parent_ + "/cgroup.procs", std::to_string(pid == 0 ? getpid() : pid));
}

uint64_t MemoryCgroup::OomKills() const {
  std::istringstream in(ReadFile(dir_ + (v2_ ? "/memory.events" : "/memory.oom_control")));
  std::string key;
  uint64_t value = 0;
  while (in >> key >> value) {
    if (key == "oom_kill") return value;
  }
  return 0;
}

void MemoryCgroup::KillAll() {
  for (int round = 0; round < 200; round++) {
    std::istringstream in(ReadFile(dir_ + "/cgroup.procs"));
    std::vector<pid_t> pids;
    pid_t pid;
    while (in >> pid) pids.push_back(pid);
    if (pids.empty()) return;
    for (pid_t p : pids) kill(p, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace sentry::shim
