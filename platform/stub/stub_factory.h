// The stub factory: the one stub the Sentry starts itself; every later stub is a fork of it.
//
// A process inherits its parent's seccomp filters, and a filter cannot be removed. Once the
// Sentry runs under its own allowlist (runtime-shim/confine.h), a stub it started itself
// would carry that allowlist too, and under the seccomp platform the allowlist's KILL would
// win over the guest filter's USER_NOTIF for every call outside it. So the factory is started
// with the platform, before the allowlist, and new stubs are cloned from it (as gVisor does
// with its first stub): they hold only what the factory holds, i.e. no filter, no capability,
// NO_NEW_PRIVS, an empty environment and their fd channel alone.
//
// The factory is traced by a thread of its own (a tracee is tied to its tracer thread); the
// task threads that ask for a stub wait for that thread.
//
// This directory is one of the few places with raw ptrace and process_vm_* calls.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace sentry::platform {

// Starts the thread that drives the factory; that thread starts the factory from the
// sentry-stub executable `stub_fd` while the caller goes on (start-up overlaps it with
// building the file system), and learns the stubs' host layout from it
// (StubAddressSpace::LearnLayout, which reads /proc), so no later stub needs /proc.
// Idempotent. An error here is only the thread's; the factory's own comes from
// AwaitStubFactory.
absl::Status StartStubFactory(int stub_fd);

// Waits until the factory's start has settled; its error if it failed. Call before the
// Sentry's allowlist (which the factory must not inherit) and before the host's /proc is
// closed.
absl::Status AwaitStubFactory();

// Whether the factory runs (waiting for its start to settle): SpawnStub then forks it.
bool StubFactoryRunning();

// A fresh stub forked from the factory, holding a copy of `channel_fd` at kStubChannelFd
// (or no fd if it is -1); seized by the calling thread and stopped.
absl::StatusOr<int> ForkStubFromFactory(int channel_fd);

}  // namespace sentry::platform
