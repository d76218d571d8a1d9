// Linux native AIO contexts (io_setup and friends, syscalls/sys_aio.cc): the completion ring
// and the requests still in flight.
//
// The ring is Linux's: a struct aio_ring header and io_event slots, in a host memfd that is
// mapped shared into the guest at the context id (read-write, as Linux maps it) and into the
// Sentry. It is the one event queue, as on Linux: a completion appends at the tail, and
// io_getevents takes from the head the guest may also advance. User space can thus read it
// directly (libaio's io_getevents skips the syscall when the timeout is zero and head equals
// tail; fio's userspace_reap takes events itself).
//
// Reads, writes and syncs complete during io_submit (a pipe read with no data blocks it, as
// on Linux). Only IOCB_CMD_POLL stays in flight: a callback on the file's wait queue hands
// the re-check to the TimerQueue thread, which completes it.
//
// Lock order: AioTable::mu_ -> AioContext::mu_ -> file and eventfd locks -> WaitQueue::mu_.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "sentry/base/errno.h"
#include "sentry/base/wait_queue.h"
#include "vfs/eventfd.h"
#include "vfs/file.h"

namespace sentry::mm {
class MemoryManager;
}

namespace sentry::kernel {

// struct io_event.
struct AioEvent {
  uint64_t data;
  uint64_t obj;
  int64_t res;
  int64_t res2;
};

class AioPoll;

class AioContext : public std::enable_shared_from_this<AioContext> {
 public:
  // fs.aio-max-nr: the most events all contexts may ask for together (EAGAIN past it).
  static constexpr uint64_t kMaxNr = 65536;
  // fs.aio-nr: what the live contexts of the sandbox asked for.
  static uint64_t TotalRequested();

  // io_setup's checks and sizing (EINVAL, EAGAIN as Linux) and the ring, not yet mapped into
  // the guest: map ring_fd() and then call set_id.
  static Result<std::shared_ptr<AioContext>> Create(uint32_t nr_events);
  ~AioContext();

  int ring_fd() const { return ring_fd_; }
  uint64_t ring_size() const { return ring_size_; }
  // The guest address of the ring, which is the context id. The fd is closed: the Sentry's
  // own mapping keeps the ring.
  void set_id(uint64_t id);
  uint64_t id() const { return id_; }
  // The context's slot in its table, kept in ring->id where Linux's lookup_ioctx reads it.
  void set_index(uint32_t index);
  uint32_t nr_events() const { return nr_; }

  // Takes a slot for a request: EAGAIN when those in flight and the events not yet reaped
  // would fill the ring. Every slot ends with Complete or Unreserve.
  Result<void> Reserve();
  void Unreserve();
  // Appends the event of a reserved request, signals `resfd` and wakes io_getevents.
  void Complete(const AioEvent& ev, const std::shared_ptr<vfs::EventFd>& resfd);

  // IOCB_CMD_POLL on a reserved slot: completes at once if `f` is ready for `want`, else
  // when it becomes ready or is cancelled.
  void StartPoll(vfs::FileRef f, EventMask want, const AioEvent& ev,
                 std::shared_ptr<vfs::EventFd> resfd);
  // io_cancel: cancels the poll whose iocb is at `obj` (it completes with what is ready
  // then). EINVAL if no request in flight can be cancelled.
  Result<void> Cancel(uint64_t obj);

  // Hands up to `max` events from the head to `deliver`, which returns how many it took
  // (they are consumed). Returns that count.
  size_t Take(size_t max, const std::function<size_t(std::span<const AioEvent>)>& deliver);
  // Notified on every completion and on Kill.
  WaitQueue& queue() { return queue_; }

  // io_destroy / teardown: cancels what is in flight, and the context is dead to every call.
  void Kill();
  bool dead() {
    absl::MutexLock l(&mu_);
    return dead_;
  }

 private:
  friend class AioPoll;
  AioContext(uint32_t max_reqs, uint32_t nr) : max_reqs_(max_reqs), nr_(nr) {}
  uint32_t HeadLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CompleteLocked(const AioEvent& ev, const std::shared_ptr<vfs::EventFd>& resfd)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // AioPoll's re-check after a wake-up; completes it if it is ready and still in flight.
  void RecheckPoll(const std::shared_ptr<AioPoll>& p);

  const uint32_t max_reqs_;  // what io_setup asked for, counted against kMaxNr
  const uint32_t nr_;        // ring slots
  int ring_fd_ = -1;
  uint64_t ring_size_ = 0;
  uint8_t* ring_ = nullptr;  // the Sentry's mapping; the guest writes it too
  uint64_t id_ = 0;

  absl::Mutex mu_;
  uint32_t tail_ ABSL_GUARDED_BY(mu_) = 0;  // the Sentry's tail; the ring's copy is for show
  uint32_t in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  bool dead_ ABSL_GUARDED_BY(mu_) = false;
  std::list<std::shared_ptr<AioPoll>> polls_ ABSL_GUARDED_BY(mu_);
  WaitQueue queue_;
};

// An address space's contexts, in slots as Linux's ioctx_table: a context is found by the
// slot number in its ring's id word (which the caller reads from guest memory, so that an
// unmapped or overwritten ring makes the context unreachable, as on Linux) and its id.
class AioTable {
 public:
  ~AioTable();
  // The table of `mm`, created if `create`; null if there is none.
  static std::shared_ptr<AioTable> Of(mm::MemoryManager& mm, bool create);

  // EINVAL unless slot `index` holds the context `id`.
  Result<std::shared_ptr<AioContext>> Lookup(uint32_t index, uint64_t id);
  // Puts the context in the first free slot.
  void Add(std::shared_ptr<AioContext> ctx);
  // Takes the context out of the table (EINVAL as Lookup); the caller kills it.
  Result<std::shared_ptr<AioContext>> Remove(uint32_t index, uint64_t id);

 private:
  absl::Mutex mu_;
  std::vector<std::shared_ptr<AioContext>> slots_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sentry::kernel
