// Changes to the host file system (server_internal.h: Mutations): made by this process
// (HostMutations), or, from a server in the Sentry (direct file access), by the gofer on fds
// the Sentry lends for the one call (Client::Lender here, Server::Lend on the gofer's side).
//
// Why lend rather than call: with direct file access the Sentry reads the host file system
// itself, relative to the directory fds the gofer donated. Were it to change it too, its
// allowlist would need fourteen more calls (mkdirat, unlinkat, renameat2, linkat, symlinkat,
// fchownat, fchmodat...), the ones a symlink or rename race is made of. Lent, they stay the
// gofer's: the Sentry's allowlist keeps only the calls that read, and the gofer checks each
// change again (one component per name, protected and hidden files, no set-ID bit, no device)
// before making it. A change costs a round trip to the gofer, as in gofer mode; reads, which
// are most calls, cost none.
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "gofer/client.h"
#include "gofer/server_internal.h"

namespace sentry::gofer {
namespace {

// fchmodat2(2) (Linux 6.6) is the only chmod that neither follows a symlink nor needs
// /proc; glibc 2.36 has no wrapper. The number is the same on every architecture.
constexpr long kSysFchmodat2 = 452;

int Ret(int r) { return r == 0 ? 0 : errno; }

class Host final : public Mutations {
 public:
  int Mkdir(int dirfd, const char* name, mode_t mode) override {
    return Ret(mkdirat(dirfd, name, mode));
  }
  int Mknod(int dirfd, const char* name, mode_t mode) override {
    mode_t type = mode & S_IFMT;
    if (type != S_IFREG && type != S_IFIFO && type != S_IFSOCK) return EPERM;
    return Ret(mknodat(dirfd, name, mode, 0));
  }
  int Symlink(const char* target, int dirfd, const char* name) override {
    return Ret(symlinkat(target, dirfd, name));
  }
  int Link(int old_dirfd, const char* old_name, int new_dirfd, const char* new_name) override {
    // flags 0: a symlink is linked itself, not its target.
    return Ret(linkat(old_dirfd, old_name, new_dirfd, new_name, 0));
  }
  int Unlink(int dirfd, const char* name, int flags) override {
    return Ret(unlinkat(dirfd, name, flags));
  }
  int Rename(int old_dirfd, const char* old_name, int new_dirfd, const char* new_name,
             unsigned flags) override {
    return Ret(renameat2(old_dirfd, old_name, new_dirfd, new_name, flags));
  }
  int Chown(int dirfd, const char* name, uid_t uid, gid_t gid, int flags) override {
    return Ret(fchownat(dirfd, name, uid, gid, flags));
  }
  int Chmod(int dirfd, const char* name, mode_t mode, int flags, const struct stat& st) override {
    if (syscall(kSysFchmodat2, dirfd, name, mode, flags) == 0) return 0;
    if (errno != ENOSYS) return errno;
    // Older kernels: fchmodat follows a symlink, so `st` was checked first. Only a concurrent
    // change on the host could make it follow one after that.
    if (S_ISLNK(st.st_mode)) return EOPNOTSUPP;
    return Ret(flags & AT_EMPTY_PATH ? fchmod(dirfd, mode) : fchmodat(dirfd, name, mode, 0));
  }
  int ClearBits(int fd, mode_t mode) override { return Ret(fchmod(fd, mode)); }
  int Utimes(int dirfd, const char* name, const struct timespec ts[2], int flags) override {
    return Ret(utimensat(dirfd, name, ts, flags));
  }
  int SetXattr(int fd, const char* name, const std::string& value, int flags) override {
    return Ret(fsetxattr(fd, name, value.data(), value.size(), flags));
  }
  int RemoveXattr(int fd, const char* name) override { return Ret(fremovexattr(fd, name)); }
};

// The *at flags a lent attribute change may carry: the file itself (a name and
// AT_SYMLINK_NOFOLLOW) or the directory fd itself ("" and AT_EMPTY_PATH, with or without
// AT_SYMLINK_NOFOLLOW, as Server::Target gives them).
bool AtFlagsOk(const std::string& name, int flags) {
  if (name.empty()) return (flags & ~AT_SYMLINK_NOFOLLOW) == AT_EMPTY_PATH;
  return flags == AT_SYMLINK_NOFOLLOW;
}

}  // namespace

Mutations& HostMutations() {
  static Host host;
  return host;
}

// The Sentry's side: each call becomes one kLend request carrying its fds.
class Client::Lender final : public Mutations {
 public:
  explicit Lender(Client& c) : c_(c) {}

