// The kernel's side of signal-driven I/O (vfs/async.h): finding a file's owner and sending it
// SIGIO or the F_SETSIG signal, as Linux's send_sigio.
#include <poll.h>
#include <signal.h>

#include <cstring>

#include "sentry/kernel/kernel.h"
#include "vfs/async.h"

namespace sentry::kernel {
namespace {

// si_band for each POLL_* code, as Linux's band_table.
constexpr int64_t kBands[] = {
    POLLIN | POLLRDNORM,                // POLL_IN
    POLLOUT | POLLWRNORM | POLLWRBAND,  // POLL_OUT
    POLLIN | POLLRDNORM | POLLMSG,      // POLL_MSG
    POLLERR,                            // POLL_ERR
    POLLPRI | POLLRDBAND,               // POLL_PRI
    POLLHUP | POLLERR,                  // POLL_HUP
};

class KernelAsyncHost final : public vfs::AsyncHost {
 public:
  explicit KernelAsyncHost(Kernel& k) : k_(k) {}

  void SignalOwner(const vfs::FileOwner& owner, int sig, int code, int fd) override {
    abi::SigInfo info{};
    if (sig == 0) {
      info.signo = SIGIO;
      info.code = abi::kSI_KERNEL;
    } else {
      info.signo = sig;
      info.code = code;
      int64_t band = code >= 1 && code <= 6 ? kBands[code - 1] : 0;
      memcpy(info.f.raw, &band, sizeof(band));
      memcpy(info.f.raw + sizeof(band), &fd, sizeof(fd));
    }
    absl::MutexLock l(&k_.mu());
    switch (owner.kind) {
      case vfs::FileOwner::Kind::kTid:
        if (Task* t = k_.TaskByTid(owner.id); t && Permitted(owner, t->tg())) {
          k_.SendTaskSignal(*t, info);
        }
        break;
      case vfs::FileOwner::Kind::kPid:
        if (ThreadGroup* g = k_.GroupByTgid(owner.id); g && Permitted(owner, *g)) {
          k_.SendGroupSignal(*g, info);
        }
        break;
      case vfs::FileOwner::Kind::kPgrp:
        for (ThreadGroup* g : k_.AllGroups()) {
          if (g->pgid == owner.id && !g->zombie && Permitted(owner, *g)) {
            k_.SendGroupSignal(*g, info);
          }
        }
        break;
    }
  }

 private:
  // Linux's sigio_perm: the ids of whoever set the owner, against the target's.
  static bool Permitted(const vfs::FileOwner& o, const ThreadGroup& g) {
    const Credentials& c = g.creds;
    return o.euid == 0 || o.euid == c.suid || o.euid == c.ruid || o.uid == c.suid ||
           o.uid == c.ruid;
  }

  Kernel& k_;
};

}  // namespace

void InstallAsyncHost(Kernel& k) {
  static KernelAsyncHost* host = nullptr;
  vfs::SetAsyncHost(nullptr);
  delete host;
  host = new KernelAsyncHost(k);
  vfs::SetAsyncHost(host);
}

}  // namespace sentry::kernel
