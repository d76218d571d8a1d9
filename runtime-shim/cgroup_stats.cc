// Cgroup::Stats: what the group's files say about it, for `sentry events`.
#include <unistd.h>

#include "runtime-shim/cgroup.h"

namespace sentry::shim {
namespace {

using cgroup_files::ReadFile;
using cgroup_files::ReadKeyed;
using cgroup_files::ReadNumber;

int64_t Get(const std::map<std::string, uint64_t>& m, const std::string& key, int64_t scale) {
  auto it = m.find(key);
  return it == m.end() ? -1 : static_cast<int64_t>(it->second) * scale;
}

}  // namespace

CgroupStats Cgroup::Stats() const {
  CgroupStats st;
  st.oom_kills = OomKills();
  std::string mem = Dir("memory"), pids = Dir("pids"), cpu = Dir("cpu");
  std::string acct = v2_ ? cpu : Dir("cpuacct");
  if (!pids.empty()) {
    st.pids_current = ReadNumber(pids + "/pids.current");
    st.pids_limit = std::max<int64_t>(ReadNumber(pids + "/pids.max"), 0);
  }
  if (!mem.empty()) st.memory_raw = ReadKeyed(mem + "/memory.stat");
  if (v2_) {
    st.memory_usage = ReadNumber(mem + "/memory.current");
    st.memory_max_usage = ReadNumber(mem + "/memory.peak");
    st.memory_limit = ReadNumber(mem + "/memory.max");
    st.memory_failcnt = Get(ReadKeyed(mem + "/memory.events"), "max", 1);
    st.swap_usage = ReadNumber(mem + "/memory.swap.current");
    st.swap_limit = ReadNumber(mem + "/memory.swap.max");
    auto cs = ReadKeyed(cpu + "/cpu.stat");
    st.cpu_total_ns = Get(cs, "usage_usec", 1000);
    st.cpu_user_ns = Get(cs, "user_usec", 1000);
    st.cpu_kernel_ns = Get(cs, "system_usec", 1000);
    st.periods = Get(cs, "nr_periods", 1);
    st.throttled_count = Get(cs, "nr_throttled", 1);
    st.throttled_ns = Get(cs, "throttled_usec", 1000);
    return st;
  }
  if (!mem.empty()) {
    st.memory_usage = ReadNumber(mem + "/memory.usage_in_bytes");
    st.memory_max_usage = ReadNumber(mem + "/memory.max_usage_in_bytes");
    st.memory_limit = ReadNumber(mem + "/memory.limit_in_bytes");
    st.memory_failcnt = ReadNumber(mem + "/memory.failcnt");
    st.swap_usage = ReadNumber(mem + "/memory.memsw.usage_in_bytes");
    st.swap_limit = ReadNumber(mem + "/memory.memsw.limit_in_bytes");
  }
  if (!acct.empty()) {
    st.cpu_total_ns = ReadNumber(acct + "/cpuacct.usage");
    std::istringstream per(ReadFile(acct + "/cpuacct.usage_percpu"));
    uint64_t v;
    while (per >> v) st.cpu_percpu_ns.push_back(v);
    // cpuacct.stat counts clock ticks.
    int64_t tick_ns = 1000000000 / sysconf(_SC_CLK_TCK);
    auto times = ReadKeyed(acct + "/cpuacct.stat");
    st.cpu_user_ns = Get(times, "user", tick_ns);
    st.cpu_kernel_ns = Get(times, "system", tick_ns);
  }
  if (!cpu.empty()) {
    auto cs = ReadKeyed(cpu + "/cpu.stat");
    st.periods = Get(cs, "nr_periods", 1);
    st.throttled_count = Get(cs, "nr_throttled", 1);
    st.throttled_ns = Get(cs, "throttled_time", 1);
  }
  return st;
}

}  // namespace sentry::shim
