// nsfs: the files behind /proc/PID/ns/* and what setns(2) takes. Each namespace has one
// inode number, shown by readlink ("mnt:[4026531840]") and by stat, so that two processes
// compare their namespaces by it. The VFS does not know what a namespace is: the kernel hands
// an NsFile its object as an opaque pointer and reads it back in setns.
#pragma once

#include <sched.h>

#include <cstdint>
#include <memory>
#include <string>

#include "vfs/file.h"

namespace sentry::vfs {

// A fresh namespace inode number, as Linux's proc_alloc_inum (counting from 0xF0000000).
uint64_t NewNsInode();

// "mnt", "uts", "ipc", "user", "pid", "net", "cgroup" or "time" for a CLONE_NEW* flag.
const char* NsKindName(int type);

// An open namespace file. `type` is the CLONE_NEW* flag of its kind.
class NsFile final : public FileDescription {
 public:
  NsFile(int type, uint64_t ino, std::shared_ptr<void> ns, int flags)
      : FileDescription(flags), type_(type), ino_(ino), ns_(std::move(ns)) {}

  int type() const { return type_; }
  uint64_t ino() const { return ino_; }
  const std::shared_ptr<void>& ns() const { return ns_; }

  std::string Name() const override;
  Result<void> Stat(struct stat* st) override;
  Result<size_t> Read(Blocker&, std::span<uint8_t>) override { return Errno(EINVAL); }
  Result<size_t> Write(Blocker&, std::span<const uint8_t>) override { return Errno(EINVAL); }
  Result<FileRef> Reopen(int flags) override {
    return FileRef(std::make_shared<NsFile>(type_, ino_, ns_, flags & (O_ACCMODE | O_CLOEXEC)));
  }

 private:
  int type_;
  uint64_t ino_;
  std::shared_ptr<void> ns_;
};

}  // namespace sentry::vfs
