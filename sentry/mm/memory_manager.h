// The guest's memory map (mm): the VMA list the Sentry keeps, brk, and address allocation.
// Every change is recorded here and applied to the host through the platform AddressSpace.
//
// Lock order: MemoryManager::mu_ is a leaf except for the injected host syscalls it makes,
// which only block on the calling thread's own stub.
#pragma once

#include <sys/resource.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/synchronization/mutex.h"
#include "platform/platform.h"
#include "sentry/base/errno.h"
#include "sentry/base/guest_addr.h"

namespace sentry::mm {

// An object that wants to know how many VMAs map it: a System V shared memory segment counts
// its attachments (shm_nattch) this way. Opened() runs when a VMA starts mapping it (map, a
// split, fork), Closed() when one stops (munmap, exit, exec), both with MemoryManager::mu_
// held, on the thread that changes the map.
class MappingObserver {
 public:
  virtual ~MappingObserver() = default;
  virtual void Opened() = 0;
  virtual void Closed() = 0;
  // shmdt(2): the size of the segment, or 0 for objects shmdt does not detach.
  virtual uint64_t DetachSize() const { return 0; }
};

// A VMA's reference to its observer: copying it is one more VMA mapping the object, destroying
// it one less. Moves do not count.
class MappingHold {
 public:
  MappingHold() = default;
  explicit MappingHold(std::shared_ptr<MappingObserver> o) : o_(std::move(o)) {
    if (o_) o_->Opened();
  }
  MappingHold(const MappingHold& other) : o_(other.o_) {
    if (o_) o_->Opened();
  }
  MappingHold(MappingHold&& other) noexcept : o_(std::move(other.o_)) {}
  MappingHold& operator=(const MappingHold& other) {
    if (this != &other) *this = MappingHold(other);
    return *this;
  }
  MappingHold& operator=(MappingHold&& other) noexcept {
    if (this != &other) {
      Reset();
      o_ = std::move(other.o_);
    }
    return *this;
  }
  ~MappingHold() { Reset(); }
  void Reset() {
    if (auto o = std::move(o_)) o->Closed();
  }
  MappingObserver* get() const { return o_.get(); }

 private:
  std::shared_ptr<MappingObserver> o_;
};

// What a file mapping maps: the file's identity as the guest sees it (for /proc/PID/maps and
// for futex keys shared by every process that maps the file) and whether the open file
// allows writing (a shared mapping of a read-only file cannot become writable).
struct MapSource {
  dev_t dev = 0;
  uint64_t ino = 0;
  bool may_write = true;
  std::shared_ptr<MappingObserver> observer;  // told about every VMA that maps the file
};

struct Vma {
  uint64_t end;
  int prot;
  bool shared;
  bool growsdown;
  std::string name;        // "[stack]", "[heap]", a file path, or empty
  uint64_t shared_id = 0;  // identity of a MAP_SHARED object (futex keys): per file, or per
                           // anonymous mapping and kept across forks
  uint64_t shared_off = 0;  // offset of the VMA's start in its file or shared object
  dev_t dev = 0;            // the file, for file mappings (ino != 0)
  uint64_t ino = 0;
  bool may_write = true;
  MappingHold hold;  // the source's observer, if it has one
  uint8_t lock = 0;  // kLocked, kLockOnFault (mlock): not inherited by fork
  // The VMA's pages are charged to the guest's committed memory (sentry/base/guest_memory.h):
  // a private writable mapping without MAP_NORESERVE, as Linux's VM_ACCOUNT. A charged VMA
  // stays charged when it becomes read-only (as on Linux); its pieces share the charge by size.
  bool accounted = false;
  bool noreserve = false;  // MAP_NORESERVE: never charged, not even when made writable
  // The main stack or a MAP_GROWSDOWN mapping (Linux's VM_STACK): never data.
  bool IsStack() const { return growsdown || name == "[stack]"; }
};

// A VMA's lock flags, as Linux's VM_LOCKED and VM_LOCKONFAULT. The Sentry records them for the
// guest's accounting (VmLck, RLIMIT_MEMLOCK) but does not lock host memory: it will not pin
// the host's memory for a guest, and nothing a guest can observe depends on it (the host may
// still swap the pages, which a guest cannot tell from residency).
inline constexpr uint8_t kLocked = 1;
inline constexpr uint8_t kLockOnFault = 2;

// The calling task's RLIMIT_AS and RLIMIT_DATA (bytes) that a new or grown mapping must fit
// in, as Linux's may_expand_vm: the limits are the caller's, not those of whoever else shares
// the mm (CLONE_VM, vfork). The default limits nothing: the loader's own mappings.
struct VmLimits {
  uint64_t as = RLIM_INFINITY;
  uint64_t data = RLIM_INFINITY;
  uint64_t data_max = RLIM_INFINITY;  // RLIMIT_DATA's hard limit: a soft 0 allows up to it
};

class MemoryManager {
 public:
  explicit MemoryManager(std::shared_ptr<platform::AddressSpace> as) : as_(std::move(as)) {}
  ~MemoryManager();  // gives back the committed pages of its VMAs

