// The interfaces of the network namespace the Sentry runs in, as the guest sees them in a
// container whose namespace is its own (an OCI runtime's sandbox with Docker's or a CNI
// plugin's veth): taken once before the guest starts, shown by netlink (ip addr, getifaddrs),
// /proc/net/dev and SIOCGIFCONF, and the addresses a guest socket may bind to. Only the
// sandbox's first stack in NetMode::kHost shows them (a guest's own new namespace has lo
// only); lo itself stays the sandbox's own and is never in this list.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sentry::netstack {

struct HostInterface {
  int index = 0;  // the host's ifindex (never lo's 1)
  std::string name;
  uint32_t flags = 0;  // IFF_*
  uint32_t mtu = 0;
  std::array<uint8_t, 6> mac{};
  struct V4 {
    uint32_t addr = 0;  // network byte order
    uint8_t prefix = 0;
    uint32_t broadcast = 0;  // network byte order; 0: none
  };
  std::vector<V4> v4;
};

// An IPv4 route of the main table of that namespace (Docker's default route and its subnet's),
// for `ip route`.
struct HostRoute {
  uint32_t dst = 0;  // network byte order; 0 with prefix 0: the default route
  uint8_t prefix = 0;
  uint32_t gateway = 0;  // 0: none (a link route)
  uint32_t prefsrc = 0;  // 0: none
  int oif = 0;
  uint32_t priority = 0;  // the metric (RTA_PRIORITY); 0: none given
  uint8_t scope = 0;      // RT_SCOPE_*
  uint8_t protocol = 0;   // RTPROT_*
  uint8_t type = 0;       // RTN_*
};

// Reads the interfaces (but lo) of the calling thread's network namespace: getifaddrs and
// the SIOCGIF* ioctls. Call before the Sentry's confinement.
std::vector<HostInterface> ReadHostInterfaces();

// The main table's IPv4 routes through them (netlink RTM_GETROUTE). Same precondition.
std::vector<HostRoute> ReadHostRoutes();

// The lists the guest sees; empty until set. Set once, before the first guest task runs
// (read without a lock afterwards).
void SetHostInterfaces(std::vector<HostInterface> list, std::vector<HostRoute> routes);
const std::vector<HostInterface>& HostInterfaces();
const std::vector<HostRoute>& HostRoutes();
// The host's counters of interface `name` in that namespace, the sixteen numbers of its
// /proc/net/dev line in order (receive: bytes, packets, errs, drop, fifo, frame, compressed,
// multicast; transmit: bytes, packets, errs, drop, fifo, colls, carrier, compressed), read
// now; nullopt if the host has no such line. The guest's traffic through them is host
// sockets' in that namespace, so these are its counters too.
std::optional<std::array<uint64_t, 16>> HostInterfaceCounters(const std::string& name);

// Whether `addr` (IPv4, network byte order) is an address of one of them.
bool IsHostInterfaceV4(uint32_t addr);

}  // namespace sentry::netstack
