// The kernel's answers to the terminal line discipline's job-control questions (vfs/tty.h)
// about the task making the current call.
#include <signal.h>

#include "sentry/kernel/kernel.h"
#include "vfs/tty.h"

namespace sentry::kernel {
namespace {

class KernelTtyHost final : public vfs::TtyHost {
 public:
  explicit KernelTtyHost(Kernel& k) : k_(k) {}

  int CallerPgid() override {
    Task* t = Task::Current();
    if (t == nullptr) return 0;
    absl::MutexLock l(&k_.mu());
    return t->tg().pgid;
  }
  int CallerSid() override {
    Task* t = Task::Current();
    if (t == nullptr) return 0;
    absl::MutexLock l(&k_.mu());
    return t->tg().sid;
  }
  bool CallerIsSessionLeader() override {
    Task* t = Task::Current();
    if (t == nullptr) return false;
    absl::MutexLock l(&k_.mu());
    return t->tg().sid == t->tg().tgid;
  }
  bool CallerPrivileged() override {
    Task* t = Task::Current();
    if (t == nullptr) return false;
    absl::MutexLock l(&k_.mu());
    return t->tg().creds.HasCapability(CAP_SYS_ADMIN);
  }
  uint32_t CallerUid() override {
    Task* t = Task::Current();
    if (t == nullptr) return 0;
    absl::MutexLock l(&k_.mu());
    return t->tg().creds.fsuid;
  }
  bool CallerIgnoresOrBlocks(int sig) override {
    Task* t = Task::Current();
    if (t == nullptr) return true;
    absl::MutexLock l(&k_.mu());
    if (t->signal_mask() & abi::SigBit(sig)) return true;
    return t->tg().handlers->actions[sig - 1].handler == abi::kSigIgn;
  }
  bool PgrpOrphaned(int pgid) override {
    absl::MutexLock l(&k_.mu());
    for (ThreadGroup* g : k_.AllGroups()) {
      if (g->pgid != pgid || g->zombie) continue;
      ThreadGroup* p = g->parent;
      if (p != nullptr && p->pgid != pgid && p->sid == g->sid) return false;
    }
    return true;
  }
  bool PgrpInSession(int pgid, int sid) override {
    absl::MutexLock l(&k_.mu());
    for (ThreadGroup* g : k_.AllGroups()) {
      if (g->pgid == pgid && g->sid == sid && !g->zombie) return true;
    }
    return false;
  }
  void SignalPgrp(int pgid, int sig) override {
    absl::MutexLock l(&k_.mu());
    abi::SigInfo info{};
    info.signo = sig;
    info.code = abi::kSI_KERNEL;
    for (ThreadGroup* g : k_.AllGroups()) {
      if (g->pgid == pgid && !g->zombie) k_.SendGroupSignal(*g, info);
    }
  }

 private:
  Kernel& k_;
};

}  // namespace

void InstallTtyHost(Kernel& k) {
  static KernelTtyHost* host = nullptr;
  delete host;
  host = new KernelTtyHost(k);
  vfs::SetTtyHost(host);
}

}  // namespace sentry::kernel
