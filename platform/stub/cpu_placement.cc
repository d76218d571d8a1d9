#include "platform/stub/cpu_placement.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include <atomic>
#include <string>

namespace sentry::platform {
namespace {

constexpr int kMaxCpus = CPU_SETSIZE;
std::atomic<int> g_groups_on_cpu[kMaxCpus];  // live placed groups per CPU
cpu_set_t g_allowed_cpus;

int64_t CoarseMillis() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

}  // namespace

absl::Status CpuPlacement::Init() {
  if (sched_getaffinity(0, sizeof(g_allowed_cpus), &g_allowed_cpus) != 0) {
    return absl::InternalError(std::string("sched_getaffinity: ") + strerror(errno));
  }
  return absl::OkStatus();
}

void CpuPlacement::Place(std::initializer_list<int> tids) {
  int64_t now = CoarseMillis();
  if (cpu_ >= 0 && now - placed_at_ms_ < kRebalanceMs) return;
  placed_at_ms_ = now;
  int best = cpu_ >= 0 ? cpu_ : sched_getcpu();
  if (best < 0 || best >= kMaxCpus) return;
  auto load = [&](int c) { return g_groups_on_cpu[c].load() - (c == cpu_ ? 1 : 0); };
  for (int c = 0; c < kMaxCpus; c++) {
    if (CPU_ISSET(c, &g_allowed_cpus) && load(c) < load(best)) best = c;
  }
  if (best == cpu_) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(best, &set);
  for (int tid : tids) {
    if (sched_setaffinity(tid, sizeof(set), &set) != 0) return;
  }
  if (sched_setaffinity(0, sizeof(set), &set) != 0) return;
  if (cpu_ >= 0) g_groups_on_cpu[cpu_].fetch_sub(1);
  g_groups_on_cpu[best].fetch_add(1);
  cpu_ = best;
}

bool CpuPlacement::PinUncounted(int cpu, std::initializer_list<int> tids) {
  if (cpu < 0 || cpu >= kMaxCpus || !CPU_ISSET(cpu, &g_allowed_cpus)) return false;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  for (int tid : tids) {
    if (sched_setaffinity(tid, sizeof(set), &set) != 0) return false;
  }
  return sched_setaffinity(0, sizeof(set), &set) == 0;
}

void CpuPlacement::Release() {
  if (cpu_ >= 0) g_groups_on_cpu[cpu_].fetch_sub(1);
  cpu_ = -1;
}

}  // namespace sentry::platform
