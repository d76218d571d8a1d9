#include "sentry/kernel/sched.h"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <sstream>
#include <vector>

#include "absl/strings/str_format.h"
#include "sentry/abi/linux.h"
#include "sentry/base/host_files.h"

namespace sentry::kernel {
namespace {

SandboxCpus Capture() {
  SandboxCpus c;
  std::vector<uint8_t> buf(kMaxCpus / 8);
  long n = syscall(SYS_sched_getaffinity, 0, buf.size(), buf.data());
  if (n > 0) {
    c.mask_bytes = static_cast<size_t>(n);
    c.online = CpuSetFromBytes({buf.data(), static_cast<size_t>(n)});
  }
  if (c.online.none()) c.online.set(0);
  // nr_cpu_ids: one past the last possible CPU.
  std::istringstream possible(ReadHostFile("/sys/devices/system/cpu/possible").value_or(""));
  std::string list;
  int last = -1;
  if (possible >> list) {
    size_t cut = list.find_last_of("-,");
    last = atoi(list.substr(cut == std::string::npos ? 0 : cut + 1).c_str());
  }
  for (int i = 0; i < kMaxCpus; i++) {
    if (c.online[i]) last = std::max(last, i);
  }
  c.nr_cpu_ids = std::min(last + 1, kMaxCpus);
  abi::SchedAttr a{};  // the host's view (for the fair slice only)
  if (syscall(SYS_sched_getattr, 0, &a, sizeof(a), 0) == 0 && a.policy == SCHED_OTHER) {
    c.fair_slice_ns = a.runtime;
  }
  c.sched_ext = sched_get_priority_max(kSchedExt) >= 0;
  struct timespec fair {};
  if (sched_rr_get_interval(0, &fair) == 0) {
    c.fair_interval_ns = fair.tv_sec * 1'000'000'000ll + fair.tv_nsec;
  }
  std::istringstream rr(ReadHostFile("/proc/sys/kernel/sched_rr_timeslice_ms").value_or(""));
  int64_t ms;
  if (rr >> ms && ms > 0) c.rr_timeslice_ns = ms * 1'000'000;
  return c;
}

}  // namespace

const SandboxCpus& Cpus() {
  static const SandboxCpus cpus = Capture();
  return cpus;
}

std::string CpuList(const CpuSet& s) {
  std::string out;
  for (int i = 0; i < kMaxCpus;) {
    if (!s[i]) {
      i++;
      continue;
    }
    int j = i;
    while (j + 1 < kMaxCpus && s[j + 1]) j++;
    if (!out.empty()) out += ',';
    out += j == i ? absl::StrFormat("%d", i) : absl::StrFormat("%d-%d", i, j);
    i = j + 1;
  }
  return out;
}

std::string CpuMaskHex(const CpuSet& s, int nbits) {
  int words = std::max(1, (nbits + 31) / 32);
  std::string out;
  for (int w = words - 1; w >= 0; w--) {
    uint32_t v = 0;
    for (int b = 0; b < 32 && w * 32 + b < kMaxCpus; b++) {
      if (s[w * 32 + b]) v |= 1u << b;
    }
    // The top word is as wide as the bits it holds, as Linux's bitmap printing.
    int top_bits = nbits - (words - 1) * 32;
    int digits = w == words - 1 ? std::max(1, (top_bits + 3) / 4) : 8;
    if (!out.empty()) out += ',';
    out += absl::StrFormat("%0*x", digits, v);
  }
  return out;
}

void CpuSetToBytes(const CpuSet& s, std::span<uint8_t> out) {
  for (size_t i = 0; i < out.size(); i++) {
    uint8_t v = 0;
    for (int b = 0; b < 8; b++) {
      size_t bit = i * 8 + b;
      if (bit < kMaxCpus && s[bit]) v |= 1 << b;
    }
    out[i] = v;
  }
}

CpuSet CpuSetFromBytes(std::span<const uint8_t> in) {
  CpuSet s;
  for (size_t i = 0; i < in.size() && i * 8 < kMaxCpus; i++) {
    for (int b = 0; b < 8; b++) {
      if (in[i] & (1 << b)) s.set(i * 8 + b);
    }
  }
  return s;
}

SchedState SchedState::ForChild() const {
  SchedState c = *this;
  if (reset_on_fork) {
    if (rt() || policy == kSchedDeadline) {
      c.policy = kSchedOther;
      c.rt_priority = 0;
      c.dl_runtime = c.dl_deadline = c.dl_period = 0;
    }
    if (c.nice < 0) c.nice = 0;
    c.reset_on_fork = false;
  }
  // A child gets an I/O context only when the parent's names a class.
  if (ioprio < 0 || (ioprio >> kIoprioClassShift) == 0) c.ioprio = -1;
  return c;
}

int SchedState::EffectiveIoprio() const { return ioprio < 0 ? 0 : ioprio; }

SchedState InitialSchedState() {
  SchedState s;
  s.affinity = Cpus().online;
  return s;
}

}  // namespace sentry::kernel
