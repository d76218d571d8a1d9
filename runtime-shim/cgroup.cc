#include "runtime-shim/cgroup.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

namespace sentry::shim {

using cgroup_files::ReadFile;
using cgroup_files::ReadKeyed;
using cgroup_files::ReadNumber;

namespace {

constexpr char kRoot[] = "/sys/fs/cgroup";
// The v1 controllers a sandbox's group is made in: the limits' and the statistics' (cpuacct).
const std::set<std::string> kV1Controllers = {"memory", "pids", "cpu", "cpuacct", "cpuset"};

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string part;
  while (std::getline(in, part, sep)) out.push_back(part);
  return out;
}

absl::Status WriteFile(const std::string& path, const std::string& value) {
  std::ofstream out(path);
  out << value;
  out.flush();
  if (!out) return absl::PermissionDeniedError("write " + path + ": " + strerror(errno));
  return absl::OkStatus();
}

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

// mkdir -p; the directories it made, outermost first, go to `made`.
absl::Status MakeDirs(const std::string& path, std::vector<std::string>* made) {
  for (size_t i = 1; i <= path.size(); i++) {
    if (i < path.size() && path[i] != '/') continue;
    std::string cur = path.substr(0, i);
    if (mkdir(cur.c_str(), 0755) == 0) {
      made->push_back(cur);
    } else if (errno != EEXIST) {
      return absl::PermissionDeniedError("mkdir " + cur + ": " + strerror(errno));
    }
  }
  return absl::OkStatus();
}

std::string Clean(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

// A v1 hierarchy this process is in: its mount directory and this process's group there.
struct Hierarchy {
  std::string mount;  // /sys/fs/cgroup/memory, /sys/fs/cgroup/cpu,cpuacct
  std::string own;    // /process_api/123
};

// From /proc/self/cgroup: the v1 hierarchies with one of kV1Controllers, mounted where
// systemd and Docker mount them; empty if none (a v2-only host).
std::vector<Hierarchy> V1Hierarchies() {
  std::vector<Hierarchy> out;
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::string list = line.substr(a + 1, b - a - 1);
    bool wanted = false;
    for (const auto& c : Split(list, ',')) wanted = wanted || kV1Controllers.count(c) > 0;
    std::string mount = std::string(kRoot) + "/" + list;
    if (wanted && Exists(mount + "/cgroup.procs")) out.push_back({mount, line.substr(b + 1)});
  }
  return out;
}

std::string OwnV2Group() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("0::", 0) == 0) return line.substr(3);
  }
  return "/";
}

std::string Limit(int64_t v) { return v < 0 ? "-1" : std::to_string(v); }
std::string MaxOr(int64_t v) { return v < 0 ? "max" : std::to_string(v); }

}  // namespace

namespace cgroup_files {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int64_t ReadNumber(const std::string& path) {
  std::string text = ReadFile(path);
  try {
    return text.empty() || !isdigit(static_cast<unsigned char>(text[0])) ? -1 : std::stoll(text);
  } catch (...) {
    return -1;
  }
}

std::map<std::string, uint64_t> ReadKeyed(const std::string& path) {
  std::map<std::string, uint64_t> out;
  std::istringstream in(ReadFile(path));
  std::string key;
  uint64_t value;
  while (in >> key >> value) out[key] = value;
  return out;
}

}  // namespace cgroup_files

uint64_t SharesToWeight(uint64_t shares) {
  if (shares == 0) return 0;
  if (shares < 2) shares = 2;
  if (shares > 262144) shares = 262144;
  return 1 + ((shares - 2) * 9999) / 262142;
}

