// Reaching into another process: process_vm_readv, process_vm_writev, kcmp. Each checks
// ptrace access (sentry/kernel/access.h) and goes through the target's memory manager or
// resource tables, never through host ptrace.
#include <linux/kcmp.h>
#include <sys/uio.h>

#include <random>

#include "sentry/kernel/access.h"
#include "syscalls/common.h"

namespace sentry::syscalls {
namespace {

using kernel::ThreadGroup;

constexpr uint64_t kMaxIov = 1024;                             // UIO_MAXIOV
constexpr uint64_t kTaskSizeMax = (uint64_t{1} << 47) - 4096;  // access_ok's limit
constexpr size_t kChunk = 64 * 1024;

// A guest iovec array, checked as Linux's iovec_from_user: EINVAL past UIO_MAXIOV or for a
// negative length, EFAULT if the array is unreadable.
Result<std::vector<struct iovec>> CopyInIovecArray(Task& t, GuestAddr addr, uint64_t count) {
  if (count > kMaxIov) return Errno(EINVAL);
  std::vector<struct iovec> v(count);
  if (count) {
    SENTRY_TRY(t.CopyInBytes(addr, {reinterpret_cast<uint8_t*>(v.data()), count * sizeof(v[0])}));
  }
  for (const auto& i : v) {
    if (static_cast<ssize_t>(i.iov_len) < 0) return Errno(EINVAL);
  }
  return v;
}

// A walk over an iovec array in one address space: Move copies between it and a host buffer
// and stops at the first byte that is not accessible.
class IovCursor {
 public:
  IovCursor(platform::AddressSpace& as, const std::vector<struct iovec>& v) : as_(as), v_(v) {
    Skip();
  }
  bool done() const { return i_ == v_.size(); }
  // At most `max` bytes up to the end of the current segment.
  size_t Next(size_t max) const { return std::min(max, v_[i_].iov_len - off_); }
  // Copies `n` (<= Next) bytes at the cursor from (write) or to (read) `buf`; returns how many
  // moved and advances by that much.
  size_t Move(uint8_t* buf, size_t n, bool write) {
    GuestAddr at(reinterpret_cast<uint64_t>(v_[i_].iov_base) + off_);
    size_t got = write ? as_.WriteMemory(at, {buf, n}) : as_.ReadMemory(at, {buf, n});
    off_ += got;
    Skip();
    return got;
  }

