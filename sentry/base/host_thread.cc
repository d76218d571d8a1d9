#include "sentry/base/host_thread.h"

#include <system_error>
#include <thread>

namespace sentry {

bool StartHostThread(std::function<void()> fn) {
  // std::thread reports pthread_create's EAGAIN as an exception; nothing else here throws.
  try {
    std::thread(std::move(fn)).detach();
    return true;
  } catch (const std::system_error&) {
    return false;
  }
}

}  // namespace sentry
