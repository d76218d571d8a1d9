#include "vfs/host_fd_cache.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "sentry/base/host_fds.h"

namespace sentry::vfs {

SharedHostFd::~SharedHostFd() { close(fd); }

class HostFdCache {
 public:
  static HostFdCache& Get() {
    static auto* c = new HostFdCache;  // leaked: files may outlive static destruction
    return *c;
  }

  absl::Mutex mu;
  std::list<ReopenableFd*> lru ABSL_GUARDED_BY(mu);  // front: most recently used
  size_t capacity ABSL_GUARDED_BY(mu);
  // Every entry whose file is known, by (dev, ino), for PinHostFile.
  std::multimap<std::pair<dev_t, ino_t>, std::weak_ptr<ReopenableFd>> files ABSL_GUARDED_BY(mu);

  // Makes `e` (holding an fd, not pinned) the most recently used; hands fds to close
  // (outside the lock) to `evicted` if the cache is over capacity.
  void Touch(ReopenableFd* e, std::vector<std::shared_ptr<SharedHostFd>>* evicted)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (e->in_lru_) {
      lru.splice(lru.begin(), lru, e->lru_pos_);
      return;
    }
    lru.push_front(e);
    e->lru_pos_ = lru.begin();
    e->in_lru_ = true;
    while (lru.size() > capacity) Evict(lru.back(), evicted);
  }

  void Remove(ReopenableFd* e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (!e->in_lru_) return;
    lru.erase(e->lru_pos_);
    e->in_lru_ = false;
  }

  void Evict(ReopenableFd* e, std::vector<std::shared_ptr<SharedHostFd>>* evicted)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    Remove(e);
    evicted->push_back(std::move(e->fd_));  // still open while an operation holds it
  }

 private:
  HostFdCache() {
    // Half of what the Sentry may open, within bounds: the other half is for stubs, pipes,
    // the fds in use, and open files that cannot be reopened.
    struct rlimit rl {};
    getrlimit(RLIMIT_NOFILE, &rl);
    absl::MutexLock l(&mu);
    capacity = std::clamp<size_t>(rl.rlim_cur / 2, 16, 4096);
    SetIdleHostFdReleaser(&ReleaseIdleCachedFds);
  }
};

ReopenableFd::~ReopenableFd() {
  std::shared_ptr<SharedHostFd> fd;
  HostFdCache& c = HostFdCache::Get();
  absl::MutexLock l(&c.mu);
  c.Remove(this);
  if (known_) c.files.erase(files_pos_);
  fd = std::move(fd_);
  if (initial_ >= 0) close(initial_);
}

Result<std::shared_ptr<SharedHostFd>> ReopenableFd::Install(int fd) {
  struct stat st;
  bool stat_ok = fstat(fd, &st) == 0;
  std::vector<std::shared_ptr<SharedHostFd>> evicted;
  auto fresh = std::make_shared<SharedHostFd>(fd);
  HostFdCache& c = HostFdCache::Get();
  absl::MutexLock l(&c.mu);
  if (fd_) {
    evicted.push_back(std::move(fresh));  // another thread reopened it first
  } else {
    if (stat_ok && known_ && (st.st_dev != dev_ || st.st_ino != ino_)) return Errno(ESTALE);
    if (stat_ok && !known_) {
      known_ = true;
      dev_ = st.st_dev;
      ino_ = st.st_ino;
      files_pos_ = c.files.emplace(std::make_pair(dev_, ino_), weak_from_this());
    }
    fd_ = std::move(fresh);
  }
  if (!pinned_) c.Touch(this, &evicted);
  return fd_;
}

Result<std::shared_ptr<SharedHostFd>> ReopenableFd::Get() {
  int fd;
  {
    std::vector<std::shared_ptr<SharedHostFd>> evicted;
    HostFdCache& c = HostFdCache::Get();
    absl::MutexLock l(&c.mu);
    if (fd_) {
      if (!pinned_) c.Touch(this, &evicted);
      return fd_;
    }
    fd = std::exchange(initial_, -1);
  }
  if (fd < 0) fd = SENTRY_TRY(OpenHostFd(open_));
  return Install(fd);
}

void ReopenableFd::Pin() {
  {
    HostFdCache& c = HostFdCache::Get();
    absl::MutexLock l(&c.mu);
    pinned_ = true;
    c.Remove(this);
    if (fd_) return;
  }
  (void)Get();  // best effort: a file that cannot be opened now stays closed
}

void PinHostFile(dev_t dev, ino_t ino) {
  std::vector<std::shared_ptr<ReopenableFd>> entries;
  {
    HostFdCache& c = HostFdCache::Get();
    absl::MutexLock l(&c.mu);
    auto [begin, end] = c.files.equal_range({dev, ino});
    for (auto it = begin; it != end; ++it) {
      if (auto e = it->second.lock()) entries.push_back(std::move(e));
    }
  }
  for (auto& e : entries) e->Pin();
}

bool ReleaseIdleCachedFds() {
  std::vector<std::shared_ptr<SharedHostFd>> evicted;
  HostFdCache& c = HostFdCache::Get();
  {
    absl::MutexLock l(&c.mu);
    size_t n = (c.lru.size() + 1) / 2;
    for (size_t i = 0; i < n && !c.lru.empty(); i++) c.Evict(c.lru.back(), &evicted);
    // The host's fds are scarcer than the capacity said: keep to what was just possible.
    c.capacity = std::max<size_t>(16, c.lru.size());
  }
  return !evicted.empty();
}

Result<int> OpenHostFd(const std::function<Result<int>()>& open) {
  // Until the cache has nothing left to give: the reopen of a file already open in the guest
  // has no good errno to fail with (read(2) knows no EMFILE).
  for (;;) {
    Result<int> fd = open();
    if (fd.ok() || (fd.error().code() != EMFILE && fd.error().code() != ENFILE)) return fd;
    if (!ReleaseIdleCachedFds()) return fd;
  }
}

}  // namespace sentry::vfs
