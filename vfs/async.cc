#include "vfs/async.h"

#include <atomic>
#include <utility>

#include "absl/time/clock.h"
#include "sentry/base/timer_queue.h"
#include "vfs/file.h"

namespace sentry::vfs {

namespace {

std::atomic<AsyncHost*> g_host{nullptr};

constexpr EventMask kInputEvents = kEventIn | kEventHup | kEventErr | kEventRdHup;

// On the TimerQueue thread, for files that share their queue: one signal per direction that
// was notified and is ready now.
void Deliver(const std::weak_ptr<FileDescription>& weak, EventMask events) {
  FileRef f = weak.lock();
  if (!f) return;
  EventMask ready = f->Readiness(kAllEvents);
  if ((events & kInputEvents) && (ready & kInputEvents) && f->Readable()) {
    f->async().Send(kPollIn);
  }
  if ((events & kEventOut) && (ready & kEventOut) && f->Writable()) f->async().Send(kPollOut);
}

}  // namespace

void SetAsyncHost(AsyncHost* host) { g_host.store(host); }

void AsyncState::Enable(const std::shared_ptr<FileDescription>& file, int fd) {
  absl::MutexLock r(&reg_mu_);
  reg_.Reset();
  {
    absl::MutexLock l(&mu_);
    enabled_ = true;
    fd_ = fd;
    readable_ = file->Readable();
    writable_ = file->Writable();
    check_readiness_ = file->AsyncChecksReadiness();
    file_ = file;
  }
  WaitQueue* q = file->SignalsAsync() ? file->Queue() : nullptr;
  if (q != nullptr) reg_ = q->AddCallback(this);
}

bool AsyncState::Disable() {
  absl::MutexLock r(&reg_mu_);
  reg_.Reset();
  absl::MutexLock l(&mu_);
  return std::exchange(enabled_, false);
}

void AsyncState::Send(int code) {
  int fd;
  {
    absl::MutexLock l(&mu_);
    if (!enabled_) return;
    fd = fd_;
  }
  SendNow(code, fd);
}

void AsyncState::SendLeaseBreak(int fd) { SendNow(kPollMsg, fd); }

void AsyncState::SetOwnerIfNone(const FileOwner& o) {
  absl::MutexLock l(&mu_);
  if (owner_.id == 0) owner_ = o;
}

void AsyncState::SendNow(int code, int fd) {
  FileOwner owner;
  int sig;
  {
    absl::MutexLock l(&mu_);
    owner = owner_;
    sig = sig_;
  }
  AsyncHost* host = g_host.load();
  if (owner.id == 0 || host == nullptr) return;
  TimerQueue::Global().Schedule(
      absl::Now(), [host, owner, sig, code, fd] { host->SignalOwner(owner, sig, code, fd); });
}

void AsyncState::OnNotify(EventMask events) {
  std::weak_ptr<FileDescription> file;
  bool in, out;
  {
    absl::MutexLock l(&mu_);
    if (!enabled_) return;
    if (check_readiness_) {
      file = file_;
    }
    in = readable_ && (events & kInputEvents);
    out = writable_ && (events & kEventOut);
  }
  if (!file.expired()) {
    TimerQueue::Global().Schedule(absl::Now(), [file, events] { Deliver(file, events); });
    return;
  }
  if (in) Send(kPollIn);
  if (out) Send(kPollOut);
}

}  // namespace sentry::vfs
