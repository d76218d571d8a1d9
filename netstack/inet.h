// AF_INET and AF_INET6 inside the sandbox: TCP over a StreamConn and UDP datagrams, between
// sockets bound to loopback (127.0.0.0/8, ::1) or to the wildcard address. Traffic to any
// other address fails with ENETUNREACH under --net=none; under --net=host it goes through a
// host socket (netstack/host.h) once the egress policy allows the destination, and DNS
// queries to port 53 anywhere are answered by the Sentry (netstack/dns.h).
//
// Addresses are kept in IPv6 form (IPv4 as ::ffff:a.b.c.d) and shown in the socket's own
// family, so IPv4-mapped IPv6 works as on Linux.
#pragma once

#include <array>
#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "netstack/socket.h"
#include "netstack/stream.h"

namespace sentry::netstack {
class HostLink;
}

namespace sentry::netstack {

struct InetAddr {
  std::array<uint8_t, 16> ip{};
  uint16_t port = 0;  // host order
  uint32_t flowinfo = 0;
  uint32_t scope_id = 0;

  bool IsV4() const;   // ::ffff:a.b.c.d
  bool IsAny() const;  // :: or 0.0.0.0
  bool IsLoopback() const;
  bool SameIp(const InetAddr& o) const { return ip == o.ip; }
  static InetAddr V4(uint32_t host_order_ip, uint16_t port);
  static InetAddr V6Loopback(uint16_t port);
  std::string ToString() const;
};

// `a` as a sockaddr_in (`v6` false: `a` is IPv4-mapped) or sockaddr_in6, for getsockname,
// getpeername and recvfrom of any inet socket.
SockAddr FormatSockAddr(const InetAddr& a, bool v6);

class InetSocket;

// The ports of the sandbox's loopback, per protocol.
class InetPorts {
 public:
  struct Binding {
    std::weak_ptr<InetSocket> socket;
    InetSocket* raw = nullptr;
    InetAddr addr;
    bool v6 = false;  // the socket is AF_INET6
    bool v6only = false;
    bool reuseaddr = false;
    bool reuseport = false;
    uint32_t uid = 0;
  };
  // Binds `b` (port 0: an ephemeral port); returns the port. EADDRINUSE on a conflict.
  Result<uint16_t> Bind(int proto, Binding b);
  void Unbind(int proto, uint16_t port, const InetSocket* s);
  // The sockets bound to `dst`'s port whose address and family accept `dst`, exact
  // addresses first.
  std::vector<std::shared_ptr<InetSocket>> Find(int proto, const InetAddr& dst, bool from_v6);
  std::vector<std::shared_ptr<InetSocket>> All(int proto);

 private:
  static bool Overlap(const Binding& a, const Binding& b);
  static bool Accepts(const Binding& b, const InetAddr& dst, bool from_v6);

  absl::Mutex mu_;
  std::map<std::pair<int, uint16_t>, std::vector<Binding>> ports_ ABSL_GUARDED_BY(mu_);
  std::mt19937 rng_ ABSL_GUARDED_BY(mu_){std::random_device{}()};
};

class InetSocket final : public Socket, public std::enable_shared_from_this<InetSocket> {
 public:
  InetSocket(Stack& stack, int family, int type, int protocol, int flags, const Ucred& owner);
  ~InetSocket() override;

  Result<void> Bind(std::span<const uint8_t> addr, PathOps& paths) override;
  Result<void> Listen(int backlog, const Ucred& cred) override;
  Result<vfs::FileRef> Accept(Caller& c, bool nonblock) override;
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
  size_t OutQueue() override;

  bool tcp() const { return type_ == SOCK_STREAM; }
  // Read by the port table without the socket's lock (which it may not take).
  bool listening() const { return listening_.load(std::memory_order_acquire); }
  // For /proc/net/{tcp,udp}{,6}: the local and remote address and the TCP state number.
  std::string ProcLine(int slot);

 private:
  enum class State { kClosed, kListening, kConnected, kRefused };
  struct Datagram {
    std::vector<uint8_t> data;
    InetAddr from;
    InetAddr to;  // the destination as sent (IP_PKTINFO / IPV6_PKTINFO)
    int hoplimit = 64;
    int tclass = 0;
  };
  // The IP control messages this socket asked for (IP_PKTINFO, IPV6_RECVHOPLIMIT...).
  std::vector<IpCmsg> RecvCmsgs(const Datagram& d) ABSL_EXCLUSIVE_LOCKS_REQUIRED(smu_);
  // The value an int option was set to (IPPROTO_IP, IPV6, TCP, UDP levels), or `def`.
  int IntOpt(int level, int name, int def) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(smu_);

