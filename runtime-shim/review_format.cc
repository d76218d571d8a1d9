#include "runtime-shim/review_format.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "runtime-shim/text_diff.h"

namespace sentry::shim {
namespace {

std::string UnescapePath(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      out += s[i + 1] == 'n' ? '\n' : s[i + 1];
      i++;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string Octal(uint32_t mode) {
  char buf[16];
  snprintf(buf, sizeof(buf), "%o", mode);
  return buf;
}

// The content's state for the list: the base says what was there before.
bool WasFile(const ReviewEntry& e) { return e.base.rfind("reg:", 0) == 0; }
bool WasThere(const ReviewEntry& e) { return e.base != "-"; }

}  // namespace

std::string ReviewDir() {
  if (const char* state = getenv("XDG_STATE_HOME"); state != nullptr && state[0] == '/') {
    return std::string(state) + "/sentry/reviews";
  }
  const char* home = getenv("HOME");
  return std::string(home != nullptr && home[0] == '/' ? home : "/tmp") +
         "/.local/state/sentry/reviews";
}

absl::Status MakeDirs(const std::string& dir, mode_t mode) {
  for (size_t i = 1; i <= dir.size(); i++) {
    if (i != dir.size() && dir[i] != '/') continue;
    std::string prefix = dir.substr(0, i);
    if (mkdir(prefix.c_str(), mode) != 0 && errno != EEXIST) {
      return absl::InternalError(prefix + ": " + strerror(errno));
    }
  }
  return absl::OkStatus();
}

std::string EscapePath(const std::string& path) {
  std::string out;
  for (char c : path) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatBase(const struct stat& st) {
  if (S_ISDIR(st.st_mode)) return "dir";
  const char* kind = S_ISREG(st.st_mode) ? "reg" : S_ISLNK(st.st_mode) ? "lnk" : "other";
  char buf[96];
  snprintf(buf, sizeof(buf), "%s:%lld:%lld.%09ld", kind, static_cast<long long>(st.st_size),
           static_cast<long long>(st.st_mtim.tv_sec), st.st_mtim.tv_nsec);
  return buf;
}

std::string FormatEntry(const ReviewEntry& e) {
  std::string out = std::string(1, e.kind) + " " + Octal(e.mode) + " " + e.base + " " +
                    std::to_string(e.data.size()) + " " + EscapePath(e.path) + "\n";
  out += e.data;
  out += "\n";
  return out;
}

absl::StatusOr<Review> ParseReview(const std::string& text) {
  Review r;
  size_t pos = 0;
  auto line = [&](std::string* out) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) return false;
    *out = text.substr(pos, nl - pos);
    pos = nl + 1;
    return true;
  };
  auto bad = [](const std::string& why) {
    return absl::InvalidArgumentError("not a complete review file (" + why + ")");
  };
  std::string l;
  if (!line(&l) || l != "sentry-review 1") return bad("no header");
  if (!line(&l) || l.rfind("workspace ", 0) != 0) return bad("no workspace line");
  r.workspace = UnescapePath(l.substr(10));
  for (;;) {
    if (!line(&l)) return bad("no end line: the sandbox ended while writing it");
    if (l.rfind("end ", 0) == 0) {
      if (std::to_string(r.entries.size()) != l.substr(4)) return bad("entry count");
      return r;
    }
    ReviewEntry e;
    char kind = 0, base[128] = {0};
    unsigned mode = 0;
    unsigned long long size = 0;
    int path_at = 0;
    if (sscanf(l.c_str(), "%c %o %127s %llu %n", &kind, &mode, base, &size, &path_at) != 4 ||
        path_at == 0 || std::string("FLDX").find(kind) == std::string::npos ||
        size > text.size() - pos) {
      return bad("bad entry line");
    }
    e.kind = kind;
    e.mode = mode;
    e.base = base;
    e.path = UnescapePath(l.substr(path_at));
    e.data = text.substr(pos, size);
    pos += size;
    if (pos >= text.size() || text[pos] != '\n') return bad("bad entry data");
    pos++;
    r.entries.push_back(std::move(e));
  }
}

std::string EntryDiff(const ReviewEntry& e, const std::optional<std::string>& before) {
  if (e.kind != 'F' && !(e.kind == 'X' && before)) return "";
  std::string a = before.value_or("");
  std::string b = e.kind == 'F' ? e.data : "";
  if (before && *before == b) return "";
  std::string from = before ? "a/" + e.path : "/dev/null";
  std::string to = e.kind == 'F' ? "b/" + e.path : "/dev/null";
  if (LooksBinary(a) || LooksBinary(b)) {
    return "Binary files " + from + " and " + to + " differ\n";
  }
  std::string hunks = UnifiedHunks(a, b);
  if (hunks.empty()) return "";
  return "--- " + from + "\n+++ " + to + "\n" + hunks;
}

std::string ChangeList(const std::vector<ReviewEntry>& entries,
                       const std::map<std::string, std::string>& notes) {
  std::string out;
  for (const ReviewEntry& e : entries) {
    std::string what;
    switch (e.kind) {
      case 'X':
        what =
            e.base == "dir" ? "deleted:   " + e.path + "/ (and all in it)" : "deleted:   " + e.path;
        break;
      case 'D':
        what = WasThere(e) ? "mode:      " + e.path + "/ now " + Octal(e.mode & 07777)
                           : "directory: " + e.path + "/";
        break;
      case 'L':
        what =
            "symlink:   " + e.path + " -> " + e.data + (WasThere(e) ? " (replaced)" : " (created)");
        break;
      case 'F':
        what = !WasFile(e) ? "created:   " + e.path : "modified:  " + e.path;
        if (LooksBinary(e.data)) what += " (binary)";
        break;
    }
    if (auto it = notes.find(e.path); it != notes.end()) what += " [" + it->second + "]";
    out += what + "\n";
  }
  return out;
}

}  // namespace sentry::shim
