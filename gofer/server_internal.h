// The gofer's request handlers. Private to gofer/: server.cc runs the loop,
// server_lookup.cc and server_modify.cc implement the ops (see protocol.h for each op's
// arguments and results).
//
// Security contract, enforced in every handler:
//  - a client-supplied name is one path component (CheckName);
//  - a host file is reached only by *at() calls relative to a directory fd the table holds,
//    with O_NOFOLLOW / AT_SYMLINK_NOFOLLOW / AT_EMPTY_PATH, so no symlink is ever followed
//    and no path can leave an attach root;
//  - a directory that is another host mount is entered only if the attach point's submount
//    policy allows it (submounts.h); otherwise its handle is sealed (no fd, empty, read-only);
//  - operations that modify anything under a read-only attach fail with EROFS;
//  - device nodes are never opened or created;
//  - a hidden file (ServerOptions::hidden) is absent: walks to it fail with ENOENT, listings
//    leave it out, and it cannot be unlinked or renamed, under any of its names;
//  - a protected file (ServerOptions::protected_files) is read-only, and so is a protected
//    name (protected_names): it cannot be created, removed or renamed;
//  - no file the gofer creates or changes gets S_ISUID or S_ISGID (a directory may keep
//    S_ISGID: it only passes the directory's group on), and opening a set-ID file for writing
//    clears its set-ID bits first, so a guest cannot plant a set-ID program on the host.
#pragma once

#include <sys/stat.h>

#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gofer/handle_table.h"
#include "gofer/protocol.h"
#include "gofer/submounts.h"
#include "sentry/base/errno.h"

namespace sentry::gofer {

struct AttachPoint {
  std::string name;  // as the client names it in kAttach
  int fd = -1;       // O_RDONLY|O_DIRECTORY fd of the host directory, opened before confinement
  bool read_only = false;
  Submounts submounts = Submounts::kAuto;
};

struct ServerOptions {
  // If set, every file the gofer creates belongs to this user and group (the gofer's own
  // ids, or a chown to them), whatever ids the client asks for, and the client's chown
  // requests change nothing on the host. sentry-run sets it to the invoking user.
  struct Owner {
    uid_t uid;
    gid_t gid;
  };
  std::optional<Owner> owner;
  // Host files (device, inode) the client may not see (sentry-run's filesystem.denyRead).
  std::set<std::pair<dev_t, ino_t>> hidden;
  // Host files (device, inode) the client may not change, nor, for a directory, add to or
  // remove from (sentry-run's protected files: filesystem.denyWrite).
  std::set<std::pair<dev_t, ino_t>> protected_files;
  // Names in directories (device, inode, name) that may not be created, removed or renamed.
  std::set<std::tuple<dev_t, ino_t, std::string>> protected_names;
};

// A host file's attributes and the id of the mount it is on (0 if the kernel does not say).
struct HostStat {
  struct stat st;
  uint64_t mnt_id;
};

// statx(dirfd, name, flags) as a struct stat plus the mount id.
Result<HostStat> StatAt(int dirfd, const char* name, int flags);

// The permission bits the gofer gives a host file when a client asks for `mode`: never
// S_ISUID, and S_ISGID only on a directory.
inline mode_t HostMode(bool is_dir, uint32_t mode) {
  mode_t m = mode & 07777 & ~S_ISUID;
  return is_dir ? m : m & ~S_ISGID;
}

// The host calls that change the host file system's names or a file's attributes: the
// handlers of server_modify.cc make them through this interface, never directly. The gofer
// makes them itself (HostMutations). A server in the Sentry (direct file access,
// client.h) has the gofer make them on the directory and file fds it lends for the one call
// (kLend, lend.cc): the Sentry reads the host file system itself, but every change to it is
// a call of the gofer's, which checks the names and the protected and hidden files again,
// and none of these calls is on the Sentry's allowlist. Each returns 0 or an errno.
class Mutations {
 public:
  virtual ~Mutations() = default;
  virtual int Mkdir(int dirfd, const char* name, mode_t mode) = 0;
  // A regular file, FIFO or socket (never a device).
  virtual int Mknod(int dirfd, const char* name, mode_t mode) = 0;
  virtual int Symlink(const char* target, int dirfd, const char* name) = 0;
  virtual int Link(int old_dirfd, const char* old_name, int new_dirfd, const char* new_name) = 0;
  // flags: 0 or AT_REMOVEDIR.
  virtual int Unlink(int dirfd, const char* name, int flags) = 0;
  virtual int Rename(int old_dirfd, const char* old_name, int new_dirfd, const char* new_name,
                     unsigned flags) = 0;
  // flags: AT_SYMLINK_NOFOLLOW, or AT_EMPTY_PATH with name "" (the directory itself).
  virtual int Chown(int dirfd, const char* name, uid_t uid, gid_t gid, int flags) = 0;
  // chmod that never follows a symlink (EOPNOTSUPP on one); flags as Chown's. `st`: the
  // file's attributes as the caller just read them (where the host has no fchmodat2, the
  // symlink check uses them; the gofer reads its own for a lent call).
  virtual int Chmod(int dirfd, const char* name, mode_t mode, int flags, const struct stat& st) = 0;
  // Only clears bits of regular file `fd` (set-ID bits before a write).
  virtual int ClearBits(int fd, mode_t mode) = 0;
  virtual int Utimes(int dirfd, const char* name, const struct timespec ts[2], int flags) = 0;
  virtual int SetXattr(int fd, const char* name, const std::string& value, int flags) = 0;
  virtual int RemoveXattr(int fd, const char* name) = 0;
};

// The calls themselves, made by this process.
Mutations& HostMutations();

// Before a file is written or truncated through `fd`: clears its set-user-ID bit, and its
// set-group-ID bit if group-executable, as Linux does on a write by a process without
// CAP_FSETID. `st` is fstat(fd).
Result<void> ClearSetId(Mutations& m, int fd, const struct stat& st);

// How to reach a handle's file with an *at() call: (dirfd, name, AT_SYMLINK_NOFOLLOW) for a
// non-directory, (fd, "", AT_EMPTY_PATH) for a directory.
struct AtTarget {
  int dirfd;
  const char* name;
  int flags;
};

class Server {
 public:
  // `first_handle`: the first handle number it gives out (HandleTable).
  explicit Server(std::vector<AttachPoint> attaches, ServerOptions opts = {},
                  Handle first_handle = 1);

