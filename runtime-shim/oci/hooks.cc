#include "runtime-shim/oci/hooks.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "nlohmann/json.hpp"
#include "sentry/base/status.h"

namespace sentry::oci {
namespace {

std::vector<char*> CStrings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

std::string HookState(const ContainerState& st, const char* status) {
  return nlohmann::json{
      {"ociVersion", "1.0.2-dev"}, {"id", st.id},         {"pid", st.pid},
      {"status", status},          {"bundle", st.bundle}, {"annotations", st.annotations}}
      .dump();
}

void RunLaterHooks(const Globals& g, const ContainerState& st, const std::string& kind,
                   const char* status) {
  for (const auto& [k, hook] : st.later_hooks) {
    if (k != kind) continue;
    absl::Status s = RunHook(kind, hook, HookState(st, status));
    if (!s.ok()) LogError(g, "warning: " + std::string(s.message()));
  }
}

absl::Status RunHook(const std::string& kind, const Hook& hook, const std::string& state_json) {
  std::string what = kind + " hook " + hook.path;
  std::vector<std::string> args =
      hook.args.empty() ? std::vector<std::string>{hook.path} : hook.args;
  std::vector<std::string> env = hook.env;
  std::vector<char*> argv = CStrings(args), envp = CStrings(env);
  int in[2];
  if (pipe2(in, O_CLOEXEC) != 0) return ErrnoStatus(what + ": pipe");
  pid_t pid = fork();
  if (pid < 0) return ErrnoStatus(what + ": fork");
  if (pid == 0) {
    dup2(in[0], 0);
    execve(hook.path.c_str(), argv.data(), envp.data());
    _exit(127);
  }
  close(in[0]);
  // The state is small: it fits in the pipe whether or not the hook reads it. A hook that
  // has already exited without reading it (/bin/false) closed the read end: the write then
  // fails with EPIPE, which must not kill the runtime with SIGPIPE (CI saw `start` end
  // with status 141 that way). The hook's own status decides.
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &old);
  (void)!write(in[1], state_json.data(), state_json.size());
  sigaction(SIGPIPE, &old, nullptr);
  close(in[1]);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(hook.timeout);
  int status = 0;
  for (;;) {
    pid_t r = waitpid(pid, &status, hook.timeout > 0 ? WNOHANG : 0);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) return ErrnoStatus(what + ": wait");
    if (hook.timeout > 0 && std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
      return absl::DeadlineExceededError(what + ": timed out after " +
                                         std::to_string(hook.timeout) + " s");
    }
    if (r == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return absl::OkStatus();
  return absl::InternalError(what + ": " +
                             (WIFEXITED(status)
                                  ? "exit status " + std::to_string(WEXITSTATUS(status))
                                  : "killed by signal " + std::to_string(WTERMSIG(status))));
}

std::vector<std::string> ExtraInterfaces(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/net/dev");
  std::string line;
  std::vector<std::string> out;
  for (int n = 0; std::getline(in, line); n++) {
    size_t colon = line.find(':');
    if (n < 2 || colon == std::string::npos) continue;  // two header lines
    std::string name = line.substr(0, colon);
    name.erase(0, name.find_first_not_of(' '));
    if (name != "lo") out.push_back(name);
  }
  return out;
}

}  // namespace sentry::oci