absl::StatusOr<std::unique_ptr<Cgroup>> Cgroup::Create(const std::string& name,
                                                       const CgroupLimits& limits) {
  std::string rel = name.empty() || name[0] != '/' ? "/" + name : name;
  std::vector<std::string> dirs, parents, made;
  bool v2 = false;
  std::vector<Hierarchy> v1 = V1Hierarchies();
  if (!v1.empty()) {
    for (const auto& h : v1) {
      parents.push_back(Clean(h.mount + h.own));
      dirs.push_back(Clean(h.mount + Clean(h.own) + rel));
    }
  } else if (Exists(std::string(kRoot) + "/cgroup.controllers")) {
    v2 = true;
    std::string own = Clean(std::string(kRoot) + OwnV2Group());
    parents.push_back(own);
    dirs.push_back(Clean(own + rel));
  } else {
    return absl::UnavailableError("the host has no cgroup hierarchy at /sys/fs/cgroup");
  }
  auto group = std::unique_ptr<Cgroup>(new Cgroup(v2, dirs, parents));
  absl::Status s;
  for (const auto& dir : dirs) {
    if (s.ok()) s = MakeDirs(dir, &made);
  }
  if (s.ok() && v2) {
    // Each new level hands the controllers down to the next (v2 enables them per subtree).
    for (const auto& dir : made) {
      (void)WriteFile(dir.substr(0, dir.rfind('/')) + "/cgroup.subtree_control",
                      "+memory +pids +cpu +cpuset");
    }
  }
  if (s.ok() && !v2) {
    // A new v1 cpuset group starts with no CPUs and no memory nodes, and no process may join
    // it until it has some: its parent's, as the kernel's cgroup.clone_children would give.
    for (const auto& dir : made) {
      std::string up = dir.substr(0, dir.rfind('/'));
      for (const char* f : {"/cpuset.cpus", "/cpuset.mems"}) {
        if (Exists(dir + f)) (void)WriteFile(dir + f, ReadFile(up + f));
      }
    }
  }
  if (s.ok()) s = group->Apply(limits);
  if (!s.ok()) {
    for (auto it = made.rbegin(); it != made.rend(); ++it) rmdir(it->c_str());
    return s;
  }
  return group;
}

std::unique_ptr<Cgroup> Cgroup::Open(bool v2, std::vector<std::string> dirs) {
  return std::unique_ptr<Cgroup>(new Cgroup(v2, std::move(dirs), {}));
}

std::string Cgroup::Dir(const std::string& controller) const {
  if (v2_) return dirs_.empty() ? "" : dirs_[0];
  std::string prefix = std::string(kRoot) + "/";
  for (const auto& dir : dirs_) {
    if (dir.rfind(prefix, 0) != 0) continue;
    std::string list = dir.substr(prefix.size());
    list = list.substr(0, list.find('/'));
    for (const auto& c : Split(list, ',')) {
      if (c == controller) return dir;
    }
  }
  return "";
}

std::string Cgroup::path() const { return Dir("memory").empty() ? dirs_[0] : Dir("memory"); }

absl::Status Cgroup::Apply(const CgroupLimits& l) { return v2_ ? ApplyV2(l) : ApplyV1(l); }

