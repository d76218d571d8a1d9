#include "platform/seccomp/seccomp_platform.h"

#include <elf.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <ctime>
#include <mutex>
#include <thread>
#include <map>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "sentry/base/host_fds.h"
#include "sentry/base/logging.h"
#include "sentry/base/status.h"

namespace sentry::platform {

namespace {

// A fault or a host signal stops the guest stub in ptrace, which nothing pollable reports
// (SIGCHLD goes to any Sentry thread). A Wait() that polls (the fallback when no wait slot is
// free, see WaitSlot) therefore looks for such stops at this interval while the guest runs.
constexpr int kStopPollMs = 5;

// The syscalls whose handlers read or write registers other than the arguments and the
// result: they are served from a ptrace stop with the full register set.
bool NeedsAllRegisters(uint64_t nr) {
  switch (nr) {
    case SYS_rt_sigreturn:
    case SYS_clone:
    case SYS_fork:
    case SYS_vfork:
    case SYS_execve:
    case SYS_execveat:
    case SYS_clone3:
    case SYS_arch_prctl:
    case SYS_sigaltstack:
      return true;
    default:
      return false;
  }
}

constexpr int64_t kERestartSys = 512;

}  // namespace
}  // namespace sentry::platform

// recv_unsafe.S
extern "C" {
long SeccompRecv(int listener, unsigned long request, void* notif, const std::atomic<int>* kicked);
extern char SeccompRecvWindowStart[], SeccompRecvWindowEnd[], SeccompRecvKicked[];
}

