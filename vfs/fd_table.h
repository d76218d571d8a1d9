// The fd table of a process (shared between threads, or with CLONE_FILES).
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "vfs/file.h"

namespace sentry::vfs {

class FdTable {
 public:
  struct Entry {
    FileRef file;
    bool cloexec = false;
  };

  // Installs `file` at the lowest free fd >= `min_fd`; EMFILE past `limit`.
  Result<int> Add(FileRef file, bool cloexec, int min_fd, uint64_t limit);
  // Installs at exactly `fd`, closing what was there (dup2).
  Result<void> Set(int fd, FileRef file, bool cloexec, uint64_t limit);
  Result<FileRef> Get(int fd);
  Result<Entry> GetEntry(int fd);
  Result<void> SetCloexec(int fd, bool cloexec);
  Result<void> Remove(int fd);
  // close_range(first, last); `cloexec_only` marks instead of closing.
  void RemoveRange(unsigned first, unsigned last, bool cloexec_only);
  void CloseOnExec();
  std::shared_ptr<FdTable> Fork();
  std::vector<int> Fds();

 private:
  absl::Mutex mu_;
  std::map<int, Entry> fds_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sentry::vfs
