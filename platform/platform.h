// The platform runs guest code until it traps and reports why. Everything above this
// interface (the kernel, syscalls, memory management) is the same for every platform.
//
// Threading: a Context is driven by exactly one host thread, the one that created or attached
// it (ptrace makes that thread the tracer). Interrupt() may be called from any thread.
#pragma once

#include <sys/user.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sentry/abi/linux.h"
#include "sentry/base/errno.h"
#include "sentry/base/guest_addr.h"

namespace sentry::platform {

using Registers = user_regs_struct;

// The guest address-space layout the platform reserves for itself.
struct Layout {
  static constexpr uint64_t kStubBase = 0x7fc000000000;  // stub code, see stub/stub.S
  static constexpr uint64_t kStubSize = 0x2000;          // the code page and the scratch page
  static constexpr uint64_t kStubInject = kStubBase + 0x100;
  static constexpr uint64_t kStubClone = kStubBase + 0x200;
  static constexpr uint64_t kStubBatch = kStubBase + 0x280;  // a table of host syscalls
  static constexpr uint64_t kStubFork = kStubBase + 0x600;   // the stub factory's fork
  static constexpr uint64_t kStubGuestClone = kStubBase + 0x680;  // a seccomp guest stub
  static constexpr uint64_t kStubCloseInject = kStubBase + 0x700;  // close(r12), then inject
  static constexpr uint64_t kStubFilter = kStubBase + 0x380;  // the seccomp platform's filter
  // A writable page for the arguments of injected syscalls. Guest code can write it too, so
  // what the Sentry reads back from it is validated like any guest memory.
  static constexpr uint64_t kStubScratch = kStubBase + 0x1000;
  static constexpr uint64_t kStubScratchSize = 0x1000;
  // Where a batch's table goes (StubAddressSpace::BeginBatch): the scratch page's upper part,
  // above what an fd's lending uses.
  static constexpr uint64_t kStubBatchTable = kStubScratch + 0x400;
  static constexpr uint64_t kStubBatchTableSize = kStubScratchSize - 0x400;
  // Guest mappings stay below this; the host places the vDSO and vvar above it.
  static constexpr uint64_t kGuestTop = 0x7ef000000000;
  static constexpr uint64_t kGuestBottom = 0x10000;  // mmap_min_addr
};

struct Trap {
  enum class Kind {
    kSyscall,      // the guest made a syscall; regs.orig_rax is its number
    kSignal,       // a synchronous fault or trap (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP)
    kInterrupted,  // Interrupt() was called, or a host signal asked the guest to stop
    kDead,         // the stub is gone (killed from outside); the guest thread cannot go on
  };
  Kind kind = Kind::kSyscall;
  abi::SigInfo info{};  // for kSignal
};

class Context;

// One guest address space (mm). The Sentry keeps the VMA list; this applies it to the host.
class AddressSpace {
 public:
  virtual ~AddressSpace() = default;

  // The only doorway to guest memory. Both return the bytes copied, which is less than asked
  // when the guest range is not (or not writably) mapped.
  virtual size_t ReadMemory(GuestAddr addr, std::span<uint8_t> dst) = 0;
  virtual size_t WriteMemory(GuestAddr addr, std::span<const uint8_t> src) = 0;

  // Address-space changes, carried out by `via`, a context of this address space driven by
  // the calling thread. They return the host result or the host errno.
  virtual Result<uint64_t> Map(Context& via, GuestAddr addr, uint64_t len, int prot, int flags,
                               int host_fd, uint64_t offset) = 0;
  virtual Result<void> Unmap(Context& via, GuestAddr addr, uint64_t len) = 0;
  virtual Result<void> Protect(Context& via, GuestAddr addr, uint64_t len, int prot) = 0;
  virtual Result<uint64_t> Remap(Context& via, GuestAddr old_addr, uint64_t old_len,
                                 uint64_t new_len, int flags, GuestAddr new_addr) = 0;
  virtual Result<void> Advise(Context& via, GuestAddr addr, uint64_t len, int advice) = 0;
  // A batch of changes made through `via` to an address space that no guest code has run in
  // and that no other thread uses yet (an execve's new one): a platform may hold back the
  // changes whose result it knows (MAP_FIXED mappings, unmaps, protection changes) and carry
  // them out together, before any read or write of the memory and at EndBatch, which
  // returns the first failure. By default each change is carried out at once.
  virtual void BeginBatch(Context& /*via*/) {}
  virtual Result<void> EndBatch() { return Ok(); }

  // Address ranges of the host's own mappings (stub code, vDSO, vvar) that guests must not
  // map over, and where the vDSO is, for AT_SYSINFO_EHDR.
  virtual const std::vector<std::pair<uint64_t, uint64_t>>& Reserved() const = 0;
  virtual uint64_t VdsoBase() const = 0;
};

class Context {
 public:
  virtual ~Context() = default;