namespace sentry::platform {
namespace {

// Waking a Sentry thread that waits for its guest in SECCOMP_IOCTL_NOTIF_RECV. Blocking in
// the ioctl itself, rather than in poll() on the listener and friends, saves ~1.2 us of a
// ~6 us guest syscall here; the price is that the other reasons to wake up (Interrupt(), the
// guest stub stopping or dying) must come as a signal. Each context owns a slot; a kick sets
// the slot's flag, then sends the waiting thread KickSignal() (SeccompRecv cannot miss it).
// SIGCHLD, which the host sends when a stub stops or dies, kicks the context of that stub.
// SIGCHLDs that arrive together merge into one, so a sweeper also kicks every waiter every
// kSweepMs: a stop whose SIGCHLD was merged away is seen that late, never missed.
constexpr int kSweepMs = 20;

struct WaitSlot {
  std::atomic<pid_t> tid{0};    // the Sentry thread waiting in this slot's context, or 0
  std::atomic<pid_t> guest{0};  // the context's guest stub
  std::atomic<int> kicked{0};
  std::atomic<bool> in_use{false};
};
constexpr int kMaxWaitSlots = 32768;  // DoClone allows no more tasks
WaitSlot g_wait_slots[kMaxWaitSlots];
// SeccompContext::OnHostDeath's callbacks and the guest stubs' pidfds, by slot. The sweeper
// polls the pidfds and calls the callbacks with this held, so a context that clears its
// callback (and closes its pidfd) waits for a call in progress.
// Only the contexts that asked have an entry (a table per slot cost a megabyte of memory).
struct DeathWatch {
  int pidfd;
  std::function<void()> fn;
};
absl::Mutex g_death_mu(absl::kConstInit);
std::map<int, DeathWatch>& DeathWatches() ABSL_EXCLUSIVE_LOCKS_REQUIRED(g_death_mu) {
  static auto* watches = new std::map<int, DeathWatch>();
  return *watches;
}
// Set by every SIGCHLD: a stub may have died. Not only deaths: SIGCHLDs that arrive
// together merge into one, whose code is the first one's.
std::atomic<bool> g_child_event{false};
std::atomic<int> g_wait_slots_used{0};  // high-water mark: slots at or past it were never used

int KickSignal() { return SIGRTMIN + 5; }

void Kick(WaitSlot& slot) {
  slot.kicked.store(1);
  pid_t tid = slot.tid.load();
  if (tid != 0) syscall(SYS_tgkill, getpid(), tid, KickSignal());
}

// Async-signal-safe. A kick that lands between SeccompRecv's check of the flag and its
// syscall instruction (or on the instruction, rewound there for a restart) leaves by the
// "kicked" exit instead. Anywhere else the handler does nothing, and SA_RESTART resumes
// whatever host syscall it interrupted.
void OnKick(int, siginfo_t*, void* context) {
  auto* uc = static_cast<ucontext_t*>(context);
  greg_t& rip = uc->uc_mcontext.gregs[REG_RIP];
  if (rip >= reinterpret_cast<greg_t>(SeccompRecvWindowStart) &&
      rip < reinterpret_cast<greg_t>(SeccompRecvWindowEnd)) {
    rip = reinterpret_cast<greg_t>(SeccompRecvKicked);
  }
}

// The stub's context is flagged whether it waits or not: one busy elsewhere looks at its stub
// before it next blocks.
void OnChild(int, siginfo_t* si, void*) {
  int saved = errno;
  g_child_event.store(true);
  int used = g_wait_slots_used.load();
  for (int i = 0; i < used; i++) {
    WaitSlot& slot = g_wait_slots[i];
    if (slot.in_use.load() && slot.guest.load() == si->si_pid) Kick(slot);
  }
  errno = saved;
}

// A guest stub that died while its task was busy in the kernel (blocked in a wait, say):
// its Sentry thread would see it only on its way back to the guest. Polls the pidfds of the
// contexts that asked (OnHostDeath) and calls back those of the dead, once.
void CheckDeaths() {
  absl::MutexLock l(&g_death_mu);
  std::vector<struct pollfd> fds;
  std::vector<int> slots;
  for (auto& [slot, watch] : DeathWatches()) {
    fds.push_back({watch.pidfd, POLLIN, 0});
    slots.push_back(slot);
  }
  if (fds.empty() || poll(fds.data(), fds.size(), 0) <= 0) return;
  for (size_t j = 0; j < fds.size(); j++) {
    if (!(fds[j].revents & POLLIN)) continue;
    auto node = DeathWatches().extract(slots[j]);
    node.mapped().fn();
  }
}

void Sweep() {
  for (;;) {
    absl::SleepFor(absl::Milliseconds(kSweepMs));
    if (g_child_event.exchange(false)) CheckDeaths();
    int used = g_wait_slots_used.load();
    for (int i = 0; i < used; i++) {
      WaitSlot& slot = g_wait_slots[i];
      if (slot.in_use.load() && slot.tid.load() != 0) Kick(slot);
    }
  }
}

void InstallWaitHandlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_sigaction = OnKick;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(KickSignal(), &sa, nullptr);
    // The kick signal is held back while OnChild runs: a kick it sends to its own thread must
    // land where the thread was interrupted (maybe in SeccompRecv's window), not in OnChild.
    struct sigaction child {};
    child.sa_sigaction = OnChild;
    child.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&child.sa_mask);
    sigaddset(&child.sa_mask, KickSignal());
    sigaction(SIGCHLD, &child, nullptr);
    std::thread(Sweep).detach();
  });
}

// A free slot, or -1 when all are taken (the context then falls back to poll()).
int TakeWaitSlot() {
  for (int i = 0; i < kMaxWaitSlots; i++) {
    bool free = false;
    if (g_wait_slots[i].in_use.compare_exchange_strong(free, true)) {
      g_wait_slots[i].kicked.store(0);
      int used = g_wait_slots_used.load();
      while (used <= i && !g_wait_slots_used.compare_exchange_weak(used, i + 1)) {
      }
      return i;
    }
  }
  return -1;
}

pid_t CurrentTid() {
  thread_local pid_t tid = static_cast<pid_t>(syscall(SYS_gettid));
  return tid;
}


