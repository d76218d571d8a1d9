// filesystem.denyRead and allowRead: which host files the gofer hides from the guest.
//
// The gofer hides files by identity (device, inode), not by path: a hidden file is absent
// under every name and every route the guest can take to it (symlinks, "..",
// /proc/self/root, its own bind mounts, --bind and --workspace of a directory above it),
// since every route ends in the gofer's walk (gofer/server_internal.h). Paths are resolved
// once, at start-up.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sentry::shim {

// The paths of the entries of directory `dir` (without "." and ".."); none if unreadable.
std::vector<std::string> ChildPaths(const std::string& dir);

// The default filesystem.denyRead (docs/sentry-run.md); "~/" stands for every home.
const std::vector<std::string>& DefaultDenyRead();

// The homes "~/" stands for: /root, each directory in /home, and `caller_home`.
std::vector<std::string> Homes(const std::string& caller_home);

// "~/x" becomes x in each of `homes`; other paths stay as they are.
std::vector<std::string> ExpandHomes(const std::vector<std::string>& paths,
                                     const std::vector<std::string>& homes);

// The (device, inode) of each host file that `deny` hides, `allow` re-opening paths inside a
// denied one: a denied path itself (and its target if it is a symlink) or, when an allowed
// path lies inside it, each of its entries not on the way to an allowed path, recursively.
// Paths that do not exist (or that the caller cannot stat) are skipped.
std::vector<std::pair<uint64_t, uint64_t>> HiddenFiles(const std::vector<std::string>& deny,
                                                       const std::vector<std::string>& allow);

}  // namespace sentry::shim
