#include "sentry/kernel/user_namespace.h"

#include <linux/capability.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "sentry/kernel/credentials.h"
#include "vfs/nsfs.h"

namespace sentry::kernel {
namespace {

// Linux's limit on the lines of one map (UID_GID_MAP_MAX_EXTENTS).
constexpr size_t kMaxExtents = 340;

std::optional<uint32_t> MapDown(const std::vector<UserNamespace::Extent>& map, uint32_t id) {
  for (const auto& e : map) {
    if (id - e.first < e.count) return e.lower + (id - e.first);
  }
  return std::nullopt;
}

std::optional<uint32_t> MapUp(const std::vector<UserNamespace::Extent>& map, uint32_t kid) {
  for (const auto& e : map) {
    if (kid - e.lower < e.count) return e.first + (kid - e.lower);
  }
  return std::nullopt;
}

bool Overlap(uint32_t a, uint32_t an, uint32_t b, uint32_t bn) {
  return uint64_t{a} < uint64_t{b} + bn && uint64_t{b} < uint64_t{a} + an;
}

// The lines of a map write, each "first lower count" in the parent's ids: EINVAL for
// anything Linux's map_write refuses as malformed.
Result<std::vector<UserNamespace::Extent>> ParseMap(const std::string& text) {
  std::vector<UserNamespace::Extent> out;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    std::vector<absl::string_view> f =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    UserNamespace::Extent e;
    if (f.size() != 3 || !absl::SimpleAtoi(f[0], &e.first) || !absl::SimpleAtoi(f[1], &e.lower) ||
        !absl::SimpleAtoi(f[2], &e.count)) {
      return Errno(EINVAL);
    }
    if (e.first == UINT32_MAX || e.lower == UINT32_MAX || e.count == 0) return Errno(EINVAL);
    if (uint64_t{e.first} + e.count > UINT32_MAX || uint64_t{e.lower} + e.count > UINT32_MAX) {
      return Errno(EINVAL);
    }
    for (const auto& o : out) {
      if (Overlap(o.first, o.count, e.first, e.count) ||
          Overlap(o.lower, o.count, e.lower, e.count)) {
        return Errno(EINVAL);
      }
    }
    out.push_back(e);
    if (out.size() > kMaxExtents) return Errno(EINVAL);
  }
  if (out.empty()) return Errno(EINVAL);
  return out;
}

}  // namespace

UserNamespace::UserNamespace(UserNsRef parent, uint32_t owner, uint32_t group, uint64_t ino,
                             bool setgroups_allowed)
    : parent_(std::move(parent)),
      level_(parent_ ? parent_->level() + 1 : 1),
      owner_(owner),
      group_(group),
      ino_(ino),
      setgroups_allowed_(setgroups_allowed) {}

std::optional<uint32_t> UserNamespace::FromKernel(bool gid, uint32_t kid) const {
  absl::MutexLock l(&mu_);
  return MapUp(gid ? gid_map_ : uid_map_, kid);
}

std::optional<uint32_t> UserNamespace::ToKernel(bool gid, uint32_t id) const {
  absl::MutexLock l(&mu_);
  return MapDown(gid ? gid_map_ : uid_map_, id);
}

bool UserNamespace::setgroups_allowed() const {
  absl::MutexLock l(&mu_);
  return setgroups_allowed_;
}

bool UserNamespace::gid_map_written() const {
  absl::MutexLock l(&mu_);
  return gid_written_;
}

std::string UserNamespace::MapText(bool gid, const UserNamespace* reader) const {
  // Lower ids in the reader's namespace when it is the parent, else in the parent's.
  const UserNamespace* in = reader == parent() ? reader : parent();
  std::vector<Extent> map;
  {
    absl::MutexLock l(&mu_);
    map = gid ? gid_map_ : uid_map_;
  }
  std::string out;
  for (const auto& e : map) {
    uint32_t lower = FromKernelId(in, gid, e.lower).value_or(kOverflowId);
    out += absl::StrFormat("%10u %10u %10u\n", e.first, lower, e.count);
  }
  return out;
}

