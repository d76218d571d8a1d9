#include "vfs/tty.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>
#include <termios.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <vector>

#include "vfs/mem_inode.h"
#include "vfs/synthetic.h"

namespace sentry::vfs {
namespace {

// The c_cc indices and flag bits of the kernel's termios (x86_64 values, which glibc shares).
constexpr int kVIntr = 0, kVQuit = 1, kVErase = 2, kVKill = 3, kVEof = 4, kVTime = 5, kVMin = 6,
              kVSusp = 10, kVEol = 11, kVWErase = 14, kVLNext = 15, kVEol2 = 16;
constexpr size_t kMaxCanon = 4095;       // N_TTY_BUF_SIZE - 1: longest canonical line
constexpr size_t kMaxQueue = 64 * 1024;  // bound of each direction's queue
constexpr uint32_t kDevptsMagic = 0x1cd1;
constexpr unsigned kPtsMajor = 136;
constexpr int kTtyGid = 5;

TtyHost* g_host = nullptr;

// The terminals by index (devpts) and by the session they control (/dev/tty).
struct Registry {
  struct Pts {
    std::weak_ptr<Tty> tty;
    InodeRef node;  // /dev/pts/N, one inode for the pair's life
  };
  absl::Mutex mu;
  std::map<int, Pts> by_index ABSL_GUARDED_BY(mu);
  std::map<int, std::weak_ptr<Tty>> by_session ABSL_GUARDED_BY(mu);
};
Registry& Reg() {
  static Registry* r = new Registry;
  return *r;
}

TtyRef ControllingTtyOf(int sid) {
  Registry& r = Reg();
  absl::MutexLock l(&r.mu);
  auto it = r.by_session.find(sid);
  return it == r.by_session.end() ? nullptr : it->second.lock();
}

void SetControlling(int sid, const TtyRef& tty) {
  Registry& r = Reg();
  absl::MutexLock l(&r.mu);
  if (tty) {
    r.by_session[sid] = tty;
  } else {
    r.by_session.erase(sid);
  }
}

// What Linux gives a new pty's slave: tty_std_termios.
KernelTermios StdTermios() {
  KernelTermios t{};
  t.c_iflag = ICRNL | IXON;
  t.c_oflag = OPOST | ONLCR;
  t.c_cflag = B38400 | CS8 | CREAD | HUPCL;
  t.c_lflag = ISIG | ICANON | ECHO | ECHOE | ECHOK | ECHOCTL | ECHOKE | IEXTEN;
  static const uint8_t kCc[19] = {3, 28, 127, 21, 4, 0, 1, 0, 17, 19, 26, 0, 18, 15, 23, 22, 0};
  std::copy(std::begin(kCc), std::end(kCc), t.c_cc);
  t.c_ispeed = t.c_ospeed = 38400;
  return t;
}

bool IsControl(uint8_t c) { return c < 0x20 || c == 0x7f; }

}  // namespace

void SetTtyHost(TtyHost* host) { g_host = host; }

Tty::Tty(int index) : index_(index), termios_(StdTermios()) {}

// --- Job control ---

Result<void> Tty::CheckJobControl(int sig, bool always) {
  if (g_host == nullptr) return Ok();
  int sid = g_host->CallerSid(), pgid = g_host->CallerPgid();
  {
    absl::MutexLock l(&mu_);
    if (session_ == 0 || session_ != sid || fg_pgrp_ == 0 || fg_pgrp_ == pgid) return Ok();
    if (sig == SIGTTOU && !always && !(termios_.c_lflag & TOSTOP)) return Ok();
  }
  if (g_host->CallerIgnoresOrBlocks(sig)) return sig == SIGTTIN ? Errno(EIO) : Ok();
  if (g_host->PgrpOrphaned(pgid)) return Errno(EIO);
  g_host->SignalPgrp(pgid, sig);
  return Errno(kERESTARTSYS);
}

// --- Input: what the master writes, through the line discipline ---

void Tty::OutputLocked(uint8_t c) {
  if (output_.size() >= kMaxQueue) return;  // nobody reads the master: drop, as n_tty does
  const uint32_t o = termios_.c_oflag;
  if (o & OPOST) {
    if (c == '\n' && (o & ONLCR)) {
      output_.push_back('\r');
    } else if (c == '\r' && (o & OCRNL)) {
      c = '\n';
    }
  }
  output_.push_back(c);
}

void Tty::EchoLocked(uint8_t c) {
  const uint32_t l = termios_.c_lflag;
  if (!(l & ECHO)) {
    if (c == '\n' && (l & ECHONL) && (l & ICANON)) OutputLocked('\n');
    return;
  }
  if ((l & ECHOCTL) && IsControl(c) && c != '\n' && c != '\t') {
    OutputLocked('^');
    OutputLocked(c ^ 0x40);
    return;
  }
  OutputLocked(c);
}

void Tty::EraseLocked(bool word) {
  const uint32_t l = termios_.c_lflag;
  auto erase_one = [&] {
    uint8_t c = static_cast<uint8_t>(line_.back());
    line_.pop_back();
    if (!(l & ECHO) || !(l & ECHOE)) return;
    int cols = (l & ECHOCTL) && IsControl(c) && c != '\t' ? 2 : 1;
    for (int i = 0; i < cols; i++) {
      output_.push_back('\b');
      output_.push_back(' ');
      output_.push_back('\b');
    }
  };
  if (!word) {
    if (!line_.empty()) erase_one();
    return;
  }
  while (!line_.empty() && (line_.back() == ' ' || line_.back() == '\t')) erase_one();
  while (!line_.empty() && line_.back() != ' ' && line_.back() != '\t') erase_one();
}

void Tty::ReceiveLocked(uint8_t c) {
  const uint32_t i = termios_.c_iflag, l = termios_.c_lflag;
  const uint8_t* cc = termios_.c_cc;
  if (i & ISTRIP) c &= 0x7f;
  if (c == '\r') {
    if (i & IGNCR) return;
    if (i & ICRNL) c = '\n';
  } else if (c == '\n' && (i & INLCR)) {
    c = '\r';
  }
  if (l & ISIG) {
    int sig = c == cc[kVIntr] ? SIGINT : c == cc[kVQuit] ? SIGQUIT : c == cc[kVSusp] ? SIGTSTP : 0;
    if (sig != 0 && c != 0) {
      if (!(l & NOFLSH)) {
        input_.clear();
        line_ends_.clear();
        line_.clear();
        output_.clear();
      }
      EchoLocked(c);
      pending_signals_.push_back(sig);
      return;
    }
  }
  if (l & ICANON) {
    if (c != 0 && c == cc[kVErase]) return EraseLocked(false);
    if (c != 0 && c == cc[kVWErase] && (l & IEXTEN)) return EraseLocked(true);
    if (c != 0 && c == cc[kVKill]) {
      if ((l & ECHOKE) && (l & ECHOE)) {
        while (!line_.empty()) EraseLocked(false);
      } else {
        line_.clear();
        EchoLocked(c);
        if (l & ECHOK) OutputLocked('\n');
      }
      return;
    }
    bool eof = c != 0 && c == cc[kVEof];
    bool eol = c == '\n' || (c != 0 && (c == cc[kVEol] || c == cc[kVEol2]));
    if (eof || eol) {
      if (eol) {
        line_.push_back(static_cast<char>(c));
        EchoLocked(c);
      }
      input_.insert(input_.end(), line_.begin(), line_.end());
      line_ends_.push_back(line_.size());
      line_.clear();
      return;
    }
    if (line_.size() >= kMaxCanon) return;  // a full line takes nothing but its end
    line_.push_back(static_cast<char>(c));
    EchoLocked(c);
    return;
  }
  if (input_.size() >= kMaxQueue) return;
  input_.push_back(c);
  EchoLocked(c);
}

Result<size_t> Tty::MasterWrite(std::span<const uint8_t> src) {
  std::vector<int> sigs;
  int pgrp;
  {
    absl::MutexLock l(&mu_);
    for (uint8_t c : src) ReceiveLocked(c);
    sigs.swap(pending_signals_);
    pgrp = fg_pgrp_;
  }
  queue_.Notify(kEventIn | kEventOut);
  if (g_host != nullptr && pgrp != 0) {
    for (int sig : sigs) g_host->SignalPgrp(pgrp, sig);
  }
  return src.size();
}

bool Tty::ReadableLocked() {
  if (termios_.c_lflag & ICANON) return !line_ends_.empty();
  return !input_.empty();
}

size_t Tty::InputAvailable() {
  absl::MutexLock l(&mu_);
  if (!(termios_.c_lflag & ICANON)) return input_.size();
  return line_ends_.empty() ? 0 : line_ends_.front();
}

size_t Tty::OutputPending() {
  absl::MutexLock l(&mu_);
  return output_.size();
}

Result<size_t> Tty::SlaveRead(Blocker& b, std::span<uint8_t> dst, bool nonblock) {
  SENTRY_TRY(CheckJobControl(SIGTTIN));
  if (dst.empty()) return size_t{0};
  ScopedWait wait(queue_, b.waiter(), kEventIn | kEventHup);
  absl::Time deadline = absl::InfiniteFuture();
  for (;;) {
    {
      absl::MutexLock l(&mu_);
      if (termios_.c_lflag & ICANON) {
        if (!line_ends_.empty()) {
          size_t& len = line_ends_.front();
          size_t n = std::min(dst.size(), len);
          std::copy_n(input_.begin(), n, dst.begin());
          input_.erase(input_.begin(), input_.begin() + static_cast<ptrdiff_t>(n));
          len -= n;
          if (len == 0) line_ends_.pop_front();
          return n;
        }
      } else {
        size_t vmin = termios_.c_cc[kVMin], vtime = termios_.c_cc[kVTime];
        size_t want = std::min<size_t>(dst.size(), std::max<size_t>(vmin, 1));
        // Enough bytes; or with VMIN 0, any byte or no wait at all; or VTIME ran out (it only
        // runs with VMIN 0 or once a byte came): whatever is there.
        if (input_.size() >= want || (vmin == 0 && (!input_.empty() || vtime == 0)) ||
            absl::Now() >= deadline) {
          size_t n = std::min(dst.size(), input_.size());
          std::copy_n(input_.begin(), n, dst.begin());
          input_.erase(input_.begin(), input_.begin() + static_cast<ptrdiff_t>(n));
          return n;
        }
        // VTIME: with VMIN 0 a total timeout, otherwise an inter-byte one after the first.
        if (vtime > 0 && (vmin == 0 || !input_.empty()) && deadline == absl::InfiniteFuture()) {
          deadline = absl::Now() + absl::Milliseconds(100 * vtime);
        }
      }
      if (!master_open_) return size_t{0};
      if (nonblock) return Errno(EAGAIN);
    }
    Result<void> r = b.Wait(deadline);
    if (!r.ok() && r.error().code() != ETIMEDOUT) return r.error();
  }
}

// --- Output: what the slave writes, to the master ---

Result<size_t> Tty::SlaveWrite(Blocker& b, std::span<const uint8_t> src, bool nonblock) {
  SENTRY_TRY(CheckJobControl(SIGTTOU));
  ScopedWait wait(queue_, b.waiter(), kEventOut | kEventHup);
  size_t done = 0;
  for (;;) {
    {
      absl::MutexLock l(&mu_);
      if (!master_open_) return done ? Result<size_t>(done) : Errno(EIO);
      while (done < src.size() && output_.size() + 2 <= kMaxQueue) OutputLocked(src[done++]);
    }
    if (done > 0) queue_.Notify(kEventIn);
    if (done == src.size()) return done;
    if (nonblock) return done ? Result<size_t>(done) : Errno(EAGAIN);
    Result<void> r = b.Wait();
    if (!r.ok()) return done ? Result<size_t>(done) : r.error();
  }
}

Result<size_t> Tty::MasterRead(Blocker& b, std::span<uint8_t> dst, bool nonblock) {
  if (dst.empty()) return size_t{0};
  ScopedWait wait(queue_, b.waiter(), kEventIn | kEventHup);
  for (;;) {
    {
      absl::MutexLock l(&mu_);
      if (!output_.empty()) {
        size_t n = std::min(dst.size(), output_.size());
        std::copy_n(output_.begin(), n, dst.begin());
        output_.erase(output_.begin(), output_.begin() + static_cast<ptrdiff_t>(n));
        queue_.Notify(kEventOut);
        return n;
      }
      if (slave_ever_opened_ && slave_opens_ == 0) return Errno(EIO);
      if (nonblock) return Errno(EAGAIN);
    }
    SENTRY_TRY(b.Wait());
  }
}

EventMask Tty::SlaveReadiness() {
  absl::MutexLock l(&mu_);
  EventMask m = 0;
  if (ReadableLocked()) m |= kEventIn | kEventRdNorm;
  if (!master_open_) return m | kEventIn | kEventRdNorm | kEventHup;
  if (output_.size() < kMaxQueue) m |= kEventOut | kEventWrNorm;
  return m;
}

EventMask Tty::MasterReadiness() {
  absl::MutexLock l(&mu_);
  EventMask m = kEventOut | kEventWrNorm;
  if (!output_.empty()) m |= kEventIn | kEventRdNorm;
  if (slave_ever_opened_ && slave_opens_ == 0) m |= kEventHup;
  return m;
}

// --- Opens and closes ---

Result<void> Tty::SlaveOpened(int flags) {
  bool try_ctty = false;
  {
    absl::MutexLock l(&mu_);
    if (locked_ || !master_open_) return Errno(EIO);
    slave_opens_++;
    slave_ever_opened_ = true;
    try_ctty = !(flags & O_NOCTTY) && session_ == 0;
  }
  // A session leader without a terminal gets the first one it opens, as on Linux.
  if (try_ctty && g_host != nullptr && g_host->CallerIsSessionLeader() &&
      !ControllingTtyOf(g_host->CallerSid())) {
    (void)MakeControlling(false);
  }
  return Ok();
}

void Tty::SlaveClosed() {
  {
    absl::MutexLock l(&mu_);
    slave_opens_--;
  }
  queue_.Notify(kEventIn | kEventHup);
}

void Tty::MasterClosed() {
  int session, pgrp;
  {
    absl::MutexLock l(&mu_);
    master_open_ = false;
    session = std::exchange(session_, 0);
    pgrp = fg_pgrp_.exchange(0);
  }
  {
    Registry& r = Reg();
    absl::MutexLock l(&r.mu);
    r.by_index.erase(index_);
    auto it = r.by_session.find(session);
    if (session != 0 && it != r.by_session.end() && it->second.lock().get() == this) {
      r.by_session.erase(it);
    }
  }
  queue_.Notify(kAllEvents);
  // Hangup: the session leader's group and the foreground job get SIGHUP, then SIGCONT.
  if (g_host != nullptr && session != 0) {
    g_host->SignalPgrp(session, SIGHUP);
    g_host->SignalPgrp(session, SIGCONT);
    if (pgrp != 0 && pgrp != session) {
      g_host->SignalPgrp(pgrp, SIGHUP);
      g_host->SignalPgrp(pgrp, SIGCONT);
    }
  }
}

bool Tty::locked() {
  absl::MutexLock l(&mu_);
  return locked_;
}
void Tty::set_locked(bool v) {
  absl::MutexLock l(&mu_);
  locked_ = v;
}
bool Tty::master_open() {
  absl::MutexLock l(&mu_);
  return master_open_;
}

// --- Settings ---

// The master's termios calls act on the slave's settings, as on Linux (tty->link).
KernelTermios Tty::GetTermios(bool master) {
  (void)master;
  absl::MutexLock l(&mu_);
  return termios_;
}

Result<void> Tty::SetTermios(bool master, const KernelTermios& t, bool flush) {
  if (!master) SENTRY_TRY(CheckJobControl(SIGTTOU, true));
  {
    absl::MutexLock l(&mu_);
    bool was_canon = termios_.c_lflag & ICANON;
    termios_ = t;
    bool canon = termios_.c_lflag & ICANON;
    if (flush) {
      input_.clear();
      line_ends_.clear();
      line_.clear();
    } else if (was_canon && !canon) {
      // Leaving canonical mode: the line being edited becomes readable input.
      input_.insert(input_.end(), line_.begin(), line_.end());
      line_.clear();
      line_ends_.clear();
    } else if (!was_canon && canon) {
      line_.insert(0, std::string(input_.begin(), input_.end()));
      input_.clear();
    }
  }
  queue_.Notify(kEventIn | kEventOut);
  return Ok();
}

WinSize Tty::GetWinSize() {
  absl::MutexLock l(&mu_);
  return winsize_;
}

void Tty::SetWinSize(const WinSize& ws) {
  int pgrp;
  {
    absl::MutexLock l(&mu_);
    if (memcmp(&ws, &winsize_, sizeof(ws)) == 0) return;
    winsize_ = ws;
    pgrp = fg_pgrp_;
  }
  if (g_host != nullptr && pgrp != 0) g_host->SignalPgrp(pgrp, SIGWINCH);
}

Result<int> Tty::GetForegroundPgrp(bool master) {
  int sid = g_host ? g_host->CallerSid() : 0;
  absl::MutexLock l(&mu_);
  if (!master && (session_ == 0 || session_ != sid)) return Errno(ENOTTY);
  return fg_pgrp_;
}

Result<void> Tty::SetForegroundPgrp(bool master, int pgid) {
  int sid = g_host ? g_host->CallerSid() : 0;
  {
    absl::MutexLock l(&mu_);
    if (master || session_ == 0 || session_ != sid) return Errno(ENOTTY);
  }
  SENTRY_TRY(CheckJobControl(SIGTTOU, true));
  if (pgid < 0) return Errno(EINVAL);
  if (g_host != nullptr && !g_host->PgrpInSession(pgid, sid)) return Errno(EPERM);
  absl::MutexLock l(&mu_);
  fg_pgrp_ = pgid;
  return Ok();
}

Result<int> Tty::GetSession() {
  int sid = g_host ? g_host->CallerSid() : 0;
  absl::MutexLock l(&mu_);
  if (session_ == 0 || session_ != sid) return Errno(ENOTTY);
  return session_;
}

Result<void> Tty::MakeControlling(bool steal) {
  if (g_host == nullptr) return Errno(EPERM);
  int sid = g_host->CallerSid();
  if (!g_host->CallerIsSessionLeader()) return Errno(EPERM);
  TtyRef current = ControllingTtyOf(sid);
  if (current.get() == this) return Ok();
  if (current) return Errno(EPERM);
  int old_session;
  {
    absl::MutexLock l(&mu_);
    if (!master_open_) return Errno(EIO);
    old_session = session_;
    if (old_session != 0 && !(steal && g_host->CallerPrivileged())) return Errno(EPERM);
    session_ = sid;
    fg_pgrp_ = g_host->CallerPgid();
  }
  if (old_session != 0) SetControlling(old_session, nullptr);
  SetControlling(sid, shared_from_this());
  return Ok();
}

void Tty::AttachSession(int sid, int pgrp) {
  {
    absl::MutexLock l(&mu_);
    session_ = sid;
    fg_pgrp_ = pgrp;
  }
  SetControlling(sid, shared_from_this());
}

Result<void> Tty::GiveUpControlling() {
  if (g_host == nullptr) return Errno(ENOTTY);
  int sid = g_host->CallerSid();
  int pgrp;
  {
    absl::MutexLock l(&mu_);
    if (session_ == 0 || session_ != sid) return Errno(ENOTTY);
    if (!g_host->CallerIsSessionLeader()) return Ok();  // only the leader's call detaches
    session_ = 0;
    pgrp = fg_pgrp_.exchange(0);
  }
  SetControlling(sid, nullptr);
  if (pgrp != 0) {
    g_host->SignalPgrp(pgrp, SIGHUP);
    g_host->SignalPgrp(pgrp, SIGCONT);
  }
  return Ok();
}

void Tty::SessionEnded(int sid) {
  int pgrp;
  {
    absl::MutexLock l(&mu_);
    if (session_ != sid) return;
    session_ = 0;
    pgrp = fg_pgrp_.exchange(0);
  }
  SetControlling(sid, nullptr);
  if (g_host != nullptr && pgrp != 0) {
    g_host->SignalPgrp(pgrp, SIGHUP);
    g_host->SignalPgrp(pgrp, SIGCONT);
  }
}

Result<void> Tty::Flush(int which) {
  if (which < 0 || which > 2) return Errno(EINVAL);
  {
    absl::MutexLock l(&mu_);
    if (which != TCOFLUSH) {
      input_.clear();
      line_ends_.clear();
      line_.clear();
    }
    if (which != TCIFLUSH) output_.clear();
  }
  queue_.Notify(kEventOut);
  return Ok();
}

void TtySessionEnded(int sid) {
  if (TtyRef t = ControllingTtyOf(sid)) t->SessionEnded(sid);
}

std::pair<uint32_t, int> ControllingTtyForProc(int sid) {
  TtyRef t = ControllingTtyOf(sid);
  if (!t) return {0, -1};
  // /dev/pts/N is (136 + N / 256, N % 256); stat shows minor bits 0-7, major 8-19, the rest
  // of the minor above (new_encode_dev).
  uint32_t n = static_cast<uint32_t>(t->index());
  uint32_t dev = (n % 256) | ((136 + n / 256) << 8);
  int fg = t->ForegroundPgrpRelaxed();
  return {dev, fg == 0 ? -1 : fg};
}

// --- Open files of both ends ---

namespace {

class PtyEnd : public FileDescription {
 public:
  PtyEnd(TtyRef tty, int flags, bool master)
      : FileDescription(flags), tty_(std::move(tty)), master_(master) {}
  Tty& tty() { return *tty_; }
  const TtyRef& tty_ref() { return tty_; }
  bool master() const { return master_; }
  WaitQueue* Queue() override { return &tty_->queue(); }
  bool SignalsAsync() const override { return true; }
  bool AsyncChecksReadiness() const override { return true; }
  Result<uint64_t> Seek(int64_t, int) override { return Errno(ESPIPE); }
  Result<size_t> PRead(Blocker&, std::span<uint8_t>, uint64_t) override { return Errno(ESPIPE); }
  Result<size_t> PWrite(Blocker&, std::span<const uint8_t>, uint64_t) override {
    return Errno(ESPIPE);
  }
  Result<uint64_t> Ioctl(Blocker&, uint64_t cmd, uint64_t) override {
    if (cmd == FIONREAD) return master_ ? tty_->OutputPending() : tty_->InputAvailable();
    return Errno(ENOTTY);
  }

