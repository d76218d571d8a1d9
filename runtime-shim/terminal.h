// sentry-run on a terminal. The guest gets a pseudo-terminal of the Sentry's own devpts as
// its controlling terminal (init's session, init's group in the foreground) for those of its
// fds 0-2 that are the caller's terminal, and sentry-run relays bytes between that pty's
// master and the caller's terminal, which it keeps in raw mode meanwhile. So the guest's line
// discipline does what a terminal's does: echo, line editing, ^C and ^Z to the foreground
// job, job control, window size (SIGWINCH) — and the host terminal is never handed to guest
// code (no TIOCSTI on it, no ioctl at all).
#pragma once

#include <termios.h>

#include <atomic>
#include <memory>
#include <thread>

#include "absl/status/statusor.h"
#include "vfs/tty.h"
#include "vfs/vfs.h"

namespace sentry::shim {

class TerminalRelay {
 public:
  // Starts relaying if fd 0 is a terminal and sentry-run is in its foreground process
  // group; null (and nothing changed) otherwise.
  // The guest's end is opened as /dev/pts/N of `vfs` (so that ttyname finds it).
  static absl::StatusOr<std::unique_ptr<TerminalRelay>> StartIfTerminal(vfs::Vfs& vfs);
  // Relays to the host terminal `fd` (both ways), put in raw mode meanwhile: the OCI
  // runtime's end of the pty whose master went to the --console-socket. With `sigwinch`,
  // `fd` is this process's controlling terminal and SIGWINCH tells of a new size (one relay
  // at a time); without, the size is polled (an exec'd process's terminal).
  static absl::StatusOr<std::unique_ptr<TerminalRelay>> Start(vfs::Vfs& vfs, int fd,
                                                              bool sigwinch = true);
  ~TerminalRelay();

  // The guest's end, for each of fds 0-2 that is the caller's terminal.
  vfs::FileRef slave() const { return slave_; }
  // Makes the pty the controlling terminal of session `sid` (init's) with `pgrp` in front.
  void AttachSession(int sid, int pgrp) { tty_->AttachSession(sid, pgrp); }
  // After the guest has exited: copies out what it wrote last, stops relaying and gives the
  // caller's terminal its settings back. Also done by the destructor.
  void Finish();

 private:
  TerminalRelay() = default;
  static absl::StatusOr<std::unique_ptr<TerminalRelay>> Make(vfs::Vfs& vfs, int in_fd,
                                                             int out_fd, bool sigwinch);
  // Gives the guest's pty the host terminal's size if it changed.
  void UpdateSize();
  void CopyOut();  // the master's output to the caller's terminal
  void CopyIn();   // the caller's keystrokes (and window size changes) to the master

  int in_fd_ = 0;
  bool sigwinch_ = true;
  struct winsize size_ {};
  int out_fd_ = 1;
  struct termios saved_ {};
  vfs::FileRef master_, slave_;
  vfs::TtyRef tty_;
  int wake_ = -1;  // an eventfd that wakes CopyIn: to stop (stop_) or for a new window size
  std::atomic<bool> stop_{false};
  class Blocker;
  std::unique_ptr<Blocker> blocker_;
  std::thread out_thread_, in_thread_;
  bool finished_ = false;
};

}  // namespace sentry::shim
