// Status helpers for host-facing set-up code (CLI, platform start-up). Debian's Abseil has no
// status macros, so they are defined once here.
#pragma once

#include <cerrno>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace sentry {

// An absl::Status for the current errno, prefixed with what failed ("ptrace(SEIZE)").
inline absl::Status ErrnoStatus(const std::string& what, int err = errno) {
  return absl::ErrnoToStatus(err, what);
}

}  // namespace sentry

#define SENTRY_RETURN_IF_ERROR(expr)      \
  do {                                    \
    absl::Status sentry_status_ = (expr); \
    if (!sentry_status_.ok()) {           \
      return sentry_status_;              \
    }                                     \
  } while (0)

#define SENTRY_CONCAT_INNER_(a, b) a##b
#define SENTRY_CONCAT_(a, b) SENTRY_CONCAT_INNER_(a, b)
#define SENTRY_ASSIGN_OR_RETURN(lhs, expr) \
  SENTRY_ASSIGN_OR_RETURN_IMPL_(SENTRY_CONCAT_(sentry_statusor_, __LINE__), lhs, expr)
#define SENTRY_ASSIGN_OR_RETURN_IMPL_(var, lhs, expr) \
  auto var = (expr);                                  \
  if (!var.ok()) {                                    \
    return var.status();                              \
  }                                                   \
  lhs = std::move(var).value()
