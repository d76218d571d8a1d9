// sentry: the runtime binary. `do` runs a command in a sandbox, `syscalls` prints the
// compatibility table (generated from the syscall table), `debug syscalls-allowed` prints the
// Sentry's own seccomp allowlist, `gofer` is the internal file server; everything else is the runc-compatible OCI runtime (runtime-shim/oci/).
#include <cstdio>
#include <cstring>
#include <string>

#include "gofer/server.h"
#include "runtime-shim/confine.h"
#include "runtime-shim/oci/oci.h"
#include "runtime-shim/sandbox.h"
#include "runtime-shim/supervisor.h"
#include "syscalls/table.h"

namespace {

int PrintSyscalls(bool markdown) {
  using sentry::syscalls::Support;
  int full = 0, partial = 0, none = 0;
  if (markdown) printf("| nr | name | support | note |\n|---|---|---|---|\n");
  for (const auto& e : sentry::syscalls::AllSyscalls()) {
    const char* s = e.support == Support::kFull ? "full"
                    : e.support == Support::kPartial ? "partial" : "unimplemented";
    (e.support == Support::kFull ? full : e.support == Support::kPartial ? partial : none)++;
    if (markdown) {
      printf("| %d | %s | %s | %s |\n", e.nr, e.name, s, e.note);
    } else {
      printf("%3d %-24s %-13s %s\n", e.nr, e.name, s, e.note);
    }
  }
  printf("%s%d full, %d partial, %d unimplemented\n", markdown ? "\n" : "", full, partial, none);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "gofer") return sentry::gofer::GoferMain(argc - 1, argv + 1);
  if (cmd == "syscalls") {
    return PrintSyscalls(argc > 2 && strcmp(argv[2], "--format=md") == 0);
  }
  if (cmd == "debug") {
    std::string what = argc > 2 ? argv[2] : "";
    if (what == "syscalls-allowed" && argc == 3) {
      sentry::shim::PrintAllowlist(stdout);
      return 0;
    }
    fprintf(stderr, "usage: sentry debug syscalls-allowed\n");
    return 2;
  }
  if (cmd == "do") {
    sentry::shim::SandboxOptions opts;
    int i = 2;
    for (; i < argc; i++) {
      std::string a = argv[i];
      if (a == "--") {
        i++;
        break;
      }
      if (a == "--strace") {
        opts.strace = true;
      } else if (a == "--unsafe-no-confinement") {
        opts.unsafe_no_confinement = true;
      } else if (a.rfind("--platform=", 0) == 0) {
        opts.platform = a.substr(11);
      } else if (a.rfind("-", 0) == 0) {
        fprintf(stderr, "sentry do: unknown flag \"%s\"\n", a.c_str());
      } else if (a == "--file-access=direct" || a == "--file-access=gofer") {
        opts.direct_files = a == "--file-access=direct";
        return 2;
      } else {
        break;
      }
    }
    for (; i < argc; i++) opts.argv.push_back(argv[i]);
    opts.sentry_init = true;
    if (!opts.unsafe_no_confinement) {
      // The Sentry as the init of its own namespaces; this process waits and reports.
      std::optional<int> parent =
          sentry::shim::Supervise({.who = "sentry", .namespaces = true, .new_net = true});
      if (parent) return *parent;
    }
    auto r = sentry::shim::RunSandbox(opts);
    if (!r.ok()) {
      fprintf(stderr, "sentry: %s\n", std::string(r.status().message()).c_str());
      return 126;
    }
    return *r;
  }
  return sentry::oci::Main(argc, argv);
}
