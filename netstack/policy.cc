#include "netstack/policy.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdio>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace sentry::netstack {
namespace {

// The address in `text` (IPv4 or IPv6) in IPv6 form, and its width in bits there.
std::optional<std::pair<std::array<uint8_t, 16>, int>> ParseIp(const std::string& text) {
  std::array<uint8_t, 16> ip{};
  if (inet_pton(AF_INET, text.c_str(), &ip[12]) == 1) {
    ip[10] = ip[11] = 0xff;
    return std::make_pair(ip, 32);
  }
  if (inet_pton(AF_INET6, text.c_str(), ip.data()) == 1) return std::make_pair(ip, 128);
  return std::nullopt;
}

bool ParsePorts(const std::string& text, NetRule& r) {
  size_t dash = text.find('-');
  uint32_t lo, hi;
  if (dash == std::string::npos) {
    if (!absl::SimpleAtoi(text, &lo)) return false;
    hi = lo;
  } else if (!absl::SimpleAtoi(text.substr(0, dash), &lo) ||
             !absl::SimpleAtoi(text.substr(dash + 1), &hi)) {
    return false;
  }
  if (lo < 1 || hi > 65535 || lo > hi) return false;
  r.port_lo = static_cast<uint16_t>(lo);
  r.port_hi = static_cast<uint16_t>(hi);
  return true;
}

bool ValidDomain(const std::string& d) {
  std::string rest = d.starts_with("*.") ? d.substr(2) : d;
  if (rest.empty() || rest.size() > 253) return false;
  // Labels of letters, digits, '-' and '_', neither starting nor ending with '-'.
  for (absl::string_view label : absl::StrSplit(rest, '.')) {
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') {
      return false;
    }
    for (char c : label) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') {
        return false;
      }
    }
  }
  return true;
}

std::string CanonicalName(std::string name) {
  name = absl::AsciiStrToLower(name);
  while (!name.empty() && name.back() == '.') name.pop_back();
  return name;
}

bool InPrefix(const std::array<uint8_t, 16>& ip, const std::array<uint8_t, 16>& net, int bits) {
  for (int i = 0; i < 16 && bits > 0; i++, bits -= 8) {
    uint8_t mask = bits >= 8 ? 0xff : static_cast<uint8_t>(0xff << (8 - bits));
    if ((ip[i] & mask) != (net[i] & mask)) return false;
  }
  return true;
}

}  // namespace

bool NetRule::MatchesName(const std::string& name) const {
  if (domain.empty()) return false;
  if (domain.starts_with("*.")) {
    std::string base = domain.substr(1);  // ".example.com"
    return name.size() > base.size() && name.ends_with(base);
  }
  return name == domain;
}

bool NetRule::MatchesAddress(const InetAddr& a) const {
  return prefix >= 0 && MatchesPort(a.port) && InPrefix(a.ip, ip, prefix);
}

std::optional<PublishedPort> ParsePublish(const std::string& text, std::string* error) {
  std::string ports_text = text;
  int protocol = IPPROTO_TCP;
  if (size_t slash = text.find('/'); slash != std::string::npos) {
    std::string proto = text.substr(slash + 1);
    if (proto != "tcp" && proto != "udp") {
      *error = "the protocol must be tcp or udp, got \"" + proto + "\"";
      return std::nullopt;
    }
    protocol = proto == "udp" ? IPPROTO_UDP : IPPROTO_TCP;
    ports_text = text.substr(0, slash);
  }
  std::vector<std::string> parts = absl::StrSplit(ports_text, ':');
  if (parts.size() > 2) {
    *error = "expected PORT or HOSTPORT:GUESTPORT";
    return std::nullopt;
  }
  uint16_t ports[2];
  for (size_t i = 0; i < 2; i++) {
    const std::string& t = parts[std::min(i, parts.size() - 1)];
    uint32_t v = 0;
    if (!absl::SimpleAtoi(t, &v) || v == 0 || v > 65535) {
      *error = "\"" + t + "\" is not a port (1-65535)";
      return std::nullopt;
    }
    ports[i] = static_cast<uint16_t>(v);
  }
  return PublishedPort{ports[0], ports[1], protocol};
}

