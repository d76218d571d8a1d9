#include "platform/ptrace/ptrace_platform.h"

#include <elf.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "sentry/base/logging.h"
#include "sentry/base/status.h"

namespace sentry::platform {

// ---------------------------------------------------------------------------------------------
// Address space.

class PtraceAddressSpace final : public AddressSpace {
 public:
  explicit PtraceAddressSpace(int pid) { members_.push_back(pid); }

  // Reads the host mappings the stub brought with it; returns the stack range to unmap.
  absl::StatusOr<std::pair<uint64_t, uint64_t>> LearnLayout(int pid);

  void AddMember(int tid) {
    absl::MutexLock l(&mu_);
    members_.push_back(tid);
  }
  void RemoveMember(int tid) {
    absl::MutexLock l(&mu_);
    std::erase(members_, tid);
  }

  size_t ReadMemory(GuestAddr addr, std::span<uint8_t> dst) override;
  size_t WriteMemory(GuestAddr addr, std::span<const uint8_t> src) override;
  Result<uint64_t> Map(Context& via, GuestAddr addr, uint64_t len, int prot, int flags,
                       int host_fd, uint64_t offset) override;
  Result<void> Unmap(Context& via, GuestAddr addr, uint64_t len) override;
  Result<void> Protect(Context& via, GuestAddr addr, uint64_t len, int prot) override;
  Result<uint64_t> Remap(Context& via, GuestAddr old_addr, uint64_t old_len, uint64_t new_len,
                         int flags, GuestAddr new_addr) override;
  Result<void> Advise(Context& via, GuestAddr addr, uint64_t len, int advice) override;
  const std::vector<std::pair<uint64_t, uint64_t>>& Reserved() const override {
    return reserved_;
  }
  uint64_t VdsoBase() const override { return vdso_base_; }

 private:
  int AnyMember() {
    absl::MutexLock l(&mu_);
    return members_.empty() ? -1 : members_.front();
  }
  // Host result of an injected syscall as a Result: negative values are errnos.
  static Result<uint64_t> Host(Result<int64_t> r) {
    if (!r.ok()) return r.error();
    if (*r < 0 && *r > -4096) return Errno(static_cast<int>(-*r));
    return static_cast<uint64_t>(*r);
  }

  absl::Mutex mu_;
  std::vector<int> members_ ABSL_GUARDED_BY(mu_);  // live stub tids sharing this mm
  std::vector<std::pair<uint64_t, uint64_t>> reserved_;  // set once, before sharing
  uint64_t vdso_base_ = 0;
};

absl::StatusOr<std::pair<uint64_t, uint64_t>> PtraceAddressSpace::LearnLayout(int pid) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  if (!maps) return ErrnoStatus("open /proc/PID/maps of the stub");
  std::pair<uint64_t, uint64_t> stack{0, 0};
  std::string line;
  while (std::getline(maps, line)) {
    uint64_t start, end;
    if (sscanf(line.c_str(), "%lx-%lx", &start, &end) != 2) continue;
    if (line.find("[stack]") != std::string::npos) {
      stack = {start, end};
      continue;
    }
    if (line.find("[vsyscall]") != std::string::npos) continue;
    if (line.find("[vdso]") != std::string::npos) vdso_base_ = start;
    reserved_.push_back({start, end});  // stub code, vdso, vvar
  }
  return stack;
}

size_t PtraceAddressSpace::ReadMemory(GuestAddr addr, std::span<uint8_t> dst) {
  if (dst.empty()) return 0;
  struct iovec local = {dst.data(), dst.size()};
  struct iovec remote = {reinterpret_cast<void*>(addr.value()), dst.size()};
  ssize_t n = process_vm_readv(AnyMember(), &local, 1, &remote, 1, 0);
  if (n > 0 || dst.size() <= kPageSize) return n < 0 ? 0 : n;
  // process_vm_readv stops at the first bad iovec only: split at page boundaries so a
  // partially mapped range still yields its mapped prefix.
  size_t done = 0;
  while (done < dst.size()) {
    uint64_t a = addr.value() + done;
    size_t chunk = std::min<size_t>(dst.size() - done, kPageSize - (a & (kPageSize - 1)));
    local = {dst.data() + done, chunk};
    remote = {reinterpret_cast<void*>(a), chunk};
    n = process_vm_readv(AnyMember(), &local, 1, &remote, 1, 0);
    if (n <= 0) break;
    done += n;
    if (static_cast<size_t>(n) < chunk) break;
  }
  return done;
}

