// The Sentry's side of the gofer protocol. The gofer is a separate process that owns every
// host path the sandbox may see; the Sentry names files only by handles the gofer gave it.
// Metadata crosses the socket; data does not: Open and Create donate a host fd (SCM_RIGHTS)
// for read/write/mmap.
//
// All calls are thread-safe (requests are serialized on one socket). Once the gofer is gone
// (socket EOF or error) every call fails with EIO and dead() is true.
//
// Direct file access (GoDirect, docs/design-decisions.md): the gofer donates the root
// directory fd of an attach point, and from then on the calls on that attach point are served
// in this process by the gofer's own request handlers (server_internal.h) over that fd, under
// a mutex, with no round trip. The handlers keep their guarantees (one component at a time,
// *at() calls relative to held directory fds, never following a symlink); the Sentry's seccomp
// allowlist and empty root add theirs. Handles of such attach points have kLocalHandleBit set,
// which routes each call; the others still go to the gofer.
#pragma once

#include <sys/stat.h>
#include <sys/statfs.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "sentry/base/errno.h"

namespace sentry::gofer {

// Names a file in the gofer. 0 is never a valid handle.
using Handle = uint64_t;
// Set in the handles of attach points served in this process (GoDirect).
inline constexpr Handle kLocalHandleBit = Handle{1} << 63;

class Server;
class Mutations;
struct GoferOptions;

struct Node {
  Handle handle = 0;
  struct stat st {};
};

struct DirEntry {
  std::string name;
  uint64_t ino = 0;
  uint8_t type = 0;  // DT_*
};

// Which fields SetAttr changes.
enum SetAttrMask : uint32_t {
  kSetMode = 1 << 0,
  kSetUid = 1 << 1,
  kSetGid = 1 << 2,
  kSetSize = 1 << 3,
  kSetAtime = 1 << 4,  // to `atime`, or to now if atime.tv_nsec == UTIME_NOW
  kSetMtime = 1 << 5,
};

struct SetAttrRequest {
  uint32_t mask = 0;
  uint32_t mode = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint64_t size = 0;
  struct timespec atime {};
  struct timespec mtime {};
};

class Client {
 public:
  // Takes ownership of `sock`, a connected SOCK_SEQPACKET socket to a gofer.
  explicit Client(int sock);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // The root of attach point `name` (as given to the gofer at start-up: "/" for the root
  // file system, the guest path of a bind mount for binds). `read_only` reports whether the
  // gofer enforces read-only access on everything under it.
  Result<Node> Attach(const std::string& name, bool* read_only);

  // Looks up one component in directory `dir`. `name` is never "", ".", ".." and never
  // contains '/' (EINVAL otherwise). Never follows a symlink: a symlink is returned as such.
  // ENOENT if absent, ENOTDIR if `dir` is no directory.
  Result<Node> Walk(Handle dir, const std::string& name);
  // Walk for an open: also returns a read-only host fd the caller owns when the node is a
  // regular file the host lets the gofer open, else -1.
  Result<std::pair<Node, int>> WalkOpen(Handle dir, const std::string& name);
  Result<struct stat> Stat(Handle h);

  // Opens a non-directory for I/O and returns a new host fd the caller owns. `flags`:
  // O_RDONLY/O_WRONLY/O_RDWR, O_TRUNC, O_APPEND (O_CREAT, O_EXCL, O_NOFOLLOW and O_DIRECTORY
  // are ignored; the file exists already). EROFS for write access on a read-only attach.
  // A FIFO's fd comes back O_NONBLOCK (the gofer never waits for a peer); EPERM for device
  // nodes, ELOOP for a symlink. EMFILE or ENFILE when the fd could not be received here.
  Result<int> Open(Handle h, int flags);

  // Creates regular file `name` in `dir` (fails with EEXIST if it exists), owned by uid:gid,
  // and opens it with `flags`. Returns the node and the new host fd, or -1 if this process
  // had no room for the fd (the file exists; open it again when there is).
  Result<std::pair<Node, int>> Create(Handle dir, const std::string& name, int flags, uint32_t mode,
                                      uint32_t uid, uint32_t gid);
  Result<Node> Mkdir(Handle dir, const std::string& name, uint32_t mode, uint32_t uid,
                     uint32_t gid);
  Result<Node> Symlink(Handle dir, const std::string& name, const std::string& target, uint32_t uid,
                       uint32_t gid);
  // FIFOs, sockets and regular files only (EPERM for device nodes).
  Result<Node> Mknod(Handle dir, const std::string& name, uint32_t mode, uint32_t uid,
                     uint32_t gid);
  // Hard link: `name` in `dir` becomes another name of `target` (not a directory).
  Result<void> Link(Handle dir, const std::string& name, Handle target);
  // unlinkat(dir, name, flags): flags is 0 or AT_REMOVEDIR.
  Result<void> Unlink(Handle dir, const std::string& name, int flags);
  // renameat2; `flags` may hold RENAME_NOREPLACE or RENAME_EXCHANGE. Handles naming the
  // moved files stay valid and name the files at their new place.
  Result<void> Rename(Handle old_dir, const std::string& old_name, Handle new_dir,
                      const std::string& new_name, unsigned flags);
  Result<std::string> ReadLink(Handle h);
  // Returns the attributes after the change.
  Result<struct stat> SetAttr(Handle h, const SetAttrRequest& req);
  // Every entry of directory `dir` except "." and "..".
  Result<std::vector<DirEntry>> ReadDir(Handle dir);
  Result<struct statfs> StatFs(Handle h);
  Result<std::string> GetXattr(Handle h, const std::string& name);
  Result<std::vector<std::string>> ListXattr(Handle h);
  Result<void> SetXattr(Handle h, const std::string& name, const std::string& value, int flags);
  Result<void> RemoveXattr(Handle h, const std::string& name);
  // Releases a handle. Errors are ignored.
  void Close(Handle h);

