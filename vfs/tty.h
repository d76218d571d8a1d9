// Terminals: Unix98 pseudo-terminal pairs (/dev/ptmx, /dev/pts/N) with a line discipline
// (canonical and raw input, echo, signals from ^C/^Z/^\, output post-processing), window
// sizes, and job control (foreground process group, controlling terminal of a session,
// SIGTTIN/SIGTTOU for background jobs, SIGHUP on hangup).
//
// vfs/ does not know about tasks: what the line discipline must ask of the kernel about the
// calling task (its process group, session, signal dispositions) goes through TtyHost, which
// the kernel installs once.
//
// Lock order: Tty::mu_ -> WaitQueue::mu_. TtyHost is never called with Tty::mu_ held except
// CallerPgid/CallerSid, which take only Kernel::mu_ (a leaf with respect to vfs locks).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "sentry/base/errno.h"
#include "sentry/base/wait_queue.h"
#include "vfs/file.h"
#include "vfs/inode.h"

namespace sentry::vfs {

// The kernel's side of job control, about the task making the current call.
class TtyHost {
 public:
  virtual ~TtyHost() = default;
  virtual int CallerPgid() = 0;
  virtual int CallerSid() = 0;
  virtual bool CallerIsSessionLeader() = 0;
  virtual bool CallerPrivileged() = 0;  // CAP_SYS_ADMIN: may steal a controlling terminal
  virtual uint32_t CallerUid() = 0;     // owner of the /dev/pts/N it makes
  // Whether the calling thread ignores or blocks `sig`.
  virtual bool CallerIgnoresOrBlocks(int sig) = 0;
  // No member of `pgid` has a parent in another group of the same session.
  virtual bool PgrpOrphaned(int pgid) = 0;
  // Some process of session `sid` is in group `pgid`.
  virtual bool PgrpInSession(int pgid, int sid) = 0;
  virtual void SignalPgrp(int pgid, int sig) = 0;
};
void SetTtyHost(TtyHost* host);

// The kernel layout of struct termios (TCGETS/TCSETS) and termios2 (TCGETS2).
struct KernelTermios {
  uint32_t c_iflag, c_oflag, c_cflag, c_lflag;
  uint8_t c_line;
  uint8_t c_cc[19];
  uint32_t c_ispeed, c_ospeed;  // termios2 only
};
constexpr size_t kTermiosSize = 36;
constexpr size_t kTermios2Size = 44;

struct WinSize {
  uint16_t ws_row, ws_col, ws_xpixel, ws_ypixel;
};

class Tty;
using TtyRef = std::shared_ptr<Tty>;

// One pseudo-terminal pair: the slave's line discipline and both ends' queues.
class Tty : public std::enable_shared_from_this<Tty> {
 public:
  explicit Tty(int index);
  int index() const { return index_; }
  // The foreground process group (0: none), read without the terminal's lock.
  int ForegroundPgrpRelaxed() const { return fg_pgrp_.load(std::memory_order_relaxed); }

  // The slave end (/dev/pts/N).
  Result<size_t> SlaveRead(Blocker& b, std::span<uint8_t> dst, bool nonblock);
  Result<size_t> SlaveWrite(Blocker& b, std::span<const uint8_t> src, bool nonblock);
  EventMask SlaveReadiness();
  // The master end (/dev/ptmx).
  Result<size_t> MasterRead(Blocker& b, std::span<uint8_t> dst, bool nonblock);
  Result<size_t> MasterWrite(std::span<const uint8_t> src);
  EventMask MasterReadiness();
  WaitQueue& queue() { return queue_; }

  // Opens and closes of each end.
  Result<void> SlaveOpened(int flags);
  void SlaveClosed();
  void MasterClosed();
  bool locked();
  void set_locked(bool l);
  bool master_open();