// Creates the guest stub of a new guest thread: a CLONE_VM child of `injector` that installs
// the notification filter and hands its listener to the Sentry.
absl::StatusOr<std::unique_ptr<Context>> MakeGuestStub(int injector,
                                                       std::shared_ptr<StubAddressSpace> as) {
  bool interrupted = false;
  // CLONE_FILES: an fd that SECCOMP_IOCTL_NOTIF_ADDFD puts in the guest stub is then the
  // injector's to mmap (LendFd). The guest stub dies with its injector: a stub left without
  // one (its injector killed on the host) could never change its address space again, and
  // would live on, orphaned, until the sandbox ends. At kStubGuestClone (stub.S) the child
  // sets that up itself before it stops, and exits if the injector died before: then the
  // seize below finds it dead.
  Result<int64_t> guest = InjectSyscall(
      injector,
      {SYS_clone, CLONE_VM | CLONE_FILES | SIGCHLD, 0, 0, 0, 0, static_cast<uint64_t>(injector)},
      Layout::kStubGuestClone, &interrupted);
  if (!guest.ok() || *guest < 0) return absl::InternalError("cannot clone the guest stub");
  int tid = static_cast<int>(*guest);
  absl::Status st = SeizeStopped(tid);
  if (!st.ok()) {
    kill(tid, SIGKILL);
    return absl::Status(st.code(), "the guest stub or its injector is gone: " +
                                       std::string(st.message()));
  }
  auto fail = [&](const char* what) {
    int err = errno;
    kill(tid, SIGKILL);
    WaitFor(tid);
    return ErrnoStatus(what, err);
  };
  Result<int64_t> fd = InjectSyscall(
      tid, {SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
            Layout::kStubFilter, 0, 0, 0},
      Layout::kStubInject, &interrupted);
  if (!fd.ok()) return fail("seccomp filter of the guest stub");
  if (*fd < 0) {
    errno = static_cast<int>(-*fd);
    return fail("seccomp(SET_MODE_FILTER, NEW_LISTENER) in the guest stub");
  }
  int pidfd = RetryOnFdShortage([&] { return static_cast<int>(syscall(SYS_pidfd_open, tid, 0)); });
  if (pidfd < 0) return fail("pidfd_open (guest stub)");
  int listener =
      RetryOnFdShortage([&] { return static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, *fd, 0)); });
  if (listener < 0) {
    close(pidfd);
    return fail("pidfd_getfd (seccomp listener)");
  }
  as->AddMember(tid);
  auto ctx = std::make_unique<SeccompContext>(injector, tid, listener, pidfd, std::move(as));
  // The stubs' shared fd table keeps nothing: stubs cloned from the injector must not inherit
  // this listener. Its close goes with the next injection (a clone's comes before it).
  ctx->DeferClose(static_cast<int>(*fd));
  return std::unique_ptr<Context>(std::move(ctx));
}

}  // namespace

SeccompContext::SeccompContext(int injector, int guest, int listener, int pidfd,
                               std::shared_ptr<StubAddressSpace> as)
    : injector_(injector),
      guest_(guest),
      listener_(listener),
      pidfd_(pidfd),
      wake_fd_(RetryOnFdShortage([] { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); })),
      as_(std::move(as)),
      stopped_(true),  // the guest stub starts stopped after installing its filter
      slot_(TakeWaitSlot()) {
  InstallWaitHandlers();
  if (slot_ >= 0) g_wait_slots[slot_].guest.store(guest_);
}

SeccompContext::~SeccompContext() {
  Kill();
  OnHostDeath(nullptr);
  close(listener_);
  close(pidfd_);
  close(wake_fd_);
  if (slot_ >= 0) {
    g_wait_slots[slot_].tid.store(0);
    g_wait_slots[slot_].guest.store(0);
    g_wait_slots[slot_].in_use.store(false);
  }
}

std::shared_ptr<AddressSpace> SeccompContext::address_space() { return as_; }

Trap SeccompContext::Dead() {
  dead_ = true;
  in_notif_ = stopped_ = merge_pending_ = false;
  running_.store(false);
  Trap trap;
  trap.kind = Trap::Kind::kDead;
  return trap;
}