  // Direct file access for the attach points `names`: asks the gofer for each one's root fd
  // (kDonateRoot) and serves them here from then on, with `options` (the ones the gofer was
  // started with: hidden and protected files, owner). Call once, before any Attach. Returns
  // the names whose fd did not come (the gofer still serves those). Sets this process's umask
  // to 0: the modes of new files arrive with the guest's umask applied, as in the gofer.
  std::vector<std::string> GoDirect(const std::vector<std::string>& names,
                                    const GoferOptions& options);
  // Whether some attach point is served here.
  bool direct() const { return local_ != nullptr; }
  // Starts a thread that notices the gofer's death without a call to it (its socket hangs
  // up): in direct mode the gofer may get no request for the rest of the sandbox's life, yet
  // its death still means that something went wrong, and every call then fails with EIO as
  // in gofer mode. Call after the process's capabilities are final (the thread inherits
  // them). Stopped by the destructor.
  void WatchPeer();

  bool dead() const { return dead_.load(std::memory_order_acquire); }
  // Each call then first has the (single-threaded) gofer move to the caller's CPU if it is
  // elsewhere: a round trip that wakes a thread on the other core costs 40-50 us each way on
  // these VMs, one on the same core a few. The gofer moves itself (kPlace): the Sentry may
  // not move it, as the gofer keeps a capability (CAP_FOWNER) the Sentry dropped, and the
  // host then asks CAP_SYS_NICE of whoever sets its affinity.
  void set_follow_caller(bool on) { follow_caller_ = on; }
  // Called once, from whichever thread first sees the gofer gone.
  void set_on_death(std::function<void()> fn) { on_death_ = std::move(fn); }

 private:
  // Sends one request, with `lend` and `lend2` if >= 0, and waits for its reply (with an
  // optional fd). Implemented in client.cc.
  Result<std::string> Call(uint32_t op, const std::string& request, int* fd_out, int lend = -1,
                           int lend2 = -1);
  // Call's body, sending `lend` and `lend2` with the request if >= 0. Sets *died if this
  // call found the gofer gone first.
  // Preconditions: mu_ is held.
  Result<std::string> CallLocked(uint32_t op, const std::string& request, int* fd_out, bool* died,
                                 int lend = -1, int lend2 = -1) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Sends a request that has no reply (Close).
  void Post(uint32_t op, const std::string& request);
  // Marks the gofer gone. Returns whether it was alive until now.
  // Preconditions: mu_ is held.
  bool MarkDeadLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Tells the gofer to move to the calling thread's CPU unless it was sent there already.
  // Preconditions: mu_ is held.
  void FollowCallerLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Direct mode (direct.cc): whether the call goes to the local server, and the call itself.
  bool IsLocal(uint32_t op, const std::string& request) const;
  Result<std::string> CallLocal(uint32_t op, const std::string& request, int* fd_out);
  // Direct mode (lend.cc): the local server's changes to the host file system, made by the
  // gofer on fds lent for each (kLend). LendCall sends one; returns 0 or an errno.
  class Lender;
  Mutations* NewLender();
  int LendCall(const std::string& request, int fd, int fd2);
  // Marks the gofer gone (if it was alive) and runs on_death_.
  void PeerDied();

  int sock_;
  bool follow_caller_ = false;     // set before the first call
  std::atomic<bool> dead_{false};  // set once, under mu_
  std::function<void()> on_death_;
  absl::Mutex mu_;                                    // one request in flight
  std::vector<char> reply_buf_ ABSL_GUARDED_BY(mu_);  // kMaxMessage bytes
  int peer_cpu_ ABSL_GUARDED_BY(mu_) = -1;            // where FollowCallerLocked sent it

  // Direct mode. Set by GoDirect before any other call, then read-only.
  std::set<std::string> local_names_;
  absl::Mutex local_mu_;  // the server serves one request at a time, as in the gofer
  std::unique_ptr<Server> local_ ABSL_PT_GUARDED_BY(local_mu_);
  std::unique_ptr<Mutations> lender_;  // the local server's Mutations
  std::thread watcher_;    // WatchPeer
  int watcher_wake_ = -1;  // eventfd that stops the watcher
};

}  // namespace sentry::gofer
