// Pieces of the ping sockets (netstack/ping.h) that the conformance test cannot isolate: the
// checksum and the sharing rules of idents.
#include <arpa/inet.h>
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace sentry::netstack
