#include "syscalls/table.h"

#include <asm/unistd.h>
#include <gtest/gtest.h>

namespace sentry::syscalls {
namespace {

TEST(SyscallTableTest, EveryNumberHasAnEntry) {
  for (int nr = 0; nr <= 334; nr++) EXPECT_NE(Lookup(nr), nullptr) << nr;
  for (int nr = 424; nr <= 450; nr++) {
    if (nr == 436) continue;  // no syscall has this number
    EXPECT_NE(Lookup(nr), nullptr) << nr;
  }
  EXPECT_EQ(Lookup(1000), nullptr);
  EXPECT_EQ(Lookup(~0ull), nullptr);
}

TEST(SyscallTableTest, NamesMatchNumbers) {
  EXPECT_STREQ(Lookup(__NR_read)->name, "read");
  EXPECT_STREQ(Lookup(__NR_clone3)->name, "clone3");
  EXPECT_EQ(Lookup(__NR_io_uring_setup)->support, Support::kUnimplemented);
  EXPECT_EQ(Lookup(__NR_io_uring_setup)->handler, nullptr);
  EXPECT_NE(Lookup(__NR_futex)->handler, nullptr);
}

}  // namespace
}  // namespace sentry::syscalls
