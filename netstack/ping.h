// ICMP sockets, both of one class:
//
// - Ping sockets: socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP) and socket(AF_INET6, SOCK_DGRAM,
//   IPPROTO_ICMPV6), the unprivileged echo sockets Linux offers to callers whose group is in
//   net.ipv4.ping_group_range. The guest writes an echo request (an ICMP header and payload,
//   no IP header); the kernel puts the socket's ident (its "port") in the id field, and
//   recvmsg returns the echo reply the same way.
// - Raw ICMP sockets: socket(AF_INET, SOCK_RAW, IPPROTO_ICMP) and socket(AF_INET6, SOCK_RAW,
//   IPPROTO_ICMPV6), for a caller with CAP_NET_RAW (busybox ping, iputils ping without
//   ping-socket rights). The guest writes any ICMP message with its own id (and, for IPv4,
//   its own checksum; ICMPv6's is computed at offset 2, as Linux does); recvmsg returns
//   every ICMP message the namespace's loopback carries that passes the socket's bound and
//   connected addresses and ICMP_FILTER / ICMP6_FILTER, an IPv4 one behind an IPv4 header
//   built here. The guest never gets a host raw socket: only echo requests leave, through
//   the same host ping socket as a ping socket's (other types to a remote address: EPERM),
//   and the reply comes back with the guest's id and an IPv4 header made from what the host
//   socket reports. IP_HDRINCL / IPV6_HDRINCL are refused (ENOPROTOOPT).
//
// On the sandbox's loopback (127/8, ::1, the wildcard) the Sentry answers an echo request
// itself; a raw socket's request and the answer to it are first looped to every raw ICMP
// socket of the namespace, as Linux loops them (ping sockets' echoes are looped there too).
// Under --net=host an echo to an address the egress policy allows goes through a host ping
// socket of the Sentry's (the host rewrites the id to its own ident; the reply's id is put
// back to the guest's). Other raw sockets stay refused (netstack/stack.cc).
//
// Lock order: PingSocket::smu_ is never held while taking RawIcmpSockets::mu_ or another
// socket's smu_ (loopback delivery takes the senders' list first, then each receiver alone).
#pragma once

#include <array>
#include <deque>
#include <map>
#include <memory>
#include <optional>

#include "netstack/inet.h"
#include "netstack/socket.h"

namespace sentry::netstack {

// net.ipv4.ping_group_range of the sandbox's first network namespace: every group. The
// sandbox's ids are its own (root inside is nobody outside), and an echo leaves only under
// --net=host, through the policy, so there is nothing the host's narrower default ("1 0":
// nobody) would protect here. A namespace made inside starts with Linux's "1 0".
inline constexpr uint32_t kPingGroupLow = 0;
inline constexpr uint32_t kPingGroupHigh = 2147483647;

// The idents in use, per family (Linux keeps one table for both; a v4 and a v6 socket with
// the same ident never see each other's replies, so one per family changes nothing visible).
// As on Linux, ping sockets start with SO_REUSEADDR on, and sockets that all have it share
// an ident.
class PingIdents {
 public:
  // Takes `ident`, or a free one when 0. EADDRINUSE if a holder or the caller does not
  // reuse; EAGAIN if no ident is free.
  Result<uint16_t> Take(bool v6, uint16_t ident, bool reuse);
  void Release(bool v6, uint16_t ident, bool reuse);

 private:
  struct Holders {
    int count = 0;
    int exclusive = 0;  // holders without SO_REUSEADDR
  };
  absl::Mutex mu_;
  std::map<std::pair<bool, uint16_t>, Holders> used_ ABSL_GUARDED_BY(mu_);
  uint16_t next_ ABSL_GUARDED_BY(mu_) = 1;
};

// An ICMP message as raw sockets receive it: from the sandbox's loopback, or (--net=host)
// a reply the host ping socket got.
struct IcmpPacket {
  InetAddr src;
  InetAddr dst;
  // IPv4: the 20-byte header followed by the message; IPv6: the message alone.
  std::vector<uint8_t> datagram;
  size_t header = 0;  // bytes of IPv4 header in `datagram`
  int ttl = 64;
  std::span<const uint8_t> message() const {
    return std::span<const uint8_t>(datagram).subspan(header);
  }
};

class PingSocket;

// The raw ICMP sockets of one network namespace, to which its loopback ICMP is delivered.
class RawIcmpSockets {
 public:
  void Add(const std::shared_ptr<PingSocket>& s);
  void Remove(const PingSocket* s);
  // Gives `packet` to every raw socket of `family` that accepts it.
  void Deliver(int family, const IcmpPacket& packet);

