#include "netstack/host_interfaces.h"

#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <map>

namespace sentry::netstack {
namespace {

std::vector<HostInterface>& List() {
  static std::vector<HostInterface> list;
  return list;
}

int PrefixOf(uint32_t mask_be) { return __builtin_popcount(mask_be); }

}  // namespace

std::vector<HostInterface> ReadHostInterfaces() {
  std::vector<HostInterface> out;
  struct ifaddrs* all = nullptr;
  if (getifaddrs(&all) != 0) return out;
  int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  std::map<std::string, size_t> at;  // name -> index in `out`
  for (struct ifaddrs* i = all; i != nullptr; i = i->ifa_next) {
    if (i->ifa_name == nullptr || (i->ifa_flags & IFF_LOOPBACK)) continue;
    std::string name = i->ifa_name;
    auto it = at.find(name);
    if (it == at.end()) {
      HostInterface h;
      h.name = name;
      h.index = static_cast<int>(if_nametoindex(name.c_str()));
      h.flags = i->ifa_flags;
      struct ifreq r {};
      std::strncpy(r.ifr_name, name.c_str(), IFNAMSIZ - 1);
      if (sock >= 0 && ioctl(sock, SIOCGIFMTU, &r) == 0) h.mtu = static_cast<uint32_t>(r.ifr_mtu);
      if (sock >= 0 && ioctl(sock, SIOCGIFHWADDR, &r) == 0) {
        std::memcpy(h.mac.data(), r.ifr_hwaddr.sa_data, h.mac.size());
      }
      if (h.index <= 1) continue;
      it = at.emplace(name, out.size()).first;
      out.push_back(std::move(h));
    }
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    HostInterface::V4 v;
    struct sockaddr_in a, m{}, b{};
    std::memcpy(&a, i->ifa_addr, sizeof(a));
    if (i->ifa_netmask) std::memcpy(&m, i->ifa_netmask, sizeof(m));
    if ((i->ifa_flags & IFF_BROADCAST) && i->ifa_broadaddr) {
      std::memcpy(&b, i->ifa_broadaddr, sizeof(b));
    }
    v.addr = a.sin_addr.s_addr;
    v.prefix = static_cast<uint8_t>(PrefixOf(m.sin_addr.s_addr));
    v.broadcast = b.sin_addr.s_addr;
    out[it->second].v4.push_back(v);
  }
  if (sock >= 0) close(sock);
  freeifaddrs(all);
  return out;
}

void SetHostInterfaces(std::vector<HostInterface> list) { List() = std::move(list); }

const std::vector<HostInterface>& HostInterfaces() { return List(); }

bool IsHostInterfaceV4(uint32_t addr) {
  for (const auto& h : List()) {
    for (const auto& v : h.v4) {
      if (v.addr == addr) return true;
    }
  }
  return false;
}

}  // namespace sentry::netstack
