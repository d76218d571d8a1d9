// Memory locking: mlock, mlock2, munlock, mlockall, munlockall, and the RLIMIT_MEMLOCK checks
// that mmap, mremap and brk make for memory that will be locked.
//
// Partial by design: locks are recorded in the VMAs and accounted (VmLck, RLIMIT_MEMLOCK) as
// Linux does, but host memory is not locked or pre-faulted (see kLocked in memory_manager.h).
#include <sys/mman.h>

#include "sentry/kernel/access.h"
#include "syscalls/common.h"

namespace sentry::syscalls {
namespace {

// RLIMIT_MEMLOCK in pages, or nullopt for a caller that may lock without limit (CAP_IPC_LOCK).
// With `to_lock`, a zero limit refuses an unprivileged caller outright (can_do_mlock: EPERM).
Result<std::optional<uint64_t>> LockLimit(Task& t, bool to_lock) {
  absl::MutexLock l(&t.kernel().mu());
  if (kernel::MayLockUnlimited(t.tg())) return std::optional<uint64_t>();
  uint64_t lim = t.tg().rlimits[RLIMIT_MEMLOCK].cur;
  if (to_lock && lim == 0) return Errno(EPERM);
  return std::optional<uint64_t>(lim == RLIM_INFINITY ? UINT64_MAX : lim / kPageSize);
}

// The page range mlock and munlock act on: the pages that [addr, addr+len) touches, computed
// with Linux's wrapping PAGE_ALIGN.
std::pair<uint64_t, uint64_t> PageRange(uint64_t addr, uint64_t len) {
  uint64_t start = PageRoundDown(addr);
  uint64_t size = (len + (addr - start) + kPageSize - 1) & ~(kPageSize - 1);
  return {start, size};
}

Result<uint64_t> DoMlock(Task& t, uint64_t addr, uint64_t len, uint8_t lock) {
  std::optional<uint64_t> limit = SENTRY_TRY(LockLimit(t, true));
  auto [start, size] = PageRange(addr, len);
  if (limit) {
    // Pages that are locked already are not counted twice.
    uint64_t locked = t.mm().LockedPages() + size / kPageSize;
    if (locked > *limit) locked -= t.mm().LockedPages(start, size);
    if (locked > *limit) return Errno(ENOMEM);
  }
  SENTRY_TRY(t.mm().SetLock(start, size, lock));
  return 0;
}

}  // namespace

Result<void> CheckLockedGrowth(Task& t, bool locked, uint64_t len) {
  if (!locked) return Ok();
  std::optional<uint64_t> limit = SENTRY_TRY(LockLimit(t, false));
  if (!limit) return Ok();
  uint64_t pages = PageRoundUp(len) / kPageSize;
  if (pages < len / kPageSize || t.mm().LockedPages() + pages > *limit) return Errno(EAGAIN);
  return Ok();
}

Result<void> CheckLockedMapping(Task& t, int flags, uint64_t len) {
  if (flags & MAP_LOCKED) SENTRY_TRY(LockLimit(t, true));
  return CheckLockedGrowth(t, (flags & MAP_LOCKED) || t.mm().future_lock(), len);
}

Result<uint64_t> SysMlock(Task& t, uint64_t addr, uint64_t len) {
  return DoMlock(t, addr, len, mm::kLocked);
}

Result<uint64_t> SysMlock2(Task& t, uint64_t addr, uint64_t len, unsigned flags) {
  if (flags & ~static_cast<unsigned>(MLOCK_ONFAULT)) return Errno(EINVAL);
  return DoMlock(t, addr, len, mm::kLocked | ((flags & MLOCK_ONFAULT) ? mm::kLockOnFault : 0));
}

Result<uint64_t> SysMunlock(Task& t, uint64_t addr, uint64_t len) {
  auto [start, size] = PageRange(addr, len);
  SENTRY_TRY(t.mm().SetLock(start, size, 0));
  return 0;
}

Result<uint64_t> SysMlockall(Task& t, int flags) {
  if (flags == 0 || (flags & ~(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT)) || flags == MCL_ONFAULT) {
    return Errno(EINVAL);
  }
  std::optional<uint64_t> limit = SENTRY_TRY(LockLimit(t, true));
  if ((flags & MCL_CURRENT) && limit && t.mm().MemoryUsage().size > *limit) return Errno(ENOMEM);
  uint8_t lock = mm::kLocked | ((flags & MCL_ONFAULT) ? mm::kLockOnFault : 0);
  t.mm().SetLockAll((flags & MCL_CURRENT) ? std::optional<uint8_t>(lock) : std::nullopt,
                    (flags & MCL_FUTURE) ? lock : 0);
  return 0;
}

Result<uint64_t> SysMunlockall(Task& t) {
  t.mm().SetLockAll(uint8_t{0}, 0);
  return 0;
}

}  // namespace sentry::syscalls
