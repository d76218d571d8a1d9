#include "sentry/base/errno.h"

#include <gtest/gtest.h>

namespace sentry {
namespace {

Result<int> Half(int v) {
  if (v % 2) return Errno(EINVAL);
  return v / 2;
}

Result<int> Quarter(int v) {
  int h = SENTRY_TRY(Half(v));
  return SENTRY_TRY(Half(h));
}

TEST(ErrnoTest, TryPropagatesTheFirstError) {
  EXPECT_EQ(*Quarter(8), 2);
  auto r = Quarter(6);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), EINVAL);
  EXPECT_NE(r.error().line(), 0);
  EXPECT_STREQ(ErrnoName(ENOENT), "ENOENT");
  EXPECT_STREQ(ErrnoName(kERESTARTSYS), "ERESTARTSYS");
}

}  // namespace
}  // namespace sentry
