// Files with no place in the file system: epoll, eventfd, timerfd and signalfd instances. As
// on Linux (anon_inodefs) they share one inode, mode 0600 with no file type, and show as
// "anon_inode:[kind]" in /proc/PID/fd.
#pragma once

#include <string>

#include "vfs/file.h"

namespace sentry::vfs {

class AnonFile : public FileDescription {
 public:
  // `kind` is the bracketed name, e.g. "[eventfd]".
  AnonFile(int flags, const char* kind) : FileDescription(flags), kind_(kind) {}

  Result<void> Stat(struct stat* st) override;
  // Linux's noop_llseek: any seek succeeds and the position stays 0.
  Result<uint64_t> Seek(int64_t, int) override { return uint64_t{0}; }
  std::string Name() const override { return std::string("anon_inode:") + kind_; }

 private:
  const char* const kind_;
};

}  // namespace sentry::vfs