size_t PtraceAddressSpace::WriteMemory(GuestAddr addr, std::span<const uint8_t> src) {
  if (src.empty()) return 0;
  size_t done = 0;
  while (done < src.size()) {
    struct iovec local = {const_cast<uint8_t*>(src.data()) + done, src.size() - done};
    struct iovec remote = {reinterpret_cast<void*>(addr.value() + done), src.size() - done};
    ssize_t n = process_vm_writev(AnyMember(), &local, 1, &remote, 1, 0);
    if (n <= 0) {
      // Retry page by page to find the writable prefix.
      if (src.size() - done > kPageSize) {
        uint64_t a = addr.value() + done;
        size_t chunk = kPageSize - (a & (kPageSize - 1));
        local = {const_cast<uint8_t*>(src.data()) + done, chunk};
        remote = {reinterpret_cast<void*>(a), chunk};
        n = process_vm_writev(AnyMember(), &local, 1, &remote, 1, 0);
        if (n > 0) {
          done += n;
          continue;
        }
      }
      break;
    }
    done += n;
  }
  return done;
}

Result<uint64_t> PtraceAddressSpace::Map(Context& via, GuestAddr addr, uint64_t len, int prot,
                                         int flags, int host_fd, uint64_t offset) {
  auto& ctx = static_cast<PtraceContext&>(via);
  return Host(ctx.StubSyscall(SYS_mmap, addr.value(), len, prot, flags,
                              static_cast<uint64_t>(host_fd), offset));
}

Result<void> PtraceAddressSpace::Unmap(Context& via, GuestAddr addr, uint64_t len) {
  auto r = Host(static_cast<PtraceContext&>(via).StubSyscall(SYS_munmap, addr.value(), len));
  if (!r.ok()) return r.error();
  return Ok();
}

Result<void> PtraceAddressSpace::Protect(Context& via, GuestAddr addr, uint64_t len, int prot) {
  auto r = Host(
      static_cast<PtraceContext&>(via).StubSyscall(SYS_mprotect, addr.value(), len, prot));
  if (!r.ok()) return r.error();
  return Ok();
}

Result<uint64_t> PtraceAddressSpace::Remap(Context& via, GuestAddr old_addr, uint64_t old_len,
                                           uint64_t new_len, int flags, GuestAddr new_addr) {
  return Host(static_cast<PtraceContext&>(via).StubSyscall(
      SYS_mremap, old_addr.value(), old_len, new_len, flags, new_addr.value()));
}

Result<void> PtraceAddressSpace::Advise(Context& via, GuestAddr addr, uint64_t len,
                                        int advice) {
  auto r = Host(
      static_cast<PtraceContext&>(via).StubSyscall(SYS_madvise, addr.value(), len, advice));
  if (!r.ok()) return r.error();
  return Ok();
}

// ---------------------------------------------------------------------------------------------
// Context.

namespace {

constexpr long kSeizeOptions = PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL;

// Waits for the next state change of `tid`; returns the wait status, -1 if it is gone.
int WaitFor(int tid) {
  int status;
  for (;;) {
    pid_t r = waitpid(tid, &status, __WALL);
    if (r == tid) return status;
    if (r < 0 && errno == EINTR) continue;
    return -1;
  }
}

bool IsDeath(int status) { return status == -1 || WIFEXITED(status) || WIFSIGNALED(status); }

// Seizes a stub that stopped itself (or is about to) and waits for that stop.
absl::Status SeizeStopped(int tid) {
  if (ptrace(PTRACE_SEIZE, tid, 0, kSeizeOptions) != 0) return ErrnoStatus("ptrace(SEIZE)");
  int status = WaitFor(tid);
  if (IsDeath(status)) return absl::InternalError("stub died before it could be attached");
  return absl::OkStatus();
}

}  // namespace

