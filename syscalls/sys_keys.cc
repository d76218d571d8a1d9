// Key retention: add_key, request_key, keyctl. The keys live in sentry/kernel/keys.cc.
#include <linux/keyctl.h>

#include <algorithm>

#include "sentry/kernel/keys.h"
#include "syscalls/common.h"

namespace sentry::syscalls {
namespace {

using kernel::KeyRef;
using kernel::KeyTable;
using kernel::KeyType;

constexpr size_t kMaxDescription = 4096;           // KEY_MAX_DESC_SIZE
constexpr uint64_t kMaxPayload = 1024 * 1024 - 1;  // add_key's and KEYCTL_UPDATE's bound
constexpr size_t kMaxUserPayload = 32767;          // the user and logon types' bound
constexpr uint32_t kPermMask = 0x3f3f3f3f;         // KEY_POS_ALL | ... | KEY_OTH_ALL
constexpr uint32_t kDefaultPerm =
    (kernel::kKeyView | kernel::kKeySearch | kernel::kKeyLink | kernel::kKeySetattr) << 24 |
    kernel::kKeyView << 16;

kernel::Credentials CredsOf(Task& t) {
  absl::MutexLock l(&t.kernel().mu());
  return t.tg().creds;
}

// One key operation: the caller's credentials (copied under Kernel::mu_) and keyring slots,
// with the key table locked for as long as it lives.
class KeyCall {
 public:
  explicit KeyCall(Task& t)
      : creds(CredsOf(t)),
        keys(t.kernel().keys()),
        lock_(&keys.mu()),
        caller_{&creds, &t.keyrings_, &t.tg().process_keyring} {}

  // KeyTable::Lookup for this caller.
  Result<KeyRef> Lookup(int32_t id, bool create, uint32_t need, bool* possessed = nullptr,
                        bool check_state = true) {
    return keys.Lookup(caller_, id, create, need, possessed, check_state);
  }
  const kernel::KeyCaller& caller() const { return caller_; }

  const kernel::Credentials creds;
  KeyTable& keys;

