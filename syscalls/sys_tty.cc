// Terminal ioctls on either end of a pseudo-terminal (vfs/tty.h does the work).
#include <sys/ioctl.h>

#include <cstring>

#include "syscalls/common.h"
#include "syscalls/sys_tty.h"
#include "vfs/tty.h"

namespace sentry::syscalls {
namespace {

// Those <sys/ioctl.h> leaves out (they need the kernel's struct termios2).
constexpr uint64_t kTcGets2 = 0x802c542a, kTcSets2 = 0x402c542b, kTcSetsW2 = 0x402c542c,
                   kTcSetsF2 = 0x402c542d;
constexpr uint64_t kTiocGPtn = 0x80045430, kTiocSPtLck = 0x40045431, kTiocGPtLck = 0x80045439,
                   kTiocGPkt = 0x80045438, kTiocGPtPeer = 0x5441, kTiocGExcl = 0x80045440;

Result<uint64_t> CopyOutTermios(Task& t, GuestAddr arg, const vfs::KernelTermios& k, size_t n) {
  uint8_t buf[vfs::kTermios2Size];
  memcpy(buf, &k, n);
  SENTRY_TRY(t.CopyOutBytes(arg, {buf, n}));
  return 0;
}

Result<uint64_t> SetTermios(Task& t, vfs::Tty& tty, bool master, GuestAddr arg, size_t n,
                            bool flush) {
  vfs::KernelTermios k = tty.GetTermios(master);  // termios (36 bytes) keeps the speeds
  uint8_t buf[vfs::kTermios2Size];
  SENTRY_TRY(t.CopyInBytes(arg, {buf, n}));
  memcpy(&k, buf, n);
  SENTRY_TRY(tty.SetTermios(master, k, flush));
  return 0;
}

}  // namespace

Result<uint64_t> TtyIoctl(Task& t, vfs::Tty& tty, bool master, uint64_t cmd, uint64_t arg_raw) {
  GuestAddr arg(arg_raw);
  switch (cmd) {
    case TCGETS:
      return CopyOutTermios(t, arg, tty.GetTermios(master), vfs::kTermiosSize);
    case kTcGets2:
      return CopyOutTermios(t, arg, tty.GetTermios(master), vfs::kTermios2Size);
    case TCSETS:
    case TCSETSW:
    case TCSETSF:
      return SetTermios(t, tty, master, arg, vfs::kTermiosSize, cmd == TCSETSF);
    case kTcSets2:
    case kTcSetsW2:
    case kTcSetsF2:
      return SetTermios(t, tty, master, arg, vfs::kTermios2Size, cmd == kTcSetsF2);
    case TIOCGWINSZ: {
      vfs::WinSize ws = tty.GetWinSize();
      SENTRY_TRY(t.CopyOut(arg, ws));
      return 0;
    }
    case TIOCSWINSZ:
      tty.SetWinSize(SENTRY_TRY(t.CopyIn<vfs::WinSize>(arg)));
      return 0;
    case TIOCGPGRP: {
      // The terminal keeps global numbers; the caller sees its PID namespace's.
      int pgrp = SENTRY_TRY(tty.GetForegroundPgrp(master));
      SENTRY_TRY(t.CopyOut(arg, pgrp > 0 ? t.LocalPid(pgrp) : pgrp));
      return 0;
    }
    case TIOCSPGRP: {
      int pgrp = SENTRY_TRY(t.CopyIn<int>(arg));
      int global = pgrp > 0 ? t.GlobalPid(pgrp) : pgrp;
      if (pgrp > 0 && global == 0) return Errno(ESRCH);  // no such group in its namespace
      SENTRY_TRY(tty.SetForegroundPgrp(master, global));
      return 0;
    }
    case TIOCGSID: {
      int sid = SENTRY_TRY(tty.GetSession());
      SENTRY_TRY(t.CopyOut(arg, sid > 0 ? t.LocalPid(sid) : sid));
      return 0;
    }
    case TIOCSCTTY:
      SENTRY_TRY(tty.MakeControlling(arg_raw == 1));
      return 0;
    case TIOCNOTTY:
      SENTRY_TRY(tty.GiveUpControlling());
      return 0;
    case FIONREAD: {
      int n = static_cast<int>(master ? tty.OutputPending() : tty.InputAvailable());
      SENTRY_TRY(t.CopyOut(arg, n));
      return 0;
    }
    case TIOCOUTQ: {
      int n = static_cast<int>(master ? 0 : tty.OutputPending());
      SENTRY_TRY(t.CopyOut(arg, n));
      return 0;
    }
    case TCFLSH:
      SENTRY_TRY(tty.Flush(static_cast<int>(arg_raw)));
      return 0;
    case TCSBRK:
    case TCSBRKP:
    case TCXONC:
      return 0;  // no line to drain or to stop: output is delivered at once
    case TIOCSTI:
      // Pushing input into a terminal is how a sandboxed program would type into the
      // user's shell: refused as on a Linux with dev.tty.legacy_tiocsti=0.
      return Errno(EIO);
    case TIOCGETD: {
      int ldisc = 0;  // N_TTY
      SENTRY_TRY(t.CopyOut(arg, ldisc));
      return 0;
    }
    case TIOCSETD: {
      int ldisc = SENTRY_TRY(t.CopyIn<int>(arg));
      return ldisc == 0 ? Result<uint64_t>(0) : Errno(EINVAL);
    }
    case TIOCEXCL:
    case TIOCNXCL:
      return 0;  // partial: exclusive mode is accepted, not enforced
    case kTiocGExcl: {
      int excl = 0;
      SENTRY_TRY(t.CopyOut(arg, excl));
      return 0;
    }
    case kTiocGPtn: {
      if (!master) return Errno(ENOTTY);
      unsigned n = static_cast<unsigned>(tty.index());
      SENTRY_TRY(t.CopyOut(arg, n));
      return 0;
    }
    case kTiocSPtLck:
      if (!master) return Errno(ENOTTY);
      tty.set_locked(SENTRY_TRY(t.CopyIn<int>(arg)) != 0);
      return 0;
    case kTiocGPtLck: {
      if (!master) return Errno(ENOTTY);
      int locked = tty.locked() ? 1 : 0;
      SENTRY_TRY(t.CopyOut(arg, locked));
      return 0;
    }
    case kTiocGPkt: {
      if (!master) return Errno(ENOTTY);
      int pkt = 0;  // partial: packet mode (TIOCPKT) is not offered
      SENTRY_TRY(t.CopyOut(arg, pkt));
      return 0;
    }
    case kTiocGPtPeer: {
      if (!master) return Errno(ENOTTY);
      int flags = static_cast<int>(arg_raw);
      if (flags & ~(O_ACCMODE | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)) return Errno(EINVAL);
      vfs::FileRef f = SENTRY_TRY(vfs::OpenPtySlave(vfs::TtyRefOf(tty), flags | O_NOCTTY));
      // Not opened by path, yet the same file as /dev/pts/N to fstat (ttyname compares them).
      if (vfs::InodeRef node = vfs::PtsNode(tty.index())) f->set_location(nullptr, nullptr, node);
      return SENTRY_TRY(t.fds().Add(f, flags & O_CLOEXEC, 0, NofileLimit(t)));
    }
    default:
      return Errno(ENOTTY);
  }
}

}  // namespace sentry::syscalls
