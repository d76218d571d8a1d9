// vfs/host_fd_cache: reopen on demand, identity checks, pinning.
#include "vfs/host_fd_cache.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace sentry::vfs {
namespace {

class HostFdCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sentry-fdcache-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    Write("a", "first");
  }
  void TearDown() override {
    unlink((dir_ + "/a").c_str());
    rmdir(dir_.c_str());
  }
  void Write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
    close(fd);
  }
  // An entry that opens dir_/a, counting its opens.
  std::shared_ptr<ReopenableFd> Entry() {
    std::string path = dir_ + "/a";
    return std::make_shared<ReopenableFd>([path, this]() -> Result<int> {
      opens_++;
      int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) return Errno(errno);
      return fd;
    });
  }
  static std::string ReadAll(int fd) {
    char buf[64];
    ssize_t n = pread(fd, buf, sizeof(buf), 0);
    return n > 0 ? std::string(buf, n) : "";
  }

  std::string dir_;
  int opens_ = 0;
};

TEST_F(HostFdCacheTest, ReopensOnDemandAfterRelease) {
  auto e = Entry();
  auto fd = e->Get();
  ASSERT_TRUE(fd.ok());
  EXPECT_EQ(ReadAll((*fd)->fd), "first");
  EXPECT_EQ(opens_, 1);
  EXPECT_EQ((*e->Get())->fd, (*fd)->fd);  // cached: no second open
  EXPECT_EQ(opens_, 1);
  int held = (*fd)->fd;
  EXPECT_TRUE(ReleaseIdleCachedFds());
  // A reference taken before the release keeps its fd open.
  EXPECT_EQ(fcntl(held, F_GETFD), FD_CLOEXEC);
  fd = Errno(EBADF);  // dropped: now it closes
  auto again = e->Get();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(opens_, 2);
  EXPECT_EQ(ReadAll((*again)->fd), "first");
}

TEST_F(HostFdCacheTest, ReplacedFileIsStale) {
  auto e = Entry();
  ASSERT_TRUE(e->Get().ok());
  std::string a = dir_ + "/a", b = dir_ + "/b";
  Write("b", "second");
  ASSERT_EQ(rename(b.c_str(), a.c_str()), 0);  // an editor's atomic save
  while (ReleaseIdleCachedFds()) {
  }
  auto fd = e->Get();
  ASSERT_FALSE(fd.ok());
  EXPECT_EQ(fd.error().code(), ESTALE);
}

TEST_F(HostFdCacheTest, PinnedFileSurvivesUnlink) {
  auto e = Entry();
  auto first = e->Get();
  ASSERT_TRUE(first.ok());
  struct stat st;
  ASSERT_EQ(fstat((*first)->fd, &st), 0);
  first = Errno(EBADF);
  while (ReleaseIdleCachedFds()) {
  }
  PinHostFile(st.st_dev, st.st_ino);  // reopens it while the name is there
  ASSERT_EQ(unlink((dir_ + "/a").c_str()), 0);
  while (ReleaseIdleCachedFds()) {
  }
  auto fd = e->Get();
  ASSERT_TRUE(fd.ok()) << fd.error().code();
  EXPECT_EQ(ReadAll((*fd)->fd), "first");
  Write("a", "for TearDown");
}

}  // namespace
}  // namespace sentry::vfs