  int Mkdir(int dirfd, const char* name, mode_t mode) override {
    return Send(Req(LendOp::kMkdir).Str(name).U32(mode), dirfd);
  }
  int Mknod(int dirfd, const char* name, mode_t mode) override {
    return Send(Req(LendOp::kMknod).Str(name).U32(mode), dirfd);
  }
  int Symlink(const char* target, int dirfd, const char* name) override {
    return Send(Req(LendOp::kSymlink).Str(target).Str(name), dirfd);
  }
  int Link(int old_dirfd, const char* old_name, int new_dirfd, const char* new_name) override {
    return Send(Req(LendOp::kLink).Str(old_name).Str(new_name), old_dirfd, new_dirfd);
  }
  int Unlink(int dirfd, const char* name, int flags) override {
    return Send(Req(LendOp::kUnlink).Str(name).I32(flags), dirfd);
  }
  int Rename(int old_dirfd, const char* old_name, int new_dirfd, const char* new_name,
             unsigned flags) override {
    return Send(Req(LendOp::kRename).Str(old_name).Str(new_name).U32(flags), old_dirfd, new_dirfd);
  }
  int Chown(int dirfd, const char* name, uid_t uid, gid_t gid, int flags) override {
    return Send(Req(LendOp::kChown).Str(name).U32(uid).U32(gid).I32(flags), dirfd);
  }
  int Chmod(int dirfd, const char* name, mode_t mode, int flags,
            const struct stat& /*st*/) override {
    return Send(Req(LendOp::kChmod).Str(name).U32(mode).I32(flags), dirfd);
  }
  int ClearBits(int fd, mode_t mode) override {
    return Send(Req(LendOp::kClearBits).U32(mode), fd);
  }
  int Utimes(int dirfd, const char* name, const struct timespec ts[2], int flags) override {
    return Send(Req(LendOp::kUtimes).Str(name).Raw(ts[0]).Raw(ts[1]).I32(flags), dirfd);
  }
  int SetXattr(int fd, const char* name, const std::string& value, int flags) override {
    return Send(Req(LendOp::kSetXattr).Str(name).Str(value).I32(flags), fd);
  }
  int RemoveXattr(int fd, const char* name) override {
    return Send(Req(LendOp::kRemoveXattr).Str(name), fd);
  }

 private:
  static Writer Req(LendOp call) {
    Writer w;
    w.U32(static_cast<uint32_t>(call));
    return w;
  }
  int Send(Writer& w, int fd, int fd2 = -1) { return c_.LendCall(w.Take(), fd, fd2); }

