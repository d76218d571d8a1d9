#include "runtime-shim/sandbox.h"

#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <future>
#include <optional>
#include <span>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "gofer/client.h"
#include "gofer/launch.h"
#include "netstack/host_interfaces.h"
#include "netstack/stack.h"
#include "runtime-shim/confine.h"
#include "runtime-shim/guest_paths.h"
#include "runtime-shim/guest_user.h"
#include "runtime-shim/namespaces.h"
#include "runtime-shim/review.h"
#include "runtime-shim/terminal.h"
#include "sentry/base/guest_memory.h"
#include "sentry/base/host_files.h"
#include "sentry/base/logging.h"
#include "sentry/base/startup_trace.h"
#include "sentry/base/status.h"
#include "sentry/kernel/cgroup_view.h"
#include "sentry/kernel/kernel.h"
#include "sentry/kernel/procfs.h"
#include "sentry/kernel/sysfs.h"
#include "syscalls/audit.h"
#include "syscalls/dispatch.h"
#include "syscalls/table.h"
#include "vfs/devfs.h"
#include "vfs/gofer_fs.h"
#include "vfs/host_file.h"
#include "vfs/mem_inode.h"
#include "vfs/overlay.h"
#include "vfs/tty.h"

namespace sentry::shim {
namespace {

// Host fds the Sentry's fd table is sized for at start (RunSandbox).
constexpr rlim_t kFdTablePresize = 4096;

std::string Realpath(const std::string& p) {
  char buf[PATH_MAX];
  if (!realpath(p.c_str(), buf)) return "";
  return buf;
}

// Finds `prog` on the host in `path` the way a shell would, for a clear error before start-up
// when the guest's root is the host's.
absl::StatusOr<std::string> FindProgram(const std::string& prog, const std::string& p) {
  if (prog.find('/') != std::string::npos) {
    if (access(prog.c_str(), F_OK) != 0) return absl::NotFoundError(prog + ": no such file");
    return Realpath(prog);
  }
  size_t i = 0;
  while (i <= p.size()) {
    size_t j = p.find(':', i);
    if (j == std::string::npos) j = p.size();
    std::string dir = j > i ? p.substr(i, j - i) : ".";  // an empty entry is the cwd
    std::string cand = dir + "/" + prog;
    if (access(cand.c_str(), X_OK) == 0) return cand;
    i = j + 1;
  }
  return absl::NotFoundError(prog + ": command not found");
}

absl::Status CheckProgram(const std::string& prog) {
  int fd = open(prog.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::PermissionDeniedError(prog + ": " + strerror(errno));
  char magic[4] = {};
  ssize_t n = read(fd, magic, 4);
  struct stat st;
  fstat(fd, &st);
  close(fd);
  if (S_ISDIR(st.st_mode)) return absl::InvalidArgumentError(prog + ": is a directory");
  bool elf = n == 4 && memcmp(magic, "\x7f" "ELF", 4) == 0;
  bool script = n >= 2 && magic[0] == '#' && magic[1] == '!';
  if (!elf && !script) return absl::InvalidArgumentError(prog + ": not an ELF executable");
  return absl::OkStatus();
}

absl::Status Err(const std::string& what, const Errno& e) {
  return absl::InternalError(what + ": " + strerror(e.code()));
}

// mkdir -p of a guest path in the (writable) root, as the sandbox's root user.
Result<vfs::Path> MakeDirs(vfs::Vfs& v, const vfs::Context& ctx, const std::string& path) {
  std::string cur;
  size_t i = 0;
  while (i < path.size()) {
    size_t j = path.find('/', i + 1);
    if (j == std::string::npos) j = path.size();
    cur = path.substr(0, j);
    // Another container on the same host root may make it between the two calls (20
    // concurrent creates of one bundle): EEXIST is then success, as runc's MkdirAll has it.
    if (!v.Resolve(ctx, ctx.root, cur, true).ok()) {
      auto made = v.Mkdir(ctx, ctx.root, cur, 0755);
      if (!made.ok() && made.error().code() != EEXIST) return made.error();
    }
    i = j;
  }
  return v.Resolve(ctx, ctx.root, path.empty() ? "/" : path, true);
}

// Mounts host file `fd` over guest path `guest` (SandboxOptions::file_binds), making the
// path an empty file first if the root has none (in the in-memory layer, or on the host root
// with RootOnHost, as runc makes its mount points).
absl::Status BindFileIn(vfs::Vfs& v, const vfs::Context& ctx, int fd,
                        const SandboxOptions::FileBind& bind) {
  const std::string& guest = bind.guest;
  std::string dir = guest.substr(0, guest.rfind('/'));
  if (auto r = MakeDirs(v, ctx, dir); !r.ok()) return Err("mkdir " + dir, r.error());
  auto target = v.Resolve(ctx, ctx.root, guest, true);
  if (!target.ok()) {
    auto f = v.Open(ctx, ctx.root, guest, O_WRONLY | O_CREAT, 0644);
    if (!f.ok()) return Err("create " + guest, f.error());
    target = v.Resolve(ctx, ctx.root, guest, true);
    if (!target.ok()) return Err("bind " + guest, target.error());
  }
  if (target->inode()->IsDir()) {
    return Err("bind of a file over the directory " + guest, Errno(ENOTDIR));
  }
  const bool ro = bind.read_only || (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY;
  auto r = v.MountAt(*target, vfs::NewHostFileInode(fd, ro), "bind", bind.host, ro ? MS_RDONLY : 0);
  if (!r.ok()) return Err("bind " + guest, r.error());
  if (ro) {
    auto at = v.Resolve(ctx, ctx.root, guest, true);
    if (!at.ok()) return Err("bind " + guest, at.error());
    v.LockReadOnly(*at);
  }
  return absl::OkStatus();
}

// The directories a read-only root leaves writable (SandboxOptions::read_only_root), with the
// modes they have on a Linux system. /tmp and /var/tmp show the host's files under an
// in-memory layer that takes the guest's writes (programs and projects kept there must stay
// reachable, as they were before the root became read-only); /run starts empty (the host's
// sockets and session files are none of the guest's business).
struct ScratchDir {
  const char* path;
  uint32_t mode;
  bool host_below;
};
constexpr ScratchDir kScratchDirs[] = {
    {"/tmp", 01777, true}, {"/var/tmp", 01777, true}, {"/run", 0755, false}};

// The directory at absolute `path` below `root` (an inode of the gofer's root), or an error.
Result<vfs::InodeRef> LookupBelow(vfs::InodeRef dir, const std::string& path) {
  size_t i = 1;
  while (i < path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    auto next = dir->Lookup(path.substr(i, j - i));
    if (!next.ok()) return next.error();
    dir = *next;
    i = j + 1;
  }
  if (!dir->IsDir()) return Errno(ENOTDIR);
  return dir;
}

// Builds the guest's file system: overlay(gofer root, tmpfs) with /dev, /proc and binds.
// `file_fds`: the host files of opts.file_binds, in order (opened while the host's root was
// still reachable; this runs in the empty root); the file system takes them over.
absl::StatusOr<std::unique_ptr<vfs::Vfs>> BuildVfs(const SandboxOptions& opts,
                                                   std::shared_ptr<gofer::Client> client,
                                                   const std::vector<int>& file_fds,
                                                   vfs::InodeRef* review_root) {
  bool ro = !opts.RootOnHost();
  auto lower = vfs::NewGoferRoot(client, "/", &ro);
  if (!lower.ok()) return Err("gofer attach of the root " + opts.rootfs, lower.error());
  // The root as the guest writes it: the host directory itself (RootOnHost; mount points
  // are then made there, as runc makes them), or an in-memory layer over it.
  auto root = opts.RootOnHost() ? Result<vfs::InodeRef>(*lower)
                                : vfs::NewOverlayRoot(vfs::NewTmpfs(0755, 0, 0), *lower);
  if (!root.ok()) return Err("overlay root", root.error());
  auto v = std::make_unique<vfs::Vfs>(*root, "overlay", "overlay", 0);
  vfs::Context ctx;
  ctx.root = ctx.cwd = v->Root();
  ctx.umask = 0;
  auto mount = [&](const std::string& at, Result<vfs::InodeRef> ino, const char* type,
                   int flags) -> absl::Status {
    if (!ino.ok()) return Err(std::string("mount ") + type, ino.error());
    auto target = MakeDirs(*v, ctx, at);
    if (!target.ok()) return Err("mount point " + at, target.error());
    auto r = v->MountAt(*target, *ino, type, type, flags);
    if (!r.ok()) return Err("mount " + at, r.error());
    return absl::OkStatus();
  };
  SENTRY_RETURN_IF_ERROR(mount("/dev", vfs::NewDevfs(), "devtmpfs", MS_NOSUID));
  SENTRY_RETURN_IF_ERROR(
      mount("/dev/pts", Result<vfs::InodeRef>(vfs::NewDevpts()), "devpts", MS_NOSUID | MS_NOEXEC));
  // POSIX shared memory (shm_open) and sem_open live in a tmpfs of their own, as on Linux.
  SENTRY_RETURN_IF_ERROR(
      mount("/dev/shm", vfs::NewTmpfs(01777, 0, 0, opts.shm_size), "tmpfs", MS_NOSUID | MS_NODEV));
  // /proc and /sys are mounted once the kernel exists (they describe the kernel's processes
  // and the sandbox's CPUs).
  if (auto r = MakeDirs(*v, ctx, "/proc"); !r.ok()) return Err("/proc", r.error());
  if (auto r = MakeDirs(*v, ctx, "/sys"); !r.ok()) return Err("/sys", r.error());
  for (size_t i = 0; i < opts.file_binds.size(); i++) {
    SENTRY_RETURN_IF_ERROR(BindFileIn(*v, ctx, file_fds[i], opts.file_binds[i]));
  }
  for (const auto& t : opts.tmpfs_mounts) {
    SENTRY_RETURN_IF_ERROR(
        mount(t.guest, vfs::NewTmpfs(t.mode, 0, 0, t.size), "tmpfs", MS_NOSUID | MS_NODEV));
  }
  if (opts.read_only_root && opts.scratch_dirs) {
    for (const auto& dir : kScratchDirs) {
      auto host = dir.host_below ? LookupBelow(*lower, dir.path) : Result<vfs::InodeRef>(Errno(ENOENT));
      if (host.ok()) {
        auto over = vfs::NewOverlayRoot(vfs::NewTmpfs(dir.mode, 0, 0), *host);
        SENTRY_RETURN_IF_ERROR(mount(dir.path, over, "overlay", MS_NOSUID | MS_NODEV));
      } else {
        SENTRY_RETURN_IF_ERROR(
            mount(dir.path, vfs::NewTmpfs(dir.mode, 0, 0), "tmpfs", MS_NOSUID | MS_NODEV));
      }
    }
  }
  for (const auto& b : opts.binds) {
    bool bind_ro = b.read_only;
    auto broot = vfs::NewGoferRoot(client, b.guest, &bind_ro);
    if (b.review) {
      if (!broot.ok()) return Err("workspace " + b.host, broot.error());
      auto over = vfs::NewOverlayRoot(vfs::NewTmpfs(0755, 0, 0), *broot,
                                      {.protected_paths = opts.review.protected_paths});
      if (over.ok()) *review_root = *over;
      SENTRY_RETURN_IF_ERROR(mount(b.guest, over, "overlay", MS_NOSUID | MS_NODEV));
      continue;
    }
    SENTRY_RETURN_IF_ERROR(mount(b.guest, broot, "bind", bind_ro ? MS_RDONLY : 0));
    if (!bind_ro) continue;
    auto at = v->Resolve(ctx, ctx.root, b.guest, true);
    if (!at.ok()) return Err("bind " + b.guest, at.error());
    v->LockReadOnly(*at);
  }
  // Last: the mount points above were made in the root's in-memory layer.
  if (opts.read_only_root) v->LockReadOnly(v->Root());
  return v;
}

// The first of `dirs` that is a directory in the guest's file system; "/" if none is.
std::string FirstVisibleDir(vfs::Vfs& v, const std::vector<std::string>& dirs) {
  vfs::Context ctx;
  ctx.root = ctx.cwd = v.Root();
  for (const auto& dir : dirs) {
    auto p = v.Resolve(ctx, ctx.root, dir, true);
    if (p.ok() && p->inode()->IsDir()) return dir;
  }
  return "/";
}

// Sends catchable signals this process receives on to the guest init while it runs: a signal
// handler writes the number to a pipe, and a thread (the handler may not take locks) queues
// it for the init's thread group as kill(2) from outside the sandbox would.
class SignalForwarder {
 public:
  // With `terminal`, SIGWINCH is left to the terminal relay, which passes the new size on.
  // With `all`, every signal a container's init may want (kill of an OCI container); else
  // only those that ask a command to end or that it may catch (sentry-run): stop signals
  // still stop sentry-run itself, as for any program run from a shell.
  SignalForwarder(kernel::Kernel& k, bool terminal, bool all)
      : k_(k),
        terminal_(terminal),
        signals_(all ? std::span<const int>(kAll) : std::span<const int>(kEnding)) {
    if (pipe2(pipe_, O_CLOEXEC) != 0) return;
    write_fd_ = pipe_[1];
    thread_ = std::thread([this] { Loop(); });
    struct sigaction sa {};
    sa.sa_handler = [](int sig) {
      int saved = errno;
      unsigned char b = static_cast<unsigned char>(sig);
      (void)!write(write_fd_, &b, 1);
      errno = saved;
    };
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (int sig : signals_) {
      if (!(terminal_ && sig == SIGWINCH)) sigaction(sig, &sa, nullptr);
    }
  }
  ~SignalForwarder() {
    if (!thread_.joinable()) return;
    for (int sig : signals_) {
      if (!(terminal_ && sig == SIGWINCH)) signal(sig, SIG_DFL);
    }
    unsigned char stop = 0;
    (void)!write(pipe_[1], &stop, 1);
    thread_.join();
    close(pipe_[0]);
    close(pipe_[1]);
  }

 private:
  // Not SIGPIPE (the Sentry's own writes to closed pipes raise it), SIGCHLD or the
  // real-time signals (the platforms use them).
  static constexpr int kAll[] = {SIGHUP,  SIGINT,  SIGQUIT, SIGUSR1, SIGUSR2, SIGTERM,
                                 SIGALRM, SIGCONT, SIGTSTP, SIGTTIN, SIGTTOU, SIGWINCH};
  static constexpr int kEnding[] = {SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2, SIGTERM};
  void Loop() {
    unsigned char sig;
    while (read(pipe_[0], &sig, 1) == 1 && sig != 0) {
      abi::SigInfo info{};
      info.signo = sig;
      int target = k_.main_tgid();
      absl::MutexLock l(&k_.mu());
      if (kernel::ThreadGroup* tg = k_.GroupByTgid(target)) k_.SendGroupSignal(*tg, info);
    }
  }
  kernel::Kernel& k_;
  bool terminal_;
  std::span<const int> signals_;
  int pipe_[2] = {-1, -1};
  static inline int write_fd_ = -1;  // for the handler
  std::thread thread_;
};

}  // namespace

absl::StatusOr<SandboxOptions::Bind> ParseBind(const std::string& spec) {
  SandboxOptions::Bind b;
  std::vector<std::string> parts;
  size_t i = 0;
  while (i <= spec.size()) {
    size_t j = spec.find(':', i);
    if (j == std::string::npos) j = spec.size();
    parts.push_back(spec.substr(i, j - i));
    i = j + 1;
  }
  if (parts.size() == 3) {
    if (parts[2] != "ro" && parts[2] != "rw") {
      return absl::InvalidArgumentError("--bind " + spec + ": the mode must be ro or rw");
    }
    b.read_only = parts[2] == "ro";
  } else if (parts.size() > 3) {
    return absl::InvalidArgumentError("--bind " + spec + ": expected HOST:GUEST[:ro]");
  }
  b.host = parts[0];
  b.guest = parts.size() > 1 && !parts[1].empty() ? parts[1] : parts[0];
  if (b.guest.empty() || b.guest[0] != '/') {
    return absl::InvalidArgumentError("--bind " + spec + ": the guest path must be absolute");
  }
  std::string real = Realpath(b.host);
  struct stat st;
  if (real.empty() || stat(real.c_str(), &st) != 0 ||
      !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
    return absl::InvalidArgumentError("--bind " + spec + ": " + b.host +
                                      " is not a host directory or regular file");
  }
  b.host = real;
  b.file = S_ISREG(st.st_mode);
  return b;
}

// The reviewable workspace's changes, once the guest is gone (runtime-shim/review.h).
static void ExportWorkspace(const SandboxOptions& opts, const vfs::InodeRef& root) {
  std::string workspace;
  for (const auto& b : opts.binds) {
    if (b.review) workspace = b.host;
  }
  auto n = ExportReview(root, workspace, opts.review.fd, opts.review.diff_fd);
  if (!n.ok()) {
    fprintf(stderr, "sentry-run: the review of %s is incomplete: %s\n", workspace.c_str(),
            std::string(n.status().message()).c_str());
  } else if (*n == 0) {
    fprintf(stderr, "sentry-run: no changes to %s\n", workspace.c_str());
  } else {
    fprintf(stderr,
            "sentry-run: %zu changes to %s kept for review in %s: see `sentry-run diff`, "
            "then `sentry-run apply`\n",
            *n, workspace.c_str(), opts.review.file.c_str());
  }
}

// {"syscalls": N, "by_name": {"read": n, ...}}, the most frequent first; closes `fd`.
void WriteStats(int fd) {
  auto counts = syscalls::SyscallCounts();
  std::sort(counts.begin(), counts.end(), [](auto& a, auto& b) { return a.second > b.second; });
  uint64_t total = 0;
  std::string names;
  for (auto [nr, n] : counts) {
    total += n;
    const syscalls::SyscallEntry* e = syscalls::Lookup(nr);
    std::string name = e != nullptr ? e->name : "nr_" + std::to_string(nr);
    names += (names.empty() ? "\"" : ", \"") + name + "\": " + std::to_string(n);
  }
  std::string json =
      "{\"syscalls\": " + std::to_string(total) + ", \"by_name\": {" + names + "}}\n";
  for (size_t off = 0; off < json.size();) {
    ssize_t n = write(fd, json.data() + off, json.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    off += n;
  }
  close(fd);
}

absl::StatusOr<int> RunSandbox(const SandboxOptions& opts) {
  log::Init(opts.debug ? spdlog::level::debug : spdlog::level::warn, opts.strace);
  // Debian's Abseil checks every Mutex acquisition for lock-order cycles, which costs a graph
  // update per lock on the syscall path; --debug keeps the check.
  if (!opts.debug) absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  if (opts.argv.empty()) return absl::InvalidArgumentError("no program given");
  // A stdio fd the caller closed is held by /dev/null from here on, so that no host fd the
  // Sentry opens (the stub executable, a kept /proc file) lands on it and becomes the guest's
  // stdin, stdout or stderr.
  bool stdio_closed[3] = {};
  for (int i = 0; i < 3; i++) {
    if (fcntl(i, F_GETFD) >= 0) continue;
    stdio_closed[i] = true;
    int fd = open("/dev/null", O_RDWR);
    if (fd >= 0 && fd != i) {
      dup2(fd, i);
      close(fd);
    }
  }
  if (opts.unsafe_no_confinement) {
    WarnUnconfined("sentry");
  } else if (!InSentryNamespaces()) {
    return absl::InternalError("the Sentry was not started in its namespaces (Supervise)");
  }
  // The guest starts with the caller's RLIMIT_NOFILE; the Sentry takes all the host allows,
  // since it holds host fds for every guest process (stubs, donated files), not just one. So
  // does the gofer, forked below, which holds one per directory the guest walked.
  struct rlimit nofile {};
  getrlimit(RLIMIT_NOFILE, &nofile);
  if (nofile.rlim_cur < nofile.rlim_max) {
    struct rlimit raised = {nofile.rlim_max, nofile.rlim_max};
    setrlimit(RLIMIT_NOFILE, &raised);
  }
  // One malloc arena: glibc gives each new thread an arena of its own and grows it by
  // mprotect, one call per page a request needs, where the main arena grows by brk with a
  // 128 KiB pad; the Sentry's task threads, which cache inodes and dentries as the guest
  // walks, paid ~9,000 mprotects for a `du -s /usr/share/man` (profile: ~10% of the Sentry's
  // time). Threads still allocate mostly from their own tcache. (M_TOP_PAD is left alone:
  // setting it also fixes the mmap threshold, and every large buffer became an mmap and a
  // munmap.) The gofer, forked below, inherits the setting.
  mallopt(M_ARENA_MAX, 1);
  // The fd table grown now, while the Sentry has one thread: the host grows a table that
  // threads share only after an RCU grace period (expand_fdtable's synchronize_rcu; 3-20 ms
  // here), in whichever Sentry thread opens the fd that does not fit. With direct file access
  // the Sentry holds a host fd per file the guest has open, and more in its caches: a
  // `grep -rn` over 828 files waited at fds 256 and 512, ~10 ms in all. The table never
  // shrinks; the gofer, forked below, gets a table sized to its own open fds.
  {
    rlim_t top = std::min<rlim_t>(kFdTablePresize, nofile.rlim_max) - 1;
    int fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, static_cast<int>(top));
    if (fd >= 0) close(fd);
  }
  std::vector<gofer::GoferMount> gmounts = {{"/", opts.rootfs, !opts.RootOnHost(), opts.submounts}};
  for (const auto& b : opts.binds) {
    gmounts.push_back({b.guest, b.host, b.read_only || b.review, opts.submounts});
  }
  // What the guest creates on a bind belongs to whoever ran sentry-run, not to a guest uid;
  // in a container whose root it writes (OCI), to the guest's ids, as under runc.
  gofer::GoferOptions gopts;
  if (!opts.RootOnHost()) gopts.owner = gofer::GoferOptions::Owner{getuid(), getgid()};
  gopts.hidden = opts.hidden_files;
  gopts.protected_files = opts.protected_files;
  gopts.protected_names = opts.protected_names;
  gopts.unsafe_no_confinement = opts.unsafe_no_confinement;
  // Forked without exec (nothing else runs yet, so the process is single-threaded), first:
  // the gofer's own set-up (namespaces, mounts, its allowlist) runs on the other core while
  // this process prepares its view of the host and finds the program.
  gopts.defer_hello = true;
  auto gp = gofer::StartGofer("", gmounts, gopts);
  if (!gp.ok()) return gp.status();
  startup::Mark("gofer forked");
  if (!opts.unsafe_no_confinement) SENTRY_RETURN_IF_ERROR(PrepareHostView());
  kernel::PrepareCgroupView(opts.cgroup_view, opts.cgroup_view_v2);
  startup::Mark("host view prepared");
  if (opts.tmpfs_size != 0) vfs::MemBudget::Global().SetLimitBytes(opts.tmpfs_size);
  GuestMemory::Global().SetLimitBytes(opts.memory_limit);
  std::string prog = opts.program.empty() ? opts.argv[0] : opts.program;
  if (opts.rootfs == "/" && opts.program.empty()) {
    auto found = FindProgram(opts.argv[0], opts.default_path);
    if (!found.ok()) return found.status();
    SENTRY_RETURN_IF_ERROR(CheckProgram(*found));
    prog = *found;
  }
  // What the file system will need of the host's paths, opened now: a read-write bind whose
  // file the host lets us only read is read-only (its writes would fail on the host too).
  std::vector<int> file_fds;
  for (const auto& file : opts.file_binds) {
    int fd = -1;
    if (!file.read_only) fd = open(file.host.c_str(), O_RDWR | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) fd = open(file.host.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      int err = fd < 0 ? errno : EINVAL;
      for (int f : file_fds) close(f);
      if (fd >= 0) close(fd);
      return absl::NotFoundError("bind mount of " + file.host + ": " + strerror(err));
    }
    file_fds.push_back(fd);
  }
  // For a closed stdio fd of the caller's (the empty root has no /dev/null).
  int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  startup::Mark("program found");
  // While the gofer sets itself up on the other core: leave the host's root and start the
  // platform, neither of which needs the gofer. The gofer has its own view of the host; the
  // Sentry keeps only the fds it opened. Before the platform starts threads: capabilities
  // are dropped per thread.
  if (!opts.unsafe_no_confinement) {
    SENTRY_RETURN_IF_ERROR(EnterEmptyRoot(FileCapabilities(opts.direct_files)));
  }
  startup::Mark("empty root entered");
  auto platform = platform::NewPlatform(opts.platform);
  if (!platform.ok()) return platform.status();
  startup::Mark("platform starting");
  // The allowlist compiles on another thread meanwhile, for the file access asked for (a
  // mount the gofer then keeps makes ConfineSentry compile it again).
  ConfineOptions confine_opts{.net_host = opts.net_host,
                              .debug = opts.debug,
                              .control_socket = opts.attach != nullptr,
                              .direct_files = opts.direct_files};
  std::future<absl::StatusOr<SentryFilter>> filter;
  if (!opts.unsafe_no_confinement) {
    try {
      filter = std::async(std::launch::async, CompileSentryFilter, confine_opts);
    } catch (const std::system_error&) {
      // No thread: ConfineSentry compiles it itself.
    }
  }
  SENTRY_RETURN_IF_ERROR(gofer::AwaitGofer(*gp));
  startup::Mark("gofer serving");
  auto client = std::make_shared<gofer::Client>(gp->sock);
  pid_t gofer_pid = gp->pid;
  client->set_follow_caller(true);
  client->set_on_death([] {
    fprintf(stderr, "sentry-run: the gofer exited; guest file operations now fail with EIO\n");
  });
  if (opts.direct_files) {
    std::vector<std::string> names;
    for (const auto& m : gmounts) names.push_back(m.name);
    client->GoDirect(names, gopts);  // a mount whose fd did not come stays with the gofer
  }
  if (client->direct()) client->WatchPeer();  // after the drop: threads inherit capabilities
  vfs::InodeRef review_root;
  auto vfs_or = BuildVfs(opts, client, file_fds, &review_root);
  if (!vfs_or.ok()) return vfs_or.status();
  startup::Mark("file system built (gofer attached)");

  kernel::Kernel k(std::move(*platform), std::move(*vfs_or));
  {
    // /proc needs the kernel; mount it over the placeholder mount point made above.
    vfs::Context ctx;
    ctx.root = ctx.cwd = k.vfs().Root();
    auto target = k.vfs().Resolve(ctx, ctx.root, "/proc", true);
    if (!target.ok()) return Err("/proc", target.error());
    auto r = k.vfs().MountAt(*target, kernel::NewProcfs(k), "proc", "proc",
                             MS_NOSUID | MS_NODEV | MS_NOEXEC);
    if (!r.ok()) return Err("mount /proc", r.error());
    auto sys = k.vfs().Resolve(ctx, ctx.root, "/sys", true);
    if (!sys.ok()) return Err("/sys", sys.error());
    r = k.vfs().MountAt(*sys, kernel::NewSysfs(k), "sysfs", "sysfs",
                        MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC);
    if (!r.ok()) return Err("mount /sys", r.error());
    SENTRY_RETURN_IF_ERROR(ApplyPathRestrictions(k.vfs(), opts.masked_paths, opts.readonly_paths));
  }
  if (opts.net_host) {
    k.net().Configure(netstack::NetMode::kHost,
                      std::make_unique<netstack::EgressPolicy>(opts.allow_net, opts.deny_net));
    k.net().SetPublished(opts.publish);
    k.net().SetPublishAll(opts.publish_all);
    k.net().policy()->answer_dns = opts.answer_dns;
    k.net().SetHostLoopback(opts.host_loopback);
  }
  (void)k.net().SetUnprivilegedPortStart(opts.unprivileged_port_start);
  if (!opts.hostname.empty()) {
    absl::MutexLock l(&k.mu());
    k.init_uts().hostname = opts.hostname;
  }
  k.set_dispatch(&syscalls::Dispatch);
  startup::Mark("kernel made, /proc and /sys mounted");
  // The stub factory started in the background meanwhile; it read the host's /proc.
  SENTRY_RETURN_IF_ERROR(platform::AwaitPlatformStarted());
  ForgetHostProc();
  startup::Mark("platform started");
  bool auditing = opts.audit_fd >= 0 || opts.audit_summary;
  if (auditing) {
    syscalls::audit::Start(k, opts.audit_fd, opts.audit_summary);
    if (netstack::EgressPolicy* p = k.net().policy()) p->observer = &syscalls::audit::NetDenied;
  }
  if (opts.max_tasks > 0) k.set_max_tasks(opts.max_tasks);
  if (opts.stats_fd >= 0) syscalls::StartSyscallCounts();
  kernel::Kernel::StartOptions so;
  // As Linux's nr_open bounds it.
  so.nofile = {std::min<uint64_t>(nofile.rlim_cur, 1 << 20),
               std::min<uint64_t>(nofile.rlim_max, 1 << 20)};
  if (opts.open_files > 0) {
    so.nofile = {static_cast<uint64_t>(opts.open_files), static_cast<uint64_t>(opts.open_files)};
  }
  if (opts.cpu_time > 0) {
    // The soft limit's SIGXCPU lets the guest finish; the hard one a second later cannot be
    // caught (as Linux's check_process_timers).
    uint64_t secs = static_cast<uint64_t>(opts.cpu_time);
    so.rlimits.push_back({RLIMIT_CPU, {secs, secs + 1}});
  }
  if (opts.file_size > 0) so.rlimits.push_back({RLIMIT_FSIZE, {opts.file_size, opts.file_size}});
  for (const auto& [resource, soft, hard] : opts.rlimits) {
    if (resource == RLIMIT_NOFILE) {
      so.nofile = {soft, hard};
    } else {
      so.rlimits.push_back({resource, {soft, hard}});
    }
  }
  so.groups = opts.groups;
  so.umask = opts.umask;
  so.no_new_privs = opts.no_new_privs;
  so.caps = opts.caps;
  so.path = prog;
  so.cwd = opts.cwd.empty() ? FirstVisibleDir(k.vfs(), opts.cwd_if_visible) : opts.cwd;
  so.argv = opts.argv;
  so.uid = opts.uid;
  so.seccomp_filter = opts.seccomp_filter;
  so.gid = opts.gid;
  if (!opts.env_exact) {
    so.envp = {"PATH=" + opts.default_path, "HOME=" + opts.default_home, "LANG=C.UTF-8"};
    if (const char* term = getenv("TERM")) so.envp.push_back(std::string("TERM=") + term);
  }
  for (const auto& e : opts.env) {
    // A later entry replaces an earlier one of the same name (getenv takes the first).
    std::string key = e.substr(0, e.find('=') + 1);
    auto same = std::find_if(so.envp.begin(), so.envp.end(),
                             [&](const std::string& o) { return o.rfind(key, 0) == 0; });
    if (same != so.envp.end()) {
      *same = e;
    } else {
      so.envp.push_back(e);
    }
  }
  // An OCI process without HOME gets the one runc gives it (guest_user.h).
  if (opts.env_exact) {
    AddHomeFromPasswd(k.vfs(), static_cast<uint32_t>(so.uid >= 0 ? so.uid : getuid()), so.envp);
  }
  std::unique_ptr<TerminalRelay> terminal;
  if (opts.terminal_fd >= 0) {
    auto t = TerminalRelay::Start(k.vfs(), opts.terminal_fd);
    if (!t.ok()) return t.status();
    terminal = std::move(*t);
  } else if (opts.tty) {
    auto t = TerminalRelay::StartIfTerminal(k.vfs());
    if (!t.ok()) return t.status();
    terminal = std::move(*t);
  }
  const char* names[] = {"stdin", "stdout", "stderr"};
  for (int i = 0; i < 3; i++) {
    if (terminal && (opts.terminal_fd >= 0 || isatty(i))) {
      so.stdio.push_back(terminal->slave());
      continue;
    }
    int hfd = stdio_closed[i] ? -1 : fcntl(i, F_DUPFD_CLOEXEC, 10);
    if (hfd < 0) hfd = fcntl(devnull, F_DUPFD_CLOEXEC, 10);
    int fl = fcntl(i, F_GETFL);
    if (fl < 0) fl = O_RDWR;
    so.stdio.push_back(vfs::NewHostStreamFile(hfd, fl & (O_ACCMODE | O_APPEND), names[i]));
  }
  // The terminal belongs to init's session (PID 1's, which the program shares with the
  // Sentry's init), with that process group in the foreground.
  so.sentry_init = opts.sentry_init;
  if (terminal) terminal->AttachSession(1, 1);
  if (devnull >= 0) close(devnull);
  signal(SIGPIPE, SIG_IGN);
  absl::StatusOr<int> status = absl::UnknownError("the guest did not start");
  absl::Status held = opts.before_start ? opts.before_start() : absl::OkStatus();
  // Only now: an OCI runtime's hooks (Docker's libnetwork-setkey) move the container's
  // interfaces into this namespace after the sandbox is set up, before `start` lets it go on.
  if (held.ok() && opts.net_host && opts.show_host_interfaces) {
    netstack::SetHostInterfaces(netstack::ReadHostInterfaces(), netstack::ReadHostRoutes());
  }
  if (!held.ok()) {
    status = held;
  } else {
    std::optional<SignalForwarder> forwarder;
    if (opts.forward_signals || opts.sentry_init) {
      forwarder.emplace(k, terminal != nullptr, opts.forward_signals);
    }
    std::shared_ptr<void> attached;
    if (opts.attach) attached = opts.attach(k);
    // Last step before the guest's first instruction: every thread, host fd and stub the
    // Sentry sets up with calls outside its allowlist exists by now.
    absl::Status confined = absl::OkStatus();
    if (!opts.unsafe_no_confinement) {
      confine_opts.direct_files = client->direct();
      std::optional<absl::StatusOr<SentryFilter>> compiled;
      if (filter.valid()) compiled = filter.get();
      confined = ConfineSentry(confine_opts, compiled && compiled->ok() ? &**compiled : nullptr);
    }
    startup::Mark("Sentry confined");
    status = confined.ok() ? k.Run(so) : absl::StatusOr<int>(confined);
  }
  startup::Mark("guest exited");
  if (terminal) terminal->Finish();
  if (auditing) syscalls::audit::Finish();
  if (opts.stats_fd >= 0) WriteStats(opts.stats_fd);
  if (review_root && opts.review.fd >= 0) ExportWorkspace(opts, review_root);
  bool gofer_died = client->dead();
  // Files still cached by the kernel release their handles after this point: not a death.
  client->set_on_death(nullptr);
  client.reset();
  kill(gofer_pid, SIGKILL);
  waitpid(gofer_pid, nullptr, 0);
  startup::Mark("gofer reaped");
  startup::Report("sentry");
  if (!status.ok()) return status.status();
  if (gofer_died) return absl::UnavailableError("the gofer died while the sandbox ran");
  int s = *status;
  if (opts.wait_status != nullptr) *opts.wait_status = s;
  if (WIFSIGNALED(s)) return 128 + WTERMSIG(s);
  return WEXITSTATUS(s);
}

}  // namespace sentry::shim
