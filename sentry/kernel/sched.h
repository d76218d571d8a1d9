// Scheduling state of guest threads (policy, priority, nice, affinity, I/O priority) and the
// CPUs of the sandbox. The Sentry places guest threads on host CPUs itself; what a guest sets
// here is recorded and reported back (sched_get*, getpriority, /proc), as Linux would.
#pragma once

#include <bitset>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace sentry::kernel {

// Bit i is CPU i, as Linux's cpumask.
inline constexpr int kMaxCpus = 1024;
using CpuSet = std::bitset<kMaxCpus>;

struct SandboxCpus {
  CpuSet online;               // the CPUs the sandbox runs on: the Sentry's affinity at start
  int nr_cpu_ids = 1;          // the host's possible CPUs (ids 0 .. nr_cpu_ids-1)
  size_t mask_bytes = 8;       // the host kernel's cpumask size, what sched_getaffinity returns
  uint64_t fair_slice_ns = 0;  // sched_getattr's sched_runtime of a fair task, the host's
  int64_t rr_timeslice_ns = 100'000'000;  // SCHED_RR's sched_rr_get_interval
  // sched_rr_get_interval of a fair task, the host's answer at start-up (whole jiffies, so
  // 0 when the slice is under one). Captured once: the Sentry's allowlist has no
  // sched_rr_get_interval (runtime-shim/confine.cc).
  int64_t fair_interval_ns = 0;
  bool sched_ext = false;  // the host knows SCHED_EXT (7): a valid, fair-like policy then
  int count() const { return static_cast<int>(online.count()); }
};

// Captured once, at the first call (the Kernel's constructor calls it before any Sentry
// thread is pinned to a core).
const SandboxCpus& Cpus();

// Linux's list format: "0-1,4".
std::string CpuList(const CpuSet& s);
// Linux's mask format for `nbits` bits: hex words of 32 bits, comma separated, high first.
std::string CpuMaskHex(const CpuSet& s, int nbits);
// Little-endian bytes, as the syscalls copy masks.
void CpuSetToBytes(const CpuSet& s, std::span<uint8_t> out);
CpuSet CpuSetFromBytes(std::span<const uint8_t> in);

// Linux's scheduling policies and ioprio classes.
inline constexpr int kSchedOther = 0, kSchedFifo = 1, kSchedRr = 2, kSchedBatch = 3, kSchedIdle = 5,
                     kSchedDeadline = 6, kSchedExt = 7;
inline constexpr int kIoprioClassShift = 13;

struct SchedState {
  int policy = kSchedOther;
  bool reset_on_fork = false;
  int rt_priority = 0;    // 1..99 under SCHED_FIFO / SCHED_RR, else 0
  int nice = 0;           // -20..19
  uint64_t slice_ns = 0;  // fair policies: sched_attr.sched_runtime (0: the default)
  uint64_t dl_runtime = 0, dl_deadline = 0, dl_period = 0;
  CpuSet affinity;
  int ioprio = -1;  // -1: no I/O context yet

  bool rt() const { return policy == kSchedFifo || policy == kSchedRr; }
  bool fair() const {
    return policy == kSchedOther || policy == kSchedBatch || policy == kSchedIdle ||
           policy == kSchedExt;
  }
  // What a clone child starts with (SCHED_RESET_ON_FORK, the I/O context copy rule).
  SchedState ForChild() const;
  // ioprio_get's answer for this thread: what was set (0 without an I/O context).
  int EffectiveIoprio() const;
  // /proc/PID/stat's priority field.
  int ProcPriority() const { return rt() ? -1 - rt_priority : 20 + nice; }
};

// The default state of the first guest thread.
SchedState InitialSchedState();

}  // namespace sentry::kernel
