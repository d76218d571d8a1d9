#include "netstack/host_interfaces.h"

#include <ifaddrs.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <sstream>

#include "sentry/base/host_files.h"

namespace sentry::netstack {
namespace {

std::vector<HostInterface>& List() {
  static std::vector<HostInterface> list;
  return list;
}

std::vector<HostRoute>& Routes() {
  static std::vector<HostRoute> routes;
  return routes;
}

// One RTM_NEWROUTE of the dump into `out`, if it is a main-table IPv4 route.
void ParseRoute(const struct nlmsghdr* h, std::vector<HostRoute>& out) {
  if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct rtmsg))) return;
  const auto* rt = static_cast<const struct rtmsg*>(NLMSG_DATA(h));
  if (rt->rtm_family != AF_INET || rt->rtm_table != RT_TABLE_MAIN) return;
  HostRoute r;
  r.prefix = rt->rtm_dst_len;
  r.scope = rt->rtm_scope;
  r.protocol = rt->rtm_protocol;
  r.type = rt->rtm_type;
  int len = static_cast<int>(RTM_PAYLOAD(h));
  for (const struct rtattr* a = RTM_RTA(rt); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
    uint32_t v = 0;
    if (RTA_PAYLOAD(a) >= sizeof(v)) std::memcpy(&v, RTA_DATA(a), sizeof(v));
    switch (a->rta_type) {
      case RTA_DST:
        r.dst = v;
        break;
      case RTA_GATEWAY:
        r.gateway = v;
        break;
      case RTA_PREFSRC:
        r.prefsrc = v;
        break;
      case RTA_OIF:
        r.oif = static_cast<int>(v);
        break;
      case RTA_PRIORITY:
        r.priority = v;
        break;
    }
  }
  out.push_back(r);
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

std::vector<HostRoute> ReadHostRoutes() {
  std::vector<HostRoute> out;
  int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) return out;
  struct {
    struct nlmsghdr h;
    struct rtmsg rt;
  } req{};
  req.h.nlmsg_len = sizeof(req);
  req.h.nlmsg_type = RTM_GETROUTE;
  req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  req.h.nlmsg_seq = 1;
  req.rt.rtm_family = AF_INET;
  if (send(fd, &req, sizeof(req), 0) != static_cast<ssize_t>(sizeof(req))) {
    close(fd);
    return out;
  }
  alignas(struct nlmsghdr) char buf[16384];
  for (bool done = false; !done;) {
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    int left = static_cast<int>(n);
    for (auto* h = reinterpret_cast<struct nlmsghdr*>(buf); NLMSG_OK(h, left);
         h = NLMSG_NEXT(h, left)) {
      if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
        done = true;
        break;
      }
      if (h->nlmsg_type == RTM_NEWROUTE) ParseRoute(h, out);
    }
  }
  close(fd);
  return out;
}

void SetHostInterfaces(std::vector<HostInterface> list, std::vector<HostRoute> routes) {
  List() = std::move(list);
  Routes() = std::move(routes);
}

const std::vector<HostInterface>& HostInterfaces() { return List(); }

const std::vector<HostRoute>& HostRoutes() { return Routes(); }

std::optional<std::array<uint64_t, 16>> HostInterfaceCounters(const std::string& name) {
  std::istringstream in(ReadHostFile("/proc/self/net/dev").value_or(""));
  std::string line;
  while (std::getline(in, line)) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    size_t b = line.find_first_not_of(' ');
    if (line.compare(b, colon - b, name) != 0 || colon - b != name.size()) continue;
    std::istringstream fields(line.substr(colon + 1));
    std::array<uint64_t, 16> c{};
    for (auto& v : c) {
      if (!(fields >> v)) return std::nullopt;
    }
    return c;
  }
  return std::nullopt;
}

bool IsHostInterfaceV4(uint32_t addr) {
  for (const auto& h : List()) {
    for (const auto& v : h.v4) {
      if (v.addr == addr) return true;
    }
  }
  return false;
}

}  // namespace sentry::netstack
