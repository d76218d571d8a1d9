// Starting host threads when the host may refuse them (a pids cgroup or RLIMIT_NPROC that a
// guest's fork or thread bomb has used up): a refusal is an answer, never an abort.
#pragma once

#include <functional>

namespace sentry {

// Unregisters the calling thread's rseq area from the host kernel (StartHostThread's
// threads do it first); glibc's own uses of it fall back.
void DropOwnRseq();

// Runs `fn` on a new detached host thread, its rseq area unregistered. False if the host
// refuses the thread; `fn` is then destroyed without running.
bool StartHostThread(std::function<void()> fn);

}  // namespace sentry
