// Runs one command in a fresh sandbox: the shared core of `sentry-run` and `sentry do`.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <linux/filter.h>

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "gofer/submounts.h"
#include "netstack/policy.h"
#include "sentry/kernel/credentials.h"

namespace sentry::kernel {
class Kernel;
}

namespace sentry::shim {

struct SandboxOptions {
  std::string platform = "seccomp";
  bool strace = false;
  bool debug = false;
  // --unsafe-no-confinement: no seccomp allowlist for the Sentry, and a gofer that serves
  // even when a confinement step fails. For debugging only; RunSandbox says so loudly.
  bool unsafe_no_confinement = false;
  std::vector<std::string> argv;  // argv[0] is the program
  std::vector<std::string> env;   // extra KEY=VALUE
  // The guest's environment is `env` alone, without the default PATH, HOME, LANG and TERM
  // (an OCI bundle's process.env is the whole environment).
  bool env_exact = false;
  // The guest path of the program to execute; empty: argv[0], looked up on the host's PATH
  // when the root is the host's.
  std::string program;
  // The guest init's credentials; -1 keeps the caller's uid or gid.
  int64_t uid = -1;
  int64_t gid = -1;
  // uname's nodename; empty keeps the Sentry's default.
  std::string hostname;
  // The guest's root: a host directory seen read-only under an in-memory upper layer.
  std::string rootfs = "/";
  // The root itself is mounted read-only (writes fail with EROFS, as under bwrap or srt),
  // except the binds, tmpfs_mounts, /dev and the scratch directories /tmp, /var/tmp and /run,
  // each an empty tmpfs. False: the guest writes anywhere, into the in-memory layer dropped
  // at exit (an OCI container's writable root; sentry-run --fs=scratch).
  bool read_only_root = false;
  // Without read_only_root: the guest's writes to the root go to `rootfs` itself, through
  // the gofer, instead of an in-memory layer (an OCI container's writable root, as under
  // runc: `docker cp`, `diff`, `commit` and `export` see them), and what it creates there
  // gets the guest's ids (no fixed owner, which sentry-run's binds keep).
  bool root_writes_host = false;
  bool RootOnHost() const { return root_writes_host && !read_only_root; }
  // With read_only_root: /tmp, /var/tmp and /run are writable as said above (sentry-run).
  // False: nothing is, but the binds and tmpfs_mounts that say so (OCI root.readonly).
  bool scratch_dirs = true;
  struct Bind {
    std::string host;
    std::string guest;
    bool read_only = false;
    // --workspace DIR:review: the guest writes into an in-memory layer over DIR (which the
    // gofer serves read-only); at exit the changes go to `review` below.
    bool review = false;
    // `host` is a regular file (ParseBind): it goes to file_binds, not to the gofer.
    bool file = false;
  };
  std::vector<Bind> binds;  // --bind HOST:GUEST[:ro], and --workspace DIR (read-write)
  // The reviewable workspace's output (runtime-shim/review.h): the review file's fd, and the
  // diff's (--diff-out) or -1, both opened before the Sentry's confinement; the protected
  // paths, relative to the workspace, that the overlay keeps read-only.
  struct ReviewOutput {
    int fd = -1;
    int diff_fd = -1;
    std::string file;
    std::vector<std::string> protected_paths;
  };
  ReviewOutput review;
  // Host files, as (device, inode), that the guest cannot see under any name: the gofer acts
  // as if they were absent (sentry-run's filesystem.denyRead, runtime-shim/deny_read.h).
  std::vector<std::pair<uint64_t, uint64_t>> hidden_files;
  // Host files the guest may not change, and names in host directories it may not create,
  // remove or rename (sentry-run's protected files, runtime-shim/protected_files.h).
  std::vector<std::pair<uint64_t, uint64_t>> protected_files;
  std::vector<std::tuple<uint64_t, uint64_t, std::string>> protected_names;
  // Host files bound over guest paths (an OCI bind mount of a single file: Docker's
  // /etc/hosts, /etc/resolv.conf, /etc/hostname, `-v FILE:FILE`): live, read and written
  // through an fd the Sentry opens before its pivot (vfs/host_file.h).
  struct FileBind {
    std::string host;
    std::string guest;
    bool read_only = false;
  };
  std::vector<FileBind> file_binds;
  // Guest directories that get an empty tmpfs of their own (an OCI "tmpfs" mount), with the
  // mount's mode and size (0: only the sandbox-wide budget).
  struct Tmpfs {
    std::string guest;
    uint32_t mode = 01777;
    uint64_t size = 0;
  };
  std::vector<Tmpfs> tmpfs_mounts;
  // The size of /dev/shm's tmpfs (Docker's --shm-size); 0: only the sandbox-wide budget.
  uint64_t shm_size = 0;
  std::string cwd;  // initial working directory (default: see cwd_if_visible)
  // When `cwd` is empty: the first of these that is a directory in the guest's file system
  // (sentry-run: the caller's cwd, then the workspace); none: /.
  std::vector<std::string> cwd_if_visible;
  // The guest's PATH and HOME unless env_exact; PATH is also where argv[0] is looked up when
  // the root is the host's (sentry-run passes the caller's).
  std::string default_path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  std::string default_home = "/root";
  // Bytes of file data the in-memory layer (overlay upper, tmpfs mounts, /dev/shm, memfds)
  // may hold in all; 0 keeps the default, half the host's RAM. Beyond it: ENOSPC.
  uint64_t tmpfs_size = 0;
  // The most guest tasks (threads) at once, --pids; 0: derived from what the host gives
  // (kernel/host_limits.h).
  int64_t max_tasks = 0;
  // The guest's memory, in bytes (sentry/base/guest_memory.h): committed private memory and
  // in-memory file data together; past it mmap and brk fail with ENOMEM and tmpfs writes
  // with ENOSPC. 0: no limit. (sentry-run's host memory cgroup is runtime-shim/supervisor.h.)
  uint64_t memory_limit = 0;
  // The host directories of the sandbox's own cgroup (one per v1 hierarchy, or the v2
  // group), which the guest sees read-only at /sys/fs/cgroup (sentry/kernel/cgroup_view.h);
  // empty: an empty /sys/fs/cgroup. An OCI container's group, made at create.
  std::vector<std::string> cgroup_view;
  bool cgroup_view_v2 = false;
  // The guest init's RLIMIT_NOFILE (soft and hard); 0: the caller's.
  int64_t open_files = 0;
  // The guest init's RLIMIT_CPU in seconds: soft at N (SIGXCPU), hard at N+1 (SIGKILL); 0: none.
  int64_t cpu_time = 0;
  // The guest init's RLIMIT_FSIZE in bytes (soft and hard); 0: none.
  uint64_t file_size = 0;
  // Further limits for the guest init, as (resource, soft, hard), applied after the three
  // above (an OCI process.rlimits: every entry, as given).
  std::vector<std::tuple<int, uint64_t, uint64_t>> rlimits;
  // The guest init's supplementary groups (OCI additionalGids); empty: none.
  std::vector<uint32_t> groups;
  // The guest init's umask, and its no_new_privs bit (OCI process.user.umask,
  // process.noNewPrivileges).
  uint32_t umask = 022;
  bool no_new_privs = false;
  // The guest init's capability sets (OCI process.capabilities); none: a full-capability
  // parent's (kernel::Credentials::Initial).
  std::optional<kernel::CapabilitySets> caps;
  // Guest paths hidden (a file under /dev/null, a directory under an empty read-only tmpfs)
  // and made read-only, once /proc and /sys are mounted (OCI linux.maskedPaths and
  // linux.readonlyPaths; runtime-shim/guest_paths.h).
  std::vector<std::string> masked_paths;
  std::vector<std::string> readonly_paths;
  // Which host mounts below the root and the binds the gofer serves (gofer/submounts.h).
  gofer::Submounts submounts = gofer::Submounts::kAuto;
  // --file-access=direct (true, the default): the Sentry serves the gofer's attach points
  // itself, over root fds the gofer donated (gofer/client.h: GoDirect), and keeps the
  // capabilities the gofer serves files with; gofer: every file operation goes to the gofer
  // (docs/design-decisions.md).
  bool direct_files = true;
  // --net=host: destinations outside the sandbox through host sockets, under the policy of
  // allow_net and deny_net (netstack/policy.h). Otherwise loopback only.
  bool net_host = false;
  std::vector<netstack::NetRule> allow_net;
  std::vector<netstack::NetRule> deny_net;
  // --publish (net_host only): (protocol, guest port) -> host port. A guest TCP listener or
  // UDP socket on the wildcard address and such a port also gets the host port
  // (netstack/stack.h).
  std::map<std::pair<int, uint16_t>, uint16_t> publish;
  // net_host only: every guest wildcard listener also listens on the same host port (an OCI
  // container whose network namespace is its own: Docker's -p and bridge networks).
  bool publish_all = false;
  // net_host only: the guest sees the interfaces of the network namespace the Sentry runs in
  // besides its own lo (netstack/host_interfaces.h), and may bind to their IPv4 addresses
  // (an OCI container's own namespace: Docker's eth0).
  bool show_host_interfaces = false;
  // net_host only: the Sentry answers the guest's DNS queries itself (netstack/dns.h); false:
  // they go to the server the guest names (an OCI container's own resolv.conf).
  bool answer_dns = true;
  // net_host only: loopback addresses and ports that lead to the Sentry's network namespace
  // rather than the guest's own lo (netstack/stack.h: an OCI container's 127.0.0.11:53).
  std::vector<netstack::InetAddr> host_loopback;
  // net.ipv4.ip_unprivileged_port_start of the guest's network namespace (an OCI
  // container's linux.sysctl: Docker sets 0).
  int unprivileged_port_start = 1024;
  // --tty=auto: when sentry-run's stdin is a terminal, the guest gets a pty of its own as its
  // controlling terminal, relayed to the caller's (runtime-shim/terminal.h); never: the
  // caller's fds as they are.
  bool tty = true;
  // A host terminal (the OCI runtime's end of the pty whose master went to the console
  // socket): the guest's fds 0-2 are then a pty of the sandbox relayed to it, as with `tty`;
  // -1: none.
  int terminal_fd = -1;
  // A seccomp filter (classic BPF) for the guest init, installed before it runs and
  // inherited by everything it starts (OCI linux.seccomp); empty: none.
  std::vector<sock_filter> seccomp_filter;
  // Called once the sandbox is set up (gofer, file system, kernel), just before the guest
  // init executes its program; an error stops there and becomes RunSandbox's error. The OCI
  // `create` holds the container here until `start`.
  std::function<absl::Status()> before_start;
  // Called with the kernel just before the guest init starts; what it returns lives until
  // the sandbox's last task has exited (the OCI runtime's control socket: exec, pause).
  std::function<std::shared_ptr<void>(kernel::Kernel&)> attach;
  // From the guest init's start until it exits, catchable signals sent to this host process
  // (SIGTERM, SIGINT, SIGHUP, SIGUSR1, ...) are sent on to the guest init, as `kill` of an
  // OCI container expects. SIGKILL still ends the whole sandbox.
  bool forward_signals = false;
  // PID 1 is an init kept by the Sentry, and the program runs as its child (PID 2): orphans
  // are reaped, `kill -9 $$` works as on a host, the sandbox ends when the program exits,
  // and SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1 and SIGUSR2 sent to this host process go
  // to the program (sentry-run). False: the program is PID 1 (an OCI container's process).
  bool sentry_init = false;
  // The audit trail (syscalls/audit.h): JSON lines to this host fd (taken over), -1: none.
  int audit_fd = -1;
  // A short account of the trail on stderr at the end (sentry-run --audit-summary).
  bool audit_summary = false;
  // The guest's syscall counts as JSON, written to this host fd (taken over) when the guest
  // has exited (sentry-run --stats); -1: not counted.
  int stats_fd = -1;
  // If set, receives the guest init's wait status (RunSandbox's result cannot tell `exit 137`
  // from death by SIGKILL).
  int* wait_status = nullptr;
};

// Parses "HOST:GUEST[:ro]" (or ":rw"); GUEST defaults to HOST.
absl::StatusOr<SandboxOptions::Bind> ParseBind(const std::string& spec);

// Returns the guest's exit status as a shell reports it (128+N for death by signal N).
absl::StatusOr<int> RunSandbox(const SandboxOptions& opts);

}  // namespace sentry::shim
