// mount(2) and umount2(2) inside the sandbox: new tmpfs, proc, sysfs and devpts instances,
// bind mounts (MS_REC too), remounts of the per-mount flags, MS_MOVE and the propagation
// types, in the calling task's mount namespace. The checks follow Linux's path_mount and
// ksys_umount in order, so that a bad call gets the errno it gets there.
#include <sys/mount.h>

#include <cstring>
#include <optional>

#include "sentry/kernel/procfs.h"
#include "sentry/kernel/sysfs.h"
#include "syscalls/common.h"
#include "vfs/mem_inode.h"
#include "vfs/tty.h"

namespace sentry::syscalls {
namespace {
// CAP_SYS_ADMIN over the user namespace that owns the caller's mount namespace.
bool MountAdmin(Task& t) {
  absl::MutexLock l(&t.kernel().mu());
  return t.tg().creds.CapableIn(kernel::NamespaceOwner(t.ns(), CLONE_NEWNS), CAP_SYS_ADMIN);
}
}  // namespace
namespace {

constexpr uint64_t kMgcMask = 0xffff0000;  // MS_MGC_MSK
constexpr uint64_t kMgcVal = 0xC0ED0000;   // MS_MGC_VAL
constexpr int kAtimeFlags = MS_NOATIME | MS_NODIRATIME | MS_RELATIME | MS_STRICTATIME;
constexpr uint64_t kPropagation = MS_SHARED | MS_PRIVATE | MS_SLAVE | MS_UNBINDABLE;

struct TmpfsOptions {
  uint32_t mode = 01777;
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint64_t size = 0;  // 0: only the sandbox-wide budget
};

// tmpfs's mount data: "size=,mode=,uid=,gid=" (nr_inodes=, nr_blocks= and huge= are taken and
// not applied: inodes are not limited here, and there are no huge pages). EINVAL for any
// other option, as Linux.
Result<TmpfsOptions> ParseTmpfsOptions(const std::string& data) {
  TmpfsOptions o;
  auto number = [](const std::string& v, int base) -> Result<uint64_t> {
    if (v.empty()) return Errno(EINVAL);
    char* end = nullptr;
    errno = 0;
    unsigned long long n = strtoull(v.c_str(), &end, base);
    if (errno != 0 || *end != '\0' || n > UINT32_MAX) return Errno(EINVAL);
    return static_cast<uint64_t>(n);
  };
  size_t i = 0;
  while (i < data.size()) {
    size_t j = data.find(',', i);
    if (j == std::string::npos) j = data.size();
    std::string opt = data.substr(i, j - i);
    i = j + 1;
    if (opt.empty()) continue;
    size_t eq = opt.find('=');
    std::string key = opt.substr(0, eq), val = eq == std::string::npos ? "" : opt.substr(eq + 1);
    if (key == "size") {
      o.size = SENTRY_TRY(vfs::ParseTmpfsSize(val));
    } else if (key == "mode") {
      o.mode = static_cast<uint32_t>(SENTRY_TRY(number(val, 8)) & 07777);
    } else if (key == "uid") {
      o.uid = static_cast<uint32_t>(SENTRY_TRY(number(val, 10)));
    } else if (key == "gid") {
      o.gid = static_cast<uint32_t>(SENTRY_TRY(number(val, 10)));
    } else if (key != "nr_inodes" && key != "nr_blocks" && key != "huge") {
      return Errno(EINVAL);
    }
  }
  return o;
}

// The per-mount flags a mount(2) call asks for, as Linux's path_mount computes them: relatime
// unless noatime or strictatime, and a remount that names no atime mode keeps the old one.
int MountFlags(uint64_t flags, const vfs::Mount& current) {
  int f = static_cast<int>(
      flags & (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOATIME | MS_NODIRATIME));
  if (!(flags & MS_NOATIME)) f |= MS_RELATIME;
  if (flags & MS_STRICTATIME) f = (f & ~(MS_RELATIME | MS_NOATIME)) | MS_STRICTATIME;
  if ((flags & MS_REMOUNT) && !(flags & kAtimeFlags)) {
    f = (f & ~kAtimeFlags) | (current.flags() & kAtimeFlags);
  }
  return f;
}

// Linux's check_mnt: the mount is in the caller's mount namespace.
bool InCallerNamespace(Task& t, const vfs::Path& p) {
  return t.kernel().vfs().NamespaceOf(p).get() == t.ns().mnt.get();
}

// The mount's source path (MS_BIND, MS_MOVE): EINVAL when absent or empty.
Result<vfs::Path> SourcePath(Task& t, const vfs::Context& ctx, const std::string* source) {
  if (!source || source->empty()) return Errno(EINVAL);
  return t.kernel().vfs().Resolve(ctx, ctx.cwd, *source, true);
}

Result<vfs::InodeRef> NewFileSystem(Task& t, const std::string& type, const std::string& data) {
  if (type == "tmpfs") {
    TmpfsOptions o = SENTRY_TRY(ParseTmpfsOptions(data));
    return vfs::NewTmpfs(o.mode, o.uid, o.gid, o.size);
  }
  if (type == "proc") {
    // It shows the mounter's PID namespace.
    kernel::PidNsRef pidns;
    {
      absl::MutexLock l(&t.kernel().mu());
      pidns = t.tg().pidns;
    }
    return kernel::NewProcfs(t.kernel(), std::move(pidns));
  }
  if (type == "sysfs") return kernel::NewSysfs(t.kernel());
  // One devpts for the sandbox: "newinstance" gets the same one (its ptys are shared).
  if (type == "devpts") return vfs::NewDevpts();
  return Errno(ENODEV);
}

}  // namespace

Result<uint64_t> SysMount(Task& t, GuestAddr source_addr, GuestAddr target_addr,
                          GuestAddr type_addr, uint64_t flags, GuestAddr data_addr) {
  std::optional<std::string> type, source, data;
  if (!type_addr.IsNull()) type = SENTRY_TRY(t.CopyInString(type_addr));
  if (!source_addr.IsNull()) source = SENTRY_TRY(t.CopyInString(source_addr));
  if (!data_addr.IsNull()) data = SENTRY_TRY(t.CopyInString(data_addr, 4096));
  vfs::Context ctx = t.VfsContext();
  vfs::Path target = SENTRY_TRY(ResolveAt(t, ctx, AT_FDCWD, target_addr, 0));
  if ((flags & kMgcMask) == kMgcVal) flags &= ~kMgcMask;
  if (flags & MS_NOUSER) return Errno(EINVAL);
  if (!MountAdmin(t)) return Errno(EPERM);
  vfs::Vfs& v = t.kernel().vfs();
  int mflags = MountFlags(flags, *target.mnt);
  if (flags & MS_REMOUNT) {
    if (!InCallerNamespace(t, target)) return Errno(EINVAL);
    // Without MS_BIND, the file system's own options are checked as well (not applied).
    if (!(flags & MS_BIND) && data && target.mnt->fstype() == "tmpfs") {
      SENTRY_TRY(ParseTmpfsOptions(*data));
    }
    SENTRY_TRY(v.Remount(target, mflags));
    return 0;
  }
  if (flags & MS_BIND) {
    vfs::Path from = SENTRY_TRY(SourcePath(t, ctx, source ? &*source : nullptr));
    if (!InCallerNamespace(t, target) || !InCallerNamespace(t, from)) return Errno(EINVAL);
    SENTRY_TRY(v.BindAt(target, from, from.mnt->flags(), flags & MS_REC));
    return 0;
  }
  if (flags & kPropagation) {
    uint64_t kind = flags & ~(MS_REC | MS_SILENT);
    if (kind == 0 || (kind & (kind - 1)) || !(kind & kPropagation)) return Errno(EINVAL);
    SENTRY_TRY(v.SetPropagation(target, static_cast<int>(kind), flags & MS_REC));
    return 0;
  }
  if (flags & MS_MOVE) {
    vfs::Path from = SENTRY_TRY(SourcePath(t, ctx, source ? &*source : nullptr));
    if (!InCallerNamespace(t, target) || !InCallerNamespace(t, from)) return Errno(EINVAL);
    SENTRY_TRY(v.MoveMount(from, target));
    return 0;
  }
  if (!type) return Errno(EINVAL);
  vfs::InodeRef root = SENTRY_TRY(NewFileSystem(t, *type, data.value_or("")));
  if (!InCallerNamespace(t, target)) return Errno(EINVAL);
  SENTRY_TRY(v.MountAt(target, std::move(root), *type, source.value_or("none"), mflags));
  return 0;
}

Result<uint64_t> SysUmount2(Task& t, GuestAddr target_addr, int flags) {
  if (flags & ~(MNT_FORCE | MNT_DETACH | MNT_EXPIRE | UMOUNT_NOFOLLOW)) return Errno(EINVAL);
  vfs::Context ctx = t.VfsContext();
  vfs::Path target = SENTRY_TRY(ResolveAt(t, ctx, AT_FDCWD, target_addr,
                                          (flags & UMOUNT_NOFOLLOW) ? AT_SYMLINK_NOFOLLOW : 0));
  if (!MountAdmin(t)) return Errno(EPERM);
  if (target.d != target.mnt->root() || !InCallerNamespace(t, target)) return Errno(EINVAL);
  // The walk's own hold on the working directory is not a use of the mount.
  ctx.cwd = {};
  ctx.root = {ctx.root.mnt, nullptr};
  SENTRY_TRY(t.kernel().vfs().Umount(ctx, target, flags));
  return 0;
}

}  // namespace sentry::syscalls
