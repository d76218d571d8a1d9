// The ptrace platform: each guest thread is a stub process (sharing its address space with
// the other threads of its guest process through CLONE_VM), traced by the Sentry thread that
// runs that guest thread. Guest syscalls stop in PTRACE_SYSEMU and never run on the host;
// address-space changes are host syscalls injected into the stub at fixed code addresses.
//
// This directory is one of the few places with raw ptrace and process_vm_* calls.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "platform/platform.h"
#include "platform/stub/cpu_placement.h"
#include "platform/stub/stub_control.h"

namespace sentry::platform {

class PtraceContext final : public Context, public StubInjector {
 public:
  PtraceContext(int tid, std::shared_ptr<StubAddressSpace> as);
  ~PtraceContext() override;

  Trap Switch(Registers& regs) override;
  void Interrupt() override;
  Result<std::vector<uint8_t>> GetFpState() override;
  Result<void> SetFpState(std::span<const uint8_t> state) override;
  Result<int> CloneThread() override;
  Result<int> ForkAddressSpace() override;
  std::shared_ptr<AddressSpace> address_space() override;
  void Kill() override;
  void OnHostDeath(std::function<void()> fn) override;
  Result<void> HostRseq(uint64_t area, uint32_t len, int flags, uint32_t sig) override;
  int host_tid() const override { return tid_; }

  Result<int64_t> StubSyscall(uint64_t nr, uint64_t a0 = 0, uint64_t a1 = 0, uint64_t a2 = 0,
                              uint64_t a3 = 0, uint64_t a4 = 0, uint64_t a5 = 0,
                              uint64_t entry = Layout::kStubInject) override;
  // Over the address space's fd channel: a ptrace stub has no seccomp listener for ADDFD.
  Result<int> LendFd(int host_fd) override;

 private:
  // Resumes the stub with `request` and waits for its next stop. Returns the wait status, or
  // -1 if the stub is gone.
  int ResumeAndWait(int request);

  const int tid_;
  std::shared_ptr<StubAddressSpace> as_;
  bool dead_ = false;
  // Interrupt() protocol: Switch sets running_ then checks interrupt_; Interrupt sets
  // interrupt_ then checks running_. Sequentially consistent, so one of them sees the other.
  std::atomic<bool> running_{false};
  std::atomic<bool> interrupt_{false};
  CpuPlacement placement_;  // the stub and its tracer, the task thread
};

class PtracePlatform final : public Platform {
 public:
  // `stub_fd` is an open fd of the sentry-stub executable.
  explicit PtracePlatform(int stub_fd) : stub_fd_(stub_fd) {}
  ~PtracePlatform() override;
  const char* name() const override { return "ptrace"; }
  int host_tasks_per_task() const override { return 2; }  // the stub, the Sentry thread
  absl::StatusOr<std::unique_ptr<Context>> NewAddressSpace() override;
  absl::StatusOr<std::unique_ptr<Context>> Attach(int handle,
                                                  std::shared_ptr<AddressSpace> as) override;
  void Discard(int handle) override;

 private:
  int stub_fd_;
};

}  // namespace sentry::platform
