#include "netstack/netlink.h"

#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/if_arp.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>

#include <cstring>
#include <string>

#include "netstack/host_interfaces.h"
#include "netstack/stack.h"

namespace sentry::netstack {

namespace {

constexpr int kLoIndex = 1;
constexpr uint32_t kLoUpFlags = IFF_UP | IFF_LOOPBACK | IFF_RUNNING | IFF_LOWER_UP;

// Builds netlink messages into a byte vector, NLMSG_ALIGN'ed as the kernel lays them out.
class MsgWriter {
 public:
  explicit MsgWriter(std::vector<uint8_t>& out) : out_(out) {}

  // Starts a message; `Finish` fills in its length.
  void Begin(uint16_t type, uint16_t flags, uint32_t seq, uint32_t port) {
    start_ = out_.size();
    struct nlmsghdr h {};
    h.nlmsg_type = type;
    h.nlmsg_flags = flags;
    h.nlmsg_seq = seq;
    h.nlmsg_pid = port;
    Put(&h, sizeof(h));
  }
  void Put(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    out_.insert(out_.end(), b, b + n);
    out_.resize((out_.size() + 3) & ~size_t{3}, 0);
  }
  void Attr(uint16_t type, const void* p, size_t n) {
    struct rtattr a;
    a.rta_len = static_cast<uint16_t>(RTA_LENGTH(n));
    a.rta_type = type;
    size_t at = out_.size();
    out_.resize(at + sizeof(a));
    std::memcpy(out_.data() + at, &a, sizeof(a));
    Put(p, n);
  }
  void AttrU32(uint16_t type, uint32_t v) { Attr(type, &v, sizeof(v)); }
  void AttrStr(uint16_t type, const char* s) { Attr(type, s, std::strlen(s) + 1); }
  void Finish() {
    uint32_t len = static_cast<uint32_t>(out_.size() - start_);
    std::memcpy(out_.data() + start_, &len, sizeof(len));
  }

