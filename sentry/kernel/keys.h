// Kernel key retention (keyrings(7)): keys and keyrings of the sandbox, reached through
// add_key(2), request_key(2) and keyctl(2) (syscalls/sys_keys.cc).
//
// Key types: "keyring", "user" and "logon". No upcall: request_key(2) never runs a
// /sbin/request-key helper, so construction fails as on a Linux without one. Keys live while a
// keyring links them or a task holds them as one of its keyrings (shared_ptr); the table keeps
// only weak references by serial number, so an unreachable key is gone (ENOKEY) at once, as
// after Linux's garbage collection.
//
// Lock order: KeyTable::mu_ is a leaf, taken after Kernel::mu_ when both are needed. It
// guards every key's state and every task's keyring pointers (TaskKeyrings).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "sentry/base/errno.h"
#include "sentry/kernel/credentials.h"

namespace sentry::kernel {

// Permission bits of a key: one byte per class (possessor, user, group, other).
inline constexpr uint32_t kKeyView = 0x01, kKeyRead = 0x02, kKeyWrite = 0x04, kKeySearch = 0x08,
                          kKeyLink = 0x10, kKeySetattr = 0x20, kKeyAll = 0x3f;

enum class KeyType { kKeyring, kUser, kLogon };

// The per-user quota, Linux's defaults (/proc/sys/kernel/keys/{maxkeys,maxbytes} and their
// root_* twins for uid 0; read-only here).
inline constexpr uint32_t kKeyMaxKeys = 200, kKeyRootMaxKeys = 1000000;
inline constexpr uint64_t kKeyMaxBytes = 20000, kKeyRootMaxBytes = 25000000;

// What a user has used of the quota.
struct KeyQuota {
  uint32_t keys = 0;
  uint64_t bytes = 0;
};

struct Key {
  int32_t serial = 0;
  KeyType type = KeyType::kUser;
  std::string description;
  uint32_t uid = 0;
  uint32_t gid = 0;  // kNoGid: matches no group
  uint32_t perm = 0;
  std::string payload;                      // user and logon keys
  std::vector<std::shared_ptr<Key>> links;  // keyrings
  bool revoked = false;
  bool invalidated = false;
  bool restricted = false;  // a keyring that refuses new links (KEYCTL_RESTRICT_KEYRING)
  absl::Time expiry = absl::InfiniteFuture();
  bool in_quota = false;
  uint64_t charged = 0;  // bytes charged to `uid`'s quota when in_quota
};
using KeyRef = std::shared_ptr<Key>;

// A task's keyrings (Linux keeps them in the credentials). Guarded by KeyTable::mu_.
struct TaskKeyrings {
  KeyRef thread;           // not inherited; dropped by execve
  KeyRef session;          // inherited over clone and execve
  int reqkey_default = 0;  // KEYCTL_SET_REQKEY_KEYRING's KEY_REQKEY_DEFL_*
};

// What a lookup or search needs to know about the calling task.
struct KeyCaller {
  const Credentials* creds;
  TaskKeyrings* task;
  KeyRef* process;  // the thread group's process keyring slot
};

class KeyTable {
 public:
  static constexpr uint32_t kNoGid = 0xffffffff;

  absl::Mutex& mu() ABSL_LOCK_RETURNED(mu_) { return mu_; }

  // A new key charged to `uid`'s quota (EDQUOT past it) unless `in_quota` is false; the
  // charge goes back when the last reference to the key does.
  Result<KeyRef> Create(KeyType type, std::string description, std::string payload, uint32_t uid,
                        uint32_t gid, uint32_t perm, bool in_quota)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Replaces a key's payload, re-charging the quota (EDQUOT past it).
  Result<void> SetPayload(Key& k, std::string payload) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The live key `serial`, or null.
  KeyRef Find(int32_t serial) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // The special keyring `id` (KEY_SPEC_*) or key `serial` as Linux's lookup_user_key sees it:
  // special keyrings are created when `create` (or, for the session keyring, replaced by the
  // user session keyring); the result is checked against `need` permission bits. `possessed`
  // tells whether the caller possesses the key. `partial` skips the revoked/expired checks
  // (unlink, invalidate...).
  Result<KeyRef> Lookup(const KeyCaller& c, int32_t id, bool create, uint32_t need,
                        bool* possessed = nullptr, bool check_state = true)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // The permission check of Linux's key_task_permission.
  static bool Permitted(const Key& k, const Credentials& c, bool possessed, uint32_t need);
  // Whether the caller's keyrings reach `k` (possession).
  bool Possessed(const KeyCaller& c, const Key& k) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Searches `ring` (and the keyrings it links, to depth 6) for a live key of `type` and
  // `description` that the caller may search; ENOKEY if none, or the error of a match that
  // could not be returned (EKEYREVOKED, EKEYEXPIRED, EACCES).
  Result<KeyRef> Search(const KeyCaller& c, const KeyRef& ring, bool possessed, KeyType type,
                        const std::string& description) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // request_key's search of the caller's thread, process and session keyrings (expired keys
  // are skipped silently).
  Result<KeyRef> SearchProcessKeyrings(const KeyCaller& c, KeyType type,
                                       const std::string& description)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Links `k` into `ring`, displacing a key of the same type and description (EDEADLK for a
  // cycle, ELOOP past the nesting depth, EPERM for a restricted keyring, EDQUOT...).
  Result<void> Link(const KeyRef& ring, const KeyRef& k) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // ENOENT if `k` is not in `ring`.
  Result<void> Unlink(Key& ring, const Key& k) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // A new anonymous (or named) session keyring for the caller.
  Result<KeyRef> JoinSession(const KeyCaller& c, const std::string* name)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Installs the thread or process keyring if missing (KEYCTL_SET_REQKEY_KEYRING).
  Result<KeyRef> ThreadKeyring(const KeyCaller& c, bool create) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Result<KeyRef> ProcessKeyring(const KeyCaller& c, bool create) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Linux's key_validate: EKEYREVOKED, EKEYEXPIRED or ENOKEY (invalidated).
  static Result<void> Validate(const Key& k);
  // "type;uid;gid;perm;description" (KEYCTL_DESCRIBE).
  static std::string Describe(const Key& k);
  static const char* TypeName(KeyType t);

 private:
  struct UserKeyrings {
    KeyRef user, session;
  };
  UserKeyrings& ForUser(uint32_t uid) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool Reaches(const Key& from, const Key& to, int depth) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // `skipped` collects the errno of a match that could not be returned.
  Result<KeyRef> SearchIn(const KeyCaller& c, const KeyRef& ring, bool possessed, KeyType type,
                          const std::string& description, int depth, bool skip_expired,
                          int* skipped) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Quota use per uid. Its own leaf lock: a key's deleter gives its charge back, and the last
  // reference may go anywhere (under mu_ in Unlink, or when a task ends).
  struct QuotaBook {
    absl::Mutex mu;
    std::map<uint32_t, KeyQuota> used ABSL_GUARDED_BY(mu);
    // Charges (or with negative numbers, releases) `keys` and `bytes`; EDQUOT past the limit.
    Result<void> Charge(uint32_t uid, int64_t keys, int64_t bytes);
  };

  absl::Mutex mu_;
  const std::shared_ptr<QuotaBook> quota_ = std::make_shared<QuotaBook>();
  int32_t next_serial_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<int32_t, std::weak_ptr<Key>> keys_ ABSL_GUARDED_BY(mu_);
  std::map<uint32_t, UserKeyrings> users_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sentry::kernel
