// sentry-run [--policy FILE] [--print-policy] [--fs=readonly|scratch] [--platform=seccomp|ptrace]
//            [--strace] [--env K=V]... [--submounts=auto|none] [--file-access=direct|gofer]
//            [--net=none|host]
//            [--allow-net=RULE]... [--deny-net=RULE]... [--publish=PORT[:GUESTPORT][/udp]]...
//            [--tty=auto|never] [--timeout D]
//            [--memory SIZE] [--open-files N] [--cpu-time S] [--file-size SIZE]
//            -- PROGRAM ARGS...
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "netstack/policy.h"
#include "runtime-shim/policy.h"
#include "runtime-shim/review.h"
#include "runtime-shim/sandbox.h"
#include "runtime-shim/supervisor.h"
#include "sentry/base/startup_trace.h"
#include "vfs/mem_inode.h"

namespace {

void Usage(FILE* out) {
  fprintf(
      out,
      "usage: sentry-run [--policy FILE] [--print-policy] [--fs=readonly|scratch]\n"
      "                  [--platform=seccomp|ptrace] [--strace] [--debug] [--env KEY=VALUE]...\n"
      "                  [--rootfs DIR] [--bind HOST:GUEST[:ro]]... [--workspace DIR[:review]]\n"
      "                  [--diff-out FILE]\n"
      "                  [--cwd DIR] [--tmpfs-size SIZE] [--pids N] [--submounts=auto|none]\n"
      "                  [--file-access=direct|gofer]\n"
      "                  [--timeout DURATION] [--memory SIZE] [--open-files N]\n"
      "                  [--cpu-time SECONDS] [--file-size SIZE]\n"
      "                  [--net=none|host] [--allow-net=RULE]... [--deny-net=RULE]...\n"
      "                  [--publish=PORT[:GUESTPORT][/udp]]...\n"
      "                  [--tty=auto|never] [--audit FILE|-|fd:N] [--audit-summary]\n"
      "                  [--stats FILE]\n"
      "                  [--unsafe-no-confinement] -- PROGRAM [ARGS...]\n"
      "The guest's root is --rootfs (default: the host's /). --fs=readonly (the default): it\n"
      "is read-only, writes there fail with EROFS, except in the binds, /dev and the scratch\n"
      "directories: /tmp and /var/tmp (the host's files under an in-memory layer), /run and\n"
      "/dev/shm (empty in-memory tmpfs).\n"
      "--fs=scratch: the guest may write anywhere, into an in-memory layer dropped at exit.\n"
      "--bind mounts a host directory or file (read-write unless :ro); --workspace DIR binds DIR\n"
      "read-write at the same path and starts there. Files the guest creates there belong to\n"
      "the caller and never carry set-user-ID or set-group-ID bits.\n"
      "--workspace DIR:review: the guest works on a copy-on-write view of DIR; nothing reaches\n"
      "DIR. At exit the changes are kept in a review file (--diff-out FILE also writes them as\n"
      "a diff); `sentry-run diff [REVIEW|DIR]` shows them, `sentry-run apply [REVIEW|DIR]`\n"
      "copies them to DIR, refusing if DIR changed underneath in the same files.\n"
      "--policy FILE reads a JSON policy (default: ~/.config/sentry/policy.json if present;\n"
      "keys filesystem, network, limits, env: see docs/sentry-run.md); flags override it\n"
      "(list flags add to its lists). --print-policy prints the effective policy and exits.\n"
      "By default the usual secrets of every home (~/.ssh, ~/.aws, ~/.netrc, ...) and\n"
      "/etc/shadow are absent (filesystem.denyRead), and shell rc files, .git/hooks,\n"
      ".git/config and editor folders in the workspace are read-only (filesystem.denyWrite).\n"
      "The guest starts in your working directory if it can see it (with --workspace: if it\n"
      "is inside the workspace), else in the workspace, else in /, with your HOME and PATH.\n"
      "A host mount below the root or a bind is served if it is a disk or network file\n"
      "system (--submounts=auto, the default) and otherwise (/proc, /sys, /dev, tmpfs, ...,\n"
      "or every one with --submounts=none) shows as an empty read-only directory.\n"
      "--file-access=direct (the default): the Sentry reaches host files itself, under the\n"
      "directory fds the gofer hands it, never by path; gofer: every file operation is a\n"
      "request to the gofer process (slower on metadata; the strictest setting).\n"
      "--tmpfs-size bounds what the in-memory layer (writes to the root, tmpfs mounts,\n"
      "/dev/shm, memfds) holds in all: bytes with a k/m/g/t suffix or a percentage of RAM\n"
      "(default 50%%); beyond it writes fail with ENOSPC. --pids caps the guest's tasks\n"
      "(threads) at N; by default the cap is derived from what the host gives (pids cgroup,\n"
      "threads-max, RLIMIT_NPROC).\n"
      "Limits (docs/sentry-run.md): --timeout DURATION (30s, 5m, 1h, or seconds) kills the\n"
      "whole sandbox when the wall clock runs out (exit status 124). --memory SIZE (512m,\n"
      "2g) bounds the guest's memory, private mappings and in-memory files together: past\n"
      "it mmap/brk fail with ENOMEM and tmpfs writes with ENOSPC; a host memory cgroup\n"
      "(SIZE + 128 MiB for the Sentry) backs it, and an OOM kill there ends the sandbox\n"
      "(exit status 137). --open-files N, --cpu-time SECONDS and --file-size SIZE set the\n"
      "guest's RLIMIT_NOFILE, RLIMIT_CPU (SIGXCPU at N s, SIGKILL at N+1) and RLIMIT_FSIZE.\n"
      "--net=none (the default) gives the guest its own loopback only. --net=host lets it\n"
      "reach other addresses through the Sentry under an egress policy: RULE is a domain\n"
      "(example.com, *.example.com), an IP or CIDR (10.0.0.0/8, [2001:db8::/32]), optionally\n"
      "with :PORT or :PORT-PORT. Deny rules win; with no --allow-net every public address\n"
      "is allowed; private, link-local and loopback ranges need a CIDR rule. The Sentry\n"
      "answers the guest's DNS: names no rule allows do not resolve. See docs/network.md.\n"
      "--publish=PORT[:GUESTPORT][/udp] (with --net=host) makes a guest TCP server (or a\n"
      "UDP socket, with /udp) on the wildcard address and GUESTPORT (default: PORT)\n"
      "reachable on the host's PORT; without it guest servers are the sandbox's own.\n"
      "--tty=auto (the default): when stdin is a terminal, the guest gets a terminal of its\n"
      "own (a pty of the sandbox, its controlling terminal, with job control, ^C and window\n"
      "size) relayed to yours, which stays in raw mode until the guest exits; never: the\n"
      "guest gets your fds as they are.\n"
      "--audit FILE (or - for stderr, fd:N for an open fd) writes what the guest does as JSON\n"
      "lines: programs run and their ends, files created, written, deleted, renamed and\n"
      "chmod'ed, connections, binds and listens, and every denial (docs/audit.md).\n"
      "--audit-summary prints a short account of it on stderr at the end.\n"
      "--stats FILE writes the guest's syscall counts there as JSON at the end\n"
      "({\"syscalls\": N, \"by_name\": {...}}; bench/run.py's floor column uses it).\n"
      "--unsafe-no-confinement runs the Sentry without its seccomp allowlist and lets the\n"
      "gofer serve when a confinement step fails: for debugging only (docs/security.md).\n");
}

// Like other sandboxes, the guest starts where the caller is, with the caller's HOME and PATH
// (argv[0] is looked up in that PATH). The caller's cwd is used if the guest can see it and,
// with --workspace, if it is inside the workspace; otherwise the workspace, else /.
void SetCallerDefaults(const std::string& workspace, sentry::shim::SandboxOptions& opts) {
  if (const char* path = getenv("PATH"); path != nullptr && *path != '\0') {
    opts.default_path = path;
  }
  if (std::string home = sentry::shim::CallerHome(); !home.empty()) opts.default_home = home;
  char buf[PATH_MAX];
  std::string here = getcwd(buf, sizeof(buf)) != nullptr ? buf : "";
  bool in_workspace = workspace.empty() || here == workspace || here.rfind(workspace + "/", 0) == 0;
  if (opts.rootfs == "/" && !here.empty() && in_workspace) opts.cwd_if_visible.push_back(here);
  if (!workspace.empty()) opts.cwd_if_visible.push_back(workspace);
}

}  // namespace

