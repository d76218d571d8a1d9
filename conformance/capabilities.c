// Capabilities (as root): capget/capset versions and rules, the bounding and ambient sets,
// keepcaps and securebits, what set*id and setfsuid do to the sets, the execve
// transformation (set-user-ID and set-group-ID programs too), permission checks that depend
// on one capability, /proc/self/status.
//
// Every case that changes the caller's sets runs in a forked child: sets only shrink. The
// values are compared with what capget and PR_CAPBSET_READ report, never with constants,
// since the host's bounding set may lack capabilities (containers drop some).

#define _GNU_SOURCE  // before any system header (common.h defines it too)

#include <grp.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/fsuid.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>

#include "common.h"

#define USER_UID 1000
#define USER_GID 1000
#define SETID_GID 4321  // a group nobody is in: a set-group-ID program's

typedef unsigned long long u64;

struct caps {
  u64 eff, prm, inh;
};

static u64 bit(int cap) { return 1ULL << cap; }

static int last_cap(void) {
  char buf[16] = {0};
  int fd = open("/proc/sys/kernel/cap_last_cap", O_RDONLY);
  CHECK(fd >= 0);
  CHECK(read(fd, buf, sizeof(buf) - 1) > 0);
  close(fd);
  return atoi(buf);
}

static long raw_capget(uint32_t version, int pid, void *data) {
  struct __user_cap_header_struct h = {version, pid};
  return syscall(SYS_capget, &h, data);
}

static struct caps get_caps_of(int pid) {
  struct __user_cap_data_struct d[2];
  CHECK_OK(raw_capget(_LINUX_CAPABILITY_VERSION_3, pid, d));
  struct caps c = {(u64)d[1].effective << 32 | d[0].effective,
                   (u64)d[1].permitted << 32 | d[0].permitted,
                   (u64)d[1].inheritable << 32 | d[0].inheritable};
  return c;
}
static struct caps get_caps(void) { return get_caps_of(0); }

static long set_caps(u64 eff, u64 prm, u64 inh) {
  struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct d[2] = {
      {(uint32_t)eff, (uint32_t)prm, (uint32_t)inh},
      {(uint32_t)(eff >> 32), (uint32_t)(prm >> 32), (uint32_t)(inh >> 32)}};
  return syscall(SYS_capset, &h, d);
}

// Removes `caps` from the effective set only (they stay permitted).
static void drop_effective(u64 caps) {
  struct caps c = get_caps();
  CHECK_OK(set_caps(c.eff & ~caps, c.prm, c.inh));
}

static u64 bounding(void) {
  u64 b = 0;
  for (int i = 0; i <= last_cap(); i++) {
    int r = prctl(PR_CAPBSET_READ, i, 0, 0, 0);
    CHECK(r == 0 || r == 1);
    if (r) b |= bit(i);
  }
  return b;
}

static int ambient_is_set(int cap) {
  return prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0);
}

static pid_t fork_checked(void) {
  fflush(stdout);
  pid_t p = fork();
  CHECK(p >= 0);
  return p;
}

// Re-executes this program in `mode`; the child's checks decide its exit status.
static void exec_self(const char *mode) {
  execl(conf_self, conf_self, mode, (char *)NULL);
  _exit(99);
}

static void run_exec_case(void (*prepare)(void), const char *mode) {
  pid_t p = fork_checked();
  if (p == 0) {
    prepare();
    exec_self(mode);
  }
  CHECK_EXIT(p, 0);
}

// --- capget ---

TEST(capget_versions) {
  struct caps c = get_caps();
  CHECK_EQ(c.eff, c.prm);  // root, untouched
  CHECK(c.prm & bit(CAP_SETPCAP));
  CHECK_EQ(c.prm & ~bounding(), 0);

  // Version 1 fills one word, versions 2 and 3 two.
  struct __user_cap_data_struct d[3];
  memset(d, 0xa5, sizeof(d));
  CHECK_OK(raw_capget(_LINUX_CAPABILITY_VERSION_1, 0, d));
  CHECK_EQ(d[0].effective, (uint32_t)c.eff);
  CHECK_EQ(d[1].effective, 0xa5a5a5a5u);
  memset(d, 0xa5, sizeof(d));
  CHECK_OK(raw_capget(_LINUX_CAPABILITY_VERSION_2, 0, d));
  CHECK_EQ(d[1].permitted, (uint32_t)(c.prm >> 32));
  CHECK_EQ(d[2].effective, 0xa5a5a5a5u);

  // A bad version: EINVAL and the preferred version written back; with a null data
  // pointer (libcap's probe) success.
  struct __user_cap_header_struct h = {0x12345678, 0};
  CHECK_ERRNO(syscall(SYS_capget, &h, d), EINVAL);
  CHECK_EQ(h.version, _LINUX_CAPABILITY_VERSION_3);
  h.version = 0;
  CHECK_EQ(syscall(SYS_capget, &h, NULL), 0);
  CHECK_EQ(h.version, _LINUX_CAPABILITY_VERSION_3);
  CHECK_EQ(syscall(SYS_capget, &h, NULL), 0);

  CHECK_ERRNO(syscall(SYS_capget, NULL, d), EFAULT);
  CHECK_ERRNO(syscall(SYS_capget, NULL, NULL), EFAULT);
  CHECK_ERRNO(raw_capget(_LINUX_CAPABILITY_VERSION_3, 0, (void *)8), EFAULT);
}

