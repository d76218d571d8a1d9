// A host regular file given to the sandbox by name: an OCI bind mount of a file (Docker's
// /etc/resolv.conf, /etc/hosts and /etc/hostname, `docker run -v FILE:FILE`). The Sentry
// reaches it through one fd opened before its pivot (read-write, or read-only for a
// read-only bind): every read and write goes to the host file as it happens, so either side
// sees the other's changes at once, as through a bind mount. Changes of size go to the host
// (truncate, fallocate); changes of mode, owner or times are refused (EPERM): the Sentry
// holds no right to make them, and such files are the container manager's.
#pragma once

#include "vfs/inode.h"

namespace sentry::vfs {

// Takes ownership of `fd`, a regular file opened O_RDWR, or O_RDONLY when `read_only`.
InodeRef NewHostFileInode(int fd, bool read_only);

}  // namespace sentry::vfs
