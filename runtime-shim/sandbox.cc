#include "runtime-shim/sandbox.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sentry/base/logging.h"
#include "sentry/kernel/kernel.h"
#include "syscalls/dispatch.h"
#include "vfs/host_root.h"

namespace sentry::shim {
namespace {

// Host directories the temporary read-only root exposes (plus the program's own directory).
const char* const kExposed[] = {"/bin", "/sbin", "/usr", "/lib", "/lib32", "/lib64", "/libx32",
                                "/etc"};

std::string Realpath(const std::string& p) {
  char buf[PATH_MAX];
  if (!realpath(p.c_str(), buf)) return "";
  return buf;
}

// Finds `prog` the way a shell would: as given if it has a slash, else on the host PATH.
absl::StatusOr<std::string> FindProgram(const std::string& prog) {
  if (prog.find('/') != std::string::npos) {
    if (access(prog.c_str(), F_OK) != 0) return absl::NotFoundError(prog + ": no such file");
    return Realpath(prog);
  }
  const char* path = getenv("PATH");
  std::string p = path ? path : "/usr/bin:/bin";
  size_t i = 0;
  while (i <= p.size()) {
    size_t j = p.find(':', i);
    if (j == std::string::npos) j = p.size();
    std::string cand = p.substr(i, j - i) + "/" + prog;
    if (access(cand.c_str(), X_OK) == 0) return Realpath(cand);
    i = j + 1;
  }
  return absl::NotFoundError(prog + ": command not found");
}

}  // namespace

absl::StatusOr<int> RunSandbox(const SandboxOptions& opts) {
  log::Init(opts.debug ? spdlog::level::debug : spdlog::level::warn, opts.strace);
  if (opts.argv.empty()) return absl::InvalidArgumentError("no program given");
  auto prog = FindProgram(opts.argv[0]);
  if (!prog.ok()) return prog.status();
  // A clear error for something that is not a program at all.
  int fd = open(prog->c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::PermissionDeniedError(*prog + ": " + strerror(errno));
  char magic[4] = {};
  ssize_t n = read(fd, magic, 4);
  close(fd);
  struct stat st;
  stat(prog->c_str(), &st);
  if (S_ISDIR(st.st_mode)) return absl::InvalidArgumentError(*prog + ": is a directory");
  bool elf = n == 4 && memcmp(magic, "\x7f" "ELF", 4) == 0;
  bool script = n >= 2 && magic[0] == '#' && magic[1] == '!';
  if (!elf && !script) return absl::InvalidArgumentError(*prog + ": not an ELF executable");

  auto platform = platform::NewPlatform(opts.platform);
  if (!platform.ok()) return platform.status();

  std::vector<std::string> exposed(std::begin(kExposed), std::end(kExposed));
  std::vector<std::string> present;
  for (auto& e : exposed) {
    struct stat s;
    if (lstat(e.c_str(), &s) == 0) present.push_back(e);
  }
  std::string dir = prog->substr(0, prog->rfind('/'));
  if (!dir.empty()) present.push_back(dir);
  auto root = std::make_unique<vfs::HostRoot>(present);

  kernel::Kernel k(std::move(*platform), std::move(root));
  k.set_dispatch(&syscalls::Dispatch);
  kernel::Kernel::StartOptions so;
  so.path = *prog;
  so.argv = opts.argv;
  so.envp = {"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME=/root", "LANG=C.UTF-8"};
  if (const char* term = getenv("TERM")) so.envp.push_back(std::string("TERM=") + term);
  for (const auto& e : opts.env) so.envp.push_back(e);
  const char* names[] = {"stdin", "stdout", "stderr"};
  for (int i = 0; i < 3; i++) {
    int hfd = fcntl(i, F_DUPFD_CLOEXEC, 10);
    if (hfd < 0) {
      hfd = open("/dev/null", O_RDWR | O_CLOEXEC);
    }
    int fl = fcntl(i, F_GETFL);
    if (fl < 0) fl = O_RDWR;
    so.stdio.push_back(vfs::NewHostStreamFile(hfd, fl & (O_ACCMODE | O_APPEND), names[i]));
  }
  signal(SIGPIPE, SIG_IGN);
  auto status = k.Run(so);
  if (!status.ok()) return status.status();
  int s = *status;
  if (WIFSIGNALED(s)) return 128 + WTERMSIG(s);
  return WEXITSTATUS(s);
}

}  // namespace sentry::shim
