#include "vfs/fd_table.h"

namespace sentry::vfs {

Result<int> FdTable::Add(FileRef file, bool cloexec, int min_fd, uint64_t limit) {
  absl::MutexLock l(&mu_);
  int fd = min_fd;
  for (auto it = fds_.lower_bound(min_fd); it != fds_.end() && it->first == fd; ++it) fd++;
  if (static_cast<uint64_t>(fd) >= limit) return Errno(EMFILE);
  fds_[fd] = Entry{std::move(file), cloexec};
  return fd;
}

Result<void> FdTable::Set(int fd, FileRef file, bool cloexec, uint64_t limit) {
  if (fd < 0 || static_cast<uint64_t>(fd) >= limit) return Errno(EBADF);
  Entry old;
  {
    absl::MutexLock l(&mu_);
    auto it = fds_.find(fd);
    if (it != fds_.end()) old = std::move(it->second);
    fds_[fd] = Entry{std::move(file), cloexec};
  }
  return Ok();  // `old` is released outside the lock: closing a pipe end wakes waiters
}

Result<FileRef> FdTable::Get(int fd) {
  absl::MutexLock l(&mu_);
  auto it = fds_.find(fd);
  if (it == fds_.end()) return Errno(EBADF);
  return it->second.file;
}

Result<FdTable::Entry> FdTable::GetEntry(int fd) {
  absl::MutexLock l(&mu_);
  auto it = fds_.find(fd);
  if (it == fds_.end()) return Errno(EBADF);
  return it->second;
}

Result<void> FdTable::SetCloexec(int fd, bool cloexec) {
  absl::MutexLock l(&mu_);
  auto it = fds_.find(fd);
  if (it == fds_.end()) return Errno(EBADF);
  it->second.cloexec = cloexec;
  return Ok();
}

Result<void> FdTable::Remove(int fd) {
  Entry old;
  {
    absl::MutexLock l(&mu_);
    auto it = fds_.find(fd);
    if (it == fds_.end()) return Errno(EBADF);
    old = std::move(it->second);
    fds_.erase(it);
  }
  return Ok();
}

void FdTable::RemoveRange(unsigned first, unsigned last, bool cloexec_only) {
  std::vector<Entry> old;
  {
    absl::MutexLock l(&mu_);
    for (auto it = fds_.lower_bound(static_cast<int>(std::min<unsigned>(first, INT32_MAX)));
         it != fds_.end() && static_cast<unsigned>(it->first) <= last;) {
      if (cloexec_only) {
        it->second.cloexec = true;
        ++it;
      } else {
        old.push_back(std::move(it->second));
        it = fds_.erase(it);
      }
    }
  }
}

void FdTable::CloseOnExec() {
  std::vector<Entry> old;
  absl::MutexLock l(&mu_);
  for (auto it = fds_.begin(); it != fds_.end();) {
    if (it->second.cloexec) {
      old.push_back(std::move(it->second));
      it = fds_.erase(it);
    } else {
      ++it;
    }
  }
}

std::shared_ptr<FdTable> FdTable::Fork() {
  auto t = std::make_shared<FdTable>();
  absl::MutexLock l(&mu_);
  t->fds_ = fds_;
  return t;
}

std::vector<int> FdTable::Fds() {
  absl::MutexLock l(&mu_);
  std::vector<int> v;
  for (auto& [fd, e] : fds_) v.push_back(fd);
  return v;
}

}  // namespace sentry::vfs
