// Which host mounts below an attach root the gofer serves.
//
// An attach root is always served, whatever it is. Below it, a directory (or a file) that is
// the root of another mount is entered only if the policy allows that mount's file system;
// otherwise the gofer shows it as an empty read-only directory (a file: EACCES) and never
// opens anything inside. The host's pseudo file systems (proc, sysfs, devtmpfs, cgroup, ...)
// and its memory file systems (tmpfs, ramfs: runtime state such as /run and /dev/shm) are
// therefore never reachable unless the user binds one explicitly.
#pragma once

#include <optional>
#include <string_view>

namespace sentry::gofer {

enum class Submounts {
  kAuto,  // enter mounts of persistent file systems (IsPersistentFs), no others
  kNone,  // enter no mount at all: only the attach root's own file system is served
};

// "auto" or "none".
std::optional<Submounts> ParseSubmounts(std::string_view s);
const char* SubmountsName(Submounts s);

// Whether `f_type` (struct statfs) names a file system that stores files (ext4, xfs, btrfs,
// nfs, fuse, overlay, ...). An allowlist: a file system not known here is not entered.
bool IsPersistentFs(long f_type);

}  // namespace sentry::gofer
