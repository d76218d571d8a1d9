#include "sentry/mm/memory_manager.h"

#include <sys/mman.h>
#include <sys/sysmacros.h>

#include <atomic>
#include <cstdio>

#include "sentry/base/guest_memory.h"

namespace sentry::mm {
namespace {

std::atomic<uint64_t> g_next_shared_id{1};
constexpr uint64_t kMaxBrk = uint64_t{1} << 30;  // room reserved above the brk start
constexpr int kProtMask = PROT_READ | PROT_WRITE | PROT_EXEC;

bool Overflows(uint64_t addr, uint64_t len) { return addr + len < addr; }

// Whether a mapping is charged to committed memory, as Linux's accountable_mapping: private,
// writable, and not MAP_NORESERVE (the host memory cgroup bounds those).
bool Accountable(int prot, bool shared, int flags) {
  return !shared && (prot & PROT_WRITE) && !(flags & MAP_NORESERVE);
}

// Linux's is_data_mapping: private, writable, not a stack. RLIMIT_DATA bounds these.
bool IsData(int prot, bool shared, bool stack) { return !shared && (prot & PROT_WRITE) && !stack; }
bool IsData(const Vma& v) { return IsData(v.prot, v.shared, v.IsStack()); }

GuestMemory& Commit() { return GuestMemory::Global(); }

// One shared-object id per file, so that two processes mapping the same file (a POSIX
// semaphore in /dev/shm, a process-shared mutex in a mapped file) agree on futex keys.
uint64_t FileSharedId(dev_t dev, uint64_t ino) {
  static absl::Mutex mu(absl::kConstInit);
  static auto* ids = new std::map<std::pair<dev_t, uint64_t>, uint64_t>();
  absl::MutexLock l(&mu);
  auto [it, added] = ids->try_emplace({dev, ino}, 0);
  if (added) it->second = g_next_shared_id.fetch_add(1);
  return it->second;
}

}  // namespace

bool MemoryManager::Reserved(uint64_t addr, uint64_t len) const {
  if (addr < platform::Layout::kGuestBottom) return true;
  for (auto [s, e] : as_->Reserved()) {
    if (addr < e && addr + len > s) return true;
  }
  return addr + len > platform::Layout::kStubBase && addr < platform::Layout::kStubBase +
                                                                platform::Layout::kStubSize;
}

bool MemoryManager::RangeFree(uint64_t addr, uint64_t len) {
  if (Reserved(addr, len)) return false;
  auto it = vmas_.upper_bound(addr);
  if (it != vmas_.begin()) {
    auto prev = std::prev(it);
    if (prev->second.end > addr) return false;
  }
  return it == vmas_.end() || it->first >= addr + len;
}

Result<uint64_t> MemoryManager::FindFree(uint64_t len) {
  // Top-down below the stack area, like Linux's default layout.
  uint64_t top = platform::Layout::kGuestTop - (uint64_t{1} << 32);
  for (auto it = vmas_.lower_bound(top); ; ) {
    // Candidate: just below `top`, above the previous VMA.
    uint64_t lo = 0;
    if (it != vmas_.begin()) lo = std::prev(it)->second.end;
    if (top >= len && top - len >= lo && top - len >= brk_start_ + kMaxBrk &&
        !Reserved(top - len, len)) {
      return top - len;
    }
    if (it == vmas_.begin()) break;
    --it;
    top = it->first;
    if (top < len) break;
  }
  return Errno(ENOMEM);
}

void MemoryManager::Carve(uint64_t addr, uint64_t len) {
  uint64_t end = addr + len;
  auto it = vmas_.upper_bound(addr);
  if (it != vmas_.begin()) --it;
  while (it != vmas_.end() && it->first < end) {
    uint64_t s = it->first;
    if (it->second.end <= addr) {
      ++it;
      continue;
    }
    if (it->second.accounted) {
      Commit().Uncommit((std::min(it->second.end, end) - std::max(s, addr)) / kPageSize);
    }
    // Moved, not copied: an observer counts the pieces that remain (see MappingHold).
    Vma v = std::move(it->second);
    it = vmas_.erase(it);
    bool right = v.end > end;
    if (s < addr) {
      Vma left = right ? v : std::move(v);
      left.end = addr;
      vmas_[s] = std::move(left);
    }
    if (right) {
      v.shared_off += end - s;
      vmas_[end] = std::move(v);
      it = vmas_.find(end);
      ++it;
    }
  }
}

bool MemoryManager::MayExpand(const VmLimits& limits, bool data, uint64_t bytes, uint64_t skip,
                              uint64_t skip_len) {
  if (limits.as == RLIM_INFINITY && (!data || limits.data == RLIM_INFINITY)) return true;
  // Summed here rather than kept as Linux's total_vm and data_vm: only a finite limit pays.
  uint64_t total = 0, data_bytes = 0;
  for (const auto& [start, v] : vmas_) {
    uint64_t size = v.end - start;
    if (skip_len != 0) {
      uint64_t lo = std::max(start, skip), hi = std::min(v.end, skip + skip_len);
      if (lo < hi) size -= hi - lo;
    }
    total += size;
    if (IsData(v)) data_bytes += size;
  }
  // Linux compares pages with the limit shifted down to pages.
  if (total + bytes > PageRoundDown(limits.as)) return false;
  if (!data || data_bytes + bytes <= PageRoundDown(limits.data)) return true;
  // Linux's allowance for Valgrind: a soft limit of 0 lets data grow to the hard limit.
  return limits.data == 0 && data_bytes + bytes <= PageRoundDown(limits.data_max);
}

uint64_t MemoryManager::MappedBytes(uint64_t addr, uint64_t len) {
  uint64_t bytes = 0;
  auto it = vmas_.upper_bound(addr);
  if (it != vmas_.begin()) --it;
  for (; it != vmas_.end() && it->first < addr + len; ++it) {
    uint64_t lo = std::max(it->first, addr), hi = std::min(it->second.end, addr + len);
    if (lo < hi) bytes += hi - lo;
  }
  return bytes;
}

Result<uint64_t> MemoryManager::Map(platform::Context& via, uint64_t addr, uint64_t len, int prot,
                                    int flags, std::string name, int host_fd, uint64_t offset,
                                    const MapSource* source, const VmLimits& limits) {
  if (len == 0 || Overflows(addr, PageRoundUp(len))) return Errno(EINVAL);
  len = PageRoundUp(len);
  bool fixed = flags & (MAP_FIXED | MAP_FIXED_NOREPLACE);
  if (fixed && !PageAligned(addr)) return Errno(EINVAL);
  absl::MutexLock l(&mu_);
  if (fixed) {
    if (Reserved(addr, len) || addr + len > platform::Layout::kGuestTop) {
      return Errno(flags & MAP_FIXED_NOREPLACE ? EEXIST : ENOMEM);
    }
    if ((flags & MAP_FIXED_NOREPLACE) && !RangeFree(addr, len)) return Errno(EEXIST);
  } else if (addr == 0 || !PageAligned(addr) || addr + len > platform::Layout::kGuestTop ||
             !RangeFree(addr, len)) {
    addr = SENTRY_TRY(FindFree(len));
  }
  // As Linux's mmap_region, what a MAP_FIXED replaces is taken off the growth, for both limits.
  bool stack = (flags & MAP_GROWSDOWN) || name == "[stack]";
  uint64_t replaced = fixed ? MappedBytes(addr, len) : 0;
  if (!MayExpand(limits, IsData(prot, flags & MAP_SHARED, stack), len - replaced)) {
    return Errno(ENOMEM);
  }
  int host_flags = (flags & (MAP_SHARED | MAP_PRIVATE | MAP_NORESERVE | MAP_GROWSDOWN)) |
                   (host_fd < 0 ? MAP_ANONYMOUS : 0) | MAP_FIXED;
  // As Linux, the new pages are charged before the old ones a MAP_FIXED replaces are given
  // back: past the limit mmap fails with ENOMEM and the old mapping stays.
  bool accounted = Accountable(prot, flags & MAP_SHARED, flags);
  if (accounted && !Commit().TryCommit(len / kPageSize)) return Errno(ENOMEM);
  auto mapped = as_->Map(via, GuestAddr(addr), len, prot & kProtMask, host_flags, host_fd,
                         host_fd < 0 ? 0 : offset);
  if (!mapped.ok()) {
    if (accounted) Commit().Uncommit(len / kPageSize);
    return mapped.error();
  }
  Carve(addr, len);
  Vma v{addr + len, prot & kProtMask, (flags & MAP_SHARED) != 0, (flags & MAP_GROWSDOWN) != 0,
        std::move(name)};
  v.lock = future_lock_ | ((flags & MAP_LOCKED) ? kLocked : 0);
  v.accounted = accounted;
  v.noreserve = flags & MAP_NORESERVE;
  if (source != nullptr) {
    v.dev = source->dev;
    v.ino = source->ino;
    v.may_write = source->may_write;
    v.shared_off = offset;
    v.hold = MappingHold(source->observer);
  }
  if (v.shared) {
    v.shared_id = source != nullptr && source->ino != 0 ? FileSharedId(source->dev, source->ino)
                                                        : g_next_shared_id.fetch_add(1);
  }
  vmas_[addr] = std::move(v);
  return addr;
}

Result<void> MemoryManager::Unmap(platform::Context& via, uint64_t addr, uint64_t len) {
  if (!PageAligned(addr) || len == 0 || Overflows(addr, PageRoundUp(len))) return Errno(EINVAL);
  len = PageRoundUp(len);
  absl::MutexLock l(&mu_);
  SyncGrowsDown(addr);
  if (Reserved(addr, len)) return Errno(EINVAL);
  SENTRY_TRY(as_->Unmap(via, GuestAddr(addr), len));
  Carve(addr, len);
  return Ok();
}

Result<void> MemoryManager::DetachShared(platform::Context& via, uint64_t addr) {
  if (!PageAligned(addr)) return Errno(EINVAL);
  absl::MutexLock l(&mu_);
  auto it = vmas_.lower_bound(addr);
  for (; it != vmas_.end(); ++it) {
    MappingObserver* o = it->second.hold.get();
    if (o != nullptr && o->DetachSize() != 0 && it->first - addr == it->second.shared_off) break;
  }
  if (it == vmas_.end()) return Errno(EINVAL);
  MappingObserver* obj = it->second.hold.get();
  uint64_t limit = addr + PageRoundUp(obj->DetachSize());
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (; it != vmas_.end() && it->second.end <= limit; ++it) {
    if (it->second.hold.get() == obj && it->first - addr == it->second.shared_off) {
      ranges.emplace_back(it->first, it->second.end - it->first);
    }
  }
  for (auto [start, len] : ranges) {
    SENTRY_TRY(as_->Unmap(via, GuestAddr(start), len));
    Carve(start, len);
  }
  return Ok();
}

Result<void> MemoryManager::Protect(platform::Context& via, uint64_t addr, uint64_t len, int prot,
                                    const VmLimits& limits) {
  if (!PageAligned(addr)) return Errno(EINVAL);
  if (prot & ~(kProtMask | PROT_GROWSDOWN | PROT_GROWSUP)) return Errno(EINVAL);
  len = PageRoundUp(len);
  if (Overflows(addr, len)) return Errno(ENOMEM);
  if (len == 0) return Ok();
  absl::MutexLock l(&mu_);
  // Every page must be mapped; a shared mapping of a file opened read-only stays read-only,
  // as Linux's VM_MAYWRITE.
  uint64_t cur = addr;
  bool write_denied = false;
  uint64_t charge = 0;  // pages that become writable private memory (mprotect_fixup)
  uint64_t new_data = 0;  // bytes that become data (RLIMIT_DATA)
  auto it = vmas_.upper_bound(addr);
  if (it != vmas_.begin()) --it;
  for (; it != vmas_.end() && cur < addr + len; ++it) {
    if (it->second.end <= cur) continue;
    if (it->first > cur) return Errno(ENOMEM);
    uint64_t piece = std::min(it->second.end, addr + len) - std::max(it->first, addr);
    cur = it->second.end;
    if ((prot & PROT_WRITE) && it->second.shared && !it->second.may_write) write_denied = true;
    const Vma& o = it->second;
    if (!o.accounted && Accountable(prot, o.shared, o.noreserve ? MAP_NORESERVE : 0)) {
      charge += piece;
    }
    if (!IsData(o) && IsData(prot, o.shared, o.IsStack())) new_data += piece;
  }
  if (cur < addr + len) return Errno(ENOMEM);
  if (write_denied) return Errno(EACCES);
  // Only the data limit: mprotect_fixup's RLIMIT_AS checks of the old and new flags cancel.
  if (new_data != 0 &&
      !MayExpand({.data = limits.data, .data_max = limits.data_max}, true, new_data)) {
    return Errno(ENOMEM);
  }
  if (charge != 0 && !Commit().TryCommit(charge / kPageSize)) return Errno(ENOMEM);
  if (auto r = as_->Protect(via, GuestAddr(addr), len, prot & kProtMask); !r.ok()) {
    Commit().Uncommit(charge / kPageSize);
    return r.error();
  }
  // Split at the edges and update.
  std::vector<std::pair<uint64_t, Vma>> pieces;
  it = vmas_.upper_bound(addr);
  if (it != vmas_.begin()) --it;
  while (it != vmas_.end() && it->first < addr + len) {
    if (it->second.end <= addr) {
      ++it;
      continue;
    }
    pieces.emplace_back(it->first, std::move(it->second));
    it = vmas_.erase(it);
  }
  for (auto& [s, v] : pieces) {
    if (s < addr) {
      Vma left = v;
      left.end = addr;
      vmas_[s] = std::move(left);
    }
    if (v.end > addr + len) {
      Vma right = v;
      right.shared_off += addr + len - s;
      vmas_[addr + len] = std::move(right);
    }
    uint64_t ms = std::max(s, addr), me = std::min(v.end, addr + len);
    v.end = me;
    v.prot = prot & kProtMask;
    v.accounted = v.accounted || Accountable(prot, v.shared, v.noreserve ? MAP_NORESERVE : 0);
    v.shared_off += ms - s;
    vmas_[ms] = std::move(v);
  }
  return Ok();
}

Result<uint64_t> MemoryManager::Remap(platform::Context& via, uint64_t old_addr, uint64_t old_len,
                                      uint64_t new_len, int flags, uint64_t new_addr,
                                      const VmLimits& limits) {
  if (!PageAligned(old_addr) || new_len == 0) return Errno(EINVAL);
  if (flags & ~(MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP)) return Errno(EINVAL);
  if ((flags & MREMAP_FIXED) && !(flags & MREMAP_MAYMOVE)) return Errno(EINVAL);
  if (flags & MREMAP_DONTUNMAP) return Errno(EINVAL);  // partial: not supported yet
  old_len = PageRoundUp(old_len);
  new_len = PageRoundUp(new_len);
  absl::MutexLock l(&mu_);
  auto it = vmas_.upper_bound(old_addr);
  if (it == vmas_.begin()) return Errno(EFAULT);
  --it;
  if (it->second.end < old_addr + old_len || old_len == 0) return Errno(EFAULT);
  Vma v = it->second;
  uint64_t vstart = it->first;
  uint64_t target = old_addr;
  if (flags & MREMAP_FIXED) {
    if (!PageAligned(new_addr) || Reserved(new_addr, new_len)) return Errno(EINVAL);
    if (new_addr < old_addr + old_len && new_addr + new_len > old_addr) return Errno(EINVAL);
    target = new_addr;
  } else if (new_len > old_len && !RangeFree(old_addr + old_len, new_len - old_len)) {
    if (!(flags & MREMAP_MAYMOVE)) return Errno(ENOMEM);
    target = SENTRY_TRY(FindFree(new_len));
  }
  // Linux unmaps an MREMAP_FIXED target before it checks the growth (vma_to_resize).
  if (new_len > old_len &&
      !MayExpand(limits, IsData(v), new_len - old_len, target, target != old_addr ? new_len : 0)) {
    return Errno(ENOMEM);
  }
  int host_flags = flags;
  if (target != old_addr) host_flags = MREMAP_MAYMOVE | MREMAP_FIXED;
  // The new extent is charged whole; Carve gives back the old one.
  if (v.accounted && !Commit().TryCommit(new_len / kPageSize)) return Errno(ENOMEM);
  auto remapped =
      as_->Remap(via, GuestAddr(old_addr), old_len, new_len, host_flags, GuestAddr(target));
  if (!remapped.ok()) {
    if (v.accounted) Commit().Uncommit(new_len / kPageSize);
    return remapped.error();
  }
  uint64_t r = *remapped;
  Carve(old_addr, old_len);
  if (target != old_addr) Carve(target, new_len);
  Vma nv = v;
  nv.end = r + new_len;
  nv.shared_off += old_addr - vstart;
  vmas_[r] = nv;
  return r;
}

Result<void> MemoryManager::Advise(platform::Context& via, uint64_t addr, uint64_t len,
                                   int advice) {
  if (!PageAligned(addr)) return Errno(EINVAL);
  len = PageRoundUp(len);
  switch (advice) {
    case MADV_DONTNEED:
    case MADV_FREE:
    case MADV_REMOVE: {
      SENTRY_TRY(CheckMapped(addr, len));
      return as_->Advise(via, GuestAddr(addr), len, advice == MADV_FREE ? MADV_DONTNEED : advice);
    }
    case MADV_NORMAL: case MADV_RANDOM: case MADV_SEQUENTIAL: case MADV_WILLNEED:
    case MADV_DONTFORK: case MADV_DOFORK: case MADV_MERGEABLE: case MADV_UNMERGEABLE:
    case MADV_HUGEPAGE: case MADV_NOHUGEPAGE: case MADV_DONTDUMP: case MADV_DODUMP:
    case MADV_COLD: case MADV_PAGEOUT:
      return CheckMapped(addr, len);  // hints: accepted, no effect
    default:
      return Errno(EINVAL);
  }
}

void MemoryManager::SetBrkStart(uint64_t start) {
  absl::MutexLock l(&mu_);
  brk_start_ = brk_ = PageRoundUp(start);
}

Result<uint64_t> MemoryManager::Brk(platform::Context& via, uint64_t addr, const VmLimits& limits) {
  absl::MutexLock l(&mu_);
  if (addr < brk_start_ || addr > brk_start_ + kMaxBrk) return brk_;
  // check_data_rlimit, less the ELF data segment's file size that Linux adds to the heap's.
  if (limits.data != RLIM_INFINITY && addr - brk_start_ > limits.data) return brk_;
  uint64_t old_end = PageRoundUp(brk_), new_end = PageRoundUp(addr);
  if (new_end > old_end) {
    if (!RangeFree(old_end, new_end - old_end)) return brk_;
    if (!MayExpand(limits, true, new_end - old_end)) return brk_;
    uint64_t pages = (new_end - old_end) / kPageSize;
    if (!Commit().TryCommit(pages)) return brk_;  // Linux's brk fails the same way
    auto r = as_->Map(via, GuestAddr(old_end), new_end - old_end, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (!r.ok()) {
      Commit().Uncommit(pages);
      return brk_;
    }
    vmas_[old_end] = Vma{new_end, PROT_READ | PROT_WRITE, false, false, "[heap]"};
    vmas_[old_end].lock = future_lock_;
    vmas_[old_end].accounted = true;
  } else if (new_end < old_end) {
    if (!as_->Unmap(via, GuestAddr(new_end), old_end - new_end).ok()) return brk_;
    Carve(new_end, old_end - new_end);
  }
  brk_ = addr;
  return brk_;
}

void MemoryManager::SyncGrowsDown(uint64_t addr) {
  // The host grows MAP_GROWSDOWN mappings on faults without telling us: find the pages it
  // added below such a VMA (they are readable in the stub) and record them.
  auto it = vmas_.upper_bound(addr);
  if (it == vmas_.end() || !it->second.growsdown) return;
  uint64_t start = it->first;
  uint64_t lo = start;
  uint8_t probe;
  while (lo > PageRoundDown(addr) && lo - kPageSize >= platform::Layout::kGuestBottom &&
         as_->ReadMemory(GuestAddr(lo - kPageSize), {&probe, 1}) == 1) {
    if (it != vmas_.begin() && std::prev(it)->second.end > lo - kPageSize) break;
    lo -= kPageSize;
  }
  if (lo == start) return;
  // The host grew it past the limit's check; the pages exist, so they count.
  if (it->second.accounted) Commit().ForceCommit((start - lo) / kPageSize);
  Vma v = it->second;
  vmas_.erase(it);
  vmas_[lo] = v;
}

std::optional<Vma> MemoryManager::VmaAt(uint64_t addr) {
  absl::MutexLock l(&mu_);
  auto it = vmas_.upper_bound(addr);
  if (it == vmas_.begin()) return std::nullopt;
  --it;
  if (addr >= it->second.end) return std::nullopt;
  return it->second;
}

Result<void> MemoryManager::CheckMapped(uint64_t addr, uint64_t len) {
  absl::MutexLock l(&mu_);
  if (Overflows(addr, len)) return Errno(ENOMEM);
  SyncGrowsDown(addr);
  uint64_t cur = addr;
  auto it = vmas_.upper_bound(addr);
  if (it != vmas_.begin()) --it;
  for (; it != vmas_.end() && cur < addr + len; ++it) {
    if (it->second.end <= cur) continue;
    if (it->first > cur) return Errno(ENOMEM);
    cur = it->second.end;
  }
  if (cur < addr + len) return Errno(ENOMEM);
  return Ok();
}

std::pair<uint64_t, uint64_t> MemoryManager::FutexKey(uint64_t addr, bool private_futex) {
  if (!private_futex) {
    absl::MutexLock l(&mu_);
    auto it = vmas_.upper_bound(addr);
    if (it != vmas_.begin()) {
      --it;
      if (it->second.end > addr && it->second.shared) {
        return {it->second.shared_id << 1 | 1, it->second.shared_off + (addr - it->first)};
      }
    }
  }
  return {reinterpret_cast<uint64_t>(this), addr};
}

std::shared_ptr<MemoryManager> MemoryManager::Fork(
    std::shared_ptr<platform::AddressSpace> child_as) {
  auto child = std::make_shared<MemoryManager>(std::move(child_as));
  absl::MutexLock l(&mu_);
  child->vmas_ = vmas_;
  for (auto& [start, v] : child->vmas_) v.lock = 0;  // locks and MCL_FUTURE stay behind
  child->brk_start_ = brk_start_;
  child->auxv_ = auxv_;
  child->membarrier_registered_ = membarrier_registered_;  // Linux's fork keeps them too
  child->brk_ = brk_;
  // The copies exist once the host has forked the stub; as Linux's dup_mmap they are charged
  // (over the limit if need be: the fork has happened).
  Commit().ForceCommit(AccountedPagesLocked());
  return child;
}

MemoryManager::~MemoryManager() {
  absl::MutexLock l(&mu_);
  Commit().Uncommit(AccountedPagesLocked());
}

uint64_t MemoryManager::AccountedPagesLocked() {
  uint64_t pages = 0;
  for (auto& [start, v] : vmas_) {
    if (v.accounted) pages += (v.end - start) / kPageSize;
  }
  return pages;
}

MemoryManager::Usage MemoryManager::MemoryUsage() {
  absl::MutexLock l(&mu_);
  Usage u;
  for (auto& [start, v] : vmas_) {
    uint64_t pages = (v.end - start) / 4096;
    bool file = !v.name.empty() && v.name[0] == '/';
    u.size += pages;
    if (v.IsStack()) u.stack += pages;
    if (v.prot == PROT_NONE) continue;
    u.resident += pages;
    if (v.shared || file) u.shared += pages;
    if (file && (v.prot & PROT_EXEC)) u.text += pages;
    if (IsData(v)) u.data += pages;
    if (v.lock & kLocked) u.locked_resident += pages;
  }
  u.locked = LockedPagesLocked(0, ~uint64_t{0});
  return u;
}

void MemoryManager::SplitAt(uint64_t at) {
  auto it = vmas_.upper_bound(at);
  if (it == vmas_.begin()) return;
  --it;
  if (it->first == at || it->second.end <= at) return;
  Vma right = it->second;  // a copy: one more VMA maps the source (MappingHold)
  right.shared_off += at - it->first;
  it->second.end = at;
  vmas_[at] = std::move(right);
}

Result<void> MemoryManager::SetLock(uint64_t addr, uint64_t len, uint8_t lock) {
  if (Overflows(addr, len)) return Errno(EINVAL);
  absl::MutexLock l(&mu_);
  // The mapped run that starts at addr.
  uint64_t end = addr;
  auto it = vmas_.upper_bound(addr);
  if (it != vmas_.begin()) --it;
  for (; it != vmas_.end() && end < addr + len; ++it) {
    if (it->second.end <= end) continue;
    if (it->first > end) break;
    end = std::min(it->second.end, addr + len);
  }
  if (end > addr) {
    SplitAt(addr);
    SplitAt(end);
    for (auto v = vmas_.find(addr); v != vmas_.end() && v->first < end; ++v) v->second.lock = lock;
  }
  if (end < addr + len) return Errno(ENOMEM);
  return Ok();
}

void MemoryManager::SetLockAll(std::optional<uint8_t> current, uint8_t future) {
  absl::MutexLock l(&mu_);
  future_lock_ = future;
  if (!current) return;
  for (auto& [start, v] : vmas_) v.lock = *current;
}

uint64_t MemoryManager::LockedPages(uint64_t addr, uint64_t len) {
  absl::MutexLock l(&mu_);
  return LockedPagesLocked(addr, len);
}

uint64_t MemoryManager::LockedPagesLocked(uint64_t addr, uint64_t len) {
  uint64_t end = Overflows(addr, len) ? ~uint64_t{0} : addr + len;
  uint64_t pages = 0;
  for (auto& [start, v] : vmas_) {
    if (!(v.lock & kLocked)) continue;
    uint64_t lo = std::max(start, addr), hi = std::min(v.end, end);
    if (lo < hi) pages += (hi - lo) / kPageSize;
  }
  return pages;
}

std::string MemoryManager::Maps() {
  absl::MutexLock l(&mu_);
  std::string out;
  char line[256];
  for (auto& [s, v] : vmas_) {
    bool file = v.ino != 0;
    int n = snprintf(line, sizeof(line), "%08lx-%08lx %c%c%c%c %08lx %02x:%02x %lu", s, v.end,
                     v.prot & PROT_READ ? 'r' : '-', v.prot & PROT_WRITE ? 'w' : '-',
                     v.prot & PROT_EXEC ? 'x' : '-', v.shared ? 's' : 'p',
                     file ? v.shared_off : 0, file ? major(v.dev) : 0, file ? minor(v.dev) : 0,
                     file ? v.ino : 0);
    out += line;
    if (!v.name.empty()) {
      out.append(n < 73 ? 73 - n : 1, ' ');  // Linux pads the path to column 74
      out += v.name;
    }
    out += '\n';
  }
  return out;
}

}  // namespace sentry::mm
