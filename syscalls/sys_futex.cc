// futex(2).
#include <linux/futex.h>

#include "sentry/kernel/futex.h"
#include "syscalls/common.h"

namespace sentry::syscalls {
namespace {

// FUTEX_WAKE_OP: *uaddr2 = op(*uaddr2, oparg), then compare the old value.
Result<bool> WakeOp(Task& t, uint64_t addr2, uint32_t encoded) {
  int op = (encoded >> 28) & 7, cmp = (encoded >> 24) & 15;
  uint32_t oparg = (encoded >> 12) & 0xfff, cmparg = encoded & 0xfff;
  if (encoded & (FUTEX_OP_OPARG_SHIFT << 28)) oparg = 1u << (oparg & 31);
  // Not atomic against other guest threads' plain stores (the host lacks a remote CAS);
  // glibc only uses WAKE_OP under its own locks.
  uint32_t old = SENTRY_TRY(t.CopyIn<uint32_t>(GuestAddr(addr2)));
  uint32_t nv;
  switch (op) {
    case FUTEX_OP_SET: nv = oparg; break;
    case FUTEX_OP_ADD: nv = old + oparg; break;
    case FUTEX_OP_OR: nv = old | oparg; break;
    case FUTEX_OP_ANDN: nv = old & ~oparg; break;
    case FUTEX_OP_XOR: nv = old ^ oparg; break;
    default: return Errno(ENOSYS);
  }
  SENTRY_TRY(t.CopyOut(GuestAddr(addr2), nv));
  int32_t o = static_cast<int32_t>(old), a = static_cast<int32_t>(cmparg);
  switch (cmp) {
    case FUTEX_OP_CMP_EQ: return o == a;
    case FUTEX_OP_CMP_NE: return o != a;
    case FUTEX_OP_CMP_LT: return o < a;
    case FUTEX_OP_CMP_LE: return o <= a;
    case FUTEX_OP_CMP_GT: return o > a;
    case FUTEX_OP_CMP_GE: return o >= a;
    default: return Errno(ENOSYS);
  }
}

}  // namespace

Result<uint64_t> SysFutex(Task& t, uint64_t addr, int op, uint32_t val, uint64_t timeout_or_val2,
                          uint64_t addr2, uint32_t val3) {
  bool priv = op & FUTEX_PRIVATE_FLAG;
  int cmd = op & FUTEX_CMD_MASK;
  kernel::FutexTable& ft = t.kernel().futexes();
  if (addr & 3) return Errno(EINVAL);
  auto key = [&](uint64_t a) { return t.mm().FutexKey(a, priv); };
  switch (cmd) {
    case FUTEX_WAIT:
    case FUTEX_WAIT_BITSET: {
      uint32_t bitset = cmd == FUTEX_WAIT ? FUTEX_BITSET_MATCH_ANY : val3;
      if (bitset == 0) return Errno(EINVAL);
      absl::Time deadline = absl::InfiniteFuture();
      if (timeout_or_val2) {
        absl::Duration d = SENTRY_TRY(CopyInDuration(t, GuestAddr(timeout_or_val2)));
        if (cmd == FUTEX_WAIT) {
          deadline = absl::Now() + d;
        } else if (op & FUTEX_CLOCK_REALTIME) {
          deadline = absl::UnixEpoch() + d;
        } else {
          struct timespec now;
          clock_gettime(CLOCK_MONOTONIC, &now);
          deadline = absl::Now() + (d - absl::DurationFromTimespec(now));
        }
      }
      auto r = ft.Wait(t, addr, priv, val, bitset, deadline);
      if (!r.ok()) {
        if (r.error() == kERESTARTSYS && timeout_or_val2) return Errno(EINTR);
        return r.error();
      }
      return 0;
    }
    case FUTEX_WAKE:
    case FUTEX_WAKE_BITSET: {
      uint32_t bitset = cmd == FUTEX_WAKE ? FUTEX_BITSET_MATCH_ANY : val3;
      if (bitset == 0) return Errno(EINVAL);
      return static_cast<uint64_t>(ft.Wake(key(addr), static_cast<int>(std::min<uint32_t>(val, INT32_MAX)), bitset));
    }
    case FUTEX_REQUEUE:
    case FUTEX_CMP_REQUEUE: {
      if (addr2 & 3) return Errno(EINVAL);
      int nwake = static_cast<int>(val);
      int nreq = static_cast<int>(timeout_or_val2);
      if (nwake < 0 || nreq < 0) return Errno(EINVAL);
      if (cmd == FUTEX_CMP_REQUEUE) {
        uint32_t cur = SENTRY_TRY(t.CopyIn<uint32_t>(GuestAddr(addr)));
        if (cur != val3) return Errno(EAGAIN);
      }
      return static_cast<uint64_t>(ft.Requeue(key(addr), key(addr2), nwake, nreq));
    }
    case FUTEX_WAKE_OP: {
      if (addr2 & 3) return Errno(EINVAL);
      bool wake2 = SENTRY_TRY(WakeOp(t, addr2, val3));
      int n = ft.Wake(key(addr), static_cast<int>(std::min<uint32_t>(val, INT32_MAX)), FUTEX_BITSET_MATCH_ANY);
      if (wake2) n += ft.Wake(key(addr2), static_cast<int>(std::min<uint64_t>(timeout_or_val2, INT32_MAX)), FUTEX_BITSET_MATCH_ANY);
      return static_cast<uint64_t>(n);
    }
    default:
      return Errno(ENOSYS);  // PI futexes: not yet
  }
}

}  // namespace sentry::syscalls
