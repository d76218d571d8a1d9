#include "platform/stub/stub_factory.h"

#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>

#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "platform/stub/cpu_placement.h"
#include "platform/stub/fd_channel.h"
#include "platform/stub/stub_control.h"
#include "sentry/base/status.h"

namespace sentry::platform {
namespace {

// Injects into a stub the calling thread traces.
class DirectInjector final : public StubInjector {
 public:
  explicit DirectInjector(int tid) : tid_(tid) {}
  Result<int64_t> StubSyscall(uint64_t nr, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3,
                              uint64_t a4, uint64_t a5, uint64_t entry) override {
    bool interrupted = false;
    return InjectSyscall(tid_, {nr, a0, a1, a2, a3, a4, a5}, entry, &interrupted);
  }

 private:
  const int tid_;
};

// What the factory thread hands back: the new stub, which holds its channel (if any) at
// kStubChannelFd already.
struct Forked {
  int pid = -1;
};

class Factory {
 public:
  // Runs on the factory thread: spawns the factory stub, which this thread then traces.
  absl::Status Init(int stub_fd) {
    SENTRY_ASSIGN_OR_RETURN(channel_, FdChannel::Create());
    SENTRY_ASSIGN_OR_RETURN(pid_, SpawnStub(stub_fd, channel_->stub_end()));
    mem_.emplace(pid_);
    auto layout = mem_->LearnLayout(pid_);
    if (!layout.ok()) return layout.status();
    return absl::OkStatus();
  }

  // The factory thread's loop: serves one request at a time.
  void Loop() {
    DirectInjector inj(pid_);
    absl::MutexLock l(&mu_);
    for (;;) {
      mu_.Await(absl::Condition(this, &Factory::HasWork));
      // The factory stub, this thread and the asking thread take turns: all on the asker's
      // core (cpu_placement.h), which is where the new stub will run too.
      if (request_->cpu != cpu_ && CpuPlacement::PinUncounted(request_->cpu, {pid_})) {
        cpu_ = request_->cpu;
      }
      request_->result = Fork(inj, request_->channel_fd);
      request_->done = true;
    }
  }

  absl::StatusOr<Forked> Request(int channel_fd) {
    Req req{channel_fd, sched_getcpu()};
    absl::MutexLock l(&mu_);
    mu_.Await(absl::Condition(this, &Factory::Idle));
    request_ = &req;
    mu_.Await(absl::Condition(&req.done));
    request_ = nullptr;
    return req.result;
  }

 private:
  struct Req {
    int channel_fd;
    int cpu;  // the asking thread's
    bool done = false;
    absl::StatusOr<Forked> result = absl::UnknownError("not served");
  };
  bool HasWork() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return request_ != nullptr && !request_->done;
  }
  bool Idle() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return request_ == nullptr; }

  // Lends `channel_fd` to the factory and forks it at kStubFork (stub.S): the child moves
  // the lent fd to its kStubChannelFd (or closes that fd if there is none) before it stops,
  // and the factory closes its copy, all in the one injection.
  absl::StatusOr<Forked> Fork(StubInjector& inj, int channel_fd) {
    for (int attempt = 0;; attempt++) {
      int lent_fd = -1;
      if (channel_fd >= 0) {
        Result<int> lent = channel_->Lend(inj, *mem_, channel_fd);
        if (!lent.ok()) return absl::InternalError("cannot lend a channel to the stub factory");
        lent_fd = *lent;
      }
      Result<int64_t> r = inj.StubSyscall(SYS_clone, SIGCHLD, 0, 0, 0, 0,
                                          static_cast<uint64_t>(static_cast<int64_t>(lent_fd)),
                                          Layout::kStubFork);
      if (!r.ok()) return ErrnoStatus("clone (stub factory)", r.error().code());
      if (*r >= 0) return Forked{static_cast<int>(*r)};
      // A host EAGAIN may be stubs not yet reaped: wait for them once, as CloneStub.
      if (*r != -EAGAIN || attempt > 0 || !AwaitReaped()) {
        return ErrnoStatus("clone (stub factory)", static_cast<int>(-*r));
      }
    }
  }