Trap SeccompContext::Switch(Registers& regs) {
  if (dead_) return Dead();
  running_.store(true);
  if (interrupt_.exchange(false)) {
    running_.store(false);
    Trap trap;
    trap.kind = Trap::Kind::kInterrupted;
    return trap;
  }
  if (in_notif_) {
    // The kernel changed only the result: answer the notification (if the answer finds it
    // cancelled, the guest died or stopped, which Wait sees). Anything else (a restart moved
    // rip back) needs the registers written, hence a ptrace stop.
    if (regs.rip == notif_rip_ && regs.orig_rax == notif_nr_) {
      Respond(regs.rax);
      return Wait(regs);
    }
    if (!StopForRegisters()) return Dead();
  }
  if (merge_pending_) MergeHostRegisters(regs);
  // The guest stub, the injector and this thread on one core (cpu_placement.h).
  placement_.Place({guest_, injector_});
  if (stopped_) {
    Registers r = regs;
    r.orig_rax = ~0ull;  // no host syscall restart: the Sentry decided about restarts
    if (ptrace(PTRACE_SETREGS, guest_, 0, &r) != 0 || ptrace(PTRACE_CONT, guest_, 0, 0) != 0) {
      return Stopped(WaitFor(guest_, true), regs);
    }
    stopped_ = false;
  }
  return Wait(regs);
}

bool SeccompContext::Respond(uint64_t rax) {
  struct seccomp_notif_resp resp {};
  resp.id = notif_id_;
  int64_t v = static_cast<int64_t>(rax);
  if (continue_pending_) {
    continue_pending_ = false;
    resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  } else if (v < 0 && v > -4096) {
    resp.error = static_cast<int32_t>(v);
  } else {
    resp.val = v;
  }
  in_notif_ = false;
  return ioctl(listener_, SECCOMP_IOCTL_NOTIF_SEND, &resp) == 0;
}

Trap SeccompContext::Wait(Registers& regs) {
  WaitSlot* slot = slot_ >= 0 ? &g_wait_slots[slot_] : nullptr;
  // Kick signals reach this thread only while it waits here: elsewhere they would only
  // interrupt (and restart) whatever it is doing. Kick flags are set at any time.
  if (slot) slot->tid.store(CurrentTid());
  struct ClearTid {
    WaitSlot* slot;
    ~ClearTid() {
      if (slot) slot->tid.store(0);
    }
  } clear_tid{slot};
  for (;;) {
    bool notified;
    struct seccomp_notif req;
    memset(&req, 0, sizeof(req));
    if (slot) {
      // A kick from here on interrupts the ioctl. The flag is cleared only on the way to the
      // checks below, so a kick that came while this thread was elsewhere is not lost.
      notified = SeccompRecv(listener_, SECCOMP_IOCTL_NOTIF_RECV, &req, &slot->kicked) == 0;
      if (!notified) slot->kicked.store(0);
    } else {
      struct pollfd fds[3] = {
          {listener_, POLLIN, 0}, {wake_fd_, POLLIN, 0}, {pidfd_, POLLIN, 0}};
      int n = poll(fds, 3, kStopPollMs);
      if (n > 0 && (fds[1].revents & POLLIN)) {
        uint64_t v;
        (void)!read(wake_fd_, &v, sizeof(v));
      }
      notified = n > 0 && (fds[0].revents & POLLIN) &&
                 ioctl(listener_, SECCOMP_IOCTL_NOTIF_RECV, &req) == 0;
    }
    if (notified) return TakeNotification(req, regs);
    // Otherwise: a kick (EINTR), a poll timeout, or ENOENT, a notification cancelled before we
    // took it (the stub died or stopped).
    if (interrupt_.exchange(false)) {
      // A guest that already made its syscall is inside it, as on Linux: the syscall runs
      // (and, if it blocks, sees the pending signal and fails with EINTR) rather than being
      // cancelled and made again after the handler, which would let `while (!flag) pause();`
      // sleep through the very signal that set the flag.
      struct pollfd pending = {listener_, POLLIN, 0};
      if (poll(&pending, 1, 0) == 1 && (pending.revents & POLLIN) &&
          ioctl(listener_, SECCOMP_IOCTL_NOTIF_RECV, &req) == 0) {
        return TakeNotification(req, regs);
      }
      // Stop the guest wherever it is; a syscall it had just raised is cancelled and restarts.
      if (ptrace(PTRACE_INTERRUPT, guest_, 0, 0) != 0) return Stopped(WaitFor(guest_), regs);
      return Stopped(WaitFor(guest_), regs);
    }
    int status = WaitFor(guest_, true);
    if (status != kNoChange) return Stopped(status, regs);
  }
}