TEST(capget_pids) {
  struct caps self = get_caps();
  struct caps by_tid = get_caps_of(conf_gettid());
  CHECK_EQ(by_tid.eff, self.eff);
  CHECK_EQ(by_tid.prm, self.prm);
  struct __user_cap_data_struct d[2];
  CHECK_ERRNO(raw_capget(_LINUX_CAPABILITY_VERSION_3, -1, d), EINVAL);
  CHECK_ERRNO(raw_capget(_LINUX_CAPABILITY_VERSION_3, 0x3fffffff, d), ESRCH);

  // Another process's sets, as it changed them.
  int ready[2], done[2];
  CHECK_OK(pipe(ready));
  CHECK_OK(pipe(done));
  pid_t p = fork_checked();
  if (p == 0) {
    CHECK_OK(set_caps(self.eff & ~bit(CAP_KILL) & ~bit(CAP_SYS_ADMIN),
                      self.prm & ~bit(CAP_SYS_ADMIN), bit(CAP_CHOWN)));
    char c = 1;
    CHECK_EQ(write(ready[1], &c, 1), 1);
    CHECK_EQ(read(done[0], &c, 1), 1);
    _exit(0);
  }
  close(ready[1]);  // a child that fails ends the wait
  char c;
  CHECK_EQ(read(ready[0], &c, 1), 1);
  struct caps other = get_caps_of(p);
  CHECK_EQ(other.eff, self.eff & ~bit(CAP_KILL) & ~bit(CAP_SYS_ADMIN));
  CHECK_EQ(other.prm, self.prm & ~bit(CAP_SYS_ADMIN));
  CHECK_EQ(other.inh, bit(CAP_CHOWN));
  CHECK_EQ(write(done[1], &c, 1), 1);
  CHECK_EXIT(p, 0);
  close(ready[0]), close(done[0]), close(done[1]);
}

// --- capset ---

static void capset_rules_child(void) {
  struct caps c = get_caps();
  struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, getppid()};
  struct __user_cap_data_struct d[2] = {{0, 0, 0}, {0, 0, 0}};
  CHECK_ERRNO(syscall(SYS_capset, &h, d), EPERM);  // only one's own sets
  h.pid = 0;
  h.version = 1;
  CHECK_ERRNO(syscall(SYS_capset, &h, d), EINVAL);
  CHECK_EQ(h.version, _LINUX_CAPABILITY_VERSION_3);
  h.version = _LINUX_CAPABILITY_VERSION_3;
  CHECK_ERRNO(syscall(SYS_capset, &h, NULL), EFAULT);
  h.pid = conf_gettid();
  d[0].effective = (uint32_t)c.eff, d[0].permitted = (uint32_t)c.prm;
  d[1].effective = (uint32_t)(c.eff >> 32), d[1].permitted = (uint32_t)(c.prm >> 32);
  CHECK_OK(syscall(SYS_capset, &h, d));  // our own tid is fine

  // Effective within permitted; permitted never grows.
  CHECK_ERRNO(set_caps(c.eff, c.prm & ~bit(CAP_SYS_ADMIN), 0), EPERM);
  CHECK_OK(set_caps(c.eff & ~bit(CAP_SYS_ADMIN), c.prm & ~bit(CAP_SYS_ADMIN), 0));
  CHECK_ERRNO(set_caps(c.eff & ~bit(CAP_SYS_ADMIN), c.prm, 0), EPERM);
  c = get_caps();

  // With CAP_SETPCAP inheritable may take any bounding capability, even one not permitted.
  CHECK_OK(set_caps(c.eff, c.prm, bit(CAP_SYS_ADMIN)));
  CHECK_EQ(get_caps().inh, bit(CAP_SYS_ADMIN));
  CHECK_OK(prctl(PR_CAPBSET_DROP, CAP_NET_RAW, 0, 0, 0));
  CHECK_ERRNO(set_caps(c.eff, c.prm, bit(CAP_SYS_ADMIN) | bit(CAP_NET_RAW)), EPERM);
  // Without it, only old inheritable or permitted ones.
  u64 no_setpcap = c.eff & ~bit(CAP_SETPCAP);
  CHECK_OK(set_caps(no_setpcap, c.prm, bit(CAP_SYS_ADMIN) | bit(CAP_CHOWN)));
  CHECK_OK(set_caps(no_setpcap & ~bit(CAP_KILL), c.prm & ~bit(CAP_KILL), bit(CAP_SYS_ADMIN)));
  CHECK_ERRNO(set_caps(no_setpcap & ~bit(CAP_KILL), c.prm & ~bit(CAP_KILL),
                       bit(CAP_SYS_ADMIN) | bit(CAP_KILL)),
              EPERM);
  // Dropping an inheritable capability is always allowed.
  CHECK_OK(set_caps(no_setpcap & ~bit(CAP_KILL), c.prm & ~bit(CAP_KILL), 0));

  // Version 1 carries the low words only: the high ones become empty.
  c = get_caps();
  CHECK(c.prm >> 32);
  struct __user_cap_header_struct h1 = {_LINUX_CAPABILITY_VERSION_1, 0};
  struct __user_cap_data_struct d1 = {(uint32_t)c.eff, (uint32_t)c.prm, 0};
  CHECK_OK(syscall(SYS_capset, &h1, &d1));
  c = get_caps();
  CHECK_EQ(c.prm >> 32, 0);
  CHECK_EQ(c.eff >> 32, 0);
}

TEST(capset_rules) { conf_in_child(capset_rules_child); }

// --- prctl: bounding set, ambient set, keepcaps, securebits ---

static void bounding_child(void) {
  int last = last_cap();
  CHECK_EQ(prctl(PR_CAPBSET_READ, CAP_CHOWN, 0, 0, 0), 1);
  CHECK_ERRNO(prctl(PR_CAPBSET_READ, last + 1, 0, 0, 0), EINVAL);
  CHECK_ERRNO(prctl(PR_CAPBSET_READ, -1L, 0, 0, 0), EINVAL);
  CHECK_ERRNO(prctl(PR_CAPBSET_DROP, last + 1, 0, 0, 0), EINVAL);
  CHECK_OK(prctl(PR_CAPBSET_DROP, CAP_NET_RAW, 0, 0, 0));
  CHECK_EQ(prctl(PR_CAPBSET_READ, CAP_NET_RAW, 0, 0, 0), 0);
  CHECK_OK(prctl(PR_CAPBSET_DROP, CAP_NET_RAW, 0, 0, 0));  // again: fine
  // Dropping from the bounding set leaves the other sets alone.
  CHECK(get_caps().prm & bit(CAP_NET_RAW));
  // It takes CAP_SETPCAP (checked before the capability number).
  drop_effective(bit(CAP_SETPCAP));
  CHECK_ERRNO(prctl(PR_CAPBSET_DROP, CAP_CHOWN, 0, 0, 0), EPERM);
  CHECK_ERRNO(prctl(PR_CAPBSET_DROP, last + 1, 0, 0, 0), EPERM);
  CHECK_EQ(prctl(PR_CAPBSET_READ, CAP_CHOWN, 0, 0, 0), 1);
}

TEST(bounding_set) { conf_in_child(bounding_child); }