  Client& c_;
};

Mutations* Client::NewLender() {
  lender_ = std::make_unique<Lender>(*this);
  return lender_.get();
}

// The gofer's side. The Sentry's server checked the request against its handles already;
// what is checked here does not depend on the Sentry telling the truth.
Result<void> Server::CheckLentTarget(int dirfd, const std::string& name, bool changes_dir) const {
  if (opts_.protected_names.empty() && opts_.protected_files.empty() && opts_.hidden.empty()) {
    return Ok();
  }
  struct stat dir;
  if (fstat(dirfd, &dir) != 0) return Errno(errno);
  if (name.empty()) {
    if (opts_.protected_files.count({dir.st_dev, dir.st_ino}) != 0) return Errno(EROFS);
    return Hidden(dir) ? Result<void>(Errno(ENOENT)) : Ok();
  }
  if (opts_.protected_names.count({dir.st_dev, dir.st_ino, name}) != 0) return Errno(EROFS);
  // A protected directory takes no name in and gives none up.
  if (changes_dir && opts_.protected_files.count({dir.st_dev, dir.st_ino}) != 0) {
    return Errno(EROFS);
  }
  struct stat st;
  if (fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return Ok();  // the call fails
  if (opts_.protected_files.count({st.st_dev, st.st_ino}) != 0) return Errno(EROFS);
  if (Hidden(st)) return Errno(ENOENT);
  return Ok();
}

Result<void> Server::Lend(Reader& in, Writer& /*out*/) {
  int fd = lent_ != nullptr ? lent_[0] : -1;
  int fd2 = lent_ != nullptr ? lent_[1] : -1;
  auto call = static_cast<LendOp>(in.U32());
  bool two = call == LendOp::kLink || call == LendOp::kRename;
  if (fd < 0 || (two != (fd2 >= 0))) return Errno(EBADF);
  Mutations& host = HostMutations();
  auto done = [](int err) -> Result<void> { return err == 0 ? Ok() : Result<void>(Errno(err)); };
  switch (call) {
    case LendOp::kMkdir:
    case LendOp::kMknod: {
      std::string name = in.Str();
      uint32_t mode = in.U32();
      SENTRY_TRY(EndOfArgs(in));
      SENTRY_TRY(CheckName(name));
      SENTRY_TRY(CheckLentTarget(fd, name, true));
      if (call == LendOp::kMkdir) return done(host.Mkdir(fd, name.c_str(), HostMode(true, mode)));
      return done(host.Mknod(fd, name.c_str(), (mode & S_IFMT) | HostMode(false, mode)));
    }
    case LendOp::kSymlink: {
      std::string target = in.Str();
      std::string name = in.Str();
      SENTRY_TRY(EndOfArgs(in));
      SENTRY_TRY(CheckName(name));
      if (target.empty() || target.find('\0') != std::string::npos) return Errno(EINVAL);
      SENTRY_TRY(CheckLentTarget(fd, name, true));
      return done(host.Symlink(target.c_str(), fd, name.c_str()));
    }
    case LendOp::kLink:
    case LendOp::kRename: {
      std::string old_name = in.Str();
      std::string new_name = in.Str();
      unsigned flags = call == LendOp::kRename ? in.U32() : 0;
      SENTRY_TRY(EndOfArgs(in));
      SENTRY_TRY(CheckName(old_name));
      SENTRY_TRY(CheckName(new_name));
      if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE)) return Errno(EINVAL);
      SENTRY_TRY(CheckLentTarget(fd2, new_name, true));
      if (call == LendOp::kLink) {
        return done(host.Link(fd, old_name.c_str(), fd2, new_name.c_str()));
      }
      SENTRY_TRY(CheckLentTarget(fd, old_name, true));
      return done(host.Rename(fd, old_name.c_str(), fd2, new_name.c_str(), flags));
    }
    case LendOp::kUnlink: {
      std::string name = in.Str();
      int flags = in.I32();
      SENTRY_TRY(EndOfArgs(in));
      SENTRY_TRY(CheckName(name));
      if (flags & ~AT_REMOVEDIR) return Errno(EINVAL);
      SENTRY_TRY(CheckLentTarget(fd, name, true));
      return done(host.Unlink(fd, name.c_str(), flags));
    }
    case LendOp::kChown:
    case LendOp::kChmod:
    case LendOp::kUtimes: {
      std::string name = in.Str();
      uint32_t a = 0, b = 0;
      struct timespec ts[2] = {};
      if (call == LendOp::kChown) {
        a = in.U32();
        b = in.U32();
      } else if (call == LendOp::kChmod) {
        a = in.U32();
      } else {
        ts[0] = in.Raw<struct timespec>();
        ts[1] = in.Raw<struct timespec>();
      }
      int flags = in.I32();
      SENTRY_TRY(EndOfArgs(in));
      if (!name.empty()) SENTRY_TRY(CheckName(name));
      if (!AtFlagsOk(name, flags)) return Errno(EINVAL);
      SENTRY_TRY(CheckLentTarget(fd, name, false));
      if (call == LendOp::kChown) return done(host.Chown(fd, name.c_str(), a, b, flags));
      if (call == LendOp::kUtimes) return done(host.Utimes(fd, name.c_str(), ts, flags));
      struct stat st;
      if (fstatat(fd, name.c_str(), &st, flags) != 0) return Errno(errno);
      return done(host.Chmod(fd, name.c_str(), HostMode(S_ISDIR(st.st_mode), a), flags, st));
    }
    case LendOp::kClearBits: {
      uint32_t mode = in.U32();
      SENTRY_TRY(EndOfArgs(in));
      struct stat st;
      if (fstat(fd, &st) != 0) return Errno(errno);
      // Only ever takes bits away, and only from a regular file.
      if (!S_ISREG(st.st_mode) || (mode & ~st.st_mode & 07777) != 0) return Errno(EPERM);
      SENTRY_TRY(CheckLentTarget(fd, "", false));
      return done(host.ClearBits(fd, mode & 07777));
    }
    case LendOp::kSetXattr:
    case LendOp::kRemoveXattr: {
      std::string name = in.Str();
      std::string value = call == LendOp::kSetXattr ? in.Str() : std::string();
      int flags = call == LendOp::kSetXattr ? in.I32() : 0;
      SENTRY_TRY(EndOfArgs(in));
      // File capabilities are set-ID bits by another name.
      if (name == "security.capability") return Errno(EPERM);
      SENTRY_TRY(CheckLentTarget(fd, "", false));
      if (call == LendOp::kRemoveXattr) return done(host.RemoveXattr(fd, name.c_str()));
      return done(host.SetXattr(fd, name.c_str(), value, flags));
    }
  }
  return Errno(EINVAL);
}

}  // namespace sentry::gofer
