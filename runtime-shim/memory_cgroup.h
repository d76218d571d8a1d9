// A host memory cgroup of its own for one sandbox (sentry-run --memory): the Sentry, the
// gofer and the stubs run in it, so that the host kernel bounds what the Sentry's own
// accounting cannot see (pages the guest touches in shared mappings, the Sentry's own heap)
// and OOM-kills inside the sandbox, never outside. cgroup v1 (the memory hierarchy) and v2
// (a unified hierarchy with the memory controller) are both handled; the new group is made
// below this process's own, so the limits above it still apply.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"

namespace sentry::shim {

class MemoryCgroup {
 public:
  // Makes the group with `limit_bytes` as its hard limit (swap included where the host
  // accounts it). An error says why none could be made (no controller, no permission).
  static absl::StatusOr<std::unique_ptr<MemoryCgroup>> Create(uint64_t limit_bytes);
  ~MemoryCgroup();  // KillAll, then removes the directory

  const std::string& path() const { return dir_; }
  // Moves process `pid` (0: this one) into the group, or back to where this process was.
  absl::Status Join(pid_t pid);
  absl::Status Leave(pid_t pid);
  // How many processes the host's OOM killer has killed in the group.
  uint64_t OomKills() const;
  // SIGKILLs every process in the group until none is left (or a few seconds have passed).
  void KillAll();

 private:
  MemoryCgroup(std::string dir, std::string parent, bool v2)
      : dir_(std::move(dir)), parent_(std::move(parent)), v2_(v2) {}
  std::string dir_;     // the group's directory
  std::string parent_;  // the directory of the group this process came from
  bool v2_;
};

}  // namespace sentry::shim
