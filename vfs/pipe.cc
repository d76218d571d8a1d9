#include "vfs/pipe.h"

#include <sys/ioctl.h>

#include <atomic>
#include <cstring>

namespace sentry::vfs {

namespace {
// Wakes FIFO opens waiting for a partner (WaitPartner) and nobody else: not a poll event.
constexpr EventMask kFifoOpened = 1u << 30;
}  // namespace

Result<size_t> Pipe::Read(Blocker& b, std::span<uint8_t> dst, bool nonblock) {
  if (dst.empty()) return size_t{0};
  ScopedWait wait(queue_, b.waiter(), kEventIn | kEventHup);
  for (;;) {
    {
      absl::MutexLock l(&mu_);
      if (!buf_.empty()) {
        size_t n = std::min(dst.size(), buf_.size());
        std::copy_n(buf_.begin(), n, dst.begin());
        buf_.erase(buf_.begin(), buf_.begin() + n);
        queue_.Notify(kEventOut);
        return n;
      }
      if (writers_ == 0) return size_t{0};
      if (nonblock) return Errno(EAGAIN);
    }
    SENTRY_TRY(b.Wait());
  }
}

Result<size_t> Pipe::Write(Blocker& b, std::span<const uint8_t> src, bool nonblock) {
  if (src.empty()) return size_t{0};
  ScopedWait wait(queue_, b.waiter(), kEventOut | kEventErr);
  size_t done = 0;
  for (;;) {
    {
      absl::MutexLock l(&mu_);
      if (readers_ == 0) return done ? Result<size_t>(done) : Errno(EPIPE);
      size_t room = capacity_ > buf_.size() ? capacity_ - buf_.size() : 0;
      size_t left = src.size() - done;
      // Small writes go in whole or not at all.
      if (room > 0 && (left > kPipeBuf || room >= left)) {
        size_t n = std::min(room, left);
        buf_.insert(buf_.end(), src.begin() + done, src.begin() + done + n);
        done += n;
        queue_.Notify(kEventIn);
        if (done == src.size()) return done;
      }
      if (nonblock) return done ? Result<size_t>(done) : Errno(EAGAIN);
    }
    auto r = b.Wait();
    if (!r.ok()) return done ? Result<size_t>(done) : r.error();
  }
}

EventMask Pipe::Readiness(bool read_end) {
  absl::MutexLock l(&mu_);
  EventMask m = 0;
  if (read_end) {
    if (!buf_.empty()) m |= kEventIn | kEventRdNorm;
    if (writers_ == 0 && had_writer_) m |= kEventHup;
  } else {
    if (capacity_ >= buf_.size() + std::min(kPipeBuf, capacity_)) m |= kEventOut | kEventWrNorm;
    if (readers_ == 0) m |= kEventErr;
  }
  return m;
}

size_t Pipe::capacity() {
  absl::MutexLock l(&mu_);
  return capacity_;
}

Result<size_t> Pipe::SetCapacity(size_t bytes) {
  size_t cap = kPipeBuf;
  while (cap < bytes) cap <<= 1;
  {
    absl::MutexLock l(&mu_);
    if (buf_.size() > cap) return Errno(EBUSY);
    capacity_ = cap;
  }
  queue_.Notify(kEventOut);
  return cap;
}

size_t Pipe::Available() {
  absl::MutexLock l(&mu_);
  return buf_.size();
}

Result<size_t> Pipe::WaitData(Blocker& b, bool nonblock) {
  ScopedWait wait(queue_, b.waiter(), kEventIn | kEventHup);
  for (;;) {
    {
      absl::MutexLock l(&mu_);
      if (!buf_.empty()) return buf_.size();
      if (writers_ == 0) return size_t{0};
      if (nonblock) return Errno(EAGAIN);
    }
    SENTRY_TRY(b.Wait());
  }
}

Result<size_t> Pipe::WaitRoom(Blocker& b, bool nonblock) {
  ScopedWait wait(queue_, b.waiter(), kEventOut | kEventErr);
  for (;;) {
    {
      absl::MutexLock l(&mu_);
      if (readers_ == 0) return Errno(EPIPE);
      if (buf_.size() < capacity_) return capacity_ - buf_.size();
      if (nonblock) return Errno(EAGAIN);
    }
    SENTRY_TRY(b.Wait());
  }
}

size_t Pipe::Peek(std::span<uint8_t> dst) {
  absl::MutexLock l(&mu_);
  size_t n = std::min(dst.size(), buf_.size());
  std::copy_n(buf_.begin(), n, dst.begin());
  return n;
}

void Pipe::Consume(size_t n) {
  absl::MutexLock l(&mu_);
  n = std::min(n, buf_.size());
  buf_.erase(buf_.begin(), buf_.begin() + n);
  if (n) queue_.Notify(kEventOut);
}

void Pipe::AddEnd(bool read_end) {
  {
    absl::MutexLock l(&mu_);
    if (read_end) {
      readers_++;
      read_opens_++;
    } else {
      writers_++;
      write_opens_++;
      had_writer_ = true;
    }
  }
  queue_.Notify(kFifoOpened);
}

Result<void> Pipe::CheckNonblockingWriterOpen() {
  absl::MutexLock l(&mu_);
  if (readers_ == 0) return Errno(ENXIO);
  return Ok();
}

Result<void> Pipe::WaitPartner(Blocker& b, bool read_end) {
  ScopedWait wait(queue_, b.waiter(), kFifoOpened);
  uint64_t seen;
  {
    absl::MutexLock l(&mu_);
    if (read_end ? writers_ > 0 : readers_ > 0) return Ok();
    seen = read_end ? write_opens_ : read_opens_;
  }
  for (;;) {
    SENTRY_TRY(b.Wait());
    absl::MutexLock l(&mu_);
    if ((read_end ? write_opens_ : read_opens_) != seen) return Ok();
  }
}

void Pipe::RemoveEnd(bool read_end) {
  absl::MutexLock l(&mu_);
  if (read_end) {
    readers_--;
  } else {
    writers_--;
  }
  queue_.Notify(kAllEvents);
}

namespace {

class PipeEnd final : public FileDescription {
 public:
  // A FIFO opened O_RDWR is both ends at once.
  PipeEnd(std::shared_ptr<Pipe> pipe, bool read_end, bool write_end, int flags)
      : FileDescription(flags), pipe_(std::move(pipe)), read_end_(read_end), write_end_(write_end) {
    if (read_end_) pipe_->AddEnd(true);
    if (write_end_) pipe_->AddEnd(false);
  }
  ~PipeEnd() override {
    StopAsync();
    if (read_end_) pipe_->RemoveEnd(true);
    if (write_end_) pipe_->RemoveEnd(false);
  }

