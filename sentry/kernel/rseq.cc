#include "sentry/kernel/rseq.h"

#include <linux/rseq.h>

#include <cstddef>

#include "sentry/base/logging.h"
#include "sentry/kernel/kernel.h"

namespace sentry::kernel {
namespace {

// Linux 6.1 takes exactly the original struct rseq (32 bytes, 32-byte aligned); the
// extensible sizes came in 6.3.
constexpr uint32_t kAreaSize = 32;
constexpr uint64_t kTaskSize = 0x7ffffffff000;  // x86-64 TASK_SIZE_MAX

// The fields of struct rseq and struct rseq_cs the kernel reads and writes.
constexpr uint64_t kCsField = 8;      // u64 rseq_cs
constexpr uint64_t kFlagsField = 16;  // u32 flags
struct CriticalSection {
  uint32_t version;
  uint32_t flags;
  uint64_t start_ip;
  uint64_t post_commit_offset;
  uint64_t abort_ip;
};
static_assert(sizeof(CriticalSection) == 32);

// Writes what unregistering leaves in the area: cpu_id_start 0, cpu_id "uninitialized".
Result<void> ResetCpuFields(Task& t, uint64_t area) {
  const uint32_t fields[2] = {0, static_cast<uint32_t>(RSEQ_CPU_ID_UNINITIALIZED)};
  return t.CopyOut(GuestAddr(area), fields);
}

}  // namespace

Result<void> RseqSyscall(Task& t, uint64_t area, uint32_t len, int flags, uint32_t sig) {
  RseqRegistration& reg = t.rseq_;
  if (flags & RSEQ_FLAG_UNREGISTER) {
    if (flags & ~RSEQ_FLAG_UNREGISTER) return Errno(EINVAL);
    if (reg.addr == 0 || reg.addr != area || reg.len != len) return Errno(EINVAL);
    if (reg.sig != sig) return Errno(EPERM);
    SENTRY_TRY(ResetCpuFields(t, area));
    // The host stops writing to the area before the guest may reuse its memory.
    Result<void> host = t.ctx().HostRseq(area, len, flags, sig);
    if (!host.ok()) log::Sentry().debug("task {}: host rseq unregister: {}", t.tid(),
                                             ErrnoName(host.error().code()));
    reg = {};
    return Ok();
  }
  if (flags != 0) return Errno(EINVAL);
  if (reg.addr != 0) {
    if (reg.addr != area || reg.len != len) return Errno(EINVAL);
    if (reg.sig != sig) return Errno(EPERM);
    return Errno(EBUSY);
  }
  if (area % kAreaSize != 0 || len != kAreaSize) return Errno(EINVAL);
  if (area >= kTaskSize || kTaskSize - area < len) return Errno(EFAULT);
  SENTRY_TRY(t.ctx().HostRseq(area, len, flags, sig));
  reg = {area, len, sig};
  return Ok();
}

void RseqAfterFork(Task& child) {
  const RseqRegistration& reg = child.rseq_;
  if (reg.addr == 0) return;
  // Where the platform forks from the guest thread's own host thread, the host copied the
  // registration already (EBUSY); otherwise it is made here.
  Result<void> r = child.ctx().HostRseq(reg.addr, reg.len, 0, reg.sig);
  if (!r.ok() && r.error() != EBUSY) {
    log::Sentry().debug("task {}: host rseq after fork: {}", child.tid(),
                        ErrnoName(r.error().code()));
    child.rseq_ = {};
  }
}

Result<void> RseqOnSignalDelivery(Task& t) {
  const RseqRegistration& reg = t.rseq_;
  if (reg.addr == 0) return Ok();
  uint64_t cs_addr = SENTRY_TRY(t.CopyIn<uint64_t>(GuestAddr(reg.addr + kCsField)));
  if (cs_addr == 0) return Ok();
  if (cs_addr >= kTaskSize) return Errno(EINVAL);
  CriticalSection cs = SENTRY_TRY(t.CopyIn<CriticalSection>(GuestAddr(cs_addr)));
  uint64_t end = cs.start_ip + cs.post_commit_offset;
  if (cs.start_ip >= kTaskSize || end >= kTaskSize || cs.abort_ip >= kTaskSize ||
      cs.version > 0 || end < cs.start_ip ||
      cs.abort_ip - cs.start_ip < cs.post_commit_offset) {
    return Errno(EINVAL);
  }
  uint32_t abort_sig = SENTRY_TRY(t.CopyIn<uint32_t>(GuestAddr(cs.abort_ip - 4)));
  if (abort_sig != reg.sig) return Errno(EINVAL);
  const uint64_t zero = 0;
  platform::Registers& r = t.regs_;
  if (r.rip - cs.start_ip >= cs.post_commit_offset) {
    // Not inside the section: nothing to restart, and the descriptor is stale.
    return t.CopyOut(GuestAddr(reg.addr + kCsField), zero);
  }
  // The RSEQ_CS_FLAG_NO_RESTART_ON_* flags were deprecated before 6.1, which refuses any.
  uint32_t area_flags = SENTRY_TRY(t.CopyIn<uint32_t>(GuestAddr(reg.addr + kFlagsField)));
  if (cs.flags != 0 || area_flags != 0) return Errno(EINVAL);
  SENTRY_TRY(t.CopyOut(GuestAddr(reg.addr + kCsField), zero));
  r.rip = cs.abort_ip;
  return Ok();
}

}  // namespace sentry::kernel
