// The review file: written by the Sentry from a workspace overlay's changes (ExportReview), read
// back by `sentry-run diff` and `apply` (review_apply.cc). See review.h for the format.
#include "runtime-shim/review.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "runtime-shim/review_format.h"
#include "runtime-shim/text_diff.h"
#include "sentry/base/wait_queue.h"
#include "vfs/file.h"
#include "vfs/overlay.h"

namespace sentry::shim {
namespace {

absl::Status WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::InternalError(std::string("writing the review: ") + strerror(errno));
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

std::string BaseOf(const std::optional<struct stat>& st) {
  if (!st) return "-";
  return FormatBase(*st);
}

absl::Status Err(const std::string& what, const Errno& e) {
  return absl::InternalError(what + ": " + strerror(e.code()));
}

}  // namespace

absl::StatusOr<int> CreateReviewFile(const std::string& workspace, std::string* path) {
  std::string dir = ReviewDir();
  if (auto s = MakeDirs(dir, 0700); !s.ok()) return s;
  std::string base = workspace.substr(workspace.find_last_of('/') + 1);
  if (base.empty()) base = "root";
  char stamp[32];
  time_t now = time(nullptr);
  struct tm tm;
  localtime_r(&now, &tm);
  strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
  *path = dir + "/" + base + "-" + stamp + "-" + std::to_string(getpid()) + ".review";
  int fd = open(path->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return absl::InternalError("review file " + *path + ": " + strerror(errno));
  return fd;
}

absl::StatusOr<size_t> ExportReview(const vfs::InodeRef& root, const std::string& workspace, int fd,
                                    int diff_fd) {
  auto changes = vfs::OverlayChanges(root);
  if (!changes.ok()) return Err("the workspace's changes", changes.error());
  std::string head = "sentry-review 1\nworkspace " + EscapePath(workspace) + "\n";
  if (auto s = WriteAll(fd, head); !s.ok()) return s;
  std::vector<ReviewEntry> listed;  // without their data: for the diff's list of files
  std::string diff;
  for (const vfs::OverlayChange& c : *changes) {
    ReviewEntry e;
    e.mode = c.mode;
    e.path = c.path;
    e.base = BaseOf(c.base);
    switch (c.kind) {
      case vfs::OverlayChange::Kind::kDelete:
        e.kind = 'X';
        break;
      case vfs::OverlayChange::Kind::kDir:
        e.kind = 'D';
        break;
      case vfs::OverlayChange::Kind::kFile: {
        e.kind = 'F';
        auto data = vfs::ReadWhole(*c.now);
        if (!data.ok()) return Err(c.path, data.error());
        e.data = std::move(*data);
        break;
      }
      case vfs::OverlayChange::Kind::kSymlink: {
        e.kind = 'L';
        auto target = c.now->ReadLink();
        if (!target.ok()) return Err(c.path, target.error());
        e.data = std::move(*target);
        break;
      }
    }
    if (auto s = WriteAll(fd, FormatEntry(e)); !s.ok()) return s;
    if (diff_fd >= 0) {
      std::optional<std::string> before;
      if (c.before && S_ISREG(c.base ? c.base->st_mode : 0)) {
        auto b = vfs::ReadWhole(*c.before);
        if (b.ok()) before = std::move(*b);
      }
      diff += EntryDiff(e, before);
    }
    if (e.kind == 'F') e.data.resize(std::min<size_t>(e.data.size(), 8192));  // LooksBinary
    listed.push_back(std::move(e));
  }
  if (auto s = WriteAll(fd, "end " + std::to_string(changes->size()) + "\n"); !s.ok()) return s;
  if (diff_fd >= 0) {
    diff += ChangeList(listed, {});
    if (auto s = WriteAll(diff_fd, diff); !s.ok()) return s;
  }
  return changes->size();
}

}  // namespace sentry::shim
