#include "gofer/confine.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <initializer_list>
#include <string>

namespace sentry::gofer {
namespace {

// A directory every host has. The tmpfs mounted over it is seen only in our (private) mount
// namespace, where pivot_root makes it the root.
constexpr const char* kNewRootAt = "/tmp";
constexpr long kSysFchmodat2 = 452;  // libseccomp 2.5 has no name for it

// Records "what: strerror(err)" as a failed step; returns false.
bool Fail(ConfineResult& r, const std::string& what, int err = errno) {
  r.failures.push_back(what + ": " + strerror(err));
  return false;
}

bool HasSysAdmin() {
  struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[2] = {};
  if (syscall(SYS_capget, &header, data) != 0) return false;
  return (data[CAP_SYS_ADMIN / 32].effective & (1u << (CAP_SYS_ADMIN % 32))) != 0;
}

bool WriteProcFile(const char* path, const std::string& text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return ok;
}

// Without CAP_SYS_ADMIN (a rootless gofer), a user namespace of its own first: there it
// holds the capabilities that unshare(CLONE_NEWNS), mount and pivot_root need, over nothing
// but what it owns on the host. Its uid and gid map to themselves, so files it creates still
// belong to the caller and host files keep the owners they show today.
bool EnterUserNamespaceIfUnprivileged(ConfineResult& r) {
  if (HasSysAdmin()) return true;
  uid_t uid = geteuid();
  gid_t gid = getegid();
  if (unshare(CLONE_NEWUSER) != 0) return Fail(r, "unshare(CLONE_NEWUSER)");
  if (!WriteProcFile("/proc/self/setgroups", "deny")) {
    return Fail(r, "write /proc/self/setgroups");
  }
  if (!WriteProcFile("/proc/self/uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1")) {
    return Fail(r, "write /proc/self/uid_map");
  }
  if (!WriteProcFile("/proc/self/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1")) {
    return Fail(r, "write /proc/self/gid_map");
  }
  return true;
}

// A private mount namespace rooted at an empty read-only tmpfs. The old root is detached,
// so nothing of the host file system stays reachable by path.
bool EnterEmptyRoot(ConfineResult& r) {
  if (unshare(CLONE_NEWNS) != 0) return Fail(r, "unshare(CLONE_NEWNS)");
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return Fail(r, "mount(/, MS_PRIVATE)");
  }
  unsigned long flags = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;
  if (mount("gofer-root", kNewRootAt, "tmpfs", flags, "size=4k,mode=0555") != 0) {
    return Fail(r, "mount(tmpfs)");
  }
  if (chdir(kNewRootAt) != 0) return Fail(r, "chdir(new root)");
  if (syscall(SYS_pivot_root, ".", ".") == 0) {
    // The old root is now stacked on top of ".": detach it.
    if (umount2(".", MNT_DETACH) != 0) return Fail(r, "umount2(old root)");
  } else {
    // E.g. the Sentry itself runs chroot'ed: pivot_root wants a mount point as the root.
    Fail(r, "pivot_root (fell back to chroot)");
    if (chroot(".") != 0) return Fail(r, "chroot");
  }
  if (chdir("/") != 0) return Fail(r, "chdir(/)");
  return true;
}

// Keeps only the capabilities that serve files for a Sentry whose guest may be root.
void DropCapabilities(ConfineResult& r, bool keep_chown) {
  uint64_t keep = (1ull << CAP_DAC_OVERRIDE) | (1ull << CAP_DAC_READ_SEARCH) | (1ull << CAP_FOWNER);
  if (keep_chown) keep |= 1ull << CAP_CHOWN;
  for (int cap = 0; cap <= 63; cap++) {
    if (keep & (1ull << cap)) continue;
    // EINVAL: the kernel knows fewer capabilities than 64.
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) {
      Fail(r, "PR_CAPBSET_DROP");
      break;
    }
  }
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[2] = {};
  if (syscall(SYS_capget, &header, data) != 0) {
    Fail(r, "capget");
    return;
  }
  for (int i = 0; i < 2; i++) {
    uint32_t k = static_cast<uint32_t>(keep >> (32 * i));
    data[i].permitted &= k;
    data[i].effective = data[i].permitted;
    data[i].inheritable = 0;
  }
  if (syscall(SYS_capset, &header, data) != 0) Fail(r, "capset");
}

