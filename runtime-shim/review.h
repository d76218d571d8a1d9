// A reviewable workspace (sentry-run --workspace DIR:review): the guest works on an overlay of
// DIR; at exit its changes are written to a review file on the host, and nothing reaches DIR
// until `sentry-run apply` (after `sentry-run diff`) copies them there.
//
// A review file is text headers and raw bytes:
//   sentry-review 1
//   workspace PATH
//   KIND MODE BASE SIZE PATH      then SIZE bytes (file content, link target) and "\n"
//   ...
//   end COUNT
// KIND is F (a file now there), L (a symlink), D (a directory made, or its mode changed) or
// X (deleted: a file, or a directory with all below it). BASE is what the host had at PATH when
// the guest first changed it: "-" (nothing), "dir", or "reg:SIZE:SEC.NSEC" / "lnk:..." /
// "other:..." (size and mtime); `apply` refuses when the host no longer has that. PATH is
// relative to the workspace, with "\\" and "\n" escaped; it is the rest of the line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "vfs/inode.h"

namespace sentry::shim {

struct ReviewEntry {
  char kind = 0;  // 'F', 'L', 'D' or 'X'
  uint32_t mode = 0;
  std::string base;
  std::string path;
  std::string data;  // F: the file's bytes; L: the link's target
};

struct Review {
  std::string workspace;
  std::vector<ReviewEntry> entries;
};

// A new review file for `workspace` in ReviewDir() (created 0600); its path in `path`.
absl::StatusOr<int> CreateReviewFile(const std::string& workspace, std::string* path);

// In the Sentry at exit: writes the changes of the overlay `root` (mounted over `workspace`)
// to `fd`, and, when diff_fd >= 0, the diff of them against the overlay's lower layer.
// Returns how many changes there were.
absl::StatusOr<size_t> ExportReview(const vfs::InodeRef& root, const std::string& workspace, int fd,
                                    int diff_fd);

// `sentry-run diff [REVIEW|DIR]` and `sentry-run apply [REVIEW|DIR]`; argv[0] is the command.
int ReviewMain(int argc, char** argv);

}  // namespace sentry::shim
