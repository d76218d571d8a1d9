// The sandbox's /dev (see devfs.cc).
#pragma once

#include "vfs/inode.h"

namespace sentry::vfs {

Result<InodeRef> NewDevfs();

}  // namespace sentry::vfs
