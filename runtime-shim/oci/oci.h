// The `sentry` OCI runtime: runc-compatible subcommands over RunSandbox (runtime-shim/sandbox.h).
//
// Each container has a directory ROOT/ID holding state.json, a lock file and, between create
// and start, exec.fifo: the container's sandbox process is set up but blocked opening that
// FIFO, and `start` releases it by writing one byte, as runc does. The sandbox process is the
// container's init as far as the caller can see: its host PID goes to --pid-file and its exit
// status is the guest init's (re-raising the guest's fatal signal on itself).
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace sentry::oci {

// Flags given before the subcommand.
struct Globals {
  std::string root = "/run/sentry";
  std::string log;                  // --log FILE: where errors (and --debug lines) go
  std::string log_format = "text";  // text | json
  bool debug = false;
  bool systemd_cgroup = false;  // accepted; cgroupsPath's systemd form is read either way
  std::string platform = "seccomp";
  // --file-access: "direct" (the Sentry opens host files under fds the gofer donated) or
  // "gofer" (every file operation goes to the gofer), like runsc's --directfs.
  std::string file_access = "direct";
  bool strace = false;
  bool unsafe_no_confinement = false;  // debugging only: no allowlist, gofer fails open
};

// Writes `msg` to stderr and, with --log, to the log file in --log-format.
void LogError(const Globals& g, const std::string& msg);
// Opens --log once and keeps it open for the lines to come: the sandbox process does, since
// its allowlist (runtime-shim/confine.h) lets it open no file for writing.
void KeepLogOpen(const Globals& g);
// With --debug: writes `msg` to the log file (or stderr without --log).
void LogDebug(const Globals& g, const std::string& msg);

struct CreateFlags {
  std::string id;
  std::string bundle = ".";
  std::string pid_file;
  std::string console_socket;
  bool no_pivot = false;
  bool no_new_keyring = false;
  int preserve_fds = 0;
  bool detach = false;  // run only
  bool keep = false;    // run only: keep the state after the container exits
};

struct ExecFlags {
  std::string id;
  std::string process;            // --process FILE (a process.json); else the args below
  std::vector<std::string> args;  // the command, after the container id
  std::string console_socket;
  std::string pid_file;
  std::string cwd;
  std::string user;  // UID[:GID]
  std::vector<std::string> env;
  std::vector<std::string> additional_gids;
  std::vector<std::string> caps;  // accepted; the Sentry's guests keep their capability sets
  std::string process_label, apparmor;  // accepted, as runc without SELinux or AppArmor
  bool tty = false;
  bool detach = false;
  bool no_new_privs = false;
  bool ignore_paused = false;
  int preserve_fds = 0;
};

absl::Status Create(const Globals& g, const CreateFlags& f);
absl::Status Start(const Globals& g, const std::string& id);
// Creates, starts and (unless detached) waits; `exit_code` is the container's exit status.
absl::Status Run(const Globals& g, const CreateFlags& f, int* exit_code);
absl::Status State(const Globals& g, const std::string& id);
absl::Status List(const Globals& g, const std::string& format, bool quiet);
absl::Status Kill(const Globals& g, const std::string& id, const std::string& signal, bool all);
absl::Status Delete(const Globals& g, const std::string& id, bool force);
// Starts a process in a running container; without --detach, waits for it and sets
// `exit_code` to its exit status.
absl::Status Exec(const Globals& g, const ExecFlags& f, int* exit_code);
// Freezes every process of the container until `resume`.
absl::Status Pause(const Globals& g, const std::string& id);
absl::Status Resume(const Globals& g, const std::string& id);
// The host PIDs of the container's processes: the Sentry, the gofer and one stub per guest
// process (all descendants of the sandbox process).
absl::Status Ps(const Globals& g, const std::string& id, const std::string& format);
absl::Status Spec(const std::string& bundle);
absl::Status Features();
// Adds (or replaces) runtimes.RUNTIME in Docker's daemon.json, pointing at this binary.
absl::Status Install(const std::string& config, const std::string& runtime,
                     const std::vector<std::string>& runtime_args);

// Ends this process the way a guest process ended (wait status `status`): the same exit code,
// or death by the same signal (without a core file), so that whoever waits for this process
// sees what a runc container's process would show.
[[noreturn]] void ExitLikeGuest(int status);
// Makes a terminal, a host pty: its master goes over the Unix socket `socket_path` (as runc
// sends it: SCM_RIGHTS, with the pty's name as the data) to whoever shows it (containerd's
// shim, podman's conmon), sized `rows` x `cols` if both are given; returns the slave.
absl::StatusOr<int> SendConsole(const std::string& socket_path, int rows, int cols);
// Waits for the child `child`, passing on the signals a terminal or a supervisor sends us
// (HUP, INT, QUIT, TERM, USR1, USR2, WINCH); returns its status as a shell reports it.
int WaitForwardingSignals(pid_t child);
// Everything `fd` gives until end of file.
std::string ReadAll(int fd);
// The absolute directories of the PATH in `env` (KEY=VALUE strings), or the default PATH's,
// in order: where runc's exec looks for a program without a slash.
std::vector<std::string> SearchPath(const std::vector<std::string>& env);
// Writes `pid` to `path` atomically (a temporary file renamed into place).
absl::Status WritePidFile(const std::string& path, pid_t pid);

// The CLI: parses argv (global flags, then a subcommand) and returns the exit code.
int Main(int argc, char** argv);

}  // namespace sentry::oci
