// The egress policy of --net=host: which destinations outside the sandbox a guest may reach.
//
// A rule is a domain (`pypi.org`, `*.github.com`), a CIDR (`10.0.0.0/8`, `2001:db8::/32`) or a
// single IP, optionally followed by `:PORT` or `:PORT-PORT` (an IPv6 rule with a port is
// written in brackets: `[2001:db8::/32]:443`). Deny rules win over allow rules. With no allow
// rule every public destination is allowed; with one, only what an allow rule names.
//
// Domains hold without a proxy because the Sentry answers the guest's DNS (netstack/dns.h):
// a name that no rule allows never resolves, and the addresses an allowed name resolved to in
// this sandbox become reachable, with that rule's ports. Special ranges (private, shared,
// link-local and the host's loopback, where cloud metadata services and a host's own daemons
// live) are reachable only through a CIDR rule that covers the address: a name that resolves
// there is not enough.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "netstack/inet.h"

namespace sentry::netstack {

struct NetRule {
  // Exactly one of `domain` (lower case; "*.x" also matches x's subdomains, never x itself)
  // and the address range (`ip`, `prefix`) is set.
  std::string domain;
  std::array<uint8_t, 16> ip{};  // IPv6 form; IPv4 as ::ffff:a.b.c.d
  int prefix = -1;               // bits of `ip` that must match; -1 for a domain rule
  uint16_t port_lo = 0, port_hi = 65535;
  std::string text;  // as given, for messages

  bool MatchesName(const std::string& name) const;
  bool MatchesAddress(const InetAddr& a) const;  // the range and the port
  bool MatchesPort(uint16_t port) const { return port >= port_lo && port <= port_hi; }
};

// Parses one rule; the error says what is wrong with it.
std::optional<NetRule> ParseNetRule(const std::string& text, std::string* error);

// --publish=PORT[:GUESTPORT][/tcp|/udp] (network.publish): the host port, the guest port it
// reaches (the same when GUESTPORT is left out), both 1-65535, and the protocol (TCP unless
// "/udp"); the error says what is wrong.
struct PublishedPort {
  uint16_t host_port = 0;
  uint16_t guest_port = 0;
  int protocol = 0;  // IPPROTO_TCP or IPPROTO_UDP
};
std::optional<PublishedPort> ParsePublish(const std::string& text, std::string* error);

// True for an address in a range that needs a CIDR rule (RFC 1918, 100.64/10, 169.254/16,
// 127/8, 0/8, fc00::/7, fe80::/10, ::1, ::).
bool IsSpecialAddress(const InetAddr& a);

class EgressPolicy {
 public:
  EgressPolicy(std::vector<NetRule> allow, std::vector<NetRule> deny);

  // May the guest learn the addresses of `name`?
  bool NameAllowed(const std::string& name) const;
  // Remembers that `name` resolved to `addr` in this sandbox.
  void NoteResolved(const std::string& name, const InetAddr& addr);
  // Whether a connection or datagram to `dst` may go out; if not, why (for the message).
  std::optional<std::string> Denied(const InetAddr& dst);
  // Prints the denial line on stderr, once per destination and kind, and tells the observer
  // (every time).
  void ReportDenied(const char* what, const InetAddr& dst, const std::string& why);
  // Called on each denial, from the denied task's thread (the audit trail); set before use.
  std::function<void(const char* what, const std::string& dst, const std::string& why)>
      observer;
  // Whether the Sentry answers the guest's DNS (dns.h); false: queries go out as any other
  // datagram or connection, to the server the guest's resolv.conf names (an OCI container,
  // whose network namespace and resolv.conf are the container manager's). Set before use.
  bool answer_dns = true;

 private:
  const std::vector<NetRule> allow_;
  const std::vector<NetRule> deny_;
  absl::Mutex mu_;
  // Address -> the names that resolved to it in this sandbox.
  std::map<std::array<uint8_t, 16>, std::set<std::string>> resolved_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> reported_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sentry::netstack
