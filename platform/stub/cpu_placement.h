// Keeping the host threads that take turns to run one guest thread on one CPU.
//
// A guest thread's stubs and the Sentry thread that drives them hand the CPU back and forth
// and never run at the same time: on one core each hand-off is a same-core wake-up (~5 us on
// these VMs), across cores 40-50 us. Left alone, the scheduler wakes the Sentry thread on the
// idle core, the worst choice. So the group is pinned together, each group on the core with
// the fewest groups, and the choice is revisited every kRebalanceMs so that busy guests
// spread over the cores. Both platforms use it: seccomp for the guest stub, its injector and
// the task thread; ptrace for the stub and its tracer.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "absl/status/status.h"

namespace sentry::platform {

class CpuPlacement {
 public:
  // Reads the CPUs the Sentry may use. Call once, before any group is placed.
  static absl::Status Init();

  CpuPlacement() = default;
  ~CpuPlacement() { Release(); }
  CpuPlacement(const CpuPlacement&) = delete;
  CpuPlacement& operator=(const CpuPlacement&) = delete;

  // Pins host threads `tids` and the calling thread to one CPU, unless they were placed less
  // than kRebalanceMs ago. A failed pin leaves the placement as it was.
  void Place(std::initializer_list<int> tids);
  // The group is gone: its CPU counts one group fewer.
  void Release();

  // Pins host threads `tids` and the calling thread to `cpu` without counting them as a
  // group: for helpers that run only while a placed thread waits for them (the stub
  // factory). False if `cpu` is not one the Sentry may use or a pin failed.
  static bool PinUncounted(int cpu, std::initializer_list<int> tids);

 private:
  static constexpr int64_t kRebalanceMs = 50;
  int cpu_ = -1;  // where the group is pinned, -1 if nowhere yet
  int64_t placed_at_ms_ = 0;
};

}  // namespace sentry::platform
