// The reviewable workspace's pieces: unified hunks, the review file's format, and the
// overlay's list of changes and protected paths (runtime-shim/review*.h, vfs/overlay.h).
#include <fcntl.h>

#include "gtest/gtest.h"
#include "runtime-shim/review_format.h"
#include "runtime-shim/text_diff.h"
#include "sentry/base/wait_queue.h"
#include "vfs/file.h"
#include "vfs/mem_inode.h"
#include "vfs/overlay.h"

namespace sentry::shim {
namespace {

TEST(UnifiedHunks, AddToEmpty) { EXPECT_EQ(UnifiedHunks("", "a\n"), "@@ -0,0 +1 @@\n+a\n"); }

TEST(UnifiedHunks, EqualTextsGiveNothing) { EXPECT_EQ(UnifiedHunks("a\nb\n", "a\nb\n"), ""); }

TEST(UnifiedHunks, LastLineLosesItsNewline) {
  EXPECT_EQ(UnifiedHunks("a\nb\n", "a\nb"),
            "@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n");
}

TEST(UnifiedHunks, DistantChangesAreSeparateHunks) {
  std::string a, b;
  for (int i = 0; i < 20; i++) {
    a += std::to_string(i) + "\n";
    b += (i == 1 || i == 18 ? "x" : std::to_string(i)) + "\n";
  }
  EXPECT_EQ(UnifiedHunks(a, b),
            "@@ -1,5 +1,5 @@\n 0\n-1\n+x\n 2\n 3\n 4\n"
            "@@ -16,5 +16,5 @@\n 15\n 16\n 17\n-18\n+x\n 19\n");
}

TEST(ReviewFormat, RoundTripsOddPathsAndBinaryData) {
  ReviewEntry e{'F', 0100644, "reg:3:1.000000002", "dir/with\nnewline\\and space", {"\0\n\1", 3}};
  std::string text = "sentry-review 1\nworkspace /w s\n" + FormatEntry(e) + "end 1\n";
  auto r = ParseReview(text);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->workspace, "/w s");
  ASSERT_EQ(r->entries.size(), 1u);
  EXPECT_EQ(r->entries[0].path, e.path);
  EXPECT_EQ(r->entries[0].data, e.data);
  EXPECT_EQ(r->entries[0].mode, 0100644u);
  EXPECT_EQ(r->entries[0].base, e.base);
}

TEST(ReviewFormat, ATruncatedFileIsRefused) {
  ReviewEntry e{'F', 0100644, "-", "a", "data"};
  std::string text = "sentry-review 1\nworkspace /w\n" + FormatEntry(e);
  EXPECT_FALSE(ParseReview(text).ok());
  EXPECT_FALSE(ParseReview(text + "end 2\n").ok());
}

std::string ReadAll(vfs::Inode& inode) {
  auto f = inode.Open(O_RDONLY);
  EXPECT_TRUE(f.ok());
  std::vector<uint8_t> buf(100);
  NoWaitBlocker nb;
  auto n = (*f)->PRead(nb, buf, 0);
  return std::string(buf.begin(), buf.begin() + static_cast<long>(n.ok() ? *n : 0));
}

void Write(vfs::Inode& inode, const std::string& text) {
  auto f = inode.Open(O_WRONLY);
  ASSERT_TRUE(f.ok());
  NoWaitBlocker nb;
  ASSERT_TRUE(
      (*f)->PWrite(nb, {reinterpret_cast<const uint8_t*>(text.data()), text.size()}, 0).ok());
}

TEST(OverlayChanges, ListsEditsDeletionsAndCreationsAndKeepsProtectedPaths) {
  vfs::Creds root;
  vfs::InodeRef lower = vfs::NewTmpfs(0755, 0, 0);
  auto kept = lower->Mknod("kept", S_IFREG | 0644, 0, root);
  auto edited = lower->Mknod("edited", S_IFREG | 0644, 0, root);
  auto gone = lower->Mknod("gone", S_IFREG | 0644, 0, root);
  auto rc = lower->Mknod(".bashrc", S_IFREG | 0644, 0, root);
  ASSERT_TRUE(kept.ok() && edited.ok() && gone.ok() && rc.ok());
  Write(**edited, "old\n");
  auto over = vfs::NewOverlayRoot(vfs::NewTmpfs(0755, 0, 0), lower,
                                  {.protected_paths = {".bashrc", ".git/hooks"}});
  ASSERT_TRUE(over.ok());
  auto e = (*over)->Lookup("edited");
  ASSERT_TRUE(e.ok());
  Write(**e, "new\n");
  ASSERT_TRUE((*over)->Unlink("gone", false).ok());
  ASSERT_TRUE((*over)->Mknod("made", S_IFREG | 0600, 0, root).ok());
  // Protected: the file itself, what would go below a protected directory, and the way there.
  auto b = (*over)->Lookup(".bashrc");
  ASSERT_TRUE(b.ok());
  auto opened = (*b)->Open(O_WRONLY);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.error().code(), EROFS);
  auto git = (*over)->Mkdir(".git", 0755, root);
  ASSERT_TRUE(git.ok());
  auto hooks = (*git)->Mkdir("hooks", 0755, root);
  ASSERT_FALSE(hooks.ok());
  EXPECT_EQ(hooks.error().code(), EROFS);
  auto rm_git = (*over)->Unlink(".git", true);
  ASSERT_FALSE(rm_git.ok());
  EXPECT_EQ(rm_git.error().code(), EROFS);
  EXPECT_EQ(ReadAll(**edited), "old\n");  // the lower never changes

  auto changes = vfs::OverlayChanges(*over);
  ASSERT_TRUE(changes.ok());
  std::vector<std::string> seen;
  for (const auto& c : *changes) {
    seen.push_back(std::to_string(static_cast<int>(c.kind)) + " " + c.path);
    if (c.path == "edited") {
      ASSERT_TRUE(c.base.has_value());
      EXPECT_EQ(c.base->st_size, 4);
      EXPECT_EQ(ReadAll(*c.now), "new\n");
      EXPECT_EQ(ReadAll(*c.before), "old\n");
    }
    if (c.path == "made") EXPECT_FALSE(c.base.has_value());
  }
  using K = vfs::OverlayChange::Kind;
  auto tag = [](K k, const char* p) { return std::to_string(static_cast<int>(k)) + " " + p; };
  EXPECT_EQ(seen, (std::vector<std::string>{tag(K::kDelete, "gone"), tag(K::kDir, ".git"),
                                            tag(K::kFile, "edited"), tag(K::kFile, "made")}));
}

}  // namespace
}  // namespace sentry::shim
