#include "sentry/kernel/aio.h"

#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <utility>

#include "sentry/base/timer_queue.h"
#include "sentry/mm/memory_manager.h"

namespace sentry::kernel {
namespace {

// struct aio_ring's header, as 32-bit words.
constexpr uint32_t kRingMagic = 0xa10a10a1;
constexpr size_t kHeaderSize = 32;
enum RingWord { kId, kNr, kHead, kTail, kMagic, kCompat, kIncompat, kHeaderLength };

// fs.aio-nr: events asked for by every live context of the sandbox.
std::atomic<uint64_t> g_aio_nr{0};

uint32_t* Word(uint8_t* ring, RingWord w) { return reinterpret_cast<uint32_t*>(ring) + w; }

}  // namespace

// One IOCB_CMD_POLL in flight. Its queue callback only schedules the re-check: it runs under
// the file's queue lock, where completing (taking the context's lock, signalling an eventfd
// that may be this very file) is not allowed.
class AioPoll final : public WaitCallback, public std::enable_shared_from_this<AioPoll> {
 public:
  AioPoll(std::weak_ptr<AioContext> ctx, vfs::FileRef f, EventMask want, const AioEvent& ev,
          std::shared_ptr<vfs::EventFd> resfd)
      : ctx_(std::move(ctx)), file_(std::move(f)), want_(want), ev_(ev), resfd_(std::move(resfd)) {}

  void OnNotify(EventMask events) override {
    if (!(events & want_) || scheduled_.exchange(true)) return;
    TimerQueue::Global().Schedule(absl::Now(), [w = weak_from_this()] {
      auto p = w.lock();
      if (!p) return;
      if (auto ctx = p->ctx_.lock()) ctx->RecheckPoll(p);
    });
  }

  // What is ready of what was asked, as Linux's vfs_poll(...) & req->events.
  EventMask Ready() { return file_->Readiness(want_) & want_; }

  const std::weak_ptr<AioContext> ctx_;
  const vfs::FileRef file_;
  const EventMask want_;
  const AioEvent ev_;
  const std::shared_ptr<vfs::EventFd> resfd_;
  WaitQueue::Registration reg_;
  std::atomic<bool> scheduled_{false};
};

uint64_t AioContext::TotalRequested() { return g_aio_nr.load(); }

Result<std::shared_ptr<AioContext>> AioContext::Create(uint32_t nr_events) {
  // Linux's ioctx_alloc: room for the events other CPUs may hold, doubled, in 32-bit
  // arithmetic (so 0x80000000 doubles to 0 and is refused with EAGAIN).
  uint32_t n = std::max<uint32_t>(nr_events, static_cast<uint32_t>(get_nprocs_conf()) * 4);
  n *= 2;
  if (n > 0x10000000u / sizeof(AioEvent)) return Errno(EINVAL);
  if (n == 0 || nr_events > kMaxNr) return Errno(EAGAIN);
  uint64_t size = (kHeaderSize + uint64_t{n} * sizeof(AioEvent) + 4095) & ~uint64_t{4095};
  uint32_t nr = static_cast<uint32_t>((size - kHeaderSize) / sizeof(AioEvent));
  uint64_t total = g_aio_nr.load();
  do {
    if (total + nr_events > kMaxNr) return Errno(EAGAIN);
  } while (!g_aio_nr.compare_exchange_weak(total, total + nr_events));
  std::shared_ptr<AioContext> ctx(new AioContext(nr_events, nr));
  ctx->ring_fd_ = memfd_create("[aio]", MFD_CLOEXEC);
  if (ctx->ring_fd_ < 0 || ftruncate(ctx->ring_fd_, static_cast<off_t>(size)) != 0) {
    return Errno(EAGAIN);
  }
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, ctx->ring_fd_, 0);
  if (p == MAP_FAILED) return Errno(EAGAIN);
  ctx->ring_ = static_cast<uint8_t*>(p);
  ctx->ring_size_ = size;
  *Word(ctx->ring_, kId) = ~0u;
  *Word(ctx->ring_, kNr) = nr;
  *Word(ctx->ring_, kMagic) = kRingMagic;
  *Word(ctx->ring_, kCompat) = 1;
  *Word(ctx->ring_, kIncompat) = 0;
  *Word(ctx->ring_, kHeaderLength) = kHeaderSize;
  return ctx;
}

AioContext::~AioContext() {
  Kill();
  if (ring_) munmap(ring_, ring_size_);
  if (ring_fd_ >= 0) close(ring_fd_);
  g_aio_nr.fetch_sub(max_reqs_);
}

void AioContext::set_id(uint64_t id) {
  id_ = id;
  close(ring_fd_);
  ring_fd_ = -1;
}

void AioContext::set_index(uint32_t index) {
  __atomic_store_n(Word(ring_, kId), index, __ATOMIC_RELEASE);
}

uint32_t AioContext::HeadLocked() {
  // The guest may write any value here; Linux takes it modulo the ring size too.
  return __atomic_load_n(Word(ring_, kHead), __ATOMIC_ACQUIRE) % nr_;
}

Result<void> AioContext::Reserve() {
  absl::MutexLock l(&mu_);
  if (dead_) return Errno(EINVAL);
  uint32_t unreaped = (tail_ + nr_ - HeadLocked()) % nr_;
  if (in_flight_ + unreaped + 1 >= nr_) return Errno(EAGAIN);
  in_flight_++;
  return Ok();
}

void AioContext::Unreserve() {
  absl::MutexLock l(&mu_);
  if (in_flight_ > 0) in_flight_--;
}

void AioContext::Complete(const AioEvent& ev, const std::shared_ptr<vfs::EventFd>& resfd) {
  absl::MutexLock l(&mu_);
  CompleteLocked(ev, resfd);
}