 private:
  std::vector<uint8_t>& out_;
  size_t start_ = 0;
};

// lo as RTM_NEWLINK describes it; down (a new namespace's) it has no queueing discipline
// and its operational state is "down", as Linux shows it.
void LinkMessage(MsgWriter& w, bool up, uint16_t flags, uint32_t seq, uint32_t port) {
  w.Begin(RTM_NEWLINK, flags, seq, port);
  struct ifinfomsg ifi {};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_type = ARPHRD_LOOPBACK;
  ifi.ifi_index = kLoIndex;
  ifi.ifi_flags = up ? kLoUpFlags : IFF_LOOPBACK;
  w.Put(&ifi, sizeof(ifi));
  w.AttrStr(IFLA_IFNAME, "lo");
  w.AttrU32(IFLA_TXQLEN, 1000);
  uint8_t operstate = up ? uint8_t{IF_OPER_UNKNOWN} : uint8_t{IF_OPER_DOWN}, linkmode = 0;
  w.Attr(IFLA_OPERSTATE, &operstate, 1);
  w.Attr(IFLA_LINKMODE, &linkmode, 1);
  w.AttrU32(IFLA_MTU, 65536);
  w.AttrU32(IFLA_GROUP, 0);
  w.AttrU32(IFLA_PROMISCUITY, 0);
  w.AttrU32(IFLA_NUM_TX_QUEUES, 1);
  w.AttrU32(IFLA_NUM_RX_QUEUES, 1);
  w.AttrStr(IFLA_QDISC, up ? "noqueue" : "noop");
  uint8_t mac[6] = {};
  w.Attr(IFLA_ADDRESS, mac, sizeof(mac));
  w.Attr(IFLA_BROADCAST, mac, sizeof(mac));
  struct rtnl_link_stats stats {};
  w.Attr(IFLA_STATS, &stats, sizeof(stats));
  w.Finish();
}

void AddrMessage(MsgWriter& w, int family, uint16_t flags, uint32_t seq, uint32_t port) {
  w.Begin(RTM_NEWADDR, flags, seq, port);
  struct ifaddrmsg ifa {};
  ifa.ifa_family = static_cast<uint8_t>(family);
  ifa.ifa_prefixlen = family == AF_INET ? 8 : 128;
  ifa.ifa_flags = IFA_F_PERMANENT;
  ifa.ifa_scope = RT_SCOPE_HOST;
  ifa.ifa_index = kLoIndex;
  w.Put(&ifa, sizeof(ifa));
  if (family == AF_INET) {
    uint32_t a = htonl(INADDR_LOOPBACK);
    w.Attr(IFA_ADDRESS, &a, sizeof(a));
    w.Attr(IFA_LOCAL, &a, sizeof(a));
    w.AttrStr(IFA_LABEL, "lo");
  } else {
    struct in6_addr a = IN6ADDR_LOOPBACK_INIT;
    w.Attr(IFA_ADDRESS, &a, sizeof(a));
  }
  w.AttrU32(IFA_FLAGS, IFA_F_PERMANENT);
  struct ifa_cacheinfo ci = {0xffffffff, 0xffffffff, 0, 0};
  w.Attr(IFA_CACHEINFO, &ci, sizeof(ci));
  w.Finish();
}

// An interface of the Sentry's own network namespace (host_interfaces.h), an Ethernet link
// with the host's index, flags, MTU and address. Its counters are not the host's: zero.
void HostLinkMessage(MsgWriter& w, const HostInterface& h, uint16_t flags, uint32_t seq,
                     uint32_t port) {
  w.Begin(RTM_NEWLINK, flags, seq, port);
  struct ifinfomsg ifi {};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_type = ARPHRD_ETHER;
  ifi.ifi_index = h.index;
  ifi.ifi_flags = h.flags;
  w.Put(&ifi, sizeof(ifi));
  w.AttrStr(IFLA_IFNAME, h.name.c_str());
  w.AttrU32(IFLA_TXQLEN, 1000);
  uint8_t operstate = (h.flags & IFF_RUNNING) ? uint8_t{IF_OPER_UP} : uint8_t{IF_OPER_DOWN};
  uint8_t linkmode = 0;
  w.Attr(IFLA_OPERSTATE, &operstate, 1);
  w.Attr(IFLA_LINKMODE, &linkmode, 1);
  w.AttrU32(IFLA_MTU, h.mtu);
  w.AttrU32(IFLA_GROUP, 0);
  w.AttrU32(IFLA_PROMISCUITY, 0);
  w.AttrU32(IFLA_NUM_TX_QUEUES, 1);
  w.AttrU32(IFLA_NUM_RX_QUEUES, 1);
  w.AttrStr(IFLA_QDISC, "noqueue");
  w.Attr(IFLA_ADDRESS, h.mac.data(), h.mac.size());
  uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  w.Attr(IFLA_BROADCAST, bcast, sizeof(bcast));
  // The host's counters (its /proc/net/dev columns, in that file's order) in the link
  // statistics' fields, as `ip -s link` reads them.
  struct rtnl_link_stats64 st {};
  if (auto c = HostInterfaceCounters(h.name)) {
    const auto& v = *c;
    st.rx_bytes = v[0], st.rx_packets = v[1], st.rx_errors = v[2], st.rx_dropped = v[3];
    st.rx_fifo_errors = v[4], st.rx_frame_errors = v[5], st.rx_compressed = v[6];
    st.multicast = v[7], st.tx_bytes = v[8], st.tx_packets = v[9], st.tx_errors = v[10];
    st.tx_dropped = v[11], st.tx_fifo_errors = v[12], st.collisions = v[13];
    st.tx_carrier_errors = v[14], st.tx_compressed = v[15];
  }
  struct rtnl_link_stats stats {};
  stats.rx_packets = static_cast<uint32_t>(st.rx_packets);
  stats.tx_packets = static_cast<uint32_t>(st.tx_packets);
  stats.rx_bytes = static_cast<uint32_t>(st.rx_bytes);
  stats.tx_bytes = static_cast<uint32_t>(st.tx_bytes);
  stats.rx_errors = static_cast<uint32_t>(st.rx_errors);
  stats.tx_errors = static_cast<uint32_t>(st.tx_errors);
  stats.rx_dropped = static_cast<uint32_t>(st.rx_dropped);
  stats.tx_dropped = static_cast<uint32_t>(st.tx_dropped);
  stats.multicast = static_cast<uint32_t>(st.multicast);
  stats.collisions = static_cast<uint32_t>(st.collisions);
  stats.rx_frame_errors = static_cast<uint32_t>(st.rx_frame_errors);
  stats.rx_fifo_errors = static_cast<uint32_t>(st.rx_fifo_errors);
  stats.tx_carrier_errors = static_cast<uint32_t>(st.tx_carrier_errors);
  stats.tx_fifo_errors = static_cast<uint32_t>(st.tx_fifo_errors);
  stats.rx_compressed = static_cast<uint32_t>(st.rx_compressed);
  stats.tx_compressed = static_cast<uint32_t>(st.tx_compressed);
  w.Attr(IFLA_STATS, &stats, sizeof(stats));
  w.Attr(IFLA_STATS64, &st, sizeof(st));
  w.Finish();
}

void HostAddrMessage(MsgWriter& w, const HostInterface& h, const HostInterface::V4& v,
                     uint16_t flags, uint32_t seq, uint32_t port) {
  w.Begin(RTM_NEWADDR, flags, seq, port);
  struct ifaddrmsg ifa {};
  ifa.ifa_family = AF_INET;
  ifa.ifa_prefixlen = v.prefix;
  ifa.ifa_flags = IFA_F_PERMANENT;
  ifa.ifa_scope = RT_SCOPE_UNIVERSE;
  ifa.ifa_index = static_cast<uint32_t>(h.index);
  w.Put(&ifa, sizeof(ifa));
  w.Attr(IFA_ADDRESS, &v.addr, sizeof(v.addr));
  w.Attr(IFA_LOCAL, &v.addr, sizeof(v.addr));
  if (v.broadcast != 0) w.Attr(IFA_BROADCAST, &v.broadcast, sizeof(v.broadcast));
  w.AttrStr(IFA_LABEL, h.name.c_str());
  w.AttrU32(IFA_FLAGS, IFA_F_PERMANENT);
  struct ifa_cacheinfo ci = {0xffffffff, 0xffffffff, 0, 0};
  w.Attr(IFA_CACHEINFO, &ci, sizeof(ci));
  w.Finish();
}

void HostRouteMessage(MsgWriter& w, const HostRoute& r, uint16_t flags, uint32_t seq,
                      uint32_t port) {
  w.Begin(RTM_NEWROUTE, flags, seq, port);
  struct rtmsg rt {};
  rt.rtm_family = AF_INET;
  rt.rtm_dst_len = r.prefix;
  rt.rtm_table = RT_TABLE_MAIN;
  rt.rtm_protocol = r.protocol;
  rt.rtm_scope = r.scope;
  rt.rtm_type = r.type;
  w.Put(&rt, sizeof(rt));
  w.AttrU32(RTA_TABLE, RT_TABLE_MAIN);
  if (r.prefix != 0) w.Attr(RTA_DST, &r.dst, sizeof(r.dst));
  if (r.prefsrc != 0) w.Attr(RTA_PREFSRC, &r.prefsrc, sizeof(r.prefsrc));
  if (r.gateway != 0) w.Attr(RTA_GATEWAY, &r.gateway, sizeof(r.gateway));
  if (r.priority != 0) w.AttrU32(RTA_PRIORITY, r.priority);
  w.AttrU32(RTA_OIF, static_cast<uint32_t>(r.oif));
  w.Finish();
}

void Done(MsgWriter& w, uint32_t seq, uint32_t port) {
  w.Begin(NLMSG_DONE, NLM_F_MULTI, seq, port);
  int32_t zero = 0;
  w.Put(&zero, sizeof(zero));
  w.Finish();
}

// NLMSG_ERROR with `err` (0 is an ACK), quoting the request's header.
void Error(MsgWriter& w, int err, const struct nlmsghdr& req, uint32_t port) {
  w.Begin(NLMSG_ERROR, 0, req.nlmsg_seq, port);
  struct nlmsgerr e {};
  e.error = -err;
  e.msg = req;
  w.Put(&e, sizeof(e));
  w.Finish();
}

// The interface an RTM_*LINK request names, by index or by IFLA_IFNAME: lo's index, or 0.
int RequestedLink(const uint8_t* msg, size_t len, struct ifinfomsg* ifi) {
  *ifi = {};
  if (len < NLMSG_LENGTH(sizeof(*ifi))) return 0;
  std::memcpy(ifi, msg + NLMSG_HDRLEN, sizeof(*ifi));
  if (ifi->ifi_index != 0) return ifi->ifi_index == kLoIndex ? kLoIndex : 0;
  size_t off = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(*ifi));
  while (off + sizeof(struct rtattr) <= len) {
    struct rtattr a;
    std::memcpy(&a, msg + off, sizeof(a));
    if (a.rta_len < sizeof(a) || a.rta_len > len - off) break;
    if (a.rta_type == IFLA_IFNAME) {
      std::string name(reinterpret_cast<const char*>(msg + off + RTA_LENGTH(0)),
                       a.rta_len - RTA_LENGTH(0));
      return std::strcmp(name.c_str(), "lo") == 0 ? kLoIndex : 0;
    }
    off += RTA_ALIGN(a.rta_len);
  }
  return 0;
}

}  // namespace

