// Running config.json hooks, and what they left in the sandbox's network namespace.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "runtime-shim/oci/container.h"
#include "runtime-shim/oci/oci.h"

namespace sentry::oci {

// Runs `hook` as runc does: argv from args (or just the path), env from env, the container's
// state JSON on stdin; a non-zero exit or a timeout is an error naming the hook.
absl::Status RunHook(const std::string& kind, const Hook& hook, const std::string& state_json);

// The state JSON a hook gets on stdin, with `status`.
std::string HookState(const ContainerState& st, const char* status);
// Runs the container's `kind` hooks (poststart, poststop) from its state; a failure is
// logged and the others still run, as the runtime spec asks for these two.
void RunLaterHooks(const Globals& g, const ContainerState& st, const std::string& kind,
                   const char* status);

// The network interfaces of `pid`'s network namespace other than lo.
std::vector<std::string> ExtraInterfaces(pid_t pid);

}  // namespace sentry::oci
