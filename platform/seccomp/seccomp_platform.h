// The seccomp platform (the default): guest syscalls reach the Sentry as seccomp user
// notifications instead of ptrace stops, which costs one wake-up each way instead of a full
// ptrace stop, GETREGS, SETREGS and resume.
//
// Each guest thread is two host processes sharing the guest address space (CLONE_VM):
//  - the guest stub runs guest code under a filter that sends every syscall to SECCOMP_RET_
//    USER_NOTIF (platform/stub/stub.S, Layout::kStubFilter), on a listener of its own;
//  - the injector stub never runs guest code and has no filter: it stays in a ptrace stop and
//    runs the host syscalls the Sentry injects to change the address space (mmap, munmap,
//    mprotect, ...) and to create the stubs of new threads and forks (a filtered process
//    could not, since a process may only ever have one listener in its filter chain and the
//    children of the guest stub would inherit its filter).
// Both are traced by the Sentry thread that runs the guest thread. The guest stub is still
// ptraced: for the syscalls that must edit registers (execve, clone, rt_sigreturn, signal
// delivery, ...) the Sentry stops it with PTRACE_INTERRUPT, which cancels the pending
// notification, and then reads and writes its registers as the ptrace platform does; faults
// arrive as ptrace signal-delivery stops. No guest syscall ever runs on the host.
#pragma once

#include <linux/seccomp.h>

#include <atomic>
#include <memory>

#include "platform/platform.h"
#include "platform/stub/cpu_placement.h"
#include "platform/stub/stub_control.h"

namespace sentry::platform {

class SeccompContext final : public Context, public StubInjector {
 public:
  SeccompContext(int injector, int guest, int listener, int pidfd,
                 std::shared_ptr<StubAddressSpace> as);
  ~SeccompContext() override;

  Trap Switch(Registers& regs) override;
  Result<void> SyncRegisters(Registers& regs) override;
  void Interrupt() override;
  Result<std::vector<uint8_t>> GetFpState() override;
  Result<void> SetFpState(std::span<const uint8_t> state) override;
  Result<int> CloneThread() override;
  Result<int> ForkAddressSpace() override;
  std::shared_ptr<AddressSpace> address_space() override;
  void Kill() override;
  void OnHostDeath(std::function<void()> fn) override;
  Result<void> HostRseq(uint64_t area, uint32_t len, int flags, uint32_t sig) override;
  int host_tid() const override { return guest_; }
  // The injector's time is the guest's too: it runs the guest's mmap, munmap, mprotect, ...
  std::vector<int> cpu_pids() const override { return {guest_, injector_}; }

  // Runs in the injector stub.
  Result<int64_t> StubSyscall(uint64_t nr, uint64_t a0 = 0, uint64_t a1 = 0, uint64_t a2 = 0,
                              uint64_t a3 = 0, uint64_t a4 = 0, uint64_t a5 = 0,
                              uint64_t entry = Layout::kStubInject) override;
  Result<int> LendFd(int host_fd) override;

 private:
  // Answers the pending notification with `rax` as the syscall's result, or, if
  // continue_pending_, lets the host run it.
  bool Respond(uint64_t rax);
  // Runs host syscall `call` (nr, then the arguments) in the guest stub itself, which must be
  // in a ptrace stop: its filter makes it a notification, answered with CONTINUE. Returns the
  // host's result.
  Result<int64_t> SyscallInGuestStub(const uint64_t (&call)[7]);
  // Takes the guest stub from a pending notification to a ptrace stop (cancelling the
  // notification); its full registers are then in host_regs_.
  bool StopForRegisters();
  // Copies host_regs_ into `regs`, keeping the kernel's rax, rip and orig_rax.
  void MergeHostRegisters(Registers& regs);
  // Waits for the guest stub's next notification, fault, interrupt or death.
  Trap Wait(Registers& regs);
  // Holds notification `req` and presents it as the guest's syscall.
  Trap TakeNotification(const struct seccomp_notif& req, Registers& regs);
  // Turns a ptrace stop (or death) of the guest stub into a Trap.
  Trap Stopped(int status, Registers& regs);
  Trap Dead();

  const int injector_;
  const int guest_;
  const int listener_;  // the guest stub's seccomp notification fd
  const int pidfd_;     // the guest stub's pidfd: readable once it is dead
  const int wake_fd_;   // an eventfd Interrupt() writes to wake Wait() when slot_ < 0
  std::shared_ptr<StubAddressSpace> as_;

  bool dead_ = false;
  bool killed_ = false;
  bool guest_reaped_ = false;  // its exit was collected: the tid must not be signalled again
  bool in_notif_ = false;    // the guest stub waits in a notification we hold (notif_id_)
  bool stopped_ = false;     // the guest stub is in a ptrace stop
  bool merge_pending_ = false;  // host_regs_ are newer than the kernel's registers
  CpuPlacement placement_;  // the guest stub, the injector and the task thread
  uint64_t notif_id_ = 0;
  uint64_t notif_nr_ = 0;
  uint64_t notif_rip_ = 0;
  uint64_t notif_args_[6] = {};
  // HostRseq asked that the pending notification run on the host: answered with CONTINUE by
  // Switch, or, if a stop cancels it first, injected by StopForRegisters (continue_call_).
  bool continue_pending_ = false;
  uint64_t continue_call_[7] = {};
  Registers host_regs_{};
  // This context's slot in the table of waiters that kicks reach (seccomp_platform.cc), or
  // -1 if the table was full: Wait() then polls the fds above instead.
  const int slot_;

  // Interrupt() protocol as in the ptrace platform: Switch sets running_ then checks
  // interrupt_; Interrupt sets interrupt_ then checks running_ (and then wakes Wait()).
  std::atomic<bool> running_{false};
  std::atomic<bool> interrupt_{false};
};

class SeccompPlatform final : public Platform {
 public:
  explicit SeccompPlatform(int stub_fd) : stub_fd_(stub_fd) {}
  const char* name() const override { return "seccomp"; }
  // The guest stub, its injector and the Sentry thread.
  int host_tasks_per_task() const override { return 3; }
  absl::StatusOr<std::unique_ptr<Context>> NewAddressSpace() override;
  absl::StatusOr<std::unique_ptr<Context>> Attach(int handle,
                                                  std::shared_ptr<AddressSpace> as) override;
  void Discard(int handle) override;

 private:
  int stub_fd_;
};

}  // namespace sentry::platform