NetlinkSocket::NetlinkSocket(Stack& stack, int type, int protocol, int flags, int32_t default_port)
    : Socket(stack, AF_NETLINK, type, protocol, flags), default_port_(default_port) {}

Result<void> NetlinkSocket::Bind(std::span<const uint8_t> addr, PathOps&) {
  if (addr.size() < sizeof(struct sockaddr_nl)) return Errno(EINVAL);
  struct sockaddr_nl nl;
  std::memcpy(&nl, addr.data(), sizeof(nl));
  if (nl.nl_family != AF_NETLINK) return Errno(EINVAL);
  absl::MutexLock l(&smu_);
  if (port_ != 0 && nl.nl_pid != 0 && static_cast<int32_t>(nl.nl_pid) != port_) {
    return Errno(EINVAL);
  }
  if (port_ == 0) port_ = nl.nl_pid ? static_cast<int32_t>(nl.nl_pid) : default_port_;
  groups_ = nl.nl_groups;  // no multicast events are ever sent
  return Ok();
}

Result<void> NetlinkSocket::Connect(Caller&, std::span<const uint8_t> addr, PathOps&) {
  if (addr.size() < sizeof(struct sockaddr_nl)) return Errno(EINVAL);
  absl::MutexLock l(&smu_);
  if (port_ == 0) port_ = default_port_;
  return Ok();
}

