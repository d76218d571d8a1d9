// Futexes: wait queues keyed by (memory object, offset). Private futexes key on the mm;
// shared ones on the MAP_SHARED object, so waiters in forked processes meet.
#pragma once

#include <list>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "sentry/base/errno.h"
#include "sentry/base/wait_queue.h"

namespace sentry::kernel {

class Task;

class FutexTable {
 public:
  using Key = std::pair<uint64_t, uint64_t>;

  // Blocks while *addr == val until woken (0), timeout (ETIMEDOUT), mismatch (EAGAIN) or a
  // signal (ERESTARTSYS).
  Result<void> Wait(Task& t, uint64_t addr, bool priv, uint32_t val, uint32_t bitset,
                    absl::Time deadline);
  int Wake(Key key, int n, uint32_t bitset);
  // Wakes `nwake` waiters of `from` and moves up to `nrequeue` others to `to`.
  int Requeue(Key from, Key to, int nwake, int nrequeue);
  absl::Mutex& mu() { return mu_; }

 private:
  struct Waiter {
    Key key;
    uint32_t bitset;
    sentry::Waiter* waiter;
    bool woken = false;
  };
  absl::Mutex mu_;
  std::list<Waiter*> waiters_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sentry::kernel
