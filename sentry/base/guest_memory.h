// The sandbox's memory limit (sentry-run --memory): what the guest may hold in memory the
// Sentry hands out, counted in pages. Two kinds count against one limit:
//   - committed private memory: writable private mappings (anonymous, brk, stacks, private
//     copies of files), charged when mapped or made writable, as Linux's strict overcommit
//     accounting (vm.overcommit_memory=2) charges Committed_AS;
//   - in-memory file data: the tmpfs layer's pages (vfs::MemBudget charges both).
// Past the limit a mapping fails with ENOMEM and a tmpfs write with ENOSPC. With no limit
// set, charges only count. One atomic add per mapping change: nothing on page faults, which
// the host serves without the Sentry (the host memory cgroup of sentry-run is the backstop
// for what the count cannot see).
#pragma once

#include <atomic>
#include <cstdint>

namespace sentry {

class GuestMemory {
 public:
  static GuestMemory& Global() {
    static GuestMemory* m = new GuestMemory();
    return *m;
  }
  // 0: no limit.
  void SetLimitBytes(uint64_t bytes) { limit_pages_.store(bytes / 4096); }
  uint64_t limit_pages() const { return limit_pages_.load(std::memory_order_relaxed); }
  uint64_t committed_pages() const { return committed_.load(std::memory_order_relaxed); }
  uint64_t file_pages() const { return file_.load(std::memory_order_relaxed); }

  // Takes `n` pages of committed private memory if they fit; false (nothing taken) if not.
  bool TryCommit(uint64_t n) { return TryTake(committed_, n); }
  void Uncommit(uint64_t n) { committed_.fetch_sub(n, std::memory_order_relaxed); }
  // Pages of committed memory that exist already (a fork's copy): taken even over the limit.
  void ForceCommit(uint64_t n) { committed_.fetch_add(n, std::memory_order_relaxed); }
  bool TryChargeFile(uint64_t n) { return TryTake(file_, n); }
  void ForceChargeFile(uint64_t n) { file_.fetch_add(n, std::memory_order_relaxed); }
  void UnchargeFile(uint64_t n) { file_.fetch_sub(n, std::memory_order_relaxed); }

 private:
  GuestMemory() = default;
  bool TryTake(std::atomic<uint64_t>& counter, uint64_t n) {
    uint64_t limit = limit_pages();
    if (limit == 0) {
      counter.fetch_add(n, std::memory_order_relaxed);
      return true;
    }
    // The other counter may move meanwhile: the limit holds to within one racing charge.
    const std::atomic<uint64_t>& other = &counter == &committed_ ? file_ : committed_;
    uint64_t used = counter.load(std::memory_order_relaxed);
    do {
      uint64_t total = other.load(std::memory_order_relaxed) + used + n;
      if (total > limit || total < used) return false;
    } while (!counter.compare_exchange_weak(used, used + n, std::memory_order_relaxed));
    return true;
  }

  std::atomic<uint64_t> limit_pages_{0};
  std::atomic<uint64_t> committed_{0};
  std::atomic<uint64_t> file_{0};
};

}  // namespace sentry
