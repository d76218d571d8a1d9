#include "vfs/host_root.h"

#include <dirent.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <set>

namespace sentry::vfs {
namespace {

constexpr int kMaxSymlinks = 40;

std::vector<std::string> Split(const std::string& p) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < p.size()) {
    size_t j = p.find('/', i);
    if (j == std::string::npos) j = p.size();
    if (j > i) out.push_back(p.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

std::string Parent(const std::string& p) {
  size_t i = p.rfind('/');
  return i == 0 || i == std::string::npos ? "/" : p.substr(0, i);
}

std::string Child(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

bool UnderOrAt(const std::string& p, const std::string& dir) {
  if (dir == "/") return true;
  return p == dir || (p.size() > dir.size() && p.compare(0, dir.size(), dir) == 0 &&
                      p[dir.size()] == '/');
}

uint64_t HashIno(const std::string& p) { return std::hash<std::string>()(p) | 1; }

// A read-only host file or directory.
class HostFile final : public FileDescription {
 public:
  HostFile(int fd, int flags, std::string name)
      : FileDescription(flags), fd_(fd), name_(std::move(name)) {}
  ~HostFile() override { close(fd_); }

  Result<size_t> Read(Blocker&, std::span<uint8_t> dst) override {
    absl::MutexLock l(&mu_);
    ssize_t n = pread(fd_, dst.data(), dst.size(), offset_);
    if (n < 0) return Errno(errno);
    offset_ += n;
    return static_cast<size_t>(n);
  }
  Result<size_t> Write(Blocker&, std::span<const uint8_t>) override { return Errno(EBADF); }
  Result<size_t> PRead(Blocker&, std::span<uint8_t> dst, uint64_t off) override {
    ssize_t n = pread(fd_, dst.data(), dst.size(), off);
    if (n < 0) return Errno(errno);
    return static_cast<size_t>(n);
  }
  Result<size_t> PWrite(Blocker&, std::span<const uint8_t>, uint64_t) override {
    return Errno(EBADF);
  }
  Result<uint64_t> Seek(int64_t off, int whence) override {
    absl::MutexLock l(&mu_);
    off_t r = lseek(fd_, off, whence);  // validates whence and computes SEEK_END/HOLE
    if (whence == SEEK_CUR) r = lseek(fd_, static_cast<off_t>(offset_) + off, SEEK_SET);
    if (r < 0) return Errno(errno);
    offset_ = r;
    return static_cast<uint64_t>(r);
  }
  Result<void> Stat(struct stat* st) override {
    if (fstat(fd_, st) != 0) return Errno(errno);
    return Ok();
  }
  Result<size_t> GetDents(std::span<uint8_t> dst) override {
    absl::MutexLock l(&mu_);
    lseek(fd_, offset_, SEEK_SET);
    long n = syscall(SYS_getdents64, fd_, dst.data(), dst.size());
    if (n < 0) return Errno(errno);
    offset_ = lseek(fd_, 0, SEEK_CUR);
    return static_cast<size_t>(n);
  }
  int HostFd() const override { return fd_; }
  std::string Name() const override { return name_; }

 private:
  int fd_;
  std::string name_;
};

// A directory of the synthetic part of the tree ("/", "/dev", parents of exposed dirs).
class SyntheticDir final : public FileDescription {
 public:
  SyntheticDir(int flags, std::string name, std::vector<std::string> children)
      : FileDescription(flags), name_(std::move(name)), children_(std::move(children)) {}

  Result<size_t> Read(Blocker&, std::span<uint8_t>) override { return Errno(EISDIR); }
  Result<uint64_t> Seek(int64_t off, int whence) override {
    absl::MutexLock l(&mu_);
    if (whence != SEEK_SET || off < 0) return Errno(EINVAL);
    offset_ = off;
    return static_cast<uint64_t>(off);
  }
  Result<void> Stat(struct stat* st) override {
    memset(st, 0, sizeof(*st));
    st->st_mode = S_IFDIR | 0755;
    st->st_nlink = 2;
    st->st_ino = HashIno(name_);
    st->st_dev = 1;
    st->st_blksize = 4096;
    return Ok();
  }
  Result<size_t> GetDents(std::span<uint8_t> dst) override {
    absl::MutexLock l(&mu_);
    size_t used = 0;
    std::vector<std::string> all = {".", ".."};
    all.insert(all.end(), children_.begin(), children_.end());
    while (offset_ < all.size()) {
      const std::string& n = all[offset_];
      size_t reclen = (19 + n.size() + 1 + 7) & ~size_t{7};
      if (used + reclen > dst.size()) {
        if (used == 0) return Errno(EINVAL);
        break;
      }
      auto* d = reinterpret_cast<struct dirent64*>(dst.data() + used);
      d->d_ino = HashIno(Child(name_, n));
      d->d_off = static_cast<int64_t>(offset_ + 1);
      d->d_reclen = static_cast<uint16_t>(reclen);
      d->d_type = name_ == "/dev" && n != "." && n != ".." ? DT_CHR : DT_DIR;
      memcpy(d->d_name, n.c_str(), n.size() + 1);
      used += reclen;
      offset_++;
    }
    return used;
  }
  std::string Name() const override { return name_; }

 private:
  std::string name_;
  std::vector<std::string> children_;
};

}  // namespace

HostRoot::HostRoot(std::vector<std::string> exposed) : exposed_(std::move(exposed)) {}

std::string HostRoot::Join(const std::string& base, const std::string& path) {
  std::string full = !path.empty() && path[0] == '/' ? path : base + "/" + path;
  std::string out;
  for (const std::string& c : Split(full)) {
    if (c == ".") continue;
    out += "/" + c;
  }
  return out.empty() ? "/" : out;
}

bool HostRoot::IsExposed(const std::string& p) const {
  return std::any_of(exposed_.begin(), exposed_.end(),
                     [&](const std::string& e) { return UnderOrAt(p, e); });
}

bool HostRoot::IsSyntheticDir(const std::string& p) const {
  if (p == "/" || p == "/dev") return true;
  return std::any_of(exposed_.begin(), exposed_.end(), [&](const std::string& e) {
    return e != p && UnderOrAt(e, p);
  });
}

std::vector<std::string> HostRoot::SyntheticChildren(const std::string& dir) const {
  if (dir == "/dev") return {"full", "null", "random", "urandom", "zero"};
  std::set<std::string> names;
  if (dir == "/") names.insert("dev");
  for (const std::string& e : exposed_) {
    if (e == dir || !UnderOrAt(e, dir)) continue;
    std::string rest = e.substr(dir == "/" ? 1 : dir.size() + 1);
    names.insert(rest.substr(0, rest.find('/')));
  }
  return {names.begin(), names.end()};
}

Result<HostRoot::Node> HostRoot::Resolve(const std::string& path, bool follow) const {
  std::vector<std::string> todo = Split(path);
  std::reverse(todo.begin(), todo.end());  // a stack: back() is the next component
  std::string cur = "/";
  int links = 0;
  Node::Kind kind = Node::Kind::kSyntheticDir;
  while (!todo.empty()) {
    std::string c = todo.back();
    todo.pop_back();
    if (c == ".") continue;
    if (kind == Node::Kind::kDevice) return Errno(ENOTDIR);
    if (c == "..") {
      cur = Parent(cur);
      kind = IsExposed(cur) ? Node::Kind::kHost : Node::Kind::kSyntheticDir;
      continue;
    }
    if (c.size() > 255) return Errno(ENAMETOOLONG);
    std::string next = Child(cur, c);
    if (IsExposed(next)) {
      struct stat st;
      if (lstat(next.c_str(), &st) != 0) return Errno(errno == ENOTDIR ? ENOTDIR : ENOENT);
      if (S_ISLNK(st.st_mode) && (!todo.empty() || follow)) {
        if (++links > kMaxSymlinks) return Errno(ELOOP);
        char target[4096];
        ssize_t n = readlink(next.c_str(), target, sizeof(target) - 1);
        if (n < 0) return Errno(ENOENT);
        target[n] = 0;
        std::vector<std::string> t = Split(target);
        for (auto it = t.rbegin(); it != t.rend(); ++it) todo.push_back(*it);
        if (target[0] == '/') {
          cur = "/";
          kind = Node::Kind::kSyntheticDir;
        }
        continue;
      }
      if (!todo.empty() && !S_ISDIR(st.st_mode)) return Errno(ENOTDIR);
      cur = next;
      kind = Node::Kind::kHost;
    } else if (IsSyntheticDir(next)) {
      cur = next;
      kind = Node::Kind::kSyntheticDir;
    } else if (cur == "/dev" && IsDevice(c)) {
      cur = next;
      kind = Node::Kind::kDevice;
    } else {
      return Errno(ENOENT);
    }
  }
  return Node{kind, cur};
}

Result<FileRef> HostRoot::Open(const std::string& path, int flags, bool follow) const {
  auto node = Resolve(path, follow);
  bool writes = (flags & O_ACCMODE) != O_RDONLY || (flags & (O_TRUNC | O_CREAT));
  if (!node.ok()) {
    if (node.error() == ENOENT && (flags & O_CREAT)) {
      // Creating is refused by the read-only tree, if the parent exists.
      auto parent = Resolve(Parent(Join("/", path)), true);
      if (parent.ok()) return Errno(EROFS);
    }
    return node.error();
  }
  if ((flags & O_CREAT) && (flags & O_EXCL)) return Errno(EEXIST);
  switch (node->kind) {
    case Node::Kind::kDevice:
      return OpenDevice(node->path.substr(5), flags);
    case Node::Kind::kSyntheticDir:
      if (writes) return Errno(EISDIR);
      return FileRef(std::make_shared<SyntheticDir>(flags, node->path,
                                                    SyntheticChildren(node->path)));
    case Node::Kind::kHost:
      break;
  }
  struct stat st;
  if (lstat(node->path.c_str(), &st) != 0) return Errno(errno);
  if (S_ISLNK(st.st_mode)) return Errno(ELOOP);  // O_NOFOLLOW on a symlink
  if ((flags & O_DIRECTORY) && !S_ISDIR(st.st_mode)) return Errno(ENOTDIR);
  if (writes) return Errno(S_ISDIR(st.st_mode) ? EISDIR : EROFS);
  int fd = open(node->path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Errno(errno);
  return FileRef(std::make_shared<HostFile>(fd, flags & ~O_CLOEXEC, node->path));
}

Result<void> HostRoot::Stat(const std::string& path, bool follow, struct stat* st) const {
  auto node = SENTRY_TRY(Resolve(path, follow));
  if (node.kind != Node::Kind::kHost) {
    auto f = SENTRY_TRY(Open(path, O_RDONLY, follow));
    return f->Stat(st);
  }
  if (lstat(node.path.c_str(), st) != 0) return Errno(errno);
  return Ok();
}

Result<std::string> HostRoot::ReadLink(const std::string& path) const {
  auto node = SENTRY_TRY(Resolve(path, false));
  if (node.kind != Node::Kind::kHost) return Errno(EINVAL);
  char buf[4096];
  ssize_t n = readlink(node.path.c_str(), buf, sizeof(buf));
  if (n < 0) return Errno(errno);
  return std::string(buf, n);
}

}  // namespace sentry::vfs
