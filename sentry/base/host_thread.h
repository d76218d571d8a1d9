// Starting host threads when the host may refuse them (a pids cgroup or RLIMIT_NPROC that a
// guest's fork or thread bomb has used up): a refusal is an answer, never an abort.
#pragma once

#include <functional>

namespace sentry {

// Runs `fn` on a new detached host thread. False if the host refuses the thread; `fn` is
// then destroyed without running.
bool StartHostThread(std::function<void()> fn);

}  // namespace sentry