static void ambient_child(void) {
  struct caps c = get_caps();
  CHECK_EQ(ambient_is_set(CAP_KILL), 0);
  // Raising needs the capability both permitted and inheritable.
  CHECK_ERRNO(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_KILL, 0, 0), EPERM);
  CHECK_OK(set_caps(c.eff, c.prm, bit(CAP_KILL) | bit(CAP_CHOWN)));
  CHECK_OK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_KILL, 0, 0));
  CHECK_OK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_CHOWN, 0, 0));
  CHECK_EQ(ambient_is_set(CAP_KILL), 1);
  CHECK_OK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_LOWER, CAP_KILL, 0, 0));
  CHECK_EQ(ambient_is_set(CAP_KILL), 0);
  CHECK_OK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_LOWER, CAP_KILL, 0, 0));
  // Argument checks.
  CHECK_ERRNO(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, last_cap() + 1, 0, 0), EINVAL);
  CHECK_ERRNO(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, CAP_KILL, 1, 0), EINVAL);
  CHECK_ERRNO(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_KILL, 0, 1), EINVAL);
  CHECK_ERRNO(prctl(PR_CAP_AMBIENT, 99, CAP_KILL, 0, 0), EINVAL);
  CHECK_ERRNO(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 1, 0, 0), EINVAL);
  // Leaving the inheritable (or permitted) set drops a capability from ambient.
  CHECK_OK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_KILL, 0, 0));
  CHECK_OK(set_caps(c.eff, c.prm, bit(CAP_KILL)));
  CHECK_EQ(ambient_is_set(CAP_CHOWN), 0);
  CHECK_EQ(ambient_is_set(CAP_KILL), 1);
  CHECK_OK(set_caps(c.eff & ~bit(CAP_KILL), c.prm & ~bit(CAP_KILL), bit(CAP_KILL)));
  CHECK_EQ(ambient_is_set(CAP_KILL), 0);
  CHECK_OK(set_caps(c.eff & ~bit(CAP_KILL), c.prm & ~bit(CAP_KILL), bit(CAP_CHOWN)));
  CHECK_OK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_CHOWN, 0, 0));
  CHECK_OK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0));
  CHECK_EQ(ambient_is_set(CAP_CHOWN), 0);
  // SECBIT_NO_CAP_AMBIENT_RAISE forbids raising.
  CHECK_OK(prctl(PR_SET_SECUREBITS, 1 << 6, 0, 0, 0));
  CHECK_ERRNO(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_CHOWN, 0, 0), EPERM);
}

TEST(ambient_set) { conf_in_child(ambient_child); }

static void securebits_child(void) {
  CHECK_EQ(prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0), 0);
  CHECK_EQ(prctl(PR_GET_SECUREBITS, 0, 0, 0, 0), 0);
  CHECK_ERRNO(prctl(PR_SET_KEEPCAPS, 2, 0, 0, 0), EINVAL);
  CHECK_OK(prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0));
  CHECK_EQ(prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0), 1);
  CHECK_EQ(prctl(PR_GET_SECUREBITS, 0, 0, 0, 0), 1 << 4);  // KEEP_CAPS is a securebit
  CHECK_OK(prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0));
  CHECK_EQ(prctl(PR_GET_SECUREBITS, 0, 0, 0, 0), 0);
  CHECK_ERRNO(prctl(PR_SET_SECUREBITS, 1 << 20, 0, 0, 0), EPERM);  // unknown bit
  // KEEP_CAPS set and locked: PR_SET_KEEPCAPS can change nothing, nor can the lock go.
  CHECK_OK(prctl(PR_SET_SECUREBITS, (1 << 4) | (1 << 5), 0, 0, 0));
  CHECK_EQ(prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0), 1);
  CHECK_ERRNO(prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0), EPERM);
  CHECK_ERRNO(prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0), EPERM);
  CHECK_ERRNO(prctl(PR_SET_SECUREBITS, 1 << 4, 0, 0, 0), EPERM);
  CHECK_ERRNO(prctl(PR_SET_SECUREBITS, 1 << 5, 0, 0, 0), EPERM);
  CHECK_OK(prctl(PR_SET_SECUREBITS, (1 << 4) | (1 << 5) | 1, 0, 0, 0));  // others may change
  // Any change needs CAP_SETPCAP, even one that would be allowed otherwise.
  drop_effective(bit(CAP_SETPCAP));
  CHECK_ERRNO(prctl(PR_SET_SECUREBITS, (1 << 4) | (1 << 5), 0, 0, 0), EPERM);
  CHECK_EQ(prctl(PR_GET_SECUREBITS, 0, 0, 0, 0), (1 << 4) | (1 << 5) | 1);
  // no_new_privs is one-way.
  CHECK_EQ(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0), 0);
  CHECK_ERRNO(prctl(PR_SET_NO_NEW_PRIVS, 0, 0, 0, 0), EINVAL);
  CHECK_ERRNO(prctl(PR_SET_NO_NEW_PRIVS, 1, 1, 0, 0), EINVAL);
  CHECK_ERRNO(prctl(PR_GET_NO_NEW_PRIVS, 1, 0, 0, 0), EINVAL);
  CHECK_OK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));
  CHECK_EQ(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0), 1);
}

TEST(keepcaps_securebits) { conf_in_child(securebits_child); }

// --- user id changes ---

static int dumpable(void) { return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0); }

static void setresuid_drops_child(void) {
  struct caps c = get_caps();
  CHECK_OK(set_caps(c.eff, c.prm, bit(CAP_CHOWN)));
  CHECK_OK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_CHOWN, 0, 0));
  CHECK_OK(setgroups(0, NULL));
  CHECK_OK(prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0));
  CHECK_EQ(dumpable(), 1);  // neither capset nor setgroups changes that
  CHECK_OK(setresuid(USER_UID, USER_UID, USER_UID));
  // A process that changed its ids is not dumpable and forgets its parent-death signal.
  CHECK_EQ(dumpable(), 0);
  int sig = -1;
  CHECK_OK(prctl(PR_GET_PDEATHSIG, &sig, 0, 0, 0));
  CHECK_EQ(sig, 0);
  CHECK_ERRNO(prctl(PR_SET_DUMPABLE, 2, 0, 0, 0), EINVAL);
  CHECK_OK(prctl(PR_SET_DUMPABLE, 1, 0, 0, 0));
  CHECK_EQ(dumpable(), 1);
  struct caps n = get_caps();
  CHECK_EQ(n.eff, 0);
  CHECK_EQ(n.prm, 0);
  CHECK_EQ(n.inh, bit(CAP_CHOWN));  // inheritable is left alone
  CHECK_EQ(ambient_is_set(CAP_CHOWN), 0);
  // No way back.
  CHECK_ERRNO(setuid(0), EPERM);
  CHECK_ERRNO(setresuid(-1, 0, -1), EPERM);
  CHECK_ERRNO(setgroups(0, NULL), EPERM);
  CHECK_ERRNO(set_caps(bit(CAP_CHOWN), bit(CAP_CHOWN), bit(CAP_CHOWN)), EPERM);
  CHECK_OK(setresuid(USER_UID, -1, -1));
}

