#include <signal.h>

#include <cstring>
#include <thread>

#include "sentry/base/host_thread.h"
#include "sentry/base/logging.h"
#include "sentry/kernel/kernel.h"

namespace sentry::kernel {

Task::Task(Kernel& k, int tid) : k_(k), tid_(tid) {}
Task::~Task() = default;

Result<void> Task::Wait(absl::Time deadline) {
  {
    absl::MutexLock l(&k_.mu());
    if (k_.SignalPending(*this)) return Errno(kERESTARTSYS);
  }
  nvcsw_.fetch_add(1, std::memory_order_relaxed);
  sleeping_.store(true, std::memory_order_relaxed);
  bool notified = waiter_.WaitUntil(deadline);
  sleeping_.store(false, std::memory_order_relaxed);
  absl::MutexLock l(&k_.mu());
  if (k_.SignalPending(*this)) return Errno(kERESTARTSYS);
  if (!notified) return Errno(ETIMEDOUT);
  return Ok();
}

Result<int> Task::WaitHostFd(int fd, short events, absl::Time deadline) {
  {
    absl::MutexLock l(&k_.mu());
    if (k_.SignalPending(*this)) return Errno(kERESTARTSYS);
  }
  nvcsw_.fetch_add(1, std::memory_order_relaxed);
  sleeping_.store(true, std::memory_order_relaxed);
  int revents = waiter_.WaitHostFd(fd, events, deadline);
  sleeping_.store(false, std::memory_order_relaxed);
  absl::MutexLock l(&k_.mu());
  if (k_.SignalPending(*this)) return Errno(kERESTARTSYS);
  return revents;
}

void Task::Interrupt() {
  signal_work_.store(true, std::memory_order_release);
  waiter_.Notify();
  if (ctx_) ctx_->Interrupt();
}

Result<void> Task::CopyInBytes(GuestAddr addr, std::span<uint8_t> dst) {
  if (addr.value() + dst.size() < addr.value()) return Errno(EFAULT);
  if (mm_->as().ReadMemory(addr, dst) != dst.size()) return Errno(EFAULT);
  return Ok();
}

Result<void> Task::CopyOutBytes(GuestAddr addr, std::span<const uint8_t> src) {
  if (addr.value() + src.size() < addr.value()) return Errno(EFAULT);
  if (mm_->as().WriteMemory(addr, src) != src.size()) return Errno(EFAULT);
  return Ok();
}

Result<std::string> Task::CopyInString(GuestAddr addr, size_t max) {
  std::string out;
  uint8_t chunk[256];
  while (out.size() < max) {
    // Read up to the end of the page so an unmapped next page does not fail the copy.
    uint64_t a = addr.value() + out.size();
    size_t n = std::min<size_t>(sizeof(chunk), kPageSize - (a & (kPageSize - 1)));
    size_t got = mm_->as().ReadMemory(GuestAddr(a), {chunk, n});
    if (got == 0) return Errno(EFAULT);
    for (size_t i = 0; i < got; i++) {
      if (chunk[i] == 0) return out;
      out.push_back(static_cast<char>(chunk[i]));
      if (out.size() >= max) return Errno(ENAMETOOLONG);
    }
  }
  return Errno(ENAMETOOLONG);
}

namespace {

// Reads guest memory a page at a time and serves smaller reads from that page: the argv and
// envp of an execve can hold thousands of strings (xargs), packed together, which would
// otherwise cost two host reads each.
class PageWindow {
 public:
  explicit PageWindow(platform::AddressSpace& as) : as_(as) {}

  // Copies `len` bytes at `addr`; EFAULT if any of them is unreadable.
  Result<void> Read(uint64_t addr, uint8_t* dst, size_t len) {
    while (len > 0) {
      const uint8_t* src = SENTRY_TRY(At(addr));
      size_t n = std::min<size_t>(len, kPageSize - (addr & (kPageSize - 1)));
      memcpy(dst, src, n);
      addr += n;
      dst += n;
      len -= n;
    }
    return Ok();
  }

  // A NUL-terminated string of at most `max` bytes (ENAMETOOLONG past it).
  Result<std::string> String(uint64_t addr, size_t max) {
    std::string out;
    for (;;) {
      const uint8_t* src = SENTRY_TRY(At(addr));
      size_t n = kPageSize - (addr & (kPageSize - 1));
      const void* nul = memchr(src, 0, n);
      size_t take = nul ? static_cast<const uint8_t*>(nul) - src : n;
      if (out.size() + take >= max) return Errno(ENAMETOOLONG);
      out.append(reinterpret_cast<const char*>(src), take);
      if (nul) return out;
      addr += n;
    }
  }