int main(int argc, char** argv) {
  sentry::startup::Mark("main");
  if (argc > 1 && (strcmp(argv[1], "diff") == 0 || strcmp(argv[1], "apply") == 0)) {
    return sentry::shim::ReviewMain(argc - 1, argv + 1);
  }
  sentry::shim::SandboxOptions opts;
  std::string audit;  // --audit
  std::string stats;  // --stats
  // Flags that set the policy, applied over the policy file once it is read.
  std::vector<std::function<void(sentry::shim::Policy&)>> cli;
  std::string policy_file;
  std::string workspace;
  std::string review_workspace;  // --workspace DIR:review
  std::string diff_out;          // --diff-out FILE
  bool print_policy = false;
  int i = 1;
  for (; i < argc; i++) {
    std::string a = argv[i];
    auto value = [&](const std::string& flag) -> const char* {
      if (a.rfind(flag + "=", 0) == 0) return argv[i] + flag.size() + 1;
      if (a == flag && i + 1 < argc) return argv[++i];
      return nullptr;
    };
    if (a == "--") {
      i++;
      break;
    }
    if (a == "-h" || a == "--help") {
      Usage(stdout);
      return 0;
    }
    if (a == "--strace") {
      opts.strace = true;
    } else if (a == "--print-policy") {
      print_policy = true;
    } else if (const char* v = value("--policy")) {
      policy_file = v;
    } else if (const char* v = value("--fs")) {
      std::string mode = v;
      if (mode != "readonly" && mode != "scratch") {
        fprintf(stderr, "sentry-run: --fs must be readonly or scratch, got \"%s\"\n", v);
        return 2;
      }
      cli.push_back([mode](auto& p) { p.read_only = mode == "readonly"; });
    } else if (a == "--debug") {
      opts.debug = true;
    } else if (a == "--unsafe-no-confinement") {
      opts.unsafe_no_confinement = true;
    } else if (a.rfind("--platform", 0) == 0 && value("--platform")) {
      opts.platform = a.find('=') != std::string::npos ? a.substr(a.find('=') + 1) : argv[i];
    } else if (a.rfind("--env", 0) == 0 && value("--env")) {
      std::string v = a.find('=') != std::string::npos && a.rfind("--env=", 0) == 0
                          ? a.substr(6)
                          : argv[i];
      if (v.find('=') == std::string::npos) {
        fprintf(stderr, "sentry-run: --env needs KEY=VALUE, got \"%s\"\n", v.c_str());
        return 2;
      }
      std::string name = v.substr(0, v.find('='));
      std::string val = v.substr(v.find('=') + 1);
      cli.push_back([name, val](auto& p) { p.set.emplace_back(name, val); });
    } else if (const char* v = value("--rootfs")) {
      opts.rootfs = v;
    } else if (const char* v = value("--bind")) {
      auto b = sentry::shim::ParseBind(v);
      if (!b.ok()) {
        fprintf(stderr, "sentry-run: %s\n", std::string(b.status().message()).c_str());
        return 2;
      }
      if (b->file) {
        opts.file_binds.push_back({b->host, b->guest, b->read_only});
      } else {
        opts.binds.push_back(*b);
      }
    } else if (const char* v = value("--workspace")) {
      // DIR, or DIR:review (the guest's changes are kept apart for `sentry-run diff/apply`).
      std::string dir = v;
      bool review = dir.size() > 7 && dir.compare(dir.size() - 7, 7, ":review") == 0;
      if (review) dir.resize(dir.size() - 7);
      auto b = sentry::shim::ParseBind(dir + ":" + dir + ":rw");
      if (b.ok() && b->file) {
        b = absl::InvalidArgumentError("--workspace " + dir + ": not a directory");
      }
      if (!b.ok()) {
        fprintf(stderr, "sentry-run: %s\n", std::string(b.status().message()).c_str());
        return 2;
      }
      b->guest = b->host;
      b->review = review;
      if (review && !review_workspace.empty()) {
        fprintf(stderr, "sentry-run: only one --workspace can be under review\n");
        return 2;
      }
      if (review) review_workspace = b->host;
      opts.binds.push_back(*b);
      workspace = b->host;
    } else if (const char* v = value("--diff-out")) {
      diff_out = v;
    } else if (const char* v = value("--cwd")) {
      opts.cwd = v;
    } else if (const char* v = value("--tmpfs-size")) {
      auto size = sentry::vfs::ParseTmpfsSize(v);
      if (!size.ok() || *size < 4096) {
        fprintf(stderr, "sentry-run: --tmpfs-size \"%s\": expected a size such as 512m, 4g or 25%%\n", v);
        return 2;
      }
      cli.push_back([t = std::string(v)](auto& p) { p.tmp_size = t; });
    } else if (const char* v = value("--pids")) {
      char* end = nullptr;
      long long n = strtoll(v, &end, 10);
      if (*v == '\0' || *end != '\0' || n <= 0) {
        fprintf(stderr, "sentry-run: --pids needs a positive number, got \"%s\"\n", v);
        return 2;
      }
      cli.push_back([n](auto& p) { p.pids = n; });
    } else if (const char* v = value("--stats")) {
      stats = v;
    } else if (a == "--audit-summary") {
      opts.audit_summary = true;
    } else if (const char* v = value("--audit")) {
      audit = v;
    } else if (a.rfind("--timeout", 0) == 0 || a.rfind("--memory", 0) == 0 ||
               a.rfind("--open-files", 0) == 0 || a.rfind("--cpu-time", 0) == 0 ||
               a.rfind("--file-size", 0) == 0) {
      std::string flag = a.substr(0, a.find('='));
      using Parser = absl::Status (*)(const std::string&, sentry::shim::Policy&);
      Parser parse = flag == "--timeout"      ? sentry::shim::ParseTimeoutLimit
                     : flag == "--memory"     ? sentry::shim::ParseMemoryLimit
                     : flag == "--open-files" ? sentry::shim::ParseOpenFilesLimit
                     : flag == "--cpu-time"   ? sentry::shim::ParseCpuTimeLimit
                     : flag == "--file-size"  ? sentry::shim::ParseFileSizeLimit
                                              : nullptr;
      const char* v = parse != nullptr ? value(flag) : nullptr;
      if (v == nullptr) {
        fprintf(stderr, "sentry-run: unknown flag \"%s\" or missing value (see --help)\n",
                a.c_str());
        return 2;
      }
      sentry::shim::Policy check;
      if (absl::Status s = parse(v, check); !s.ok()) {
        fprintf(stderr, "sentry-run: %s \"%s\": %s\n", flag.c_str(), v,
                std::string(s.message()).c_str());
        return 2;
      }
      cli.push_back([parse, t = std::string(v)](auto& p) { (void)parse(t, p); });
    } else if (const char* v = value("--tty")) {
      std::string mode = v;
      if (mode != "auto" && mode != "never") {
        fprintf(stderr, "sentry-run: --tty must be auto or never, got \"%s\"\n", v);
        return 2;
      }
      opts.tty = mode == "auto";
    } else if (const char* v = value("--file-access")) {
      std::string mode = v;
      if (mode != "direct" && mode != "gofer") {
        fprintf(stderr, "sentry-run: --file-access must be direct or gofer, got \"%s\"\n", v);
        return 2;
      }
      opts.direct_files = mode == "direct";
    } else if (const char* v = value("--submounts")) {
      auto sm = sentry::gofer::ParseSubmounts(v);
      if (!sm) {
        fprintf(stderr, "sentry-run: --submounts must be auto or none, got \"%s\"\n", v);
        return 2;
      }
      opts.submounts = *sm;
    } else if (const char* v = value("--net")) {
      std::string mode = v;
      if (mode != "none" && mode != "host") {
        fprintf(stderr, "sentry-run: --net must be none or host, got \"%s\"\n", v);
        return 2;
      }
      cli.push_back([mode](auto& p) { p.net_host = mode == "host"; });
    } else if (a.rfind("--allow-net", 0) == 0 || a.rfind("--deny-net", 0) == 0) {
      bool allow = a.rfind("--allow-net", 0) == 0;
      const char* v = value(allow ? "--allow-net" : "--deny-net");
      if (v == nullptr) {
        fprintf(stderr, "sentry-run: %s needs a RULE (see --help)\n", a.c_str());
        return 2;
      }
      std::string err;
      auto rule = sentry::netstack::ParseNetRule(v, &err);
      if (!rule) {
        fprintf(stderr, "sentry-run: %s=%s: %s\n", allow ? "--allow-net" : "--deny-net", v,
                err.c_str());
        return 2;
      }
      cli.push_back([allow, r = std::string(v)](auto& p) {
        (allow ? p.allowed_domains : p.denied_domains).push_back(r);
      });
    } else if (const char* v = value("--publish")) {
      std::string err;
      if (!sentry::netstack::ParsePublish(v, &err)) {
        fprintf(stderr, "sentry-run: --publish=%s: %s\n", v, err.c_str());
        return 2;
      }
      cli.push_back([text = std::string(v)](auto& p) { p.publish.push_back(text); });
    } else if (a.rfind("-", 0) == 0) {
      fprintf(stderr, "sentry-run: unknown flag \"%s\" (see --help)\n", a.c_str());
      return 2;
    } else {
      break;  // the program, without "--"
    }
  }
  for (; i < argc; i++) opts.argv.push_back(argv[i]);
  sentry::shim::Policy policy;
  if (policy_file.empty()) {
    std::string own = sentry::shim::DefaultPolicyPath();
    if (!own.empty() && access(own.c_str(), F_OK) == 0) policy_file = own;
  }
  if (!policy_file.empty()) {
    if (auto s = sentry::shim::LoadPolicyFile(policy_file, policy); !s.ok()) {
      fprintf(stderr, "sentry-run: %s\n", std::string(s.message()).c_str());
      return 2;
    }
  }
  for (const auto& apply : cli) apply(policy);
  if (!policy.net_host && (!policy.allowed_domains.empty() || !policy.denied_domains.empty())) {
    fprintf(stderr,
            "sentry-run: --allow-net and --deny-net (network.allowedDomains, deniedDomains) "
            "need --net=host (network.mode \"host\")\n");
    return 2;
  }
  if (!policy.net_host && !policy.publish.empty()) {
    fprintf(stderr, "sentry-run: --publish (network.publish) needs --net=host\n");
    return 2;
  }
  if (print_policy) {
    fputs(sentry::shim::PolicyJson(policy).c_str(), stdout);
    return 0;
  }
  SetCallerDefaults(workspace, opts);
  if (auto s = sentry::shim::ApplyPolicy(policy, opts); !s.ok()) {
    fprintf(stderr, "sentry-run: %s\n", std::string(s.message()).c_str());
    return 2;
  }
  if (!opts.unsafe_no_confinement) {
    // The confined Sentry holds no CAP_NET_BIND_SERVICE over the host's network namespace.
    int first = 1024;
    if (FILE* f = fopen("/proc/sys/net/ipv4/ip_unprivileged_port_start", "r")) {
      if (fscanf(f, "%d", &first) != 1) first = 1024;
      fclose(f);
    }
    for (const auto& [key, host_port] : opts.publish) {
      if (host_port >= first) continue;
      fprintf(stderr,
              "sentry-run: --publish: host port %u is below %d, which needs "
              "CAP_NET_BIND_SERVICE on the host; the confined Sentry holds no capability. "
              "Publish a higher host port (HOST:GUEST, e.g. --publish=%u:%u)\n",
              host_port, first, host_port + 8000u, key.second);
      return 2;
    }
  }
  if (opts.argv.empty()) {
    fprintf(stderr, "sentry-run: no program given\n");
    Usage(stderr);
    return 2;
  }
  if (!audit.empty()) {
    // The trail's destination: stderr, an fd the caller opened, or a file (created 0600).
    int fd = -1;
    if (audit == "-") {
      fd = fcntl(2, F_DUPFD_CLOEXEC, 10);
    } else if (audit.rfind("fd:", 0) == 0) {
      char* end = nullptr;
      long n = strtol(audit.c_str() + 3, &end, 10);
      if (audit.size() > 3 && *end == '\0' && n >= 0) fd = fcntl(n, F_DUPFD_CLOEXEC, 10);
    } else {
      fd = open(audit.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    }
    if (fd < 0) {
      fprintf(stderr, "sentry-run: --audit %s: %s\n", audit.c_str(),
              errno ? strerror(errno) : "expected FILE, - or fd:N");
      return 2;
    }
    opts.audit_fd = fd;
  }
  if (!stats.empty()) {
    opts.stats_fd = open(stats.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (opts.stats_fd < 0) {
      fprintf(stderr, "sentry-run: --stats %s: %s\n", stats.c_str(), strerror(errno));
      return 2;
    }
  }
  if (!diff_out.empty() && review_workspace.empty()) {
    fprintf(stderr, "sentry-run: --diff-out needs a workspace under review (--workspace DIR:review)\n");
    return 2;
  }
  if (!review_workspace.empty()) {
    auto fd = sentry::shim::CreateReviewFile(review_workspace, &opts.review.file);
    if (!fd.ok()) {
      fprintf(stderr, "sentry-run: %s\n", std::string(fd.status().message()).c_str());
      return 2;
    }
    opts.review.fd = *fd;
    if (!diff_out.empty()) {
      opts.review.diff_fd = open(diff_out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (opts.review.diff_fd < 0) {
        fprintf(stderr, "sentry-run: --diff-out %s: %s\n", diff_out.c_str(), strerror(errno));
        return 2;
      }
    }
  }
  opts.sentry_init = true;
  if (!opts.unsafe_no_confinement || policy.timeout_ms > 0 || policy.memory > 0) {
    // A parent outside the sandbox keeps the time and the host memory cgroup, and the Sentry
    // runs as the init of its own namespaces (runtime-shim/namespaces.h).
    sentry::startup::Mark("options parsed");
    std::optional<int> parent = sentry::shim::Supervise({.timeout_ms = policy.timeout_ms,
                                                         .memory_bytes = policy.memory,
                                                         .debug = opts.debug,
                                                         .namespaces = !opts.unsafe_no_confinement,
                                                         .new_net = !opts.net_host});
    if (parent) return *parent;
  }
  auto r = sentry::shim::RunSandbox(opts);
  if (!r.ok()) {
    fprintf(stderr, "sentry-run: %s\n", std::string(r.status().message()).c_str());
    return r.status().code() == absl::StatusCode::kNotFound ? 127 : 126;
  }
  return *r;
}
