// What both stub-based platforms (ptrace and seccomp) share: starting a stub process, seizing
// it, injecting host syscalls into it at the stub's fixed code addresses, and the address
// space those stubs hold.
//
// This directory is one of the few places with raw ptrace and process_vm_* calls.
#pragma once

#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <array>
#include <atomic>
#include <ctime>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "platform/platform.h"
#include "platform/stub/fd_channel.h"

namespace sentry::platform {

// Waits for the next state change of traced `tid`; returns the wait status, -1 if it is gone.
// With `nohang`, returns kNoChange when nothing changed.
inline constexpr int kNoChange = -2;
int WaitFor(int tid, bool nohang = false);
// Whether a WaitFor status means the stub no longer exists.
inline bool IsDeath(int status) {
  return status == -1 || (status >= 0 && (WIFEXITED(status) || WIFSIGNALED(status)));
}

// SIGKILLs stub `tid` and reaps it on a background thread, so the caller does not wait while
// the host tears the process down (~100-200 us for a forked address space here). The pid
// stays taken until it is reaped, so nothing else is ever signalled by mistake.
void KillAndReapLater(int tid);
// Starts the thread behind KillAndReapLater (at start-up, while the host still gives threads).
absl::Status StartReaper();
// Waits, for at most `timeout`, until every stub KillAndReapLater killed is reaped: a pids
// cgroup counts a killed stub until then. Returns whether there were any.
bool AwaitReaped(absl::Duration timeout = absl::Milliseconds(200));

// Injects clone(`flags`) at kStubClone into `inj`: a new stub (see stub.S). A host EAGAIN is
// retried once after the stubs being reaped are gone. Returns the new stub's pid or the
// host errno.
Result<int> CloneStub(StubInjector& inj, uint64_t flags);

// Seizes a stub that stopped itself (or is about to) and waits for that stop.
absl::Status SeizeStopped(int tid);

// Starts a fresh stub from the executable `stub_fd` (or, once StartStubFactory ran, forks
// the stub factory: stub_factory.h); it is seized and stopped on return. With `channel_fd`
// >= 0 the stub holds a copy of it at kStubChannelFd (see FdChannel); it holds no other fd,
// no capability in any namespace, an empty environment, and has NO_NEW_PRIVS set.
absl::StatusOr<int> SpawnStub(int stub_fd, int channel_fd = -1);

// A stopped stub thread that runs host syscalls on the Sentry's behalf.
class StubInjector {
 public:
  virtual ~StubInjector() = default;
  // Runs host syscall `nr` in the stub (at `entry`, see stub.S); returns its raw result
  // (-errno on failure). Fails only if the stub died.
  virtual Result<int64_t> StubSyscall(uint64_t nr, uint64_t a0 = 0, uint64_t a1 = 0,
                                      uint64_t a2 = 0, uint64_t a3 = 0, uint64_t a4 = 0,
                                      uint64_t a5 = 0, uint64_t entry = Layout::kStubInject) = 0;
  // Installs a copy of the Sentry's `host_fd` in the injector's fd table and returns its
  // number there (closed again with DeferClose). EOPNOTSUPP if this stub cannot.
  virtual Result<int> LendFd(int /*host_fd*/) { return Errno(EOPNOTSUPP); }

  // Closes `fd` of the injector's fd table with the next injected call (stub.S's
  // close_inject, or the next batch's first entry) instead of an injection of its own: an fd
  // the Sentry is done with (a file lent before, a seccomp listener's stub-side copy) is of
  // no use to the stub meanwhile, whose guest code has every syscall trapped. A clone of the
  // stub closes it first, so no new stub inherits it. One fd waits at a time: a second one
  // closes both now.
  void DeferClose(int fd) {
    int before = std::exchange(deferred_close_, fd);
    if (before >= 0) (void)StubSyscall(SYS_close, static_cast<uint64_t>(before));
  }
  // The fd DeferClose left for the next injection, now taken by it; -1 if none.
  int TakeDeferredClose() { return std::exchange(deferred_close_, -1); }

  // The file most recently lent for a mapping stays in the injector's fd table until another
  // one is lent: a program and each library are mapped segment by segment from one file, and
  // each lend and close is an injection. The fd is of no use to guest code, whose every
  // syscall is trapped. Owned by the task thread that drives this injector.
  struct LentFile {
    dev_t dev = 0;
    ino_t ino = 0;
    struct timespec ctime {};  // with dev and ino: no other file, even one reusing the inode
    int remote = -1;           // fd number in the injector, -1 if none
  };
  LentFile lent_file;

 private:
  int deferred_close_ = -1;
};

// Injects one syscall into stopped, seized `tid`. A stop that is not the injection's own
// (e.g. an Interrupt's SIGSTOP) sets *interrupted. Returns ESRCH once the stub is gone.
// With `close_first` >= 0, that fd is closed in the stub before (StubInjector::DeferClose):
// in the same injection at kStubInject, by one of its own before any other entry.
Result<int64_t> InjectSyscall(int tid, const uint64_t (&args)[7], uint64_t entry, bool* interrupted,
                              int close_first = -1);

// One guest address space held by stub processes that share it (CLONE_VM). The Sentry keeps
// the VMA list; this applies it to the host. `via` contexts must implement StubInjector.
class StubAddressSpace final : public AddressSpace {
 public:
  explicit StubAddressSpace(int pid) { members_.push_back(pid); }

