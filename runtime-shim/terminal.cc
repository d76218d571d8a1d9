#include "runtime-shim/terminal.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "sentry/base/wait_queue.h"

namespace sentry::shim {

// MasterRead's waits, on a relay thread: woken by the pty's queue, or by Finish.
class TerminalRelay::Blocker final : public sentry::Blocker {
 public:
  explicit Blocker(const std::atomic<bool>& stop) : stop_(stop) {}
  Waiter& waiter() override { return w_; }
  Result<void> Wait(absl::Time deadline) override {
    if (stop_.load()) return Errno(kERESTARTSYS);
    if (!w_.WaitUntil(deadline)) return Errno(ETIMEDOUT);
    if (stop_.load()) return Errno(kERESTARTSYS);
    return Ok();
  }
  Result<int> WaitHostFd(int, short, absl::Time deadline) override {
    SENTRY_TRY(Wait(deadline));
    return 0;
  }

 private:
  const std::atomic<bool>& stop_;
  Waiter w_;
};

namespace {

int g_winch_fd = -1;  // the relay's wake pipe, for the SIGWINCH handler

void OnWinch(int) {
  if (g_winch_fd >= 0) {
    int saved = errno;
    uint64_t one = 1;
    (void)!write(g_winch_fd, &one, sizeof(one));
    errno = saved;
  }
}

bool WriteAll(int fd, const uint8_t* p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TerminalRelay>> TerminalRelay::StartIfTerminal(vfs::Vfs& vfs) {
  if (!isatty(0) || tcgetpgrp(0) != getpgrp()) return nullptr;
  return Make(vfs, 0, isatty(1) ? 1 : isatty(2) ? 2 : 0, true);
}

absl::StatusOr<std::unique_ptr<TerminalRelay>> TerminalRelay::Start(vfs::Vfs& vfs, int fd,
                                                                    bool sigwinch) {
  auto r = Make(vfs, fd, fd, sigwinch);
  if (r.ok() && *r == nullptr) return absl::InternalError("the container's terminal is not a terminal");
  return r;
}

absl::StatusOr<std::unique_ptr<TerminalRelay>> TerminalRelay::Make(vfs::Vfs& vfs, int in_fd,
                                                                   int out_fd, bool sigwinch) {
  std::unique_ptr<TerminalRelay> r(new TerminalRelay());
  r->in_fd_ = in_fd;
  r->sigwinch_ = sigwinch;
  r->out_fd_ = out_fd;
  auto master = vfs::OpenPtmx(O_RDWR);
  if (!master.ok()) return absl::InternalError("cannot make the guest's terminal");
  bool is_master = false;
  vfs::Tty* tty = vfs::AsTty(**master, &is_master);
  if (tty == nullptr) return absl::InternalError("cannot make the guest's terminal");
  r->master_ = *master;
  r->tty_ = vfs::TtyRefOf(*tty);
  r->tty_->set_locked(false);
  vfs::Context ctx;
  ctx.root = ctx.cwd = vfs.Root();
  std::string pts = "/dev/pts/" + std::to_string(tty->index());
  auto slave = vfs.Open(ctx, ctx.root, pts, O_RDWR | O_NOCTTY, 0);
  if (!slave.ok()) return absl::InternalError("cannot open the guest's terminal " + pts);
  r->slave_ = *slave;
  // The guest's terminal starts with the caller's settings and size.
  vfs::KernelTermios kt{};
  if (ioctl(in_fd, TCGETS, &kt) == 0) (void)r->tty_->SetTermios(true, kt, false);
  r->UpdateSize();
  if (tcgetattr(in_fd, &r->saved_) != 0) return nullptr;
  struct termios raw = r->saved_;
  cfmakeraw(&raw);
  if (tcsetattr(in_fd, TCSANOW, &raw) != 0) return nullptr;
  // An eventfd, not a pipe: the Sentry's allowlist has eventfd2 for its own wake-ups.
  r->wake_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (r->wake_ < 0) {
    tcsetattr(in_fd, TCSANOW, &r->saved_);
    return absl::InternalError("pipe for the terminal relay");
  }
  if (sigwinch) {
    g_winch_fd = r->wake_;
    struct sigaction sa {};
    sa.sa_handler = OnWinch;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGWINCH, &sa, nullptr);
  }
  r->blocker_ = std::make_unique<Blocker>(r->stop_);
  r->out_thread_ = std::thread([p = r.get()] { p->CopyOut(); });
  r->in_thread_ = std::thread([p = r.get()] { p->CopyIn(); });
  return r;
}

void TerminalRelay::CopyOut() {
  uint8_t buf[4096];
  for (;;) {
    bool stopping = stop_.load();
    // Once stopping, only what is already there: the guest has exited.
    auto n = tty_->MasterRead(*blocker_, buf, stopping);
    if (!n.ok()) {
      if (n.error() == EAGAIN || n.error() == EIO || stopping) return;
      if (n.error() == kERESTARTSYS) continue;  // Finish: one last nonblocking round
      return;
    }
    if (*n == 0 || !WriteAll(out_fd_, buf, *n)) return;
  }
}

void TerminalRelay::CopyIn() {
  uint8_t buf[4096];
  for (;;) {
    struct pollfd fds[2] = {{in_fd_, POLLIN, 0}, {wake_, POLLIN, 0}};
    // Without SIGWINCH, a look at the size four times a second.
    int n = poll(fds, 2, sigwinch_ ? -1 : 250);
    if (n == 0) UpdateSize();
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents & POLLIN) {
      uint64_t count;
      (void)!read(wake_, &count, sizeof(count));
      if (stop_.load()) return;
      UpdateSize();
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t n = read(in_fd_, buf, sizeof(buf));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;  // the caller's terminal is gone
      (void)tty_->MasterWrite({buf, static_cast<size_t>(n)});
    }
  }
}

void TerminalRelay::Finish() {
  if (finished_) return;
  finished_ = true;
  stop_.store(true);
  blocker_->waiter().Notify();
  uint64_t one = 1;
  (void)!write(wake_, &one, sizeof(one));
  if (out_thread_.joinable()) out_thread_.join();
  if (in_thread_.joinable()) in_thread_.join();
  if (sigwinch_) {
    signal(SIGWINCH, SIG_DFL);
    g_winch_fd = -1;
  }
  close(wake_);
  tcsetattr(in_fd_, TCSADRAIN, &saved_);
}

TerminalRelay::~TerminalRelay() { Finish(); }

void TerminalRelay::UpdateSize() {
  struct winsize ws {};
  if (ioctl(in_fd_, TIOCGWINSZ, &ws) != 0) return;
  if (ws.ws_row == size_.ws_row && ws.ws_col == size_.ws_col &&
      ws.ws_xpixel == size_.ws_xpixel && ws.ws_ypixel == size_.ws_ypixel) {
    return;
  }
  size_ = ws;
  tty_->SetWinSize({ws.ws_row, ws.ws_col, ws.ws_xpixel, ws.ws_ypixel});
}

}  // namespace sentry::shim
