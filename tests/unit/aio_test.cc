#include "sentry/kernel/aio.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/unit/fake_blocker.h"
#include "vfs/eventfd.h"
#include "vfs/pipe.h"

namespace sentry::kernel {
namespace {

// Waits up to 5 s for `n` events, taking them.
std::vector<AioEvent> TakeEvents(AioContext& ctx, size_t n) {
  std::vector<AioEvent> got;
  Waiter w;
  ScopedWait wait(ctx.queue(), w);
  absl::Time deadline = absl::Now() + absl::Seconds(5);
  while (got.size() < n) {
    ctx.Take(n - got.size(), [&](std::span<const AioEvent> evs) {
      got.insert(got.end(), evs.begin(), evs.end());
      return evs.size();
    });
    if (got.size() < n && !w.WaitUntil(deadline)) break;
  }
  return got;
}

TEST(AioTest, SizesAsLinux) {
  EXPECT_EQ(AioContext::Create(0x1000000).error().code(), EINVAL);
  EXPECT_EQ(AioContext::Create(0x80000000u).error().code(), EAGAIN);
  EXPECT_EQ(AioContext::Create(AioContext::kMaxNr + 1).error().code(), EAGAIN);
  auto ctx = *AioContext::Create(1000);
  EXPECT_EQ(ctx->nr_events(), 2047u);  // 2000 events and the header, rounded up to 16 pages
  EXPECT_EQ(ctx->ring_size(), 65536u);
  uint64_t before = AioContext::TotalRequested();
  ctx.reset();
  EXPECT_EQ(AioContext::TotalRequested(), before - 1000);
}

TEST(AioTest, ReserveStopsShortOfAFullRing) {
  auto ctx = *AioContext::Create(1);
  uint32_t n = 0;
  while (ctx->Reserve().ok()) n++;
  EXPECT_EQ(n, ctx->nr_events() - 1);
  for (uint32_t i = 0; i < n; i++) ctx->Complete({i, 0, 0, 0}, nullptr);
  EXPECT_EQ(ctx->Reserve().error().code(), EAGAIN);  // completed but not reaped
  auto evs = TakeEvents(*ctx, n);
  ASSERT_EQ(evs.size(), n);
  EXPECT_EQ(evs.back().data, n - 1);
  EXPECT_TRUE(ctx->Reserve().ok());
}

TEST(AioTest, PollCompletesOnWriteAndSignalsThePolledEventfd) {
  testing::FakeBlocker b;
  auto ctx = *AioContext::Create(4);
  auto [r, w] = vfs::NewPipe(0);
  ASSERT_TRUE(ctx->Reserve().ok());
  ctx->StartPoll(r, kEventIn | kEventErr | kEventHup, {1, 2, 0, 0}, nullptr);
  size_t early = ctx->Take(1, [](std::span<const AioEvent> evs) { return evs.size(); });
  EXPECT_EQ(early, 0u);
  uint8_t c = 'x';
  ASSERT_EQ(*w->Write(b, {&c, 1}), 1u);
  auto evs = TakeEvents(*ctx, 1);
  ASSERT_EQ(evs.size(), 1u);
  EXPECT_EQ(evs[0].res, kEventIn | kEventRdNorm);

  // An eventfd polled with itself as IOCB_FLAG_RESFD: no deadlock, and it counts the event.
  auto efd = vfs::NewEventFd(0, 0);
  ASSERT_TRUE(ctx->Reserve().ok());
  ctx->StartPoll(efd, kEventIn, {3, 4, 0, 0}, efd);
  uint64_t one = 1;
  ASSERT_TRUE(efd->Write(b, {reinterpret_cast<uint8_t*>(&one), 8}).ok());
  ASSERT_EQ(TakeEvents(*ctx, 1).size(), 1u);
  uint64_t v = 0;
  ASSERT_TRUE(efd->Read(b, {reinterpret_cast<uint8_t*>(&v), 8}).ok());
  EXPECT_EQ(v, 2u);
}

TEST(AioTest, CancelAndKill) {
  auto ctx = *AioContext::Create(4);
  auto [r, w] = vfs::NewPipe(0);
  ASSERT_TRUE(ctx->Reserve().ok());
  ctx->StartPoll(r, kEventIn, {7, 0x1000, 0, 0}, nullptr);
  EXPECT_EQ(ctx->Cancel(0x2000).error().code(), EINVAL);
  EXPECT_TRUE(ctx->Cancel(0x1000).ok());
  auto evs = TakeEvents(*ctx, 1);
  ASSERT_EQ(evs.size(), 1u);
  EXPECT_EQ(evs[0].res, 0);
  EXPECT_EQ(ctx->Cancel(0x1000).error().code(), EINVAL);
  ASSERT_TRUE(ctx->Reserve().ok());
  ctx->StartPoll(r, kEventIn, {8, 0x3000, 0, 0}, nullptr);
  ctx->Kill();
  EXPECT_TRUE(ctx->dead());
  EXPECT_EQ(ctx->Reserve().error().code(), EINVAL);
  w.reset();  // a wake-up after the kill reaches nothing
}

}  // namespace
}  // namespace sentry::kernel
