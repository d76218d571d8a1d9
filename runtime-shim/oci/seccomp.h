// config.json's linux.seccomp (the profile Docker, containerd and podman pass) compiled to
// the classic BPF program the Sentry installs on the container's init before it runs, with
// libseccomp as runc uses it. The guest's filter runs in the Sentry (sentry/kernel/seccomp.h),
// never on the host.
#pragma once

#include <linux/filter.h>

#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace sentry::oci {

// `profile` is the value of linux.seccomp. Errors name the field
// ("config.json: linux.seccomp.syscalls[2].action: ...").
absl::StatusOr<std::vector<sock_filter>> CompileSeccompProfile(const nlohmann::json& profile);

}  // namespace sentry::oci