std::optional<NetRule> ParseNetRule(const std::string& text, std::string* error) {
  NetRule r;
  r.text = text;
  std::string host = text, ports;
  if (text.starts_with("[")) {
    size_t close = text.find(']');
    if (close == std::string::npos) {
      *error = "unbalanced '['";
      return std::nullopt;
    }
    host = text.substr(1, close - 1);
    std::string after = text.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') {
        *error = "expected ':PORT' after ']'";
        return std::nullopt;
      }
      ports = after.substr(1);
    }
  } else if (std::count(text.begin(), text.end(), ':') == 1) {
    size_t colon = text.find(':');
    host = text.substr(0, colon);
    ports = text.substr(colon + 1);
  }
  if (host.empty()) {
    *error = "no domain or address";
    return std::nullopt;
  }
  if (!ports.empty() || text.ends_with(":")) {
    if (!ParsePorts(ports, r)) {
      *error = "bad port \"" + ports + "\" (expected PORT or PORT-PORT, 1-65535)";
      return std::nullopt;
    }
  }
  size_t slash = host.find('/');
  std::string addr = slash == std::string::npos ? host : host.substr(0, slash);
  if (auto ip = ParseIp(addr)) {
    r.ip = ip->first;
    int width = ip->second;
    int bits = width;
    if (slash != std::string::npos &&
        (!absl::SimpleAtoi(host.substr(slash + 1), &bits) || bits < 0 || bits > width)) {
      *error = "bad prefix length \"" + host.substr(slash + 1) + "\"";
      return std::nullopt;
    }
    r.prefix = (width == 32 ? 96 : 0) + bits;
    return r;
  }
  if (slash != std::string::npos) {
    *error = "\"" + addr + "\" is not an IP address";
    return std::nullopt;
  }
  r.domain = CanonicalName(host);
  if (!ValidDomain(r.domain)) {
    *error = "\"" + host + "\" is neither a domain, an IP address nor a CIDR range";
    return std::nullopt;
  }
  return r;
}

bool IsSpecialAddress(const InetAddr& a) {
  static const char* kRanges[] = {
      "0.0.0.0/8",   "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
      "172.16.0.0/12", "192.168.0.0/16", "::/128",  "::1/128",     "fc00::/7",
      "fe80::/10",
  };
  static const std::vector<NetRule> ranges = [] {
    std::vector<NetRule> v;
    std::string err;
    for (const char* r : kRanges) v.push_back(*ParseNetRule(r, &err));
    return v;
  }();
  for (const NetRule& r : ranges) {
    if (InPrefix(a.ip, r.ip, r.prefix)) return true;
  }
  return false;
}

EgressPolicy::EgressPolicy(std::vector<NetRule> allow, std::vector<NetRule> deny)
    : allow_(std::move(allow)), deny_(std::move(deny)) {}

bool EgressPolicy::NameAllowed(const std::string& raw) const {
  std::string name = CanonicalName(raw);
  for (const NetRule& r : deny_) {
    // A deny rule for some ports only still lets the name resolve (for the other ports).
    if (r.MatchesName(name) && r.port_lo <= 1 && r.port_hi == 65535) return false;
  }
  if (allow_.empty()) return true;
  for (const NetRule& r : allow_) {
    if (r.MatchesName(name)) return true;
  }
  return false;
}

void EgressPolicy::NoteResolved(const std::string& name, const InetAddr& addr) {
  absl::MutexLock l(&mu_);
  resolved_[addr.ip].insert(CanonicalName(name));
}

std::optional<std::string> EgressPolicy::Denied(const InetAddr& dst) {
  std::set<std::string> names;
  {
    absl::MutexLock l(&mu_);
    auto it = resolved_.find(dst.ip);
    if (it != resolved_.end()) names = it->second;
  }
  auto by_name = [&](const NetRule& r) {
    if (!r.MatchesPort(dst.port)) return false;
    for (const std::string& n : names) {
      if (r.MatchesName(n)) return true;
    }
    return false;
  };
  for (const NetRule& r : deny_) {
    if (r.MatchesAddress(dst) || by_name(r)) return "denied by --deny-net=" + r.text;
  }
  bool cidr_allowed = false;
  for (const NetRule& r : allow_) cidr_allowed |= r.MatchesAddress(dst);
  if (IsSpecialAddress(dst) && !cidr_allowed) {
    return std::string("private, link-local or loopback address: only a CIDR rule allows it");
  }
  if (allow_.empty() || cidr_allowed) return std::nullopt;
  for (const NetRule& r : allow_) {
    if (by_name(r)) return std::nullopt;
  }
  return std::string("not in allow list");
}

void EgressPolicy::ReportDenied(const char* what, const InetAddr& dst, const std::string& why) {
  std::string key = absl::StrCat(what, " ", dst.ToString());
  if (observer) observer(what, dst.ToString(), why);
  {
    absl::MutexLock l(&mu_);
    if (!reported_.insert(key).second) return;
  }
  fprintf(stderr, "sentry: network: denied %s to %s (%s)\n", what, dst.ToString().c_str(),
          why.c_str());
}

}  // namespace sentry::netstack
