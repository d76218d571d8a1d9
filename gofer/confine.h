// Confinement of the gofer process, applied once it holds every host fd it will ever need
// (the attach roots and its socket). Afterwards no absolute path reaches the host, it keeps
// only the file capabilities it serves with, cannot gain privileges, and may make only the
// system calls its request loop needs.
#pragma once

#include <string>
#include <vector>

namespace sentry::gofer {

struct ConfineResult {
  // One line per step that failed; the gofer then refuses to serve (unless
  // --unsafe-no-confinement).
  std::vector<std::string> failures;
};

// Confines the calling process: without CAP_SYS_ADMIN, first a user namespace of its own
// (its uid and gid mapped to themselves); then a private mount namespace whose root is an empty read-only
// tmpfs (pivot_root, or chroot if that fails), capabilities cut down to DAC_OVERRIDE,
// DAC_READ_SEARCH, FOWNER and, if `keep_chown`, CHOWN; PR_SET_NO_NEW_PRIVS; and a seccomp
// allowlist that kills the process on any other system call. `sock` is the only fd
// sendmsg/recvmsg may use. CAP_FSETID is never kept: without it the host kernel itself clears
// set-ID bits when the gofer truncates or chowns a file, and never lets a chmod set S_ISGID
// for a group the gofer is not in.
// Preconditions: single-threaded; the cwd is not needed any more.
ConfineResult Confine(int sock, bool keep_chown);

}  // namespace sentry::gofer
