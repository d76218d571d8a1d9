// The pieces of the review file's format and of its diff shared by the Sentry's writer
// (review.cc) and the host-side commands (review_apply.cc).
#pragma once

#include <sys/stat.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime-shim/review.h"

namespace sentry::shim {

// $XDG_STATE_HOME/sentry/reviews, else ~/.local/state/sentry/reviews.
std::string ReviewDir();
absl::Status MakeDirs(const std::string& dir, mode_t mode);

std::string EscapePath(const std::string& path);
std::string FormatBase(const struct stat& st);  // "dir", "reg:SIZE:SEC.NSEC", ...
std::string FormatEntry(const ReviewEntry& e);  // header line, data, "\n"

// Parses a whole review file; an incomplete one (no "end" line: the sandbox was killed while
// writing it) is an error.
absl::StatusOr<Review> ParseReview(const std::string& text);

// The unified diff of one entry: `before` is the file's old content when it was a regular
// file (nullopt: none, or not a regular file). Entries that are not files give "".
std::string EntryDiff(const ReviewEntry& e, const std::optional<std::string>& before);

// The list after the diff: created, deleted, modified, binary, symlinks, directories, modes;
// `notes` adds a remark to a path (e.g. that the host changed it since).
std::string ChangeList(const std::vector<ReviewEntry>& entries,
                       const std::map<std::string, std::string>& notes);

}  // namespace sentry::shim
