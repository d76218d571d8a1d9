#include "runtime-shim/path_glob.h"

#include <dirent.h>
#include <fnmatch.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_split.h"

namespace sentry::shim {
namespace {

struct Walk {
  std::vector<std::string> comps;
  std::vector<std::string> out;
  int entries = 0;
  bool warned = false;

  // The names in `dir`, counted against kMaxGlobEntries.
  std::vector<std::string> List(const std::string& dir) {
    std::vector<std::string> names;
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) return names;
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n == "." || n == "..") continue;
      if (++entries > kMaxGlobEntries) {
        if (!warned) {
          fprintf(stderr, "sentry-run: a glob's walk stopped after %d entries (under %s)\n",
                  kMaxGlobEntries, dir.c_str());
          warned = true;
        }
        break;
      }
      names.push_back(std::move(n));
    }
    closedir(d);
    return names;
  }

  static std::string Join(const std::string& dir, const std::string& name) {
    return dir == "/" ? "/" + name : dir + "/" + name;
  }

  // Matches comps[i..] under `path`, which exists. `dev` is the device the `**` at comps[i]
  // walks on (0: the walk starts here, on `path`'s device).
  void Match(const std::string& path, size_t i, dev_t dev = 0) {
    if (i == comps.size()) {
      out.push_back(path);
      return;
    }
    const std::string& c = comps[i];
    if (c == "**") {
      struct stat here;
      if (dev == 0) {
        if (lstat(path.c_str(), &here) != 0) return;
        dev = here.st_dev;
      }
      Match(path, i + 1);  // no component
      for (const auto& name : List(path)) {
        std::string child = Join(path, name);
        struct stat st;
        if (lstat(child.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_dev != dev) continue;
        Match(child, i, dev);
      }
      return;
    }
    if (!HasGlob(c)) {
      std::string child = Join(path, c);
      struct stat st;
      if (lstat(child.c_str(), &st) == 0) Match(child, i + 1);
      return;
    }
    for (const auto& name : List(path)) {
      if (fnmatch(c.c_str(), name.c_str(), 0) != 0) continue;
      std::string child = Join(path, name);
      struct stat st;
      if (lstat(child.c_str(), &st) == 0) Match(child, i + 1);
    }
  }
};

}  // namespace

bool HasGlob(const std::string& path) { return path.find_first_of("*?[") != std::string::npos; }

std::string CheckGlob(const std::string& pattern) {
  for (const auto& c : absl::StrSplit(pattern, '/')) {
    if (c.find("**") != std::string_view::npos && c != "**") {
      return "'**' must be a whole path component";
    }
    int depth = 0;
    for (size_t i = 0; i < c.size(); i++) {
      if (c[i] == '\\') {
        i++;
      } else if (c[i] == '[') {
        depth = 1;
      } else if (c[i] == ']') {
        depth = 0;
      }
    }
    if (depth != 0) return "unbalanced '['";
  }
  return "";
}

std::vector<std::string> ExpandGlob(const std::string& pattern) {
  Walk w;
  for (auto c : absl::StrSplit(pattern, '/', absl::SkipEmpty())) w.comps.emplace_back(c);
  w.Match("/", 0);
  std::sort(w.out.begin(), w.out.end());
  w.out.erase(std::unique(w.out.begin(), w.out.end()), w.out.end());
  return w.out;
}

std::vector<std::string> ExpandGlobs(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const auto& p : paths) {
    if (!HasGlob(p)) {
      out.push_back(p);
      continue;
    }
    for (auto& m : ExpandGlob(p)) out.push_back(std::move(m));
  }
  return out;
}

}  // namespace sentry::shim
