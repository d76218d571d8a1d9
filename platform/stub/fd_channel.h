// Lending Sentry fds to stubs that have no seccomp listener to receive them (the ptrace
// platform), so that a gofer-donated host fd can be mmapped into the guest address space
// itself instead of being copied.
//
// A channel is a Unix datagram socketpair. Its stub end sits at kStubChannelFd in the stub
// spawned with it and, since the host copies fd tables on clone and fork, in every thread stub
// and forked stub descended from that one. To lend an fd, the Sentry sends it with SCM_RIGHTS
// on its own end and injects recvmsg() into the one stub that is to receive it. Guest code
// running in any of these stubs cannot receive it instead: every guest syscall is trapped.
//
// Lock order: FdChannel::mu_ is taken under MemoryManager::mu_ (of any of the address spaces
// that share the channel) and is a leaf except for the injected recvmsg, which only blocks on
// the calling thread's own stub (and never for long: it does not wait for data).
//
// This directory is one of the few places with raw ptrace and process_vm_* calls.
#pragma once

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "platform/platform.h"

namespace sentry::platform {

class StubInjector;

// Where a stub holds the stub end of its channel. It is the stub's only fd while the stub is
// at rest, so a lent fd is the stub's fd 1 until the Sentry closes it again.
inline constexpr int kStubChannelFd = 0;

class FdChannel {
 public:
  static absl::StatusOr<std::shared_ptr<FdChannel>> Create();
  ~FdChannel();
  FdChannel(const FdChannel&) = delete;
  FdChannel& operator=(const FdChannel&) = delete;

  // The end that SpawnStub installs at kStubChannelFd in a new stub.
  int stub_end() const { return stub_end_; }

  // Installs a copy of the Sentry's `host_fd` in the fd table of the stopped stub that `via`
  // injects into, which must hold this channel at kStubChannelFd and whose memory `mem` is.
  // Returns the fd number in the stub; the caller closes it with an injected close() as soon
  // as it has used it. EOPNOTSUPP when the transfer did not work out (the caller then copies);
  // ESRCH when the stub died.
  Result<int> Lend(StubInjector& via, AddressSpace& mem, int host_fd);

 private:
  FdChannel(int sentry_end, int stub_end) : sentry_end_(sentry_end), stub_end_(stub_end) {}
  // Receives and closes whatever is queued for the stubs: a transfer that failed halfway
  // must not leave its fd for the next recvmsg to find.
  void Drain() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int sentry_end_;
  // The Sentry keeps a copy of the stub end only to Drain it.
  const int stub_end_;
  // One transfer at a time: every stub holding the stub end reads the same queue.
  absl::Mutex mu_;
  uint64_t next_seq_ ABSL_GUARDED_BY(mu_) = 1;  // tags each transfer, to spot a stale one
};

}  // namespace sentry::platform
