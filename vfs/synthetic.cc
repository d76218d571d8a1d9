#include "vfs/synthetic.h"

#include <sys/ioctl.h>

#include <cstring>

namespace sentry::vfs {

void SyntheticDir::Add(const std::string& name, InodeRef child) {
  bool dir = child->IsDir();
  {
    absl::MutexLock l(&mu_);
    fixed_[name] = std::move(child);
  }
  if (dir) AdjustLinks(1);
}

Result<InodeRef> SyntheticDir::Lookup(const std::string& name) {
  {
    absl::MutexLock l(&mu_);
    if (auto it = fixed_.find(name); it != fixed_.end()) return it->second;
  }
  if (dynamic_.lookup) return dynamic_.lookup(name);
  return Errno(ENOENT);
}

Result<std::vector<DirEntry>> SyntheticDir::ReadDir() {
  std::vector<DirEntry> out;
  {
    absl::MutexLock l(&mu_);
    for (auto& [name, ino] : fixed_) {
      auto* m = static_cast<MemInode*>(ino.get());
      out.push_back({name, m->ino(), DirentType(m->Type())});
    }
  }
  if (dynamic_.list) {
    auto more = dynamic_.list();
    out.insert(out.end(), more.begin(), more.end());
  }
  return out;
}

namespace {

class StringFile final : public FileDescription {
 public:
  StringFile(std::string data, int flags) : FileDescription(flags), data_(std::move(data)) {}

  Result<size_t> Read(Blocker& b, std::span<uint8_t> dst) override {
    if (!Readable()) return Errno(EBADF);
    absl::MutexLock l(&mu_);
    size_t n = SENTRY_TRY(ReadAt(dst, offset_));
    offset_ += n;
    (void)b;
    return n;
  }
  Result<size_t> PRead(Blocker&, std::span<uint8_t> dst, uint64_t off) override {
    if (!Readable()) return Errno(EBADF);
    return ReadAt(dst, off);
  }
  Result<size_t> Write(Blocker&, std::span<const uint8_t>) override { return Errno(EINVAL); }
  Result<uint64_t> Seek(int64_t off, int whence) override {
    absl::MutexLock l(&mu_);
    int64_t base = whence == SEEK_SET   ? 0
                   : whence == SEEK_CUR ? static_cast<int64_t>(offset_)
                   : whence == SEEK_END ? static_cast<int64_t>(data_.size())
                                        : -1;
    if (base < 0 || base + off < 0) return Errno(EINVAL);
    offset_ = base + off;
    return offset_;
  }

 private:
  Result<size_t> ReadAt(std::span<uint8_t> dst, uint64_t off) {
    if (off >= data_.size()) return size_t{0};
    size_t n = std::min<size_t>(dst.size(), data_.size() - off);
    memcpy(dst.data(), data_.data() + off, n);
    return n;
  }
  const std::string data_;
};

// A synthetic file opened for writing: collects the bytes and hands them over on each write.
class WriteHandlerFile final : public FileDescription {
 public:
  WriteHandlerFile(SyntheticFile::Writer w, int flags)
      : FileDescription(flags), write_(std::move(w)) {}
  Result<size_t> Read(Blocker&, std::span<uint8_t>) override { return Errno(EBADF); }
  Result<size_t> Write(Blocker&, std::span<const uint8_t> src) override {
    SENTRY_TRY(write_(std::string(reinterpret_cast<const char*>(src.data()), src.size())));
    return src.size();
  }
  Result<uint64_t> Seek(int64_t, int) override { return uint64_t{0}; }

 private:
  SyntheticFile::Writer write_;
};

}  // namespace

FileRef NewStringFile(std::string data, int flags) {
  return std::make_shared<StringFile>(std::move(data), flags);
}

Result<FileRef> SyntheticFile::Open(int flags) {
  if ((flags & O_ACCMODE) != O_RDONLY) {
    if (!write_) return Errno(EACCES);
    return FileRef(std::make_shared<WriteHandlerFile>(write_, flags));
  }
  return NewStringFile(SENTRY_TRY(gen_()), flags);
}

}  // namespace sentry::vfs