 private:
  // The bytes from `addr` to the end of its page.
  Result<const uint8_t*> At(uint64_t addr) {
    uint64_t page = PageRoundDown(addr);
    if (!valid_ || page != base_) {
      valid_ = false;
      if (as_.ReadMemory(GuestAddr(page), {page_, kPageSize}) != kPageSize) {
        return Errno(EFAULT);
      }
      base_ = page;
      valid_ = true;
    }
    return page_ + (addr - page);
  }

  platform::AddressSpace& as_;
  uint8_t page_[kPageSize];
  uint64_t base_ = 0;
  bool valid_ = false;
};

}  // namespace

Result<std::vector<std::string>> Task::CopyInStringArray(GuestAddr addr) {
  std::vector<std::string> out;
  if (addr.IsNull()) return out;
  // One window on the pointer array, one on the strings it points to.
  auto pointers = std::make_unique<PageWindow>(mm_->as());
  auto strings = std::make_unique<PageWindow>(mm_->as());
  size_t total = 0;
  for (uint64_t i = 0;; i++) {
    if (i >= 0x7fffffff / 8) return Errno(E2BIG);
    uint64_t p;
    if (addr.value() + i * 8 < addr.value()) return Errno(EFAULT);
    SENTRY_TRY(pointers->Read(addr.value() + i * 8, reinterpret_cast<uint8_t*>(&p), sizeof(p)));
    if (p == 0) break;
    out.push_back(SENTRY_TRY(strings->String(p, 128 * 1024 + 1)));
    total += out.back().size() + 1 + 8;
    if (total > 2 * 1024 * 1024) return Errno(E2BIG);
  }
  return out;
}

Result<void> Task::Launch(std::shared_ptr<Task> self, int attach_handle,
                          std::shared_ptr<platform::AddressSpace> as) {
  Task* t = self.get();
  Kernel& k = t->k_;
  auto launch = std::make_shared<LaunchState>();
  t->launch_ = launch;
  k.TaskThreadStarted();
  bool started = StartHostThread([self = std::move(self), attach_handle, as = std::move(as),
                                  launch]() mutable {
    Task* t = self.get();
    t->BindHostThread();
    bool fork = as == nullptr;
    auto ctx = t->k_.platform().Attach(attach_handle, std::move(as));
    if (!ctx.ok()) {
      log::Sentry().debug("task {}: cannot attach its stub: {}", t->tid_, ctx.status().ToString());
      t->k_.platform().Discard(attach_handle);
      Kernel& k = t->k_;
      self.reset();
      launch->attached.Notify();  // ok == false: the parent drops the task
      k.TaskThreadDone();
      return;
    }
    t->ctx_ = std::move(*ctx);
    launch->ok = true;
    launch->attached.Notify();
    launch->go.WaitForNotification();
    if (launch->abandon) {
      Kernel& k = t->k_;
      t->ctx_.reset();
      self.reset();
      k.TaskThreadDone();
      return;
    }
    t->WatchHostDeath();
    t->AdoptContextCpu();
    if (fork) {
      RseqAfterFork(*t);
      t->mm_->set_address_space(t->ctx_->address_space());
      // Published only now that it has its address space: other processes reach it through
      // tg.mm (/proc, process_vm_readv).
      absl::MutexLock l(&t->k_.mu());
      t->tg_->mm = t->mm_;
    }
    // The new stub's FP state is the host's default; the guest's is its parent's.
    if (!t->start_fp_.empty()) (void)t->ctx_->SetFpState(t->start_fp_);
    t->start_fp_.clear();
    if (t->child_settid_) {
      (void)t->CopyOut<int32_t>(GuestAddr(t->child_settid_), t->LocalPid(t->tid_));
    }
    // From here the kernel's table keeps the task alive (Run takes its own reference).
    self.reset();
    t->Run();
  });
  if (!started) {
    log::Sentry().debug("task {}: the host refuses a thread", t->tid_);
    k.platform().Discard(attach_handle);
    k.TaskThreadDone();
    t->launch_.reset();
    return Errno(EAGAIN);
  }
  launch->attached.WaitForNotification();
  if (!launch->ok) {
    t->launch_.reset();
    return Errno(EAGAIN);
  }
  return Ok();
}

void Task::Start(bool abandon) {
  std::shared_ptr<LaunchState> launch = std::move(launch_);
  launch->abandon = abandon;
  launch->go.Notify();
}

namespace {
thread_local Task* t_current = nullptr;
}  // namespace

Task* Task::Current() { return t_current; }

void Task::Run() {
  t_current = this;
  // The task lives until its thread is done with it.
  std::shared_ptr<Task> self;
  {
    absl::MutexLock l(&k_.mu());
    self = k_.tasks()[tid_];
  }
  // A newly started task may already have signals to act on (e.g. SIGKILL).
  HandleSignals(false, 0);
  while (!exiting_) {
    platform::Trap trap = ctx_->Switch(regs_);
    switch (trap.kind) {
      case platform::Trap::Kind::kSyscall:
        HandleSyscall();
        break;
      case platform::Trap::Kind::kSignal:
        HandleFault(trap.info);
        HandleSignals(false, 0);
        break;
      case platform::Trap::Kind::kInterrupted:
        HandleSignals(false, 0);
        break;
      case platform::Trap::Kind::kDead: {
        absl::MutexLock l(&k_.mu());
        // The stub may already be reaped, its pid free for another process: stop reading it.
        cpu_pids_.clear();
        if (!tg_->exiting) k_.GroupExit(*tg_, SignalStatus(SIGKILL, false));
        exiting_ = true;
        break;
      }
    }
  }
  if (ptraced_.load(std::memory_order_relaxed)) PtraceExitEvent(*this);
  Exit();
  self.reset();
  k_.TaskThreadDone();
}

void Task::WatchHostDeath() {
  // Runs on a platform thread; ctx_ (and with it this callback) is destroyed without
  // Kernel::mu_ held (Exit, execve), as OnHostDeath requires.
  ctx_->OnHostDeath([this] {
    absl::MutexLock l(&k_.mu());
    k_.GroupExit(*tg_, SignalStatus(SIGKILL, false));
  });
}

void Task::HandleSyscall() {
  bool sigreturn = regs_.orig_rax == 15;  // rt_sigreturn restored rax; nothing to restart
  // The one ptrace check on the syscall path: a traced task takes the slow path with stops.
  int64_t ret = ptraced_.load(std::memory_order_relaxed) ? PtraceDispatch(*this)
                                                         : k_.dispatch()(*this);
  if (exiting_) return;
  if (!SignalsMayNeedWork(ret)) return;
  HandleSignals(!sigreturn, ret);
}

void Task::HandleFault(const abi::SigInfo& info) { ForceSignal(info, false); }

void Task::ForceSignal(const abi::SigInfo& info, bool reset_handler) {
  // A fault the guest cannot survive if the signal is blocked or ignored: like Linux's
  // force_sig_info, unblock it and reset an ignoring handler to the default.
  absl::MutexLock l(&k_.mu());
  int sig = info.signo;
  abi::KSigAction& act = tg_->handlers->actions[sig - 1];
  if (reset_handler || (mask_ & abi::SigBit(sig)) || act.handler == abi::kSigIgn) {
    mask_ &= ~abi::SigBit(sig);
    act.handler = abi::kSigDfl;
  }
  pending_.Enqueue(info);
}

}  // namespace sentry::kernel

