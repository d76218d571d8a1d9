#include "runtime-shim/namespaces.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "netstack/dns.h"
#include "platform/stub/stub_control.h"
#include "sentry/base/host_files.h"
#include "sentry/kernel/host_limits.h"

namespace sentry::shim {
namespace {

// A directory every host has; the tmpfs mounted over it, in the Sentry's private mount
// namespace only, becomes the root.
constexpr const char* kNewRootAt = "/tmp";

bool g_in_namespaces = false;
int g_proc_dir = -1;

absl::Status Step(const std::string& what, int err = errno) {
  return absl::FailedPreconditionError("confinement step failed: " + what + ": " + strerror(err));
}

bool WriteFile(const std::string& path, const std::string& text) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  int err = errno;
  close(fd);
  errno = err;
  return ok;
}

// The maps of the child's user namespace, written by the parent (only a process outside it
// may map more than its own uid). Root maps every id to itself; anyone else only their own.
absl::Status WriteIdMaps(pid_t child) {
  std::string dir = "/proc/" + std::to_string(child) + "/";
  uid_t uid = geteuid();
  gid_t gid = getegid();
  std::string uids =
      uid == 0 ? "0 0 4294967295" : std::to_string(uid) + " " + std::to_string(uid) + " 1";
  std::string gids =
      uid == 0 ? "0 0 4294967295" : std::to_string(gid) + " " + std::to_string(gid) + " 1";
  // Without CAP_SETGID over the parent namespace, gid_map needs setgroups denied first.
  if (uid != 0 && !WriteFile(dir + "setgroups", "deny")) return Step("write setgroups");
  if (!WriteFile(dir + "uid_map", uids)) return Step("write uid_map");
  if (!WriteFile(dir + "gid_map", gids)) return Step("write gid_map");
  return absl::OkStatus();
}

absl::Status DropAllCapabilities(uint64_t keep) {
  // First, while CAP_SETPCAP is still held: uid 0 gains nothing at execve, and none of this
  // can be undone.
  unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                       SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
                       SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
  if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) != 0) return Step("PR_SET_SECUREBITS");
  for (int cap = 0; cap <= 63; cap++) {
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
      if (errno == EINVAL) break;  // past the last capability this kernel knows
      return Step("PR_CAPBSET_DROP");
    }
  }
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0) {
    return Step("PR_CAP_AMBIENT_CLEAR_ALL");
  }
  // Kept ones stay effective and permitted only: with the bounding set empty and the
  // securebits above, no execve (a stub's) can carry them on.
  struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[2] = {};
  if (keep != 0 && syscall(SYS_capget, &header, data) != 0) return Step("capget");
  for (int i = 0; i < 2; i++) {
    data[i].permitted &= static_cast<uint32_t>(keep >> (32 * i));
    data[i].effective = data[i].permitted;
    data[i].inheritable = 0;
  }
  if (syscall(SYS_capset, &header, data) != 0) return Step("capset (drop all)");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<pid_t> CloneIntoNamespaces(bool new_net) {
  int go[2];
  if (pipe2(go, O_CLOEXEC) != 0) return Step("pipe2");
  int flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;
  if (new_net) flags |= CLONE_NEWNET;
  // The raw call: a fork into new namespaces (glibc keeps no PID cache to go stale).
  pid_t pid = static_cast<pid_t>(syscall(SYS_clone, flags | SIGCHLD, nullptr, nullptr, nullptr, 0));
  if (pid == 0) {
    close(go[1]);
    // Without its parent the sandbox has no one to report to: it goes too. The parent is
    // outside the new PID namespace, so its death shows as EOF on the pipe, not as getppid.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    char ok = 0;
    ssize_t n;
    do {
      n = read(go[0], &ok, 1);
    } while (n < 0 && errno == EINTR);
    if (n != 1) _exit(126);
    close(go[0]);
    // As the namespace's init, the Sentry inherits every orphaned stub (a guest process whose
    // parent exited first). Their zombies go at once (SA_NOCLDWAIT): a traced stub still
    // reports its death to its tracer first, and the Sentry waits for no other child's status
    // (the gofer's death shows on its socket).
    struct sigaction sa {};
    sa.sa_handler = SIG_DFL;
    sa.sa_flags = SA_NOCLDWAIT;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, nullptr);
    g_in_namespaces = true;
    return 0;
  }
  int clone_errno = errno;
  close(go[0]);
  if (pid < 0) {
    close(go[1]);
    std::string what = std::string("new user, mount, PID, IPC, UTS") +
                       (new_net ? ", network" : "") + " namespaces (clone)";
    // The kernel's errnos say little here: name the usual causes.
    absl::Status st = Step(what, clone_errno);
    if (clone_errno == ENOSPC || clone_errno == EPERM || clone_errno == EUSERS) {
      st = absl::FailedPreconditionError(
          std::string(st.message()) +
          (clone_errno == EPERM
               ? " (user namespaces are not allowed to this user here)"
               : " (the limit of user namespaces, /proc/sys/user/max_user_namespaces, is 0 "
                 "or reached)"));
    }
    return st;
  }
  absl::Status maps = WriteIdMaps(pid);
  if (maps.ok() && write(go[1], "1", 1) != 1) maps = Step("starting the Sentry");
  close(go[1]);
  if (!maps.ok()) {
    kill(pid, SIGKILL);
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    return maps;
  }
  return pid;
}

