// User namespaces inside the sandbox (user_namespaces(7)). Credentials keep *kernel* ids:
// the ids of the sandbox's first user namespace, which is the identity (null here). A task in
// a child namespace sees every id through its namespace's uid_map/gid_map (unmapped ones as
// the overflow id 65534), and the ids it passes in are mapped back (EINVAL when unmapped).
//
// Capabilities are relative to a namespace: a task has its effective set in its own
// namespace, and every capability in a namespace its euid owns whose parent is its own
// (Linux's cap_capable). See Credentials::CapableIn.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "sentry/base/errno.h"

namespace sentry::kernel {

struct Credentials;

inline constexpr uint32_t kOverflowId = 65534;
// The deepest level whose namespace may still have children, as Linux: 33 namespaces nest
// below the first; the next is ENOSPC (EUSERS before Linux 4.9).
inline constexpr int kMaxUserNsDepth = 32;

class UserNamespace;
using UserNsRef = std::shared_ptr<const UserNamespace>;

class UserNamespace {
 public:
  // One line of a map: ids [first, first+count) of this namespace are [lower, lower+count)
  // of the parent (kept here as kernel ids).
  struct Extent {
    uint32_t first = 0;
    uint32_t lower = 0;  // kernel id
    uint32_t count = 0;
  };

  UserNamespace(UserNsRef parent, uint32_t owner, uint32_t group, uint64_t ino,
                bool setgroups_allowed);

  const UserNamespace* parent() const { return parent_.get(); }
  const UserNsRef& parent_ref() const { return parent_; }
  int level() const { return level_; }
  uint64_t ino() const { return ino_; }
  uint32_t owner() const { return owner_; }  // the creator's euid, a kernel id

  // Kernel id -> id here, or nullopt; and back.
  std::optional<uint32_t> FromKernel(bool gid, uint32_t kid) const;
  std::optional<uint32_t> ToKernel(bool gid, uint32_t id) const;
  bool setgroups_allowed() const;
  bool gid_map_written() const;

  // /proc/PID/{uid,gid}_map text: lower ids shown in `reader`'s namespace when it is the
  // parent, else in the parent's (what Linux shows to a reader in this namespace or its
  // parent, the only ones that can write).
  std::string MapText(bool gid, const UserNamespace* reader) const;
  // A write of /proc/PID/{uid,gid}_map by `writer` (whose credentials opened and write the
  // file), with Linux's rules: once, by a task of this namespace or its parent, with
  // CAP_SYS_ADMIN here; one line mapping the writer's own euid (egid, after setgroups
  // "deny") needs nothing more, anything else CAP_SETUID/CAP_SETGID over the parent.
  Result<void> WriteMap(bool gid, const std::string& text, const Credentials& writer);
  // /proc/PID/setgroups: "allow" or "deny".
  std::string SetgroupsText() const;
  Result<void> WriteSetgroups(const std::string& text, const Credentials& writer);

 private:
  const UserNsRef parent_;
  const int level_;
  const uint32_t owner_;
  const uint32_t group_;
  const uint64_t ino_;
  mutable absl::Mutex mu_;
  std::vector<Extent> uid_map_ ABSL_GUARDED_BY(mu_);
  std::vector<Extent> gid_map_ ABSL_GUARDED_BY(mu_);
  bool uid_written_ ABSL_GUARDED_BY(mu_) = false;
  bool gid_written_ ABSL_GUARDED_BY(mu_) = false;
  bool setgroups_allowed_ ABSL_GUARDED_BY(mu_) = true;
};

// `ns` null is the sandbox's first namespace, where every id is itself.
std::optional<uint32_t> FromKernelId(const UserNamespace* ns, bool gid, uint32_t kid);
std::optional<uint32_t> ToKernelId(const UserNamespace* ns, bool gid, uint32_t id);
// What a task of `ns` sees for kernel id `kid`: the overflow id when unmapped.
inline uint32_t ShowId(const UserNamespace* ns, bool gid, uint32_t kid) {
  return FromKernelId(ns, gid, kid).value_or(kOverflowId);
}
// The inode number of the first namespace's nsfs file (PROC_USER_INIT_INO).
inline constexpr uint64_t kInitUserNsIno = 0xEFFFFFFD;
inline uint64_t UserNsIno(const UserNamespace* ns) { return ns ? ns->ino() : kInitUserNsIno; }

// A new namespace owned by `creator` (unshare/clone with CLONE_NEWUSER): ENOSPC past the
// depth limit, EPERM when the creator's euid or egid has no mapping in its own namespace.
Result<UserNsRef> NewUserNamespace(const Credentials& creator);

}  // namespace sentry::kernel
