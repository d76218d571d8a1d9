#pragma once

#include "sentry/kernel/kernel.h"

namespace sentry::syscalls {

// Runs the syscall in t.regs(); returns the value for rax (negative errno on failure,
// restart codes included: signal delivery resolves those).
int64_t Dispatch(kernel::Task& t);

}  // namespace sentry::syscalls