Result<void> UserNamespace::WriteMap(bool gid, const std::string& text, const Credentials& writer) {
  const UserNamespace* wns = writer.user_ns.get();
  if (wns != this && wns != parent()) return Errno(EPERM);
  std::vector<Extent> map = SENTRY_TRY(ParseMap(text));
  absl::MutexLock l(&mu_);
  if (gid ? gid_written_ : uid_written_) return Errno(EPERM);
  if (!writer.CapableIn(this, CAP_SYS_ADMIN)) return Errno(EPERM);
  // The lower ids as the writer wrote them are the parent's: make them kernel ids.
  for (auto& e : map) {
    std::optional<uint32_t> k = ToKernelId(parent(), gid, e.lower);
    std::optional<uint32_t> k_last = ToKernelId(parent(), gid, e.lower + e.count - 1);
    if (!k || !k_last || *k_last - *k != e.count - 1) return Errno(EPERM);
    e.lower = *k;
  }
  // One line that maps the owner's own id needs no privilege over the parent (the gid only
  // once setgroups is denied, or the mapping would let setgroups drop groups).
  bool own = map.size() == 1 && map[0].count == 1 && writer.euid == owner_ &&
             map[0].lower == (gid ? writer.egid : writer.euid) && (!gid || !setgroups_allowed_);
  if (!own && !writer.CapableIn(parent(), gid ? CAP_SETGID : CAP_SETUID)) return Errno(EPERM);
  (gid ? gid_map_ : uid_map_) = std::move(map);
  (gid ? gid_written_ : uid_written_) = true;
  return Ok();
}

std::string UserNamespace::SetgroupsText() const {
  return setgroups_allowed() ? "allow\n" : "deny\n";
}

Result<void> UserNamespace::WriteSetgroups(const std::string& text, const Credentials& writer) {
  absl::string_view v = text;
  while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.remove_suffix(1);
  bool allow;
  if (v == "allow") {
    allow = true;
  } else if (v == "deny") {
    allow = false;
  } else {
    return Errno(EINVAL);
  }
  const UserNamespace* wns = writer.user_ns.get();
  if ((wns != this && wns != parent()) || !writer.CapableIn(this, CAP_SYS_ADMIN)) {
    return Errno(EPERM);
  }
  absl::MutexLock l(&mu_);
  if (allow) {
    if (!setgroups_allowed_) return Errno(EPERM);  // "deny" is for good
  } else {
    if (gid_written_) return Errno(EPERM);  // too late: the gid_map may rely on groups
    setgroups_allowed_ = false;
  }
  return Ok();
}

std::optional<uint32_t> FromKernelId(const UserNamespace* ns, bool gid, uint32_t kid) {
  if (!ns) return kid;
  return ns->FromKernel(gid, kid);
}

std::optional<uint32_t> ToKernelId(const UserNamespace* ns, bool gid, uint32_t id) {
  if (!ns) return id == UINT32_MAX ? std::nullopt : std::optional<uint32_t>(id);
  return ns->ToKernel(gid, id);
}

Result<UserNsRef> NewUserNamespace(const Credentials& creator) {
  const UserNamespace* parent = creator.user_ns.get();
  if (parent && parent->level() > kMaxUserNsDepth) return Errno(ENOSPC);
  if (!FromKernelId(parent, false, creator.euid) || !FromKernelId(parent, true, creator.egid)) {
    return Errno(EPERM);
  }
  // A child of a namespace whose setgroups is denied inherits the denial.
  bool setgroups = !parent || parent->setgroups_allowed();
  return UserNsRef(std::make_shared<UserNamespace>(creator.user_ns, creator.euid, creator.egid,
                                                   vfs::NewNsInode(), setgroups));
}

}  // namespace sentry::kernel
