#include "sentry/kernel/cgroup_view.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "sentry/base/host_files.h"
#include "vfs/synthetic.h"

namespace sentry::kernel {
namespace {

constexpr char kCgroupRoot[] = "/sys/fs/cgroup/";

// Written by PrepareCgroupView before the guest runs, then only read.
std::vector<CgroupViewDir>& View() {
  static auto* view = new std::vector<CgroupViewDir>;
  return *view;
}
bool g_v2 = false;

// The regular files of `dir` its owner may read (cgroup.event_control and the like are
// write-only), sorted.
std::vector<std::string> ReadableFiles(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  while (struct dirent* e = readdir(d)) {
    struct stat st;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISREG(st.st_mode) || !(st.st_mode & S_IRUSR)) continue;
    out.push_back(e->d_name);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

void PrepareCgroupView(const std::vector<std::string>& dirs, bool v2) {
  if (dirs.empty()) return;
  // The hierarchy ids by their controllers, from this process's own /proc/self/cgroup.
  std::vector<std::pair<std::string, int>> ids;
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f = absl::StrSplit(line, absl::MaxSplits(':', 2));
    if (f.size() == 3) ids.emplace_back(f[1], std::atoi(f[0].c_str()));
  }
  std::vector<std::string> keep;
  for (const auto& dir : dirs) {
    if (dir.rfind(kCgroupRoot, 0) != 0) continue;
    CgroupViewDir v;
    v.host_dir = dir;
    if (!v2) {
      std::string rest = dir.substr(sizeof(kCgroupRoot) - 1);
      v.name = rest.substr(0, rest.find('/'));
      for (const auto& [controllers, id] : ids) {
        if (controllers == v.name) v.hierarchy_id = id;
      }
    }
    v.files = ReadableFiles(dir);
    for (const auto& f : v.files) keep.push_back(dir + "/" + f);
    View().push_back(std::move(v));
  }
  // Highest id first, as Linux lists the hierarchies in /proc/PID/cgroup.
  std::sort(View().begin(), View().end(), [](const CgroupViewDir& a, const CgroupViewDir& b) {
    return a.hierarchy_id > b.hierarchy_id;
  });
  g_v2 = v2;
  PreopenHostFiles(keep);
}

const std::vector<CgroupViewDir>& CgroupView() { return View(); }
bool CgroupViewIsV2() { return g_v2; }

vfs::InodeRef NewCgroupViewDir(const vfs::MemSuperRef& sb) {
  auto root = std::make_shared<vfs::SyntheticDir>(sb, 0555);
  auto fill = [&sb](vfs::SyntheticDir& d, const CgroupViewDir& v) {
    for (const auto& name : v.files) {
      std::string path = v.host_dir + "/" + name;
      d.Add(name, std::make_shared<vfs::SyntheticFile>(sb, 0444, [path]() -> Result<std::string> {
              std::optional<std::string> text = ReadHostFile(path);
              if (!text) return Errno(EIO);
              return *text;
            }));
    }
  };
  for (const auto& v : View()) {
    if (v.name.empty()) {
      fill(*root, v);
      continue;
    }
    auto dir = std::make_shared<vfs::SyntheticDir>(sb, 0555);
    fill(*dir, v);
    root->Add(v.name, dir);
    // "cpu,cpuacct" is reached as cpu and cpuacct too, as the host links them.
    if (v.name.find(',') == std::string::npos) continue;
    for (const auto& one : absl::StrSplit(v.name, ',')) {
      std::string target = v.name;
      root->Add(std::string(one), std::make_shared<vfs::SyntheticSymlink>(
                                      sb, [target]() -> Result<std::string> { return target; }));
    }
  }
  return root;
}

std::string CgroupViewProcText() {
  std::string out;
  for (const auto& v : View()) {
    if (!v.name.empty()) out += absl::StrFormat("%d:%s:/\n", v.hierarchy_id, v.name);
  }
  return out + "0::/\n";
}

}  // namespace sentry::kernel
