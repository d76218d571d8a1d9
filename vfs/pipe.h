// Pipes: a bounded byte buffer with reader and writer ends. POSIX atomicity: writes of up to
// PIPE_BUF bytes are never interleaved with other writes.
#pragma once

#include <deque>
#include <memory>

#include "vfs/file.h"

namespace sentry::vfs {

inline constexpr size_t kPipeCapacity = 65536;
inline constexpr size_t kPipeBuf = 4096;

class Pipe {
 public:
  explicit Pipe(uint64_t id) : id_(id) {}
  uint64_t id() const { return id_; }

  Result<size_t> Read(Blocker& b, std::span<uint8_t> dst, bool nonblock);
  // EPIPE when no reader is left; the caller raises SIGPIPE.
  Result<size_t> Write(Blocker& b, std::span<const uint8_t> src, bool nonblock);
  EventMask Readiness(bool read_end);
  size_t Available();

  // For splice and tee. Waits until the pipe holds data and returns how much (0: no writer
  // is left and the pipe is empty).
  Result<size_t> WaitData(Blocker& b, bool nonblock);
  // Waits until the pipe has room and returns how much; EPIPE when no reader is left.
  Result<size_t> WaitRoom(Blocker& b, bool nonblock);
  // Copies up to dst.size() bytes from the front without consuming them.
  size_t Peek(std::span<uint8_t> dst);
  // Drops up to n bytes from the front (after a Peek whose bytes went elsewhere).
  void Consume(size_t n);
  WaitQueue& queue() { return queue_; }
  // F_GETPIPE_SZ / F_SETPIPE_SZ: the capacity in bytes. Setting rounds up to a power-of-two
  // number of pages (at least one); EBUSY if the pipe holds more than the new size.
  size_t capacity();
  Result<size_t> SetCapacity(size_t bytes);

  void AddEnd(bool read_end);
  void RemoveEnd(bool read_end);
  // FIFO opens: ENXIO for a non-blocking writer with no reader (Linux's fifo_open).
  Result<void> CheckNonblockingWriterOpen();
  // Waits until an end of the other kind has been opened since this one was (returns at once
  // if one is open now), as Linux's wait_for_partner.
  Result<void> WaitPartner(Blocker& b, bool read_end);

 private:
  const uint64_t id_;
  absl::Mutex mu_;
  std::deque<uint8_t> buf_ ABSL_GUARDED_BY(mu_);
  int readers_ ABSL_GUARDED_BY(mu_) = 0;
  int writers_ ABSL_GUARDED_BY(mu_) = 0;
  bool had_writer_ ABSL_GUARDED_BY(mu_) = false;
  // Opens of each end so far, for WaitPartner.
  uint64_t read_opens_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t write_opens_ ABSL_GUARDED_BY(mu_) = 0;
  size_t capacity_ ABSL_GUARDED_BY(mu_) = kPipeCapacity;
  WaitQueue queue_;
};

// The pipe behind `f` if it is a pipe or FIFO end, else null.
std::shared_ptr<Pipe> PipeOf(const FileDescription& f);

// Returns the {read, write} ends of a new pipe.
std::pair<FileRef, FileRef> NewPipe(int flags);

// FIFOs (mkfifo): the pipe lives with the inode; each open makes an end. A blocking
// O_RDONLY or O_WRONLY open then waits for the other side with WaitFifoPartner (the VFS
// calls it once the open file has its place); O_RDWR never waits.
std::shared_ptr<Pipe> NewFifoPipe();
Result<FileRef> OpenFifo(const std::shared_ptr<Pipe>& pipe, int flags);
Result<void> WaitFifoPartner(Blocker& b, const FileDescription& f);

}  // namespace sentry::vfs