 private:
  void Skip() {
    while (i_ < v_.size() && off_ == v_[i_].iov_len) {
      i_++;
      off_ = 0;
    }
  }
  platform::AddressSpace& as_;
  const std::vector<struct iovec>& v_;
  size_t i_ = 0;
  size_t off_ = 0;
};

// Moves bytes from `from` to `to` until either ends or faults. Returns the count, or EFAULT
// when nothing moved because of a fault.
Result<uint64_t> Transfer(IovCursor& from, IovCursor& to) {
  std::vector<uint8_t> buf(kChunk);
  uint64_t total = 0;
  while (!from.done() && !to.done()) {
    size_t want = to.Next(from.Next(kChunk));
    size_t got = from.Move(buf.data(), want, false);
    size_t put = to.Move(buf.data(), got, true);
    total += put;
    if (put < want) return total > 0 ? Result<uint64_t>(total) : Errno(EFAULT);
  }
  return total;
}

Result<uint64_t> ProcessVm(Task& t, int pid, GuestAddr lvec, uint64_t lcount, GuestAddr rvec,
                           uint64_t rcount, uint64_t flags, bool write) {
  if (flags != 0) return Errno(EINVAL);
  std::vector<struct iovec> local = SENTRY_TRY(CopyInIovecArray(t, lvec, lcount));
  uint64_t local_total = 0;
  for (const auto& i : local) {
    uint64_t base = reinterpret_cast<uint64_t>(i.iov_base);
    if (i.iov_len && (base > kTaskSizeMax || i.iov_len > kTaskSizeMax - base)) {
      return Errno(EFAULT);
    }
    local_total += i.iov_len;
  }
  if (local_total == 0) return 0;  // as Linux: before the remote side or the pid is looked at
  std::vector<struct iovec> remote = SENTRY_TRY(CopyInIovecArray(t, rvec, rcount));
  bool any = false;
  for (const auto& i : remote) any |= i.iov_len > 0;
  if (!any) return 0;
  std::shared_ptr<mm::MemoryManager> target;
  {
    kernel::Kernel& k = t.kernel();
    absl::MutexLock l(&k.mu());
    kernel::Task* task = k.TaskByTid(t.ToGlobalPid(pid));  // any thread of the process
    if (task == nullptr || task->tg().zombie) return Errno(ESRCH);
    target = task->tg().mm;
    if (target == nullptr) return Errno(ESRCH);  // not started yet, or gone
    if (!kernel::MayPtrace(t.tg(), task->tg())) return Errno(EPERM);
  }
  IovCursor mine(t.mm().as(), local);
  IovCursor theirs(target->as(), remote);
  return write ? Transfer(mine, theirs) : Transfer(theirs, mine);
}

// kcmp's answer for two kernel objects: 0 if the same, else 1 or 2 by an order that is
// consistent but says nothing about addresses (Linux's kptr_obfuscate: a boot-time random
// xor and odd multiplier per type).
uint64_t KcmpOrder(const void* a, const void* b, int type) {
  static const auto* cookies = [] {
    auto* c = new std::array<std::pair<uint64_t, uint64_t>, KCMP_TYPES>();
    std::random_device rd;
    for (auto& [x, m] : *c) {
      x = (uint64_t{rd()} << 32) | rd();
      m = (uint64_t{rd()} << 32) | rd() | 1;
    }
    return c;
  }();
  auto obf = [&](const void* p) {
    auto [x, m] = (*cookies)[type];
    return (reinterpret_cast<uint64_t>(p) ^ x) * m;
  };
  uint64_t va = obf(a), vb = obf(b);
  return va == vb ? 0 : (va < vb ? 1 : 2);
}

// What kcmp compares for a task and a type (KCMP_FILE aside). Preconditions: Kernel::mu_.
const void* KcmpResource(kernel::Task& task, int type) {
  switch (type) {
    case KCMP_VM:
      return task.mm_.get();
    case KCMP_FILES:
      return task.fds_.get();
    case KCMP_FS:
      return task.fs_.get();
    case KCMP_SIGHAND:
      return task.tg().handlers.get();
    default:
      return nullptr;
  }
}

}  // namespace

Result<uint64_t> SysProcessVmReadv(Task& t, int pid, GuestAddr lvec, uint64_t lcount,
                                   GuestAddr rvec, uint64_t rcount, uint64_t flags) {
  return ProcessVm(t, pid, lvec, lcount, rvec, rcount, flags, false);
}

Result<uint64_t> SysProcessVmWritev(Task& t, int pid, GuestAddr lvec, uint64_t lcount,
                                    GuestAddr rvec, uint64_t rcount, uint64_t flags) {
  return ProcessVm(t, pid, lvec, lcount, rvec, rcount, flags, true);
}

Result<uint64_t> SysKcmp(Task& t, int pid1, int pid2, int type, uint64_t idx1, uint64_t idx2) {
  std::shared_ptr<vfs::FdTable> fds1, fds2;
  const void *r1 = nullptr, *r2 = nullptr;
  {
    kernel::Kernel& k = t.kernel();
    absl::MutexLock l(&k.mu());
    kernel::Task* a = k.TaskByTid(t.ToGlobalPid(pid1));
    kernel::Task* b = k.TaskByTid(t.ToGlobalPid(pid2));
    if (a == nullptr || b == nullptr) return Errno(ESRCH);
    if (!kernel::MayPtrace(t.tg(), a->tg()) || !kernel::MayPtrace(t.tg(), b->tg())) {
      return Errno(EPERM);
    }
    switch (type) {
      case KCMP_FILE:
        fds1 = a->fds_ref();
        fds2 = b->fds_ref();
        break;
      case KCMP_VM:
      case KCMP_FILES:
      case KCMP_FS:
      case KCMP_SIGHAND:
        r1 = KcmpResource(*a, type);
        r2 = KcmpResource(*b, type);
        break;
      case KCMP_IO:
      case KCMP_SYSVSEM:
      case KCMP_EPOLL_TFD:
        // Partial: I/O contexts, SysV undo lists and epoll targets are not compared (Linux
        // answers EOPNOTSUPP for the last two when built without them).
        return Errno(EOPNOTSUPP);
      default:
        return Errno(EINVAL);
    }
  }
  if (type == KCMP_FILE) {
    if (!fds1 || !fds2) return Errno(EBADF);
    auto f1 = fds1->Get(static_cast<int>(idx1));
    auto f2 = fds2->Get(static_cast<int>(idx2));
    if (!f1.ok() || !f2.ok() || idx1 > INT32_MAX || idx2 > INT32_MAX) return Errno(EBADF);
    return KcmpOrder(f1->get(), f2->get(), type);
  }
  return KcmpOrder(r1, r2, type);
}

}  // namespace sentry::syscalls
