// A process's credentials: user and group ids, supplementary groups, and the capability model
// of capabilities(7) (the five sets, securebits, no_new_privs).
//
// Ids are kernel ids (the sandbox's first user namespace's); `user_ns` is the namespace the
// process is in (null: the first), through which it sees and names ids (user_namespace.h).
// execve honours set-user-ID and set-group-ID files (ExecFileIds) but not file capabilities:
// our VFS stores no security.capability xattrs, so execve follows the "root uid" rules alone,
// root being the id that uid 0 of `user_ns` maps to. Capability numbers and masks are Linux's.
#pragma once

#include <linux/capability.h>

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "sentry/base/errno.h"
#include "sentry/kernel/user_namespace.h"

namespace sentry::kernel {

// The highest capability number this kernel knows (CAP_CHECKPOINT_RESTORE, Linux 5.9 to 6.x):
// what /proc/sys/kernel/cap_last_cap reports and what PR_CAPBSET_READ accepts.
inline constexpr int kCapLastCap = 40;
inline constexpr uint64_t kCapFullSet = (uint64_t{1} << (kCapLastCap + 1)) - 1;

constexpr uint64_t CapBit(int cap) { return uint64_t{1} << cap; }
constexpr bool CapValid(uint64_t cap) { return cap <= kCapLastCap; }

// The capabilities whose effective bits follow fsuid to and from 0 (Linux's CAP_FS_SET).
inline constexpr uint64_t kCapFsSet = CapBit(0) /*CHOWN*/ | CapBit(1) /*DAC_OVERRIDE*/ |
                                      CapBit(2) /*DAC_READ_SEARCH*/ | CapBit(3) /*FOWNER*/ |
                                      CapBit(4) /*FSETID*/ | CapBit(9) /*LINUX_IMMUTABLE*/ |
                                      CapBit(27) /*MKNOD*/ | CapBit(32) /*MAC_OVERRIDE*/;

// securebits(7) flags and their locks (the lock of bit n is bit n+1).
inline constexpr uint32_t kSecbitNoroot = 1 << 0;
inline constexpr uint32_t kSecbitNoSetuidFixup = 1 << 2;
inline constexpr uint32_t kSecbitKeepCaps = 1 << 4;
inline constexpr uint32_t kSecbitKeepCapsLocked = 1 << 5;
inline constexpr uint32_t kSecbitNoCapAmbientRaise = 1 << 6;
inline constexpr uint32_t kSecbitAllBits = 0x55;   // the four flags above (Linux 6.1)
inline constexpr uint32_t kSecbitAllLocks = 0xaa;  // their locks

// The five capability sets a process is started with (an OCI process.capabilities), as
// masks of capability numbers.
struct CapabilitySets {
  uint64_t bounding = 0, effective = 0, permitted = 0, inheritable = 0, ambient = 0;
};

// The number of the capability called `name` ("CAP_CHOWN" -> 0), up to kCapLastCap.
std::optional<int> CapabilityByName(std::string_view name);

// The ids a set-user-ID / set-group-ID program gives its process (Linux's bprm_fill_uid):
// the owner when S_ISUID is set, the group when S_ISGID and S_IXGRP are, both kernel ids;
// nothing when the file lives on a nosuid mount or its owner or group has no mapping in the
// caller's user namespace (the loader decides, see loader/exec.cc).
struct ExecFileIds {
  std::optional<uint32_t> uid;
  std::optional<uint32_t> gid;
};

struct Credentials {
  uint32_t ruid = 0, euid = 0, suid = 0, fsuid = 0;
  uint32_t rgid = 0, egid = 0, sgid = 0, fsgid = 0;
  std::vector<uint32_t> groups;

  uint64_t cap_inheritable = 0;
  uint64_t cap_permitted = kCapFullSet;
  uint64_t cap_effective = kCapFullSet;
  uint64_t cap_bounding = kCapFullSet;
  uint64_t cap_ambient = 0;
  uint32_t securebits = 0;
  bool no_new_privs = false;
  UserNsRef user_ns;  // null: the sandbox's first user namespace

  // Linux's cap_capable: `cap` over objects owned by user namespace `ns` (null: the first).
  // The effective bit in one's own namespace; everything in a descendant namespace whose
  // creator (owner) has this euid and whose parent is one's own, or above that.
  bool CapableIn(const UserNamespace* ns, int cap) const;
  // Capable over the sandbox's first user namespace (Linux's capable()): what privileged
  // operations on sandbox-wide objects need (files, other users' processes, the clock...).
  bool HasCapability(int cap) const { return CapableIn(nullptr, cap); }
  // Capable in the process's own user namespace (ns_capable(current_user_ns())): set*id,
  // and making namespaces.
  bool CapableInOwn(int cap) const { return CapableIn(user_ns.get(), cap); }
  // The kernel uid of `user_ns`'s root (uid 0 there), or an id no process has when 0 is
  // unmapped: the "root" of the capability rules on set*id and execve.
  uint32_t RootUid() const;
  // Linux's in_group_p: the fs gid or a supplementary group.
  bool InGroup(uint32_t gid) const;

  // Credentials of the sandbox's first process: `uid`/`gid` everywhere, and the sets a
  // process of that uid has after execve from a full-capability parent. With `caps`, the
  // parent had those sets instead (and `no_new_privs`), as runc leaves a container's init
  // just before it executes the entry point: ambient is cut to permitted & inheritable as
  // Linux's PR_CAP_AMBIENT_RAISE would, and effective to permitted.
  static Credentials Initial(uint32_t uid, uint32_t gid, const CapabilitySets* caps = nullptr,
                             bool no_new_privs = false);

  // Adjusts the capability sets after a setuid/setreuid/setresuid call turned `old` into
  // *this (capabilities(7), "Effect of user ID changes on capabilities").
  void FixupAfterUidChange(const Credentials& old);
  // The same for setfsuid: the file-system capabilities follow fsuid leaving or reaching 0.
  void FixupAfterFsuidChange(const Credentials& old);

  // execve (capabilities(7), "Transformation of capabilities during execve()") of a program
  // whose set-ID bits give `file` (none: a plain program). `unsafe_trace`: the caller is
  // ptraced by a tracer without CAP_SYS_PTRACE over its namespace, which, like
  // no_new_privs, keeps execve from raising the ids or the permitted set (Linux's
  // LSM_UNSAFE_PTRACE downgrade; a tracer may not watch a set-ID program it could not
  // trace). Returns whether the program runs in secure mode (AT_SECURE).
  bool TransformForExec(const ExecFileIds& file = {}, bool unsafe_trace = false);

  // Whether replacing `old` by *this makes the process non-dumpable and clears its
  // parent-death signal, as Linux's commit_creds: another effective or fs id, or a permitted
  // set that grew.
  bool UnsettlesDumpable(const Credentials& old) const {
    return euid != old.euid || egid != old.egid || fsuid != old.fsuid || fsgid != old.fsgid ||
           (cap_permitted & ~old.cap_permitted) != 0;
  }

  // capset(2) of the calling task's own sets: EPERM unless the new sets respect the old ones.
  Result<void> SetCapabilities(uint64_t effective, uint64_t permitted, uint64_t inheritable);

  // prctl(2) options of the capability model (PR_CAPBSET_*, PR_CAP_AMBIENT, *_KEEPCAPS,
  // *_SECUREBITS); `option` is one of them. Values are prctl's return values.
  Result<uint64_t> Prctl(int option, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5);
};

// Whether prctl `option` belongs to Credentials::Prctl.
bool IsCapabilityPrctl(int option);

}  // namespace sentry::kernel
