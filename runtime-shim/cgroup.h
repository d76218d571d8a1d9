// A host cgroup of its own for one sandbox: the Sentry, the gofer and the stubs run in it, so
// that the host kernel bounds what the Sentry's own accounting cannot see (pages the guest
// touches in shared mappings, the Sentry's own heap, host threads) and OOM-kills inside the
// sandbox, never outside. Two users: sentry-run --memory (runtime-shim/supervisor.h) and the
// OCI runtime's linux.resources / cgroupsPath (create, update, events, delete).
//
// cgroup v1 (one hierarchy per controller, /sys/fs/cgroup/CONTROLLER) and v2 (the unified
// hierarchy at /sys/fs/cgroup) are both handled, chosen by what the host mounts. The group is
// made below this process's own group in each hierarchy (as if in a cgroup namespace), so
// whatever limits the caller lives under still hold for the sandbox.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace sentry::shim {

// Reading a group's files (cgroup.cc; also what Cgroup::Stats reads).
namespace cgroup_files {
std::string ReadFile(const std::string& path);
// A file holding one number; -1 if it is missing or not a number ("max").
int64_t ReadNumber(const std::string& path);
// "key value" lines (memory.stat, cpu.stat, memory.events).
std::map<std::string, uint64_t> ReadKeyed(const std::string& path);
}  // namespace cgroup_files

// What to write into a group; an unset field leaves the group's value as it is. Numbers
// follow the OCI runtime spec (LinuxResources): -1 means unlimited where Linux has one.
struct CgroupLimits {
  std::optional<int64_t> memory;       // bytes
  std::optional<int64_t> memory_swap;  // memory + swap, bytes (v1's memsw)
  std::optional<int64_t> memory_reservation;
  std::optional<int64_t> pids;  // 0 or -1: unlimited
  std::optional<uint64_t> cpu_shares;
  std::optional<int64_t> cpu_quota;  // microseconds per period; -1 or 0: unlimited
  std::optional<uint64_t> cpu_period;
  std::optional<std::string> cpuset_cpus, cpuset_mems;
};

// What `events --stats` reports (runc's names); -1: the host does not say.
struct CgroupStats {
  int64_t memory_usage = -1, memory_max_usage = -1, memory_limit = -1, memory_failcnt = -1;
  int64_t swap_usage = -1, swap_limit = -1;
  std::map<std::string, uint64_t> memory_raw;  // memory.stat
  int64_t cpu_total_ns = -1, cpu_user_ns = -1, cpu_kernel_ns = -1;
  std::vector<uint64_t> cpu_percpu_ns;
  int64_t throttled_periods = -1, throttled_count = -1, throttled_ns = -1, periods = -1;
  int64_t pids_current = -1, pids_limit = -1;  // limit 0: unlimited
  uint64_t oom_kills = 0;
};

class Cgroup {
 public:
  // Makes the group `name` ("sentry-run-123", or an OCI cgroupsPath such as "/docker/ID")
  // in every hierarchy this process is in that has one of the controllers the limits need
  // (memory, pids, cpu, cpuacct, cpuset), then applies `limits`. An error says why none
  // could be made (no controller, no permission); what was made is removed again.
  static absl::StatusOr<std::unique_ptr<Cgroup>> Create(const std::string& name,
                                                        const CgroupLimits& limits);
  // A group made earlier (its directories, as dirs() gave them), for `update`, `events` and
  // `delete`, which are other processes than the one that made it.
  static std::unique_ptr<Cgroup> Open(bool v2, std::vector<std::string> dirs);
  // Does nothing to the host's group: Destroy does.
  ~Cgroup() = default;

  bool v2() const { return v2_; }
  const std::vector<std::string>& dirs() const { return dirs_; }
  // The directory of the memory controller's group (for messages).
  std::string path() const;

  absl::Status Apply(const CgroupLimits& limits);
  // Moves process `pid` (0: this one) into the group, or back to where this process was.
  absl::Status Join(pid_t pid);
  absl::Status Leave(pid_t pid);
  // How many processes the host's OOM killer has killed in the group.
  uint64_t OomKills() const;
  CgroupStats Stats() const;
  // SIGKILLs every process in the group until none is left (or a few seconds have passed).
  void KillAll();
  // KillAll, then removes the group's directories.
  void Destroy();

 private:
  Cgroup(bool v2, std::vector<std::string> dirs, std::vector<std::string> parents)
      : v2_(v2), dirs_(std::move(dirs)), parents_(std::move(parents)) {}
  // The group's directory in the hierarchy that has `controller` ("" if none).
  std::string Dir(const std::string& controller) const;
  absl::Status ApplyV1(const CgroupLimits& limits);
  absl::Status ApplyV2(const CgroupLimits& limits);

  bool v2_;
  std::vector<std::string> dirs_;     // one per hierarchy (v2: one)
  std::vector<std::string> parents_;  // where this process was, per hierarchy (Create only)
};

// OCI's cpu.shares as cgroup v2's cpu.weight (the conversion runc and crun use).
uint64_t SharesToWeight(uint64_t shares);

}  // namespace sentry::shim
