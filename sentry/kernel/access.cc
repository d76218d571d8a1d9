#include "sentry/kernel/access.h"

#include <signal.h>

namespace sentry::kernel {
namespace {

bool Privileged(const Credentials& c) { return c.euid == 0; }

}  // namespace

bool MayPtrace(const ThreadGroup& caller, const ThreadGroup& target) {
  if (&caller == &target) return true;
  const Credentials& c = caller.creds;
  const Credentials& t = target.creds;
  bool same_ids = c.ruid == t.euid && c.ruid == t.suid && c.ruid == t.ruid && c.rgid == t.egid &&
                  c.rgid == t.sgid && c.rgid == t.rgid;
  return same_ids || Privileged(c);
}

bool MayKill(const ThreadGroup& caller, const ThreadGroup& target, int sig) {
  const Credentials& c = caller.creds;
  const Credentials& t = target.creds;
  if (c.euid == t.suid || c.euid == t.ruid || c.ruid == t.suid || c.ruid == t.ruid) return true;
  if (sig == SIGCONT && caller.sid == target.sid) return true;
  return Privileged(c);
}

bool MayLockUnlimited(const ThreadGroup& tg) { return Privileged(tg.creds); }

bool MayUseSyslog(const ThreadGroup& tg) { return Privileged(tg.creds); }

}  // namespace sentry::kernel
