// The gofer's request handlers. Private to gofer/: server.cc runs the loop,
// server_lookup.cc and server_modify.cc implement the ops (see protocol.h for each op's
// arguments and results).
//
// Security contract, enforced in every handler:
//  - a client-supplied name is one path component (CheckName);
//  - a host file is reached only by *at() calls relative to a directory fd the table holds,
//    with O_NOFOLLOW / AT_SYMLINK_NOFOLLOW / AT_EMPTY_PATH, so no symlink is ever followed
//    and no path can leave an attach root;
//  - operations that modify anything under a read-only attach fail with EROFS;
//  - device nodes are never opened or created.
#pragma once

#include <sys/stat.h>

#include <string>
#include <vector>

#include "gofer/handle_table.h"
#include "gofer/protocol.h"
#include "sentry/base/errno.h"

namespace sentry::gofer {

struct AttachPoint {
  std::string name;  // as the client names it in kAttach
  int fd = -1;       // O_RDONLY|O_DIRECTORY fd of the host directory, opened before confinement
  bool read_only = false;
};

// How to reach a handle's file with an *at() call: (dirfd, name, AT_SYMLINK_NOFOLLOW) for a
// non-directory, (fd, "", AT_EMPTY_PATH) for a directory.
struct AtTarget {
  int dirfd;
  const char* name;
  int flags;
};

class Server {
 public:
  explicit Server(std::vector<AttachPoint> attaches) : attaches_(std::move(attaches)) {}

  // Handles one request. Returns false if it has no reply (kClose). Otherwise fills `reply`
  // (errno first) and sets `*reply_fd` to an fd to donate, which the caller closes after
  // sending, or -1.
  bool HandleRequest(Reader& in, Writer& reply, int* reply_fd);

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
  Result<void> CheckWritable(const HandleEntry& e) const;
  Result<AtTarget> Target(const HandleEntry& e);
  Result<struct stat> StatOf(const HandleEntry& e);
  // Walks `name` in `dir`: adds a handle for it and writes "h, st" to `out`.
  // Returns the child's attributes.
  Result<struct stat> AddChild(Handle dir, const std::string& name, Writer& out);
  // An fd for f*xattr calls on `e`: the directory fd, or a fresh O_RDONLY fd of a regular
  // file (`*owned` set). EOPNOTSUPP for other file types.
  Result<int> XattrFd(const HandleEntry& e, bool* owned);

  // A buffer of at least `n` bytes, valid until the next call.
  char* Scratch(size_t n) {
    if (scratch_.size() < n) scratch_.resize(n);
    return scratch_.data();
  }

  std::vector<AttachPoint> attaches_;
  HandleTable table_;
  int reply_fd_ = -1;  // set by Open and Create
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
