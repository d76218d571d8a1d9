// The runc-compatible command line: global flags, then one subcommand.
#include "CLI/CLI.hpp"

#include <cstdio>
#include <cstring>

#include "runtime-shim/oci/oci.h"
#include "runtime-shim/oci/resources.h"
#include "runtime-shim/supervisor.h"

namespace sentry::oci {
namespace {

constexpr const char* kVersion = "0.1.0";
constexpr const char* kSpecVersion = "1.0.2-dev";

// --log and --log-format as given, before CLI11 has parsed anything, so that an error in the
// command line itself is logged where the caller looks for it.
Globals PrescanGlobals(int argc, char** argv) {
  Globals g;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto take = [&](const char* flag, std::string* out) {
      std::string f = flag;
      if (a.rfind(f + "=", 0) == 0) *out = a.substr(f.size() + 1);
      if (a == f && i + 1 < argc) *out = argv[i + 1];
    };
    take("--log", &g.log);
    take("--log-format", &g.log_format);
  }
  return g;
}

// The index of the first word that is not a global flag or its value: the command the caller
// meant (argc if there is none).
int CommandIndex(int argc, char** argv) {
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a.empty() || a[0] != '-') return i;
    bool takes_value = a == "--root" || a == "--log" || a == "--log-format" || a == "--platform" ||
                       a == "--file-access";
    if (takes_value) i++;
  }
  return argc;
}

// CLI11's messages, made into one line naming the problem.
std::string OneLine(const CLI::ParseError& e, const CLI::App& app, int argc, char** argv) {
  std::string msg = e.what();
  int command = CommandIndex(argc, argv);
  std::string word = command < argc ? argv[command] : "";
  auto known = app.get_subcommands([&](const CLI::App* c) { return c->get_name() == word; });
  if (app.get_subcommands().empty() && !word.empty() && known.empty()) {
    return "unknown command \"" + word + "\" (see sentry --help)";
  }
  if (e.get_name() == "RequiredError" && app.get_subcommands().empty()) {
    return "a command is required (see sentry --help)";
  }
  if (msg.rfind("The following argument", 0) == 0) {
    std::string first = msg.substr(msg.find(':') + 1);
    first.erase(0, first.find_first_not_of(' '));
    first = first.substr(0, first.find(' '));
    // Named after the command only if it came after it (before it, it was a global flag).
    bool after = false;
    for (int i = command + 1; i < argc; i++) after = after || first == argv[i];
    std::string where = after ? " for " + word : "";
    if (!first.empty() && first[0] == '-') return "unknown flag " + first + where;
    return "unexpected argument \"" + first + "\"" + where;
  }
  for (char& c : msg) {
    if (c == '\n') c = ' ';
  }
  return msg;
}

}  // namespace