 protected:
  const TtyRef tty_;
  const bool master_;
};

class PtyMasterFile final : public PtyEnd {
 public:
  PtyMasterFile(TtyRef tty, int flags) : PtyEnd(std::move(tty), flags, true) {}
  ~PtyMasterFile() override {
    StopAsync();
    tty_->MasterClosed();
  }
  Result<size_t> Read(Blocker& b, std::span<uint8_t> dst) override {
    return tty_->MasterRead(b, dst, NonBlocking());
  }
  Result<size_t> Write(Blocker&, std::span<const uint8_t> src) override {
    return tty_->MasterWrite(src);
  }
  EventMask Readiness(EventMask mask) override { return tty_->MasterReadiness() & mask; }
  Result<void> Stat(struct stat* st) override {
    if (inode()) return FileDescription::Stat(st);
    memset(st, 0, sizeof(*st));
    st->st_mode = S_IFCHR | 0666;
    st->st_rdev = makedev(5, 2);
    st->st_blksize = 1024;
    st->st_nlink = 1;
    return Ok();
  }
  std::string Name() const override { return "/dev/ptmx"; }
};

class PtySlaveFile final : public PtyEnd {
 public:
  PtySlaveFile(TtyRef tty, int flags) : PtyEnd(std::move(tty), flags, false) {}
  ~PtySlaveFile() override {
    StopAsync();
    tty_->SlaveClosed();
  }
  Result<size_t> Read(Blocker& b, std::span<uint8_t> dst) override {
    return tty_->SlaveRead(b, dst, NonBlocking());
  }
  Result<size_t> Write(Blocker& b, std::span<const uint8_t> src) override {
    return tty_->SlaveWrite(b, src, NonBlocking());
  }
  EventMask Readiness(EventMask mask) override { return tty_->SlaveReadiness() & mask; }
  Result<void> Stat(struct stat* st) override {
    if (inode()) return FileDescription::Stat(st);
    memset(st, 0, sizeof(*st));
    st->st_mode = S_IFCHR | 0620;
    st->st_rdev = makedev(kPtsMajor, static_cast<unsigned>(tty_->index()));
    st->st_gid = kTtyGid;
    st->st_blksize = 1024;
    st->st_nlink = 1;
    return Ok();
  }
  std::string Name() const override { return "/dev/pts/" + std::to_string(tty_->index()); }
};

MemSuperRef& DevptsSuper() {
  static MemSuperRef* sb = new MemSuperRef(std::make_shared<MemSuper>(kDevptsMagic));
  return *sb;
}

// /dev/pts/N while its pair lives.
class PtsInode final : public MemInode {
 public:
  PtsInode(std::weak_ptr<Tty> tty, int index, uint32_t uid)
      : MemInode(DevptsSuper(), S_IFCHR | 0620, uid, kTtyGid), tty_(std::move(tty)) {
    absl::MutexLock l(&mu_);
    rdev_ = makedev(kPtsMajor, static_cast<unsigned>(index));
  }
  Result<FileRef> Open(int flags) override {
    TtyRef t = tty_.lock();
    if (!t) return Errno(EIO);
    return OpenPtySlave(t, flags);
  }
  bool Valid() override {
    TtyRef t = tty_.lock();
    return t && t->master_open();
  }

