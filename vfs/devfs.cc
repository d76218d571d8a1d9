// /dev: a tmpfs holding the device nodes a sandbox offers, plus /dev/shm and the fd links.
#include "vfs/devfs.h"

#include <sys/sysmacros.h>

#include "vfs/file.h"
#include "vfs/mem_inode.h"

namespace sentry::vfs {

Result<InodeRef> NewDevfs() {
  InodeRef root = NewTmpfs(0755, 0, 0);
  Creds root_creds;
  struct Node {
    const char* name;
    unsigned major, minor;
  };
  static const Node kNodes[] = {
      {"null", 1, 3}, {"zero", 1, 5},   {"full", 1, 7}, {"random", 1, 8},
      {"urandom", 1, 9}, {"tty", 5, 0}, {"ptmx", 5, 2},
  };
  for (const Node& n : kNodes) {
    SENTRY_TRY(root->Mknod(n.name, S_IFCHR | 0666, makedev(n.major, n.minor), root_creds));
  }
  auto shm = SENTRY_TRY(root->Mkdir("shm", 0777, root_creds));
  SetAttrRequest sticky;
  sticky.mask = kAttrMode;
  sticky.mode = 01777;
  SENTRY_TRY(shm->SetAttr(sticky));
  SENTRY_TRY(root->Mkdir("pts", 0755, root_creds));
  SENTRY_TRY(root->Symlink("fd", "/proc/self/fd", root_creds));
  SENTRY_TRY(root->Symlink("stdin", "/proc/self/fd/0", root_creds));
  SENTRY_TRY(root->Symlink("stdout", "/proc/self/fd/1", root_creds));
  SENTRY_TRY(root->Symlink("stderr", "/proc/self/fd/2", root_creds));
  return root;
}

}  // namespace sentry::vfs