  std::shared_ptr<FdChannel> channel_;  // the factory's own, at its kStubChannelFd
  int pid_ = -1;
  std::optional<StubAddressSpace> mem_;  // the factory's memory, for Lend's scratch page
  int cpu_ = -1;                         // where the factory stub and thread are pinned

  absl::Mutex mu_;
  Req* request_ ABSL_GUARDED_BY(mu_) = nullptr;  // the one being served or waiting
};

// The factory's start, which runs in the background (StartStubFactory).
enum class State { kNone, kStarting, kRunning, kFailed };
absl::Mutex g_factory_mu;
State g_state ABSL_GUARDED_BY(g_factory_mu) = State::kNone;
absl::Status g_failure ABSL_GUARDED_BY(g_factory_mu);
Factory* g_factory ABSL_GUARDED_BY(g_factory_mu) = nullptr;
thread_local bool t_on_factory_thread = false;

bool Settled(State* s) { return *s != State::kStarting; }

// The factory once its start has settled (waiting for it if need be), or null. The factory
// thread itself does not wait: its own SpawnStub starts the factory stub directly.
Factory* TheFactory() {
  absl::MutexLock l(&g_factory_mu);
  if (t_on_factory_thread) return nullptr;
  g_factory_mu.Await(absl::Condition(&Settled, &g_state));
  return g_factory;
}

}  // namespace

absl::Status StartStubFactory(int stub_fd) {
  absl::MutexLock l(&g_factory_mu);
  if (g_state != State::kNone) return absl::OkStatus();
  auto* factory = new Factory;  // lives as long as the Sentry, like its thread
  g_state = State::kStarting;
  try {
    std::thread([factory, stub_fd] {
      t_on_factory_thread = true;
      absl::Status st = factory->Init(stub_fd);
      {
        absl::MutexLock fl(&g_factory_mu);
        if (st.ok()) {
          g_factory = factory;
          g_state = State::kRunning;
        } else {
          g_failure = absl::Status(st.code(), "stub factory: " + std::string(st.message()));
          g_state = State::kFailed;
        }
      }
      t_on_factory_thread = false;
      if (st.ok()) factory->Loop();
      // Else the thread returns; the factory is not used again.
    }).detach();
  } catch (const std::system_error&) {
    delete factory;
    g_state = State::kFailed;
    g_failure = absl::ResourceExhaustedError("cannot start the stub factory thread");
    return g_failure;
  }
  return absl::OkStatus();
}

absl::Status AwaitStubFactory() {
  absl::MutexLock l(&g_factory_mu);
  g_factory_mu.Await(absl::Condition(&Settled, &g_state));
  return g_state == State::kFailed ? g_failure : absl::OkStatus();
}

bool StubFactoryRunning() { return TheFactory() != nullptr; }

absl::StatusOr<int> ForkStubFromFactory(int channel_fd) {
  Factory* factory = TheFactory();
  if (factory == nullptr) return absl::FailedPreconditionError("no stub factory");
  SENTRY_ASSIGN_OR_RETURN(Forked f, factory->Request(channel_fd));
  auto fail = [&](absl::Status st) {
    KillAndReapLater(f.pid);
    return st;
  };
  absl::Status seized = SeizeStopped(f.pid);
  if (!seized.ok()) return fail(seized);
  // The stub on the calling thread's core right away (cpu_placement.h): the injections that
  // build the new address space and load the program come before the context's first
  // switch places the group, and a stub left where the factory's affinity put it costs two
  // cross-core wake-ups per injection. Where the calling thread is, not a new choice: the
  // thread's group still counts there until the context's first switch chooses, and a
  // choice made now would move every execve away from its own old address space.
  (void)CpuPlacement::PinUncounted(sched_getcpu(), {f.pid});
  return f.pid;
}

}  // namespace sentry::platform
