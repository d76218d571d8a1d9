#include "sentry/base/timer_queue.h"

#include <thread>

namespace sentry {

TimerQueue& TimerQueue::Global() {
  // Leaked: the thread may still be waiting when static destructors run.
  static TimerQueue* q = [] {
    auto* tq = new TimerQueue();
    std::thread([tq] { tq->Loop(); }).detach();
    return tq;
  }();
  return *q;
}

TimerQueue::Id TimerQueue::Schedule(absl::Time when, std::function<void()> fn) {
  absl::MutexLock l(&mu_);
  Id id = next_id_++;
  bool earliest = due_.empty() || when < due_.begin()->first;
  due_.emplace(when, std::make_pair(id, std::move(fn)));
  when_[id] = when;
  if (earliest) cv_.Signal();
  return id;
}

void TimerQueue::Cancel(Id id) {
  absl::MutexLock l(&mu_);
  auto w = when_.find(id);
  if (w == when_.end()) return;
  auto [lo, hi] = due_.equal_range(w->second);
  for (auto it = lo; it != hi; ++it) {
    if (it->second.first == id) {
      due_.erase(it);
      break;
    }
  }
  when_.erase(w);
}

void TimerQueue::Loop() {
  absl::MutexLock l(&mu_);
  for (;;) {
    if (due_.empty()) {
      cv_.Wait(&mu_);
      continue;
    }
    auto first = due_.begin();
    if (first->first > absl::Now()) {
      cv_.WaitWithDeadline(&mu_, first->first);
      continue;
    }
    std::function<void()> fn = std::move(first->second.second);
    when_.erase(first->second.first);
    due_.erase(first);
    mu_.Unlock();
    fn();
    fn = nullptr;  // whatever it captured is released without the lock
    mu_.Lock();
  }
}

}  // namespace sentry