Trap SeccompContext::TakeNotification(const struct seccomp_notif& req, Registers& regs) {
  running_.store(false);
  in_notif_ = true;
  notif_id_ = req.id;
  notif_nr_ = static_cast<uint32_t>(req.data.nr);
  notif_rip_ = req.data.instruction_pointer;
  regs.orig_rax = notif_nr_;
  regs.rdi = req.data.args[0];
  regs.rsi = req.data.args[1];
  regs.rdx = req.data.args[2];
  regs.r10 = req.data.args[3];
  regs.r8 = req.data.args[4];
  regs.r9 = req.data.args[5];
  regs.rip = notif_rip_;
  regs.rax = static_cast<uint64_t>(-ENOSYS);
  for (int i = 0; i < 6; i++) notif_args_[i] = req.data.args[i];
  continue_pending_ = false;
  if (NeedsAllRegisters(notif_nr_) && !SyncRegisters(regs).ok()) return Dead();
  Trap trap;
  trap.kind = Trap::Kind::kSyscall;
  return trap;
}

Trap SeccompContext::Stopped(int status, Registers& regs) {
  running_.store(false);
  if (IsDeath(status) || status == kNoChange) {
    guest_reaped_ = true;
    return Dead();
  }
  in_notif_ = false;
  merge_pending_ = false;
  stopped_ = true;
  if (ptrace(PTRACE_GETREGS, guest_, 0, &regs) != 0) return Dead();
  // A notification the stop cancelled left the syscall half-entered: rewind it so it runs
  // again when the guest resumes, as if it had not been made yet.
  if (static_cast<int64_t>(regs.orig_rax) >= 0 &&
      static_cast<int64_t>(regs.rax) == -kERestartSys) {
    regs.rax = regs.orig_rax;
    regs.rip -= 2;
    regs.orig_rax = ~0ull;
  }
  Trap trap;
  int sig = WSTOPSIG(status);
  if ((status >> 16) == 0 &&
      (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGTRAP)) {
    siginfo_t si;
    if (ptrace(PTRACE_GETSIGINFO, guest_, 0, &si) == 0 && si.si_code > 0) {
      trap.kind = Trap::Kind::kSignal;
      static_assert(sizeof(si) == sizeof(trap.info));
      memcpy(&trap.info, &si, sizeof(si));
      return trap;
    }
  }
  // PTRACE_INTERRUPT's stop, a group stop, or a host signal nobody asked for: suppressed on
  // resume.
  trap.kind = Trap::Kind::kInterrupted;
  return trap;
}

bool SeccompContext::StopForRegisters() {
  if (ptrace(PTRACE_INTERRUPT, guest_, 0, 0) != 0) return false;
  int status = WaitFor(guest_);
  if (IsDeath(status)) {
    dead_ = guest_reaped_ = true;
    return false;
  }
  // Usually PTRACE_EVENT_STOP; any other stop serves as well (the interrupt then stays
  // pending and later shows up as a harmless kInterrupted).
  if (ptrace(PTRACE_GETREGS, guest_, 0, &host_regs_) != 0) {
    dead_ = true;
    return false;
  }
  in_notif_ = false;
  stopped_ = true;
  merge_pending_ = true;
  if (continue_pending_) {
    // The stop cancelled the notification HostRseq wanted the host to run: run it now.
    continue_pending_ = false;
    Result<int64_t> r = SyscallInGuestStub(continue_call_);
    if (!r.ok()) return false;
  }
  return true;
}

