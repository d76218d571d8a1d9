// The overlay file system (see overlay.cc): `lower_root` read-only below, `upper_root` (an
// empty tmpfs) above, taking every change.
#pragma once

#include "vfs/inode.h"

namespace sentry::vfs {

Result<InodeRef> NewOverlayRoot(InodeRef upper_root, InodeRef lower_root);

}  // namespace sentry::vfs
