// What the sandbox reports about the machine: sysinfo(2), /proc/meminfo, /proc/loadavg,
// /proc/uptime. Memory and loads are the host's (as a container sees them); the uptime and
// the task counts are the sandbox's own.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "sentry/kernel/kernel.h"

namespace sentry::kernel {

// The host's /proc/meminfo, field name -> kB (MemTotal, MemFree, ...), in file order.
struct HostMeminfo {
  std::string text;  // as read
  std::map<std::string, uint64_t> kb;
  uint64_t Bytes(const std::string& field) const {
    auto it = kb.find(field);
    return it == kb.end() ? 0 : it->second * 1024;
  }
};
HostMeminfo ReadHostMeminfo();

// struct sysinfo, x86_64.
struct SysinfoData {
  int64_t uptime;
  uint64_t loads[3];  // fixed point, 1.0 == 65536
  uint64_t totalram, freeram, sharedram, bufferram, totalswap, freeswap;
  uint16_t procs;
  uint16_t pad;
  uint64_t totalhigh, freehigh;
  uint32_t mem_unit;
  char reserved[4];
};
static_assert(sizeof(SysinfoData) == 112);

SysinfoData Sysinfo(Kernel& k);

// Seconds since the sandbox started.
absl::Duration Uptime(Kernel& k);

// /proc/loadavg's text for `loads` (sysinfo's fixed point) and the sandbox's tasks.
std::string LoadavgText(Kernel& k, const uint64_t loads[3]);

}  // namespace sentry::kernel