 private:
  absl::MutexLock lock_;
  const kernel::KeyCaller caller_;
};

// A key type name as key_get_type_from_user takes it: EINVAL if empty or 32 bytes or more,
// EPERM for the internal types (a leading '.').
Result<std::string> CopyInType(Task& t, GuestAddr addr) {
  auto s = t.CopyInString(addr, 32);
  if (!s.ok()) return Errno(s.error().code() == ENAMETOOLONG ? EINVAL : s.error().code());
  if (s->empty()) return Errno(EINVAL);
  if ((*s)[0] == '.') return Errno(EPERM);
  return s;
}

Result<std::string> CopyInDescription(Task& t, GuestAddr addr) {
  auto s = t.CopyInString(addr, kMaxDescription);
  if (!s.ok() && s.error().code() == ENAMETOOLONG) return Errno(EINVAL);
  return s;
}

std::optional<KeyType> TypeByName(const std::string& name) {
  if (name == "keyring") return KeyType::kKeyring;
  if (name == "user") return KeyType::kUser;
  if (name == "logon") return KeyType::kLogon;
  return std::nullopt;
}

// The type's own checks of a new payload and description (Linux's preparse and vet hooks).
Result<void> CheckPayload(KeyType type, const std::string& description, size_t len) {
  if (type == KeyType::kKeyring) return len == 0 ? Result<void>{} : Errno(EINVAL);
  if (len == 0 || len > kMaxUserPayload) return Errno(EINVAL);
  // A logon key's description names its service: "service:name".
  if (type == KeyType::kLogon) {
    size_t colon = description.find(':');
    if (colon == std::string::npos || colon == 0) return Errno(EINVAL);
  }
  return {};
}

Result<std::string> CopyInPayload(Task& t, GuestAddr addr, uint64_t len) {
  std::string p(len, '\0');
  if (len != 0) {
    SENTRY_TRY(t.CopyInBytes(addr, {reinterpret_cast<uint8_t*>(p.data()), p.size()}));
  }
  return p;
}

// Copies `data` out as Linux's keyctl read calls do: only into a buffer that takes all of
// it; returns its length either way.
Result<uint64_t> CopyOutIfFits(Task& t, GuestAddr buf, uint64_t buflen, const std::string& data) {
  if (!buf.IsNull() && buflen >= data.size() && !data.empty()) {
    SENTRY_TRY(t.CopyOutBytes(buf, {reinterpret_cast<const uint8_t*>(data.data()), data.size()}));
  }
  return data.size();
}

Result<uint64_t> KeyctlRead(Task& t, int32_t id, GuestAddr buf, uint64_t buflen) {
  std::string data;
  {
    KeyCall call(t);
    bool possessed = false;
    KeyRef k = SENTRY_TRY(call.Lookup(id, false, 0, &possessed, false));
    // Readable with READ permission, or when possessed (found by a search from our keyrings).
    if (!KeyTable::Permitted(*k, call.creds, possessed, kernel::kKeyRead) && !possessed) {
      return Errno(EACCES);
    }
    if (k->type == KeyType::kLogon) return Errno(EOPNOTSUPP);  // logon keys are never read
    SENTRY_TRY(KeyTable::Validate(*k));
    if (k->type != KeyType::kKeyring) {
      data = k->payload;
    } else {
      // A keyring reads as whole serial numbers.
      if (!buf.IsNull() && buflen % sizeof(int32_t) != 0) return Errno(EINVAL);
      for (const KeyRef& l : k->links) {
        int32_t s = l->serial;
        data.append(reinterpret_cast<const char*>(&s), sizeof(s));
      }
    }
  }
  return CopyOutIfFits(t, buf, buflen, data);
}

Result<uint64_t> KeyctlDescribe(Task& t, int32_t id, GuestAddr buf, uint64_t buflen,
                                bool security) {
  std::string text;
  {
    KeyCall call(t);
    KeyRef k = SENTRY_TRY(call.Lookup(id, false, kernel::kKeyView));
    // No security module labels keys here: the label is the empty string.
    text = security ? std::string() : KeyTable::Describe(*k);
  }
  text.push_back('\0');
  return CopyOutIfFits(t, buf, buflen, text);
}

Result<uint64_t> KeyctlJoin(Task& t, GuestAddr name_addr) {
  std::optional<std::string> name;
  if (!name_addr.IsNull()) {
    name = SENTRY_TRY(CopyInDescription(t, name_addr));
    if (name->empty()) return Errno(EINVAL);
    if ((*name)[0] == '.') return Errno(EPERM);
  }
  KeyCall call(t);
  KeyRef k = SENTRY_TRY(call.keys.JoinSession(call.caller(), name ? &*name : nullptr));
  return static_cast<uint64_t>(k->serial);
}

Result<uint64_t> KeyctlUpdate(Task& t, int32_t id, GuestAddr payload, uint64_t len) {
  if (len > kMaxPayload) return Errno(EINVAL);
  std::string p = SENTRY_TRY(CopyInPayload(t, payload, len));
  KeyCall call(t);
  KeyRef k = SENTRY_TRY(call.Lookup(id, true, kernel::kKeyWrite));
  if (k->type == KeyType::kKeyring) return Errno(EOPNOTSUPP);  // keyrings have no update
  SENTRY_TRY(CheckPayload(k->type, k->description, len));
  SENTRY_TRY(call.keys.SetPayload(*k, std::move(p)));
  return 0;
}

// REVOKE, INVALIDATE, SET_TIMEOUT and RESTRICT_KEYRING: a change of the key's state.
Result<uint64_t> KeyctlRevoke(Task& t, int32_t id) {
  KeyCall call(t);
  auto k = call.Lookup(id, false, kernel::kKeyWrite);
  if (!k.ok() && k.error().code() == EACCES) {
    k = call.Lookup(id, false, kernel::kKeySetattr);  // either right revokes
  }
  SENTRY_TRY(k);
  (*k)->revoked = true;
  return 0;
}

Result<uint64_t> KeyctlInvalidate(Task& t, int32_t id) {
  KeyCall call(t);
  KeyRef k = SENTRY_TRY(call.Lookup(id, false, kernel::kKeySearch));
  k->invalidated = true;  // gone for every lookup at once; keyrings skip it
  return 0;
}

Result<uint64_t> KeyctlSetTimeout(Task& t, int32_t id, uint32_t seconds) {
  KeyCall call(t);
  KeyRef k = SENTRY_TRY(call.Lookup(id, true, kernel::kKeySetattr));
  k->expiry = seconds == 0 ? absl::InfiniteFuture() : absl::Now() + absl::Seconds(seconds);
  return 0;
}

Result<uint64_t> KeyctlRestrict(Task& t, int32_t id, GuestAddr type, GuestAddr restriction) {
  KeyCall call(t);
  KeyRef k = SENTRY_TRY(call.Lookup(id, false, kernel::kKeySetattr));
  if (k->type != KeyType::kKeyring) return Errno(ENOTDIR);
  // Only "no more links" exists here: no key type offers a restriction scheme.
  if (!type.IsNull()) return Errno(EOPNOTSUPP);
  if (!restriction.IsNull()) return Errno(EINVAL);
  if (k->restricted) return Errno(EEXIST);
  k->restricted = true;
  return 0;
}

Result<uint64_t> KeyctlChown(Task& t, int32_t id, uint32_t uid, uint32_t gid) {
  KeyCall call(t);
  KeyRef k = SENTRY_TRY(call.Lookup(id, true, kernel::kKeySetattr));
  bool admin = call.creds.HasCapability(21 /*CAP_SYS_ADMIN*/);
  constexpr uint32_t kUnchanged = 0xffffffff;
  if (uid != kUnchanged && uid != k->uid && !admin) return Errno(EACCES);
  if (gid != kUnchanged && gid != k->gid && !admin &&
      !(k->uid == call.creds.fsuid && call.creds.InGroup(gid))) {
    return Errno(EACCES);
  }
  if (uid != kUnchanged) k->uid = uid;
  if (gid != kUnchanged) k->gid = gid;
  return 0;
}

Result<uint64_t> KeyctlSetPerm(Task& t, int32_t id, uint32_t perm) {
  if (perm & ~kPermMask) return Errno(EINVAL);
  KeyCall call(t);
  KeyRef k = SENTRY_TRY(call.Lookup(id, true, kernel::kKeySetattr));
  if (k->uid != call.creds.fsuid && !call.creds.HasCapability(21 /*CAP_SYS_ADMIN*/)) {
    return Errno(EACCES);
  }
  k->perm = perm;
  return 0;
}

Result<uint64_t> KeyctlClear(Task& t, int32_t id) {
  KeyCall call(t);
  KeyRef k = SENTRY_TRY(call.Lookup(id, true, kernel::kKeyWrite));
  if (k->type != KeyType::kKeyring) return Errno(ENOTDIR);
  k->links.clear();
  return 0;
}

Result<uint64_t> KeyctlLink(Task& t, int32_t id, int32_t ring_id) {
  KeyCall call(t);
  KeyRef ring = SENTRY_TRY(call.Lookup(ring_id, true, kernel::kKeyWrite));
  KeyRef k = SENTRY_TRY(call.Lookup(id, true, kernel::kKeyLink));
  SENTRY_TRY(call.keys.Link(ring, k));
  return 0;
}

Result<uint64_t> KeyctlUnlink(Task& t, int32_t id, int32_t ring_id) {
  KeyCall call(t);
  KeyRef ring = SENTRY_TRY(call.Lookup(ring_id, false, kernel::kKeyWrite));
  // Unlinking needs nothing of the key itself: a revoked or expired key can be unlinked.
  KeyRef k = SENTRY_TRY(call.Lookup(id, false, 0, nullptr, false));
  SENTRY_TRY(call.keys.Unlink(*ring, *k));
  return 0;
}

Result<uint64_t> KeyctlMove(Task& t, int32_t id, int32_t from_id, int32_t to_id, unsigned flags) {
  if (flags & ~KEYCTL_MOVE_EXCL) return Errno(EINVAL);
  KeyCall call(t);
  KeyRef k = SENTRY_TRY(call.Lookup(id, true, kernel::kKeyLink));
  KeyRef from = SENTRY_TRY(call.Lookup(from_id, false, kernel::kKeyWrite));
  KeyRef to = SENTRY_TRY(call.Lookup(to_id, true, kernel::kKeyWrite));
  if (from->type != KeyType::kKeyring || to->type != KeyType::kKeyring) return Errno(ENOTDIR);
  auto in_from = std::find(from->links.begin(), from->links.end(), k);
  if (in_from == from->links.end()) return Errno(ENOENT);
  if (flags & KEYCTL_MOVE_EXCL) {
    for (const KeyRef& o : to->links) {
      if (o != k && o->type == k->type && o->description == k->description) {
        return Errno(EEXIST);
      }
    }
  }
  SENTRY_TRY(call.keys.Link(to, k));
  SENTRY_TRY(call.keys.Unlink(*from, *k));
  return 0;
}

Result<uint64_t> KeyctlSearch(Task& t, int32_t ring_id, GuestAddr type_addr, GuestAddr desc_addr,
                              int32_t dest_id) {
  std::string type_name = SENTRY_TRY(CopyInType(t, type_addr));
  std::string desc = SENTRY_TRY(CopyInDescription(t, desc_addr));
  KeyCall call(t);
  bool possessed = false;
  KeyRef ring = SENTRY_TRY(call.Lookup(ring_id, false, kernel::kKeySearch, &possessed));
  KeyRef dest;
  if (dest_id != 0) dest = SENTRY_TRY(call.Lookup(dest_id, true, kernel::kKeyWrite));
  std::optional<KeyType> type = TypeByName(type_name);
  if (!type) return Errno(ENOKEY);
  KeyRef k = SENTRY_TRY(call.keys.Search(call.caller(), ring, possessed, *type, desc));
  if (dest) {
    if (!KeyTable::Permitted(*k, call.creds, possessed, kernel::kKeyLink)) return Errno(EACCES);
    SENTRY_TRY(call.keys.Link(dest, k));
  }
  return static_cast<uint64_t>(k->serial);
}

Result<uint64_t> KeyctlSetReqkeyKeyring(Task& t, int value) {
  KeyCall call(t);
  int old = t.keyrings_.reqkey_default;
  switch (value) {
    case KEY_REQKEY_DEFL_NO_CHANGE:
      return static_cast<uint64_t>(old);
    case KEY_REQKEY_DEFL_THREAD_KEYRING:
      SENTRY_TRY(call.keys.ThreadKeyring(call.caller(), true));
      break;
    case KEY_REQKEY_DEFL_PROCESS_KEYRING:
      SENTRY_TRY(call.keys.ProcessKeyring(call.caller(), true));
      break;
    case KEY_REQKEY_DEFL_DEFAULT:
    case KEY_REQKEY_DEFL_SESSION_KEYRING:
    case KEY_REQKEY_DEFL_USER_KEYRING:
    case KEY_REQKEY_DEFL_USER_SESSION_KEYRING:
    case KEY_REQKEY_DEFL_REQUESTOR_KEYRING:
      break;
    default:  // the group keyring does not exist, as on Linux
      return Errno(EINVAL);
  }
  t.keyrings_.reqkey_default = value;
  return static_cast<uint64_t>(old);
}

// Gives the caller's session keyring to its parent process (Linux requires the same ids, and
// refuses init).
Result<uint64_t> KeyctlSessionToParent(Task& t) {
  kernel::Kernel& k = t.kernel();
  absl::MutexLock kl(&k.mu());
  kernel::ThreadGroup* parent = t.tg().parent;
  if (parent == nullptr || parent->sentry_init || parent->tgid == 1 || parent->leader == nullptr) {
    return Errno(EPERM);
  }
  const kernel::Credentials& me = t.tg().creds;
  const kernel::Credentials& p = parent->creds;
  if (p.ruid != me.euid || p.euid != me.euid || p.suid != me.euid || p.rgid != me.egid ||
      p.egid != me.egid || p.sgid != me.egid) {
    return Errno(EPERM);
  }
  absl::MutexLock l(&k.keys().mu());
  kernel::KeyCaller caller{&me, &t.keyrings_, &t.tg().process_keyring};
  KeyRef session = SENTRY_TRY(k.keys().Lookup(caller, KEY_SPEC_SESSION_KEYRING, false, 0));
  for (kernel::Task* pt : parent->tasks) pt->keyrings_.session = session;
  return 0;
}

Result<uint64_t> KeyctlCapabilities(Task& t, GuestAddr buf, uint64_t buflen) {
  // What this implementation offers: KEYCTL_CAPABILITIES, INVALIDATE, RESTRICT_KEYRING and
  // MOVE; no persistent keyrings, Diffie-Hellman, public keys, big_key or notifications.
  std::string caps;
  caps.push_back(static_cast<char>(KEYCTL_CAPS0_CAPABILITIES | KEYCTL_CAPS0_INVALIDATE |
                                   KEYCTL_CAPS0_RESTRICT_KEYRING | KEYCTL_CAPS0_MOVE));
  caps.push_back(0);
  // Unlike the other reads, this one copies as much as the buffer takes.
  if (!buf.IsNull() && buflen > 0) {
    size_t n = std::min<uint64_t>(buflen, caps.size());
    SENTRY_TRY(t.CopyOutBytes(buf, {reinterpret_cast<const uint8_t*>(caps.data()), n}));
  }
  return caps.size();
}

}  // namespace

Result<uint64_t> SysAddKey(Task& t, GuestAddr type_addr, GuestAddr desc_addr, GuestAddr payload,
                           uint64_t len, int32_t ring_id) {
  if (len > kMaxPayload) return Errno(EINVAL);
  std::string type_name = SENTRY_TRY(CopyInType(t, type_addr));
  std::string desc;
  if (!desc_addr.IsNull()) {
    desc = SENTRY_TRY(CopyInDescription(t, desc_addr));
    if (!desc.empty() && desc[0] == '.' && type_name.rfind("keyring", 0) == 0) {
      return Errno(EPERM);
    }
  }
  std::string p = SENTRY_TRY(CopyInPayload(t, payload, len));
  KeyCall call(t);
  bool possessed = false;
  KeyRef ring = SENTRY_TRY(call.Lookup(ring_id, true, kernel::kKeyWrite, &possessed));
  std::optional<KeyType> type = TypeByName(type_name);
  if (!type) return Errno(ENODEV);
  if (ring->type != KeyType::kKeyring) return Errno(ENOTDIR);
  SENTRY_TRY(CheckPayload(*type, desc, len));
  if (desc.empty()) return Errno(EINVAL);
  // A key of the same type and description in the keyring is updated instead (keyrings have
  // no update: a new one displaces the old).
  if (*type != KeyType::kKeyring) {
    for (const KeyRef& o : ring->links) {
      if (o->type != *type || o->description != desc || !KeyTable::Validate(*o).ok()) continue;
      if (!KeyTable::Permitted(*o, call.creds, possessed, kernel::kKeyWrite)) return Errno(EACCES);
      SENTRY_TRY(call.keys.SetPayload(*o, std::move(p)));
      return static_cast<uint64_t>(o->serial);
    }
  }
  uint32_t perm = kDefaultPerm;
  if (*type != KeyType::kLogon) perm |= kernel::kKeyRead << 24;  // the types that can be read
  perm |= kernel::kKeyWrite << 24;                               // and updated (or linked to)
  KeyRef k = SENTRY_TRY(
      call.keys.Create(*type, desc, std::move(p), call.creds.fsuid, call.creds.fsgid, perm, true));
  SENTRY_TRY(call.keys.Link(ring, k));
  return static_cast<uint64_t>(k->serial);
}

Result<uint64_t> SysRequestKey(Task& t, GuestAddr type_addr, GuestAddr desc_addr, GuestAddr callout,
                               int32_t dest_id) {
  std::string type_name = SENTRY_TRY(CopyInType(t, type_addr));
  std::string desc = SENTRY_TRY(CopyInDescription(t, desc_addr));
  if (!callout.IsNull()) SENTRY_TRY(t.CopyInString(callout, 1024 * 1024));
  KeyCall call(t);
  KeyRef dest;
  if (dest_id != 0) dest = SENTRY_TRY(call.Lookup(dest_id, true, kernel::kKeyWrite));
  std::optional<KeyType> type = TypeByName(type_name);
  if (!type) return Errno(ENOKEY);
  auto k = call.keys.SearchProcessKeyrings(call.caller(), *type, desc);
  if (!k.ok()) {
    if (k.error().code() != ENOKEY) return k.error();
    // Nothing found: constructing the key would run the request-key helper, which a sandbox
    // never does; Linux fails the same way (ENOENT) when it has no helper to run.
    return Errno(callout.IsNull() ? ENOKEY : ENOENT);
  }
  if (dest) SENTRY_TRY(call.keys.Link(dest, *k));
  return static_cast<uint64_t>((*k)->serial);
}

Result<uint64_t> SysKeyctl(Task& t, int cmd, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5) {
  auto id = static_cast<int32_t>(a2);
  switch (cmd) {
    case KEYCTL_GET_KEYRING_ID: {
      KeyCall call(t);
      KeyRef k = SENTRY_TRY(call.Lookup(id, a3 != 0, kernel::kKeySearch));
      return static_cast<uint64_t>(k->serial);
    }
    case KEYCTL_JOIN_SESSION_KEYRING:
      return KeyctlJoin(t, GuestAddr(a2));
    case KEYCTL_UPDATE:
      return KeyctlUpdate(t, id, GuestAddr(a3), a4);
    case KEYCTL_REVOKE:
      return KeyctlRevoke(t, id);
    case KEYCTL_CHOWN:
      return KeyctlChown(t, id, static_cast<uint32_t>(a3), static_cast<uint32_t>(a4));
    case KEYCTL_SETPERM:
      return KeyctlSetPerm(t, id, static_cast<uint32_t>(a3));
    case KEYCTL_DESCRIBE:
      return KeyctlDescribe(t, id, GuestAddr(a3), a4, false);
    case KEYCTL_CLEAR:
      return KeyctlClear(t, id);
    case KEYCTL_LINK:
      return KeyctlLink(t, id, static_cast<int32_t>(a3));
    case KEYCTL_UNLINK:
      return KeyctlUnlink(t, id, static_cast<int32_t>(a3));
    case KEYCTL_SEARCH:
      return KeyctlSearch(t, id, GuestAddr(a3), GuestAddr(a4), static_cast<int32_t>(a5));
    case KEYCTL_READ:
      return KeyctlRead(t, id, GuestAddr(a3), a4);
    case KEYCTL_INSTANTIATE:
    case KEYCTL_NEGATE:
    case KEYCTL_REJECT:
    case KEYCTL_INSTANTIATE_IOV:
      return Errno(EPERM);  // only a request-key helper holding authority may; none runs here
    case KEYCTL_SET_REQKEY_KEYRING:
      return KeyctlSetReqkeyKeyring(t, static_cast<int>(a2));
    case KEYCTL_SET_TIMEOUT:
      return KeyctlSetTimeout(t, id, static_cast<uint32_t>(a3));
    case KEYCTL_ASSUME_AUTHORITY:
      if (id < 0) return Errno(EINVAL);
      return id == 0 ? Result<uint64_t>(0) : Errno(ENOKEY);  // no authorisation key exists
    case KEYCTL_GET_SECURITY:
      return KeyctlDescribe(t, id, GuestAddr(a3), a4, true);
    case KEYCTL_SESSION_TO_PARENT:
      return KeyctlSessionToParent(t);
    case KEYCTL_INVALIDATE:
      return KeyctlInvalidate(t, id);
    case KEYCTL_RESTRICT_KEYRING:
      return KeyctlRestrict(t, id, GuestAddr(a3), GuestAddr(a4));
    case KEYCTL_MOVE:
      return KeyctlMove(t, id, static_cast<int32_t>(a3), static_cast<int32_t>(a4),
                        static_cast<unsigned>(a5));
    case KEYCTL_CAPABILITIES:
      return KeyctlCapabilities(t, GuestAddr(a2), a3);
    default:
      // GET_PERSISTENT, DH_COMPUTE, PKEY_*, WATCH_KEY: as a kernel built without persistent
      // keyrings, key DH, asymmetric keys and key notifications.
      return Errno(EOPNOTSUPP);
  }
}

}  // namespace sentry::syscalls