Result<SockAddr> NetlinkSocket::SockName() {
  absl::MutexLock l(&smu_);
  struct sockaddr_nl nl {};
  nl.nl_family = AF_NETLINK;
  nl.nl_pid = static_cast<uint32_t>(port_);
  nl.nl_groups = groups_;
  return OptionBytes(nl);
}

Result<SockAddr> NetlinkSocket::PeerName() {
  struct sockaddr_nl nl {};
  nl.nl_family = AF_NETLINK;
  return OptionBytes(nl);
}

int NetlinkSocket::SetLink(const uint8_t* msg, size_t len, bool net_admin) {
  struct ifinfomsg ifi;
  if (RequestedLink(msg, len, &ifi) != kLoIndex) return ENODEV;
  if (!net_admin) return EPERM;
  // ifi_change 0 means every flag, as in the requests of old tools.
  uint32_t change = ifi.ifi_change ? ifi.ifi_change : ~0u;
  if (!(change & IFF_UP)) return 0;
  Result<void> r = stack_.SetLoopbackUp(ifi.ifi_flags & IFF_UP);
  return r.ok() ? 0 : r.error().code();
}

int NetlinkSocket::AddLoopbackAddress(const uint8_t* msg, size_t len, bool net_admin) {
  struct ifaddrmsg ifa;
  if (len < NLMSG_LENGTH(sizeof(ifa))) return EINVAL;
  std::memcpy(&ifa, msg + NLMSG_HDRLEN, sizeof(ifa));
  if (ifa.ifa_index != kLoIndex) return ENODEV;
  if (!net_admin) return EPERM;
  bool v4 = ifa.ifa_family == AF_INET;
  if ((!v4 && ifa.ifa_family != AF_INET6) || ifa.ifa_prefixlen != (v4 ? 8 : 128)) {
    return EOPNOTSUPP;
  }
  // Every IFA_LOCAL / IFA_ADDRESS must be lo's own address.
  size_t off = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(ifa));
  while (off + sizeof(struct rtattr) <= len) {
    struct rtattr a;
    std::memcpy(&a, msg + off, sizeof(a));
    if (a.rta_len < sizeof(a) || a.rta_len > len - off) break;
    if (a.rta_type == IFA_LOCAL || a.rta_type == IFA_ADDRESS) {
      const uint8_t* data = msg + off + RTA_LENGTH(0);
      size_t n = a.rta_len - RTA_LENGTH(0);
      uint32_t lo4 = htonl(INADDR_LOOPBACK);
      struct in6_addr lo6 = IN6ADDR_LOOPBACK_INIT;
      bool ok = v4 ? n == 4 && std::memcmp(data, &lo4, 4) == 0
                   : n == 16 && std::memcmp(data, &lo6, 16) == 0;
      if (!ok) return EOPNOTSUPP;
    }
    off += RTA_ALIGN(a.rta_len);
  }
  Result<void> r = stack_.AddLoopbackV4();
  return r.ok() ? 0 : r.error().code();
}

