// The overlay file system (see overlay.cc): `lower_root` read-only below, `upper_root` (an
// empty tmpfs) above, taking every change.
#pragma once

#include <sys/stat.h>

#include <optional>
#include <string>
#include <vector>

#include "vfs/inode.h"

namespace sentry::vfs {

struct OverlayOptions {
  // Paths relative to the overlay's root that stay read-only (EROFS), with everything below
  // them, and whose parents' names on the way cannot be removed or renamed: sentry-run's
  // protected files in a workspace under review, where the gofer below never sees a write.
  std::vector<std::string> protected_paths;
};

Result<InodeRef> NewOverlayRoot(InodeRef upper_root, InodeRef lower_root,
                                OverlayOptions options = {});

// One difference between an overlay and its lower tree, as `sentry-run diff` shows it.
struct OverlayChange {
  enum class Kind { kDelete, kDir, kFile, kSymlink };
  Kind kind;
  std::string path;   // relative to the overlay's root, '/'-separated, never empty
  uint32_t mode = 0;  // st_mode of what is there now (kDelete: of what was there)
  InodeRef now;       // the upper inode: content or link target (null for kDelete)
  InodeRef before;    // the lower's inode at `path` when there is one
  // The lower file's size and mtime when the guest first changed it (its copy-up), else
  // when this list was made: what the host must still have for `sentry-run apply`.
  std::optional<struct stat> base;
};

// Every change of the overlay whose root is `root`, parents before children, a deletion
// before what replaces it. Only the upper layer and the names the guest removed are walked.
Result<std::vector<OverlayChange>> OverlayChanges(const InodeRef& root);

}  // namespace sentry::vfs