// The system calls of the request loop (server*.cc, handle_table.cc), of glibc's malloc and
// of logging to stderr. Everything else kills the process.
bool InstallSeccomp(int sock, ConfineResult& r) {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
  if (ctx == nullptr) return Fail(r, "seccomp_init", ENOMEM);
  int err = 0;
  auto allow = [&](int nr, std::initializer_list<scmp_arg_cmp> args = {}) {
    int e = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, args.size(), args.begin());
    if (e != 0 && err == 0) err = e;
  };
  for (int nr : {SCMP_SYS(openat),
                 SCMP_SYS(close),
                 SCMP_SYS(newfstatat),
                 SCMP_SYS(fstat),
                 SCMP_SYS(statx),
                 SCMP_SYS(fstatfs),
                 SCMP_SYS(getdents64),
                 SCMP_SYS(lseek),
                 SCMP_SYS(readlinkat),
                 SCMP_SYS(mkdirat),
                 SCMP_SYS(mknodat),
                 SCMP_SYS(symlinkat),
                 SCMP_SYS(linkat),
                 SCMP_SYS(unlinkat),
                 SCMP_SYS(renameat2),
                 SCMP_SYS(renameat),
                 SCMP_SYS(fchownat),
                 SCMP_SYS(fchmod),
                 SCMP_SYS(fchmodat),
                 static_cast<int>(kSysFchmodat2),
                 SCMP_SYS(utimensat),
                 SCMP_SYS(ftruncate),
                 SCMP_SYS(fgetxattr),
                 SCMP_SYS(flistxattr),
                 SCMP_SYS(fsetxattr),
                 SCMP_SYS(fremovexattr),
                 SCMP_SYS(brk),
                 SCMP_SYS(munmap),
                 SCMP_SYS(mremap),
                 SCMP_SYS(madvise),
                 SCMP_SYS(futex),
                 SCMP_SYS(clock_gettime),
                 SCMP_SYS(gettimeofday),
                 SCMP_SYS(rt_sigreturn),
                 SCMP_SYS(restart_syscall),
                 SCMP_SYS(gettid),
                 SCMP_SYS(exit),
                 SCMP_SYS(exit_group)}) {
    allow(nr);
  }
  // No new executable memory, no other socket, logs only to stderr.
  allow(SCMP_SYS(mmap), {SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0)});
  allow(SCMP_SYS(mprotect), {SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0)});
  allow(SCMP_SYS(fcntl), {SCMP_A1(SCMP_CMP_EQ, F_SETFL)});
  allow(SCMP_SYS(sendmsg), {SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(sock))});
  allow(SCMP_SYS(recvmsg), {SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(sock))});
  allow(SCMP_SYS(write), {SCMP_A0(SCMP_CMP_EQ, STDERR_FILENO)});
  allow(SCMP_SYS(sched_setaffinity), {SCMP_A0(SCMP_CMP_EQ, 0)});  // kPlace: itself only
  allow(SCMP_SYS(writev), {SCMP_A0(SCMP_CMP_EQ, STDERR_FILENO)});
  if (err == 0) err = seccomp_load(ctx);
  seccomp_release(ctx);
  if (err != 0) return Fail(r, "seccomp", -err);
  return true;
}

}  // namespace

ConfineResult Confine(int sock, bool keep_chown) {
  ConfineResult r;
  if (EnterUserNamespaceIfUnprivileged(r)) EnterEmptyRoot(r);
  DropCapabilities(r, keep_chown);
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    Fail(r, "PR_SET_NO_NEW_PRIVS");
  }
  InstallSeccomp(sock, r);
  return r;
}

}  // namespace sentry::gofer
