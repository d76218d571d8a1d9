// Protected files: paths inside the writable binds (the workspace) that stay read-only, so
// that a sandboxed program cannot plant code the user runs later outside the sandbox (shell
// rc files, git hooks and config, editor settings). filesystem.denyWrite adds to the default
// list, a relative filesystem.allowWrite entry takes one off.
//
// Like hidden files (deny_read.h), they are enforced by the gofer by identity, resolved at
// start-up: an existing protected file or directory (and everything in a protected
// directory) cannot be written, changed, added to or removed from, and each name on the way
// to it in a writable root (".git" for ".git/hooks") cannot be removed or renamed, nor
// created where it is missing and its directory exists.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace sentry::shim {

// The default protected paths, relative to each writable root (docs/sentry-run.md).
const std::vector<std::string>& DefaultDenyWrite();

struct ProtectedFiles {
  std::vector<std::pair<uint64_t, uint64_t>> files;                // (device, inode)
  std::vector<std::tuple<uint64_t, uint64_t, std::string>> names;  // (device, inode, name)
};

// What protecting `paths` means on the host: a relative path is taken in each of
// `writable_roots`, an absolute one as it is.
ProtectedFiles FindProtectedFiles(const std::vector<std::string>& paths,
                                  const std::vector<std::string>& writable_roots);

}  // namespace sentry::shim