void AioContext::CompleteLocked(const AioEvent& ev, const std::shared_ptr<vfs::EventFd>& resfd) {
  if (in_flight_ > 0) in_flight_--;
  memcpy(ring_ + kHeaderSize + uint64_t{tail_} * sizeof(AioEvent), &ev, sizeof(ev));
  tail_ = (tail_ + 1) % nr_;
  __atomic_store_n(Word(ring_, kTail), tail_, __ATOMIC_RELEASE);
  if (resfd) resfd->Signal(1);
  queue_.Notify(kEventIn);
}

size_t AioContext::Take(size_t max,
                        const std::function<size_t(std::span<const AioEvent>)>& deliver) {
  absl::MutexLock l(&mu_);
  if (dead_) return 0;
  uint32_t head = HeadLocked();
  std::vector<AioEvent> evs;
  for (uint32_t i = head; i != tail_ && evs.size() < max; i = (i + 1) % nr_) {
    AioEvent ev;
    memcpy(&ev, ring_ + kHeaderSize + uint64_t{i} * sizeof(AioEvent), sizeof(ev));
    evs.push_back(ev);
  }
  if (evs.empty()) return 0;
  size_t n = std::min(deliver(evs), evs.size());
  __atomic_store_n(Word(ring_, kHead), static_cast<uint32_t>((head + n) % nr_), __ATOMIC_RELEASE);
  return n;
}

void AioContext::StartPoll(vfs::FileRef f, EventMask want, const AioEvent& ev,
                           std::shared_ptr<vfs::EventFd> resfd) {
  auto p = std::make_shared<AioPoll>(weak_from_this(), std::move(f), want, ev, std::move(resfd));
  // Registered before the first check, so a wake-up in between is not lost, and under mu_,
  // so that its re-check waits until the poll is on polls_.
  absl::MutexLock l(&mu_);
  if (WaitQueue* q = p->file_->Queue()) p->reg_ = q->AddCallback(p.get(), want);
  if (EventMask ready = p->Ready(); ready || dead_) {
    p->reg_.Reset();
    CompleteLocked({p->ev_.data, p->ev_.obj, ready, 0}, p->resfd_);
    return;
  }
  polls_.push_back(std::move(p));
}

void AioContext::RecheckPoll(const std::shared_ptr<AioPoll>& p) {
  absl::MutexLock l(&mu_);
  auto it = std::find(polls_.begin(), polls_.end(), p);
  if (it == polls_.end()) return;
  // Cleared before the check: a wake-up after it schedules another.
  p->scheduled_.store(false);
  EventMask ready = p->Ready();
  if (!ready) return;
  // Linux completes a woken poll with the wake-up's events, which carry POLLRDNORM and
  // POLLWRNORM along with POLLIN and POLLOUT.
  EventMask norm = (ready & kEventIn ? kEventRdNorm : 0) | (ready & kEventOut ? kEventWrNorm : 0);
  if (norm) ready |= p->file_->Readiness(norm) & norm;
  polls_.erase(it);
  p->reg_.Reset();
  CompleteLocked({p->ev_.data, p->ev_.obj, ready, 0}, p->resfd_);
}

Result<void> AioContext::Cancel(uint64_t obj) {
  absl::MutexLock l(&mu_);
  auto it = std::find_if(polls_.begin(), polls_.end(),
                         [obj](const auto& p) { return p->ev_.obj == obj; });
  if (dead_ || it == polls_.end()) return Errno(EINVAL);
  std::shared_ptr<AioPoll> p = std::move(*it);
  polls_.erase(it);
  p->reg_.Reset();
  CompleteLocked({p->ev_.data, p->ev_.obj, p->Ready(), 0}, p->resfd_);
  return Ok();
}

void AioContext::Kill() {
  std::list<std::shared_ptr<AioPoll>> polls;
  {
    absl::MutexLock l(&mu_);
    if (dead_) return;
    dead_ = true;
    polls.swap(polls_);
    in_flight_ = 0;
  }
  for (auto& p : polls) p->reg_.Reset();
  queue_.Notify(kAllEvents);
}

AioTable::~AioTable() {
  absl::MutexLock l(&mu_);
  for (auto& ctx : slots_) {
    if (ctx) ctx->Kill();
  }
}

std::shared_ptr<AioTable> AioTable::Of(mm::MemoryManager& mm, bool create) {
  std::function<std::shared_ptr<void>()> make;
  if (create) make = [] { return std::make_shared<AioTable>(); };
  return std::static_pointer_cast<AioTable>(mm.aio_table(make));
}

Result<std::shared_ptr<AioContext>> AioTable::Lookup(uint32_t index, uint64_t id) {
  absl::MutexLock l(&mu_);
  if (index >= slots_.size() || !slots_[index] || slots_[index]->id() != id) {
    return Errno(EINVAL);
  }
  return slots_[index];
}

void AioTable::Add(std::shared_ptr<AioContext> ctx) {
  absl::MutexLock l(&mu_);
  auto it = std::find(slots_.begin(), slots_.end(), nullptr);
  if (it == slots_.end()) it = slots_.insert(it, nullptr);
  ctx->set_index(static_cast<uint32_t>(it - slots_.begin()));
  *it = std::move(ctx);
}

Result<std::shared_ptr<AioContext>> AioTable::Remove(uint32_t index, uint64_t id) {
  absl::MutexLock l(&mu_);
  if (index >= slots_.size() || !slots_[index] || slots_[index]->id() != id) {
    return Errno(EINVAL);
  }
  return std::exchange(slots_[index], nullptr);
}

}  // namespace sentry::kernel