absl::Status Cgroup::ApplyV1(const CgroupLimits& l) {
  auto need = [&](const char* controller, bool wanted) -> absl::StatusOr<std::string> {
    std::string dir = Dir(controller);
    if (wanted && dir.empty()) {
      return absl::UnavailableError(std::string("the host has no ") + controller +
                                    " cgroup controller");
    }
    return dir;
  };
  auto mem = need("memory", l.memory || l.memory_swap || l.memory_reservation);
  if (!mem.ok()) return mem.status();
  if (l.memory || l.memory_swap) {
    // memory+swap may never be below memory: when the memory limit grows past it, memsw
    // goes first (and grows with it if no swap figure was given); when it shrinks, after.
    std::string limit_file = *mem + "/memory.limit_in_bytes";
    std::string memsw = *mem + "/memory.memsw.limit_in_bytes";
    bool has_memsw = Exists(memsw);
    int64_t cur = ReadNumber(limit_file), cur_sw = has_memsw ? ReadNumber(memsw) : -1;
    std::optional<int64_t> sw = l.memory_swap;
    bool past_sw = l.memory && (*l.memory < 0 || (cur_sw >= 0 && *l.memory > cur_sw));
    if (!sw && has_memsw && past_sw) sw = *l.memory;
    bool grow = l.memory && (*l.memory < 0 || (cur >= 0 && *l.memory > cur));
    if (sw && has_memsw && grow) (void)WriteFile(memsw, Limit(*sw));
    if (l.memory) {
      absl::Status s = WriteFile(limit_file, Limit(*l.memory));
      if (!s.ok()) return s;
    }
    if (sw && has_memsw) {
      absl::Status s = WriteFile(memsw, Limit(*sw));
      if (!s.ok()) return s;
    }
  }
  if (l.memory_reservation) {
    absl::Status s = WriteFile(*mem + "/memory.soft_limit_in_bytes", Limit(*l.memory_reservation));
    if (!s.ok()) return s;
  }
  auto pids = need("pids", l.pids.has_value());
  if (!pids.ok()) return pids.status();
  if (l.pids) {
    absl::Status s = WriteFile(*pids + "/pids.max", *l.pids > 0 ? std::to_string(*l.pids) : "max");
    if (!s.ok()) return s;
  }
  auto cpu = need("cpu", l.cpu_shares || l.cpu_quota || l.cpu_period);
  if (!cpu.ok()) return cpu.status();
  std::vector<std::pair<std::string, std::string>> writes;
  if (l.cpu_shares && *l.cpu_shares > 0) {
    writes.push_back({*cpu + "/cpu.shares", std::to_string(*l.cpu_shares)});
  }
  // The period first: a quota is checked against the period in force.
  if (l.cpu_period && *l.cpu_period > 0) {
    writes.push_back({*cpu + "/cpu.cfs_period_us", std::to_string(*l.cpu_period)});
  }
  if (l.cpu_quota && *l.cpu_quota != 0) {
    writes.push_back({*cpu + "/cpu.cfs_quota_us", Limit(*l.cpu_quota)});
  }
  auto cpuset = need("cpuset", l.cpuset_cpus || l.cpuset_mems);
  if (!cpuset.ok()) return cpuset.status();
  if (l.cpuset_cpus && !l.cpuset_cpus->empty()) {
    writes.push_back({*cpuset + "/cpuset.cpus", *l.cpuset_cpus});
  }
  if (l.cpuset_mems && !l.cpuset_mems->empty()) {
    writes.push_back({*cpuset + "/cpuset.mems", *l.cpuset_mems});
  }
  for (const auto& [file, value] : writes) {
    absl::Status s = WriteFile(file, value);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status Cgroup::ApplyV2(const CgroupLimits& l) {
  const std::string& d = dirs_[0];
  std::vector<std::pair<std::string, std::string>> writes;
  if (l.memory) writes.push_back({d + "/memory.max", MaxOr(*l.memory)});
  // v2 bounds swap alone: OCI's memory+swap less the memory limit.
  if (Exists(d + "/memory.swap.max") && (l.memory || l.memory_swap)) {
    int64_t mem = l.memory.value_or(-1), sw = l.memory_swap.value_or(mem);
    writes.push_back({d + "/memory.swap.max", sw < 0 || mem < 0 ? "max" : MaxOr(sw - mem)});
  }
  if (l.memory_reservation) writes.push_back({d + "/memory.low", MaxOr(*l.memory_reservation)});
  if (l.pids) writes.push_back({d + "/pids.max", *l.pids > 0 ? std::to_string(*l.pids) : "max"});
  if (l.cpu_shares && *l.cpu_shares > 0) {
    writes.push_back({d + "/cpu.weight", std::to_string(SharesToWeight(*l.cpu_shares))});
  }
  if (l.cpu_quota || l.cpu_period) {
    std::istringstream cur(ReadFile(d + "/cpu.max"));
    std::string quota = "max", period = "100000";
    cur >> quota >> period;
    if (l.cpu_quota && *l.cpu_quota != 0) quota = MaxOr(*l.cpu_quota);
    if (l.cpu_period && *l.cpu_period > 0) period = std::to_string(*l.cpu_period);
    writes.push_back({d + "/cpu.max", quota + " " + period});
  }
  if (l.cpuset_cpus && !l.cpuset_cpus->empty())
    writes.push_back({d + "/cpuset.cpus", *l.cpuset_cpus});
  if (l.cpuset_mems && !l.cpuset_mems->empty())
    writes.push_back({d + "/cpuset.mems", *l.cpuset_mems});
  for (const auto& [file, value] : writes) {
    absl::Status s = WriteFile(file, value);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status Cgroup::Join(pid_t pid) {
  std::string who = std::to_string(pid == 0 ? getpid() : pid);
  for (const auto& dir : dirs_) {
    absl::Status s = WriteFile(dir + "/cgroup.procs", who);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status Cgroup::Leave(pid_t pid) {
  std::string who = std::to_string(pid == 0 ? getpid() : pid);
  for (const auto& dir : parents_) {
    absl::Status s = WriteFile(dir + "/cgroup.procs", who);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

uint64_t Cgroup::OomKills() const {
  std::string mem = Dir("memory");
  if (mem.empty()) return 0;
  auto keyed = ReadKeyed(mem + (v2_ ? "/memory.events" : "/memory.oom_control"));
  return keyed.count("oom_kill") ? keyed["oom_kill"] : 0;
}

void Cgroup::KillAll() {
  for (int round = 0; round < 200; round++) {
    std::vector<pid_t> pids;
    for (const auto& dir : dirs_) {
      std::istringstream in(ReadFile(dir + "/cgroup.procs"));
      pid_t pid;
      while (in >> pid) pids.push_back(pid);
    }
    if (pids.empty()) return;
    for (pid_t p : pids) kill(p, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void Cgroup::Destroy() {
  KillAll();
  // The last processes' memory is uncharged shortly after they are reaped: retry a little.
  for (const auto& dir : dirs_) {
    for (int i = 0; i < 50 && rmdir(dir.c_str()) != 0 && errno == EBUSY; i++) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
}

}  // namespace sentry::shim
