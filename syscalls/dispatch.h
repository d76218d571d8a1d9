#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "sentry/kernel/kernel.h"

namespace sentry::syscalls {

// Runs the syscall in t.regs(); returns the value for rax (negative errno on failure,
// restart codes included: signal delivery resolves those).
int64_t Dispatch(kernel::Task& t);

// Counts of the guest's syscalls by number, for `sentry-run --stats` (bench/run.py's floor
// column: calls x the cost of one trip). Off by default, when counting costs one relaxed load
// per call. Numbers past 511 (no x86-64 syscall) are counted together as 512.
void StartSyscallCounts();
// Every non-zero count since StartSyscallCounts, by syscall number.
std::vector<std::pair<uint64_t, uint64_t>> SyscallCounts();

}  // namespace sentry::syscalls
