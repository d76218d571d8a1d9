#include "vfs/nsfs.h"

#include <sys/sysmacros.h>

#include <atomic>

namespace sentry::vfs {

uint64_t NewNsInode() {
  static std::atomic<uint64_t> next{0xF0000000};
  return next.fetch_add(1);
}

const char* NsKindName(int type) {
  switch (type) {
    case CLONE_NEWNS:
      return "mnt";
    case CLONE_NEWUTS:
      return "uts";
    case CLONE_NEWIPC:
      return "ipc";
    case CLONE_NEWUSER:
      return "user";
    case CLONE_NEWPID:
      return "pid";
    case CLONE_NEWNET:
      return "net";
    case CLONE_NEWCGROUP:
      return "cgroup";
    case CLONE_NEWTIME:
      return "time";
  }
  return "ns";
}

std::string NsFile::Name() const {
  return std::string(NsKindName(type_)) + ":[" + std::to_string(ino_) + "]";
}

Result<void> NsFile::Stat(struct stat* st) {
  *st = {};
  st->st_dev = makedev(0, 4);  // nsfs's anonymous device, as on Linux
  st->st_ino = ino_;
  st->st_mode = S_IFREG | 0444;
  st->st_nlink = 1;
  st->st_blksize = 4096;
  return Ok();
}

}  // namespace sentry::vfs
