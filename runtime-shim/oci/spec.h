// Reading an OCI bundle's config.json into SandboxOptions, and the default config.json that
// `sentry spec` writes.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "runtime-shim/cgroup.h"
#include "runtime-shim/oci/container.h"
#include "runtime-shim/sandbox.h"

namespace sentry::oci {

struct BundleSpec {
  shim::SandboxOptions sandbox;
  // The sandbox process's host network namespace: a new, empty one (so that what a hook puts
  // there, such as Docker's bridge interface, stays off the host), or the one at this path
  // (a CNI plugin's). The guest itself sees the Sentry's network stack.
  std::string netns_path;
  // prestart, createRuntime and createContainer hooks, in the order create runs them.
  std::vector<std::pair<std::string, Hook>> create_hooks;
  // startContainer, poststart and poststop hooks, which `start` and `delete` run (kept in
  // state.json). All run on the host: runc runs startContainer in the container's namespaces,
  // but the guest's namespaces are the Sentry's own, where no host program can run.
  std::vector<std::pair<std::string, Hook>> later_hooks;
  std::string rootfs;  // absolute host path of root.path
  bool terminal = false;
  int console_rows = 0, console_cols = 0;  // process.consoleSize; 0: not given
  std::map<std::string, std::string> annotations;
  // linux.cgroupsPath and linux.resources: whether the sandbox gets a host cgroup of its own
  // (either is given), its path as given, and the limits to write there.
  bool cgroup = false;
  std::string cgroups_path;
  shim::CgroupLimits limits;
  // process.oomScoreAdj, for the whole sandbox (the host's OOM killer sees its processes).
  std::optional<int> oom_score_adj;
  // linux.sysctl's net.* keys: set in the container's own network namespace (where they are
  // per namespace) before the guest starts; the others are not applied.
  std::map<std::string, std::string> net_sysctls;
  // What the config asks for that the Sentry does not provide or enforce (yet), one line
  // each, for the --debug log.
  std::vector<std::string> ignored;
};

// Reads BUNDLE/config.json. A missing required field or a field of the wrong type is an
// error naming the field ("config.json: process.args: ...").
absl::StatusOr<BundleSpec> LoadSpec(const std::string& bundle);

// A process's capabilities (`capabilities` of config.json's process or of an exec
// process.json: bounding, effective, permitted, inheritable, ambient, each an array of names
// such as "CAP_CHOWN"; a set left out is empty, as runc takes it). None if the field is
// absent or null. `where` names the object in errors ("process").
absl::StatusOr<std::optional<kernel::CapabilitySets>> ReadCapabilities(
    const nlohmann::json& process, const std::string& where);

// The same sets as JSON masks, for an exec request to the Sentry, and back.
nlohmann::json CapabilitiesToJson(const kernel::CapabilitySets& caps);
kernel::CapabilitySets CapabilitiesFromJson(const nlohmann::json& j);

// A config.json for `sentry spec`: sh in ./rootfs, like runc's default.
nlohmann::json DefaultSpec();

}  // namespace sentry::oci
