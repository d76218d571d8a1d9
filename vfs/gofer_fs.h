// The gofer file system: inodes that name host files held by the gofer process.
#pragma once

#include <memory>
#include <string>

#include "gofer/client.h"
#include "vfs/inode.h"

namespace sentry::vfs {

struct GoferSuper;

// The root directory of gofer attach point `attach`. `read_only` reports whether the gofer
// enforces read-only access there (the mount should then be MS_RDONLY too).
Result<InodeRef> NewGoferRoot(std::shared_ptr<gofer::Client> client, const std::string& attach,
                              bool* read_only);

}  // namespace sentry::vfs
