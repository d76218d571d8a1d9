// Platform stand-ins for the MemoryManager unit tests: an address space that accepts every
// change and maps nothing (only the VMA bookkeeping is under test), and a context nothing
// runs on (NullAddressSpace never looks at the context it is given).
#pragma once

#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "platform/platform.h"

namespace sentry::mm {

class NullAddressSpace final : public platform::AddressSpace {
 public:
  size_t ReadMemory(GuestAddr, std::span<uint8_t>) override { return 0; }
  size_t WriteMemory(GuestAddr, std::span<const uint8_t>) override { return 0; }
  Result<uint64_t> Map(platform::Context&, GuestAddr addr, uint64_t, int, int, int,
                       uint64_t) override {
    return addr.value();
  }
  Result<void> Unmap(platform::Context&, GuestAddr, uint64_t) override { return Ok(); }
  Result<void> Protect(platform::Context&, GuestAddr, uint64_t, int) override { return Ok(); }
  Result<uint64_t> Remap(platform::Context&, GuestAddr, uint64_t, uint64_t, int,
                         GuestAddr new_addr) override {
    return new_addr.value();
  }
  Result<void> Advise(platform::Context&, GuestAddr, uint64_t, int) override { return Ok(); }
  const std::vector<std::pair<uint64_t, uint64_t>>& Reserved() const override { return none_; }
  uint64_t VdsoBase() const override { return 0; }

 private:
  std::vector<std::pair<uint64_t, uint64_t>> none_;
};

class NullContext final : public platform::Context {
 public:
  platform::Trap Switch(platform::Registers&) override { return {}; }
  void Interrupt() override {}
  Result<std::vector<uint8_t>> GetFpState() override { return std::vector<uint8_t>(); }
  Result<void> SetFpState(std::span<const uint8_t>) override { return Ok(); }
  Result<int> CloneThread() override { return Errno(ENOSYS); }
  Result<int> ForkAddressSpace() override { return Errno(ENOSYS); }
  std::shared_ptr<platform::AddressSpace> address_space() override { return nullptr; }
  void Kill() override {}
  int host_tid() const override { return 0; }
};

}  // namespace sentry::mm
