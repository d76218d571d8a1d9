// inotify: watches on inodes and the events the VFS and the file syscalls report to them.
//
// A watch ties an inotify instance (the file inotify_init returns) to an inode. The instance
// owns its watches (wd -> inode, mask) and keeps the inode alive; the inode keeps a list of
// (instance, wd) pairs, weakly, so reporting an event needs only the inode. Events about a
// directory entry go to the directory's watches with the entry's name, then to the entry's
// own watches without one, as Linux orders them.
//
// Lock order: InotifyFile::ev_mu_ -> InodeWatches::mu_ -> WaitQueue. Reporting copies an
// inode's list under InodeWatches::mu_ and then takes each instance's ev_mu_ on its own.
#pragma once

#include <sys/inotify.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "vfs/file.h"

namespace sentry::vfs {

class InotifyFile;

// The watches on one inode (Inode::watches()); only inotify.cc touches the list.
struct InodeWatches {
  struct Entry {
    std::weak_ptr<InotifyFile> owner;
    const InotifyFile* id;  // owner's address, to find the entry after owner expired
    int wd;
  };
  absl::Mutex mu_;
  std::vector<Entry> entries_ ABSL_GUARDED_BY(mu_);
};

// True while some watch exists anywhere: every reporting path starts with this check, so
// the file syscalls pay nothing when inotify is not in use.
bool InotifyActive();

// Reports `mask` (IN_*) to the watches on `inode` itself. IN_ISDIR is added for a
// directory (but not to IN_DELETE_SELF, IN_MOVE_SELF and IN_IGNORED, as on Linux).
void NotifyInode(Inode& inode, uint32_t mask, uint32_t cookie = 0);
// Reports `mask` to the watches on directory `dir` about its entry `name`.
void NotifyChild(Inode& dir, uint32_t mask, const std::string& name, bool is_dir,
                 uint32_t cookie = 0);
// Once `inode` has neither links nor open files: IN_DELETE_SELF, then IN_IGNORED and the
// end of every watch on it.
void MaybeDeleteSelf(Inode& inode);
// A cookie tying an IN_MOVED_FROM to its IN_MOVED_TO.
uint32_t NewMoveCookie();
// The file side: `mask` on an open file and, with its name, on its parent directory.
void NotifyFile(const FileDescription& f, uint32_t mask);

// inotify_init1(2): flags IN_NONBLOCK and IN_CLOEXEC (the caller applies the latter).
Result<FileRef> NewInotify(int flags);
bool IsInotify(const FileDescription& f);
// inotify_add_watch(2) on a resolved inode: returns the watch descriptor. EINVAL if `f` is
// no inotify instance.
Result<int> AddWatch(const FileRef& f, const InodeRef& inode, uint32_t mask);
// inotify_rm_watch(2).
Result<void> RemoveWatch(const FileRef& f, int wd);

}  // namespace sentry::vfs
