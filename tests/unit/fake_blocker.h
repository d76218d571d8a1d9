// A Blocker for unit tests: waits for real, never interrupted.
#pragma once

#include "sentry/base/wait_queue.h"

namespace sentry::testing {

class FakeBlocker final : public Blocker {
 public:
  Waiter& waiter() override { return w_; }
  Result<void> Wait(absl::Time deadline) override {
    if (!w_.WaitUntil(deadline)) return Errno(ETIMEDOUT);
    return Ok();
  }
  Result<int> WaitHostFd(int, short, absl::Time deadline) override {
    SENTRY_TRY(Wait(deadline));
    return 0;
  }

 private:
  Waiter w_;
};

}  // namespace sentry::testing
