// sentry-run's policy: what its policy file (--policy FILE, or ~/.config/sentry/policy.json)
// and the matching command-line flags decide. docs/sentry-run.md lists the keys.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "runtime-shim/deny_read.h"
#include "runtime-shim/protected_files.h"
#include "runtime-shim/sandbox.h"

namespace sentry::shim {

struct Policy {
  // filesystem.readOnly: the root is read-only outside the workspace, the allowWrite
  // directories and the scratch directories (SandboxOptions::read_only_root); false or
  // "scratch": writes anywhere land in an in-memory layer dropped at exit.
  bool read_only = true;
  // filesystem.allowWrite: host directories bound read-write at the same guest path; a
  // relative entry instead takes that path off deny_write.
  std::vector<std::string> allow_write;
  // filesystem.denyWrite: protected paths (protected_files.h), relative to each writable
  // root or absolute; the default list plus the file's.
  std::vector<std::string> deny_write = DefaultDenyWrite();
  // filesystem.denyRead: host paths the guest cannot see ("~/" for every home), the default
  // list (deny_read.h) plus the file's; allowRead re-opens paths inside them.
  std::vector<std::string> deny_read = DefaultDenyRead();
  std::vector<std::string> allow_read;
  // network.mode "host" (--net=host), and its rules as written (netstack/policy.h).
  bool net_host = false;
  std::vector<std::string> allowed_domains;
  std::vector<std::string> denied_domains;
  // network.publish (--publish): "HOSTPORT[:GUESTPORT]" as written; needs mode "host".
  std::vector<std::string> publish;
  // limits.pids (--pids); 0: derived from what the host gives.
  int64_t pids = 0;
  // limits.tmpSize (--tmpfs-size) as written: "512m", "25%", a byte count; empty: default.
  std::string tmp_size;
  // limits.timeout (--timeout): wall-clock milliseconds, as written; 0: none.
  int64_t timeout_ms = 0;
  std::string timeout;
  // limits.memory (--memory): bytes, as written; 0: none.
  uint64_t memory = 0;
  std::string memory_text;
  // limits.openFiles (--open-files): the guest init's RLIMIT_NOFILE; 0: the caller's.
  int64_t open_files = 0;
  // limits.cpuTime (--cpu-time): the guest init's RLIMIT_CPU in seconds; 0: none.
  int64_t cpu_time = 0;
  // limits.fileSize (--file-size): the guest init's RLIMIT_FSIZE in bytes, as written; 0: none.
  uint64_t file_size = 0;
  std::string file_size_text;
  // env.inherit: names of the caller's variables passed on ("*": all of them).
  bool inherit_all = false;
  std::vector<std::string> inherit;
  // env.set (and --env), in order; later entries win.
  std::vector<std::pair<std::string, std::string>> set;
};

// Reads the policy file at `path` over `policy`: keys the file has replace the values, keys
// it lacks keep them. An error is one line naming the file and the key, e.g.
// "policy p.json: filesystem.allowWrite[2]: expected a string".
absl::Status LoadPolicyFile(const std::string& path, Policy& policy);

// The caller's home: HOME from the environment, else the password database's; "" if none.
std::string CallerHome();

// The caller's own policy file, $HOME/.config/sentry/policy.json (HOME from the environment,
// else the password database); empty if there is no home.
std::string DefaultPolicyPath();

// The policy as a policy file (every key, two-space indented JSON, ending in a newline).
std::string PolicyJson(const Policy& policy);

// Applies `policy` to `opts`: the root's mode, the allowWrite binds, the hidden files, the
// network, the limits and the guest's environment (inherited from this process's).
absl::Status ApplyPolicy(const Policy& policy, SandboxOptions& opts);

// The limits' values as flags and keys take them, checked; an error says what was expected.
// "none" (or "unlimited") is no limit, as --print-policy shows it.
absl::Status ParseTimeoutLimit(const std::string& text, Policy& policy);
absl::Status ParseMemoryLimit(const std::string& text, Policy& policy);
absl::Status ParseFileSizeLimit(const std::string& text, Policy& policy);
// The most open files (1 to 1048576, Linux's nr_open) and CPU seconds (positive).
absl::Status ParseOpenFilesLimit(const std::string& text, Policy& policy);
absl::Status ParseCpuTimeLimit(const std::string& text, Policy& policy);

}  // namespace sentry::shim
