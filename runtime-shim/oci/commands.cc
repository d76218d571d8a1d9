// state, list, kill and delete: the commands that act on an existing container's state.
#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <vector>

#include "nlohmann/json.hpp"
#include "runtime-shim/cgroup.h"
#include "runtime-shim/oci/container.h"
#include "runtime-shim/oci/control.h"
#include "runtime-shim/oci/hooks.h"
#include "runtime-shim/oci/oci.h"
#include "sentry/base/status.h"

namespace sentry::oci {
namespace {

nlohmann::json StateJson(Container& c) {
  const ContainerState& st = c.state();
  Status s = c.CurrentStatus();
  return {{"ociVersion", "1.0.2-dev"},
          {"id", st.id},
          {"pid", s == Status::kStopped ? 0 : st.pid},
          {"status", StatusName(s)},
          {"bundle", st.bundle},
          {"rootfs", st.rootfs},
          {"created", st.created},
          {"owner", ""},
          {"annotations", st.annotations}};
}

struct SignalName {
  const char* name;
  int number;
};
constexpr SignalName kSignals[] = {
    {"HUP", SIGHUP},       {"INT", SIGINT},   {"QUIT", SIGQUIT},     {"ILL", SIGILL},
    {"TRAP", SIGTRAP},     {"ABRT", SIGABRT}, {"IOT", SIGIOT},       {"BUS", SIGBUS},
    {"FPE", SIGFPE},       {"KILL", SIGKILL}, {"USR1", SIGUSR1},     {"SEGV", SIGSEGV},
    {"USR2", SIGUSR2},     {"PIPE", SIGPIPE}, {"ALRM", SIGALRM},     {"TERM", SIGTERM},
    {"STKFLT", SIGSTKFLT}, {"CHLD", SIGCHLD}, {"CONT", SIGCONT},     {"STOP", SIGSTOP},
    {"TSTP", SIGTSTP},     {"TTIN", SIGTTIN}, {"TTOU", SIGTTOU},     {"URG", SIGURG},
    {"XCPU", SIGXCPU},     {"XFSZ", SIGXFSZ}, {"VTALRM", SIGVTALRM}, {"PROF", SIGPROF},
    {"WINCH", SIGWINCH},   {"IO", SIGIO},     {"PWR", SIGPWR},       {"SYS", SIGSYS},
};

// "9", "KILL", "SIGKILL", "sigkill".
absl::StatusOr<int> ParseSignal(std::string s) {
  if (!s.empty() && std::all_of(s.begin(), s.end(), ::isdigit)) {
    int n = s.size() <= 3 ? std::stoi(s) : 0;
    if (n <= 0 || n >= NSIG) return absl::InvalidArgumentError("invalid signal \"" + s + "\"");
    return n;
  }
  std::string upper = s;
  for (char& ch : upper) ch = static_cast<char>(toupper(static_cast<unsigned char>(ch)));
  if (upper.rfind("SIG", 0) == 0) upper = upper.substr(3);
  for (const auto& sig : kSignals) {
    if (upper == sig.name) return sig.number;
  }
  return absl::InvalidArgumentError("unknown signal \"" + s + "\"");
}

// Waits (up to 10 s) until the sandbox process has exited; it is not our child: whoever
// started it reaps it.
bool AwaitExit(const ContainerState& st) {
  for (int i = 0; i < 1000; i++) {
    if (!ProcessAlive(st.pid, st.pid_start)) return true;
    usleep(10000);
  }
  return false;
}

// The live host processes of a sandbox: the sandbox process (the Sentry), the gofer and the
// stubs that run guest code, all its descendants.
std::vector<pid_t> SandboxProcesses(pid_t root) {
  std::map<pid_t, std::vector<pid_t>> children;
  if (DIR* d = opendir("/proc")) {
    while (struct dirent* e = readdir(d)) {
      pid_t pid = atoi(e->d_name);
      if (pid <= 0) continue;
      std::ifstream in(std::string("/proc/") + e->d_name + "/stat");
      std::string line;
      if (!std::getline(in, line) || line.rfind(')') == std::string::npos) continue;
      char state = 0;
      pid_t ppid = 0;
      if (sscanf(line.c_str() + line.rfind(')') + 1, " %c %d", &state, &ppid) != 2) continue;
      if (state != 'Z' && state != 'X') children[ppid].push_back(pid);
    }
    closedir(d);
  }
  std::vector<pid_t> out = {root};
  for (size_t i = 0; i < out.size(); i++) {
    for (pid_t c : children[out[i]]) out.push_back(c);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string Cmdline(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!s.empty() && s.back() == '\0') s.pop_back();
  std::replace(s.begin(), s.end(), '\0', ' ');
  return s;
}

}  // namespace

absl::Status Ps(const Globals& g, const std::string& id, const std::string& format) {
  if (format != "table" && format != "json") {
    return absl::InvalidArgumentError("ps --format: expected table or json, got \"" + format +
                                      "\"");
  }
  SENTRY_ASSIGN_OR_RETURN(Container c, Container::Open(g.root, id));
  if (c.CurrentStatus() == Status::kStopped) {
    return absl::FailedPreconditionError("container " + id + " is not running");
  }
  std::vector<pid_t> pids = SandboxProcesses(c.state().pid);
  if (format == "json") {
    printf("%s\n", nlohmann::json(pids).dump().c_str());
    return absl::OkStatus();
  }
  printf("%-8s %s\n", "PID", "CMD");
  for (pid_t p : pids) printf("%-8d %s\n", p, Cmdline(p).c_str());
  return absl::OkStatus();
}

absl::Status State(const Globals& g, const std::string& id) {
  SENTRY_ASSIGN_OR_RETURN(Container c, Container::Open(g.root, id));
  printf("%s\n", StateJson(c).dump(2).c_str());
  return absl::OkStatus();
}

absl::Status List(const Globals& g, const std::string& format, bool quiet) {
  if (format != "table" && format != "json") {
    return absl::InvalidArgumentError("list --format: expected table or json, got \"" + format +
                                      "\"");
  }
  std::vector<std::string> ids;
  if (DIR* d = opendir(g.root.c_str())) {
    while (struct dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') ids.push_back(e->d_name);
    }
    closedir(d);
  }
  std::sort(ids.begin(), ids.end());
  nlohmann::json all = nlohmann::json::array();
  for (const auto& id : ids) {
    auto c = Container::Open(g.root, id);
    if (c.ok()) all.push_back(StateJson(*c));
  }
  if (quiet) {
    for (const auto& s : all) printf("%s\n", s["id"].get<std::string>().c_str());
  } else if (format == "json") {
    printf("%s\n", all.dump().c_str());
  } else {
    printf("%-20s %-8s %-10s %-40s %-31s %s\n", "ID", "PID", "STATUS", "BUNDLE", "CREATED",
           "OWNER");
    for (const auto& s : all) {
      printf("%-20s %-8d %-10s %-40s %-31s %s\n", s["id"].get<std::string>().c_str(),
             s["pid"].get<int>(), s["status"].get<std::string>().c_str(),
             s["bundle"].get<std::string>().c_str(), s["created"].get<std::string>().c_str(),
             "root");
    }
  }
  return absl::OkStatus();
}

absl::Status Kill(const Globals& g, const std::string& id, const std::string& signal, bool all) {
  SENTRY_ASSIGN_OR_RETURN(int sig, ParseSignal(signal));
  SENTRY_ASSIGN_OR_RETURN(Container c, Container::Open(g.root, id));
  if (c.CurrentStatus() == Status::kStopped) {
    return absl::FailedPreconditionError("container " + id + " is not running");
  }
  // Every guest process lives in the one sandbox process: it passes catchable signals to the
  // guest init, and SIGKILL (or --all with SIGKILL) ends the whole sandbox at once. --all
  // with another signal goes to every guest process through the Sentry's control socket,
  // once the guest runs (before, the sandbox process is all there is).
  LogDebug(g, "kill " + id + ": signal " + std::to_string(sig) + (all ? " (--all)" : ""));
  Status s = c.CurrentStatus();
  if (all && sig != SIGKILL && (s == Status::kRunning || s == Status::kPaused)) {
    return ControlRequest(c.dir(), {{"op", "kill"}, {"signal", sig}}).status();
  }
  if (kill(c.state().pid, sig) != 0) return ErrnoStatus("kill " + id);
  return absl::OkStatus();
}

absl::Status Delete(const Globals& g, const std::string& id, bool force) {
  auto c = Container::Open(g.root, id);
  if (!c.ok()) {
    if (!force || !absl::IsNotFound(c.status())) return c.status();
    // Gone, or half-made by a create that was killed: --force must succeed either way.
    std::error_code ec;
    if (CheckId(id).ok()) std::filesystem::remove_all(g.root + "/" + id, ec);
    return absl::OkStatus();
  }
  Status s = c->CurrentStatus();
  if ((s == Status::kRunning || s == Status::kPaused) && !force) {
    return absl::FailedPreconditionError("cannot delete container " + id + " that is " +
                                         StatusName(s) + ": stop it first or use --force");
  }
  if (s != Status::kStopped) {
    kill(c->state().pid, SIGKILL);
    if (!AwaitExit(c->state())) {
      return absl::DeadlineExceededError("container " + id + ": the sandbox process (pid " +
                                         std::to_string(c->state().pid) +
                                         ") did not exit after SIGKILL");
    }
  }
  RunLaterHooks(g, c->state(), "poststop", "stopped");
  // Anything left in the container's cgroup goes with it, and the group too (as runc's
  // delete does).
  if (!c->state().cgroup_dirs.empty()) {
    shim::Cgroup::Open(c->state().cgroup_v2, c->state().cgroup_dirs)->Destroy();
  }
  return c->Remove();
}

}  // namespace sentry::oci
