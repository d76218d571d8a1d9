// The Sentry's allowlist in direct file access mode (runtime-shim/confine.cc): each case runs
// in a forked child that installs the real filter, makes one call and reports; a call the
// filter refuses kills the child with SIGSYS.
#include "runtime-shim/confine.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>

namespace sentry::shim {
namespace {

constexpr int kAllowed = 10;  // the call ran (whatever its result)
constexpr int kEnoent = 11;   // the call failed with ENOENT

// Forks; the child confines itself with `direct_files` and exits with what `call` returns.
// Returns the child's wait status.
int RunConfined(bool direct_files, const std::function<int()>& call) {
  pid_t pid = fork();
  if (pid == 0) {
    if (!ConfineSentry({.direct_files = direct_files}).ok()) _exit(2);
    _exit(call());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

bool Killed(int status) { return WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS; }
int Exit(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }

// What a call returned, as an exit code.
int Outcome(long r) { return r >= 0 ? kAllowed : errno == ENOENT ? kEnoent : kAllowed; }

class ConfineDirectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (getenv("SENTRY_SECCOMP_LOG") != nullptr) GTEST_SKIP() << "SENTRY_SECCOMP_LOG is set";
    char tmpl[] = "/tmp/confine_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    top_ = tmpl;
    close(open((top_ + "/file").c_str(), O_CREAT | O_WRONLY, 0644));
    dir_ = open(top_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(dir_, 0);
  }
  void TearDown() override {
    if (dir_ < 0) return;
    close(dir_);
    unlink((top_ + "/file").c_str());
    unlink((top_ + "/link").c_str());
    rmdir(top_.c_str());
  }
  std::string top_;
  int dir_ = -1;
};

TEST_F(ConfineDirectTest, OpenRelativeToAHeldDirectoryWithNoFollowIsAllowed) {
  int d = dir_;
  int s = RunConfined(true, [d] { return Outcome(openat(d, "file", O_RDONLY | O_NOFOLLOW)); });
  EXPECT_EQ(Exit(s), kAllowed) << s;
}

TEST_F(ConfineDirectTest, OpenWithoutNoFollowKills) {
  int d = dir_;
  EXPECT_TRUE(Killed(RunConfined(true, [d] { return Outcome(openat(d, "file", O_RDONLY)); })));
}

TEST_F(ConfineDirectTest, OpenByPathFindsNothingWhateverTheHighHalf) {
  std::string path = top_ + "/file";
  // glibc's AT_FDCWD (0x00000000ffffff9c), and the same low half under a set high half, which
  // the kernel also reads as AT_FDCWD.
  for (uint64_t fdcwd : {uint64_t{0xffffff9c}, uint64_t{0x12345678ffffff9c}}) {
    int s = RunConfined(true, [&] {
      return Outcome(syscall(SYS_openat, fdcwd, path.c_str(), O_RDONLY | O_NOFOLLOW));
    });
    EXPECT_EQ(Exit(s), kEnoent) << std::hex << fdcwd << " " << s;
  }
}

TEST_F(ConfineDirectTest, OtherNegativeDirfdsKill) {
  EXPECT_TRUE(Killed(RunConfined(true, [] {
    return Outcome(syscall(SYS_openat, uint64_t{0xffffff00}, "x", O_RDONLY | O_NOFOLLOW));
  })));
}

TEST_F(ConfineDirectTest, StatxByPathOrFollowingKills) {
  int d = dir_;
  struct statx sx;
  EXPECT_TRUE(Killed(RunConfined(true, [&] {
    return Outcome(statx(AT_FDCWD, "/", AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &sx));
  })));
  EXPECT_TRUE(Killed(
      RunConfined(true, [&] { return Outcome(statx(d, "file", 0, STATX_BASIC_STATS, &sx)); })));
  EXPECT_EQ(
      Exit(RunConfined(
          true,
          [&] { return Outcome(statx(d, "file", AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &sx)); })),
      kAllowed);
}

// Every change to the host file system is the gofer's, on lent fds (gofer/lend.cc): none of
// its calls is on the Sentry's list, direct file access or not.
TEST_F(ConfineDirectTest, ChangesKillEvenWithDirectFileAccess) {
  int d = dir_;
  EXPECT_TRUE(Killed(RunConfined(true, [d] { return Outcome(linkat(d, "file", d, "link", 0)); })));
  EXPECT_TRUE(Killed(RunConfined(true, [d] { return Outcome(mkdirat(d, "sub", 0755)); })));
  EXPECT_TRUE(Killed(RunConfined(true, [d] { return Outcome(unlinkat(d, "file", 0)); })));
  EXPECT_TRUE(Killed(RunConfined(true, [d] { return Outcome(renameat2(d, "file", d, "x", 0)); })));
  EXPECT_TRUE(Killed(RunConfined(
      true, [d] { return Outcome(fchmodat(d, "file", 04755, AT_SYMLINK_NOFOLLOW)); })));
  EXPECT_TRUE(Killed(RunConfined(
      true, [d] { return Outcome(mknodat(d, "dev", S_IFCHR | 0600, makedev(1, 3))); })));
}

TEST_F(ConfineDirectTest, GoferModeAllowsNoDirectCall) {
  int d = dir_;
  // openat answers ENOENT whatever its arguments, as before direct file access.
  EXPECT_EQ(
      Exit(RunConfined(false, [d] { return Outcome(openat(d, "file", O_RDONLY | O_NOFOLLOW)); })),
      kEnoent);
  EXPECT_TRUE(Killed(RunConfined(false, [d] { return Outcome(mkdirat(d, "sub", 0755)); })));
}

}  // namespace
}  // namespace sentry::shim
