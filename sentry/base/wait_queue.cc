#include "sentry/base/wait_queue.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

#include "sentry/base/host_fds.h"

namespace sentry {

Waiter::~Waiter() {
  if (event_fd_ >= 0) close(event_fd_);
}

void Waiter::Notify() {
  bool kick_fd;
  {
    absl::MutexLock l(&mu_);
    notified_ = true;
    kick_fd = host_waiting_;
    cv_.Signal();
  }
  if (kick_fd) {
    uint64_t one = 1;
    (void)!write(event_fd_, &one, sizeof(one));
  }
}

bool Waiter::WaitUntil(absl::Time deadline) {
  absl::MutexLock l(&mu_);
  while (!notified_) {
    if (cv_.WaitWithDeadline(&mu_, deadline) && !notified_) return false;
  }
  notified_ = false;
  return true;
}

int Waiter::EventFd() {
  if (event_fd_ < 0) {
    event_fd_ = RetryOnFdShortage([] { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); });
  }
  return event_fd_;
}

int Waiter::WaitHostFd(int fd, short events, absl::Time deadline) {
  int efd = EventFd();
  {
    absl::MutexLock l(&mu_);
    if (notified_) {
      notified_ = false;
      return 0;
    }
    host_waiting_ = true;
  }
  struct pollfd fds[2] = {{fd, events, 0}, {efd, POLLIN, 0}};
  int n;
  for (;;) {
    int timeout = -1;
    if (deadline != absl::InfiniteFuture()) {
      absl::Duration left = deadline - absl::Now();
      timeout =
          left <= absl::ZeroDuration()
              ? 0
              : static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(left) + 1, INT32_MAX));
    }
    // Without an eventfd (the host was out of fds) a Notify cannot wake poll: look for one
    // every few milliseconds instead.
    if (efd < 0 && (timeout < 0 || timeout > 5)) timeout = 5;
    n = poll(fds, 2, timeout);
    if (efd >= 0 || n != 0 || deadline <= absl::Now()) break;
    absl::MutexLock l(&mu_);
    if (notified_) break;
  }
  uint64_t drain;
  if (efd >= 0) (void)!read(efd, &drain, sizeof(drain));
  absl::MutexLock l(&mu_);
  host_waiting_ = false;
  notified_ = false;
  return n > 0 ? fds[0].revents : 0;
}

void Waiter::Clear() {
  absl::MutexLock l(&mu_);
  notified_ = false;
}

WaitQueue::WaitQueue() : state_(std::make_shared<State>()) {}

void WaitQueue::Add(Waiter* w, EventMask mask) {
  absl::MutexLock l(&state_->mu);
  state_->entries.push_back({w, nullptr, mask});
}

void WaitQueue::Remove(Waiter* w) {
  absl::MutexLock l(&state_->mu);
  auto& entries = state_->entries;
  auto it = std::find_if(entries.begin(), entries.end(),
                         [w](const Entry& e) { return e.waiter == w; });
  if (it != entries.end()) entries.erase(it);
}

void WaitQueue::Notify(EventMask events) {
  absl::MutexLock l(&state_->mu);
  for (const Entry& e : state_->entries) {
    if (!(e.mask & events)) continue;
    if (e.callback) {
      e.callback->OnNotify(events);
    } else {
      e.waiter->Notify();
    }
  }
}

bool WaitQueue::Empty() {
  absl::MutexLock l(&state_->mu);
  return state_->entries.empty();
}

WaitQueue::Registration WaitQueue::AddCallback(WaitCallback* cb, EventMask mask) {
  {
    absl::MutexLock l(&state_->mu);
    state_->entries.push_back({nullptr, cb, mask});
  }
  Registration r;
  r.state_ = state_;
  r.callback_ = cb;
  return r;
}

WaitQueue::Registration& WaitQueue::Registration::operator=(Registration&& o) noexcept {
  if (this != &o) {
    Reset();
    state_ = std::move(o.state_);
    callback_ = std::exchange(o.callback_, nullptr);
  }
  return *this;
}

void WaitQueue::Registration::Reset() {
  if (!state_) return;
  {
    absl::MutexLock l(&state_->mu);
    auto& entries = state_->entries;
    auto it = std::find_if(entries.begin(), entries.end(),
                           [this](const Entry& e) { return e.callback == callback_; });
    if (it != entries.end()) entries.erase(it);
  }
  state_.reset();
  callback_ = nullptr;
}

}  // namespace sentry
