// Errno and Result<T>: how every syscall path reports failure.
//
// An Errno carries the Linux error number and the place it was made, so that `--strace` and
// debug logs can say which check refused a syscall. Only the syscall dispatcher turns an Errno
// into a negative return value for the guest.
#pragma once

#include <cerrno>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <variant>

namespace sentry {

// Kernel-internal restart codes (include/linux/errno.h). They never reach the guest: the
// signal delivery code turns them into EINTR or a restarted syscall.
inline constexpr int kERESTARTSYS = 512;
inline constexpr int kERESTARTNOINTR = 513;
inline constexpr int kERESTARTNOHAND = 514;
inline constexpr int kERESTART_RESTARTBLOCK = 516;

class Errno {
 public:
  // Implicit from an int so that `return Errno(EINVAL);` and `return EINVAL` both read well.
  constexpr Errno(int code, const char* file = __builtin_FILE(),  // NOLINT
                  int line = __builtin_LINE())
      : code_(code), file_(file), line_(line) {}

  constexpr int code() const { return code_; }
  constexpr const char* file() const { return file_; }
  constexpr int line() const { return line_; }
  bool operator==(const Errno& o) const { return code_ == o.code_; }
  bool operator==(int code) const { return code_ == code; }

 private:
  int code_;
  const char* file_;
  int line_;
};

// Name of a Linux errno ("ENOENT"), or nullptr for an unknown number.
const char* ErrnoName(int code);

// A value or an Errno.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT
  Result(Errno e) : v_(e) {}                 // NOLINT
  template <typename U, typename = std::enable_if_t<std::is_convertible_v<U, T> &&
                                                    !std::is_same_v<std::decay_t<U>, T> &&
                                                    !std::is_same_v<std::decay_t<U>, Errno>>>
  Result(U&& value) : v_(T(std::forward<U>(value))) {}  // NOLINT

  // Converts between value types (Result<int> -> Result<uint64_t>), keeping an error.
  template <typename U, typename = std::enable_if_t<std::is_convertible_v<U, T> &&
                                                    !std::is_same_v<U, T>>>
  Result(Result<U>&& o)  // NOLINT
      : v_(o.ok() ? std::variant<T, Errno>(T(std::move(o).value()))
                  : std::variant<T, Errno>(o.error())) {}

  bool ok() const { return v_.index() == 0; }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const Errno& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Errno> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() : e_(0) {}
  Result(Errno e) : e_(e) {}  // NOLINT
  bool ok() const { return e_.code() == 0; }
  void value() const {}
  const Errno& error() const { return e_; }

 private:
  Errno e_;
};

inline Result<void> Ok() { return Result<void>(); }

}  // namespace sentry

// Propagates an error from a Result-returning expression; otherwise yields its value.
#define SENTRY_TRY(expr)                                \
  ({                                                    \
    auto sentry_try_result_ = (expr);                   \
    if (!sentry_try_result_.ok()) {                     \
      return sentry_try_result_.error();                \
    }                                                   \
    std::move(sentry_try_result_).value();              \
  })
