#include "vfs/pipe.h"

#include <gtest/gtest.h>

#include <thread>

#include "tests/unit/fake_blocker.h"

namespace sentry::vfs {
namespace {

TEST(PipeTest, NonBlockingFillsToCapacityThenEagain) {
  testing::FakeBlocker b;
  auto [r, w] = NewPipe(O_NONBLOCK);
  std::vector<uint8_t> chunk(4096, 'x');
  size_t total = 0;
  for (;;) {
    auto n = w->Write(b, chunk);
    if (!n.ok()) {
      EXPECT_EQ(n.error().code(), EAGAIN);
      break;
    }
    total += *n;
  }
  EXPECT_EQ(total, kPipeCapacity);
  std::vector<uint8_t> out(100);
  EXPECT_EQ(*r->Read(b, out), 100u);
}

TEST(PipeTest, ReadSeesEofAfterWriterCloses) {
  testing::FakeBlocker b;
  auto [r, w] = NewPipe(0);
  uint8_t msg[] = "hi";
  ASSERT_EQ(*w->Write(b, {msg, 2}), 2u);
  w.reset();
  std::vector<uint8_t> out(10);
  EXPECT_EQ(*r->Read(b, out), 2u);
  EXPECT_EQ(*r->Read(b, out), 0u);
}

TEST(PipeTest, BlockedReaderIsWokenByWriter) {
  auto [r, w] = NewPipe(0);
  std::thread writer([w = w] {
    testing::FakeBlocker b;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    uint8_t m[] = "z";
    (void)w->Write(b, {m, 1});
  });
  testing::FakeBlocker b;
  std::vector<uint8_t> out(4);
  EXPECT_EQ(*r->Read(b, out), 1u);
  EXPECT_EQ(out[0], 'z');
  writer.join();
}

TEST(PipeTest, WriteWithoutReaderIsEpipe) {
  testing::FakeBlocker b;
  auto [r, w] = NewPipe(0);
  r.reset();
  uint8_t m[] = "z";
  auto n = w->Write(b, {m, 1});
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error().code(), EPIPE);
}

}  // namespace
}  // namespace sentry::vfs
