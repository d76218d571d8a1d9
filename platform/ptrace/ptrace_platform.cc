#include "platform/ptrace/ptrace_platform.h"

#include <elf.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>
#include <vector>

#include "platform/stub/stub_factory.h"
#include "sentry/base/logging.h"
#include "sentry/base/status.h"

namespace sentry::platform {
namespace {

// Stub deaths a blocked task must learn of (OnHostDeath). The Sentry thread that traces a stub
// sees its death only in waitpid, on its way back to the guest: a task blocked in the kernel
// (nanosleep, a pipe read) would live on long after its stub was SIGKILLed on the host. A
// watcher thread polls the stubs' pidfds and calls back those of the dead, once, with
// g_watch_mu held, so that a context that clears its callback waits for a call in progress.
struct DeathWatch {
  int pidfd;
  std::function<void()> fn;
};
absl::Mutex g_watch_mu(absl::kConstInit);
int g_watch_wake = -1;  // an eventfd: the set of watches changed
std::map<const PtraceContext*, DeathWatch>& Watches() ABSL_EXCLUSIVE_LOCKS_REQUIRED(g_watch_mu) {
  static auto* watches = new std::map<const PtraceContext*, DeathWatch>();
  return *watches;
}

// Calls back the watches whose stub is dead now (a poll result may be stale: its pidfd may
// have been closed and its number reused while the watcher slept).
void CallBackDead() ABSL_EXCLUSIVE_LOCKS_REQUIRED(g_watch_mu) {
  for (auto it = Watches().begin(); it != Watches().end();) {
    struct pollfd p = {it->second.pidfd, POLLIN, 0};
    if (poll(&p, 1, 0) <= 0 || !(p.revents & POLLIN)) {
      ++it;
      continue;
    }
    close(it->second.pidfd);
    std::function<void()> fn = std::move(it->second.fn);
    it = Watches().erase(it);
    fn();
  }
}

void WatchDeaths() {
  for (;;) {
    std::vector<struct pollfd> fds;
    {
      absl::MutexLock l(&g_watch_mu);
      fds.push_back({g_watch_wake, POLLIN, 0});
      for (auto& [ctx, watch] : Watches()) fds.push_back({watch.pidfd, POLLIN, 0});
    }
    if (poll(fds.data(), fds.size(), -1) <= 0) continue;
    uint64_t n;
    if (fds[0].revents & POLLIN) (void)!read(g_watch_wake, &n, sizeof(n));
    absl::MutexLock l(&g_watch_mu);
    CallBackDead();
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Context.

PtraceContext::PtraceContext(int tid, std::shared_ptr<StubAddressSpace> as)
    : tid_(tid), as_(std::move(as)) {}

PtraceContext::~PtraceContext() { Kill(); }

std::shared_ptr<AddressSpace> PtraceContext::address_space() { return as_; }

int PtraceContext::ResumeAndWait(int request) {
  if (ptrace(static_cast<__ptrace_request>(request), tid_, 0, 0) != 0) return -1;
  return WaitFor(tid_);
}

Trap PtraceContext::Switch(Registers& regs) {
  Trap trap;
  if (dead_) {
    trap.kind = Trap::Kind::kDead;
    return trap;
  }
  running_.store(true);
  if (interrupt_.exchange(false)) {
    running_.store(false);
    trap.kind = Trap::Kind::kInterrupted;
    return trap;
  }
  // The stub and this thread, its tracer, on one core (cpu_placement.h).
  placement_.Place({tid_});
  int status = -1;
  if (ptrace(PTRACE_SETREGS, tid_, 0, &regs) == 0) status = ResumeAndWait(PTRACE_SYSEMU);
  running_.store(false);
  if (IsDeath(status) || ptrace(PTRACE_GETREGS, tid_, 0, &regs) != 0) {
    dead_ = true;
    trap.kind = Trap::Kind::kDead;
    return trap;
  }
  int sig = WSTOPSIG(status);
  if (sig == (SIGTRAP | 0x80)) {
    trap.kind = Trap::Kind::kSyscall;
    return trap;
  }
  if ((status >> 16) == 0 &&
      (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGTRAP)) {
    siginfo_t si;
    if (ptrace(PTRACE_GETSIGINFO, tid_, 0, &si) == 0 && si.si_code > 0) {
      trap.kind = Trap::Kind::kSignal;
      static_assert(sizeof(si) == sizeof(trap.info));
      memcpy(&trap.info, &si, sizeof(si));
      return trap;
    }
  }
  // SIGSTOP from Interrupt(), a group-stop, or a host signal nobody asked for (e.g. SIGCHLD
  // from a stub child): the guest is simply interrupted; the signal is suppressed on resume.
  trap.kind = Trap::Kind::kInterrupted;
  return trap;
}

void PtraceContext::Interrupt() {
  interrupt_.store(true);
  if (running_.load()) kill(tid_, SIGSTOP);
}

Result<int64_t> PtraceContext::StubSyscall(uint64_t nr, uint64_t a0, uint64_t a1, uint64_t a2,
                                           uint64_t a3, uint64_t a4, uint64_t a5,
                                           uint64_t entry) {
  if (dead_) return Errno(ESRCH);
  bool interrupted = false;
  Result<int64_t> r =
      InjectSyscall(tid_, {nr, a0, a1, a2, a3, a4, a5}, entry, &interrupted, TakeDeferredClose());
  if (interrupted) interrupt_.store(true);
  if (!r.ok()) dead_ = true;
  return r;
}

Result<void> PtraceContext::HostRseq(uint64_t area, uint32_t len, int flags, uint32_t sig) {
  // The stub is the guest thread's host thread, and it has no filter: inject the call there.
  int64_t r = SENTRY_TRY(StubSyscall(SYS_rseq, area, len, static_cast<uint64_t>(flags), sig));
  if (r < 0) return Errno(static_cast<int>(-r));
  return Ok();
}

Result<int> PtraceContext::LendFd(int host_fd) {
  if (dead_) return Errno(ESRCH);
  return as_->LendFd(*this, host_fd);
}

Result<std::vector<uint8_t>> PtraceContext::GetFpState() {
  std::vector<uint8_t> buf(16384);
  struct iovec iov = {buf.data(), buf.size()};
  if (ptrace(PTRACE_GETREGSET, tid_, NT_X86_XSTATE, &iov) != 0) return Errno(ESRCH);
  buf.resize(iov.iov_len);
  return buf;
}

Result<void> PtraceContext::SetFpState(std::span<const uint8_t> state) {
  struct iovec iov = {const_cast<uint8_t*>(state.data()), state.size()};
  if (ptrace(PTRACE_SETREGSET, tid_, NT_X86_XSTATE, &iov) != 0) return Errno(EINVAL);
  return Ok();
}

Result<int> PtraceContext::CloneThread() {
  // A separate host process sharing the address space (no CLONE_THREAD), so that stopping or
  // killing one guest thread's stub never touches another's.
  return CloneStub(*this, CLONE_VM | SIGCHLD);
}

Result<int> PtraceContext::ForkAddressSpace() {
  int pid = SENTRY_TRY(CloneStub(*this, SIGCHLD));
  StubAddressSpace::NoteFork(pid, as_);
  return pid;
}

void PtraceContext::OnHostDeath(std::function<void()> fn) {
  absl::MutexLock l(&g_watch_mu);
  if (auto it = Watches().find(this); it != Watches().end()) {
    close(it->second.pidfd);
    Watches().erase(it);
  }
  if (fn && !dead_ && tid_ > 0) {
    if (g_watch_wake < 0) {
      g_watch_wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
      if (g_watch_wake < 0) return;  // cannot tell: the death shows at the next Switch
      std::thread(WatchDeaths).detach();
    }
    int pidfd = static_cast<int>(syscall(SYS_pidfd_open, tid_, 0));
    if (pidfd < 0) return;
    Watches()[this] = DeathWatch{pidfd, std::move(fn)};
  }
  uint64_t one = 1;
  if (g_watch_wake >= 0) (void)!write(g_watch_wake, &one, sizeof(one));
}

void PtraceContext::Kill() {
  OnHostDeath(nullptr);  // the deaths from here on are ours
  placement_.Release();
  if (tid_ <= 0) return;
  as_->RemoveMember(tid_);
  if (!dead_) {
    KillAndReapLater(tid_);
    dead_ = true;
  }
}

// ---------------------------------------------------------------------------------------------
// Platform.

PtracePlatform::~PtracePlatform() = default;

absl::StatusOr<std::unique_ptr<Context>> PtracePlatform::NewAddressSpace() {
  // Every address space gets a fresh channel: its stubs then share it only with the threads
  // and forks that descend from them.
  SENTRY_ASSIGN_OR_RETURN(std::shared_ptr<FdChannel> channel, FdChannel::Create());
  SENTRY_ASSIGN_OR_RETURN(int pid, SpawnStub(stub_fd_, channel->stub_end()));
  auto as = std::make_shared<StubAddressSpace>(pid);
  as->set_channel(std::move(channel));
  auto ctx = std::make_unique<PtraceContext>(pid, as);
  auto stack_range = as->LearnLayout(pid);
  if (!stack_range.ok()) return stack_range.status();
  if (stack_range->second > stack_range->first) {
    // The host gave the stub a stack; the guest gets its own, so drop it.
    auto r = ctx->StubSyscall(SYS_munmap, stack_range->first,
                              stack_range->second - stack_range->first);
    if (!r.ok() || *r != 0) return absl::InternalError("cannot unmap the stub's stack");
  }
  return std::unique_ptr<Context>(std::move(ctx));
}

absl::StatusOr<std::unique_ptr<Context>> PtracePlatform::Attach(
    int handle, std::shared_ptr<AddressSpace> as) {
  SENTRY_RETURN_IF_ERROR(SeizeStopped(handle));
  std::shared_ptr<StubAddressSpace> pas;
  if (as == nullptr) {
    SENTRY_ASSIGN_OR_RETURN(pas, StubAddressSpace::ForForkedStub(handle));
  } else {
    pas = std::static_pointer_cast<StubAddressSpace>(as);
    pas->AddMember(handle);
  }
  return std::unique_ptr<Context>(std::make_unique<PtraceContext>(handle, pas));
}

void PtracePlatform::Discard(int handle) { kill(handle, SIGKILL); }

// ---------------------------------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<Platform>> NewPlatform(const std::string& name) {
  if (name != "ptrace" && name != "seccomp") {
    return absl::InvalidArgumentError("unknown platform \"" + name +
                                      "\" (available: seccomp, ptrace)");
  }
  SENTRY_ASSIGN_OR_RETURN(int fd, OpenStubExecutable());
  SENTRY_RETURN_IF_ERROR(StartReaper());
  // Before the Sentry's own allowlist is installed, which no stub may inherit.
  SENTRY_RETURN_IF_ERROR(CpuPlacement::Init());
  SENTRY_RETURN_IF_ERROR(StartStubFactory(fd));
  if (name == "seccomp") return NewSeccompPlatform(fd);
  return std::unique_ptr<Platform>(std::make_unique<PtracePlatform>(fd));
}

absl::Status AwaitPlatformStarted() { return AwaitStubFactory(); }

}  // namespace sentry::platform
