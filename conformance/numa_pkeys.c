// Memory policies and protection keys on a one-node machine whose CPU has no protection
// keys: set_mempolicy's validation and what get_mempolicy reports back (modes, flags,
// nodemasks, MPOL_PREFERRED with no node becoming MPOL_LOCAL, MPOL_F_NODE,
// MPOL_F_MEMS_ALLOWED), inheritance by a child, mbind's checks, and the pkey calls.
#include "common.h"

#include <sys/mman.h>

#define MPOL_DEFAULT 0
#define MPOL_PREFERRED 1
#define MPOL_BIND 2
#define MPOL_INTERLEAVE 3
#define MPOL_LOCAL 4
#define MPOL_F_STATIC_NODES (1 << 15)
#define MPOL_F_RELATIVE_NODES (1 << 14)
#define MPOL_F_NODE 1
#define MPOL_F_ADDR 2
#define MPOL_F_MEMS_ALLOWED 4
#define MPOL_MF_STRICT 1

static long set_policy(int mode, unsigned long nodes, unsigned long maxnode) {
  return syscall(SYS_set_mempolicy, mode, &nodes, maxnode);
}

static void get_policy(int *mode, unsigned long *nodes, void *addr, unsigned long flags) {
  unsigned long mask[2] = {~0ul, ~0ul};
  CHECK_OK(syscall(SYS_get_mempolicy, mode, mask, 128, addr, flags));
  CHECK_EQ(mask[1], 0);
  *nodes = mask[0];
}

static int one_node(void) {
  return access("/sys/devices/system/node/node1", F_OK) != 0;
}

TEST(default_policy) {
  int mode = -1;
  unsigned long nodes;
  get_policy(&mode, &nodes, NULL, 0);
  CHECK_EQ(mode, MPOL_DEFAULT);
  CHECK_EQ(nodes, 0);
  get_policy(&mode, &nodes, NULL, MPOL_F_MEMS_ALLOWED);
  CHECK_EQ(nodes, 1);
  // MPOL_F_NODE alone needs an interleave policy.
  CHECK_ERRNO(syscall(SYS_get_mempolicy, &mode, NULL, 0, NULL, MPOL_F_NODE), EINVAL);
  CHECK_ERRNO(syscall(SYS_get_mempolicy, &mode, NULL, 0, NULL, 8), EINVAL);
  CHECK_ERRNO(syscall(SYS_get_mempolicy, &mode, NULL, 0, NULL,
                      MPOL_F_MEMS_ALLOWED | MPOL_F_NODE), EINVAL);
  CHECK_ERRNO(syscall(SYS_get_mempolicy, &mode, NULL, 0, (void *)4096, 0), EINVAL);
  unsigned long mask = 0;
  CHECK_ERRNO(syscall(SYS_get_mempolicy, &mode, &mask, 0, NULL, 0), EINVAL);
}

TEST(set_and_get) {
  int mode;
  unsigned long nodes;
  CHECK_OK(set_policy(MPOL_BIND, 1, 2));
  get_policy(&mode, &nodes, NULL, 0);
  CHECK_EQ(mode, MPOL_BIND);
  CHECK_EQ(nodes, 1);
  // Only offline nodes, or none: refused, the old policy stays.
  CHECK_ERRNO(set_policy(MPOL_BIND, 2, 3), EINVAL);
  CHECK_ERRNO(set_policy(MPOL_BIND, 0, 3), EINVAL);
  CHECK_ERRNO(set_policy(MPOL_INTERLEAVE, 0, 3), EINVAL);
  CHECK_ERRNO(set_policy(MPOL_DEFAULT, 1, 2), EINVAL);
  CHECK_ERRNO(set_policy(MPOL_LOCAL, 1, 2), EINVAL);
  CHECK_ERRNO(set_policy(9, 0, 0), EINVAL);
  CHECK_ERRNO(set_policy(MPOL_BIND | MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES, 1, 2), EINVAL);
  get_policy(&mode, &nodes, NULL, 0);
  CHECK_EQ(mode, MPOL_BIND);
  // The nodemask's last bit is not read (maxnode 1: no nodes).
  CHECK_ERRNO(set_policy(MPOL_BIND, 1, 1), EINVAL);
  // Static nodes keep the mask as given, offline nodes too.
  CHECK_OK(set_policy(MPOL_INTERLEAVE | MPOL_F_STATIC_NODES, 3, 3));
  get_policy(&mode, &nodes, NULL, 0);
  CHECK_EQ(mode, MPOL_INTERLEAVE | MPOL_F_STATIC_NODES);
  CHECK_EQ(nodes, 3);
  get_policy(&mode, &nodes, NULL, MPOL_F_NODE);
  CHECK_EQ(mode, 0);  // the next interleave node
  // MPOL_PREFERRED with no node is "local".
  CHECK_OK(syscall(SYS_set_mempolicy, MPOL_PREFERRED, NULL, 0));
  get_policy(&mode, &nodes, NULL, 0);
  CHECK_EQ(mode, MPOL_LOCAL);
  CHECK_EQ(nodes, 0);
  // Inherited by a child.
  CHECK_OK(set_policy(MPOL_PREFERRED, 1, 64));
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    get_policy(&mode, &nodes, NULL, 0);
    CHECK_EQ(mode, MPOL_PREFERRED);
    CHECK_EQ(nodes, 1);
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
  CHECK_OK(syscall(SYS_set_mempolicy, MPOL_DEFAULT, NULL, 0));
  get_policy(&mode, &nodes, NULL, 0);
  CHECK_EQ(mode, MPOL_DEFAULT);
}

