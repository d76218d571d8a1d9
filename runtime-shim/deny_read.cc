#include "runtime-shim/deny_read.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>

namespace sentry::shim {
namespace {

using FileId = std::pair<uint64_t, uint64_t>;

// Whether `path` is `dir` or lies inside it (both absolute, without trailing '/').
bool Within(const std::string& path, const std::string& dir) {
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                         (dir == "/" || path[dir.size()] == '/'));
}

void AddId(const struct stat& st, std::vector<FileId>& out) {
  out.emplace_back(static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino));
}

// Hides `path`, or, if allowed paths lie inside it, the entries of it off their way.
void Hide(const std::string& path, const std::vector<std::string>& allow,
          std::vector<FileId>& out) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return;
  std::vector<std::string> inside;
  for (const auto& a : allow) {
    if (a == path) return;  // re-opened whole
    if (Within(a, path)) inside.push_back(a);
  }
  if (inside.empty() || !S_ISDIR(st.st_mode)) {
    AddId(st, out);
    struct stat target;
    if (S_ISLNK(st.st_mode) && stat(path.c_str(), &target) == 0) AddId(target, out);
    return;
  }
  for (const auto& child : ChildPaths(path)) Hide(child, inside, out);
}

}  // namespace

std::vector<std::string> ChildPaths(const std::string& dir) {
  std::vector<std::string> children;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return children;
  while (struct dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") children.push_back(dir + "/" + name);
  }
  closedir(d);
  return children;
}

const std::vector<std::string>& DefaultDenyRead() {
  static const std::vector<std::string> kList = {"~/.ssh",
                                                 "~/.aws",
                                                 "~/.gnupg",
                                                 "~/.config/gcloud",
                                                 "~/.azure",
                                                 "~/.kube",
                                                 "~/.docker/config.json",
                                                 "~/.netrc",
                                                 "~/.npmrc",
                                                 "~/.pypirc",
                                                 "~/.git-credentials",
                                                 "/etc/shadow",
                                                 "/etc/gshadow"};
  return kList;
}

std::vector<std::string> Homes(const std::string& caller_home) {
  std::vector<std::string> homes = {"/root"};
  for (const auto& home : ChildPaths("/home")) homes.push_back(home);
  std::string caller = caller_home;
  while (caller.size() > 1 && caller.back() == '/') caller.pop_back();
  if (!caller.empty() && std::find(homes.begin(), homes.end(), caller) == homes.end()) {
    homes.push_back(caller);
  }
  return homes;
}

std::vector<std::string> ExpandHomes(const std::vector<std::string>& paths,
                                     const std::vector<std::string>& homes) {
  std::vector<std::string> out;
  for (const auto& p : paths) {
    if (p.rfind("~/", 0) != 0) {
      out.push_back(p);
      continue;
    }
    for (const auto& h : homes) out.push_back(h + p.substr(1));
  }
  return out;
}

std::vector<FileId> HiddenFiles(const std::vector<std::string>& deny,
                                const std::vector<std::string>& allow) {
  std::vector<FileId> out;
  for (const auto& path : deny) Hide(path, allow, out);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace sentry::shim