static void keepcaps_child(void) {
  struct caps c = get_caps();
  CHECK_OK(set_caps(c.eff, c.prm, bit(CAP_CHOWN)));
  CHECK_OK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_CHOWN, 0, 0));
  CHECK_OK(prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0));
  CHECK_OK(setresuid(USER_UID, USER_UID, USER_UID));
  struct caps n = get_caps();
  CHECK_EQ(n.prm, c.prm);
  CHECK_EQ(n.eff, 0);                      // effective goes with euid 0 regardless
  CHECK_EQ(ambient_is_set(CAP_CHOWN), 0);  // ambient goes even with KEEP_CAPS
  CHECK_OK(set_caps(n.prm, n.prm, 0));
  // Permitted CAP_SETUID lets uid 1000 become root again, and the effective set follows
  // euid 0.
  CHECK_OK(set_caps(0, n.prm, 0));
  CHECK_ERRNO(setuid(0), EPERM);
  CHECK_OK(set_caps(bit(CAP_SETUID), n.prm, 0));
  CHECK_OK(setresuid(-1, 0, -1));
  CHECK_EQ(get_caps().eff, n.prm);
}

static void seteuid_child(void) {
  struct caps c = get_caps();
  // euid leaving 0 clears effective only; coming back restores it from permitted.
  CHECK_OK(seteuid(USER_UID));
  CHECK_EQ(get_caps().eff, 0);
  CHECK_EQ(get_caps().prm, c.prm);
  CHECK_OK(seteuid(0));
  CHECK_EQ(get_caps().eff, c.prm);
  CHECK_OK(setreuid(USER_UID, -1));  // ruid 1000, euid and suid 0: nothing dropped
  CHECK_EQ(get_caps().eff, c.prm);
  // SECBIT_NO_SETUID_FIXUP: the sets ignore id changes altogether.
  CHECK_OK(prctl(PR_SET_SECUREBITS, 1 << 2, 0, 0, 0));
  CHECK_OK(setresuid(USER_UID, USER_UID, USER_UID));
  CHECK_EQ(get_caps().eff, c.eff);
  CHECK_EQ(get_caps().prm, c.prm);
  CHECK_OK(setresuid(0, 0, 0));
}

static void setuid_rules_child(void) {
  CHECK_ERRNO(setuid(-1), EINVAL);
  CHECK_ERRNO(setgid(-1), EINVAL);
  // Root without CAP_SETUID/CAP_SETGID is just uid 0.
  drop_effective(bit(CAP_SETUID) | bit(CAP_SETGID));
  CHECK_ERRNO(setuid(USER_UID), EPERM);
  CHECK_ERRNO(setresuid(USER_UID, -1, -1), EPERM);
  CHECK_ERRNO(setgid(USER_GID), EPERM);
  CHECK_ERRNO(setgroups(0, NULL), EPERM);
  CHECK_OK(setuid(0));
  struct caps c = get_caps();
  CHECK_OK(set_caps(c.prm, c.prm, 0));
  // setreuid: the real id may become the effective one only.
  CHECK_OK(setresuid(0, USER_UID, 2000));
  CHECK_OK(setreuid(USER_UID, -1));
  uid_t r, e, s;
  CHECK_OK(getresuid(&r, &e, &s));
  CHECK_EQ(r, USER_UID);
  CHECK_EQ(e, USER_UID);
  CHECK_EQ(s, USER_UID);  // a real id change saves the effective one
  CHECK_ERRNO(setreuid(2000, -1), EPERM);
  CHECK_ERRNO(setuid(0), EPERM);
}

TEST(setuid_transitions) {
  conf_in_child(setresuid_drops_child);
  conf_in_child(keepcaps_child);
  conf_in_child(seteuid_child);
  conf_in_child(setuid_rules_child);
}

static void setfsuid_child(void) {
  const u64 fs_set = bit(CAP_CHOWN) | bit(CAP_DAC_OVERRIDE) | bit(CAP_DAC_READ_SEARCH) |
                     bit(CAP_FOWNER) | bit(CAP_FSETID) | bit(CAP_LINUX_IMMUTABLE) | bit(CAP_MKNOD) |
                     bit(CAP_MAC_OVERRIDE);
  struct caps c = get_caps();
  CHECK_EQ(dumpable(), 1);
  CHECK_EQ(setfsuid(USER_UID), 0);  // returns the old fsuid
  CHECK_EQ(dumpable(), 0);
  CHECK_EQ(setfsuid(-1), USER_UID);  // an invalid id changes nothing: a query
  CHECK_EQ(get_caps().eff, c.eff & ~fs_set);
  CHECK_EQ(get_caps().prm, c.prm);
  CHECK_EQ(geteuid(), 0);

  // Files are checked and created as the fsuid.
  int fd = open("fsuid_probe", O_CREAT | O_WRONLY, 0600);
  CHECK(fd >= 0);
  struct stat st;
  CHECK_OK(fstat(fd, &st));
  CHECK_EQ(st.st_uid, USER_UID);
  close(fd);
  CHECK_EQ(setfsuid(0), USER_UID);
  CHECK_EQ(get_caps().eff, c.eff);
  CHECK_OK(chmod("fsuid_probe", 0600));
  CHECK_OK(chown("fsuid_probe", 0, 0));
  CHECK_EQ(setfsuid(USER_UID), 0);
  CHECK_ERRNO(open("fsuid_probe", O_RDONLY), EACCES);
  CHECK_EQ(setfsuid(0), USER_UID);
  CHECK_OK(unlink("fsuid_probe"));

  CHECK_EQ(setfsgid(USER_GID), 0);
  CHECK_EQ(setfsgid(-1), USER_GID);
  CHECK_EQ(get_caps().eff, c.eff);  // fsgid changes touch no capability
  CHECK_EQ(setfsgid(0), USER_GID);

  // Unprivileged: only to one of the other ids, silently.
  CHECK_OK(setresgid(USER_GID, USER_GID, 2000));
  CHECK_OK(setresuid(USER_UID, USER_UID, USER_UID));
  CHECK_EQ(setfsuid(0), USER_UID);
  CHECK_EQ(setfsuid(-1), USER_UID);
  CHECK_EQ(setfsgid(2000), USER_GID);
  CHECK_EQ(setfsgid(0), 2000);
  CHECK_EQ(setfsgid(-1), 2000);
}