  platform::AddressSpace& as() { return *as_; }
  void set_address_space(std::shared_ptr<platform::AddressSpace> as) { as_ = std::move(as); }

  // mmap(2) of anonymous memory (file contents are copied in by the caller). Returns the
  // address. `flags` are the guest's MAP_* flags.
  // `source`, for a file whose contents the caller copies in, names the file in maps.
  Result<uint64_t> MapAnonymous(platform::Context& via, uint64_t addr, uint64_t len, int prot,
                                int flags, std::string name = "", const MapSource* source = nullptr,
                                uint64_t offset = 0, const VmLimits& limits = {}) {
    return Map(via, addr, len, prot, flags, std::move(name), -1, offset, source, limits);
  }
  // mmap(2) of `host_fd` at `offset` (a gofer-donated fd) when host_fd >= 0, else anonymous.
  // EOPNOTSUPP when the platform cannot map a host fd right now: the caller then copies.
  // ENOMEM past `limits` (the pages a MAP_FIXED replaces are not counted twice).
  Result<uint64_t> Map(platform::Context& via, uint64_t addr, uint64_t len, int prot, int flags,
                       std::string name, int host_fd, uint64_t offset,
                       const MapSource* source = nullptr, const VmLimits& limits = {});
  Result<void> Unmap(platform::Context& via, uint64_t addr, uint64_t len);
  // shmdt(2): unmaps the attachment at `addr` (the first VMA at or above it that maps an
  // object with a DetachSize at the offset `addr` would give it) and the rest of that
  // attachment's VMAs within the object's size. EINVAL if there is none.
  Result<void> DetachShared(platform::Context& via, uint64_t addr);
  // mprotect(2); ENOMEM if pages that become data (private, writable) pass limits.data.
  Result<void> Protect(platform::Context& via, uint64_t addr, uint64_t len, int prot,
                       const VmLimits& limits = {});
  // mremap(2); growth must fit in `limits` (after MREMAP_FIXED has freed its target).
  Result<uint64_t> Remap(platform::Context& via, uint64_t old_addr, uint64_t old_len,
                         uint64_t new_len, int flags, uint64_t new_addr,
                         const VmLimits& limits = {});
  Result<void> Advise(platform::Context& via, uint64_t addr, uint64_t len, int advice);
  // brk(2): the break stays put past `limits`, and when the heap would pass limits.data on
  // its own (Linux's check_data_rlimit).
  Result<uint64_t> Brk(platform::Context& via, uint64_t addr, const VmLimits& limits = {});
  void SetBrkStart(uint64_t start);
  // mincore / msync range check: ENOMEM if any page in [addr, addr+len) is unmapped.
  Result<void> CheckMapped(uint64_t addr, uint64_t len);
  // The auxiliary vector the program started with (/proc/PID/auxv), as Linux's saved_auxv.
  std::vector<uint64_t> auxv() {
    absl::MutexLock l(&mu_);
    return auxv_;
  }
  void set_auxv(std::vector<uint64_t> v) {
    absl::MutexLock l(&mu_);
    auxv_ = std::move(v);
  }
  // The VMA that holds `addr`, if any (a copy).
  std::optional<Vma> VmaAt(uint64_t addr);
  // mlock/munlock: sets the lock flags of the VMAs in [addr, addr+len) to `lock`, splitting at
  // the edges. As Linux's apply_vma_lock_flags, the VMAs before the first unmapped page are
  // changed, and then that hole fails it with ENOMEM.
  Result<void> SetLock(uint64_t addr, uint64_t len, uint8_t lock);
  // mlockall/munlockall: `current`, if set, becomes every VMA's lock flags; `future` those of
  // every later mapping (MCL_FUTURE; 0 for none).
  void SetLockAll(std::optional<uint8_t> current, uint8_t future);
  uint8_t future_lock() {
    absl::MutexLock l(&mu_);
    return future_lock_;
  }
  // Locked pages (VmLck, Linux's locked_vm): all of them, or those in [addr, addr+len).
  uint64_t LockedPages(uint64_t addr = 0, uint64_t len = ~uint64_t{0});
  // membarrier(2)'s registrations (MEMBARRIER_CMD_REGISTER_*), a bit per command; per mm, as
  // Linux keeps them: a fork copies them, execve starts without.
  uint32_t membarrier_registered() {
    absl::MutexLock l(&mu_);
    return membarrier_registered_;
  }
  void add_membarrier_registration(uint32_t bit) {
    absl::MutexLock l(&mu_);
    membarrier_registered_ |= bit;
  }

