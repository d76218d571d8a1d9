// linux.resources and cgroupsPath: the container's host cgroup (runtime-shim/cgroup.h), made
// at create, changed by `update`, read by `events`, removed at delete.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "runtime-shim/cgroup.h"

namespace sentry::oci {

struct Globals;

struct Resources {
  shim::CgroupLimits limits;
  // Parts given that are not applied (devices, blockIO, hugepageLimits, ...), for --debug.
  std::vector<std::string> ignored;
};

// Reads an OCI LinuxResources object (config.json's linux.resources, `update`'s stdin).
// Docker's zeros ("shares": 0, "reservation": 0) mean "not set", as runc reads them. Errors
// name the field under `where` ("linux.resources.memory.limit: expected a number").
absl::StatusOr<Resources> ParseResources(const nlohmann::json& r, const std::string& where);

// Whether `l` asks for any limit at all.
bool HasLimits(const shim::CgroupLimits& l);

// The group's name below the runtime's own cgroup: cgroupsPath ("/docker/ID"), its systemd
// form "SLICE:PREFIX:NAME" as SLICE/PREFIX-NAME.scope, or the container's id if empty.
std::string CgroupName(const std::string& cgroups_path, const std::string& id);

// runc's `events` object of type "stats" for container `id`.
nlohmann::json StatsEvent(const std::string& id, const shim::CgroupStats& st);

struct UpdateFlags {
  std::string id;
  std::string resources;  // --resources FILE, or "-" for stdin
  // runc's single flags, as given (empty: not given).
  std::string memory, memory_swap, memory_reservation, pids_limit, cpu_shares, cpu_quota,
      cpu_period, cpuset_cpus, cpuset_mems;
};

// Writes new limits to a running (or created, or paused) container's cgroup, and the
// memory limit to its Sentry's own accounting.
absl::Status Update(const Globals& g, const UpdateFlags& f);
// One stats event (--stats), or one every `interval_ms` (and an "oom" event when the host
// OOM-kills in the container) until the container stops.
absl::Status Events(const Globals& g, const std::string& id, bool stats, int64_t interval_ms);

}  // namespace sentry::oci