TEST(setfsuid_setfsgid) {
  CHECK_OK(mkdir("fsdir", 0777));
  CHECK_OK(chmod("fsdir", 0777));
  CHECK_OK(chdir("fsdir"));
  conf_in_child(setfsuid_child);
  CHECK_OK(chdir(".."));
}

// --- execve ---

// Child modes: the exec'd program checks the sets it was given.
static int exec_mode_full(void) {
  // Root: permitted is the bounding set (plus inheritable), all of it effective.
  struct caps c = get_caps();
  CHECK_EQ(c.prm, bounding() | c.inh);
  CHECK_EQ(c.eff, c.prm);
  CHECK_EQ(prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0), 0);  // cleared by execve
  CHECK_EQ(getauxval(AT_SECURE), 0);
  CHECK_EQ(ambient_is_set(CAP_KILL), 0);
  return 0;
}

static int exec_mode_ambient(void) {
  struct caps c = get_caps();
  CHECK_EQ(getuid(), USER_UID);
  CHECK_EQ(geteuid(), USER_UID);
  CHECK_EQ(c.prm, bit(CAP_KILL) | bit(CAP_NET_BIND_SERVICE));
  CHECK_EQ(c.eff, c.prm);
  CHECK_EQ(c.inh, c.prm);
  CHECK_EQ(ambient_is_set(CAP_KILL), 1);
  CHECK_EQ(ambient_is_set(CAP_CHOWN), 0);
  CHECK_EQ(prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0), 0);
  CHECK_EQ(getauxval(AT_SECURE), 0);
  CHECK_EQ(dumpable(), 1);  // a plain execve makes it dumpable again
  return 0;
}

static int exec_mode_none(void) {
  struct caps c = get_caps();
  CHECK_EQ(c.prm, 0);
  CHECK_EQ(c.eff, 0);
  CHECK_EQ(ambient_is_set(CAP_KILL), 0);
  CHECK_EQ(dumpable(), 1);
  return 0;
}

// ruid 0, euid 1000: root's permitted set, none of it effective; secure mode.
static int exec_mode_ruid_root(void) {
  struct caps c = get_caps();
  CHECK_EQ(c.prm, bounding());
  // Effective is the ambient set. Linux 6.15 and later keep that across an execve that
  // changes no id; earlier kernels cleared it whenever euid != ruid.
  CHECK_EQ(c.eff, ambient_is_set(CAP_KILL) ? bit(CAP_KILL) : 0);
  CHECK_EQ(getauxval(AT_SECURE), 1);
  uid_t r, e, s;
  CHECK_OK(getresuid(&r, &e, &s));
  CHECK_EQ(r, 0);
  CHECK_EQ(e, USER_UID);
  CHECK_EQ(s, USER_UID);    // the saved id takes the effective one
  CHECK_EQ(dumpable(), 0);  // ran with split ids
  return 0;
}

// ruid 1000, euid 0: everything, in secure mode, and ambient cleared.
static int exec_mode_euid_root(void) {
  struct caps c = get_caps();
  CHECK_EQ(c.prm, bounding());
  CHECK_EQ(c.eff, c.prm);
  CHECK_EQ(getauxval(AT_SECURE), 1);
  CHECK_EQ(ambient_is_set(CAP_KILL), 0);
  CHECK_EQ(dumpable(), 0);
  return 0;
}

static void prepare_partial_root(void) {
  // Root with a few effective capabilities and one bounding capability dropped: execve
  // gives root everything the bounding set still allows, in both sets.
  struct caps c = get_caps();
  CHECK_OK(prctl(PR_CAPBSET_DROP, CAP_NET_RAW, 0, 0, 0));
  CHECK_OK(set_caps(bit(CAP_CHOWN), c.prm & ~bit(CAP_SYS_ADMIN), 0));
  CHECK_OK(prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0));
}

static void prepare_ambient(void) {
  struct caps c = get_caps();
  u64 keep = bit(CAP_KILL) | bit(CAP_NET_BIND_SERVICE);
  CHECK_OK(set_caps(c.eff, c.prm, keep));
  CHECK_OK(prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0));
  CHECK_OK(setresgid(USER_GID, USER_GID, USER_GID));
  CHECK_OK(setresuid(USER_UID, USER_UID, USER_UID));
  CHECK_OK(set_caps(keep, keep, keep));
  CHECK_OK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_KILL, 0, 0));
  CHECK_OK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_NET_BIND_SERVICE, 0, 0));
}

static void prepare_user(void) {
  CHECK_OK(setresgid(USER_GID, USER_GID, USER_GID));
  CHECK_OK(setresuid(USER_UID, USER_UID, USER_UID));
}

static void prepare_noroot(void) {
  // SECBIT_NOROOT: uid 0 is nothing special to execve.
  CHECK_OK(prctl(PR_SET_SECUREBITS, 1, 0, 0, 0));
}

static void prepare_ruid_root(void) {
  struct caps c = get_caps();
  CHECK_OK(set_caps(c.eff, c.prm, bit(CAP_KILL)));
  CHECK_OK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_KILL, 0, 0));
  CHECK_OK(setresuid(0, USER_UID, USER_UID));
  CHECK_EQ(ambient_is_set(CAP_KILL), 1);  // uid 0 remains: nothing dropped yet
}

static void prepare_euid_root(void) {
  struct caps c = get_caps();
  CHECK_OK(set_caps(c.eff, c.prm, 0));
  CHECK_OK(setresuid(USER_UID, 0, 0));
}

