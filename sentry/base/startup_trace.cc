#include "sentry/base/startup_trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace sentry::startup {
namespace {

struct Entry {
  const char* phase;
  int64_t ns;
};

constexpr int kMaxMarks = 48;
Entry g_marks[kMaxMarks];
std::atomic<int> g_count{0};

bool Enabled() {
  static const bool on = [] {
    const char* v = getenv("SENTRY_STARTUP_TRACE");
    return v != nullptr && v[0] != '\0' && v[0] != '0';
  }();
  return on;
}

int64_t NowNs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace

void Mark(const char* phase) {
  if (!Enabled()) return;
  int i = g_count.fetch_add(1, std::memory_order_relaxed);
  if (i < kMaxMarks) g_marks[i] = {phase, NowNs()};
}

void Report(const char* who) {
  if (!Enabled()) return;
  int n = std::min(g_count.load(), kMaxMarks);
  if (n == 0) return;
  int64_t base = g_marks[0].ns, prev = base;
  for (int i = 0; i < n; i++) {
    const Entry& e = g_marks[i];
    fprintf(stderr, "%s[%d]: start-up %8.3f ms (+%7.3f) %s\n", who, static_cast<int>(getpid()),
            (e.ns - base) / 1e6, (e.ns - prev) / 1e6, e.phase);
    prev = e.ns;
  }
}

}  // namespace sentry::startup
