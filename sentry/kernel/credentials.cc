#include "sentry/kernel/credentials.h"

#include <linux/capability.h>
#include <sys/prctl.h>

#include <algorithm>

namespace sentry::kernel {

namespace {

bool IsSubset(uint64_t a, uint64_t b) { return (a & ~b) == 0; }

bool AnyRoot(uint32_t root, uint32_t r, uint32_t e, uint32_t s) {
  return r == root || e == root || s == root;
}

Result<uint64_t> CapAmbient(Credentials& c, uint64_t op, uint64_t cap, uint64_t a4, uint64_t a5) {
  if (op == PR_CAP_AMBIENT_CLEAR_ALL) {
    if (cap | a4 | a5) return Errno(EINVAL);
    c.cap_ambient = 0;
    return 0;
  }
  if (!CapValid(cap) || a4 || a5) return Errno(EINVAL);
  const uint64_t bit = CapBit(static_cast<int>(cap));
  switch (op) {
    case PR_CAP_AMBIENT_IS_SET:
      return (c.cap_ambient & bit) != 0;
    case PR_CAP_AMBIENT_RAISE:
      // An ambient capability must stay both permitted and inheritable (capset and the
      // uid fixups keep that invariant by masking).
      if (!(c.cap_permitted & bit) || !(c.cap_inheritable & bit) ||
          (c.securebits & kSecbitNoCapAmbientRaise)) {
        return Errno(EPERM);
      }
      c.cap_ambient |= bit;
      return 0;
    case PR_CAP_AMBIENT_LOWER:
      c.cap_ambient &= ~bit;
      return 0;
    default:
      return Errno(EINVAL);
  }
}

// PR_SET_SECUREBITS: any change needs CAP_SETPCAP; a locked flag cannot change, a lock cannot
// be released, and unknown bits are refused (all EPERM, as Linux).
Result<uint64_t> SetSecurebits(Credentials& c, uint64_t bits) {
  const uint64_t locked_flags = (c.securebits & kSecbitAllLocks) >> 1;
  if ((locked_flags & (c.securebits ^ bits)) || (c.securebits & kSecbitAllLocks & ~bits) ||
      (bits & ~uint64_t{kSecbitAllBits | kSecbitAllLocks}) || !c.CapableInOwn(CAP_SETPCAP)) {
    return Errno(EPERM);
  }
  c.securebits = static_cast<uint32_t>(bits);
  return 0;
}

}  // namespace

bool Credentials::CapableIn(const UserNamespace* ns, int cap) const {
  const UserNamespace* own = user_ns.get();
  const int own_level = own ? own->level() : 0;  // the first namespace is the root: 0
  for (;;) {
    if (ns == own) return (cap_effective & CapBit(cap)) != 0;
    if (!ns || ns->level() <= own_level) return false;  // not a descendant of one's own
    // The creator's euid owns a child of its namespace, with every capability in it.
    if (ns->parent() == own && ns->owner() == euid) return true;
    ns = ns->parent();
  }
}

uint32_t Credentials::RootUid() const {
  return ToKernelId(user_ns.get(), false, 0).value_or(UINT32_MAX);
}

bool Credentials::InGroup(uint32_t gid) const {
  return gid == fsgid || std::find(groups.begin(), groups.end(), gid) != groups.end();
}

Credentials Credentials::Initial(uint32_t uid, uint32_t gid, const CapabilitySets* caps,
                                 bool no_new_privs) {
  Credentials c;
  c.ruid = c.euid = c.suid = c.fsuid = uid;
  c.rgid = c.egid = c.sgid = c.fsgid = gid;
  if (caps != nullptr) {
    c.cap_bounding = caps->bounding & kCapFullSet;
    c.cap_permitted = caps->permitted & kCapFullSet;
    c.cap_inheritable = caps->inheritable & kCapFullSet;
    c.cap_effective = caps->effective & c.cap_permitted;
    c.cap_ambient = caps->ambient & c.cap_permitted & c.cap_inheritable;
  }
  c.no_new_privs = no_new_privs;
  c.TransformForExec();
  return c;
}

std::optional<int> CapabilityByName(std::string_view name) {
  // capability.h's names, by number.
  static constexpr std::string_view kNames[kCapLastCap + 1] = {
      "CHOWN",         "DAC_OVERRIDE",     "DAC_READ_SEARCH", "FOWNER",
      "FSETID",        "KILL",             "SETGID",          "SETUID",
      "SETPCAP",       "LINUX_IMMUTABLE",  "NET_BIND_SERVICE", "NET_BROADCAST",
      "NET_ADMIN",     "NET_RAW",          "IPC_LOCK",        "IPC_OWNER",
      "SYS_MODULE",    "SYS_RAWIO",        "SYS_CHROOT",      "SYS_PTRACE",
      "SYS_PACCT",     "SYS_ADMIN",        "SYS_BOOT",        "SYS_NICE",
      "SYS_RESOURCE",  "SYS_TIME",         "SYS_TTY_CONFIG",  "MKNOD",
      "LEASE",         "AUDIT_WRITE",      "AUDIT_CONTROL",   "SETFCAP",
      "MAC_OVERRIDE",  "MAC_ADMIN",        "SYSLOG",          "WAKE_ALARM",
      "BLOCK_SUSPEND", "AUDIT_READ",       "PERFMON",         "BPF",
      "CHECKPOINT_RESTORE"};
  constexpr std::string_view kPrefix = "CAP_";
  if (name.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  name.remove_prefix(kPrefix.size());
  for (int i = 0; i <= kCapLastCap; i++) {
    if (kNames[i] == name) return i;
  }
  return std::nullopt;
}

void Credentials::FixupAfterUidChange(const Credentials& old) {
  if (securebits & kSecbitNoSetuidFixup) return;
  const uint32_t root = RootUid();
  if (AnyRoot(root, old.ruid, old.euid, old.suid) && !AnyRoot(root, ruid, euid, suid)) {
    if (!(securebits & kSecbitKeepCaps)) {
      cap_permitted = 0;
      cap_effective = 0;
    }
    // Programs written before ambient capabilities expect setresuid to a non-root uid and
    // execve to drop everything: ambient goes even with KEEP_CAPS.
    cap_ambient = 0;
  }
  if (old.euid == root && euid != root) cap_effective = 0;
  if (old.euid != root && euid == root) cap_effective = cap_permitted;
}

void Credentials::FixupAfterFsuidChange(const Credentials& old) {
  if (securebits & kSecbitNoSetuidFixup) return;
  const uint32_t root = RootUid();
  if (old.fsuid == root && fsuid != root) cap_effective &= ~kCapFsSet;
  if (old.fsuid != root && fsuid == root) cap_effective |= cap_permitted & kCapFsSet;
}

bool Credentials::TransformForExec(const ExecFileIds& file, bool unsafe_trace) {
  const uint64_t old_permitted = cap_permitted;
  const uint32_t old_euid = euid;
  const bool may_setuid = CapableInOwn(CAP_SETUID);  // asked of the credentials before exec
  // A set-ID program's ids; no_new_privs ignores the bits altogether.
  if (!no_new_privs) {
    if (file.uid) euid = *file.uid;
    if (file.gid) egid = *file.gid;
  }
  // Set-ID execution as secure mode sees it: the effective ids differ from the real ones.
  const bool setid = euid != ruid || egid != rgid;
  // Whether execve changes the ids: another effective uid, or an effective gid the process
  // is not in (Linux's in_group_p; since 6.15: earlier kernels used `setid` here, clearing
  // ambient and downgrading no_new_privs programs that merely run with split ids).
  const bool id_changed = euid != old_euid || !InGroup(egid);
  // Without file capabilities the file's sets are empty: P'(permitted) starts empty and
  // only root's rules and the ambient set add to it.
  uint64_t permitted = 0;
  bool effective = false;
  const uint32_t root = RootUid();
  if (!(securebits & kSecbitNoroot)) {
    if (euid == root || ruid == root) permitted = cap_bounding | cap_inheritable;
    effective = euid == root;
  }
  // no_new_privs, or a tracer that may not watch a privileged program: execve may not gain
  // anything (Linux's LSM_UNSAFE_* downgrade). A caller with CAP_SETUID keeps the ids
  // under a tracer, as it could have taken them itself.
  if ((no_new_privs || unsafe_trace) && (id_changed || !IsSubset(permitted, old_permitted))) {
    if (no_new_privs || !may_setuid) {
      euid = ruid;
      egid = rgid;
    }
    permitted &= old_permitted;
  }
  suid = fsuid = euid;
  sgid = fsgid = egid;
  if (id_changed) cap_ambient = 0;
  cap_permitted = permitted | cap_ambient;
  cap_effective = effective ? cap_permitted : cap_ambient;
  securebits &= ~kSecbitKeepCaps;
  return setid || (ruid != root && (effective || !IsSubset(cap_permitted, cap_ambient)));
}

Result<void> Credentials::SetCapabilities(uint64_t effective, uint64_t permitted,
                                          uint64_t inheritable) {
  // Without CAP_SETPCAP a task may only move permitted capabilities into inheritable.
  if (!CapableInOwn(CAP_SETPCAP) && !IsSubset(inheritable, cap_inheritable | cap_permitted)) {
    return Errno(EPERM);
  }
  if (!IsSubset(inheritable, cap_inheritable | cap_bounding)) return Errno(EPERM);
  if (!IsSubset(permitted, cap_permitted)) return Errno(EPERM);
  if (!IsSubset(effective, permitted)) return Errno(EPERM);
  cap_effective = effective;
  cap_permitted = permitted;
  cap_inheritable = inheritable;
  cap_ambient &= permitted & inheritable;
  return Ok();
}

bool IsCapabilityPrctl(int option) {
  switch (option) {
    case PR_CAPBSET_READ:
    case PR_CAPBSET_DROP:
    case PR_CAP_AMBIENT:
    case PR_GET_KEEPCAPS:
    case PR_SET_KEEPCAPS:
    case PR_GET_SECUREBITS:
    case PR_SET_SECUREBITS:
      return true;
    default:
      return false;
  }
}

Result<uint64_t> Credentials::Prctl(int option, uint64_t a2, uint64_t a3, uint64_t a4,
                                    uint64_t a5) {
  switch (option) {
    case PR_CAPBSET_READ:
      if (!CapValid(a2)) return Errno(EINVAL);
      return (cap_bounding & CapBit(static_cast<int>(a2))) != 0;
    case PR_CAPBSET_DROP:
      if (!CapableInOwn(CAP_SETPCAP)) return Errno(EPERM);
      if (!CapValid(a2)) return Errno(EINVAL);
      cap_bounding &= ~CapBit(static_cast<int>(a2));
      return 0;
    case PR_CAP_AMBIENT:
      return CapAmbient(*this, a2, a3, a4, a5);
    case PR_GET_KEEPCAPS:
      return (securebits & kSecbitKeepCaps) != 0;
    case PR_SET_KEEPCAPS:
      if (a2 > 1) return Errno(EINVAL);
      if (securebits & kSecbitKeepCapsLocked) return Errno(EPERM);
      securebits = a2 ? (securebits | kSecbitKeepCaps) : (securebits & ~kSecbitKeepCaps);
      return 0;
    case PR_GET_SECUREBITS:
      return securebits;
    case PR_SET_SECUREBITS:
      return SetSecurebits(*this, a2);
    default:
      return Errno(EINVAL);
  }
}

}  // namespace sentry::kernel