  // Linux AIO contexts (sentry/kernel/aio.h) belong to the address space, as Linux's
  // mm->ioctx_table: the first io_setup creates the table (with `make`), Fork does not copy it,
  // and it goes with the mm (exit, execve). Null when there is none and `make` is null.
  std::shared_ptr<void> aio_table(const std::function<std::shared_ptr<void>()>& make) {
    absl::MutexLock l(&mu_);
    if (!aio_table_ && make) aio_table_ = make();
    return aio_table_;
  }

  // A futex key: the mm itself for private memory, the shared object for MAP_SHARED.
  std::pair<uint64_t, uint64_t> FutexKey(uint64_t addr, bool private_futex);

  // The copy for a forked child (same VMAs, same shared objects).
  std::shared_ptr<MemoryManager> Fork(std::shared_ptr<platform::AddressSpace> child_as);
  std::string Maps();

  // Sizes in pages for /proc/PID/statm, stat and status, from the VMA list. The Sentry
  // does not see host residency; like mincore it counts every accessible page as resident.
  struct Usage {
    uint64_t size = 0;      // all mappings
    uint64_t resident = 0;  // accessible mappings
    uint64_t shared = 0;    // resident pages of shared or file mappings
    uint64_t text = 0;      // executable file mappings
    uint64_t data = 0;      // private writable mappings but stacks (VmData, Linux's data_vm)
    uint64_t stack = 0;     // stack mappings (VmStk)
    uint64_t locked = 0;    // mlocked mappings (VmLck)
    uint64_t locked_resident = 0;  // accessible mlocked mappings (smaps' Locked)
  };
  Usage MemoryUsage();

 private:
  bool RangeFree(uint64_t addr, uint64_t len) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Result<uint64_t> FindFree(uint64_t len) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes [addr, addr+len) from the VMA list, splitting VMAs at the edges.
  void Carve(uint64_t addr, uint64_t len) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool Reserved(uint64_t addr, uint64_t len) const;
  void SyncGrowsDown(uint64_t addr) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Splits the VMA containing `at` in two there (nothing if `at` starts a VMA or is unmapped).
  void SplitAt(uint64_t at) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  uint64_t LockedPagesLocked(uint64_t addr, uint64_t len) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Linux's may_expand_vm: whether `bytes` more of a mapping (`data` if it counts as data) fit
  // in `limits`, the VMAs in [skip, skip+skip_len) left out of the present sizes.
  bool MayExpand(const VmLimits& limits, bool data, uint64_t bytes, uint64_t skip = 0,
                 uint64_t skip_len = 0) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Bytes of [addr, addr+len) that VMAs map.
  uint64_t MappedBytes(uint64_t addr, uint64_t len) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Pages of the charged VMAs (Vma::accounted).
  uint64_t AccountedPagesLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::shared_ptr<platform::AddressSpace> as_;
  absl::Mutex mu_;
  std::map<uint64_t, Vma> vmas_ ABSL_GUARDED_BY(mu_);  // keyed by start
  uint64_t brk_start_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t brk_ ABSL_GUARDED_BY(mu_) = 0;
  uint8_t future_lock_ ABSL_GUARDED_BY(mu_) = 0;  // mlockall(MCL_FUTURE), Linux's def_flags
  uint32_t membarrier_registered_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<uint64_t> auxv_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<void> aio_table_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sentry::mm
