// Unified diffs of two texts, as `diff -u` prints them (sentry-run diff, review.h).
#pragma once

#include <string>
#include <string_view>

namespace sentry::shim {

// A text is binary when its first 8 KiB hold a NUL byte (what diff and git decide by).
bool LooksBinary(std::string_view text);

// The hunks (with `context` unchanged lines around each change) that turn `a` into `b`, each
// starting with "@@ -l,n +l,n @@"; "" when the texts are equal. Headers are the caller's.
// A line without a final newline is followed by "\ No newline at end of file".
std::string UnifiedHunks(std::string_view a, std::string_view b, int context = 3);

}  // namespace sentry::shim