static void prepare_nnp(void) {
  // no_new_privs: nothing gained, so nothing changes.
  CHECK_OK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));
}

TEST(execve_transitions) {
  run_exec_case(prepare_nnp, "exec_full");
  run_exec_case(prepare_partial_root, "exec_full");
  run_exec_case(prepare_ambient, "exec_ambient");
  run_exec_case(prepare_user, "exec_none");
  run_exec_case(prepare_noroot, "exec_none");
  run_exec_case(prepare_ruid_root, "exec_ruid_root");
  run_exec_case(prepare_euid_root, "exec_euid_root");
}

// --- set-user-ID and set-group-ID programs ---

// uid and gid 1000 running a set-user-ID root program: euid and saved uid 0, root's sets.
static int exec_mode_setuid_root(void) {
  uid_t r, e, s;
  CHECK_OK(getresuid(&r, &e, &s));
  CHECK_EQ(r, USER_UID);
  CHECK_EQ(e, 0);
  CHECK_EQ(s, 0);
  CHECK_EQ(getegid(), USER_GID);
  struct caps c = get_caps();
  CHECK_EQ(c.prm, bounding());
  CHECK_EQ(c.eff, c.prm);
  CHECK_EQ(getauxval(AT_SECURE), 1);
  CHECK_EQ(dumpable(), 0);
  return 0;
}

// uid and gid 1000 running a set-group-ID program: only the group changes.
static int exec_mode_setgid(void) {
  gid_t r, e, s;
  CHECK_OK(getresgid(&r, &e, &s));
  CHECK_EQ(r, USER_GID);
  CHECK_EQ(e, SETID_GID);
  CHECK_EQ(s, SETID_GID);
  CHECK_EQ(geteuid(), USER_UID);
  struct caps c = get_caps();
  CHECK_EQ(c.prm, 0);
  CHECK_EQ(c.eff, 0);
  CHECK_EQ(getauxval(AT_SECURE), 1);
  CHECK_EQ(dumpable(), 0);
  return 0;
}

// uid and gid 1000 after an execve whose set-ID bits did not apply.
static int exec_mode_setid_ignored(void) {
  uid_t r, e, s;
  CHECK_OK(getresuid(&r, &e, &s));
  CHECK(r == USER_UID && e == USER_UID && s == USER_UID);
  gid_t gr, ge, gs;
  CHECK_OK(getresgid(&gr, &ge, &gs));
  CHECK(gr == USER_GID && ge == USER_GID && gs == USER_GID);
  struct caps c = get_caps();
  CHECK_EQ(c.prm, 0);
  CHECK_EQ(getauxval(AT_SECURE), 0);
  CHECK_EQ(dumpable(), 1);
  return 0;
}

// The same under a tracer without CAP_SYS_PTRACE: the ids stay, but the program was set-ID,
// so it runs in secure mode.
static int exec_mode_setuid_traced(void) {
  uid_t r, e, s;
  CHECK_OK(getresuid(&r, &e, &s));
  CHECK(r == USER_UID && e == USER_UID && s == USER_UID);
  CHECK_EQ(get_caps().prm, 0);
  CHECK_EQ(getauxval(AT_SECURE), 1);
  return 0;
}

// A copy of this program at `path`, owned by `uid`:`gid`, with `mode` (set-ID bits included:
// the chmod comes after the chown, which clears them).
static void copy_self(const char *path, uid_t uid, gid_t gid, mode_t mode) {
  int in = open(conf_self, O_RDONLY | O_CLOEXEC);
  CHECK(in >= 0);
  int out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);
  CHECK(out >= 0);
  char buf[65536];
  ssize_t n;
  while ((n = read(in, buf, sizeof(buf))) > 0) CHECK_EQ(write(out, buf, n), n);
  CHECK_EQ(n, 0);
  CHECK_OK(fchown(out, uid, gid));
  CHECK_OK(fchmod(out, mode));
  close(out);
  close(in);
  struct stat st;
  CHECK_OK(stat(path, &st));
  CHECK_EQ(st.st_mode & 07777, mode);
}

// Runs `prog` (a path with a slash) in `mode` from a forked child prepared by `prepare`.
static void run_program_case(void (*prepare)(void), const char *prog, const char *mode) {
  pid_t p = fork_checked();
  if (p == 0) {
    prepare();
    execl(prog, prog, mode, (char *)NULL);
    _exit(99);
  }
  CHECK_EXIT(p, 0);
}

static void prepare_nothing(void) {}

static void prepare_user_nnp(void) {
  prepare_user();
  CHECK_OK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));
}

// The set-user-ID root program again, but from a nosuid mount in a mount namespace of its own.
static void nosuid_mount_child(void) {
  CHECK_OK(unshare(CLONE_NEWNS));
  CHECK_OK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
  CHECK_OK(mkdir("nosuid", 0755));
  CHECK_OK(mount("none", "nosuid", "tmpfs", MS_NOSUID, "mode=0755"));
  copy_self("nosuid/suid_root", 0, 0, 04755);
  run_program_case(prepare_user, "./nosuid/suid_root", "exec_setid_ignored");
  // The mount goes with this child's mount namespace. (An umount here right after the
  // reap got EBUSY once under the ptrace platform in CI: the exited program's file is
  // released a little after its reap there; natively it is gone by then.)
}

// A tracer without CAP_SYS_PTRACE (uid 1000) traces its child through the execve of a
// set-user-ID root program: the ids are not raised.
static void traced_child(void) {
  prepare_user();
  pid_t p = fork_checked();
  if (p == 0) {
    CHECK_OK(ptrace(PTRACE_TRACEME, 0, NULL, NULL));
    execl("./suid_root", "./suid_root", "exec_setuid_traced", (char *)NULL);
    _exit(99);
  }
  int status;
  for (;;) {
    CHECK_EQ(waitpid(p, &status, 0), p);
    if (!WIFSTOPPED(status)) break;
    CHECK_OK(ptrace(PTRACE_CONT, p, NULL, NULL));  // the exec's SIGTRAP, not passed on
  }
  CHECK(WIFEXITED(status));
  CHECK_EQ(WEXITSTATUS(status), 0);
}