PtraceContext::PtraceContext(int tid, std::shared_ptr<PtraceAddressSpace> as)
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
  Registers regs;
  if (ptrace(PTRACE_GETREGS, tid_, 0, &regs) != 0) return Errno(ESRCH);
  regs.rip = entry;
  regs.rax = nr;
  regs.orig_rax = ~0ull;  // not inside a syscall: no restart handling by the host
  regs.rdi = a0;
  regs.rsi = a1;
  regs.rdx = a2;
  regs.r10 = a3;
  regs.r8 = a4;
  regs.r9 = a5;
  if (ptrace(PTRACE_SETREGS, tid_, 0, &regs) != 0) return Errno(ESRCH);
  for (;;) {
    int status = ResumeAndWait(PTRACE_CONT);
    if (IsDeath(status)) {
      dead_ = true;
      return Errno(ESRCH);
    }
    if (WSTOPSIG(status) == SIGTRAP && (status >> 16) == 0) break;
    // Anything else (an Interrupt's SIGSTOP) is remembered and suppressed.
    interrupt_.store(true);
  }
  if (ptrace(PTRACE_GETREGS, tid_, 0, &regs) != 0) return Errno(ESRCH);
  return static_cast<int64_t>(regs.rax);
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
  auto r = StubSyscall(SYS_clone, CLONE_VM | SIGCHLD, 0, 0, 0, 0, 0, Layout::kStubClone);
  if (!r.ok()) return r.error();
  if (*r < 0) return Errno(static_cast<int>(-*r));
  return static_cast<int>(*r);
}

Result<int> PtraceContext::ForkAddressSpace() {
  auto r = StubSyscall(SYS_clone, SIGCHLD, 0, 0, 0, 0, 0, Layout::kStubClone);
  if (!r.ok()) return r.error();
  if (*r < 0) return Errno(static_cast<int>(-*r));
  return static_cast<int>(*r);
}

void PtraceContext::Kill() {
  if (tid_ <= 0) return;
  as_->RemoveMember(tid_);
  if (!dead_) {
    kill(tid_, SIGKILL);
    int status;
    do {
      status = WaitFor(tid_);
    } while (!IsDeath(status));
    dead_ = true;
  }
}

// ---------------------------------------------------------------------------------------------
// Platform.

PtracePlatform::~PtracePlatform() = default;

namespace {

struct SpawnArgs {
  int stub_fd;
};

int SpawnChild(void* arg) {
  // Runs on a private stack in the Sentry's address space (CLONE_VM | CLONE_VFORK): only raw
  // syscalls until execveat replaces the image.
  auto* a = static_cast<SpawnArgs*>(arg);
  int fd = a->stub_fd;
  syscall(SYS_close_range, 0, fd > 0 ? fd - 1 : 0, 0);
  if (fd == 0) syscall(SYS_close_range, 1, ~0u, 0);
  else syscall(SYS_close_range, fd + 1, ~0u, 0);
  char name[] = "sentry-stub";
  char* argv[] = {name, nullptr};
  char* envp[] = {nullptr};
  syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
  syscall(SYS_exit, 127);
  return 127;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Context>> PtracePlatform::NewAddressSpace() {
  static thread_local std::vector<uint8_t> stack(64 * 1024);
  SpawnArgs args{stub_fd_};
  int pid = clone(SpawnChild, stack.data() + stack.size(), CLONE_VM | CLONE_VFORK | SIGCHLD,
                  &args);
  if (pid < 0) return ErrnoStatus("clone (stub)");
  absl::Status st = SeizeStopped(pid);
  if (!st.ok()) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, __WALL);
    return st;
  }
  auto as = std::make_shared<PtraceAddressSpace>(pid);
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
  std::shared_ptr<PtraceAddressSpace> pas;
  if (as == nullptr) {
    pas = std::make_shared<PtraceAddressSpace>(handle);
    auto r = pas->LearnLayout(handle);
    if (!r.ok()) return r.status();
  } else {
    pas = std::static_pointer_cast<PtraceAddressSpace>(as);
    pas->AddMember(handle);
  }
  return std::unique_ptr<Context>(std::make_unique<PtraceContext>(handle, pas));
}

void PtracePlatform::Discard(int handle) { kill(handle, SIGKILL); }

// ---------------------------------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<Platform>> NewPlatform(const std::string& name) {
  if (name != "ptrace") {
    return absl::InvalidArgumentError("unknown platform \"" + name + "\" (available: ptrace)");
  }
  std::string stub = getenv("SENTRY_STUB") ? getenv("SENTRY_STUB") : "";
  if (stub.empty()) {
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n < 0) return ErrnoStatus("readlink /proc/self/exe");
    self[n] = 0;
    std::string dir(self);
    dir = dir.substr(0, dir.rfind('/'));
    stub = dir + "/sentry-stub";
  }
  int fd = open(stub.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("open stub " + stub);
  return std::unique_ptr<Platform>(std::make_unique<PtracePlatform>(fd));
}

}  // namespace sentry::platform