Result<void> SeccompContext::HostRseq(uint64_t area, uint32_t len, int flags, uint32_t sig) {
  if (dead_) return Errno(ESRCH);
  const uint64_t call[7] = {SYS_rseq, area, len, static_cast<uint32_t>(flags), sig, 0, 0};
  if (in_notif_ && notif_nr_ == SYS_rseq && notif_args_[0] == area &&
      static_cast<uint32_t>(notif_args_[1]) == len &&
      static_cast<int>(notif_args_[2]) == flags && static_cast<uint32_t>(notif_args_[3]) == sig) {
    // The guest's own call: answering its notification with CONTINUE costs nothing extra.
    continue_pending_ = true;
    memcpy(continue_call_, call, sizeof(call));
    return Ok();
  }
  if (in_notif_ && !StopForRegisters()) return Errno(ESRCH);
  int64_t r = SENTRY_TRY(SyscallInGuestStub(call));
  if (r < 0) return Errno(static_cast<int>(-r));
  return Ok();
}

Result<int64_t> SeccompContext::SyscallInGuestStub(const uint64_t (&call)[7]) {
  Registers saved;
  if (ptrace(PTRACE_GETREGS, guest_, 0, &saved) != 0) return Errno(ESRCH);
  Registers r = saved;
  r.rip = Layout::kStubInject;
  r.rax = call[0];
  r.orig_rax = ~0ull;
  r.rdi = call[1], r.rsi = call[2], r.rdx = call[3], r.r10 = call[4], r.r8 = call[5];
  r.r9 = call[6];
  if (ptrace(PTRACE_SETREGS, guest_, 0, &r) != 0 || ptrace(PTRACE_CONT, guest_, 0, 0) != 0) {
    return Errno(ESRCH);
  }
  // The next events: the notification of the injected syscall, which is let through, then
  // the int3 after it. A stop left pending (PTRACE_INTERRUPT) may come first and cancel the
  // notification; the stub is resumed and makes the syscall again.
  bool let_through = false;
  for (;;) {
    if (!let_through) {
      struct pollfd fds[2] = {{listener_, POLLIN, 0}, {pidfd_, POLLIN, 0}};
      if (poll(fds, 2, kStopPollMs) > 0 && (fds[0].revents & POLLIN)) {
        struct seccomp_notif req;
        memset(&req, 0, sizeof(req));
        if (ioctl(listener_, SECCOMP_IOCTL_NOTIF_RECV, &req) == 0) {
          struct seccomp_notif_resp resp {};
          resp.id = req.id;
          if (req.data.instruction_pointer == Layout::kStubInject + 2 &&
              static_cast<uint64_t>(req.data.nr) == call[0]) {
            resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
            let_through = true;
          } else {
            resp.error = -ENOSYS;  // cannot happen: the stub runs only the injected call
          }
          (void)ioctl(listener_, SECCOMP_IOCTL_NOTIF_SEND, &resp);
        }
      }
    }
    int status = WaitFor(guest_, !let_through);
    if (status == kNoChange) continue;
    if (IsDeath(status)) {
      dead_ = guest_reaped_ = true;
      return Errno(ESRCH);
    }
    if (ptrace(PTRACE_GETREGS, guest_, 0, &r) != 0) return Errno(ESRCH);
    if (WSTOPSIG(status) == SIGTRAP && (status >> 16) == 0 &&
        r.rip == Layout::kStubInject + 3) {
      break;
    }
    if (ptrace(PTRACE_CONT, guest_, 0, 0) != 0) return Errno(ESRCH);
    let_through = false;
  }
  if (ptrace(PTRACE_SETREGS, guest_, 0, &saved) != 0) return Errno(ESRCH);
  return static_cast<int64_t>(r.rax);
}