void NetlinkSocket::Answer(const uint8_t* msg, size_t len, bool net_admin,
                           std::vector<uint8_t>& out) {
  struct nlmsghdr h;
  std::memcpy(&h, msg, sizeof(h));
  uint32_t port;
  {
    absl::MutexLock l(&smu_);
    port = static_cast<uint32_t>(port_);
  }
  MsgWriter w(out);
  if (!(h.nlmsg_flags & NLM_F_REQUEST)) return;
  bool dump = (h.nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP;
  int family = AF_UNSPEC;
  if (len >= NLMSG_LENGTH(1)) family = msg[NLMSG_HDRLEN];
  switch (h.nlmsg_type) {
    case RTM_GETLINK: {
      // The container's own interfaces (host_interfaces.h) follow lo on the first stack.
      static const std::vector<HostInterface> kNone;
      const auto& hosts = stack_.mode() == NetMode::kHost ? HostInterfaces() : kNone;
      if (!dump) {
        struct ifinfomsg ifi {};
        if (len >= NLMSG_LENGTH(sizeof(ifi))) std::memcpy(&ifi, msg + NLMSG_HDRLEN, sizeof(ifi));
        for (const auto& hi : hosts) {
          if (ifi.ifi_index != 0 && ifi.ifi_index == hi.index) {
            HostLinkMessage(w, hi, 0, h.nlmsg_seq, port);
            if (h.nlmsg_flags & NLM_F_ACK) Error(w, 0, h, port);
            return;
          }
        }
        if (ifi.ifi_index != 0 && ifi.ifi_index != kLoIndex) return Error(w, ENODEV, h, port);
        LinkMessage(w, stack_.loopback_up(), 0, h.nlmsg_seq, port);
        break;
      }
      LinkMessage(w, stack_.loopback_up(), NLM_F_MULTI, h.nlmsg_seq, port);
      for (const auto& hi : hosts) HostLinkMessage(w, hi, NLM_F_MULTI, h.nlmsg_seq, port);
      Done(w, h.nlmsg_seq, port);
      break;
    }
    case RTM_GETADDR:
      if (!dump) return Error(w, EOPNOTSUPP, h, port);
      // lo's addresses are assigned when it comes up (127.0.0.1 then stays).
      if ((family == AF_UNSPEC || family == AF_INET) && stack_.loopback_v4_assigned()) {
        AddrMessage(w, AF_INET, NLM_F_MULTI, h.nlmsg_seq, port);
      }
      if ((family == AF_UNSPEC || family == AF_INET) && stack_.mode() == NetMode::kHost) {
        for (const auto& hi : HostInterfaces()) {
          for (const auto& v : hi.v4) HostAddrMessage(w, hi, v, NLM_F_MULTI, h.nlmsg_seq, port);
        }
      }
      if ((family == AF_UNSPEC || family == AF_INET6) && stack_.loopback_up()) {
        AddrMessage(w, AF_INET6, NLM_F_MULTI, h.nlmsg_seq, port);
      }
      Done(w, h.nlmsg_seq, port);
      break;
    case RTM_GETROUTE:
      // The container's own routes (host_interfaces.h) on the first stack in host mode; lo's
      // live in the local table, which `ip route` does not show.
      if (!dump) return Error(w, ENETUNREACH, h, port);
      if ((family == AF_UNSPEC || family == AF_INET) && stack_.mode() == NetMode::kHost) {
        for (const auto& r : HostRoutes()) HostRouteMessage(w, r, NLM_F_MULTI, h.nlmsg_seq, port);
      }
      Done(w, h.nlmsg_seq, port);
      break;
    case RTM_GETNEIGH:
    case RTM_GETRULE:
    case RTM_GETQDISC:
    case RTM_GETNETCONF:
      // There are no neighbours, rules or queueing disciplines to list.
      if (!dump) return Error(w, ENETUNREACH, h, port);
      Done(w, h.nlmsg_seq, port);
      break;
    case RTM_NEWLINK:
    case RTM_SETLINK:
      // Bringing lo up or down in a namespace's own stack; other link changes are ignored.
      if (h.nlmsg_type == RTM_NEWLINK && (h.nlmsg_flags & NLM_F_CREATE)) {
        return Error(w, net_admin ? EOPNOTSUPP : EPERM, h, port);
      }
      if (int err = SetLink(msg, len, net_admin)) return Error(w, err, h, port);
      break;
    case RTM_NEWADDR:
      // Giving lo its own 127.0.0.1/8 or ::1/128 again (bwrap does so before bringing it up)
      // is accepted in a namespace's own stack; other addresses are not offered.
      if (int err = AddLoopbackAddress(msg, len, net_admin)) return Error(w, err, h, port);
      break;
    case RTM_DELLINK:
    case RTM_DELADDR:
    case RTM_NEWROUTE:
    case RTM_DELROUTE:
    case RTM_NEWNEIGH:
    case RTM_DELNEIGH:
    case RTM_NEWRULE:
    case RTM_DELRULE:
      return Error(w, EPERM, h, port);
    default:
      return Error(w, EOPNOTSUPP, h, port);
  }
  if (h.nlmsg_flags & NLM_F_ACK) Error(w, 0, h, port);
}

Result<size_t> NetlinkSocket::Send(Caller& c, SendRequest& req, PathOps&) {
  {
    absl::MutexLock l(&smu_);
    if (port_ == 0) port_ = default_port_;  // sending autobinds
  }
  std::vector<uint8_t> reply;
  size_t off = 0;
  while (off + sizeof(struct nlmsghdr) <= req.data.size()) {
    struct nlmsghdr h;
    std::memcpy(&h, req.data.data() + off, sizeof(h));
    if (h.nlmsg_len < sizeof(h) || h.nlmsg_len > req.data.size() - off) break;
    Answer(req.data.data() + off, h.nlmsg_len, c.net_admin, reply);
    off += NLMSG_ALIGN(h.nlmsg_len);
  }
  if (!reply.empty()) {
    absl::MutexLock l(&smu_);
    // A full receive queue drops the reply and reports ENOBUFS on the next receive, as
    // Linux's netlink_overrun: requests never read must not grow the Sentry's memory.
    if (!rx_.empty() && rx_bytes_ + reply.size() > static_cast<size_t>(rcvbuf_)) {
      error_ = ENOBUFS;
      queue_.Notify(kEventErr);
      return req.data.size();
    }
    rx_bytes_ += reply.size();
    rx_.push_back(std::move(reply));
    queue_.Notify(kEventIn);
  }
  return req.data.size();
}

Result<RecvResult> NetlinkSocket::Recv(Caller& c, std::span<uint8_t> dst, int flags) {
  using R = Result<RecvResult>;
  return Block<RecvResult>(c, kEventIn, NonBlock(flags), [&]() -> std::optional<R> {
    absl::MutexLock l(&smu_);
    if (error_) return R(Errno(std::exchange(error_, 0)));
    if (rx_.empty()) return std::nullopt;
    RecvResult r = CopyDatagram(rx_.front(), dst);
    struct sockaddr_nl from {};
    from.nl_family = AF_NETLINK;
    r.from = OptionBytes(from);
    if (!(flags & MSG_PEEK)) {
      rx_bytes_ -= rx_.front().size();
      rx_.pop_front();
    }
    return R(std::move(r));
  });
}

Result<std::vector<uint8_t>> NetlinkSocket::GetOption(int level, int name) {
  if (level == SOL_NETLINK) return OptionBytes(0);
  return Socket::GetOption(level, name);
}

Result<void> NetlinkSocket::SetOption(int level, int name, std::span<const uint8_t> val) {
  if (level == SOL_NETLINK) {
    // Membership and reporting options are accepted; no events are ever generated.
    SENTRY_TRY(OptionInt(val));
    return Ok();
  }
  return Socket::SetOption(level, name, val);
}

EventMask NetlinkSocket::Readiness(EventMask mask) {
  absl::MutexLock l(&smu_);
  EventMask m = kEventOut;
  if (!rx_.empty()) m |= kEventIn;
  if (error_) m |= kEventErr;
  return m & (mask | kEventErr);
}

size_t NetlinkSocket::InQueue() {
  absl::MutexLock l(&smu_);
  return rx_.empty() ? 0 : rx_.front().size();
}

}  // namespace sentry::netstack