  // Runs the guest with `regs` until it traps; `regs` then holds the guest's registers.
  // After a kSyscall trap a platform may fill in only orig_rax, the six arguments, rip and
  // rax (seccomp user notifications carry no more); the rest is then stale until
  // SyncRegisters. Switch resumes from such a trap with the kernel's rax, rip and orig_rax.
  virtual Trap Switch(Registers& regs) = 0;
  // Completes `regs` after a kSyscall trap that filled in only part of them, keeping the
  // kernel's rax, rip and orig_rax. The kernel calls it before it reads or writes any other
  // register (signal frames). Fails only if the guest thread is gone.
  virtual Result<void> SyncRegisters(Registers& /*regs*/) { return Ok(); }
  // Makes a running Switch() return kInterrupted soon. Thread-safe; may be called while the
  // guest is not running, in which case the next Switch() returns kInterrupted at once.
  virtual void Interrupt() = 0;

  // The x86 extended state (xsave layout, as NT_X86_XSTATE), for signal frames.
  virtual Result<std::vector<uint8_t>> GetFpState() = 0;
  virtual Result<void> SetFpState(std::span<const uint8_t> state) = 0;

  // Creates a new host thread of execution in this address space (for a guest thread) or a
  // copy-on-write copy of the address space (for a guest fork). The result is a handle the
  // new guest thread's host thread passes to Platform::Attach.
  virtual Result<int> CloneThread() = 0;
  virtual Result<int> ForkAddressSpace() = 0;

  virtual std::shared_ptr<AddressSpace> address_space() = 0;
  // Kills the host side of this context; the next Switch() returns kDead.
  virtual void Kill() = 0;
  // Calls `fn` (on a platform thread, soon) when the host side of this context dies from
  // outside (a stub killed on the host) while the guest thread is not running, so that a
  // task blocked in the kernel learns of it. Never called once the context is destroyed:
  // destroy it without holding any lock `fn` takes. Platforms that cannot tell ignore it.
  virtual void OnHostDeath(std::function<void()> fn) { (void)fn; }
  // Registers `area` (or, with RSEQ_FLAG_UNREGISTER in `flags`, drops it) as this guest
  // thread's rseq(2) area with the host kernel, on the host thread that runs the guest's code:
  // only the host kernel can keep its CPU fields current and move the thread out of a
  // critical section when the host preempts or migrates it. The caller has checked the call
  // against Linux's rules. If it is the guest's pending syscall with these arguments, that
  // very syscall may be what runs on the host, its result (0, as checked) reaching the guest.
  virtual Result<void> HostRseq(uint64_t area, uint32_t len, int flags, uint32_t sig) {
    (void)area, (void)len, (void)flags, (void)sig;
    return Errno(ENOSYS);
  }
  virtual int host_tid() const = 0;
  // The host processes that run this guest thread (the stub, and whatever runs host syscalls
  // on its behalf): their CPU time is the guest thread's. Each is a whole host process, so
  // its process CPU clock is read. Read the clocks before Kill(): a reaped process has none.
  virtual std::vector<int> cpu_pids() const { return {host_tid()}; }
};

class Platform {
 public:
  virtual ~Platform() = default;
  virtual const char* name() const = 0;
  // The host tasks (processes and threads, as a pids cgroup counts them) one guest task
  // holds: its stub process(es) and the Sentry thread that runs it.
  virtual int host_tasks_per_task() const = 0;

  // A fresh, empty address space with one context in it, driven by the calling thread.
  virtual absl::StatusOr<std::unique_ptr<Context>> NewAddressSpace() = 0;
  // Takes over a handle from CloneThread (same address space `as`) or ForkAddressSpace
  // (as == nullptr: a new one). Must be called on the thread that will drive the context.
  virtual absl::StatusOr<std::unique_ptr<Context>> Attach(
      int handle, std::shared_ptr<AddressSpace> as) = 0;
  // Discards a handle that will never be attached.
  virtual void Discard(int handle) = 0;
};

// Creates a platform by name ("seccomp", "ptrace"); an error names the platforms there are.
// Part of its start (the stub factory) goes on in the background: AwaitPlatformStarted.
absl::StatusOr<std::unique_ptr<Platform>> NewPlatform(const std::string& name);
// Waits for the background part of NewPlatform's start; its error if that failed. Before
// the Sentry's allowlist is installed and the host's /proc closed (stub_factory.h).
absl::Status AwaitPlatformStarted();
// The seccomp platform over the stub executable `stub_fd` (platform/seccomp).
absl::StatusOr<std::unique_ptr<Platform>> NewSeccompPlatform(int stub_fd);

}  // namespace sentry::platform
