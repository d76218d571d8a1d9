// Pieces of the ping and raw ICMP sockets (netstack/ping.h) that the conformance test cannot
// isolate: the checksum, the sharing rules of idents, and the IPv4 header a raw socket gets
// for a reply from a remote host (--net=host).
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "netstack/ping.h"

namespace sentry::netstack {
namespace {

TEST(InetChecksumTest, MatchesRfc1071Example) {
  // RFC 1071 section 3's example: the one's complement sum of these bytes is 0xddf2.
  std::vector<uint8_t> data = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
  EXPECT_EQ(ntohs(InetChecksum(data)), static_cast<uint16_t>(~0xddf2));
  // A message carrying its own checksum sums to zero.
  uint16_t sum = InetChecksum(data);
  data.push_back(static_cast<uint8_t>(ntohs(sum) >> 8));
  data.push_back(static_cast<uint8_t>(ntohs(sum) & 0xff));
  EXPECT_EQ(InetChecksum(data), 0);
}

TEST(InetChecksumTest, OddLengthPadsWithZero) {
  std::vector<uint8_t> odd = {0x12, 0x34, 0x56};
  std::vector<uint8_t> even = {0x12, 0x34, 0x56, 0x00};
  EXPECT_EQ(InetChecksum(odd), InetChecksum(even));
}

TEST(PingIdentsTest, SharedOnlyWhenEveryHolderReuses) {
  PingIdents ids;
  ASSERT_TRUE(ids.Take(false, 0x4242, true).ok());
  EXPECT_TRUE(ids.Take(false, 0x4242, true).ok());  // both reuse: shared
  auto refused = ids.Take(false, 0x4242, false);    // the newcomer does not
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), EADDRINUSE);
  EXPECT_TRUE(ids.Take(true, 0x4242, false).ok());  // IPv6 idents are apart
  auto v6_again = ids.Take(true, 0x4242, true);     // a holder does not reuse
  ASSERT_FALSE(v6_again.ok());
  ids.Release(false, 0x4242, true);
  ids.Release(false, 0x4242, true);
  EXPECT_TRUE(ids.Take(false, 0x4242, false).ok());  // free again
}

TEST(PingIdentsTest, AutobindSkipsHeldIdents) {
  PingIdents ids;
  auto first = ids.Take(false, 0, true);
  ASSERT_TRUE(first.ok());
  EXPECT_NE(*first, 0);
  ASSERT_TRUE(ids.Take(false, static_cast<uint16_t>(*first + 1), false).ok());
  auto second = ids.Take(false, 0, true);
  ASSERT_TRUE(second.ok());
  EXPECT_NE(*second, *first);
  EXPECT_NE(*second, *first + 1);
}

TEST(Ipv4IcmpPacketTest, HeaderAsLinuxWritesIt) {
  std::vector<uint8_t> msg = {0, 0, 0, 0, 0x04, 0xd2, 0, 6, 'a', 'b', 'c', 'd'};
  InetAddr far = InetAddr::V4(0xc6120002, 0);  // 198.18.0.2
  InetAddr me = InetAddr::V4(0xc6120001, 7);   // the port is not part of it
  IcmpPacket p = Ipv4IcmpPacket(far, me, 61, false, msg);
  ASSERT_EQ(p.header, 20u);
  ASSERT_EQ(p.datagram.size(), 20 + msg.size());
  const std::vector<uint8_t>& d = p.datagram;
  EXPECT_EQ(d[0], 0x45);
  EXPECT_EQ((d[2] << 8) | d[3], 32);
  EXPECT_EQ(d[6], 0);  // the host's answer: no Don't Fragment
  EXPECT_EQ(d[8], 61);
  EXPECT_EQ(d[9], IPPROTO_ICMP);
  EXPECT_EQ(InetChecksum(std::span<const uint8_t>(d).first(20)), 0);  // a valid header sum
  EXPECT_EQ(std::vector<uint8_t>(d.begin() + 12, d.begin() + 20),
            (std::vector<uint8_t>{198, 18, 0, 2, 198, 18, 0, 1}));
  EXPECT_TRUE(std::equal(msg.begin(), msg.end(), p.message().begin()));
  EXPECT_EQ(p.dst.port, 0);
  // Raw sends carry Don't Fragment, and each datagram its own id.
  IcmpPacket q = Ipv4IcmpPacket(me, far, 64, true, msg);
  EXPECT_EQ(q.datagram[6], 0x40);
  EXPECT_NE(std::vector<uint8_t>(d.begin() + 4, d.begin() + 6),
            std::vector<uint8_t>(q.datagram.begin() + 4, q.datagram.begin() + 6));
}

TEST(EchoReplyTest, Icmpv6ChecksumCoversThePseudoHeader) {
  std::vector<uint8_t> request = {kIcmp6EchoRequest, 0, 0, 0, 0x12, 0x34, 0, 1, 'x'};
  InetAddr lo = InetAddr::V6Loopback(0);
  std::vector<uint8_t> reply = EchoReply(request, lo, lo);
  EXPECT_EQ(reply[0], kIcmp6EchoReply);
  EXPECT_EQ(InetChecksum(reply, IcmpV6PseudoSum(lo, lo, reply.size())), 0);
  EXPECT_EQ(std::vector<uint8_t>(reply.begin() + 4, reply.end()),
            std::vector<uint8_t>(request.begin() + 4, request.end()));
}

}  // namespace
}  // namespace sentry::netstack
