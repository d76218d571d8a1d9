// Memory policies (set_mempolicy, get_mempolicy, mbind) and memory protection keys
// (pkey_alloc, pkey_free, pkey_mprotect), as Linux answers them on this kind of machine: one
// memory node (node 0), and a CPU without protection keys.
//
// A thread's policy is kept and reported back with Linux's rules (validation, MPOL_PREFERRED
// with no node turning into MPOL_LOCAL, the user's nodemask kept for the static and relative
// flags). With one node every policy places memory in the same place, so none changes where
// the host puts a page. mbind's per-range policies are checked but not recorded:
// get_mempolicy(MPOL_F_ADDR) reports the default policy for every mapped address.
#include <linux/mempolicy.h>
#include <linux/capability.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "syscalls/common.h"

namespace sentry::syscalls {
namespace {

constexpr int kModeFlags = MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES | MPOL_F_NUMA_BALANCING;
constexpr uint64_t kMaxNumNodes = 1024;  // CONFIG_NODES_SHIFT=10, Debian's x86-64 kernel
constexpr uint64_t kOnlineNodes = 1;     // node 0

// Reads a nodemask of `maxnode` bits as Linux's get_nodes: the last bit is dropped (a
// historical off-by-one every libnuma passes for), bits past the kernel's MAX_NUMNODES must be
// clear. Only the bits of nodes below 64 are kept: nodes above do not exist here.
Result<uint64_t> CopyInNodes(Task& t, GuestAddr addr, uint64_t maxnode) {
  if (maxnode > 0) maxnode--;
  if (addr.IsNull() || maxnode == 0) return 0;
  if (maxnode > 4096 * 8) return Errno(EINVAL);
  uint64_t words = (maxnode + 63) / 64;
  std::vector<uint64_t> mask(words);
  SENTRY_TRY(t.CopyInBytes(addr, {reinterpret_cast<uint8_t*>(mask.data()), words * 8}));
  if (maxnode % 64 != 0) mask.back() &= (uint64_t{1} << (maxnode % 64)) - 1;
  for (uint64_t bit = kMaxNumNodes; bit < words * 64; bit += 64) {
    if (mask[bit / 64] != 0) return Errno(EINVAL);
  }
  return mask[0];
}

// Validates `mode_arg` (mode | flags) and `nodes` as Linux's mpol_new and mpol_set_nodemask,
// and returns the policy to keep.
Result<kernel::MemPolicy> NewPolicy(int mode_arg, uint64_t nodes) {
  int flags = mode_arg & kModeFlags;
  int mode = mode_arg & ~kModeFlags;
  if (mode < 0 || mode >= MPOL_MAX) return Errno(EINVAL);
  if ((flags & MPOL_F_STATIC_NODES) && (flags & MPOL_F_RELATIVE_NODES)) return Errno(EINVAL);
  if ((flags & MPOL_F_NUMA_BALANCING) && mode != MPOL_BIND) return Errno(EINVAL);
  if (mode == MPOL_DEFAULT) {
    if (nodes != 0) return Errno(EINVAL);
    return kernel::MemPolicy{};
  }
  if (nodes == 0) {
    if (mode == MPOL_PREFERRED && !(flags & (MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES))) {
      return kernel::MemPolicy{MPOL_LOCAL, 0, 0};
    }
    if (mode != MPOL_LOCAL) return Errno(EINVAL);
  } else if (mode == MPOL_LOCAL) {
    return Errno(EINVAL);
  }
  if (mode == MPOL_LOCAL) return kernel::MemPolicy{MPOL_LOCAL, flags, 0};
  // The nodes the policy may use: the given ones that are online (relative nodes are
  // numbered within the allowed set, whose first is node 0).
  uint64_t usable = (flags & MPOL_F_RELATIVE_NODES) ? (nodes ? kOnlineNodes : 0)
                                                   : nodes & kOnlineNodes;
  if (usable == 0) return Errno(EINVAL);
  return kernel::MemPolicy{mode, flags, nodes};
}

// The nodemask get_mempolicy reports for `p`.
uint64_t ReportedNodes(const kernel::MemPolicy& p) {
  if (p.mode == MPOL_DEFAULT || p.mode == MPOL_LOCAL) return 0;
  if (p.flags & (MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES)) return p.user_nodes;
  return p.user_nodes & kOnlineNodes;
}

// copy_nodes_to_user: `maxnode - 1` bits rounded up to longs; past the kernel's own nodemask
// (one long here), zeros.
Result<void> CopyOutNodes(Task& t, GuestAddr addr, uint64_t maxnode, uint64_t nodes) {
  uint64_t bytes = (maxnode - 1 + 63) / 64 * 8;
  if (bytes == 0) return Ok();
  if (bytes > 4096 + 8) return Errno(EINVAL);
  std::vector<uint8_t> out(bytes, 0);
  memcpy(out.data(), &nodes, std::min<uint64_t>(bytes, 8));
  return t.CopyOutBytes(addr, out);
}

}  // namespace

Result<uint64_t> SysSetMempolicy(Task& t, int mode, GuestAddr nmask, uint64_t maxnode) {
  uint64_t nodes = SENTRY_TRY(CopyInNodes(t, nmask, maxnode));
  t.mempolicy_ = SENTRY_TRY(NewPolicy(mode, nodes));
  return 0;
}

Result<uint64_t> SysGetMempolicy(Task& t, GuestAddr mode_addr, GuestAddr nmask, uint64_t maxnode,
                                 uint64_t addr, uint64_t flags) {
  if (!nmask.IsNull() && maxnode < 1) return Errno(EINVAL);  // nr_node_ids is 1
  if (flags & ~uint64_t{MPOL_F_NODE | MPOL_F_ADDR | MPOL_F_MEMS_ALLOWED}) return Errno(EINVAL);
  int mode = 0;
  uint64_t nodes = 0;
  if (flags & MPOL_F_MEMS_ALLOWED) {
    if (flags & (MPOL_F_NODE | MPOL_F_ADDR)) return Errno(EINVAL);
    nodes = kOnlineNodes;
  } else {
    kernel::MemPolicy policy = t.mempolicy_;
    if (flags & MPOL_F_ADDR) {
      if (!t.mm().CheckMapped(addr & ~uint64_t{4095}, 1).ok()) return Errno(EFAULT);
      policy = {};  // per-range policies are not recorded (see the top of this file)
    } else if (addr != 0) {
      return Errno(EINVAL);
    }
    if (flags & MPOL_F_NODE) {
      // The node of the page at addr, or the next interleave node: node 0 either way.
      if (!(flags & MPOL_F_ADDR) && policy.mode != MPOL_INTERLEAVE) return Errno(EINVAL);
      mode = 0;
    } else {
      mode = policy.mode | policy.flags;
    }
    nodes = ReportedNodes(policy);
  }
  if (!mode_addr.IsNull()) SENTRY_TRY(t.CopyOut<int32_t>(mode_addr, mode));
  if (!nmask.IsNull()) SENTRY_TRY(CopyOutNodes(t, nmask, maxnode, nodes));
  return 0;
}

Result<uint64_t> SysMbind(Task& t, uint64_t start, uint64_t len, int mode, GuestAddr nmask,
                          uint64_t maxnode, unsigned flags) {
  constexpr unsigned kFlags = MPOL_MF_STRICT | MPOL_MF_MOVE | MPOL_MF_MOVE_ALL;
  if (flags & ~kFlags) return Errno(EINVAL);
  if (flags & MPOL_MF_MOVE_ALL) {
    absl::MutexLock l(&t.kernel().mu());
    if (!t.tg().creds.HasCapability(CAP_SYS_NICE)) return Errno(EPERM);
  }
  if (start & 4095) return Errno(EINVAL);
  if ((mode & MPOL_F_NUMA_BALANCING) != 0) return Errno(EINVAL);  // set_mempolicy's alone
  uint64_t pages_len = (len + 4095) & ~uint64_t{4095};
  if (pages_len < len || start + pages_len < start) return Errno(EINVAL);
  uint64_t nodes = SENTRY_TRY(CopyInNodes(t, nmask, maxnode));
  SENTRY_TRY(NewPolicy(mode, nodes));
  if (pages_len == 0) return 0;
  if (!t.mm().CheckMapped(start, pages_len).ok()) return Errno(EFAULT);
  return 0;
}

Result<uint64_t> SysSetMempolicyHomeNode(Task& t, uint64_t start, uint64_t len, uint64_t node,
                                         uint64_t flags) {
  if (start & 4095) return Errno(EINVAL);
  if (flags != 0) return Errno(EINVAL);
  if (node >= kMaxNumNodes || !(kOnlineNodes & (node < 64 ? uint64_t{1} << node : 0))) {
    return Errno(EINVAL);
  }
  uint64_t pages_len = (len + 4095) & ~uint64_t{4095};
  if (pages_len < len || start + pages_len < start) return Errno(EINVAL);
  // Linux sets the home node of the ranges' MPOL_BIND / PREFERRED_MANY policies; there are no
  // per-range policies here, so nothing changes (and EOPNOTSUPP for other kinds is not seen).
  (void)t;
  return 0;
}

// Protection keys: this CPU has none (no OSPKE), so the host answers EINVAL to every key but
// pkey_mprotect's -1, which is plain mprotect. The guest sees the same CPU.
Result<uint64_t> SysPkeyAlloc(Task& t, uint64_t flags, uint64_t init_val) {
  (void)t, (void)flags, (void)init_val;
  return Errno(EINVAL);
}

Result<uint64_t> SysPkeyFree(Task& t, int pkey) {
  (void)t, (void)pkey;
  return Errno(EINVAL);
}

Result<uint64_t> SysMprotect(Task& t, uint64_t addr, uint64_t len, int prot);

Result<uint64_t> SysPkeyMprotect(Task& t, uint64_t addr, uint64_t len, int prot, int pkey) {
  if (pkey == -1) return SysMprotect(t, addr, len, prot);
  // do_mprotect_pkey's checks before it looks at the key.
  if ((prot & PROT_GROWSDOWN) && (prot & PROT_GROWSUP)) return Errno(EINVAL);
  if (addr & 4095) return Errno(EINVAL);
  if (len == 0) return 0;
  uint64_t pages_len = (len + 4095) & ~uint64_t{4095};
  if (pages_len < len || addr + pages_len <= addr) return Errno(ENOMEM);
  return Errno(EINVAL);
}

}  // namespace sentry::syscalls