TEST(mbind_checks) {
  char *p = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(p != MAP_FAILED);
  CHECK_OK(munmap(p + 4096, 4096));
  unsigned long node0 = 1, node1 = 2;
  CHECK_OK(syscall(SYS_mbind, p, 4096, MPOL_BIND, &node0, 2, 0));
  CHECK_OK(syscall(SYS_mbind, p, 0, MPOL_BIND, &node0, 2, 0));
  CHECK_ERRNO(syscall(SYS_mbind, p, 3 * 4096, MPOL_BIND, &node0, 2, 0), EFAULT);
  CHECK_ERRNO(syscall(SYS_mbind, p + 1, 4096, MPOL_BIND, &node0, 2, 0), EINVAL);
  CHECK_ERRNO(syscall(SYS_mbind, p, 4096, MPOL_BIND, &node1, 3, 0), EINVAL);
  CHECK_ERRNO(syscall(SYS_mbind, p, 4096, MPOL_BIND, &node0, 2, 64), EINVAL);
  CHECK_OK(syscall(SYS_mbind, p, 4096, MPOL_DEFAULT, NULL, 0, MPOL_MF_STRICT));
  int mode;
  unsigned long nodes;
  get_policy(&mode, &nodes, p + 2 * 4096, MPOL_F_ADDR);
  CHECK_EQ(mode, MPOL_DEFAULT);
  CHECK_ERRNO(syscall(SYS_get_mempolicy, &mode, NULL, 0, p + 4096, MPOL_F_ADDR), EFAULT);
  CHECK_OK(munmap(p, 3 * 4096));
}

TEST(protection_keys) {
  long key = syscall(SYS_pkey_alloc, 0, 0);
  if (key >= 0) {
    // A CPU with protection keys: the Sentry models one without (checked where it runs).
    CHECK_OK(syscall(SYS_pkey_free, key));
    return;
  }
  CHECK_EQ(errno, EINVAL);
  CHECK_ERRNO(syscall(SYS_pkey_alloc, 1, 0), EINVAL);
  CHECK_ERRNO(syscall(SYS_pkey_free, 0), EINVAL);
  CHECK_ERRNO(syscall(SYS_pkey_free, 1), EINVAL);
  char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(p != MAP_FAILED);
  CHECK_OK(syscall(SYS_pkey_mprotect, p, 4096, PROT_READ, -1));
  CHECK_ERRNO(syscall(SYS_pkey_mprotect, p, 4096, PROT_READ, 0), EINVAL);
  CHECK_ERRNO(syscall(SYS_pkey_mprotect, p, 4096, PROT_READ, 1), EINVAL);
  CHECK_OK(syscall(SYS_pkey_mprotect, p, 0, PROT_READ, 5));
  CHECK_ERRNO(syscall(SYS_pkey_mprotect, p + 1, 4096, PROT_READ, 5), EINVAL);
  CHECK_OK(munmap(p, 4096));
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  if (one_node()) {
    RUN(default_policy);
    RUN(set_and_get);
    RUN(mbind_checks);
  }
  RUN(protection_keys);
  PASS("numa_pkeys");
}
