// capget/capset: the capability sets through the versioned header of <linux/capability.h>.
//
// Version 1 carries one 32-bit word per set, versions 2 and 3 two (Linux treats them alike:
// there are no file capabilities whose format would differ). The rules for what a task may
// set live in kernel/credentials.cc.
#include <linux/capability.h>

#include "syscalls/common.h"

namespace sentry::syscalls {

namespace {

struct CapHeader {
  uint32_t version;
  int32_t pid;
};
struct CapData {
  uint32_t effective, permitted, inheritable;
};

// How many CapData words the header's version carries. An unknown version gets the preferred
// one written back (how libcap probes) and EINVAL.
Result<size_t> CapWords(Task& t, GuestAddr header) {
  uint32_t version = SENTRY_TRY(t.CopyIn<uint32_t>(header));
  switch (version) {
    case _LINUX_CAPABILITY_VERSION_1:
      return 1;
    case _LINUX_CAPABILITY_VERSION_2:
    case _LINUX_CAPABILITY_VERSION_3:
      return 2;
    default:
      SENTRY_TRY(t.CopyOut<uint32_t>(header, _LINUX_CAPABILITY_VERSION_3));
      return Errno(EINVAL);
  }
}

uint64_t Join(const CapData (&d)[2], uint32_t CapData::*set) {
  return (uint64_t{d[1].*set} << 32 | d[0].*set) & kernel::kCapFullSet;
}

}  // namespace

Result<uint64_t> SysCapget(Task& t, GuestAddr header, GuestAddr data) {
  Result<size_t> words = CapWords(t, header);
  // A null data pointer only probes the version: EINVAL becomes success (EFAULT does not).
  if (data.IsNull()) {
    if (words.ok() || words.error() == EINVAL) return 0;
    return words.error();
  }
  const size_t n = SENTRY_TRY(std::move(words));
  int32_t pid = SENTRY_TRY(t.CopyIn<int32_t>(header + offsetof(CapHeader, pid)));
  if (pid < 0) return Errno(EINVAL);
  kernel::Credentials c;
  {
    absl::MutexLock l(&t.kernel().mu());
    Task* target = pid == 0 ? &t : t.kernel().TaskByTid(t.ToGlobalPid(pid));
    if (target == nullptr) return Errno(ESRCH);
    c = target->tg().creds;
  }
  CapData d[2];
  for (int i = 0; i < 2; i++) {
    d[i] = {static_cast<uint32_t>(c.cap_effective >> (32 * i)),
            static_cast<uint32_t>(c.cap_permitted >> (32 * i)),
            static_cast<uint32_t>(c.cap_inheritable >> (32 * i))};
  }
  SENTRY_TRY(t.CopyOutBytes(data, {reinterpret_cast<uint8_t*>(d), n * sizeof(CapData)}));
  return 0;
}

Result<uint64_t> SysCapset(Task& t, GuestAddr header, GuestAddr data) {
  const size_t n = SENTRY_TRY(CapWords(t, header));
  int32_t pid = SENTRY_TRY(t.CopyIn<int32_t>(header + offsetof(CapHeader, pid)));
  if (pid != 0 && pid != t.tid()) return Errno(EPERM);  // only one's own sets
  CapData d[2] = {};                                    // version 1 clears the upper words
  SENTRY_TRY(t.CopyInBytes(data, {reinterpret_cast<uint8_t*>(d), n * sizeof(CapData)}));
  absl::MutexLock l(&t.kernel().mu());
  SENTRY_TRY(t.tg().creds.SetCapabilities(
      Join(d, &CapData::effective), Join(d, &CapData::permitted), Join(d, &CapData::inheritable)));
  return 0;
}

}  // namespace sentry::syscalls
