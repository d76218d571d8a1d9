// syscall_fuzz -c: threads, signals, fd passing and mmap churn beside the fuzz loop.
#ifndef SENTRY_TESTS_GUEST_SYSCALL_FUZZ_CHURN_H_
#define SENTRY_TESTS_GUEST_SYSCALL_FUZZ_CHURN_H_

#include <stddef.h>
#include <stdint.h>

// Starts the churn threads and the fd-passing helper process; failures of its own checks go to
// saved_stdout. Call once, before the fuzz loop, while the process has one thread. 0 on success.
int ChurnStart(uint64_t seed, int saved_stdout);
// Stops and joins everything, and writes a one-line account to summary.
void ChurnStop(char* summary, size_t size);

#endif  // SENTRY_TESTS_GUEST_SYSCALL_FUZZ_CHURN_H_