 private:
  absl::Mutex mu_;  // a leaf: no socket lock is taken while it is held
  std::map<const PingSocket*, std::weak_ptr<PingSocket>> sockets_ ABSL_GUARDED_BY(mu_);
};

class PingSocket final : public Socket, public std::enable_shared_from_this<PingSocket> {
 public:
  // `type`: SOCK_DGRAM (a ping socket) or SOCK_RAW (a raw ICMP socket; the caller checked
  // CAP_NET_RAW and registers it with the stack's RawIcmpSockets).
  PingSocket(Stack& stack, int family, int type, int flags, const Ucred& owner);
  ~PingSocket() override;

  Result<void> Bind(std::span<const uint8_t> addr, PathOps& paths) override;
  Result<void> Listen(int, const Ucred&) override { return Errno(EOPNOTSUPP); }
  Result<vfs::FileRef> Accept(Caller&, bool) override { return Errno(EOPNOTSUPP); }
  Result<void> Connect(Caller& c, std::span<const uint8_t> addr, PathOps& paths) override;
  Result<void> Shutdown(int how) override;
  Result<SockAddr> SockName() override;
  Result<SockAddr> PeerName() override;
  Result<size_t> Send(Caller& c, SendRequest& req, PathOps& paths) override;
  Result<RecvResult> Recv(Caller& c, std::span<uint8_t> dst, int flags) override;
  Result<std::vector<uint8_t>> GetOption(int level, int name) override;
  Result<void> SetOption(int level, int name, std::span<const uint8_t> val) override;
  EventMask Readiness(EventMask mask) override;
  size_t InQueue() override;

  // A raw socket: queues `packet` unless its addresses or filter leave it out, or the
  // receive buffer is full (Linux drops it then).
  void DeliverRaw(const IcmpPacket& packet);

 private:
  struct Reply {
    std::vector<uint8_t> data;  // the ICMP message (a raw IPv4 socket's: behind its header)
    InetAddr from;
    int ttl = 64;
  };
  bool v6() const { return family_ == AF_INET6; }
  bool raw() const { return type_ == SOCK_RAW; }
  // The guest's sockaddr as an address of this socket's family (EINVAL / EAFNOSUPPORT).
  Result<InetAddr> ParseAddr(std::span<const uint8_t> addr);
  SockAddr Format(const InetAddr& a) const;
  // Whether `dst` is the sandbox's own; if not: ENETUNREACH under --net=none, EPERM (and
  // the denial line) when the egress policy refuses it.
  Result<bool> Local(const InetAddr& dst, const char* what);
  Result<void> AutobindLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(smu_);
  // Where a send goes: the address given (parsed as a ping or a raw socket parses it), else
  // the connected one (EDESTADDRREQ without).
  Result<InetAddr> SendDestination(const SendRequest& req);
  // Queues a datagram for recv, unless reading is shut down or the receive buffer is full
  // (Linux drops it then).
  void QueueLocked(Reply reply) ABSL_EXCLUSIVE_LOCKS_REQUIRED(smu_);
  // Puts `message` from `from` to `to` on the sandbox's loopback for every raw ICMP socket of
  // the namespace: as it is for ICMPv6, behind an IPv4 header (`df`: Don't Fragment) for ICMP.
  void DeliverToRawSockets(const InetAddr& from, const InetAddr& to, int ttl, bool df,
                           std::vector<uint8_t> message);
  // The reply the sandbox's loopback gives to a ping socket's `request` (already checked)
  // to `dst`.
  void AnswerLocally(std::vector<uint8_t> request, const InetAddr& dst);
  // A raw socket's send (netstack/raw_icmp.cc): the checks Linux's raw_sendmsg and
  // rawv6_sendmsg make, then loopback delivery or the host.
  Result<size_t> SendRaw(SendRequest& req);
  Result<InetAddr> ParseRawDestination(std::span<const uint8_t> addr);
  // Loops `message` from this raw socket to `dst` on the sandbox's loopback, then the answer
  // if it is an echo request Linux would answer.
  void SendRawLocally(std::vector<uint8_t> message, const InetAddr& dst);
  // The source address of what this socket sends on loopback.
  InetAddr LoopbackSource();
  bool RawAccepts(const IcmpPacket& packet) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(smu_);
  // The options a raw socket serves itself: ICMP_FILTER, ICMP6_FILTER, IP_HDRINCL,
  // IPV6_HDRINCL, IPV6_CHECKSUM.
  static bool IsRawOption(int level, int name);
  Result<std::vector<uint8_t>> GetRawOption(int level, int name);
  Result<void> SetRawOption(int level, int name, std::span<const uint8_t> val);
  Result<size_t> SendHost(std::span<const uint8_t> request, const InetAddr& dst);
  // A raw socket: finds the address the host sends from to `dst` (the destination of the
  // reply's IPv4 header, and what a bound socket is matched against), once per destination.
  void LearnHostSource(const InetAddr& dst);
  // One reply from the host socket, with the guest's ident (a ping socket) or id (a raw one,
  // which also gets the IPv4 header and its filters applied); nullopt when none is waiting.
  std::optional<Result<RecvResult>> RecvHost(std::span<uint8_t> dst, int flags)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(smu_);
  std::vector<IpCmsg> Cmsgs(int ttl) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(smu_);