  // Handles one request. Returns false if it has no reply (kClose). Otherwise fills `reply`
  // (errno first) and sets `*reply_fd` to an fd to donate, which the caller closes after
  // sending, or -1. `lent`: the fds that came with the request (-1 where none), which only
  // kLend uses; they stay the caller's, to close after.
  bool HandleRequest(Reader& in, Writer& reply, int* reply_fd, const int* lent = nullptr);

  // Whether serving needs CAP_CHOWN: to give new files the client's ids, or a fixed owner
  // other than the gofer's own ids.
  bool needs_chown() const { return !opts_.owner || chown_to_owner_; }

  // Where the changes to the host file system are made (HostMutations until set). `m`
  // outlives the server.
  void set_mutations(Mutations* m) { mut_ = m; }

 private:
  Result<void> Dispatch(Op op, Reader& in, Writer& out);

  // server_lookup.cc
  Result<void> Attach(Reader& in, Writer& out);
  Result<void> Walk(Reader& in, Writer& out);
  Result<void> Stat(Reader& in, Writer& out);
  Result<void> Open(Reader& in, Writer& out);
  Result<void> WalkOpen(Reader& in, Writer& out);
  Result<void> ReadLink(Reader& in, Writer& out);
  Result<void> ReadDir(Reader& in, Writer& out);
  Result<void> StatFs(Reader& in, Writer& out);
  Result<void> GetXattr(Reader& in, Writer& out);
  Result<void> ListXattr(Reader& in, Writer& out);
  Result<void> DonateRoot(Reader& in, Writer& out);

  // lend.cc: one Mutations call on fds the client lent (`fds`: the ones that came).
  Result<void> Lend(Reader& in, Writer& out);
  // The gofer's own checks of a lent call's target: EROFS for a protected name in `dirfd`
  // or a protected file (or, if the call `changes_dir`, a protected `dirfd`), ENOENT for a
  // hidden one. `name` "" means `dirfd` itself.
  Result<void> CheckLentTarget(int dirfd, const std::string& name, bool changes_dir) const;

