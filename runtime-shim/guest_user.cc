#include "runtime-shim/guest_user.h"

#include <sys/stat.h>

#include <string_view>

#include "vfs/file.h"

namespace sentry::shim {
namespace {

constexpr size_t kMaxPasswd = 1 << 20;

// The guest's /etc/passwd (its first MiB), or empty.
std::string ReadPasswd(vfs::Vfs& v) {
  vfs::Context ctx;
  ctx.root = ctx.cwd = v.Root();
  auto at = v.Resolve(ctx, ctx.root, "/etc/passwd", true);
  if (!at.ok() || !S_ISREG(at->inode()->Type())) return "";
  auto text = vfs::ReadWhole(*at->inode(), kMaxPasswd);
  return text.ok() ? *text : "";
}

// The sixth field of the line whose third field is `uid` (name:pw:uid:gid:gecos:home:shell).
std::string HomeOf(std::string_view passwd, uint32_t uid) {
  const std::string want = std::to_string(uid);
  while (!passwd.empty()) {
    size_t end = passwd.find('\n');
    std::string_view line = passwd.substr(0, end);
    passwd = end == std::string_view::npos ? std::string_view() : passwd.substr(end + 1);
    std::string_view field[7];
    size_t n = 0;
    while (n < 7) {
      size_t colon = line.find(':');
      field[n++] = line.substr(0, colon);
      if (colon == std::string_view::npos) break;
      line = line.substr(colon + 1);
    }
    if (n >= 6 && field[2] == want && !field[5].empty()) return std::string(field[5]);
  }
  return "/";
}

}  // namespace

void AddHomeFromPasswd(vfs::Vfs& v, uint32_t uid, std::vector<std::string>& envp) {
  for (const std::string& e : envp) {
    if (e.rfind("HOME=", 0) == 0) return;
  }
  envp.push_back("HOME=" + HomeOf(ReadPasswd(v), uid));
}

}  // namespace sentry::shim