  uint16_t ident_ ABSL_GUARDED_BY(smu_) = 0;  // host order; 0 until bound
  bool bound_ ABSL_GUARDED_BY(smu_) = false;
  bool bound_reuse_ ABSL_GUARDED_BY(smu_) = false;  // SO_REUSEADDR when the ident was taken
  InetAddr local_ ABSL_GUARDED_BY(smu_);
  std::optional<InetAddr> peer_ ABSL_GUARDED_BY(smu_);
  bool shut_rd_ ABSL_GUARDED_BY(smu_) = false;
  bool shut_wr_ ABSL_GUARDED_BY(smu_) = false;
  std::deque<Reply> rx_ ABSL_GUARDED_BY(smu_);
  size_t rx_bytes_ ABSL_GUARDED_BY(smu_) = 0;
  // IPPROTO_IP / IPPROTO_IPV6 options as set (IP_RECVTTL, IP_RECVERR, IP_TTL...).
  std::map<std::pair<int, int>, int> int_opts_ ABSL_GUARDED_BY(smu_);
  // --net=host: the host ping socket, made on the first echo that leaves. Kept until
  // destruction, so a pointer taken under smu_ stays valid while the caller holds the socket.
  std::unique_ptr<HostLink> host_ ABSL_GUARDED_BY(smu_);
  // Raw sockets only. The id of the last echo request sent through host_: its reply gets it
  // back (the host ping socket puts its own ident in both).
  uint16_t host_id_ ABSL_GUARDED_BY(smu_) = 0;  // network order
  // LearnHostSource's answer, for host_source_for_.
  InetAddr host_source_ ABSL_GUARDED_BY(smu_);
  std::optional<InetAddr> host_source_for_ ABSL_GUARDED_BY(smu_);
  // ICMP_FILTER (IPv4) and ICMP6_FILTER (IPv6): a set bit drops that type on delivery.
  uint32_t icmp_filter_ ABSL_GUARDED_BY(smu_) = 0;
  std::array<uint32_t, 8> icmp6_filter_ ABSL_GUARDED_BY(smu_) = {};
};

// ICMP numbers both kinds use (the echo types, the checksum's offset).
inline constexpr uint8_t kIcmpEchoRequest = 8, kIcmpEchoReply = 0;
inline constexpr uint8_t kIcmp6EchoRequest = 128, kIcmp6EchoReply = 129;
inline constexpr size_t kIcmpChecksumAt = 2;

// The sum of ICMPv6's pseudo-header (RFC 8200 section 8.1) for a message of `len` bytes.
uint32_t IcmpV6PseudoSum(const InetAddr& src, const InetAddr& dst, size_t len);
// The echo reply to `request` (an echo request as it went on the wire) from `from` to `to`:
// the type changed and the checksum recomputed (the family is `from`'s).
std::vector<uint8_t> EchoReply(std::vector<uint8_t> request, const InetAddr& from,
                               const InetAddr& to);
// Where a message to `dst` arrives on loopback: `dst` without a port, lo's own address for
// the wildcard.
InetAddr LoopbackDestination(const InetAddr& dst, bool v6);

// `message` (ICMP, protocol 1) behind the IPv4 header Linux would give it from `src` to
// `dst`: `df` as Linux sets it (on a raw socket's sends, not on its own ICMP answers).
IcmpPacket Ipv4IcmpPacket(const InetAddr& src, const InetAddr& dst, int ttl, bool df,
                          std::span<const uint8_t> message);

// The Internet checksum (RFC 1071) of `data`, continuing from `sum`.
uint16_t InetChecksum(std::span<const uint8_t> data, uint32_t sum = 0);

}  // namespace sentry::netstack