  // server_modify.cc
  Result<void> Create(Reader& in, Writer& out);
  Result<void> Mkdir(Reader& in, Writer& out);
  Result<void> Symlink(Reader& in, Writer& out);
  Result<void> Mknod(Reader& in, Writer& out);
  Result<void> Link(Reader& in, Writer& out);
  Result<void> Unlink(Reader& in, Writer& out);
  Result<void> Rename(Reader& in, Writer& out);
  Result<void> SetAttr(Reader& in, Writer& out);
  Result<void> SetXattr(Reader& in, Writer& out);
  Result<void> RemoveXattr(Reader& in, Writer& out);

  // Helpers (server_lookup.cc).
  Result<HandleEntry*> Lookup(Handle h);
  Result<HandleEntry*> LookupDir(Handle h);
  // EROFS if `e` lies under a read-only attach, is sealed or is a protected file.
  Result<void> CheckWritable(const HandleEntry& e);
  // EROFS if `name` in directory `dir` is a protected name or names a protected file.
  Result<void> CheckNameWritable(const HandleEntry& dir, const std::string& name) const;
  Result<AtTarget> Target(const HandleEntry& e);
  Result<struct stat> StatOf(const HandleEntry& e);
  // Walks `name` in `dir`: adds a handle for it and writes "h, st" to `out`.
  // Returns the child's attributes.
  Result<struct stat> AddChild(Handle dir, const std::string& name, Writer& out);
  // Whether the gofer may serve a file system found mounted under attach point `attach`;
  // `fd` is a file on it (O_PATH is enough).
  bool MayEnter(size_t attach, int fd) const;
  // MayEnter for `name` in directory `dir`, opened without triggering an automount.
  bool MayEnterAt(const HandleEntry& dir, const char* name) const;
  // EACCES if `fd`, just opened as the non-directory `e`, lies on a mount under its directory
  // that the gofer does not serve (mounted there after the walk). `st` is fstat(fd).
  Result<void> CheckOpenedMount(const HandleEntry& e, int fd, const struct stat& st);
  // Whether the file with attributes `st` is hidden (ServerOptions::hidden).
  bool Hidden(const struct stat& st) const {
    return !opts_.hidden.empty() && opts_.hidden.count({st.st_dev, st.st_ino}) != 0;
  }
  // ENOENT if `name` in `dirfd` is a hidden file; a missing name is not an error here.
  Result<void> CheckNotHidden(int dirfd, const std::string& name) const;
  // Gives a file the gofer just made its owner (ServerOptions::owner, or uid:gid).
  Result<void> ChownNew(int dirfd, const char* name, uint32_t uid, uint32_t gid);
  // An fd for f*xattr calls on `e`: the directory fd, or a fresh O_RDONLY fd of a regular
  // file (`*owned` set). EOPNOTSUPP for other file types.
  Result<int> XattrFd(const HandleEntry& e, bool* owned);

  // A buffer of at least `n` bytes, valid until the next call.
  char* Scratch(size_t n) {
    if (scratch_.size() < n) scratch_.resize(n);
    return scratch_.data();
  }

  std::vector<AttachPoint> attaches_;
  const ServerOptions opts_;
  // opts_.owner is set and the gofer's effective ids differ from it: new files need a chown.
  bool chown_to_owner_ = false;
  HandleTable table_;
  Mutations* mut_ = &HostMutations();
  int reply_fd_ = -1;          // set by Open and Create
  const int* lent_ = nullptr;  // HandleRequest's `lent`, for kLend
  std::vector<char> scratch_;
};

// EINVAL unless `name` is a single path component: not "", ".", "..", no '/' or NUL.
Result<void> CheckName(const std::string& name);

// EINVAL if a request's arguments were short or followed by extra bytes. Every handler
// checks this after decoding and before acting.
inline Result<void> EndOfArgs(const Reader& in) {
  if (!in.ok() || !in.done()) return Errno(EINVAL);
  return Ok();
}

}  // namespace sentry::gofer
