#include "sentry/kernel/keys.h"

#include <random>

#include "absl/strings/str_format.h"

namespace sentry::kernel {
namespace {

// KEY_SPEC_* of <linux/keyctl.h>.
constexpr int32_t kSpecThread = -1, kSpecProcess = -2, kSpecSession = -3, kSpecUser = -4,
                  kSpecUserSession = -5, kSpecGroup = -6, kSpecReqkeyAuth = -7, kSpecRequestor = -8;

// Linux's KEYRING_SEARCH_MAX_DEPTH.
constexpr int kMaxDepth = 6;

// Default permissions (Linux's key_create_or_update and the keyrings it makes itself).
constexpr uint32_t kPosAll = kKeyAll << 24;
constexpr uint32_t kUsrView = kKeyView << 16, kUsrRead = kKeyRead << 16;
constexpr uint32_t kUserKeyringPerm = (kPosAll & ~(kKeySetattr << 24)) | (kKeyAll << 16);
constexpr uint32_t kSessionPerm = kPosAll | kUsrView | kUsrRead;
// A named session keyring (keyctl_join_session_keyring) may also be linked by its user.
constexpr uint32_t kNamedSessionPerm = kSessionPerm | kKeyLink << 16;
constexpr uint32_t kTaskKeyringPerm = kPosAll | kUsrView;

bool Live(const Key& k) { return KeyTable::Validate(k).ok(); }

}  // namespace

Result<void> KeyTable::QuotaBook::Charge(uint32_t uid, int64_t keys, int64_t bytes) {
  absl::MutexLock l(&mu);
  KeyQuota& q = used[uid];
  uint64_t nkeys = q.keys + keys, nbytes = q.bytes + bytes;
  bool root = uid == 0;
  if ((keys > 0 && nkeys > (root ? kKeyRootMaxKeys : kKeyMaxKeys)) ||
      (bytes > 0 && nbytes > (root ? kKeyRootMaxBytes : kKeyMaxBytes))) {
    return Errno(EDQUOT);
  }
  q.keys = static_cast<uint32_t>(nkeys);
  q.bytes = nbytes;
  return {};
}

Result<KeyRef> KeyTable::Create(KeyType type, std::string description, std::string payload,
                                uint32_t uid, uint32_t gid, uint32_t perm, bool in_quota) {
  uint64_t bytes = description.size() + 1 + payload.size();
  if (in_quota) SENTRY_TRY(quota_->Charge(uid, 1, static_cast<int64_t>(bytes)));
  std::shared_ptr<QuotaBook> book = quota_;
  KeyRef k(new Key, [book](Key* p) {
    if (p->in_quota) (void)book->Charge(p->uid, -1, -static_cast<int64_t>(p->charged));
    delete p;
  });
  if (next_serial_ == 0) {
    // Serial numbers look like Linux's (random, positive, at least 3).
    next_serial_ = static_cast<int32_t>(std::random_device{}() % 0x30000000) + 0x10000000;
  }
  while (next_serial_ < 3 || keys_.count(next_serial_) != 0) {
    next_serial_ = next_serial_ < 3 ? 3 : next_serial_ + 1;
  }
  k->serial = next_serial_++;
  k->type = type;
  k->description = std::move(description);
  k->payload = std::move(payload);
  k->uid = uid;
  k->gid = gid;
  k->perm = perm;
  k->in_quota = in_quota;
  k->charged = in_quota ? bytes : 0;
  keys_[k->serial] = k;
  return k;
}

Result<void> KeyTable::SetPayload(Key& k, std::string payload) {
  int64_t delta = static_cast<int64_t>(payload.size()) - static_cast<int64_t>(k.payload.size());
  if (k.in_quota) {
    SENTRY_TRY(quota_->Charge(k.uid, 0, delta));
    k.charged += delta;
  }
  k.payload = std::move(payload);
  return {};
}

KeyRef KeyTable::Find(int32_t serial) {
  auto it = keys_.find(serial);
  if (it == keys_.end()) return nullptr;
  KeyRef k = it->second.lock();
  if (!k) keys_.erase(it);
  return k;
}

KeyTable::UserKeyrings& KeyTable::ForUser(uint32_t uid) {
  UserKeyrings& u = users_[uid];
  if (!u.user) {
    // Linux makes both at first use, with an invalid group, and links the user keyring into
    // the user session keyring.
    u.user = *Create(KeyType::kKeyring, absl::StrFormat("_uid.%u", uid), "", uid, kNoGid,
                     kUserKeyringPerm, false);
    u.session = *Create(KeyType::kKeyring, absl::StrFormat("_uid_ses.%u", uid), "", uid, kNoGid,
                        kUserKeyringPerm, false);
    u.session->links.push_back(u.user);
  }
  return u;
}

Result<KeyRef> KeyTable::ThreadKeyring(const KeyCaller& c, bool create) {
  if (!c.task->thread) {
    if (!create) return Errno(ENOKEY);
    c.task->thread = SENTRY_TRY(Create(KeyType::kKeyring, "_tid", "", c.creds->fsuid,
                                       c.creds->fsgid, kTaskKeyringPerm, true));
  }
  return c.task->thread;
}

Result<KeyRef> KeyTable::ProcessKeyring(const KeyCaller& c, bool create) {
  if (!*c.process) {
    if (!create) return Errno(ENOKEY);
    *c.process = SENTRY_TRY(Create(KeyType::kKeyring, "_pid", "", c.creds->fsuid, c.creds->fsgid,
                                   kTaskKeyringPerm, true));
  }
  return *c.process;
}

Result<KeyRef> KeyTable::JoinSession(const KeyCaller& c, const std::string* name) {
  if (name != nullptr) {
    // An existing keyring of that name that the caller may search (possession aside) is
    // joined.
    for (auto it = keys_.begin(); it != keys_.end(); ++it) {
      KeyRef k = it->second.lock();
      if (!k || k->type != KeyType::kKeyring || k->description != *name || !Live(*k)) continue;
      if (!Permitted(*k, *c.creds, false, kKeySearch)) continue;
      c.task->session = k;
      return k;
    }
  }
  c.task->session =
      SENTRY_TRY(Create(KeyType::kKeyring, name ? *name : "_ses", "", c.creds->fsuid,
                        c.creds->fsgid, name ? kNamedSessionPerm : kSessionPerm, true));
  return c.task->session;
}

Result<KeyRef> KeyTable::Lookup(const KeyCaller& c, int32_t id, bool create, uint32_t need,
                                bool* possessed, bool check_state) {
  KeyRef k;
  bool pos = true;
  switch (id) {
    case kSpecThread:
      k = SENTRY_TRY(ThreadKeyring(c, create));
      break;
    case kSpecProcess:
      k = SENTRY_TRY(ProcessKeyring(c, create));
      break;
    case kSpecSession:
      // Looking at a missing session keyring installs one: a new one when asked to create,
      // else the user session keyring.
      if (!c.task->session) {
        if (create) {
          SENTRY_TRY(JoinSession(c, nullptr));
        } else {
          c.task->session = ForUser(c.creds->ruid).session;
        }
      }
      k = c.task->session;
      break;
    case kSpecUser:
      k = ForUser(c.creds->ruid).user;
      break;
    case kSpecUserSession:
      k = ForUser(c.creds->ruid).session;
      break;
    case kSpecGroup:
      return Errno(EINVAL);
    case kSpecReqkeyAuth:
    case kSpecRequestor:
      return Errno(ENOKEY);  // no request_key construction is ever under way
    default:
      if (id < 1) return Errno(EINVAL);
      k = Find(id);
      if (!k || k->invalidated) return Errno(ENOKEY);
      pos = Possessed(c, *k);
  }
  if (check_state) SENTRY_TRY(Validate(*k));
  if (need != 0 && !Permitted(*k, *c.creds, pos, need)) return Errno(EACCES);
  if (possessed) *possessed = pos;
  return k;
}

bool KeyTable::Permitted(const Key& k, const Credentials& c, bool possessed, uint32_t need) {
  uint32_t kperm;
  if (k.uid == c.fsuid) {
    kperm = k.perm >> 16;
  } else if (k.gid != kNoGid && c.InGroup(k.gid)) {
    kperm = k.perm >> 8;
  } else {
    kperm = k.perm;
  }
  if (possessed) kperm |= k.perm >> 24;
  return (kperm & need & kKeyAll) == need;
}

bool KeyTable::Possessed(const KeyCaller& c, const Key& k) {
  // As Linux, possession is what a search from the caller's keyrings finds: only through
  // keyrings it may search, and only a key it may search itself.
  KeyRef session = c.task->session ? c.task->session : ForUser(c.creds->ruid).session;
  for (const KeyRef& root : {c.task->thread, *c.process, session}) {
    if (!root) continue;
    if (root.get() == &k) return true;
    if (!Permitted(*root, *c.creds, true, kKeySearch)) continue;
    if (Reaches(*root, k, 0) && Permitted(k, *c.creds, true, kKeySearch)) return true;
  }
  return false;
}

bool KeyTable::Reaches(const Key& from, const Key& to, int depth) {
  if (depth >= kMaxDepth) return false;
  for (const KeyRef& l : from.links) {
    if (l.get() == &to) return true;
  }
  for (const KeyRef& l : from.links) {
    if (l->type == KeyType::kKeyring && !l->invalidated && Reaches(*l, to, depth + 1)) {
      return true;
    }
  }
  return false;
}

Result<KeyRef> KeyTable::SearchIn(const KeyCaller& c, const KeyRef& ring, bool possessed,
                                  KeyType type, const std::string& description, int depth,
                                  bool skip_expired, int* skipped) {
  // The keys of this keyring first, then the keyrings it links. A match that cannot be
  // returned is remembered as the error to give if nothing else matches (Linux's search keeps
  // an invalidated key as revoked until it is collected).
  for (const KeyRef& l : ring->links) {
    if (l->type != type || l->description != description) continue;
    if (l->revoked || l->invalidated) {
      if (*skipped == 0) *skipped = EKEYREVOKED;
    } else if (l->expiry <= absl::Now()) {
      if (*skipped == 0 && !skip_expired) *skipped = EKEYEXPIRED;
    } else if (!Permitted(*l, *c.creds, possessed, kKeySearch)) {
      if (*skipped == 0) *skipped = EACCES;
    } else {
      return l;
    }
  }
  if (depth + 1 >= kMaxDepth) return Errno(ENOKEY);
  for (const KeyRef& l : ring->links) {
    if (l->type != KeyType::kKeyring || !Live(*l)) continue;
    if (!Permitted(*l, *c.creds, possessed, kKeySearch)) continue;
    auto r = SearchIn(c, l, possessed, type, description, depth + 1, skip_expired, skipped);
    if (r.ok()) return r;
  }
  return Errno(ENOKEY);
}

Result<KeyRef> KeyTable::Search(const KeyCaller& c, const KeyRef& ring, bool possessed,
                                KeyType type, const std::string& description) {
  if (ring->type != KeyType::kKeyring) return Errno(ENOTDIR);
  int skipped = 0;
  auto r = SearchIn(c, ring, possessed, type, description, 0, false, &skipped);
  if (!r.ok() && skipped != 0) return Errno(skipped);
  return r;
}

Result<KeyRef> KeyTable::SearchProcessKeyrings(const KeyCaller& c, KeyType type,
                                               const std::string& description) {
  KeyRef session = c.task->session ? c.task->session : ForUser(c.creds->ruid).session;
  int skipped = 0;
  for (const KeyRef& root : {c.task->thread, *c.process, session}) {
    if (!root || !Live(*root) || !Permitted(*root, *c.creds, true, kKeySearch)) continue;
    auto r = SearchIn(c, root, true, type, description, 0, /*skip_expired=*/true, &skipped);
    if (r.ok()) return r;
  }
  return Errno(skipped != 0 ? skipped : ENOKEY);
}

Result<void> KeyTable::Link(const KeyRef& ring, const KeyRef& k) {
  if (ring->type != KeyType::kKeyring) return Errno(ENOTDIR);
  SENTRY_TRY(Validate(*ring));
  if (ring->restricted) return Errno(EPERM);
  if (k->type == KeyType::kKeyring && (k == ring || Reaches(*k, *ring, 0))) {
    return Errno(EDEADLK);
  }
  for (KeyRef& l : ring->links) {
    if (l == k) return {};
    if (l->type == k->type && l->description == k->description) {
      l = k;  // a keyring holds one key per type and description: the new one displaces
      return {};
    }
  }
  ring->links.push_back(k);
  return {};
}

Result<void> KeyTable::Unlink(Key& ring, const Key& k) {
  if (ring.type != KeyType::kKeyring) return Errno(ENOTDIR);
  for (auto it = ring.links.begin(); it != ring.links.end(); ++it) {
    if (it->get() == &k) {
      ring.links.erase(it);
      return {};
    }
  }
  return Errno(ENOENT);
}

Result<void> KeyTable::Validate(const Key& k) {
  if (k.invalidated) return Errno(ENOKEY);
  if (k.revoked) return Errno(EKEYREVOKED);
  if (k.expiry <= absl::Now()) return Errno(EKEYEXPIRED);
  return {};
}

const char* KeyTable::TypeName(KeyType t) {
  switch (t) {
    case KeyType::kKeyring:
      return "keyring";
    case KeyType::kUser:
      return "user";
    case KeyType::kLogon:
      return "logon";
  }
  return "";
}

std::string KeyTable::Describe(const Key& k) {
  // An id that maps to nothing shows as the overflow id, as Linux's from_kuid_munged.
  return absl::StrFormat("%s;%u;%u;%08x;%s", TypeName(k.type), k.uid,
                         k.gid == kNoGid ? 65534u : k.gid, k.perm, k.description);
}

}  // namespace sentry::kernel
