// Building blocks for file systems whose contents the Sentry computes (/proc, /dev, /sys):
// directories with fixed and on-demand children, files generated at open, symlinks whose
// target is computed at each readlink.
#pragma once

#include <functional>
#include <map>

#include "vfs/file.h"
#include "vfs/mem_inode.h"

namespace sentry::vfs {

class SyntheticDir : public MemInode {
 public:
  // On-demand children (e.g. one directory per PID), consulted after the fixed ones.
  struct Dynamic {
    std::function<Result<InodeRef>(const std::string&)> lookup;
    std::function<std::vector<DirEntry>()> list;
  };

  SyntheticDir(MemSuperRef sb, uint32_t mode, uint32_t uid = 0, uint32_t gid = 0)
      : MemInode(std::move(sb), S_IFDIR | (mode & 07777), uid, gid) {}

  void Add(const std::string& name, InodeRef child);
  void set_dynamic(Dynamic d) { dynamic_ = std::move(d); }
  void set_valid(std::function<bool()> v) { valid_ = std::move(v); }

  Result<InodeRef> Lookup(const std::string& name) override;
  Result<std::vector<DirEntry>> ReadDir() override;
  bool Valid() override { return !valid_ || valid_(); }

 private:
  std::map<std::string, InodeRef> fixed_ ABSL_GUARDED_BY(mu_);
  Dynamic dynamic_;
  std::function<bool()> valid_;
};

// A read-only (or write-handled) file whose bytes are generated at open.
class SyntheticFile : public MemInode {
 public:
  using Generator = std::function<Result<std::string>()>;
  using Writer = std::function<Result<void>(const std::string&)>;

  SyntheticFile(MemSuperRef sb, uint32_t mode, Generator gen, Writer write = nullptr)
      : MemInode(std::move(sb), S_IFREG | (mode & 07777), 0, 0),
        gen_(std::move(gen)),
        write_(std::move(write)) {}

  Result<FileRef> Open(int flags) override;
  void set_valid(std::function<bool()> v) { valid_ = std::move(v); }
  bool Valid() override { return !valid_ || valid_(); }

 private:
  Generator gen_;
  Writer write_;
  std::function<bool()> valid_;
};

class SyntheticSymlink : public MemInode {
 public:
  using Target = std::function<Result<std::string>()>;
  SyntheticSymlink(MemSuperRef sb, Target target)
      : MemInode(std::move(sb), S_IFLNK | 0777, 0, 0), target_(std::move(target)) {}
  Result<std::string> ReadLink() override { return target_(); }
  void set_valid(std::function<bool()> v) { valid_ = std::move(v); }
  bool Valid() override { return !valid_ || valid_(); }

 private:
  Target target_;
  std::function<bool()> valid_;
};

// A file over a fixed string: reads, preads and seeks (what /proc files look like).
FileRef NewStringFile(std::string data, int flags);

}  // namespace sentry::vfs
