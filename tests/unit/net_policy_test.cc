// The egress policy of --net=host: rule syntax and decisions (netstack/policy.h).
#include "netstack/policy.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

namespace sentry::netstack {
namespace {

NetRule Rule(const std::string& text) {
  std::string err;
  auto r = ParseNetRule(text, &err);
  EXPECT_TRUE(r.has_value()) << text << ": " << err;
  return r.value_or(NetRule{});
}

InetAddr Addr(const std::string& ip, uint16_t port) {
  InetAddr a;
  if (inet_pton(AF_INET, ip.c_str(), &a.ip[12]) == 1) {
    a.ip[10] = a.ip[11] = 0xff;
  } else {
    EXPECT_EQ(inet_pton(AF_INET6, ip.c_str(), a.ip.data()), 1) << ip;
  }
  a.port = port;
  return a;
}

TEST(NetRuleTest, ParsesEveryForm) {
  EXPECT_EQ(Rule("PyPI.org").domain, "pypi.org");
  EXPECT_EQ(Rule("*.github.com:443").port_lo, 443);
  EXPECT_EQ(Rule("*.github.com:443").port_hi, 443);
  NetRule r = Rule("10.0.0.0/8:5000-5010");
  EXPECT_EQ(r.prefix, 96 + 8);
  EXPECT_EQ(r.port_lo, 5000);
  EXPECT_EQ(r.port_hi, 5010);
  EXPECT_EQ(Rule("2001:db8::/32").prefix, 32);
  EXPECT_EQ(Rule("[2001:db8::/32]:443").port_lo, 443);
  EXPECT_EQ(Rule("203.0.113.7").prefix, 128);
}

TEST(NetRuleTest, RefusesBadRules) {
  for (const char* bad : {"", ":80", "a..b", "10.0.0.0/33", "host:0", "host:70000", "host:9-3",
                          "[::1", "[::1]x", "x/8", "bad name", "*.", "host:", "--", "-a.com",
                          "a-.com"}) {
    std::string err;
    EXPECT_FALSE(ParseNetRule(bad, &err).has_value()) << bad;
    EXPECT_FALSE(err.empty()) << bad;
  }
}

TEST(NetRuleTest, WildcardsMatchSubdomainsOnly) {
  NetRule r = Rule("*.example.com");
  EXPECT_TRUE(r.MatchesName("a.example.com"));
  EXPECT_TRUE(r.MatchesName("b.a.example.com"));
  EXPECT_FALSE(r.MatchesName("example.com"));
  EXPECT_FALSE(r.MatchesName("badexample.com"));
}

TEST(EgressPolicyTest, NoAllowRuleAllowsPublicOnly) {
  EgressPolicy p({}, {});
  EXPECT_FALSE(p.Denied(Addr("203.0.113.7", 443)).has_value());
  EXPECT_FALSE(p.Denied(Addr("2001:db8::1", 80)).has_value());
  for (const char* special : {"10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254",
                              "100.64.0.1", "127.0.0.1", "0.0.0.0", "fe80::1", "fd00::1", "::1"}) {
    EXPECT_TRUE(p.Denied(Addr(special, 80)).has_value()) << special;
  }
  EXPECT_TRUE(p.NameAllowed("anything.example"));
}

TEST(EgressPolicyTest, AllowedNamesOpenWhatTheyResolvedTo) {
  EgressPolicy p({Rule("pypi.org:443")}, {});
  EXPECT_TRUE(p.NameAllowed("PyPI.org."));
  EXPECT_FALSE(p.NameAllowed("evil.example"));
  InetAddr a = Addr("203.0.113.9", 443);
  EXPECT_TRUE(p.Denied(a).has_value());  // not resolved yet
  p.NoteResolved("pypi.org", a);
  EXPECT_FALSE(p.Denied(a).has_value());
  a.port = 80;
  EXPECT_TRUE(p.Denied(a).has_value());  // the rule's port only
}

TEST(EgressPolicyTest, SpecialRangesNeedACidrRule) {
  EgressPolicy by_name({Rule("meta.example")}, {});
  InetAddr meta = Addr("169.254.169.254", 80);
  by_name.NoteResolved("meta.example", meta);
  EXPECT_TRUE(by_name.Denied(meta).has_value());
  EgressPolicy by_cidr({Rule("169.254.169.254/32")}, {});
  EXPECT_FALSE(by_cidr.Denied(meta).has_value());
}

TEST(EgressPolicyTest, DenyWins) {
  EgressPolicy p({Rule("198.18.0.0/15")}, {Rule("198.18.0.2:8081"), Rule("bad.example")});
  EXPECT_FALSE(p.Denied(Addr("198.18.0.2", 8080)).has_value());
  EXPECT_TRUE(p.Denied(Addr("198.18.0.2", 8081)).has_value());
  EXPECT_FALSE(p.NameAllowed("bad.example"));
  InetAddr other = Addr("198.18.1.1", 80);
  p.NoteResolved("bad.example", other);
  EXPECT_TRUE(p.Denied(other).has_value());
}

TEST(PublishTest, ParsesPortAndMapping) {
  std::string err;
  auto same = ParsePublish("8080", &err);
  ASSERT_TRUE(same.has_value()) << err;
  EXPECT_EQ(same->host_port, 8080);
  EXPECT_EQ(same->guest_port, 8080);
  EXPECT_EQ(same->protocol, IPPROTO_TCP);
  auto mapped = ParsePublish("8081:80/tcp", &err);
  ASSERT_TRUE(mapped.has_value()) << err;
  EXPECT_EQ(mapped->host_port, 8081);
  EXPECT_EQ(mapped->guest_port, 80);
  EXPECT_EQ(mapped->protocol, IPPROTO_TCP);
  auto udp = ParsePublish("5353/udp", &err);
  ASSERT_TRUE(udp.has_value()) << err;
  EXPECT_EQ(udp->guest_port, 5353);
  EXPECT_EQ(udp->protocol, IPPROTO_UDP);
}

TEST(PublishTest, RefusesBadPorts) {
  for (const char* bad :
       {"", "0", "65536", "80:", ":80", "1:2:3", "http", "-1", "80:0", "80/sctp", "80/"}) {
    std::string err;
    EXPECT_FALSE(ParsePublish(bad, &err).has_value()) << bad;
    EXPECT_FALSE(err.empty()) << bad;
  }
}

}  // namespace
}  // namespace sentry::netstack
