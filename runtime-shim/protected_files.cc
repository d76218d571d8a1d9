#include "runtime-shim/protected_files.h"

#include <sys/stat.h>

#include <algorithm>

#include "runtime-shim/deny_read.h"

namespace sentry::shim {
namespace {

// A protected directory's contents are protected too, up to this many files (a protected
// directory is small: hooks, editor settings, keys).
constexpr size_t kMaxFilesPerTree = 10000;

void AddTree(const std::string& path, ProtectedFiles& out, size_t& budget) {
  struct stat st;
  if (budget == 0 || lstat(path.c_str(), &st) != 0) return;
  budget--;
  out.files.emplace_back(st.st_dev, st.st_ino);
  if (!S_ISDIR(st.st_mode)) return;
  for (const auto& child : ChildPaths(path)) AddTree(child, out, budget);
}

// Protects `rel` (components separated by '/') under the directory `root`. A missing
// directory on the way ends it: protecting ".git/config" must not stop `git init`.
void Protect(const std::string& root, const std::string& rel, ProtectedFiles& out) {
  std::string dir = root;
  size_t i = 0;
  while (i < rel.size()) {
    size_t j = rel.find('/', i);
    if (j == std::string::npos) j = rel.size();
    std::string name = rel.substr(i, j - i);
    bool last = rel.find_first_not_of('/', j) == std::string::npos;
    i = j + 1;
    if (name.empty() || name == ".") continue;
    struct stat st;
    if (name == ".." || stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return;
    std::string child = dir + (dir == "/" ? "" : "/") + name;
    struct stat cst;
    if (!last && lstat(child.c_str(), &cst) != 0) return;
    out.names.emplace_back(st.st_dev, st.st_ino, name);
    dir = child;
  }
  size_t budget = kMaxFilesPerTree;
  AddTree(dir, out, budget);
}

}  // namespace

const std::vector<std::string>& DefaultDenyWrite() {
  static const std::vector<std::string> kList = {
      ".bashrc",     ".bash_profile", ".profile",  ".zshrc",  ".gitconfig", ".git/hooks",
      ".git/config", ".ssh",          ".mcp.json", ".vscode", ".idea"};
  return kList;
}

ProtectedFiles FindProtectedFiles(const std::vector<std::string>& paths,
                                  const std::vector<std::string>& writable_roots) {
  ProtectedFiles out;
  for (const auto& p : paths) {
    if (!p.empty() && p[0] == '/') {
      Protect("/", p.substr(1), out);
      continue;
    }
    for (const auto& root : writable_roots) Protect(root, p, out);
  }
  std::sort(out.files.begin(), out.files.end());
  out.files.erase(std::unique(out.files.begin(), out.files.end()), out.files.end());
  std::sort(out.names.begin(), out.names.end());
  out.names.erase(std::unique(out.names.begin(), out.names.end()), out.names.end());
  return out;
}

}  // namespace sentry::shim
