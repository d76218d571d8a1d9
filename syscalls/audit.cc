#include "syscalls/audit.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "syscalls/common.h"
#include "syscalls/sys_socket.h"

namespace sentry::syscalls::audit {
namespace {

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          out += absl::StrFormat("\\u%04x", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

// A file being written: its bytes are reported once, when the writer closes it (or at the
// end for files still open then).
struct Written {
  std::weak_ptr<vfs::FileDescription> file;
  std::string path;
  int pid;
  std::string comm;
  uint64_t bytes = 0;
};

class Trail {
 public:
  Trail(kernel::Kernel& k, int fd, bool summary)
      : k_(k), fd_(fd), summary_(summary), start_(std::chrono::steady_clock::now()) {}

  // One event: `fields` is the rest of the JSON object after the common keys.
  void Emit(int pid, const std::string& comm, const std::string& event,
            const std::string& fields) {
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::string line = absl::StrFormat(R"({"time":%.6f,"pid":%d,"comm":%s,"event":"%s")", secs,
                                       pid, Quote(comm), event);
    if (!fields.empty()) absl::StrAppend(&line, ",", fields);
    line += "}\n";
    absl::MutexLock l(&mu_);
    if (fd_ < 0) return;
    for (size_t off = 0; off < line.size();) {
      ssize_t n = write(fd_, line.data() + off, line.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // a full disk or a closed pipe: the trail stops, the guest goes on
      off += n;
    }
  }
  void Emit(kernel::Task& t, const std::string& event, const std::string& fields) {
    Emit(t.tg().tgid, t.comm(), event, fields);
  }

  void FileEvent(kernel::Task& t, const std::string& op, const std::string& path,
                 const std::string& extra = "") {
    Emit(t, "file", absl::StrCat(R"("op":")", op, R"(","path":)", Quote(path), extra));
    absl::MutexLock l(&mu_);
    changed_.insert(path);
  }

  void Deny(kernel::Task& t, const std::string& op, const std::string& what,
            const std::string& rule) {
    Emit(t, "deny", absl::StrCat(R"("op":")", op, R"(",)", what, R"(,"rule":)", Quote(rule)));
    absl::MutexLock l(&mu_);
    denials_++;
  }

  void Wrote(kernel::Task& t, const vfs::FileRef& f, uint64_t bytes) {
    {
      absl::MutexLock l(&mu_);
      auto it = written_.find(f.get());
      if (it != written_.end() && !it->second.file.expired()) {
        it->second.bytes += bytes;
        return;
      }
    }
    // New, or a file closed without close(2) whose memory this one reuses: report that one.
    Closed(f.get());
    Written w{f, FilePath(t, f), t.tg().tgid, t.comm(), bytes};
    absl::MutexLock l(&mu_);
    written_.insert_or_assign(f.get(), std::move(w));
  }

  void Closed(const vfs::FileDescription* f) {
    Written w;
    {
      absl::MutexLock l(&mu_);
      auto it = written_.find(f);
      if (it == written_.end()) return;
      w = std::move(it->second);
      written_.erase(it);
      changed_.insert(w.path);
    }
    Emit(w.pid, w.comm, "file",
         absl::StrCat(R"("op":"write","path":)", Quote(w.path), R"(,"bytes":)", w.bytes));
  }

  void Exec(kernel::Task& t, const Pre& pre) {
    std::vector<std::string> args;
    for (const auto& a : pre.argv) args.push_back(Quote(a));
    std::string cwd = t.kernel().vfs().PathString(t.fs().root(), t.fs().cwd());
    Emit(t, "exec",
         absl::StrCat(R"("path":)", Quote(pre.path), R"(,"argv":[)", absl::StrJoin(args, ","),
                      R"(],"cwd":)", Quote(cwd)));
    absl::MutexLock l(&mu_);
    execs_++;
    std::string name = pre.path.substr(pre.path.rfind('/') + 1);
    if (programs_.size() < 12 || programs_.count(name)) programs_[name]++;
  }

  void Net(kernel::Task& t, const std::string& op, const std::string& addr, int64_t ret) {
    std::string result = ret >= 0 || ret == -EINPROGRESS ? "ok" : ErrnoName(-ret) ?: "error";
    Emit(t, "net",
         absl::StrCat(R"("op":")", op, R"(","addr":)", Quote(addr), R"(,"result":")", result,
                      "\""));
    absl::MutexLock l(&mu_);
    if (op == "connect") connects_++;
  }

  void NetDenied(const char* what, const std::string& dst, const std::string& why) {
    kernel::Task* t = kernel::Task::Current();
    Emit(t ? t->tg().tgid : 0, t ? t->comm() : "", "deny",
         absl::StrCat(R"("op":")", what, R"(","addr":)", Quote(dst), R"(,"rule":)", Quote(why)));
    absl::MutexLock l(&mu_);
    denials_++;
    net_denied_++;
  }

  void Exited(kernel::ThreadGroup& tg, int status) {
    std::string comm = tg.leader ? tg.leader->comm() : "";
    kernel::CpuTime cpu = k_.GroupCpuUsage(tg);  // Kernel::mu_ is held by the caller
    std::string how = WIFSIGNALED(status)
                          ? absl::StrCat(R"("status":)", 128 + WTERMSIG(status), R"(,"signal":)",
                                         WTERMSIG(status))
                          : absl::StrCat(R"("status":)", WEXITSTATUS(status));
    Emit(tg.tgid, comm, "exit",
         absl::StrCat(how, R"(,"user_ms":)", cpu.user_ns / 1000000, R"(,"sys_ms":)",
                      cpu.sys_ns / 1000000));
  }

  void Finish() {
    // Files written and closed without a close(2) (at exit, by dup2, by exec's close-on-exec)
    // and files still open: their totals now.
    std::vector<const vfs::FileDescription*> left;
    {
      absl::MutexLock l(&mu_);
      for (auto& [f, w] : written_) left.push_back(f);
    }
    for (auto* f : left) Closed(f);
    absl::MutexLock l(&mu_);
    if (summary_) {
      std::vector<std::string> progs;
      for (auto& [name, n] : programs_) {
        progs.push_back(n > 1 ? absl::StrCat(name, " x", n) : name);
      }
      fprintf(stderr,
              "sentry-run: audit: %d program%s run (%s); %zu file%s changed; %d connection%s; "
              "%d denial%s%s\n",
              execs_, execs_ == 1 ? "" : "s", absl::StrJoin(progs, ", ").c_str(), changed_.size(),
              changed_.size() == 1 ? "" : "s", connects_, connects_ == 1 ? "" : "s", denials_,
              denials_ == 1 ? "" : "s",
              net_denied_ ? absl::StrCat(" (", net_denied_, " network)").c_str() : "");
      int shown = 0;
      for (const auto& p : changed_) {
        if (shown++ == 20) {
          fprintf(stderr, "sentry-run: audit:   ... and %zu more\n", changed_.size() - 20);
          break;
        }
        fprintf(stderr, "sentry-run: audit:   changed %s\n", p.c_str());
      }
    }
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  kernel::Kernel& k_;
  absl::Mutex mu_;
  int fd_ ABSL_GUARDED_BY(mu_);
  const bool summary_;
  const std::chrono::steady_clock::time_point start_;
  std::map<const vfs::FileDescription*, Written> written_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> changed_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> programs_ ABSL_GUARDED_BY(mu_);
  int execs_ ABSL_GUARDED_BY(mu_) = 0;
  int connects_ ABSL_GUARDED_BY(mu_) = 0;
  int denials_ ABSL_GUARDED_BY(mu_) = 0;
  int net_denied_ ABSL_GUARDED_BY(mu_) = 0;
};

Trail* trail = nullptr;

// The absolute guest path a (dirfd, path) argument names, without resolving its last
// component (which an unlink or rename is about to remove).
std::string AbsPath(kernel::Task& t, int dirfd, GuestAddr addr) {
  auto path = t.CopyInString(addr);
  if (!path.ok()) return "";
  if (!path->empty() && (*path)[0] == '/') return *path;
  vfs::Context ctx = t.VfsContext();
  auto base = StartAt(t, ctx, dirfd, *path);
  if (!base.ok()) return *path;
  std::string dir = t.kernel().vfs().PathString(ctx.root, *base);
  if (path->empty()) return dir;
  return dir == "/" ? "/" + *path : dir + "/" + *path;
}

std::string Str(kernel::Task& t, uint64_t addr) {
  auto s = t.CopyInString(GuestAddr(addr));
  return s.ok() ? *s : "";
}

uint64_t OpenHowFlags(kernel::Task& t, uint64_t how) {
  auto f = t.CopyIn<uint64_t>(GuestAddr(how));  // struct open_how starts with flags
  return f.ok() ? *f : 0;
}

// Whether an open with `flags` can create, truncate or be refused for writing: the only
// opens the trail reports. The others (almost every open a build or a search makes) skip the
// path work, a second lookup of the path among it.
bool MayChange(uint64_t flags) { return (flags & O_ACCMODE) != O_RDONLY || (flags & O_CREAT); }

bool Exists(kernel::Task& t, int dirfd, GuestAddr addr) {
  vfs::Context ctx = t.VfsContext();
  return ResolveAt(t, ctx, dirfd, addr, 0).ok();
}

vfs::FileRef RegularFile(kernel::Task& t, int fd) {
  auto f = t.fds().Get(fd);
  if (!f.ok() || !(*f)->inode() || !S_ISREG((*f)->inode()->Type())) return nullptr;
  return *f;
}

// "127.0.0.1:80", "[::1]:80", "unix:/run/x.sock", "unix:@abstract".
std::string FormatAddr(const netstack::SockAddr& raw) {
  struct sockaddr_storage ss {};
  size_t len = std::min(raw.size(), sizeof(ss));
  if (len < sizeof(sa_family_t)) return "";
  memcpy(&ss, raw.data(), len);
  char ip[INET6_ADDRSTRLEN] = "?";
  if (ss.ss_family == AF_INET) {
    auto* sin = reinterpret_cast<struct sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip));
    return absl::StrFormat("%s:%u", ip, ntohs(sin->sin_port));
  }
  if (ss.ss_family == AF_INET6) {
    auto* sin6 = reinterpret_cast<struct sockaddr_in6*>(&ss);
    inet_ntop(AF_INET6, &sin6->sin6_addr, ip, sizeof(ip));
    return absl::StrFormat("[%s]:%u", ip, ntohs(sin6->sin6_port));
  }
  if (ss.ss_family == AF_UNIX) {
    auto* sun = reinterpret_cast<struct sockaddr_un*>(&ss);
    size_t n = len - offsetof(struct sockaddr_un, sun_path);
    if (n == 0) return "unix:";
    if (sun->sun_path[0] == '\0') return "unix:@" + std::string(sun->sun_path + 1, n - 1);
    return "unix:" + std::string(sun->sun_path, strnlen(sun->sun_path, n));
  }
  return absl::StrFormat("family %d", ss.ss_family);
}

std::string SockAddr(kernel::Task& t, uint64_t addr, uint64_t len) {
  if (addr == 0 || len > sizeof(struct sockaddr_storage)) return "";
  netstack::SockAddr raw(len);
  if (!t.CopyInBytes(GuestAddr(addr), {raw.data(), raw.size()}).ok()) return "";
  return FormatAddr(raw);
}

// Where socket `fd` is bound (for listen).
std::string BoundAddr(kernel::Task& t, int fd) {
  auto s = GetSocket(t, fd);
  if (!s.ok()) return "";
  auto name = s->second->SockName();
  return name.ok() ? FormatAddr(*name) : "";
}

constexpr const char* kReadOnlyRule =
    "read-only file system (outside the workspace, binds and allowWrite)";

}  // namespace

void Start(kernel::Kernel& k, int fd, bool summary) {
  trail = new Trail(k, fd, summary);
  k.exit_observer = [](kernel::ThreadGroup& tg, int status) { trail->Exited(tg, status); };
  internal::enabled.store(true);
}

void Finish() {
  if (trail == nullptr) return;
  internal::enabled.store(false);
  trail->Finish();
}

void NetDenied(const char* what, const std::string& dst, const std::string& why) {
  if (Enabled()) trail->NetDenied(what, dst, why);
}

void Before(kernel::Task& t, uint64_t nr, const SyscallArgs& a, Pre& pre) {
  auto fd = [&](int i) { return static_cast<int>(a.a[i]); };
  pre.wanted = true;
  switch (nr) {
    case SYS_execve:
    case SYS_execveat: {
      bool at = nr == SYS_execveat;
      pre.path = AbsPath(t, at ? fd(0) : AT_FDCWD, GuestAddr(a.a[at ? 1 : 0]));
      auto argv = t.CopyInStringArray(GuestAddr(a.a[at ? 2 : 1]));
      if (argv.ok()) pre.argv = std::move(*argv);
      break;
    }
    case SYS_open:
    case SYS_creat:
      if (nr == SYS_open && !MayChange(a.a[1])) {
        pre.wanted = false;
        break;
      }
      pre.path = AbsPath(t, AT_FDCWD, GuestAddr(a.a[0]));
      pre.existed = Exists(t, AT_FDCWD, GuestAddr(a.a[0]));
      break;
    case SYS_openat:
    case SYS_openat2:
      if (!MayChange(nr == SYS_openat ? a.a[2] : OpenHowFlags(t, a.a[2]))) {
        pre.wanted = false;
        break;
      }
      pre.path = AbsPath(t, fd(0), GuestAddr(a.a[1]));
      pre.existed = Exists(t, fd(0), GuestAddr(a.a[1]));
      break;
    case SYS_unlink:
    case SYS_rmdir:
    case SYS_mkdir:
    case SYS_chmod:
    case SYS_mknod:
    case SYS_truncate:
      pre.path = AbsPath(t, AT_FDCWD, GuestAddr(a.a[0]));
      break;
    case SYS_unlinkat:
    case SYS_mkdirat:
    case SYS_fchmodat:
    case SYS_mknodat:
      pre.path = AbsPath(t, fd(0), GuestAddr(a.a[1]));
      break;
    case SYS_rename:
    case SYS_link:
      pre.path = AbsPath(t, AT_FDCWD, GuestAddr(a.a[0]));
      pre.path2 = AbsPath(t, AT_FDCWD, GuestAddr(a.a[1]));
      break;
    case SYS_renameat:
    case SYS_renameat2:
    case SYS_linkat:
      pre.path = AbsPath(t, fd(0), GuestAddr(a.a[1]));
      pre.path2 = AbsPath(t, fd(2), GuestAddr(a.a[3]));
      break;
    case SYS_symlink:
      pre.path = AbsPath(t, AT_FDCWD, GuestAddr(a.a[1]));
      pre.path2 = Str(t, a.a[0]);
      break;
    case SYS_symlinkat:
      pre.path = AbsPath(t, fd(1), GuestAddr(a.a[2]));
      pre.path2 = Str(t, a.a[0]);
      break;
    case SYS_write:
    case SYS_pwrite64:
    case SYS_writev:
    case SYS_pwritev:
    case SYS_pwritev2:
    case SYS_fchmod:
    case SYS_ftruncate:
    case SYS_sendfile:
      pre.file = RegularFile(t, fd(0));
      break;
    case SYS_copy_file_range:
    case SYS_splice:
      pre.file = RegularFile(t, fd(2));
      break;
    case SYS_close:
    case SYS_dup2:
    case SYS_dup3: {
      auto f = t.fds().Get(fd(nr == SYS_close ? 0 : 1));
      if (f.ok()) pre.file = *f;
      break;
    }
    default:
      pre.wanted = false;
  }
}

void After(kernel::Task& t, uint64_t nr, const SyscallArgs& a, int64_t ret, Pre& pre) {
  bool ok = ret >= 0;
  auto erofs = [&](const char* op, const std::string& path) {
    if (ret == -EROFS) trail->Deny(t, op, "\"path\":" + Quote(path), kReadOnlyRule);
  };
  switch (nr) {
    case SYS_execve:
    case SYS_execveat:
      if (ok) trail->Exec(t, pre);
      return;
    case SYS_open:
    case SYS_creat:
    case SYS_openat:
    case SYS_openat2: {
      if (!pre.wanted) return;  // read-only: nothing to report
      uint64_t flags = nr == SYS_creat   ? O_CREAT | O_WRONLY | O_TRUNC
                       : nr == SYS_open  ? a.a[1]
                       : nr == SYS_openat ? a.a[2]
                                          : OpenHowFlags(t, a.a[2]);
      bool regular = ok && RegularFile(t, static_cast<int>(ret)) != nullptr;
      if (regular && (flags & O_CREAT) && !pre.existed) trail->FileEvent(t, "create", pre.path);
      if (regular && (flags & O_TRUNC) && pre.existed && (flags & O_ACCMODE) != O_RDONLY) {
        trail->FileEvent(t, "truncate", pre.path);
      }
      if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_CREAT)) erofs("open", pre.path);
      return;
    }
    case SYS_unlink:
      if (ok) trail->FileEvent(t, "delete", pre.path);
      erofs("delete", pre.path);
      return;
    case SYS_rmdir:
      if (ok) trail->FileEvent(t, "rmdir", pre.path);
      erofs("rmdir", pre.path);
      return;
    case SYS_unlinkat: {
      const char* op = a.a[2] & AT_REMOVEDIR ? "rmdir" : "delete";
      if (ok) trail->FileEvent(t, op, pre.path);
      erofs(op, pre.path);
      return;
    }
    case SYS_mkdir:
    case SYS_mkdirat:
      if (ok) trail->FileEvent(t, "mkdir", pre.path);
      erofs("mkdir", pre.path);
      return;
    case SYS_mknod:
    case SYS_mknodat:
      if (ok) trail->FileEvent(t, "create", pre.path);
      erofs("create", pre.path);
      return;
    case SYS_chmod:
    case SYS_fchmodat: {
      uint32_t mode = static_cast<uint32_t>(a.a[nr == SYS_chmod ? 1 : 2]) & 07777;
      if (ok) trail->FileEvent(t, "chmod", pre.path, absl::StrFormat(R"(,"mode":"0%o")", mode));
      erofs("chmod", pre.path);
      return;
    }
    case SYS_fchmod:
      if (ok && pre.file) {
        trail->FileEvent(t, "chmod", FilePath(t, pre.file),
                         absl::StrFormat(R"(,"mode":"0%o")", a.a[1] & 07777));
      }
      return;
    case SYS_truncate:
      if (ok) trail->FileEvent(t, "truncate", pre.path);
      erofs("truncate", pre.path);
      return;
    case SYS_ftruncate:
      if (ok && pre.file) trail->FileEvent(t, "truncate", FilePath(t, pre.file));
      return;
    case SYS_rename:
    case SYS_renameat:
    case SYS_renameat2:
      if (ok) trail->FileEvent(t, "rename", pre.path, R"(,"to":)" + Quote(pre.path2));
      erofs("rename", pre.path);
      return;
    case SYS_link:
    case SYS_linkat:
      if (ok) trail->FileEvent(t, "link", pre.path2, R"(,"target":)" + Quote(pre.path));
      erofs("link", pre.path2);
      return;
    case SYS_symlink:
    case SYS_symlinkat:
      if (ok) trail->FileEvent(t, "symlink", pre.path, R"(,"target":)" + Quote(pre.path2));
      erofs("symlink", pre.path);
      return;
    case SYS_write:
    case SYS_pwrite64:
    case SYS_writev:
    case SYS_pwritev:
    case SYS_pwritev2:
    case SYS_sendfile:
    case SYS_copy_file_range:
    case SYS_splice:
      if (ret > 0 && pre.file) trail->Wrote(t, pre.file, ret);
      return;
    case SYS_close:
      if (ok && pre.file) trail->Closed(pre.file.get());
      return;
    case SYS_dup2:
    case SYS_dup3:
      // The file newfd named is closed by the call.
      if (ok && pre.file && a.a[0] != a.a[1]) trail->Closed(pre.file.get());
      return;
    case SYS_connect:
    case SYS_bind: {
      std::string addr = SockAddr(t, a.a[1], a.a[2]);
      if (!addr.empty()) trail->Net(t, nr == SYS_connect ? "connect" : "bind", addr, ret);
      return;
    }
    case SYS_listen:
      trail->Net(t, "listen", BoundAddr(t, static_cast<int>(a.a[0])), ret);
      return;
    default:
      return;
  }
}

}  // namespace sentry::syscalls::audit
