// The temporary root filesystem of the kernel-core stage: a synthetic, read-only tree that
// exposes a fixed set of host directories (read-only) plus /dev. Every path is resolved here,
// in guest terms, symlink by symlink, so a host symlink can never lead outside the exposed
// set. The gofer-backed VFS of the next stage replaces it.
#pragma once

#include <string>
#include <vector>

#include "vfs/file.h"

namespace sentry::vfs {

class HostRoot {
 public:
  // `exposed` are absolute, normalized host directories, visible at the same guest paths.
  explicit HostRoot(std::vector<std::string> exposed);

  struct Node {
    enum class Kind { kHost, kSyntheticDir, kDevice } kind;
    std::string path;  // canonical guest path (symlinks resolved)
  };
  // Resolves an absolute guest path. `follow` applies to the last component.
  Result<Node> Resolve(const std::string& path, bool follow) const;

  Result<FileRef> Open(const std::string& path, int flags, bool follow) const;
  Result<void> Stat(const std::string& path, bool follow, struct stat* st) const;
  Result<std::string> ReadLink(const std::string& path) const;

  // Lexically joins `base` (absolute) and `path`, removing "." and empty components.
  static std::string Join(const std::string& base, const std::string& path);

 private:
  bool IsExposed(const std::string& p) const;
  bool IsSyntheticDir(const std::string& p) const;
  std::vector<std::string> SyntheticChildren(const std::string& dir) const;

  std::vector<std::string> exposed_;
};

}  // namespace sentry::vfs
