#include <signal.h>
#include <gtest/gtest.h>

#include "sentry/kernel/kernel.h"

namespace sentry::kernel {
namespace {

abi::SigInfo Info(int sig) {
  abi::SigInfo i{};
  i.signo = sig;
  return i;
}

TEST(PendingSignalsTest, StandardSignalsCoalesceRealtimeQueue) {
  PendingSignals p;
  p.Enqueue(Info(SIGUSR1));
  p.Enqueue(Info(SIGUSR1));
  p.Enqueue(Info(SIGRTMIN));
  p.Enqueue(Info(SIGRTMIN));
  EXPECT_EQ(p.queue.size(), 3u);
  EXPECT_EQ(p.Dequeue(0)->signo, SIGUSR1);
  EXPECT_EQ(p.Dequeue(0)->signo, SIGRTMIN);
  EXPECT_TRUE(p.set & abi::SigBit(SIGRTMIN));
  EXPECT_EQ(p.Dequeue(0)->signo, SIGRTMIN);
  EXPECT_FALSE(p.Dequeue(0).has_value());
}

TEST(PendingSignalsTest, BlockedStayPendingAndFaultsComeFirst) {
  PendingSignals p;
  p.Enqueue(Info(SIGTERM));
  p.Enqueue(Info(SIGHUP));
  p.Enqueue(Info(SIGSEGV));
  EXPECT_EQ(p.Dequeue(abi::SigBit(SIGHUP))->signo, SIGSEGV);
  EXPECT_EQ(p.Dequeue(abi::SigBit(SIGHUP))->signo, SIGTERM);
  EXPECT_FALSE(p.Dequeue(abi::SigBit(SIGHUP)).has_value());
  EXPECT_EQ(p.Dequeue(0)->signo, SIGHUP);
}

// A POSIX timer's signal queues even behind a pending standard signal of the same number
// (Linux's posixtimer_send_sigqueue); both are taken, the set bit clears after the second.
TEST(PendingSignalsTest, TimerSignalQueuesBehindStandardSignal) {
  PendingSignals p;
  p.Enqueue(Info(SIGALRM));
  abi::SigInfo timer = Info(SIGALRM);
  timer.code = abi::kSI_TIMER;
  timer.pad0 = abi::kSigInfoTimerMark;
  p.Enqueue(timer);
  p.Enqueue(Info(SIGALRM));  // a plain one still coalesces
  EXPECT_EQ(p.queue.size(), 2u);
  EXPECT_EQ(p.Dequeue(0)->code, 0);
  EXPECT_TRUE(p.set & abi::SigBit(SIGALRM));
  EXPECT_EQ(p.Dequeue(0)->code, abi::kSI_TIMER);
  EXPECT_FALSE(p.set & abi::SigBit(SIGALRM));
}

}  // namespace
}  // namespace sentry::kernel
