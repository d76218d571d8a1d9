#include "sentry/kernel/futex.h"

#include "sentry/kernel/kernel.h"

namespace sentry::kernel {

Result<void> FutexTable::Wait(Task& t, uint64_t addr, bool priv, uint32_t val,
                              uint32_t bitset, absl::Time deadline) {
  if (addr & 3) return Errno(EINVAL);
  Waiter w{t.mm().FutexKey(addr, priv), bitset, &t.waiter()};
  {
    // Queue first, then read: a waker that changed the value before we read it also woke
    // under this lock after we queued, or we see its new value.
    absl::MutexLock l(&mu_);
    auto cur = t.CopyIn<uint32_t>(GuestAddr(addr));
    if (!cur.ok()) return cur.error();
    if (*cur != val) return Errno(EAGAIN);
    waiters_.push_back(&w);
  }
  Result<void> r = Ok();
  for (;;) {
    {
      absl::MutexLock l(&mu_);
      if (w.woken) return Ok();
    }
    r = t.Wait(deadline);
    if (!r.ok()) break;
  }
  absl::MutexLock l(&mu_);
  waiters_.remove(&w);
  if (w.woken) return Ok();  // woken and interrupted at once: the wake wins
  return r.error();
}

int FutexTable::Wake(Key key, int n, uint32_t bitset) {
  absl::MutexLock l(&mu_);
  int woken = 0;
  for (auto it = waiters_.begin(); it != waiters_.end() && woken < n;) {
    Waiter* w = *it;
    if (w->key == key && (w->bitset & bitset)) {
      w->woken = true;
      w->waiter->Notify();
      it = waiters_.erase(it);
      woken++;
    } else {
      ++it;
    }
  }
  return woken;
}

int FutexTable::Requeue(Key from, Key to, int nwake, int nrequeue) {
  absl::MutexLock l(&mu_);
  int done = 0, moved = 0;
  for (auto it = waiters_.begin(); it != waiters_.end();) {
    Waiter* w = *it;
    if (w->key != from) {
      ++it;
      continue;
    }
    if (done < nwake) {
      w->woken = true;
      w->waiter->Notify();
      it = waiters_.erase(it);
      done++;
    } else if (moved < nrequeue) {
      w->key = to;
      moved++;
      ++it;
    } else {
      break;
    }
  }
  return done + moved;
}

}  // namespace sentry::kernel