TEST(execve_set_id) {
  // uid 1000 must reach the copies: the test directory is root's 0700 by mkdtemp.
  CHECK_OK(chmod(".", 0755));
  copy_self("suid_root", 0, 0, 04755);
  copy_self("sgid_prog", 0, SETID_GID, 02755);
  copy_self("sgid_nox", 0, SETID_GID, 02745);  // set-group-ID without group x: locking
  copy_self("suid_user", USER_UID, USER_GID, 04755);
  run_program_case(prepare_user, "./suid_root", "exec_setuid_root");
  run_program_case(prepare_user, "./sgid_prog", "exec_setgid");
  run_program_case(prepare_user, "./sgid_nox", "exec_setid_ignored");
  run_program_case(prepare_user_nnp, "./suid_root", "exec_setid_ignored");
  // Root running a program set-user-ID to 1000: root's permitted set, none effective.
  run_program_case(prepare_nothing, "./suid_user", "exec_ruid_root");
  conf_in_child(nosuid_mount_child);
  conf_in_child(traced_child);
  CHECK_OK(chmod(".", 0700));
}

// --- permission checks that hang on one capability ---

static void dac_child(void) {
  // A file and a directory of another user that nobody may use.
  CHECK_OK(mkdir("locked", 0700));
  conf_put_file("locked/f", "x", 0644);
  CHECK_OK(chown("locked", USER_UID, USER_GID));
  CHECK_OK(chmod("locked", 0));
  conf_put_file("secret", "x", 0644);
  CHECK_OK(chown("secret", USER_UID, USER_GID));
  CHECK_OK(chmod("secret", 0));
  int fd = open("secret", O_RDWR);
  CHECK(fd >= 0);
  close(fd);
  CHECK_ERRNO(access("secret", X_OK), EACCES);  // not even root executes a 0000 file

  // CAP_DAC_READ_SEARCH alone reads files and reads and searches directories.
  drop_effective(bit(CAP_DAC_OVERRIDE));
  fd = open("secret", O_RDONLY);
  CHECK(fd >= 0);
  close(fd);
  CHECK_ERRNO(open("secret", O_WRONLY), EACCES);
  fd = open("locked/f", O_RDONLY);
  CHECK(fd >= 0);
  close(fd);
  CHECK_ERRNO(open("locked/g", O_CREAT | O_WRONLY, 0600), EACCES);
  // access(2) asks as the real uid 0 would, with the whole permitted set.
  CHECK_OK(access("secret", R_OK | W_OK));
  CHECK_ERRNO(faccessat(AT_FDCWD, "secret", W_OK, AT_EACCESS), EACCES);

  drop_effective(bit(CAP_DAC_READ_SEARCH));
  CHECK_ERRNO(open("secret", O_RDONLY), EACCES);
  CHECK_ERRNO(open("locked/f", O_RDONLY), EACCES);
  struct stat st;
  CHECK_ERRNO(stat("locked/f", &st), EACCES);
}

static void owner_child(void) {
  conf_put_file("theirs", "x", 0644);
  CHECK_OK(chown("theirs", USER_UID, USER_GID));
  CHECK_OK(chmod("theirs", 0666));
  conf_put_file("mine", "x", 0644);
  conf_put_file("grp", "x", 0644);
  CHECK_OK(chown("grp", 0, USER_GID));

  drop_effective(bit(CAP_CHOWN));
  CHECK_ERRNO(chown("mine", USER_UID, -1), EPERM);
  CHECK_ERRNO(chown("mine", -1, USER_GID), EPERM);
  CHECK_OK(chown("mine", 0, 0));  // no change, and a group we are in
  CHECK_ERRNO(chown("theirs", 0, -1), EPERM);
  CHECK_OK(chmod("theirs", 0644));  // CAP_FOWNER still there
  int fd = open("theirs", O_RDONLY | O_NOATIME);
  CHECK(fd >= 0);
  close(fd);

  drop_effective(bit(CAP_FOWNER));
  CHECK_ERRNO(chmod("theirs", 0600), EPERM);
  struct timespec ts[2] = {{1, 0}, {1, 0}};
  CHECK_ERRNO(utimensat(AT_FDCWD, "theirs", ts, 0), EPERM);
  CHECK_OK(chmod("mine", 0640));
  CHECK_ERRNO(open("theirs", O_RDONLY | O_NOATIME), EPERM);
  fd = open("theirs", O_RDONLY);
  CHECK(fd >= 0);
  CHECK_ERRNO(fcntl(fd, F_SETFL, O_NOATIME), EPERM);
  close(fd);
  fd = open("mine", O_RDONLY | O_NOATIME);
  CHECK(fd >= 0);
  CHECK_OK(fcntl(fd, F_SETFL, 0));
  close(fd);

  // CAP_FSETID: chmod g+s of a file whose group we are not in silently loses the bit;
  // writing to a set-user-ID file clears it.
  conf_put_file("setid", "x", 0644);
  CHECK_OK(chmod("setid", 04755));
  fd = open("setid", O_WRONLY);
  CHECK(fd >= 0);
  CHECK_EQ(write(fd, "y", 1), 1);
  struct stat st;
  CHECK_OK(fstat(fd, &st));
  CHECK_EQ(st.st_mode & 07777, 04755);  // kept with CAP_FSETID
  drop_effective(bit(CAP_FSETID));
  CHECK_EQ(write(fd, "z", 1), 1);
  CHECK_OK(fstat(fd, &st));
  CHECK_EQ(st.st_mode & 07777, 0755);
  close(fd);
  CHECK_OK(chmod("grp", 02755));
  CHECK_OK(stat("grp", &st));
  CHECK_EQ(st.st_mode & 07777, 0755);
}

static void kill_child(void) {
  int ready[2];
  CHECK_OK(pipe(ready));
  pid_t p = fork_checked();
  if (p == 0) {
    CHECK_OK(setresuid(USER_UID, USER_UID, USER_UID));
    char c = 1;
    CHECK_EQ(write(ready[1], &c, 1), 1);
    for (;;) pause();
  }
  close(ready[1]);
  char c;
  CHECK_EQ(read(ready[0], &c, 1), 1);
  CHECK_OK(kill(p, 0));
  drop_effective(bit(CAP_KILL));
  CHECK_ERRNO(kill(p, 0), EPERM);
  CHECK_ERRNO(kill(p, SIGTERM), EPERM);
  CHECK_ERRNO(syscall(SYS_tgkill, p, p, SIGTERM), EPERM);
  CHECK_OK(kill(p, SIGCONT));  // same session
  // A real uid matching the target's saved or real uid is enough too.
  CHECK_OK(setresuid(USER_UID, 0, 0));
  CHECK_OK(kill(p, 0));
  CHECK_OK(setresuid(0, 0, 0));
  CHECK_ERRNO(kill(p, SIGKILL), EPERM);
  struct caps cs = get_caps();
  CHECK_OK(set_caps(cs.prm, cs.prm, cs.inh));
  CHECK_OK(kill(p, SIGKILL));
  CHECK_KILLED(p, SIGKILL);
}

