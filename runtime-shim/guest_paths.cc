#include "runtime-shim/guest_paths.h"

#include <sys/mount.h>

#include <cstring>

#include "sentry/base/status.h"
#include "vfs/mem_inode.h"

namespace sentry::shim {
namespace {

absl::Status Failed(const std::string& what, const std::string& path, int code) {
  return absl::InternalError(what + " " + path + ": " + strerror(code));
}

// Skipped as runc skips them: the path is not there, or a component is not a directory.
bool Absent(const Errno& e) { return e.code() == ENOENT || e.code() == ENOTDIR; }

absl::Status Mask(vfs::Vfs& v, const vfs::Context& ctx, const vfs::Path& devnull,
                  const std::string& path) {
  auto at = v.Resolve(ctx, ctx.root, path, true);
  if (!at.ok()) {
    if (Absent(at.error())) return absl::OkStatus();
    return Failed("maskedPaths:", path, at.error().code());
  }
  if (at->inode()->IsDir()) {
    // runc's mask for a directory: a tmpfs with no options but ro, hence mode 1777.
    auto r = v.MountAt(*at, vfs::NewTmpfs(01777, 0, 0), "tmpfs", "tmpfs", MS_RDONLY);
    if (!r.ok()) return Failed("maskedPaths: mount over", path, r.error().code());
    auto top = v.Resolve(ctx, ctx.root, path, true);
    if (top.ok()) v.LockReadOnly(*top);
    return absl::OkStatus();
  }
  // A plain bind, as runc's: reads see nothing and writes vanish.
  auto r = v.BindAt(*at, devnull, 0);
  if (!r.ok()) return Failed("maskedPaths: bind /dev/null over", path, r.error().code());
  return absl::OkStatus();
}

absl::Status ReadOnly(vfs::Vfs& v, const vfs::Context& ctx, const std::string& path) {
  auto at = v.Resolve(ctx, ctx.root, path, true);
  if (!at.ok()) {
    if (Absent(at.error())) return absl::OkStatus();
    return Failed("readonlyPaths:", path, at.error().code());
  }
  auto r = v.BindAt(*at, *at, MS_RDONLY, /*recursive=*/true);
  if (!r.ok()) return Failed("readonlyPaths: bind", path, r.error().code());
  auto top = v.Resolve(ctx, ctx.root, path, true);
  if (!top.ok()) return Failed("readonlyPaths:", path, top.error().code());
  v.LockReadOnly(*top);
  return absl::OkStatus();
}

}  // namespace

absl::Status ApplyPathRestrictions(vfs::Vfs& v, const std::vector<std::string>& masked,
                                   const std::vector<std::string>& readonly) {
  if (masked.empty() && readonly.empty()) return absl::OkStatus();
  vfs::Context ctx;
  ctx.root = ctx.cwd = v.Root();
  auto devnull = v.Resolve(ctx, ctx.root, "/dev/null", true);
  if (!devnull.ok()) return Failed("maskedPaths: the guest's", "/dev/null", devnull.error().code());
  // runc makes the read-only binds first, then the masks (which may lie below them: a
  // mask under a read-only bind is mounted on the bind).
  for (const auto& path : readonly) SENTRY_RETURN_IF_ERROR(ReadOnly(v, ctx, path));
  for (const auto& path : masked) SENTRY_RETURN_IF_ERROR(Mask(v, ctx, *devnull, path));
  return absl::OkStatus();
}

}  // namespace sentry::shim
