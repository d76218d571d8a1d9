// `sentry-run diff` and `sentry-run apply`: a review file (review.h) against the workspace on
// the host. Every host path is reached from the workspace's fd one component at a time with
// openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), so that a symlink the host has (or that
// anyone planted) can never lead a write outside the workspace.
#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "runtime-shim/review.h"
#include "runtime-shim/review_format.h"

namespace sentry::shim {
namespace {

struct Fd {
  int fd = -1;
  explicit Fd(int f = -1) : fd(f) {}
  Fd(Fd&& o) noexcept : fd(o.fd) { o.fd = -1; }
  Fd& operator=(Fd&& o) noexcept {
    std::swap(fd, o.fd);
    return *this;
  }
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

// A relative path of plain names ("a/b"), never "", ".", ".." or absolute.
bool PlainPath(const std::string& p) {
  if (p.empty() || p[0] == '/') return false;
  size_t i = 0;
  while (i <= p.size()) {
    size_t j = p.find('/', i);
    if (j == std::string::npos) j = p.size();
    std::string c = p.substr(i, j - i);
    if (c.empty() || c == "." || c == "..") return false;
    i = j + 1;
  }
  return true;
}

// The directory holding `rel` below `root`, opened O_PATH without following any symlink;
// `name` gets the last component. -1 with errno on failure.
int OpenParent(int root, const std::string& rel, std::string* name) {
  size_t slash = rel.find_last_of('/');
  *name = slash == std::string::npos ? rel : rel.substr(slash + 1);
  if (slash == std::string::npos) return fcntl(root, F_DUPFD_CLOEXEC, 3);
  struct open_how how {};
  how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  return static_cast<int>(
      syscall(SYS_openat2, root, rel.substr(0, slash).c_str(), &how, sizeof(how)));
}

// The host's regular file at `rel`, if it is one.
std::optional<std::string> ReadHostFile(int root, const std::string& rel) {
  std::string name;
  Fd dir(OpenParent(root, rel, &name));
  if (dir.fd < 0) return std::nullopt;
  Fd f(openat(dir.fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  struct stat st;
  if (f.fd < 0 || fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  std::string out;
  char buf[65536];
  ssize_t n;
  while ((n = read(f.fd, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  return out;
}

// What the host has at `rel` now, as a review's base ("-" when nothing).
std::string HostBase(int root, const std::string& rel) {
  std::string name;
  Fd dir(OpenParent(root, rel, &name));
  struct stat st;
  if (dir.fd < 0 || fstatat(dir.fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return "-";
  return FormatBase(st);
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(path + ": " + strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The review named on the command line: a review file, or the newest unapplied review of a
// workspace (default: the one holding the current directory).
absl::StatusOr<std::string> FindReview(const std::string& arg) {
  struct stat st;
  if (!arg.empty() && stat(arg.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return arg;
  char cwd_buf[PATH_MAX];
  std::string where = arg.empty() ? (getcwd(cwd_buf, sizeof(cwd_buf)) ? cwd_buf : "/") : arg;
  char real[PATH_MAX];
  if (realpath(where.c_str(), real) == nullptr) {
    return absl::NotFoundError(where + ": " + strerror(errno));
  }
  where = real;
  std::string dir = ReviewDir();
  DIR* d = opendir(dir.c_str());
  std::string best;
  struct timespec best_time {};
  if (d != nullptr) {
    while (struct dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n.size() < 7 || n.compare(n.size() - 7, 7, ".review") != 0) continue;
      std::string path = dir + "/" + n;
      auto text = ReadFile(path);
      if (!text.ok()) continue;
      auto r = ParseReview(*text);
      if (!r.ok()) continue;
      bool inside = where == r->workspace || where.rfind(r->workspace + "/", 0) == 0;
      if (!inside || stat(path.c_str(), &st) != 0) continue;
      if (best.empty() || st.st_mtim.tv_sec > best_time.tv_sec ||
          (st.st_mtim.tv_sec == best_time.tv_sec && st.st_mtim.tv_nsec > best_time.tv_nsec)) {
        best = path;
        best_time = st.st_mtim;
      }
    }
    closedir(d);
  }
  if (best.empty()) {
    return absl::NotFoundError("no review for " + where + " in " + dir +
                               " (run with --workspace DIR:review first)");
  }
  return best;
}

// Whether the host still has what the guest started from at e.path.
bool Unchanged(int root, const ReviewEntry& e) {
  std::string now = HostBase(root, e.path);
  if (now == e.base) return true;
  // Already as the review leaves it (applied twice, or the same edit made on the host).
  if (e.kind == 'F') {
    auto content = ReadHostFile(root, e.path);
    return content && *content == e.data;
  }
  if (e.kind == 'D') return now == "dir";
  if (e.kind == 'X') return now == "-";
  return false;
}

int RemoveTree(int dir, const std::string& name) {
  int fd = openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  DIR* d = fdopendir(fd);
  if (d == nullptr) {
    close(fd);
    return -1;
  }
  int rc = 0;
  while (struct dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    struct stat st;
    if (fstatat(fd, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISDIR(st.st_mode) ? RemoveTree(fd, n) : unlinkat(fd, n.c_str(), 0)) rc = -1;
  }
  closedir(d);
  if (rc == 0) rc = unlinkat(dir, name.c_str(), AT_REMOVEDIR);
  return rc;
}

// Puts `e` in place below `root`; a file or link goes in under a temporary name first and is
// renamed over the old one, so each path changes at once.
absl::Status ApplyOne(int root, const ReviewEntry& e) {
  std::string name;
  Fd dir(OpenParent(root, e.path, &name));
  auto fail = [&](const char* what) {
    return absl::InternalError(e.path + ": " + what + ": " + strerror(errno));
  };
  if (dir.fd < 0) return fail("its directory");
  std::string tmp = "." + name + ".sentry-apply-" + std::to_string(getpid());
  switch (e.kind) {
    case 'X': {
      struct stat st;
      if (fstatat(dir.fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        return errno == ENOENT ? absl::OkStatus() : fail("stat");
      }
      int rc = S_ISDIR(st.st_mode) ? RemoveTree(dir.fd, name) : unlinkat(dir.fd, name.c_str(), 0);
      return rc == 0 ? absl::OkStatus() : fail("delete");
    }
    case 'D':
      if (mkdirat(dir.fd, name.c_str(), e.mode & 07777) == 0) return absl::OkStatus();
      if (errno != EEXIST) return fail("mkdir");
      return fchmodat(dir.fd, name.c_str(), e.mode & 07777, 0) == 0 ? absl::OkStatus()
                                                                    : fail("chmod");
    case 'L':
      if (symlinkat(e.data.c_str(), dir.fd, tmp.c_str()) != 0) return fail("symlink");
      break;
    case 'F': {
      Fd f(openat(dir.fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
      if (f.fd < 0) return fail("create");
      size_t done = 0;
      while (done < e.data.size()) {
        ssize_t n = write(f.fd, e.data.data() + done, e.data.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
          unlinkat(dir.fd, tmp.c_str(), 0);
          return fail("write");
        }
        done += static_cast<size_t>(n);
      }
      if (fchmod(f.fd, e.mode & 07777) != 0 || fsync(f.fd) != 0) {
        unlinkat(dir.fd, tmp.c_str(), 0);
        return fail("chmod");
      }
      break;
    }
  }
  if (renameat(dir.fd, tmp.c_str(), dir.fd, name.c_str()) != 0) {
    unlinkat(dir.fd, tmp.c_str(), 0);
    return fail("rename");
  }
  return absl::OkStatus();
}

int Usage() {
  fprintf(stderr,
          "usage: sentry-run diff [REVIEW|DIR]\n"
          "       sentry-run apply [REVIEW|DIR]\n"
          "A review is what a sandbox run with --workspace DIR:review changed in DIR. Without an\n"
          "argument: the newest review of the workspace holding the current directory.\n");
  return 2;
}

}  // namespace

int ReviewMain(int argc, char** argv) {
  std::string command = argv[0];
  std::string arg;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") return Usage(), 0;
    if (!arg.empty() || (a.size() > 1 && a[0] == '-')) {
      fprintf(stderr, "sentry-run %s: unexpected argument \"%s\"\n", command.c_str(), a.c_str());
      return Usage();
    }
    arg = a;
  }
  auto path = FindReview(arg);
  if (!path.ok()) {
    fprintf(stderr, "sentry-run %s: %s\n", command.c_str(),
            std::string(path.status().message()).c_str());
    return 1;
  }
  auto text = ReadFile(*path);
  auto review = text.ok() ? ParseReview(*text) : absl::StatusOr<Review>(text.status());
  if (!review.ok()) {
    fprintf(stderr, "sentry-run %s: %s: %s\n", command.c_str(), path->c_str(),
            std::string(review.status().message()).c_str());
    return 1;
  }
  Fd root(open(review->workspace.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (root.fd < 0) {
    fprintf(stderr, "sentry-run %s: the workspace %s: %s\n", command.c_str(),
            review->workspace.c_str(), strerror(errno));
    return 1;
  }
  std::map<std::string, std::string> notes;
  std::vector<std::string> conflicts;
  for (const ReviewEntry& e : review->entries) {
    if (!PlainPath(e.path)) {
      fprintf(stderr, "sentry-run %s: %s: a path that is not plain: \"%s\"\n", command.c_str(),
              path->c_str(), e.path.c_str());
      return 1;
    }
    if (!Unchanged(root.fd, e)) {
      notes[e.path] = "changed on the host since";
      conflicts.push_back(e.path);
    }
  }
  if (command == "diff") {
    std::string out;
    for (const ReviewEntry& e : review->entries) {
      out += EntryDiff(e, ReadHostFile(root.fd, e.path));
    }
    out += ChangeList(review->entries, notes);
    fputs(out.c_str(), stdout);
    if (review->entries.empty()) {
      fprintf(stderr, "sentry-run diff: no changes in %s\n", path->c_str());
    }
    return 0;
  }
  if (!conflicts.empty()) {
    for (const auto& c : conflicts) {
      fprintf(stderr, "sentry-run apply: %s/%s changed on the host since the sandbox read it\n",
              review->workspace.c_str(), c.c_str());
    }
    fprintf(stderr, "sentry-run apply: nothing applied (%zu conflicts); see sentry-run diff %s\n",
            conflicts.size(), path->c_str());
    return 1;
  }
  size_t done = 0;
  for (const ReviewEntry& e : review->entries) {
    if (auto s = ApplyOne(root.fd, e); !s.ok()) {
      fprintf(stderr, "sentry-run apply: %s (applied %zu of %zu changes)\n",
              std::string(s.message()).c_str(), done, review->entries.size());
      return 1;
    }
    done++;
  }
  std::string applied = *path + ".applied";
  rename(path->c_str(), applied.c_str());
  fprintf(stderr, "sentry-run apply: %zu changes applied to %s\n", done, review->workspace.c_str());
  return 0;
}

}  // namespace sentry::shim