  Result<size_t> Read(Blocker& b, std::span<uint8_t> dst) override {
    if (!read_end_) return Errno(EBADF);
    return pipe_->Read(b, dst, NonBlocking());
  }
  Result<size_t> Write(Blocker& b, std::span<const uint8_t> src) override {
    if (!write_end_) return Errno(EBADF);
    return pipe_->Write(b, src, NonBlocking());
  }
  EventMask Readiness(EventMask mask) override {
    EventMask m = 0;
    if (read_end_) m |= pipe_->Readiness(true);
    if (write_end_) m |= pipe_->Readiness(false);
    return m & (mask | kEventHup | kEventErr);
  }
  WaitQueue* Queue() override { return &pipe_->queue(); }
  bool SignalsAsync() const override { return true; }
  Result<void> Stat(struct stat* st) override {
    if (inode()) return FileDescription::Stat(st);  // a FIFO opened by path
    memset(st, 0, sizeof(*st));
    st->st_mode = S_IFIFO | 0600;
    st->st_ino = pipe_->id();
    st->st_dev = 12;
    st->st_nlink = 1;
    st->st_blksize = 4096;
    return Ok();
  }
  Result<uint64_t> Ioctl(Blocker&, uint64_t cmd, uint64_t) override {
    if (cmd == FIONREAD) return static_cast<uint64_t>(pipe_->Available());
    return Errno(ENOTTY);
  }
  std::string Name() const override { return "pipe:[" + std::to_string(pipe_->id()) + "]"; }
  const std::shared_ptr<Pipe>& pipe() const { return pipe_; }

 private:
  std::shared_ptr<Pipe> pipe_;
  bool read_end_;
  bool write_end_;
};

std::atomic<uint64_t> g_next_pipe_id{1000};

}  // namespace

std::shared_ptr<Pipe> PipeOf(const FileDescription& f) {
  auto* end = dynamic_cast<const PipeEnd*>(&f);
  return end ? end->pipe() : nullptr;
}

std::pair<FileRef, FileRef> NewPipe(int flags) {
  auto pipe = std::make_shared<Pipe>(g_next_pipe_id.fetch_add(1));
  int status = flags & O_NONBLOCK;
  return {std::make_shared<PipeEnd>(pipe, true, false, O_RDONLY | status),
          std::make_shared<PipeEnd>(pipe, false, true, O_WRONLY | status)};
}

std::shared_ptr<Pipe> NewFifoPipe() { return std::make_shared<Pipe>(g_next_pipe_id.fetch_add(1)); }

Result<FileRef> OpenFifo(const std::shared_ptr<Pipe>& pipe, int flags) {
  int acc = flags & O_ACCMODE;
  if (acc == O_ACCMODE) return Errno(EINVAL);  // neither end: Linux's fifo_open refuses
  if (acc == O_WRONLY && (flags & O_NONBLOCK)) SENTRY_TRY(pipe->CheckNonblockingWriterOpen());
  return FileRef(std::make_shared<PipeEnd>(pipe, acc != O_WRONLY, acc != O_RDONLY, flags));
}

Result<void> WaitFifoPartner(Blocker& b, const FileDescription& f) {
  auto* end = dynamic_cast<const PipeEnd*>(&f);
  if (end == nullptr) return Ok();
  int acc = f.flags() & O_ACCMODE;
  if (acc == O_RDWR) return Ok();
  return end->pipe()->WaitPartner(b, acc == O_RDONLY);
}

}  // namespace sentry::vfs
