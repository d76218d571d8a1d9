// Guest pointers. A GuestAddr is an address in the guest's address space: it can be compared
// and offset, never dereferenced. Guest memory is reached only through AddressSpace
// ReadMemory/WriteMemory and the typed CopyIn/CopyOut helpers (sentry/mm/guest_memory.h).
#pragma once

#include <cstdint>

namespace sentry {

class GuestAddr {
 public:
  constexpr GuestAddr() = default;
  constexpr explicit GuestAddr(uint64_t v) : v_(v) {}
  constexpr uint64_t value() const { return v_; }
  constexpr bool IsNull() const { return v_ == 0; }
  constexpr GuestAddr operator+(uint64_t off) const { return GuestAddr(v_ + off); }
  constexpr GuestAddr operator-(uint64_t off) const { return GuestAddr(v_ - off); }
  constexpr auto operator<=>(const GuestAddr&) const = default;

 private:
  uint64_t v_ = 0;
};

// A typed guest pointer, for the helpers that copy whole structs in and out.
template <typename T>
class GuestPtr {
 public:
  constexpr GuestPtr() = default;
  constexpr explicit GuestPtr(GuestAddr a) : a_(a) {}
  constexpr explicit GuestPtr(uint64_t v) : a_(v) {}
  constexpr GuestAddr addr() const { return a_; }
  constexpr bool IsNull() const { return a_.IsNull(); }
  constexpr GuestPtr operator+(uint64_t n) const { return GuestPtr(a_ + n * sizeof(T)); }

 private:
  GuestAddr a_;
};

inline constexpr uint64_t kPageSize = 4096;
constexpr uint64_t PageRoundDown(uint64_t v) { return v & ~(kPageSize - 1); }
constexpr uint64_t PageRoundUp(uint64_t v) { return (v + kPageSize - 1) & ~(kPageSize - 1); }
constexpr bool PageAligned(uint64_t v) { return (v & (kPageSize - 1)) == 0; }

}  // namespace sentry