  // ioctls; `master` says which end was asked (the master's act on the slave's settings,
  // without job control).
  KernelTermios GetTermios(bool master);
  // TCSETS/TCSETSW/TCSETSF; `flush` discards pending input. Background callers get SIGTTOU.
  Result<void> SetTermios(bool master, const KernelTermios& t, bool flush);
  WinSize GetWinSize();
  void SetWinSize(const WinSize& ws);
  Result<int> GetForegroundPgrp(bool master);
  Result<void> SetForegroundPgrp(bool master, int pgid);
  Result<int> GetSession();
  // TIOCSCTTY: the caller's session takes this as its controlling terminal.
  Result<void> MakeControlling(bool steal);
  // Makes this the controlling terminal of session `sid` with `pgrp` in the foreground, for a
  // session made outside any guest call (sentry-run's init on the caller's terminal).
  void AttachSession(int sid, int pgrp);
  // TIOCNOTTY: the caller's session gives it up (the leader's foreground group gets SIGHUP).
  Result<void> GiveUpControlling();
  // TCFLSH: 0 input, 1 output, 2 both.
  Result<void> Flush(int which);
  size_t InputAvailable();
  size_t OutputPending();

  // A session ended (its leader exited): if this is its terminal, the foreground group
  // gets SIGHUP and SIGCONT and the terminal is free again.
  void SessionEnded(int sid);

 private:
  // Whether a call from the current task may go on: background readers (SIGTTIN) and, with
  // TOSTOP or for settings changes, writers (SIGTTOU) are stopped first.
  // `always`: settings changes stop a background job whatever TOSTOP says.
  Result<void> CheckJobControl(int sig, bool always = false);
  void ReceiveLocked(uint8_t c) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EchoLocked(uint8_t c) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EraseLocked(bool word) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void OutputLocked(uint8_t c) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool ReadableLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int index_;
  WaitQueue queue_;
  absl::Mutex mu_;
  KernelTermios termios_ ABSL_GUARDED_BY(mu_);
  WinSize winsize_ ABSL_GUARDED_BY(mu_){};
  std::string line_ ABSL_GUARDED_BY(mu_);              // canonical: the line being edited
  std::deque<uint8_t> input_ ABSL_GUARDED_BY(mu_);     // what slave reads may take
  size_t lines_ ABSL_GUARDED_BY(mu_) = 0;              // canonical: complete lines in input_
  std::deque<size_t> line_ends_ ABSL_GUARDED_BY(mu_);  // their lengths (EOF lines: 0)
  std::deque<uint8_t> output_ ABSL_GUARDED_BY(mu_);    // what master reads take
  int slave_opens_ ABSL_GUARDED_BY(mu_) = 0;
  bool slave_ever_opened_ ABSL_GUARDED_BY(mu_) = false;
  bool master_open_ ABSL_GUARDED_BY(mu_) = true;
  bool locked_ ABSL_GUARDED_BY(mu_) = true;
  int session_ ABSL_GUARDED_BY(mu_) = 0;  // 0: no session's controlling terminal
  // Written under mu_; read without it by ControllingTtyForProc (under the kernel's lock,
  // which calls into the terminal must not take after mu_ is held).
  std::atomic<int> fg_pgrp_ = 0;
  std::vector<int> pending_signals_ ABSL_GUARDED_BY(mu_);  // from ^C etc., sent unlocked
};

// The terminal behind an open file, if it is either end of a pty; `*master` says which.
Tty* AsTty(FileDescription& f, bool* master);
// A new pair (open of /dev/ptmx): the master's open file.
Result<FileRef> OpenPtmx(int flags);
// The slave of `tty` opened anew (TIOCGPTPEER).
Result<FileRef> OpenPtySlave(const TtyRef& tty, int flags);
// The /dev/pts/N inode of pair `index` (null once it is gone).
InodeRef PtsNode(int index);
// The shared pointer of a terminal (for TIOCGPTPEER).
TtyRef TtyRefOf(Tty& tty);
// /dev/tty: the caller's controlling terminal (ENXIO if none).
Result<FileRef> OpenControllingTty(int flags);
// The devpts file system for /dev/pts: a directory of the live slaves and "ptmx".
InodeRef NewDevpts();
// The caller's session ended: see Tty::SessionEnded.
void TtySessionEnded(int sid);
// For /proc/PID/stat's tty_nr and tpgid: the device number (as Linux encodes it there) of
// session `sid`'s controlling terminal and its foreground process group; (0, -1) when the
// session has none. Takes no terminal's lock.
std::pair<uint32_t, int> ControllingTtyForProc(int sid);

}  // namespace sentry::vfs