int Main(int argc, char** argv) {
  Globals g;
  CLI::App app("sentry: an OCI runtime that runs containers in a userspace Linux kernel");
  app.set_version_flag("-v,--version",
                       std::string("sentry version ") + kVersion + "\nspec: " + kSpecVersion);
  app.require_subcommand(1);
  app.add_option("--root", g.root, "directory of the containers' state")->capture_default_str();
  app.add_option("--log", g.log, "file that errors are written to");
  app.add_option("--log-format", g.log_format, "text or json")
      ->check(CLI::IsMember({"text", "json"}));
  app.add_flag("--debug", g.debug, "log debug lines (to --log)");
  app.add_flag("--systemd-cgroup", g.systemd_cgroup,
               "accepted: cgroupsPath's SLICE:PREFIX:NAME form is read either way");
  app.add_option("--platform", g.platform, "seccomp or ptrace")->capture_default_str();
  app.add_option("--file-access", g.file_access,
                 "direct (the Sentry opens host files under fds the gofer gave it) or gofer "
                 "(every file operation goes to the gofer)")
      ->check(CLI::IsMember({"direct", "gofer"}))
      ->capture_default_str();
  app.add_flag("--strace", g.strace, "log every guest syscall");
  app.add_flag("--unsafe-no-confinement", g.unsafe_no_confinement,
               "debugging only: no seccomp allowlist for the Sentry; the gofer serves even "
               "if a confinement step fails");

  absl::Status result;
  int exit_code = 0;
  std::string id, signal = "SIGTERM", format = "table", bundle = ".";
  bool all = false, force = false, quiet = false;
  CreateFlags cf;

  auto add_create_flags = [&](CLI::App* c) {
    c->add_option("-b,--bundle", cf.bundle, "bundle directory (with config.json)");
    c->add_option("--pid-file", cf.pid_file, "file to write the container's host PID to");
    c->add_option("--console-socket", cf.console_socket,
                  "socket that receives the master of the container's terminal (process.terminal)");
    c->add_flag("--no-pivot", cf.no_pivot, "accepted (the Sentry has no host pivot_root)");
    c->add_flag("--no-new-keyring", cf.no_new_keyring, "accepted");
    c->add_option("--preserve-fds", cf.preserve_fds, "accepted; extra fds are not passed yet");
    c->add_option("container-id", cf.id, "the container's id")->required();
  };
  CLI::App* create = app.add_subcommand("create", "create a container (held until start)");
  add_create_flags(create);
  create->callback([&] { result = Create(g, cf); });

  CLI::App* run = app.add_subcommand("run", "create and start a container, and wait for it");
  add_create_flags(run);
  run->add_flag("-d,--detach", cf.detach, "do not wait for the container");
  run->add_flag("--keep", cf.keep, "keep the container's state after it exits");
  run->callback([&] { result = Run(g, cf, &exit_code); });

  CLI::App* start = app.add_subcommand("start", "start a created container");
  start->add_option("container-id", id)->required();
  start->callback([&] { result = Start(g, id); });

  CLI::App* state = app.add_subcommand("state", "print a container's state as JSON");
  state->add_option("container-id", id)->required();
  state->callback([&] { result = State(g, id); });

  CLI::App* kill = app.add_subcommand("kill", "send a signal to a container's init");
  kill->add_option("container-id", id)->required();
  kill->add_option("signal", signal, "number or name (default SIGTERM)");
  kill->add_flag("-a,--all", all, "signal every process of the container");
  kill->callback([&] { result = Kill(g, id, signal, all); });

  CLI::App* del = app.add_subcommand("delete", "delete a container's state (and sandbox)");
  del->add_option("container-id", id)->required();
  del->add_flag("-f,--force", force, "kill the container first if it runs");
  del->callback([&] { result = Delete(g, id, force); });

  CLI::App* list = app.add_subcommand("list", "list the containers");
  list->add_option("-f,--format", format, "table or json");
  list->add_flag("-q,--quiet", quiet, "print the ids only");
  list->callback([&] { result = List(g, format, quiet); });

  CLI::App* spec = app.add_subcommand("spec", "write a default config.json");
  spec->add_option("-b,--bundle", bundle, "where to write it");
  bool rootless = false;
  spec->add_flag("--rootless", rootless, "accepted");
  spec->callback([&] { result = Spec(bundle); });

  CLI::App* features = app.add_subcommand("features", "print what the runtime supports");
  features->callback([&] { result = Features(); });

  CLI::App* ps = app.add_subcommand("ps", "list the container's host processes");
  ps->add_option("container-id", id)->required();
  ps->add_option("-f,--format", format, "table or json");
  ps->callback([&] { result = Ps(g, id, format); });

  std::string daemon_json = "/etc/docker/daemon.json", runtime_name = "sentry";
  std::vector<std::string> runtime_args;
  CLI::App* install = app.add_subcommand("install", "register sentry in Docker's daemon.json");
  install->add_option("--config", daemon_json, "daemon.json to edit")->capture_default_str();
  install->add_option("--runtime", runtime_name, "the runtime's name")->capture_default_str();
  install->add_option("--runtime-arg", runtime_args, "a global flag Docker passes (repeatable)");
  install->callback([&] { result = Install(daemon_json, runtime_name, runtime_args); });

  ExecFlags ef;
  CLI::App* exec = app.add_subcommand("exec", "run a process in a running container");
  exec->add_option("-p,--process", ef.process, "process.json to run (instead of args)");
  exec->add_option("--console-socket", ef.console_socket,
                   "socket for the terminal's master (with --tty)");
  exec->add_option("--pid-file", ef.pid_file, "file to write the process's host PID to");
  exec->add_option("--cwd", ef.cwd, "working directory in the container");
  exec->add_option("-e,--env", ef.env, "KEY=VALUE for the process (repeatable)");
  exec->add_option("-u,--user", ef.user, "UID[:GID]");
  exec->add_option("-g,--additional-gids", ef.additional_gids, "supplementary group");
  exec->add_option("-c,--cap", ef.caps, "accepted; capabilities are the container's");
  exec->add_option("--process-label", ef.process_label, "accepted (no SELinux)");
  exec->add_option("--apparmor", ef.apparmor, "accepted (no AppArmor)");
  exec->add_flag("-t,--tty", ef.tty, "a terminal for the process (needs --console-socket)");
  exec->add_flag("-d,--detach", ef.detach, "do not wait for the process");
  exec->add_flag("--no-new-privs", ef.no_new_privs, "set no_new_privs");
  exec->add_flag("--ignore-paused", ef.ignore_paused, "exec even if the container is paused");
  exec->add_option("--preserve-fds", ef.preserve_fds, "accepted; extra fds are not passed");
  exec->add_option("container-id", ef.id, "the container's id")->required();
  exec->add_option("command", ef.args, "the command and its arguments");
  exec->positionals_at_end();
  exec->callback([&] { result = Exec(g, ef, &exit_code); });

  CLI::App* pause = app.add_subcommand("pause", "freeze every process of a container");
  pause->add_option("container-id", id)->required();
  pause->callback([&] { result = Pause(g, id); });

  CLI::App* resume = app.add_subcommand("resume", "thaw a paused container");
  resume->add_option("container-id", id)->required();
  resume->callback([&] { result = Resume(g, id); });

  UpdateFlags uf;
  CLI::App* update = app.add_subcommand("update", "change a container's resource limits");
  update->add_option("-r,--resources", uf.resources,
                     "LinuxResources JSON file, or - for stdin (as Docker passes it)");
  update->add_option("--memory", uf.memory, "memory limit (bytes, or 64m; -1: none)");
  update->add_option("--memory-swap", uf.memory_swap, "memory plus swap limit");
  update->add_option("--memory-reservation", uf.memory_reservation, "memory soft limit");
  update->add_option("--pids-limit", uf.pids_limit, "most processes and threads");
  update->add_option("--cpu-shares", uf.cpu_shares, "CPU weight");
  update->add_option("--cpu-quota", uf.cpu_quota, "CPU time (us) per period; -1: none");
  update->add_option("--cpu-period", uf.cpu_period, "CFS period (us)");
  update->add_option("--cpuset-cpus", uf.cpuset_cpus, "CPUs allowed (0-1, 0,2)");
  update->add_option("--cpuset-mems", uf.cpuset_mems, "memory nodes allowed");
  update->add_option("container-id", uf.id)->required();
  update->callback([&] { result = Update(g, uf); });

  bool stats = false;
  std::string interval = "5s";
  CLI::App* events = app.add_subcommand("events", "print a container's resource statistics");
  events->add_flag("--stats", stats, "print one stats object and exit");
  events->add_option("--interval", interval, "time between stats objects (default 5s)");
  events->add_option("container-id", id)->required();
  events->callback([&] {
    auto ms = shim::ParseDuration(interval);
    result = ms ? Events(g, id, stats, *ms)
                : absl::InvalidArgumentError("--interval: invalid duration \"" + interval + "\"");
  });
  for (const char* name : {"checkpoint", "restore"}) {
    CLI::App* c = app.add_subcommand(name, std::string(name) + " (not supported)");
    c->allow_extras();
    c->callback([&, name] {
      result = absl::UnimplementedError(std::string(name) + " is not supported by sentry");
    });
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    LogError(PrescanGlobals(argc, argv), OneLine(e, app, argc, argv));
    return 1;
  }
  if (!result.ok()) {
    LogError(g, std::string(result.message()));
    return 1;
  }
  return exit_code;
}

}  // namespace sentry::oci
