// Host fds of open files that the Sentry may close while nobody uses them and open again on
// demand (donated gofer fds). The Sentry's host fds are shared by every guest process, each
// of which may hold as many open files as its own RLIMIT_NOFILE allows: pinning one host fd
// per open guest file would let one guest use up the Sentry's fds. Only the most recently
// used ones stay open, up to a capacity derived from the Sentry's RLIMIT_NOFILE, and fewer
// once the host has refused an fd (ReleaseIdleHostFds).
//
// Lock order: HostFdCache's lock is a leaf; openers run without it.
#pragma once

#include <sys/types.h>

#include <functional>
#include <list>
#include <map>
#include <memory>

#include "sentry/base/errno.h"

namespace sentry::vfs {

// A host fd, closed with its last reference.
struct SharedHostFd {
  explicit SharedHostFd(int fd) : fd(fd) {}
  ~SharedHostFd();
  SharedHostFd(const SharedHostFd&) = delete;
  SharedHostFd& operator=(const SharedHostFd&) = delete;
  const int fd;
};

// One host fd of a file that can be opened again (by `open`, e.g. a gofer Open of the file's
// handle). A reopened fd must be the same file as the first one (device and inode), else the
// file's name now leads elsewhere (replaced on the host) and Get fails with ESTALE. Always
// owned by a shared_ptr (PinHostFile finds entries through weak references).
class ReopenableFd : public std::enable_shared_from_this<ReopenableFd> {
 public:
  using Opener = std::function<Result<int>()>;
  // `fd` >= 0: an fd already open (owned from now on), used by the first Get.
  ReopenableFd(Opener open, int fd = -1) : open_(std::move(open)), initial_(fd) {}
  ~ReopenableFd();
  ReopenableFd(const ReopenableFd&) = delete;
  ReopenableFd& operator=(const ReopenableFd&) = delete;

  // The fd, opened again if it was closed; the reference keeps it open while held.
  Result<std::shared_ptr<SharedHostFd>> Get();
  // From now on the fd is never closed by the cache (opened now if needed): for files that
  // cannot be opened again the same way (a FIFO, a file whose name is about to go).
  void Pin();

 private:
  friend class HostFdCache;
  friend void PinHostFile(dev_t, ino_t);
  // Installs freshly opened `fd` (checking its identity); returns what Get returns.
  Result<std::shared_ptr<SharedHostFd>> Install(int fd);

  const Opener open_;
  // Guarded by the cache's lock.
  int initial_;
  std::shared_ptr<SharedHostFd> fd_;
  bool pinned_ = false;
  bool in_lru_ = false;
  std::list<ReopenableFd*>::iterator lru_pos_;
  // Identity of the file, from the first fd.
  bool known_ = false;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  std::multimap<std::pair<dev_t, ino_t>, std::weak_ptr<ReopenableFd>>::iterator files_pos_;
};

// Pins (ReopenableFd::Pin) every ReopenableFd of host file (dev, ino) opened so far.
void PinHostFile(dev_t dev, ino_t ino);

// Closes idle cached host fds (about half of them) and shrinks the cache; returns whether it
// closed any. Registered as the Sentry's idle host fd releaser (sentry/base/host_fds.h) once
// the cache exists.
bool ReleaseIdleCachedFds();

// Runs `open` (returning an fd or an errno); while the host is out of fds, releases idle
// cached ones and tries again.
Result<int> OpenHostFd(const std::function<Result<int>()>& open);

}  // namespace sentry::vfs
