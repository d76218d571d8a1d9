#include "vfs/lock.h"

#include <fcntl.h>
#include <sys/file.h>

#include <algorithm>

namespace sentry::vfs {

bool FileLocks::RecordConflictLocked(const void* owner, bool write, uint64_t start,
                                     uint64_t end, RecordLock* found) {
  for (const RecordLock& r : records_) {
    if (r.owner == owner || r.end <= start || end <= r.start) continue;
    if (!write && !r.write) continue;
    if (found) *found = r;
    return true;
  }
  return false;
}

// Removes [start, end) from the owner's locks, splitting any that straddle the edges.
void FileLocks::UnlockRangeLocked(const void* owner, uint64_t start, uint64_t end) {
  std::vector<RecordLock> out;
  for (const RecordLock& r : records_) {
    if (r.owner != owner || r.end <= start || end <= r.start) {
      out.push_back(r);
      continue;
    }
    if (r.start < start) {
      RecordLock left = r;
      left.end = start;
      out.push_back(left);
    }
    if (end < r.end) {
      RecordLock right = r;
      right.start = end;
      out.push_back(right);
    }
  }
  records_ = std::move(out);
}

Result<void> FileLocks::SetRecord(Blocker& b, const void* owner, int pid, short type,
                                  uint64_t start, uint64_t end, bool wait) {
  if (type != F_RDLCK && type != F_WRLCK && type != F_UNLCK) return Errno(EINVAL);
  for (;;) {
    {
      absl::MutexLock l(&mu_);
      if (type == F_UNLCK) {
        UnlockRangeLocked(owner, start, end);
        break;
      }
      bool write = type == F_WRLCK;
      if (!RecordConflictLocked(owner, write, start, end, nullptr)) {
        UnlockRangeLocked(owner, start, end);
        records_.push_back({start, end, write, owner, pid});
        // Merge adjacent or overlapping locks of the same owner and kind.
        std::sort(records_.begin(), records_.end(), [](const RecordLock& a, const RecordLock& c) {
          return a.owner != c.owner ? a.owner < c.owner : a.start < c.start;
        });
        std::vector<RecordLock> merged;
        for (const RecordLock& r : records_) {
          if (!merged.empty() && merged.back().owner == r.owner &&
              merged.back().write == r.write && merged.back().end >= r.start) {
            merged.back().end = std::max(merged.back().end, r.end);
          } else {
            merged.push_back(r);
          }
        }
        records_ = std::move(merged);
        break;
      }
    }
    if (!wait) return Errno(EAGAIN);
    ScopedWait sw(queue_, b.waiter());
    {
      absl::MutexLock l(&mu_);
      RecordLock holder;
      if (!RecordConflictLocked(owner, type == F_WRLCK, start, end, &holder)) continue;
      // Waiting for an owner that (transitively) waits for us would never end.
      const void* cur = holder.owner;
      for (size_t hops = 0; cur && hops <= waits_.size(); hops++) {
        if (cur == owner) return Errno(EDEADLK);
        const void* next = nullptr;
        for (auto& [w, on] : waits_) {
          if (w == cur) next = on;
        }
        cur = next;
      }
      waits_.emplace_back(owner, holder.owner);
    }
    auto r = b.Wait();
    {
      absl::MutexLock l(&mu_);
      std::erase_if(waits_, [owner](const auto& w) { return w.first == owner; });
    }
    SENTRY_TRY(r);
  }
  queue_.Notify();
  return Ok();
}

std::optional<RecordLock> FileLocks::TestRecord(const void* owner, short type, uint64_t start,
                                                uint64_t end) {
  absl::MutexLock l(&mu_);
  RecordLock r;
  if (RecordConflictLocked(owner, type == F_WRLCK, start, end, &r)) return r;
  return std::nullopt;
}

void FileLocks::ReleaseRecords(const void* owner) {
  {
    absl::MutexLock l(&mu_);
    std::erase_if(records_, [owner](const RecordLock& r) { return r.owner == owner; });
  }
  queue_.Notify();
}

Result<void> FileLocks::Flock(Blocker& b, const void* owner, int op, bool wait) {
  if (op == LOCK_UN) {
    ReleaseFlock(owner);
    return Ok();
  }
  if (op != LOCK_SH && op != LOCK_EX) return Errno(EINVAL);
  bool exclusive = op == LOCK_EX;
  auto conflict = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (const FlockEntry& e : flocks_) {
      if (e.owner != owner && (exclusive || e.exclusive)) return true;
    }
    return false;
  };
  for (;;) {
    {
      absl::MutexLock l(&mu_);
      // A conversion is not atomic (as on Linux): the old lock goes first, and stays gone
      // if the new one cannot be had.
      std::erase_if(flocks_, [owner](const FlockEntry& e) { return e.owner == owner; });
      if (!conflict()) {
        flocks_.push_back({owner, exclusive});
        break;
      }
    }
    if (!wait) return Errno(EWOULDBLOCK);
    ScopedWait sw(queue_, b.waiter());
    {
      absl::MutexLock l(&mu_);
      if (!conflict()) continue;
    }
    SENTRY_TRY(b.Wait());
  }
  queue_.Notify();
  return Ok();
}

void FileLocks::ReleaseFlock(const void* owner) {
  {
    absl::MutexLock l(&mu_);
    std::erase_if(flocks_, [owner](const FlockEntry& e) { return e.owner == owner; });
  }
  queue_.Notify();
}

}  // namespace sentry::vfs