void SeccompContext::MergeHostRegisters(Registers& regs) {
  Registers h = host_regs_;
  h.rax = regs.rax;
  h.rip = regs.rip;
  h.orig_rax = regs.orig_rax;
  regs = h;
  merge_pending_ = false;
}

Result<void> SeccompContext::SyncRegisters(Registers& regs) {
  if (dead_) return Errno(ESRCH);
  if (in_notif_ && !StopForRegisters()) return Errno(ESRCH);
  if (merge_pending_) MergeHostRegisters(regs);
  return Ok();
}

void SeccompContext::Interrupt() {
  interrupt_.store(true);
  if (running_.load()) {
    if (slot_ >= 0) {
      Kick(g_wait_slots[slot_]);
    } else {
      uint64_t one = 1;
      (void)!write(wake_fd_, &one, sizeof(one));
    }
  }
}

Result<std::vector<uint8_t>> SeccompContext::GetFpState() {
  if (dead_ || (in_notif_ && !StopForRegisters())) return Errno(ESRCH);
  std::vector<uint8_t> buf(16384);
  struct iovec iov = {buf.data(), buf.size()};
  if (ptrace(PTRACE_GETREGSET, guest_, NT_X86_XSTATE, &iov) != 0) return Errno(ESRCH);
  buf.resize(iov.iov_len);
  return buf;
}

Result<void> SeccompContext::SetFpState(std::span<const uint8_t> state) {
  if (dead_ || (in_notif_ && !StopForRegisters())) return Errno(ESRCH);
  struct iovec iov = {const_cast<uint8_t*>(state.data()), state.size()};
  if (ptrace(PTRACE_SETREGSET, guest_, NT_X86_XSTATE, &iov) != 0) return Errno(EINVAL);
  return Ok();
}

Result<int64_t> SeccompContext::StubSyscall(uint64_t nr, uint64_t a0, uint64_t a1, uint64_t a2,
                                            uint64_t a3, uint64_t a4, uint64_t a5,
                                            uint64_t entry) {
  if (dead_) return Errno(ESRCH);
  // The guest's own mprotect or munmap, exactly as it asked for it, in an address space that
  // no other guest thread shares: answering its notification with CONTINUE has the host make
  // it, instead of an injection (the caller takes 0 as the result; the guest gets the
  // host's). Its arguments are all in registers, which nothing can change while it waits;
  // with one guest thread, no other change to the address space can come between the
  // Sentry's bookkeeping and the host's call.
  if (in_notif_ && !continue_pending_ && entry == Layout::kStubInject &&
      (nr == SYS_mprotect || nr == SYS_munmap) && nr == notif_nr_ && a0 == notif_args_[0] &&
      a1 == notif_args_[1] && (nr == SYS_munmap || a2 == notif_args_[2]) &&
      as_->MemberCount() == 2) {
    const uint64_t call[7] = {nr, a0, a1, nr == SYS_munmap ? 0 : a2, 0, 0, 0};
    memcpy(continue_call_, call, sizeof(call));
    continue_pending_ = true;
    return 0;
  }
  bool interrupted = false;  // nothing interrupts the injector on purpose
  return InjectSyscall(injector_, {nr, a0, a1, a2, a3, a4, a5}, entry, &interrupted,
                       TakeDeferredClose());
}

