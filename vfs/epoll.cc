#include "vfs/epoll.h"

#include <algorithm>
#include <optional>

namespace sentry::vfs {
namespace {

// The bits that say how to report, not what.
constexpr uint32_t kPrivateBits = EPOLLWAKEUP | EPOLLONESHOT | EPOLLET | EPOLLEXCLUSIVE;
// What EPOLLEXCLUSIVE may be combined with (Linux's EPOLLEXCLUSIVE_OK_BITS).
constexpr uint32_t kExclusiveOk = EPOLLIN | EPOLLOUT | EPOLLERR | EPOLLHUP | EPOLLWAKEUP |
                                  EPOLLET | EPOLLEXCLUSIVE;
// Linux's EPOLL_MAX_NESTS.
constexpr int kMaxNests = 4;
// How often files without a queue are looked at while a wait sleeps.
constexpr absl::Duration kPollSlice = absl::Milliseconds(10);

// Serializes adding epoll instances to epoll instances, so that the loop check and the
// insertion are one step. Taken before any interest_mu_.
absl::Mutex g_nest_mu(absl::kConstInit);

// Whether epoll_ctl may watch `file`: it must be able to tell when it becomes ready. Regular
// files and directories cannot (EPERM); host streams are polled.
bool Pollable(FileDescription& file, bool* polled) {
  *polled = false;
  if (file.Queue()) return true;
  if (file.HostFd() < 0) return false;
  struct stat st;
  if (!file.Stat(&st).ok() || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) return false;
  *polled = true;
  return true;
}

}  // namespace

bool EpollCanWatch(FileDescription& file) {
  bool polled;
  return Pollable(file, &polled);
}

void Epoll::Item::OnNotify(EventMask ev) {
  uint32_t want = events.load(std::memory_order_relaxed);
  if (!(want & ~kPrivateBits)) return;  // a one-shot item that has fired
  if (!(ev & want)) return;
  owner->Enqueue(this, false);
}

Epoll::~Epoll() {
  // Registrations first: once they are reset no callback can reach this instance.
  absl::MutexLock l(&interest_mu_);
  for (auto& [key, item] : items_) item->registration.Reset();
}

void Epoll::Enqueue(Item* item, bool front) {
  {
    absl::MutexLock l(&ready_mu_);
    if (item->queued) return;
    item->queued = true;
    if (front) {
      ready_.push_front(item);
    } else {
      ready_.push_back(item);
    }
  }
  queue_.Notify(kEventIn);
}

bool Epoll::Reaches(const Epoll* other, int depth) const {
  if (depth > kMaxNests) return true;
  std::vector<FileRef> nested;
  {
    absl::MutexLock l(&interest_mu_);
    for (auto& [key, item] : items_) {
      FileRef f = item->file.lock();
      if (f && dynamic_cast<Epoll*>(f.get())) nested.push_back(std::move(f));
    }
  }
  for (const FileRef& f : nested) {
    auto* ep = static_cast<const Epoll*>(f.get());
    if (ep == other || ep->Reaches(other, depth + 1)) return true;
  }
  return false;
}

Epoll::Item* Epoll::FindLocked(int fd, const FileRef& file) {
  auto it = items_.find({fd, file.get()});
  if (it == items_.end()) return nullptr;
  // The address of a dead file cannot have been reused while the item's weak reference
  // holds its storage, so a live file at that address is the registered one.
  if (it->second->file.expired()) {
    RemoveLocked(it);
    return nullptr;
  }
  return it->second.get();
}

void Epoll::RemoveLocked(std::map<Key, std::unique_ptr<Item>>::iterator it) {
  Item* item = it->second.get();
  item->registration.Reset();
  {
    absl::MutexLock l(&ready_mu_);
    if (item->queued) std::erase(ready_, item);
  }
  std::erase(polled_, item);
  items_.erase(it);
}

void Epoll::SweepDeadLocked() {
  for (auto it = items_.begin(); it != items_.end();) {
    auto next = std::next(it);
    if (it->second->file.expired()) RemoveLocked(it);
    it = next;
  }
  sweep_at_ = std::max<size_t>(64, 2 * items_.size());
}

void Epoll::CheckNowLocked(Item* item, const FileRef& file) {
  uint32_t want = item->events.load();
  if (!(want & ~kPrivateBits)) return;
  if (file->Readiness(want) & want) Enqueue(item, false);
}

Result<void> Epoll::Add(int fd, const FileRef& file, const struct epoll_event& ev) {
  if (file.get() == this) return Errno(EINVAL);
  bool polled;
  if (!Pollable(*file, &polled)) return Errno(EPERM);
  auto* target = dynamic_cast<Epoll*>(file.get());
  if ((ev.events & EPOLLEXCLUSIVE) && ((ev.events & ~kExclusiveOk) || target)) {
    return Errno(EINVAL);
  }
  std::optional<absl::MutexLock> nest;
  if (target) {
    nest.emplace(&g_nest_mu);
    if (target->Reaches(this, 1)) return Errno(ELOOP);
  }
  absl::MutexLock l(&interest_mu_);
  if (FindLocked(fd, file)) return Errno(EEXIST);
  if (items_.size() >= sweep_at_) SweepDeadLocked();
  auto item = std::make_unique<Item>();
  item->owner = this;
  item->fd = fd;
  item->file = file;
  item->events = ev.events | EPOLLERR | EPOLLHUP;
  item->data = ev.data.u64;
  Item* raw = item.get();
  items_.emplace(Key{fd, file.get()}, std::move(item));
  if (polled) {
    polled_.push_back(raw);
  } else {
    raw->registration = file->Queue()->AddCallback(raw);
  }
  CheckNowLocked(raw, file);
  return Ok();
}

Result<void> Epoll::Modify(int fd, const FileRef& file, const struct epoll_event& ev) {
  absl::MutexLock l(&interest_mu_);
  Item* item = FindLocked(fd, file);
  if (!item) return Errno(ENOENT);
  if (ev.events & EPOLLEXCLUSIVE) return Errno(EINVAL);
  // An exclusive item cannot be modified (Linux).
  if (item->events.load() & EPOLLEXCLUSIVE) return Errno(EINVAL);
  item->events = ev.events | EPOLLERR | EPOLLHUP;
  item->data = ev.data.u64;
  item->last_polled = 0;
  CheckNowLocked(item, file);
  return Ok();
}

Result<void> Epoll::Delete(int fd, const FileRef& file) {
  absl::MutexLock l(&interest_mu_);
  if (!FindLocked(fd, file)) return Errno(ENOENT);
  RemoveLocked(items_.find({fd, file.get()}));
  return Ok();
}

std::vector<struct epoll_event> Epoll::CollectLocked(int max) {
  std::deque<Item*> batch;
  {
    absl::MutexLock l(&ready_mu_);
    batch.swap(ready_);
    for (Item* item : batch) item->queued = false;
  }
  std::vector<struct epoll_event> out;
  bool probe = max == 0;  // only whether something is ready: report nothing, keep all queued
  size_t limit = probe ? 1 : static_cast<size_t>(max);
  std::vector<Item*> requeue;
  auto look = [&](Item* item, bool is_polled) {
    FileRef file = item->file.lock();
    if (!file) return;  // swept later; dropping it from the list is enough
    uint32_t want = item->events.load();
    if (!(want & ~kPrivateBits)) return;
    EventMask got = file->Readiness(want) & want;
    if (is_polled && (want & EPOLLET)) {
      EventMask fresh = got & ~item->last_polled;
      if (!probe) item->last_polled = got;
      got = fresh;
    }
    if (!got) return;
    if (probe) {
      if (!is_polled) requeue.push_back(item);
      out.push_back({});
      return;
    }
    out.push_back({got, {.u64 = item->data}});
    if (want & EPOLLONESHOT) {
      item->events = want & kPrivateBits;
    } else if (!(want & EPOLLET) && !is_polled) {
      requeue.push_back(item);  // level-triggered: look again next time
    }
  };
  while (!batch.empty() && out.size() < limit) {
    Item* item = batch.front();
    batch.pop_front();
    look(item, false);
  }
  for (Item* item : polled_) {
    if (out.size() >= limit) break;
    look(item, true);
  }
  // What was not looked at goes back in front, in order; reported level-triggered items
  // go to the back, so that a small maxevents still sees every ready item in turn.
  for (auto it = batch.rbegin(); it != batch.rend(); ++it) Enqueue(*it, true);
  for (Item* item : requeue) Enqueue(item, probe);
  if (probe) out.resize(out.empty() ? 0 : 1);
  return out;
}

Result<std::vector<struct epoll_event>> Epoll::Wait(Blocker& b, int max, absl::Time deadline) {
  ScopedWait wait(queue_, b.waiter(), kEventIn);
  for (;;) {
    bool has_polled;
    {
      absl::MutexLock l(&interest_mu_);
      auto out = CollectLocked(max);
      if (!out.empty()) return out;
      has_polled = !polled_.empty();
    }
    absl::Time now = absl::Now();
    if (now >= deadline) return std::vector<struct epoll_event>{};
    auto r = b.Wait(has_polled ? std::min(deadline, now + kPollSlice) : deadline);
    if (!r.ok() && r.error() != ETIMEDOUT) return r.error();
  }
}

EventMask Epoll::Readiness(EventMask mask) {
  if (!(mask & (kEventIn | kEventRdNorm))) return 0;
  absl::MutexLock l(&interest_mu_);
  return CollectLocked(0).empty() ? 0 : mask & (kEventIn | kEventRdNorm);
}

std::shared_ptr<Epoll> NewEpoll() { return std::make_shared<Epoll>(); }

}  // namespace sentry::vfs