 private:
  std::weak_ptr<Tty> tty_;
};

// /dev/ptmx and /dev/pts/ptmx.
class PtmxInode final : public MemInode {
 public:
  explicit PtmxInode(uint32_t mode) : MemInode(DevptsSuper(), S_IFCHR | mode, 0, 0) {
    absl::MutexLock l(&mu_);
    rdev_ = makedev(5, 2);
  }
  Result<FileRef> Open(int flags) override { return OpenPtmx(flags); }
};

}  // namespace

Tty* AsTty(FileDescription& f, bool* master) {
  auto* end = dynamic_cast<PtyEnd*>(&f);
  if (end == nullptr) return nullptr;
  *master = end->master();
  return &end->tty();
}

TtyRef TtyRefOf(Tty& tty) { return tty.shared_from_this(); }

InodeRef PtsNode(int index) {
  Registry& r = Reg();
  absl::MutexLock l(&r.mu);
  auto it = r.by_index.find(index);
  return it == r.by_index.end() ? nullptr : it->second.node;
}

Result<FileRef> OpenPtmx(int flags) {
  uint32_t uid = g_host != nullptr ? g_host->CallerUid() : 0;
  Registry& r = Reg();
  TtyRef tty;
  {
    absl::MutexLock l(&r.mu);
    int index = 0;
    for (auto& [i, pts] : r.by_index) {
      if (i != index) break;
      index++;
    }
    tty = std::make_shared<Tty>(index);
    r.by_index[index] = {tty, std::make_shared<PtsInode>(tty, index, uid)};
  }
  return FileRef(std::make_shared<PtyMasterFile>(tty, flags & ~O_CREAT));
}

Result<FileRef> OpenPtySlave(const TtyRef& tty, int flags) {
  SENTRY_TRY(tty->SlaveOpened(flags));
  return FileRef(std::make_shared<PtySlaveFile>(tty, flags & ~(O_CREAT | O_NOCTTY)));
}

Result<FileRef> OpenControllingTty(int flags) {
  if (g_host == nullptr) return Errno(ENXIO);
  TtyRef tty = ControllingTtyOf(g_host->CallerSid());
  if (!tty) return Errno(ENXIO);
  return OpenPtySlave(tty, flags | O_NOCTTY);
}

InodeRef NewDevpts() {
  auto dir = std::make_shared<SyntheticDir>(DevptsSuper(), 0755);
  dir->Add("ptmx", std::make_shared<PtmxInode>(0000));
  SyntheticDir::Dynamic d;
  d.list = [] {
    std::vector<DirEntry> out;
    Registry& r = Reg();
    absl::MutexLock l(&r.mu);
    for (auto& [i, pts] : r.by_index) {
      out.push_back({std::to_string(i), static_cast<MemInode*>(pts.node.get())->ino(), DT_CHR});
    }
    return out;
  };
  d.lookup = [](const std::string& name) -> Result<InodeRef> {
    char* end = nullptr;
    long i = strtol(name.c_str(), &end, 10);
    if (name.empty() || *end != '\0' || i < 0 || std::to_string(i) != name) return Errno(ENOENT);
    Registry& r = Reg();
    absl::MutexLock l(&r.mu);
    auto it = r.by_index.find(static_cast<int>(i));
    if (it == r.by_index.end()) return Errno(ENOENT);
    return it->second.node;
  };
  dir->set_dynamic(std::move(d));
  return dir;
}

}  // namespace sentry::vfs
