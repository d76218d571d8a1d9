// Running config.json hooks, and what they left in the sandbox's network namespace.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "runtime-shim/oci/spec.h"

namespace sentry::oci {

// Runs `hook` as runc does: argv from args (or just the path), env from env, the container's
// state JSON on stdin; a non-zero exit or a timeout is an error naming the hook.
absl::Status RunHook(const std::string& kind, const Hook& hook, const std::string& state_json);

// The network interfaces of `pid`'s network namespace other than lo.
std::vector<std::string> ExtraInterfaces(pid_t pid);

}  // namespace sentry::oci
