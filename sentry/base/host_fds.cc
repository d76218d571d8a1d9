#include "sentry/base/host_fds.h"

#include <atomic>

namespace sentry {
namespace {
std::atomic<bool (*)()> g_releaser{nullptr};
}  // namespace

void SetIdleHostFdReleaser(bool (*release)()) { g_releaser.store(release); }

bool ReleaseIdleHostFds() {
  bool (*release)() = g_releaser.load();
  return release != nullptr && release();
}

}  // namespace sentry