bool InSentryNamespaces() { return g_in_namespaces; }

absl::Status PrepareHostView() {
  // Nothing mounted or unmounted here reaches the host's mount namespace.
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return Step("mount / private");
  }
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) {
    return Step("mount a procfs of the new PID namespace");
  }
  g_proc_dir = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (g_proc_dir < 0) return Step("open /proc");
  platform::SetProcDirForLayout(g_proc_dir);
  std::vector<std::string> files = KernelHostFiles();
  for (auto& f : kernel::HostLimitFiles()) files.push_back(f);
  for (auto& f : netstack::HostResolverFiles()) files.push_back(f);
  PreopenHostFiles(files);
  if (auto stub = platform::OpenStubExecutable(); !stub.ok()) return stub.status();
  return absl::OkStatus();
}

uint64_t FileCapabilities(bool direct_files) {
  if (!direct_files) return 0;
  // Reading and opening only: every change of owner, mode, times or xattrs is the gofer's
  // (gofer/lend.cc), so CAP_FOWNER and CAP_CHOWN stay with it.
  return (1ull << CAP_DAC_OVERRIDE) | (1ull << CAP_DAC_READ_SEARCH);
}

absl::Status EnterEmptyRoot(uint64_t keep) {
  // A mount namespace of its own first: the gofer, forked from this process, may still be
  // setting itself up in the one they share (it opens its attach points by path, then
  // unshares), and must not find the host's root gone from under it.
  if (unshare(CLONE_NEWNS) != 0) return Step("unshare the mount namespace");
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return Step("make the mounts private");
  }
  unsigned long flags = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;
  if (mount("sentry-root", kNewRootAt, "tmpfs", flags, "size=4k,mode=0555") != 0) {
    return Step("mount the empty root (tmpfs)");
  }
  if (chdir(kNewRootAt) != 0) return Step("chdir to the empty root");
  if (syscall(SYS_pivot_root, ".", ".") != 0) return Step("pivot_root");
  // The old root is stacked on top of "." now: detach it, and with it every host path.
  if (umount2(".", MNT_DETACH) != 0) return Step("umount the old root");
  if (chdir("/") != 0) return Step("chdir /");
  return DropAllCapabilities(keep);
}

void ForgetHostProc() {
  platform::SetProcDirForLayout(-1);
  if (g_proc_dir >= 0) close(g_proc_dir);
  g_proc_dir = -1;
}

}  // namespace sentry::shim
