// Signal-driven I/O: the F_SETOWN owner and F_SETSIG signal of an open file, and the O_ASYNC
// watch that sends that signal when the file becomes ready (Linux's fown_struct and fasync).
//
// A file takes part by returning true from FileDescription::SignalsAsync() and notifying
// its Queue() with the events that just became true (kEventIn for new data, kEventOut for new
// room, kEventHup/kEventErr when a peer goes away). While O_ASYNC is on, AsyncState is a
// callback on that queue, and each notification becomes a signal per direction the file's
// access mode cares about: POLL_IN (input, hangup or error on a readable file), POLL_OUT
// (room on a writable one), as Linux's kill_fasync calls, whether or not the data is still
// there when the signal arrives. A file whose queue is shared with another (a pty's master
// and slave) says so with AsyncChecksReadiness(): its notifications are checked against its
// Readiness() first, to drop those meant for the other. Leases use SendLeaseBreak (POLL_MSG).
//
// Signals go out on the TimerQueue thread, shortly after the notification: notifiers hold
// their own locks and the queue's, and signals need Kernel::mu_, which comes first.
//
// Lock order: AsyncState::reg_mu_ -> WaitQueue::mu_ -> AsyncState::mu_ (a leaf).
#pragma once

#include <cstdint>
#include <memory>

#include "absl/synchronization/mutex.h"
#include "sentry/base/wait_queue.h"

namespace sentry::vfs {

class FileDescription;

// Who gets the signals (F_SETOWN, F_SETOWN_EX), and the ids of whoever set it: Linux checks
// the setter's uid/euid against the target's (sigio_perm), not the notifier's.
struct FileOwner {
  enum class Kind { kTid, kPid, kPgrp };  // F_OWNER_TID, F_OWNER_PID, F_OWNER_PGRP
  Kind kind = Kind::kTid;
  int id = 0;  // 0: nobody
  uint32_t uid = 0;
  uint32_t euid = 0;
};

// si_code values of SIGIO-style signals (POLL_IN ... POLL_HUP).
inline constexpr int kPollIn = 1;
inline constexpr int kPollOut = 2;
inline constexpr int kPollMsg = 3;

// What vfs needs from the kernel: finding and signalling owners. Installed once at start.
class AsyncHost {
 public:
  virtual ~AsyncHost() = default;
  // Sends `sig` to `owner` with si_code `code` and si_band/si_fd filled in, or SIGIO
  // (SI_KERNEL) when `sig` is 0. Runs on the TimerQueue thread with no lock held.
  virtual void SignalOwner(const FileOwner& owner, int sig, int code, int fd) = 0;
};
void SetAsyncHost(AsyncHost* host);

class AsyncState final : public WaitCallback {
 public:
  AsyncState() = default;
  ~AsyncState() { Disable(); }

  FileOwner owner() {
    absl::MutexLock l(&mu_);
    return owner_;
  }
  void set_owner(const FileOwner& o) {
    absl::MutexLock l(&mu_);
    owner_ = o;
  }
  int signal() {
    absl::MutexLock l(&mu_);
    return sig_;
  }
  void set_signal(int sig) {
    absl::MutexLock l(&mu_);
    sig_ = sig;
  }

  // O_ASYNC turned on for `file` through fd number `fd` (what si_fd reports): watch its
  // Queue(), if it signals at all (SignalsAsync).
  void Enable(const std::shared_ptr<FileDescription>& file, int fd);
  // O_ASYNC off, or the file is going away. False if the watch was not on.
  bool Disable();
  // Signals the owner with si_code `code` (kill_fasync) if O_ASYNC is on.
  void Send(int code);
  // A lease of this file is being broken: POLL_MSG with si_fd `fd` (the F_SETLEASE fd),
  // O_ASYNC or not.
  void SendLeaseBreak(int fd);
  // F_SETLEASE makes the caller's process the owner unless one is set already.
  void SetOwnerIfNone(const FileOwner& o);

  void OnNotify(EventMask events) override;

 private:
  void SendNow(int code, int fd) ABSL_LOCKS_EXCLUDED(mu_);

  absl::Mutex reg_mu_;
  WaitQueue::Registration reg_ ABSL_GUARDED_BY(reg_mu_);

  absl::Mutex mu_;
  FileOwner owner_ ABSL_GUARDED_BY(mu_);
  int sig_ ABSL_GUARDED_BY(mu_) = 0;
  int fd_ ABSL_GUARDED_BY(mu_) = -1;
  bool enabled_ ABSL_GUARDED_BY(mu_) = false;
  // Fixed for the file; copied at Enable because OnNotify may not take the file's lock.
  bool readable_ ABSL_GUARDED_BY(mu_) = false;
  bool writable_ ABSL_GUARDED_BY(mu_) = false;
  bool check_readiness_ ABSL_GUARDED_BY(mu_) = false;
  std::weak_ptr<FileDescription> file_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sentry::vfs
