// The gofer's table of the handles it gave the Sentry.
//
// A directory handle owns one host fd (O_RDONLY|O_DIRECTORY|O_NOFOLLOW, or O_PATH when the
// directory cannot be read), so it keeps naming the same directory wherever it moves. Any
// other handle owns no fd — the host fd limit is far below the number of files a `find /usr`
// walks — and names its file as (parent directory handle, name); every operation reaches the
// file through *at() calls on the parent's fd that never follow a symlink. The table keeps
// those names right when files are renamed or removed through the gofer.
//
// A directory that is a host mount the gofer does not enter (submounts.h) is *sealed*: its
// handle owns no fd at all, only the attributes it shows (an empty read-only directory).
//
// Single-threaded: the gofer serves one request at a time.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "gofer/client.h"

namespace sentry::gofer {

struct HandleEntry {
  bool is_dir = false;
  size_t attach = 0;  // index of the attach point this file lives under

  // Directories only.
  int fd = -1;         // -1 if sealed
  bool opath = false;  // fd is O_PATH: no getdents/fchmod/f*xattr through it
  dev_t dev = 0;       // identity, to find the handles named in it
  ino_t ino = 0;
  uint64_t mnt_id = 0;  // the host mount it is on (statx STATX_MNT_ID), 0 if unknown
  // Set iff sealed: what Stat shows. Every other op sees an empty read-only directory.
  std::unique_ptr<struct stat> sealed;

  // Everything else. `name` is empty once the name was removed or replaced by another file.
  Handle parent = 0;  // holds a reference on the parent entry
  std::string name;
  // In by_name_: the file lies under a writable attach point, where the gofer's own unlinks
  // and renames must keep its name right. Under a read-only one nothing is ever removed or
  // renamed through the gofer, and a walk of a read-only tree (du, find) need not pay for the
  // index (5% of the Sentry's time for du -s /usr/share/man in direct mode).
  bool indexed = false;

  // One reference while the client holds the handle, one per child entry naming it `parent`.
  int refs = 1;
  bool client_open = true;
};

class HandleTable {
 public:
  // Handles are numbered from `first` up (the Sentry's own table in direct mode numbers
  // them apart from the gofer's, client.h).
  explicit HandleTable(Handle first = 1) : next_(first) {}
  ~HandleTable();
  HandleTable(const HandleTable&) = delete;
  HandleTable& operator=(const HandleTable&) = delete;

  // Adds a directory handle that owns `fd`; `st` is fstat(fd), `mnt_id` its mount's id.
  Handle AddDir(int fd, bool opath, const struct stat& st, uint64_t mnt_id, size_t attach);
  // Adds a sealed directory handle (no fd) that shows `st`.
  Handle AddSealedDir(const struct stat& st, size_t attach);
  // Adds a handle for `name` in directory handle `parent` (which must be live). `indexed`:
  // whether Removed and Renamed must find it (HandleEntry::indexed).
  Handle AddFile(Handle parent, std::string name, bool indexed = true);

  // The entry of a handle the client holds, or nullptr.
  HandleEntry* Get(Handle h);
  // The directory entry `e` (a non-directory) is named in.
  HandleEntry& ParentOf(const HandleEntry& e);

  // The client gives up `h`. Unknown handles are ignored.
  void Close(Handle h);

  // `name` in directory `dir` was unlinked, or replaced by a rename: handles naming it now
  // name nothing.
  void Removed(const HandleEntry& dir, const std::string& name);
  // renameat2 moved (old_dir, old_name) to (new_dir, new_name), or swapped them if
  // `exchange`. Handles naming the moved files follow them.
  // Both directory handles must be live.
  void Renamed(Handle old_dir, const std::string& old_name, Handle new_dir,
               const std::string& new_name, bool exchange);

  size_t size() const { return entries_.size(); }

 private:
  static bool SameDir(const HandleEntry& a, const HandleEntry& b) {
    return a.dev == b.dev && a.ino == b.ino;
  }
  // The non-directory handles named `name` in a directory that is `dir`.
  std::vector<Handle> Named(const HandleEntry& dir, const std::string& name);
  // Gives non-directory `h` a new name ("" for none), keeping by_name_ in step.
  void SetName(Handle h, HandleEntry& e, std::string name);
  void Unref(Handle h);

  std::unordered_map<Handle, HandleEntry> entries_;  // node-based: entry pointers are stable
  // Non-directory handles by their non-empty name, so that unlink and rename do not scan
  // every handle.
  std::unordered_multimap<std::string, Handle> by_name_;
  Handle next_;
};

}  // namespace sentry::gofer
