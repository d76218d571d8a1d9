// The syscall table: one entry per x86_64 syscall number, sorted by number. It is the single
// source of truth for dispatch, support levels, notes and the --strace argument formats.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <tuple>
#include <type_traits>
#include <utility>

#include "sentry/base/errno.h"
#include "sentry/base/guest_addr.h"
#include "sentry/kernel/kernel.h"

namespace sentry::syscalls {

struct SyscallArgs {
  uint64_t a[6];
};

enum class Support : uint8_t { kFull, kPartial, kUnimplemented };

// How --strace prints an argument.
// kSockAddr: a struct sockaddr whose length is the next argument.
enum class Arg : uint8_t { kNone, kInt, kUint, kHex, kFd, kStr, kPtr, kOct, kSig, kSockAddr };

using Handler = Result<uint64_t> (*)(kernel::Task&, const SyscallArgs&);

struct SyscallEntry {
  int nr;
  const char* name;
  Support support;
  Handler handler;  // nullptr when unimplemented
  const char* note;
  std::array<Arg, 6> args;
};

// The entry for `nr`, or nullptr for a number with no syscall.
const SyscallEntry* Lookup(uint64_t nr);
std::span<const SyscallEntry> AllSyscalls();

// Adapts a typed handler `Result<uint64_t> F(Task&, int, GuestAddr, size_t…)` to the table.
template <typename T>
T ArgAs(uint64_t v) {
  if constexpr (std::is_same_v<T, GuestAddr>) {
    return GuestAddr(v);
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(v);
  } else {
    return T(v);  // GuestPtr<U>
  }
}

template <auto F>
struct Wrap;

template <typename... A, Result<uint64_t> (*F)(kernel::Task&, A...)>
struct Wrap<F> {
  static Result<uint64_t> Call(kernel::Task& t, const SyscallArgs& a) {
    return Invoke(t, a, std::index_sequence_for<A...>{});
  }
  template <size_t... I>
  static Result<uint64_t> Invoke(kernel::Task& t, const SyscallArgs& a,
                                 std::index_sequence<I...>) {
    return F(t, ArgAs<std::remove_cvref_t<A>>(a.a[I])...);
  }
};

}  // namespace sentry::syscalls