namespace sentry::kernel {

vfs::Context Task::VfsContext() {
  vfs::Context c;
  c.root = fs_->root();
  c.cwd = fs_->cwd();
  c.umask = fs_->umask();
  c.blocker = this;
  absl::MutexLock l(&k_.mu());
  c.creds.uid = tg_->creds.fsuid;
  c.creds.gid = tg_->creds.fsgid;
  c.creds.groups = tg_->creds.groups;
  // Inside a child user namespace the file overrides (CAP_DAC_*, CAP_FOWNER, CAP_CHOWN...)
  // are not granted: Linux grants them there only over files whose owner and group are
  // mapped into it, which this VFS does not check. Mount checks go by namespace owner
  // (sys_mount.cc), not by these bits.
  c.creds.caps = tg_->creds.user_ns ? 0 : tg_->creds.cap_effective;
  return c;
}

int Task::LocalPid(int global) {
  if (tg_->pidns == nullptr || tg_->pidns->level() == 0) return global;
  absl::MutexLock l(&k_.mu());
  return ToLocalPid(global);
}

int Task::GlobalPid(int local) {
  if (tg_->pidns == nullptr || tg_->pidns->level() == 0) return local;
  absl::MutexLock l(&k_.mu());
  return ToGlobalPid(local);
}

}  // namespace sentry::kernel
