// Hiding and write-protecting guest paths once the guest's file system is built: an OCI
// config's linux.maskedPaths and linux.readonlyPaths (Docker's /proc/kcore, /proc/sys, ...).
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "vfs/vfs.h"

namespace sentry::shim {

// Masks each of `masked` as runc does: a file gets the guest's /dev/null bound over it, a
// directory an empty read-only tmpfs. Then each of `readonly` is bound onto itself read-only
// (for good: the guest cannot remount it writable), so writes below it fail with EROFS. A
// path the guest's file system does not have is skipped, as runc skips it. Call it after
// /dev, /proc and /sys are mounted, before any guest task runs.
absl::Status ApplyPathRestrictions(vfs::Vfs& v, const std::vector<std::string>& masked,
                                   const std::vector<std::string>& readonly);

}  // namespace sentry::shim
