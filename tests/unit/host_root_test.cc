#include "vfs/host_root.h"

#include <gtest/gtest.h>

namespace sentry::vfs {
namespace {

TEST(HostRootTest, JoinNormalizes) {
  EXPECT_EQ(HostRoot::Join("/a/b", "c/./d"), "/a/b/c/d");
  EXPECT_EQ(HostRoot::Join("/a", "/x//y/"), "/x/y");
  EXPECT_EQ(HostRoot::Join("/", "."), "/");
}

TEST(HostRootTest, DotDotNeverLeavesTheRoot) {
  HostRoot root({"/usr"});
  auto n = root.Resolve("/../../usr/../usr/bin", true);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->path, "/usr/bin");
}

TEST(HostRootTest, UnexposedHostPathsDoNotExist) {
  HostRoot root({"/usr"});
  auto n = root.Resolve("/root", true);
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error().code(), ENOENT);
  auto f = root.Open("/proc/self/status", O_RDONLY, true);
  ASSERT_FALSE(f.ok());
}

TEST(HostRootTest, WritesAreRefused) {
  HostRoot root({"/usr"});
  auto f = root.Open("/usr/newfile", O_WRONLY | O_CREAT, true);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().code(), EROFS);
}

TEST(HostRootTest, DevicesAreThere) {
  HostRoot root({"/usr"});
  auto f = root.Open("/dev/null", O_RDWR, true);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ((*f)->Name(), "/dev/null");
}

}  // namespace
}  // namespace sentry::vfs
