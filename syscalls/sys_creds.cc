// Credentials: user and group ids, supplementary groups, capabilities (capget/capset).
//
// They are the guest's view, enforced by the Sentry only: the host credentials never change.
// The rules are Linux's (kernel/sys.c, kernel/capability.c); the capability side effects of id
// changes live in kernel/credentials.cc. Credentials are kept per process, not per thread:
// glibc applies set*id to every thread anyway, and capset on one thread changes all of them.
#include <linux/capability.h>

#include <algorithm>
#include <functional>

#include "syscalls/common.h"

namespace sentry::syscalls {

using kernel::Credentials;

namespace {

constexpr uint32_t kKeep = UINT32_MAX;  // "-1": leave this id alone; never a valid id

// One kind of id (user or group) of a set of credentials.
struct Ids {
  uint32_t r, e, s, fs;
  bool Has(uint32_t id) const { return id == r || id == e || id == s; }
};

Ids Get(const Credentials& c, bool gid) {
  return gid ? Ids{c.rgid, c.egid, c.sgid, c.fsgid} : Ids{c.ruid, c.euid, c.suid, c.fsuid};
}

void Put(Credentials& c, bool gid, const Ids& x) {
  if (gid) {
    c.rgid = x.r, c.egid = x.e, c.sgid = x.s, c.fsgid = x.fs;
  } else {
    c.ruid = x.r, c.euid = x.e, c.suid = x.s, c.fsuid = x.fs;
  }
}

// The rule of one set*id call: edits `x` given whether the caller has CAP_SETUID (or
// CAP_SETGID); returns false for a no-op that must leave even fsuid alone.
using IdRule = std::function<Result<bool>(Ids& x, bool capable)>;

// An id the caller named, as a kernel id through its user namespace: kKeep stays kKeep,
// an unmapped id is EINVAL.
Result<uint32_t> KernelId(const Credentials& c, bool gid, uint32_t id) {
  if (id == kKeep) return kKeep;
  std::optional<uint32_t> k = kernel::ToKernelId(c.user_ns.get(), gid, id);
  if (!k) return Errno(EINVAL);
  return *k;
}

// What the caller sees of kernel id `kid`.
uint32_t Shown(const Credentials& c, bool gid, uint32_t kid) {
  return kernel::ShowId(c.user_ns.get(), gid, kid);
}

// Applies `rule` to the caller's user (or group) ids, then the capability fixups of
// setuid-like calls. The rule works on kernel ids: `ids` are the caller's, mapped first.
Result<uint64_t> ChangeIds(Task& t, bool gid, std::initializer_list<uint32_t*> ids,
                           const IdRule& rule) {
  absl::MutexLock l(&t.kernel().mu());
  Credentials& c = t.tg().creds;
  for (uint32_t* id : ids) *id = SENTRY_TRY(KernelId(c, gid, *id));
  Ids x = Get(c, gid);
  bool changed = SENTRY_TRY(rule(x, c.CapableInOwn(gid ? CAP_SETGID : CAP_SETUID)));
  if (!changed) return 0;
  const Credentials old = c;
  Put(c, gid, x);
  if (!gid) c.FixupAfterUidChange(old);
  CommitCreds(t, old);
  return 0;
}

// setuid/setgid: with the capability all three ids; without, the effective one may become
// the real or saved one.
Result<bool> SetId(Ids& x, bool capable, uint32_t id) {
  if (id == kKeep) return Errno(EINVAL);
  if (capable) {
    x.r = x.s = id;
  } else if (id != x.r && id != x.s) {
    return Errno(EPERM);
  }
  x.e = x.fs = id;
  return true;
}

// setreuid/setregid: without the capability the real id may become the effective one, the
// effective id any of the three. The saved id follows a new effective one that is not the
// (old) real one, or any change of the real one.
Result<bool> SetReId(Ids& x, bool capable, uint32_t r, uint32_t e) {
  const Ids old = x;
  if (r != kKeep) {
    if (r != old.r && r != old.e && !capable) return Errno(EPERM);
    x.r = r;
  }
  if (e != kKeep) {
    if (!old.Has(e) && !capable) return Errno(EPERM);
    x.e = e;
  }
  if (r != kKeep || (e != kKeep && e != old.r)) x.s = x.e;
  x.fs = x.e;
  return true;
}

// setresuid/setresgid: without the capability each id may become any of the current three.
Result<bool> SetResId(Ids& x, bool capable, uint32_t r, uint32_t e, uint32_t s) {
  if ((r == kKeep || r == x.r) && (e == kKeep || (e == x.e && e == x.fs)) &&
      (s == kKeep || s == x.s)) {
    return false;
  }
  for (uint32_t id : {r, e, s}) {
    if (id != kKeep && !x.Has(id) && !capable) return Errno(EPERM);
  }
  if (r != kKeep) x.r = r;
  if (e != kKeep) x.e = e;
  if (s != kKeep) x.s = s;
  x.fs = x.e;
  return true;
}

// setfsuid/setfsgid: never fail; return the old fs id whether or not it changed.
uint64_t SetFsId(Task& t, bool gid, uint32_t id) {
  absl::MutexLock l(&t.kernel().mu());
  Credentials& c = t.tg().creds;
  Ids x = Get(c, gid);
  const uint32_t old_fs = Shown(c, gid, x.fs);
  Result<uint32_t> kid = KernelId(c, gid, id);
  if (!kid.ok()) return old_fs;
  id = *kid;
  if (id == kKeep || id == x.fs) return old_fs;
  if (!x.Has(id) && !c.CapableInOwn(gid ? CAP_SETGID : CAP_SETUID)) return old_fs;
  const Credentials old = c;
  x.fs = id;
  Put(c, gid, x);
  if (!gid) c.FixupAfterFsuidChange(old);
  CommitCreds(t, old);
  return old_fs;
}

}  // namespace

void CommitCreds(Task& t, const Credentials& old) {
  if (t.tg().creds.UnsettlesDumpable(old)) {
    t.tg().dumpable = false;  // fs.suid_dumpable is 0
    t.pdeathsig_ = 0;
  }
}

Result<uint64_t> SysGetuid(Task& t) { return Shown(t.tg().creds, false, t.tg().creds.ruid); }
Result<uint64_t> SysGeteuid(Task& t) { return Shown(t.tg().creds, false, t.tg().creds.euid); }
Result<uint64_t> SysGetgid(Task& t) { return Shown(t.tg().creds, true, t.tg().creds.rgid); }
Result<uint64_t> SysGetegid(Task& t) { return Shown(t.tg().creds, true, t.tg().creds.egid); }

Result<uint64_t> SysGetresuid(Task& t, GuestAddr r, GuestAddr e, GuestAddr s) {
  Credentials c = t.tg().creds;
  SENTRY_TRY(t.CopyOut(r, Shown(c, false, c.ruid)));
  SENTRY_TRY(t.CopyOut(e, Shown(c, false, c.euid)));
  SENTRY_TRY(t.CopyOut(s, Shown(c, false, c.suid)));
  return 0;
}

Result<uint64_t> SysGetresgid(Task& t, GuestAddr r, GuestAddr e, GuestAddr s) {
  Credentials c = t.tg().creds;
  SENTRY_TRY(t.CopyOut(r, Shown(c, true, c.rgid)));
  SENTRY_TRY(t.CopyOut(e, Shown(c, true, c.egid)));
  SENTRY_TRY(t.CopyOut(s, Shown(c, true, c.sgid)));
  return 0;
}

Result<uint64_t> SysSetuid(Task& t, uint32_t id) {
  return ChangeIds(t, false, {&id}, [&id](Ids& x, bool capable) { return SetId(x, capable, id); });
}
Result<uint64_t> SysSetgid(Task& t, uint32_t id) {
  return ChangeIds(t, true, {&id}, [&id](Ids& x, bool capable) { return SetId(x, capable, id); });
}
Result<uint64_t> SysSetreuid(Task& t, uint32_t r, uint32_t e) {
  return ChangeIds(t, false, {&r, &e},
                   [&](Ids& x, bool capable) { return SetReId(x, capable, r, e); });
}
Result<uint64_t> SysSetregid(Task& t, uint32_t r, uint32_t e) {
  return ChangeIds(t, true, {&r, &e},
                   [&](Ids& x, bool capable) { return SetReId(x, capable, r, e); });
}
Result<uint64_t> SysSetresuid(Task& t, uint32_t r, uint32_t e, uint32_t s) {
  return ChangeIds(t, false, {&r, &e, &s},
                   [&](Ids& x, bool capable) { return SetResId(x, capable, r, e, s); });
}
Result<uint64_t> SysSetresgid(Task& t, uint32_t r, uint32_t e, uint32_t s) {
  return ChangeIds(t, true, {&r, &e, &s},
                   [&](Ids& x, bool capable) { return SetResId(x, capable, r, e, s); });
}
Result<uint64_t> SysSetfsuid(Task& t, uint32_t id) { return SetFsId(t, false, id); }
Result<uint64_t> SysSetfsgid(Task& t, uint32_t id) { return SetFsId(t, true, id); }

Result<uint64_t> SysSetgroups(Task& t, int size, GuestAddr list) {
  {
    absl::MutexLock l(&t.kernel().mu());
    const Credentials& c = t.tg().creds;
    // In a user namespace, also only once its gid_map is written and setgroups is allowed.
    const kernel::UserNamespace* ns = c.user_ns.get();
    bool may = !ns || (ns->gid_map_written() && ns->setgroups_allowed());
    if (!c.CapableInOwn(CAP_SETGID) || !may) return Errno(EPERM);
  }
  if (static_cast<unsigned>(size) > 65536) return Errno(EINVAL);  // NGROUPS_MAX
  std::vector<uint32_t> g(size);
  if (size) SENTRY_TRY(t.CopyInBytes(list, {reinterpret_cast<uint8_t*>(g.data()), g.size() * 4}));
  absl::MutexLock l(&t.kernel().mu());
  for (uint32_t& id : g) {
    id = SENTRY_TRY(KernelId(t.tg().creds, true, id));
    if (id == kKeep) return Errno(EINVAL);
  }
  std::sort(g.begin(), g.end());  // Linux keeps them sorted, and getgroups shows that
  t.tg().creds.groups = std::move(g);
  return 0;
}

Result<uint64_t> SysGetgroups(Task& t, int size, GuestAddr list) {
  std::vector<uint32_t> groups;
  {
    absl::MutexLock l(&t.kernel().mu());
    groups = t.tg().creds.groups;
    for (uint32_t& g : groups) g = Shown(t.tg().creds, true, g);
  }
  if (size < 0) return Errno(EINVAL);
  if (size == 0) return groups.size();
  if (static_cast<size_t>(size) < groups.size()) return Errno(EINVAL);
  SENTRY_TRY(t.CopyOutBytes(list, {reinterpret_cast<uint8_t*>(groups.data()), groups.size() * 4}));
  return groups.size();
}

}  // namespace sentry::syscalls
