// execve: our own ELF loader (static, static-pie, dynamic via PT_INTERP) and shebang scripts.
#pragma once

#include <string>
#include <vector>

#include "sentry/base/errno.h"
#include "sentry/kernel/kernel.h"
#include "vfs/file.h"

namespace sentry::loader {

struct LoadedElf {
  uint64_t entry = 0;  // of the interpreter when there is one
  uint64_t phdr = 0, phent = 0, phnum = 0;
  uint64_t base = 0;  // interpreter load address (AT_BASE)
  uint64_t main_entry = 0;
  uint64_t brk = 0;
};

// Opens `path` (relative to the cwd) for execution: EACCES unless it is a regular file the
// task may execute on a mount without MS_NOEXEC.
Result<vfs::FileRef> OpenExec(kernel::Task& t, const std::string& path);
// The same relative to `start`; without `follow`, a symlink as the last component is ELOOP
// (execveat's AT_SYMLINK_NOFOLLOW).
Result<vfs::FileRef> OpenExecAt(kernel::Task& t, const vfs::Path& start, const std::string& path,
                                bool follow);
// The program open file `f` is (execveat with AT_EMPTY_PATH, fexecve), with the same checks.
Result<vfs::FileRef> OpenExecFile(kernel::Task& t, const vfs::FileRef& f);

// Maps `file` (and its interpreter) into `mm` through `ctx`.
Result<LoadedElf> LoadElf(kernel::Task& t, platform::Context& ctx, mm::MemoryManager& mm,
                          const vfs::FileRef& file);

// Replaces the task's program. On failure before the point of no return the old program
// is intact and the errno is returned.
Result<void> Exec(kernel::Task& t, std::string path, std::vector<std::string> argv,
                  std::vector<std::string> envp);
// Runs the already opened program `file`. `filename` is the name the new program is given
// (AT_EXECFN, comm, a script's path in its interpreter's argv); `path_inaccessible` says that
// name will not open once the exec is done (a close-on-exec fd's /dev/fd/N), so a script
// cannot be run (ENOENT), as Linux's BINPRM_FLAGS_PATH_INACCESSIBLE.
Result<void> ExecFile(kernel::Task& t, vfs::FileRef file, std::string filename,
                      std::vector<std::string> argv, std::vector<std::string> envp,
                      bool path_inaccessible);

}  // namespace sentry::loader
