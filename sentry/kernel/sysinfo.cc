#include "sentry/kernel/sysinfo.h"

#include <sys/sysinfo.h>

#include <sstream>

#include "absl/strings/str_format.h"
#include "sentry/base/host_files.h"

namespace sentry::kernel {

HostMeminfo ReadHostMeminfo() {
  HostMeminfo m;
  m.text = ReadHostFile("/proc/meminfo").value_or("");
  std::istringstream lines(m.text);
  std::string line;
  while (std::getline(lines, line)) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    m.kb[line.substr(0, colon)] = strtoull(line.c_str() + colon + 1, nullptr, 10);
  }
  if (m.kb.count("MemTotal") == 0) {
    // No host /proc: what sysinfo says, in the same format.
    struct sysinfo si {};
    ::sysinfo(&si);
    auto kb = [&](uint64_t v) { return v * si.mem_unit / 1024; };
    m.kb = {{"MemTotal", kb(si.totalram)},    {"MemFree", kb(si.freeram)},
            {"MemAvailable", kb(si.freeram)}, {"Buffers", kb(si.bufferram)},
            {"Shmem", kb(si.sharedram)},      {"SwapTotal", kb(si.totalswap)},
            {"SwapFree", kb(si.freeswap)}};
    m.text.clear();
    for (const char* f :
         {"MemTotal", "MemFree", "MemAvailable", "Buffers", "SwapTotal", "SwapFree", "Shmem"}) {
      m.text += absl::StrFormat("%-16s%8d kB\n", std::string(f) + ":", m.kb[f]);
    }
  }
  return m;
}

absl::Duration Uptime(Kernel& k) { return absl::Now() - k.boot_time; }

SysinfoData Sysinfo(Kernel& k) {
  SysinfoData d{};
  absl::Duration up = Uptime(k);
  d.uptime = absl::ToInt64Seconds(absl::Ceil(up, absl::Seconds(1)));
  struct sysinfo host {};
  if (::sysinfo(&host) == 0) {
    for (int i = 0; i < 3; i++) d.loads[i] = host.loads[i];
  }
  HostMeminfo m = ReadHostMeminfo();
  d.totalram = m.Bytes("MemTotal");
  d.freeram = m.Bytes("MemFree");
  d.sharedram = m.Bytes("Shmem");
  d.bufferram = m.Bytes("Buffers");
  d.totalswap = m.Bytes("SwapTotal");
  d.freeswap = m.Bytes("SwapFree");
  d.mem_unit = 1;
  absl::MutexLock l(&k.mu());
  d.procs = static_cast<uint16_t>(k.tasks().size());
  return d;
}

std::string LoadavgText(Kernel& k, const uint64_t loads[3]) {
  // sysinfo's loads are Linux's avenrun (11 fraction bits) shifted by 5; /proc/loadavg rounds
  // to two decimals the way Linux does.
  std::string out;
  for (int i = 0; i < 3; i++) {
    uint64_t a = (loads[i] >> 5) + (1 << 11) / 200;
    out += absl::StrFormat("%d.%02d ", a >> 11, ((a & ((1 << 11) - 1)) * 100) >> 11);
  }
  int running = 0, total = 0, last = 0;
  {
    absl::MutexLock l(&k.mu());
    for (auto& [tid, t] : k.tasks()) {
      total++;
      if (!t->sleeping_.load(std::memory_order_relaxed)) running++;
    }
    last = k.LastPid();
  }
  return out + absl::StrFormat("%d/%d %d\n", std::max(running, 1), total, last);
}

}  // namespace sentry::kernel
