// The Sentry's host fds are shared by everything it does for every guest. A cache that keeps
// idle host fds open (vfs/host_fd_cache.h) registers here, so that code the host refused an
// fd (EMFILE, ENFILE) can have some closed and try again, whatever layer it is in.
#pragma once

#include <cerrno>
#include <functional>

namespace sentry {

// `release` closes some idle host fds and returns whether it closed any. One at most.
void SetIdleHostFdReleaser(bool (*release)());
// Asks the registered releaser; false if there is none or it closed nothing.
bool ReleaseIdleHostFds();

// Calls `make` (a host call returning an fd, or -1 with errno set); if the host is out of
// fds, has idle ones released and calls it once more.
inline int RetryOnFdShortage(const std::function<int()>& make) {
  int fd = make();
  if (fd < 0 && (errno == EMFILE || errno == ENFILE) && ReleaseIdleHostFds()) fd = make();
  return fd;
}

}  // namespace sentry
