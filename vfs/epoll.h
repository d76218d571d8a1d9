// epoll instances. An interest item watches one open file (not an fd number: it is keyed by
// both, as on Linux, and goes away when the open file does) through a callback on the file's
// WaitQueue. A notification puts the item on the ready list; epoll_wait then asks the file for
// its current readiness, so a stale notification reports nothing. Level-triggered items stay
// on the list while they are ready; edge-triggered ones wait for the next notification;
// one-shot ones are disabled until EPOLL_CTL_MOD.
//
// Files without a WaitQueue but with a host fd (sentry-run's stdio) are polled on every wait,
// and epoll_wait then sleeps in short slices; an edge-triggered one reports when it gains an
// event it did not have at the previous look.
//
// Lock order: Epoll::interest_mu_ (of an outer instance, then of the instances nested in it)
//   -> a watched file's own locks -> WaitQueue::mu_ -> Epoll::ready_mu_ -> WaitQueue::mu_ of
//   the instance's own queue -> Waiter::mu_.
// interest_mu_ is never taken from a callback, so a file may notify while holding its locks.
#pragma once

#include <sys/epoll.h>

#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <vector>

#include "vfs/anon_file.h"

namespace sentry::vfs {

class Epoll final : public AnonFile {
 public:
  Epoll() : AnonFile(O_RDWR, "[eventpoll]") {}
  ~Epoll() override;

  // EPOLL_CTL_ADD / MOD / DEL of (fd, file). `ev` is ignored for DEL.
  Result<void> Add(int fd, const FileRef& file, const struct epoll_event& ev);
  Result<void> Modify(int fd, const FileRef& file, const struct epoll_event& ev);
  Result<void> Delete(int fd, const FileRef& file);

  // Up to `max` ready events; waits until there is one or `deadline` passes (no events then).
  // ERESTARTSYS when interrupted.
  Result<std::vector<struct epoll_event>> Wait(Blocker& b, int max, absl::Time deadline);

  EventMask Readiness(EventMask mask) override;
  WaitQueue* Queue() override { return &queue_; }

 private:
  struct Item final : public WaitCallback {
    Epoll* owner = nullptr;
    int fd = -1;
    std::weak_ptr<FileDescription> file;
    // The registered events, EPOLLERR | EPOLLHUP included; only the private bits (EPOLLET,
    // EPOLLONESHOT...) are left once a one-shot item has fired. Read by the callback.
    std::atomic<uint32_t> events{0};
    uint64_t data = 0;
    WaitQueue::Registration registration;  // unset for polled items
    EventMask last_polled = 0;             // polled edge-triggered items: the previous look
    bool queued = false;                   // on ready_ (guarded by owner->ready_mu_)

    void OnNotify(EventMask ev) override;
  };
  using Key = std::pair<int, FileDescription*>;

  // Whether this instance contains `other`, directly or nested, or nests deeper than Linux
  // allows (counting from `depth`). Preconditions: g_nest_mu held, interest_mu_ not held.
  bool Reaches(const Epoll* other, int depth) const;
  // The item for (fd, file) if it is still alive. Purges it if its file is gone.
  Item* FindLocked(int fd, const FileRef& file) ABSL_EXCLUSIVE_LOCKS_REQUIRED(interest_mu_);
  void RemoveLocked(std::map<Key, std::unique_ptr<Item>>::iterator it)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(interest_mu_);
  void SweepDeadLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(interest_mu_);
  // Puts `item` on the ready list if it is ready now (after ADD and MOD).
  void CheckNowLocked(Item* item, const FileRef& file) ABSL_EXCLUSIVE_LOCKS_REQUIRED(interest_mu_);
  void Enqueue(Item* item, bool front);
  // Takes what is ready: at most `max` events, or just whether there is one when max == 0.
  std::vector<struct epoll_event> CollectLocked(int max)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(interest_mu_);

  mutable absl::Mutex interest_mu_;
  std::map<Key, std::unique_ptr<Item>> items_ ABSL_GUARDED_BY(interest_mu_);
  std::vector<Item*> polled_ ABSL_GUARDED_BY(interest_mu_);
  size_t sweep_at_ ABSL_GUARDED_BY(interest_mu_) = 64;

  absl::Mutex ready_mu_;
  std::deque<Item*> ready_ ABSL_GUARDED_BY(ready_mu_);

  WaitQueue queue_;  // notified (kEventIn) when an item is queued
};

// Whether epoll can watch `file`: it must be able to say when it becomes ready. Regular files
// and directories cannot (epoll_ctl: EPERM).
bool EpollCanWatch(FileDescription& file);

// A new epoll instance (epoll_create1's flags are the fd's, not the file's).
std::shared_ptr<Epoll> NewEpoll();

}  // namespace sentry::vfs
