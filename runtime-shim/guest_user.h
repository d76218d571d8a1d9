// What runc derives from the container's /etc/passwd for the process it starts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vfs/vfs.h"

namespace sentry::shim {

// Without HOME in `envp`, adds HOME=<the home of `uid` in the guest's /etc/passwd>, or
// HOME=/ when /etc/passwd cannot be read or has no such user: what runc does for a
// container's process (Docker's config.json carries no HOME).
void AddHomeFromPasswd(vfs::Vfs& v, uint32_t uid, std::vector<std::string>& envp);

}  // namespace sentry::shim