  // Reads the host mappings the stub brought with it; returns the stack range to unmap
  // (empty when the stack is where guest mappings never go).
  absl::StatusOr<std::pair<uint64_t, uint64_t>> LearnLayout(int pid);
  // LearnLayout's first reading, from /proc/PID/maps.
  absl::StatusOr<std::pair<uint64_t, uint64_t>> ReadLayout(int pid);
  // A forked address space has its parent's layout; no need to read /proc/PID/maps.
  // Its stubs hold the parent's fd channel too, since the host copied the fd table.
  void CopyLayout(const StubAddressSpace& parent) {
    reserved_ = parent.reserved_;
    vdso_base_ = parent.vdso_base_;
    channel_ = parent.channel_;
  }
  // The channel whose stub end this address space's stubs hold (set before sharing).
  void set_channel(std::shared_ptr<FdChannel> channel) { channel_ = std::move(channel); }
  // StubInjector::LendFd over the channel, for stubs that have no other way to receive an
  // fd. EOPNOTSUPP without a channel.
  Result<int> LendFd(StubInjector& via, int host_fd);
  // `host_fd`'s number in the injector's fd table: the one lent before if it is the same
  // file (StubInjector::lent_file), else a fresh lend.
  Result<int> Lend(StubInjector& inj, int host_fd);

  // Batching, for an address space that no guest code has run in yet and that no other
  // thread uses (an execve's new one, until its point of no return): from BeginBatch on, the
  // host calls whose result is known in advance (mmap with MAP_FIXED, munmap, mprotect) and
  // the close of a file lent before are queued, and run together in one injection (stub.S's
  // batch_entry) at EndBatch, or before an injected call other than a lend (which needs
  // only the fd table and the scratch page, which the queue never changes) and before a read
  // of memory the queue changes. A write to such memory (the zeroed tail of a segment, the
  // new stack) is held back and made after the queue has run, in order; a queued call that
  // would change its range runs the queue first.
  // An execve's load is then one injection plus one per file lent. The queue sits in the
  // scratch page, which guest code could rewrite: hence no batch once the guest runs.
  void BeginBatch(Context& via) override;
  // Runs what is queued and ends the batch: the errno of the first queued call that failed
  // (the calls after it did not run), ESRCH if the stub died.
  Result<void> EndBatch() override;
  // The address space of a stub that ForkAddressSpace created as `handle`: its parent's
  // layout if it was noted, else read from the host.
  static absl::StatusOr<std::shared_ptr<StubAddressSpace>> ForForkedStub(int handle);
  // Notes `parent` as the address space forked into stub `handle`.
  static void NoteFork(int handle, std::shared_ptr<StubAddressSpace> parent);

  void AddMember(int tid);
  void RemoveMember(int tid);
  // How many live stubs share this address space (the seccomp platform's injector included).
  size_t MemberCount();

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
  int AnyMember();
  // Runs host call `nr` in the stub, or queues it while batching if its result is known.
  Result<uint64_t> Host(StubInjector& via, uint64_t nr, uint64_t a0, uint64_t a1 = 0,
                        uint64_t a2 = 0, uint64_t a3 = 0, uint64_t a4 = 0, uint64_t a5 = 0);
  // Runs the queued calls (a no-op when none are), then the writes held back; a failure is
  // kept for EndBatch too.
  Result<void> FlushBatch();
  // FlushBatch's injection, for a non-empty queue.
  Result<void> RunBatch();
  // Whether [addr, addr+len) meets a queued call's range or a held-back write.
  bool BatchTouches(uint64_t addr, uint64_t len) const;
  // Whether [addr, addr+len) meets a held-back write.
  bool HeldWriteIn(uint64_t addr, uint64_t len) const;
  size_t WriteRaw(GuestAddr addr, std::span<const uint8_t> src);

  // Batching state: only the thread that called BeginBatch touches it.
  StubInjector* batch_via_ = nullptr;
  std::vector<std::array<uint64_t, 8>> batch_;
  static constexpr size_t kBatchCapacity =
      Layout::kStubBatchTableSize / sizeof(std::array<uint64_t, 8>);
  // Writes to memory the queue changes, held back until it has run (WriteMemory).
  struct BatchWrite {
    uint64_t addr;
    std::vector<uint8_t> data;
  };
  std::vector<BatchWrite> batch_writes_;
  int batch_errno_ = 0;

  absl::Mutex mu_;
  std::vector<int> members_ ABSL_GUARDED_BY(mu_);  // live stub tids sharing this mm
  std::vector<std::pair<uint64_t, uint64_t>> reserved_;  // set once, before sharing
  uint64_t vdso_base_ = 0;
  std::shared_ptr<FdChannel> channel_;  // set once, before sharing; may be null
};

// Opens the sentry-stub executable next to the running binary (or $SENTRY_STUB), once: later
// calls return the same fd, so that the Sentry can open it before its pivot_root into an
// empty root (runtime-shim/namespaces.h) and start the platform after.
absl::StatusOr<int> OpenStubExecutable();

// A directory fd of a procfs that shows the Sentry's own PID namespace, or -1 (the default:
// "/proc" by path). ReadLayout reads the stub factory's maps through it when the Sentry has
// no /proc in its root any more; set before the platform starts, closed by the caller after.
void SetProcDirForLayout(int dir_fd);

}  // namespace sentry::platform