Result<int> SeccompContext::LendFd(int host_fd) {
  // A guest stub waiting in a notification receives it by ADDFD (the injector shares its fd
  // table); otherwise it goes over the address space's channel, into the injector.
  if (dead_) return Errno(EOPNOTSUPP);
  if (!in_notif_) return as_->LendFd(*this, host_fd);
  struct seccomp_notif_addfd add {};
  add.id = notif_id_;
  add.srcfd = static_cast<uint32_t>(host_fd);
  add.newfd_flags = O_CLOEXEC;
  int fd = ioctl(listener_, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
  if (fd < 0) return Errno(errno == EINPROGRESS || errno == ENOENT ? EOPNOTSUPP : errno);
  return fd;
}

Result<int> SeccompContext::CloneThread() {
  // The new thread's injector; Attach makes its guest stub.
  return CloneStub(*this, CLONE_VM | SIGCHLD);
}

Result<int> SeccompContext::ForkAddressSpace() {
  int pid = SENTRY_TRY(CloneStub(*this, SIGCHLD));
  StubAddressSpace::NoteFork(pid, as_);
  return pid;
}

void SeccompContext::OnHostDeath(std::function<void()> fn) {
  if (slot_ < 0) return;
  absl::MutexLock l(&g_death_mu);
  if (fn && pidfd_ >= 0) {
    DeathWatches()[slot_] = DeathWatch{pidfd_, std::move(fn)};
  } else {
    DeathWatches().erase(slot_);
  }
}

void SeccompContext::Kill() {
  if (killed_) return;
  killed_ = true;
  OnHostDeath(nullptr);  // the deaths from here on are ours
  placement_.Release();
  as_->RemoveMember(guest_);
  as_->RemoveMember(injector_);
  // A stub already reaped is never signalled: its pid may belong to someone else by now.
  for (int tid : {guest_reaped_ ? -1 : guest_, injector_}) {
    if (tid > 0) KillAndReapLater(tid);
  }
  dead_ = true;
  in_notif_ = stopped_ = false;
}

// ---------------------------------------------------------------------------------------------
// Platform.

absl::StatusOr<std::unique_ptr<Context>> SeccompPlatform::NewAddressSpace() {
  // The channel lends fds while no notification is pending (the ELF loader at execve), when
  // SECCOMP_IOCTL_NOTIF_ADDFD cannot.
  SENTRY_ASSIGN_OR_RETURN(std::shared_ptr<FdChannel> channel, FdChannel::Create());
  SENTRY_ASSIGN_OR_RETURN(int injector, SpawnStub(stub_fd_, channel->stub_end()));
  auto as = std::make_shared<StubAddressSpace>(injector);
  as->set_channel(std::move(channel));
  auto stack_range = as->LearnLayout(injector);
  if (!stack_range.ok()) return stack_range.status();
  if (stack_range->second > stack_range->first) {
    // The host gave the stub a stack; the guest gets its own, so drop it.
    bool interrupted = false;
    auto r = InjectSyscall(injector,
                           {SYS_munmap, stack_range->first,
                            stack_range->second - stack_range->first, 0, 0, 0, 0},
                           Layout::kStubInject, &interrupted);
    if (!r.ok() || *r != 0) return absl::InternalError("cannot unmap the stub's stack");
  }
  return MakeGuestStub(injector, std::move(as));
}

absl::StatusOr<std::unique_ptr<Context>> SeccompPlatform::Attach(
    int handle, std::shared_ptr<AddressSpace> as) {
  SENTRY_RETURN_IF_ERROR(SeizeStopped(handle));
  std::shared_ptr<StubAddressSpace> sas;
  if (as == nullptr) {
    SENTRY_ASSIGN_OR_RETURN(sas, StubAddressSpace::ForForkedStub(handle));
  } else {
    sas = std::static_pointer_cast<StubAddressSpace>(as);
    sas->AddMember(handle);
  }
  auto ctx = MakeGuestStub(handle, sas);
  if (!ctx.ok()) sas->RemoveMember(handle);  // the caller discards the injector
  return ctx;
}

void SeccompPlatform::Discard(int handle) { kill(handle, SIGKILL); }

absl::StatusOr<std::unique_ptr<Platform>> NewSeccompPlatform(int stub_fd) {
  InstallWaitHandlers();  // its sweeper thread starts while the host still gives threads
  return std::unique_ptr<Platform>(std::make_unique<SeccompPlatform>(stub_fd));
}

}  // namespace sentry::platform
