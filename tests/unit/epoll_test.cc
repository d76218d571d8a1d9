#include "vfs/epoll.h"

#include <gtest/gtest.h>

#include <thread>

#include "tests/unit/fake_blocker.h"
#include "vfs/eventfd.h"
#include "vfs/pipe.h"
#include "vfs/timerfd.h"

namespace sentry::vfs {
namespace {

struct epoll_event Event(uint32_t events, uint64_t data) {
  struct epoll_event ev {};
  ev.events = events;
  ev.data.u64 = data;
  return ev;
}

std::vector<struct epoll_event> Poll(Epoll& ep, int max = 8) {
  testing::FakeBlocker b;
  auto r = ep.Wait(b, max, absl::InfinitePast());
  EXPECT_TRUE(r.ok());
  return r.ok() ? *r : std::vector<struct epoll_event>{};
}

void Post(FileDescription& f, uint64_t v) {
  testing::FakeBlocker b;
  ASSERT_EQ(*f.Write(b, {reinterpret_cast<const uint8_t*>(&v), sizeof(v)}), 8u);
}

struct CountingCallback final : WaitCallback {
  void OnNotify(EventMask) override { calls++; }
  int calls = 0;
};

TEST(WaitQueueTest, RegistrationMayOutliveItsQueue) {
  CountingCallback cb;
  WaitQueue::Registration reg;
  {
    WaitQueue q;
    reg = q.AddCallback(&cb, kEventIn);
    q.Notify(kEventOut);
    q.Notify(kEventIn);
  }
  EXPECT_EQ(cb.calls, 1);
  reg.Reset();  // the queue is gone: still safe
}

TEST(EpollTest, LevelAndEdgeTriggeredEventFd) {
  auto ep = NewEpoll();
  auto lt = NewEventFd(0, O_NONBLOCK);
  auto et = NewEventFd(0, O_NONBLOCK);
  ASSERT_TRUE(ep->Add(3, lt, Event(EPOLLIN, 1)).ok());
  ASSERT_TRUE(ep->Add(4, et, Event(EPOLLIN | EPOLLET, 2)).ok());
  EXPECT_TRUE(Poll(*ep).empty());
  Post(*lt, 1);
  Post(*et, 1);
  EXPECT_EQ(Poll(*ep).size(), 2u);
  auto again = Poll(*ep);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].data.u64, 1u);
  Post(*et, 1);  // a new edge although already readable
  EXPECT_EQ(Poll(*ep).size(), 2u);
  EXPECT_EQ(ep->Add(3, lt, Event(EPOLLIN, 1)).error().code(), EEXIST);
  EXPECT_EQ(ep->Delete(5, lt).error().code(), ENOENT);
}

TEST(EpollTest, RegistrationEndsWithTheFileNotItsPipe) {
  auto ep = NewEpoll();
  auto [r, w] = NewPipe(0);
  ASSERT_TRUE(ep->Add(3, r, Event(EPOLLIN, 1)).ok());
  r.reset();  // the pipe lives on through its write end
  testing::FakeBlocker b;
  uint8_t x = 'x';
  EXPECT_EQ(w->Write(b, {&x, 1}).error().code(), EPIPE);
  EXPECT_TRUE(Poll(*ep).empty());
}

TEST(EpollTest, WaitWakesWhenATimerFires) {
  auto ep = NewEpoll();
  auto tfd = std::make_shared<TimerFd>(CLOCK_MONOTONIC, O_RDWR);
  ASSERT_TRUE(ep->Add(3, tfd, Event(EPOLLIN, 9)).ok());
  tfd->Set({0, 20 * 1000000}, false);
  testing::FakeBlocker b;
  auto r = ep->Wait(b, 1, absl::Now() + absl::Seconds(5));
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].data.u64, 9u);
}

TEST(EpollTest, NestingLoopsAreRefused) {
  auto a = NewEpoll();
  auto b = NewEpoll();
  ASSERT_TRUE(a->Add(3, b, Event(EPOLLIN, 0)).ok());
  EXPECT_EQ(b->Add(4, a, Event(EPOLLIN, 0)).error().code(), ELOOP);
  EXPECT_EQ(a->Add(5, a, Event(EPOLLIN, 0)).error().code(), EINVAL);
}

}  // namespace
}  // namespace sentry::vfs