  Result<InetAddr> ParseAddr(std::span<const uint8_t> addr, bool for_bind);
  SockAddr Format(const InetAddr& a) const;
  // Binds to an ephemeral port on the address `toward` is reached from, if not bound.
  Result<void> AutobindLocked(const InetAddr& toward) ABSL_EXCLUSIVE_LOCKS_REQUIRED(smu_);
  // The address a connection or datagram to `dst` goes to: the wildcard means loopback;
  // anything but loopback is unreachable, or under --net=host `external`.
  Result<InetAddr> Route(const InetAddr& dst, bool* external);
  Result<void> ConnectTcp(Caller& c, const InetAddr& dst);
  // --net=host: a connection through a host socket, or to the Sentry's DNS (port 53).
  Result<void> ConnectHostTcp(Caller& c, const InetAddr& dst);
  Result<void> ConnectDnsTcp(Caller& c, const InetAddr& dst);
  // --publish: a connection that reached the host listener `h`, as a relayed socket.
  std::optional<Result<vfs::FileRef>> AcceptHost(HostLink& h);
  // Answers the complete DNS messages the guest wrote to a ConnectDnsTcp connection.
  void PumpDns();
  Result<size_t> SendHost(Caller& c, HostLink& h, SendRequest& req, const InetAddr* to);
  Result<RecvResult> RecvHostTcp(Caller& c, HostLink& h, std::span<uint8_t> dst, int flags);
  // The UDP host socket (made on first use), for datagrams to `to`.
  Result<HostLink*> HostUdp(const InetAddr& to);
  HostLink* host();
  // Bounds the connection's queues by SO_SNDBUF and SO_RCVBUF where the guest set them (a
  // loopback connection otherwise holds kTcpCapacity each way).
  void ApplyBuffers();
  Result<size_t> SendUdp(Caller& c, SendRequest& req);
  Result<RecvResult> RecvUdp(Caller& c, std::span<uint8_t> dst, int flags);
  bool DeliverUdp(std::span<const uint8_t> data, const InetAddr& from, const InetAddr& to,
                  int hoplimit, int tclass);
  std::shared_ptr<StreamConn> conn();

  std::atomic<bool> listening_{false};
  bool v6only_ ABSL_GUARDED_BY(smu_) = false;
  bool bound_ ABSL_GUARDED_BY(smu_) = false;
  InetAddr local_ ABSL_GUARDED_BY(smu_);
  InetAddr peer_ ABSL_GUARDED_BY(smu_);
  State state_ ABSL_GUARDED_BY(smu_) = State::kClosed;
  bool udp_connected_ ABSL_GUARDED_BY(smu_) = false;
  bool shut_rd_ ABSL_GUARDED_BY(smu_) = false;
  bool shut_wr_ ABSL_GUARDED_BY(smu_) = false;
  std::shared_ptr<StreamConn> conn_ ABSL_GUARDED_BY(smu_);
  int side_ ABSL_GUARDED_BY(smu_) = 0;
  std::deque<std::shared_ptr<InetSocket>> backlog_ ABSL_GUARDED_BY(smu_);
  int backlog_max_ ABSL_GUARDED_BY(smu_) = 0;
  std::deque<Datagram> rx_ ABSL_GUARDED_BY(smu_);
  size_t rx_bytes_ ABSL_GUARDED_BY(smu_) = 0;
  // Options kept for getsockopt: IPPROTO_IP, IPPROTO_IPV6, IPPROTO_TCP.
  std::map<std::pair<int, int>, int> int_opts_ ABSL_GUARDED_BY(smu_);
  bool sndbuf_set_ ABSL_GUARDED_BY(smu_) = false;
  bool rcvbuf_set_ ABSL_GUARDED_BY(smu_) = false;
  // --net=host: the host socket this one relays through. Set once, kept until destruction,
  // so a pointer taken under smu_ stays valid while the caller holds the socket.
  std::unique_ptr<HostLink> host_ ABSL_GUARDED_BY(smu_);
  // A TCP connection to the Sentry's DNS: side 1 of conn_ is the Sentry's answering end.
  std::atomic<bool> dns_tcp_{false};
  absl::Mutex dns_mu_;  // taken without smu_: answering may wait for the host's resolver
  std::vector<uint8_t> dns_in_ ABSL_GUARDED_BY(dns_mu_);
};

}  // namespace sentry::netstack
