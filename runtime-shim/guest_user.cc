#include "runtime-shim/guest_user.h"

#include <fcntl.h>

#include <string_view>

#include "sentry/base/wait_queue.h"

namespace sentry::shim {
namespace {

constexpr size_t kMaxPasswd = 1 << 20;

// The guest's /etc/passwd, or empty.
std::string ReadPasswd(vfs::Vfs& v) {
  vfs::Context ctx;
  ctx.root = ctx.cwd = v.Root();
  auto f = v.Open(ctx, ctx.root, "/etc/passwd", O_RDONLY, 0);
  if (!f.ok()) return "";
  NoWaitBlocker b;
  std::string out;
  char buf[4096];
  while (out.size() < kMaxPasswd) {
    auto n = (*f)->Read(b, std::span<uint8_t>(reinterpret_cast<uint8_t*>(buf), sizeof(buf)));
    if (!n.ok() || *n == 0) break;
    out.append(buf, *n);
  }
  return out;
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
