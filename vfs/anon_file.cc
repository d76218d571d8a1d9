#include "vfs/anon_file.h"

#include <cstring>

namespace sentry::vfs {

Result<void> AnonFile::Stat(struct stat* st) {
  // The one anonymous inode: device 0:14 and inode 1 are arbitrary but stable.
  static const struct timespec kBorn = NowTimespec();
  memset(st, 0, sizeof(*st));
  st->st_dev = 14;
  st->st_ino = 1;
  st->st_mode = S_IRUSR | S_IWUSR;
  st->st_nlink = 1;
  st->st_blksize = 4096;
  st->st_atim = st->st_mtim = st->st_ctim = kBorn;
  return Ok();
}

}  // namespace sentry::vfs
