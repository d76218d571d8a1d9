// Globs in the policy's paths (filesystem.denyRead, allowRead, denyWrite): `*`, `?` and
// `[...]` match within one path component (a leading dot included, as in .gitignore and srt's
// settings, so that `~/*.pem` covers `~/.key.pem`), and a component that is exactly `**`
// matches any number of components, none included. Like the rest of the filesystem policy,
// a glob is expanded once, at start-up, to the host paths that exist then.
#pragma once

#include <string>
#include <vector>

namespace sentry::shim {

bool HasGlob(const std::string& path);

// Empty if `pattern` is a usable glob, else what is wrong with it.
std::string CheckGlob(const std::string& pattern);

// The existing host paths that absolute `pattern` matches (none if it matches nothing). A
// `**` walk does not follow symlinks, does not cross into other mounts (device numbers), and
// stops after kMaxGlobEntries directory entries (with a warning on stderr).
std::vector<std::string> ExpandGlob(const std::string& pattern);
inline constexpr int kMaxGlobEntries = 200000;

// Each path of `paths` as it is, or, for a glob, the paths it matches.
std::vector<std::string> ExpandGlobs(const std::vector<std::string>& paths);

}  // namespace sentry::shim
