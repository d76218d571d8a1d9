// kernel/sched.h: CPU mask formats and what a clone child inherits.
#include "sentry/kernel/sched.h"

#include <gtest/gtest.h>

namespace sentry::kernel {
namespace {

CpuSet Of(std::initializer_list<int> cpus) {
  CpuSet s;
  for (int c : cpus) s.set(c);
  return s;
}

TEST(SchedTest, CpuListUsesRanges) {
  EXPECT_EQ(CpuList(Of({0, 1})), "0-1");
  EXPECT_EQ(CpuList(Of({0, 2, 3, 4, 7})), "0,2-4,7");
  EXPECT_EQ(CpuList(Of({5})), "5");
  EXPECT_EQ(CpuList(CpuSet{}), "");
}

TEST(SchedTest, CpuMaskHexIsAsWideAsTheCpuIds) {
  EXPECT_EQ(CpuMaskHex(Of({0, 1}), 2), "3");
  EXPECT_EQ(CpuMaskHex(Of({0, 4}), 8), "11");
  EXPECT_EQ(CpuMaskHex(Of({0, 32}), 36), "1,00000001");
  EXPECT_EQ(CpuMaskHex(Of({1}), 64), "00000000,00000002");
}

TEST(SchedTest, BytesRoundTrip) {
  CpuSet s = Of({0, 9, 63});
  uint8_t b[8];
  CpuSetToBytes(s, b);
  EXPECT_EQ(b[0], 1);
  EXPECT_EQ(b[1], 2);
  EXPECT_EQ(b[7], 0x80);
  EXPECT_EQ(CpuSetFromBytes(b), s);
}

TEST(SchedTest, ResetOnForkDropsRealTimeAndNegativeNice) {
  SchedState s;
  s.policy = kSchedRr;
  s.rt_priority = 5;
  s.nice = -3;
  s.reset_on_fork = true;
  s.ioprio = (2 << kIoprioClassShift) | 3;
  SchedState c = s.ForChild();
  EXPECT_EQ(c.policy, kSchedOther);
  EXPECT_EQ(c.rt_priority, 0);
  EXPECT_EQ(c.nice, 0);
  EXPECT_FALSE(c.reset_on_fork);
  EXPECT_EQ(c.ioprio, s.ioprio);
  s.reset_on_fork = false;
  s.ioprio = 0;  // a context without a class is not copied
  c = s.ForChild();
  EXPECT_EQ(c.policy, kSchedRr);
  EXPECT_EQ(c.nice, -3);
  EXPECT_EQ(c.ioprio, -1);
  EXPECT_EQ(c.EffectiveIoprio(), 0);
  EXPECT_EQ(s.ProcPriority(), -6);
}

}  // namespace
}  // namespace sentry::kernel