static void limits_child(void) {
  // CAP_SYS_RESOURCE raises hard limits (the host may not grant it: drop it either way).
  struct caps c = get_caps();
  CHECK_OK(set_caps(c.eff & ~bit(CAP_SYS_RESOURCE), c.prm & ~bit(CAP_SYS_RESOURCE), c.inh));
  struct rlimit rl;
  CHECK_OK(getrlimit(RLIMIT_NOFILE, &rl));
  struct rlimit lower = {rl.rlim_cur > 64 ? 64 : rl.rlim_cur, 64};
  CHECK_OK(setrlimit(RLIMIT_NOFILE, &lower));
  lower.rlim_max = 65;
  CHECK_ERRNO(setrlimit(RLIMIT_NOFILE, &lower), EPERM);
  // CAP_SYS_NICE: lowering the nice value and real-time policies (RLIMIT_NICE and
  // RLIMIT_RTPRIO at their defaults of 0).
  struct rlimit zero = {0, 0};
  CHECK_OK(setrlimit(RLIMIT_NICE, &zero));
  CHECK_OK(setrlimit(RLIMIT_RTPRIO, &zero));
  CHECK_OK(setpriority(PRIO_PROCESS, 0, 5));
  CHECK_OK(setpriority(PRIO_PROCESS, 0, 4));
  drop_effective(bit(CAP_SYS_NICE));
  CHECK_ERRNO(setpriority(PRIO_PROCESS, 0, 3), EACCES);
  CHECK_OK(setpriority(PRIO_PROCESS, 0, 6));
  struct sched_param sp = {1};
  CHECK_ERRNO(sched_setscheduler(0, SCHED_FIFO, &sp), EPERM);
}

TEST(capability_checks) {
  conf_in_child(dac_child);
  conf_in_child(owner_child);
  conf_in_child(kill_child);
  conf_in_child(limits_child);
}

// --- /proc/self/status ---

static u64 status_field(const char *name) {
  char buf[8192];
  int fd = open("/proc/self/status", O_RDONLY);
  CHECK(fd >= 0);
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  CHECK(n > 0);
  close(fd);
  buf[n] = '\0';
  char key[64];
  snprintf(key, sizeof(key), "\n%s:\t", name);
  char *p = strstr(buf, key);
  CHECK(p != NULL);
  p += strlen(key);
  char *end = strchr(p, '\n');
  CHECK(end != NULL);
  // The capability sets are 16 hex digits.
  if (strncmp(name, "Cap", 3) == 0) CHECK_EQ(end - p, 16);
  return strtoull(p, NULL, strncmp(name, "Cap", 3) == 0 ? 16 : 10);
}

static void check_status_matches(void) {
  struct caps c = get_caps();
  CHECK_EQ(status_field("CapInh"), c.inh);
  CHECK_EQ(status_field("CapPrm"), c.prm);
  CHECK_EQ(status_field("CapEff"), c.eff);
  CHECK_EQ(status_field("CapBnd"), bounding());
  u64 amb = 0;
  for (int i = 0; i <= last_cap(); i++) {
    if (ambient_is_set(i)) amb |= bit(i);
  }
  CHECK_EQ(status_field("CapAmb"), amb);
  CHECK_EQ(status_field("NoNewPrivs"), (u64)prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
  CHECK_EQ(status_field("Seccomp"), 0);
}

static void status_child(void) {
  check_status_matches();
  struct caps c = get_caps();
  CHECK_OK(prctl(PR_CAPBSET_DROP, CAP_SYS_BOOT, 0, 0, 0));
  CHECK_OK(set_caps(c.eff & ~bit(CAP_SYS_ADMIN), c.prm, bit(CAP_KILL) | bit(CAP_CHOWN)));
  CHECK_OK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_KILL, 0, 0));
  CHECK_OK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));
  check_status_matches();
  CHECK_EQ(status_field("CapAmb"), bit(CAP_KILL));
  CHECK_EQ(status_field("NoNewPrivs"), 1);
  CHECK_OK(setresuid(USER_UID, USER_UID, USER_UID));
  check_status_matches();
  CHECK_EQ(status_field("CapEff"), 0);
}

TEST(proc_status) { conf_in_child(status_child); }

int main(int argc, char **argv) {
  conf_init(argc, argv);
  if (argc > 1) {
    if (strcmp(argv[1], "exec_full") == 0) return exec_mode_full();
    if (strcmp(argv[1], "exec_ambient") == 0) return exec_mode_ambient();
    if (strcmp(argv[1], "exec_none") == 0) return exec_mode_none();
    if (strcmp(argv[1], "exec_ruid_root") == 0) return exec_mode_ruid_root();
    if (strcmp(argv[1], "exec_euid_root") == 0) return exec_mode_euid_root();
    if (strcmp(argv[1], "exec_setuid_root") == 0) return exec_mode_setuid_root();
    if (strcmp(argv[1], "exec_setgid") == 0) return exec_mode_setgid();
    if (strcmp(argv[1], "exec_setid_ignored") == 0) return exec_mode_setid_ignored();
    if (strcmp(argv[1], "exec_setuid_traced") == 0) return exec_mode_setuid_traced();
    return 2;
  }
  CHECK_EQ(geteuid(), 0);  // This program must run as root.
  conf_tmpdir("capabilities");
  RUN(capget_versions);
  RUN(capget_pids);
  RUN(capset_rules);
  RUN(bounding_set);
  RUN(ambient_set);
  RUN(keepcaps_securebits);
  RUN(setuid_transitions);
  RUN(setfsuid_setfsgid);
  RUN(execve_transitions);
  RUN(execve_set_id);
  RUN(capability_checks);
  RUN(proc_status);
  conf_tmpdir_remove();
  PASS("capabilities");
  return 0;
}
