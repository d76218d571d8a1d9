// Key retention (keyrings(7)): add_key, request_key and keyctl. Special keyring ids, session
// keyrings, the errno rules of add_key's arguments, update and read, links and searches,
// revocation, invalidation and expiry, request_key, what fork and execve keep, permissions
// and possession for another user, and the quota. Every case runs in a child that first
// joins a new session keyring, so nothing depends on the keyrings the test was started with
// and nothing is left in them.
#include "common.h"

#include <grp.h>
#include <linux/keyctl.h>

static long kc(long cmd, long a, long b, long c, long d) {
  return syscall(SYS_keyctl, cmd, a, b, c, d);
}
static long add_key(const char *type, const char *desc, const void *p, size_t n, long ring) {
  return syscall(SYS_add_key, type, desc, p, n, ring);
}
static long request_key(const char *type, const char *desc, const char *callout, long dest) {
  return syscall(SYS_request_key, type, desc, callout, dest);
}

// Whether serial `x` is among the `n` bytes of serials at `ids` (a keyring's order is its own).
static int has(const int32_t *ids, long n, long x) {
  for (long i = 0; i < n / 4; i++) {
    if (ids[i] == x) return 1;
  }
  return 0;
}

static void describe(long key, char *buf, size_t n) {
  long r = kc(KEYCTL_DESCRIBE, key, (long)buf, (long)n, 0);
  CHECK(r > 0 && (size_t)r <= n);
}

// Expects KEYCTL_DESCRIBE of `key` to give "type;uid;gid;perm;desc" with the caller's ids.
static void check_describe(long key, const char *type, unsigned perm, const char *desc) {
  char buf[256], want[256];
  describe(key, buf, sizeof(buf));
  snprintf(want, sizeof(want), "%s;%u;%u;%08x;%s", type, (unsigned)getuid(),
           (unsigned)getgid(), perm, desc);
  if (strcmp(buf, want) != 0) fprintf(stderr, "describe: got %s want %s\n", buf, want);
  CHECK(strcmp(buf, want) == 0);
}

// Runs `fn` in a child with a fresh session keyring; the child must exit 0.
static void in_child(void (*fn)(void)) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    CHECK(kc(KEYCTL_JOIN_SESSION_KEYRING, 0, 0, 0, 0) > 0);
    fn();
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
}

static void special_ids_body(void) {
  CHECK_ERRNO(kc(KEYCTL_GET_KEYRING_ID, KEY_SPEC_THREAD_KEYRING, 0, 0, 0), ENOKEY);
  CHECK_ERRNO(kc(KEYCTL_GET_KEYRING_ID, KEY_SPEC_PROCESS_KEYRING, 0, 0, 0), ENOKEY);
  CHECK_ERRNO(kc(KEYCTL_GET_KEYRING_ID, KEY_SPEC_GROUP_KEYRING, 0, 0, 0), EINVAL);
  CHECK_ERRNO(kc(KEYCTL_GET_KEYRING_ID, KEY_SPEC_REQKEY_AUTH_KEY, 0, 0, 0), ENOKEY);
  CHECK_ERRNO(kc(KEYCTL_GET_KEYRING_ID, KEY_SPEC_REQUESTOR_KEYRING, 0, 0, 0), ENOKEY);
  CHECK_ERRNO(kc(KEYCTL_GET_KEYRING_ID, -9, 0, 0, 0), EINVAL);
  CHECK_ERRNO(kc(KEYCTL_GET_KEYRING_ID, 0, 0, 0, 0), EINVAL);
  CHECK_ERRNO(kc(KEYCTL_GET_KEYRING_ID, 0x7ffffffe, 0, 0, 0), ENOKEY);
  long t = kc(KEYCTL_GET_KEYRING_ID, KEY_SPEC_THREAD_KEYRING, 1, 0, 0);
  CHECK(t > 0);
  CHECK_EQ(kc(KEYCTL_GET_KEYRING_ID, KEY_SPEC_THREAD_KEYRING, 0, 0, 0), t);
  check_describe(t, "keyring", 0x3f010000, "_tid");
  long p = kc(KEYCTL_GET_KEYRING_ID, KEY_SPEC_PROCESS_KEYRING, 1, 0, 0);
  CHECK(p > 0 && p != t);
  check_describe(p, "keyring", 0x3f010000, "_pid");
  // The user keyrings belong to the user, with no group, and always exist.
  char buf[256], want[256];
  describe(kc(KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 0, 0, 0), buf, sizeof(buf));
  snprintf(want, sizeof(want), "keyring;%u;65534;1f3f0000;_uid.%u", getuid(), getuid());
  CHECK(strcmp(buf, want) == 0);
  describe(kc(KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_SESSION_KEYRING, 0, 0, 0), buf, sizeof(buf));
  snprintf(want, sizeof(want), "keyring;%u;65534;1f3f0000;_uid_ses.%u", getuid(), getuid());
  CHECK(strcmp(buf, want) == 0);
}
TEST(special_ids) { in_child(special_ids_body); }

static void session_body(void) {
  long s = kc(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0, 0, 0);
  CHECK(s > 0);
  check_describe(s, "keyring", 0x3f030000, "_ses");
  // A name of this run only: Linux frees a dead keyring's name minutes later.
  char name[64];
  snprintf(name, sizeof(name), "conf-keys-%d", (int)getpid());
  long named = kc(KEYCTL_JOIN_SESSION_KEYRING, (long)name, 0, 0, 0);
  CHECK(named > 0 && named != s);
  CHECK_EQ(kc(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0, 0, 0), named);
  check_describe(named, "keyring", 0x3f130000, name);  // a named one: the user may link it
  // Joining a name that exists joins that keyring if its user may search it, also from
  // another process. The process keyring keeps it alive meanwhile.
  CHECK_OK(kc(KEYCTL_LINK, named, KEY_SPEC_PROCESS_KEYRING, 0, 0));
  CHECK_OK(kc(KEYCTL_SETPERM, named, 0x3f1b0000, 0, 0));
  CHECK(kc(KEYCTL_JOIN_SESSION_KEYRING, 0, 0, 0, 0) > 0);
  CHECK_EQ(kc(KEYCTL_JOIN_SESSION_KEYRING, (long)name, 0, 0, 0), named);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    if (kc(KEYCTL_JOIN_SESSION_KEYRING, 0, 0, 0, 0) <= 0) _exit(2);
    _exit(kc(KEYCTL_JOIN_SESSION_KEYRING, (long)name, 0, 0, 0) == named ? 0 : 3);
  }
  CHECK_EXIT(pid, 0);
  CHECK_OK(kc(KEYCTL_INVALIDATE, named, 0, 0, 0));
  // The default rights do not let its user search it: the same name makes another one.
  strcat(name, "-b");
  named = kc(KEYCTL_JOIN_SESSION_KEYRING, (long)name, 0, 0, 0);
  CHECK(named > 0);
  CHECK(kc(KEYCTL_JOIN_SESSION_KEYRING, 0, 0, 0, 0) > 0);
  long again = kc(KEYCTL_JOIN_SESSION_KEYRING, (long)name, 0, 0, 0);
  CHECK(again > 0 && again != named);
  CHECK_OK(kc(KEYCTL_INVALIDATE, again, 0, 0, 0));
  CHECK_ERRNO(kc(KEYCTL_JOIN_SESSION_KEYRING, (long)".internal", 0, 0, 0), EPERM);
  CHECK_ERRNO(kc(KEYCTL_JOIN_SESSION_KEYRING, (long)"", 0, 0, 0), EINVAL);
  CHECK_ERRNO(kc(KEYCTL_JOIN_SESSION_KEYRING, 8, 0, 0, 0), EFAULT);
}
TEST(session_keyrings) { in_child(session_body); }

static void add_key_errors_body(void) {
  static char big[40000];
  long s = KEY_SPEC_SESSION_KEYRING;
  CHECK_ERRNO(add_key("keyring", "ring", "x", 1, s), EINVAL);
  CHECK_ERRNO(add_key("keyring", ".ring", NULL, 0, s), EPERM);
  CHECK_ERRNO(add_key(".foo", "x", "x", 1, s), EPERM);
  CHECK_ERRNO(add_key("nosuchtype", "x", "x", 1, s), ENODEV);
  CHECK_ERRNO(add_key("", "x", "x", 1, s), EINVAL);
  CHECK_ERRNO(add_key("user", NULL, "x", 1, s), EINVAL);
  CHECK_ERRNO(add_key("user", "", "x", 1, s), EINVAL);
  CHECK_ERRNO(add_key("user", "z", NULL, 0, s), EINVAL);
  CHECK_ERRNO(add_key("user", "z", big, 32768, s), EINVAL);
  CHECK_ERRNO(add_key("user", "z", big, 1024 * 1024, s), EINVAL);
  CHECK_ERRNO(add_key("user", "z", (void *)8, 10, s), EFAULT);
  CHECK_ERRNO(add_key((const char *)8, "z", "x", 1, s), EFAULT);
  CHECK_ERRNO(add_key("logon", "nocolon", "x", 1, s), EINVAL);
  CHECK_ERRNO(add_key("logon", ":name", "x", 1, s), EINVAL);
  CHECK_ERRNO(add_key("user", "z", "x", 1, KEY_SPEC_GROUP_KEYRING), EINVAL);
  CHECK_ERRNO(add_key("user", "z", "x", 1, 0x7ffffffe), ENOKEY);
  long k = add_key("user", "z", big, 32767, s);
  CHECK(k > 0);
  CHECK_ERRNO(add_key("user", "y", "x", 1, k), ENOTDIR);
  // Adding to the thread keyring makes it.
  long t = add_key("user", "in-thread", "x", 1, KEY_SPEC_THREAD_KEYRING);
  CHECK(t > 0);
  CHECK(kc(KEYCTL_GET_KEYRING_ID, KEY_SPEC_THREAD_KEYRING, 0, 0, 0) > 0);
}
TEST(add_key_errors) { in_child(add_key_errors_body); }

static void update_read_body(void) {
  char buf[64];
  long k = add_key("user", "k1", "hello", 5, KEY_SPEC_SESSION_KEYRING);
  CHECK(k > 0);
  check_describe(k, "user", 0x3f010000, "k1");
  memset(buf, 0, sizeof(buf));
  CHECK_EQ(kc(KEYCTL_READ, k, (long)buf, sizeof(buf), 0), 5);
  CHECK(memcmp(buf, "hello", 5) == 0);
  // A second add_key of the same description updates the key in place.
  CHECK_EQ(add_key("user", "k1", "world!", 6, KEY_SPEC_SESSION_KEYRING), k);
  CHECK_EQ(kc(KEYCTL_READ, k, 0, 0, 0), 6);
  // A buffer too small gets nothing, only the size.
  memset(buf, 0, sizeof(buf));
  CHECK_EQ(kc(KEYCTL_READ, k, (long)buf, 3, 0), 6);
  CHECK_EQ(buf[0], '\0');
  CHECK_EQ(kc(KEYCTL_DESCRIBE, k, (long)buf, 5, 0), 21);
  CHECK_EQ(buf[0], '\0');
  CHECK_OK(kc(KEYCTL_UPDATE, k, (long)"abc", 3, 0));
  CHECK_EQ(kc(KEYCTL_READ, k, (long)buf, sizeof(buf), 0), 3);
  CHECK(memcmp(buf, "abc", 3) == 0);
  CHECK_ERRNO(kc(KEYCTL_UPDATE, k, 0, 0, 0), EINVAL);
  CHECK_ERRNO(kc(KEYCTL_READ, k, 8, sizeof(buf), 0), EFAULT);
  long l = add_key("logon", "svc:k1", "secret", 6, KEY_SPEC_SESSION_KEYRING);
  CHECK(l > 0);
  check_describe(l, "logon", 0x3d010000, "svc:k1");
  CHECK_ERRNO(kc(KEYCTL_READ, l, (long)buf, sizeof(buf), 0), EOPNOTSUPP);
  long r = add_key("keyring", "ring1", NULL, 0, KEY_SPEC_SESSION_KEYRING);
  CHECK(r > 0);
  check_describe(r, "keyring", 0x3f010000, "ring1");
  CHECK_ERRNO(kc(KEYCTL_UPDATE, r, (long)"x", 1, 0), EOPNOTSUPP);
  // A keyring reads as the serials of what it links.
  int32_t ids[8];
  long s = kc(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0, 0, 0);
  CHECK_EQ(kc(KEYCTL_READ, s, (long)ids, sizeof(ids), 0), 12);
  CHECK(has(ids, 12, k) && has(ids, 12, l) && has(ids, 12, r));
  CHECK_EQ(kc(KEYCTL_READ, r, (long)ids, sizeof(ids), 0), 0);
  // Serials go out whole, or not at all.
  CHECK_ERRNO(kc(KEYCTL_READ, s, (long)ids, 5, 0), EINVAL);
  CHECK_EQ(kc(KEYCTL_READ, s, (long)ids, 4, 0), 12);
  CHECK_EQ(kc(KEYCTL_READ, s, 0, 5, 0), 12);
  // A second keyring of the same name displaces the first in the session keyring.
  long r2 = add_key("keyring", "ring1", NULL, 0, KEY_SPEC_SESSION_KEYRING);
  CHECK(r2 > 0 && r2 != r);
  CHECK_EQ(kc(KEYCTL_READ, s, (long)ids, sizeof(ids), 0), 12);
  CHECK(has(ids, 12, r2) && !has(ids, 12, r));
  // The security label is empty without a security module.
  memset(buf, 'x', sizeof(buf));
  CHECK_EQ(kc(KEYCTL_GET_SECURITY, k, (long)buf, sizeof(buf), 0), 1);
  CHECK_EQ(buf[0], '\0');
}
TEST(update_read) { in_child(update_read_body); }

static void keyrings_body(void) {
  long s = kc(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0, 0, 0);
  long a = add_key("keyring", "a", NULL, 0, s);
  long b = add_key("keyring", "b", NULL, 0, a);
  long k = add_key("user", "deep", "v", 1, b);
  CHECK(a > 0 && b > 0 && k > 0);
  // Searches go down the keyrings a keyring links.
  CHECK_EQ(kc(KEYCTL_SEARCH, s, (long)"user", (long)"deep", 0), k);
  CHECK_EQ(kc(KEYCTL_SEARCH, b, (long)"user", (long)"deep", 0), k);
  CHECK_EQ(kc(KEYCTL_SEARCH, s, (long)"keyring", (long)"b", 0), b);
  CHECK_ERRNO(kc(KEYCTL_SEARCH, s, (long)"user", (long)"none", 0), ENOKEY);
  CHECK_ERRNO(kc(KEYCTL_SEARCH, k, (long)"user", (long)"deep", 0), ENOTDIR);
  CHECK_ERRNO(kc(KEYCTL_SEARCH, s, (long)"nosuchtype", (long)"deep", 0), ENOKEY);
  CHECK_ERRNO(kc(KEYCTL_SEARCH, s, (long)".x", (long)"deep", 0), EPERM);
  // With a destination, the key found is linked there too.
  CHECK_EQ(kc(KEYCTL_SEARCH, s, (long)"user", (long)"deep", a), k);
  int32_t ids[8];
  CHECK_EQ(kc(KEYCTL_READ, a, (long)ids, sizeof(ids), 0), 8);
  CHECK(has(ids, 8, b) && has(ids, 8, k));
  // Links: no cycles, no self-links, unlink of what is not there.
  CHECK_ERRNO(kc(KEYCTL_LINK, a, b, 0, 0), EDEADLK);
  CHECK_ERRNO(kc(KEYCTL_LINK, a, a, 0, 0), EDEADLK);
  CHECK_ERRNO(kc(KEYCTL_LINK, s, b, 0, 0), EDEADLK);
  CHECK_OK(kc(KEYCTL_LINK, k, a, 0, 0));  // already linked: fine
  CHECK_OK(kc(KEYCTL_UNLINK, k, a, 0, 0));
  CHECK_ERRNO(kc(KEYCTL_UNLINK, k, a, 0, 0), ENOENT);
  CHECK_ERRNO(kc(KEYCTL_UNLINK, k, k, 0, 0), ENOTDIR);
  CHECK_ERRNO(kc(KEYCTL_LINK, a, k, 0, 0), ENOTDIR);
  CHECK_ERRNO(kc(KEYCTL_CLEAR, k, 0, 0, 0), ENOTDIR);
  // Move between keyrings, and its EXCL flag.
  CHECK_ERRNO(kc(KEYCTL_MOVE, k, b, a, 2), EINVAL);
  CHECK_OK(kc(KEYCTL_MOVE, k, b, a, 0));
  CHECK_ERRNO(kc(KEYCTL_MOVE, k, b, a, 0), ENOENT);
  CHECK_EQ(kc(KEYCTL_READ, b, (long)ids, sizeof(ids), 0), 0);
  long other = add_key("user", "deep", "w", 1, b);
  CHECK(other > 0 && other != k);
  CHECK_ERRNO(kc(KEYCTL_MOVE, other, b, a, KEYCTL_MOVE_EXCL), EEXIST);
  CHECK_OK(kc(KEYCTL_CLEAR, b, 0, 0, 0));
  CHECK_EQ(kc(KEYCTL_READ, b, (long)ids, sizeof(ids), 0), 0);
  // A restricted keyring takes no new links; restricting twice is EEXIST.
  CHECK_OK(kc(KEYCTL_RESTRICT_KEYRING, b, 0, 0, 0));
  CHECK_ERRNO(kc(KEYCTL_LINK, k, b, 0, 0), EPERM);
  CHECK_ERRNO(add_key("user", "new", "x", 1, b), EPERM);
  CHECK_ERRNO(kc(KEYCTL_RESTRICT_KEYRING, b, 0, 0, 0), EEXIST);
}
TEST(keyrings) { in_child(keyrings_body); }

static void key_states_body(void) {
  char buf[64];
  long s = KEY_SPEC_SESSION_KEYRING;
  long k = add_key("user", "rev", "v", 1, s);
  CHECK(k > 0);
  CHECK_OK(kc(KEYCTL_REVOKE, k, 0, 0, 0));
  CHECK_ERRNO(kc(KEYCTL_READ, k, (long)buf, sizeof(buf), 0), EKEYREVOKED);
  CHECK_ERRNO(kc(KEYCTL_DESCRIBE, k, (long)buf, sizeof(buf), 0), EKEYREVOKED);
  CHECK_ERRNO(kc(KEYCTL_UPDATE, k, (long)"x", 1, 0), EKEYREVOKED);
  CHECK_ERRNO(request_key("user", "rev", NULL, 0), EKEYREVOKED);
  CHECK_OK(kc(KEYCTL_UNLINK, k, s, 0, 0));  // a revoked key can still be unlinked
  long i = add_key("user", "inv", "v", 1, s);
  CHECK_OK(kc(KEYCTL_INVALIDATE, i, 0, 0, 0));
  CHECK_ERRNO(kc(KEYCTL_DESCRIBE, i, (long)buf, sizeof(buf), 0), ENOKEY);
  long e = add_key("user", "exp", "v", 1, s);
  CHECK_OK(kc(KEYCTL_SET_TIMEOUT, e, 1, 0, 0));
  CHECK_EQ(kc(KEYCTL_READ, e, (long)buf, sizeof(buf), 0), 1);
  conf_sleep_ms(1300);
  CHECK_ERRNO(kc(KEYCTL_READ, e, (long)buf, sizeof(buf), 0), EKEYEXPIRED);
  CHECK_ERRNO(kc(KEYCTL_SEARCH, s, (long)"user", (long)"exp", 0), EKEYEXPIRED);
  CHECK_ERRNO(request_key("user", "exp", NULL, 0), ENOKEY);  // it skips expired keys
  long n = add_key("user", "noexp", "v", 1, s);
  CHECK_OK(kc(KEYCTL_SET_TIMEOUT, n, 1, 0, 0));
  CHECK_OK(kc(KEYCTL_SET_TIMEOUT, n, 0, 0, 0));  // 0 takes the timeout away
  conf_sleep_ms(1300);
  CHECK_EQ(kc(KEYCTL_READ, n, (long)buf, sizeof(buf), 0), 1);
}
TEST(key_states) { in_child(key_states_body); }

static void request_key_body(void) {
  long k = add_key("user", "rk", "v", 1, KEY_SPEC_SESSION_KEYRING);
  long r = add_key("keyring", "rk-ring", NULL, 0, KEY_SPEC_SESSION_KEYRING);
  CHECK(k > 0 && r > 0);
  CHECK_EQ(request_key("user", "rk", NULL, 0), k);
  CHECK_EQ(request_key("keyring", "rk-ring", NULL, 0), r);
  CHECK_ERRNO(request_key("user", "missing", NULL, 0), ENOKEY);
  CHECK_ERRNO(request_key(".x", "rk", NULL, 0), EPERM);
  CHECK_ERRNO(request_key("user", NULL, NULL, 0), EFAULT);
  // A key in the thread keyring is found too, and one can be linked where asked.
  long t = add_key("user", "in-thread", "v", 1, KEY_SPEC_THREAD_KEYRING);
  CHECK_EQ(request_key("user", "in-thread", NULL, r), t);
  int32_t ids[4];
  CHECK_EQ(kc(KEYCTL_READ, r, (long)ids, sizeof(ids), 0), 4);
  CHECK(has(ids, 4, t));
  // The default request_key keyring.
  CHECK_EQ(kc(KEYCTL_SET_REQKEY_KEYRING, KEY_REQKEY_DEFL_NO_CHANGE, 0, 0, 0), 0);
  CHECK_EQ(kc(KEYCTL_SET_REQKEY_KEYRING, KEY_REQKEY_DEFL_PROCESS_KEYRING, 0, 0, 0), 0);
  CHECK(kc(KEYCTL_GET_KEYRING_ID, KEY_SPEC_PROCESS_KEYRING, 0, 0, 0) > 0);
  CHECK_EQ(kc(KEYCTL_SET_REQKEY_KEYRING, KEY_REQKEY_DEFL_NO_CHANGE, 0, 0, 0), 2);
  CHECK_ERRNO(kc(KEYCTL_SET_REQKEY_KEYRING, KEY_REQKEY_DEFL_GROUP_KEYRING, 0, 0, 0), EINVAL);
  CHECK_ERRNO(kc(KEYCTL_SET_REQKEY_KEYRING, 8, 0, 0, 0), EINVAL);
  // No key is ever constructed without a request-key authority.
  CHECK_ERRNO(kc(KEYCTL_INSTANTIATE, k, (long)"x", 1, 0), EPERM);
  CHECK_ERRNO(kc(KEYCTL_NEGATE, k, 10, 0, 0), EPERM);
  CHECK_EQ(kc(KEYCTL_ASSUME_AUTHORITY, 0, 0, 0, 0), 0);
  CHECK_ERRNO(kc(KEYCTL_ASSUME_AUTHORITY, k, 0, 0, 0), ENOKEY);
  CHECK_ERRNO(kc(KEYCTL_ASSUME_AUTHORITY, -1, 0, 0, 0), EINVAL);
  CHECK_ERRNO(kc(KEYCTL_WATCH_KEY, k, -1, 0, 0), EOPNOTSUPP);
  CHECK_ERRNO(kc(99, 0, 0, 0, 0), EOPNOTSUPP);
}
TEST(request_key) { in_child(request_key_body); }

// After execve (re-exec as "PROG exec-check SESSION"): the session keyring is kept, the thread
// and process keyrings are gone.
static int exec_check(long session) {
  if (kc(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0, 0, 0) != session) return 2;
  if (kc(KEYCTL_GET_KEYRING_ID, KEY_SPEC_THREAD_KEYRING, 0, 0, 0) != -1 || errno != ENOKEY) {
    return 3;
  }
  if (kc(KEYCTL_GET_KEYRING_ID, KEY_SPEC_PROCESS_KEYRING, 0, 0, 0) != -1 || errno != ENOKEY) {
    return 4;
  }
  if (request_key("user", "inherited", NULL, 0) <= 0) return 5;
  return 0;
}

static void inheritance_body(void) {
  long s = kc(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0, 0, 0);
  CHECK(add_key("user", "inherited", "v", 1, s) > 0);
  CHECK(kc(KEYCTL_GET_KEYRING_ID, KEY_SPEC_THREAD_KEYRING, 1, 0, 0) > 0);
  CHECK(kc(KEYCTL_GET_KEYRING_ID, KEY_SPEC_PROCESS_KEYRING, 1, 0, 0) > 0);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    // fork keeps the session keyring; the thread and process keyrings stay behind.
    if (kc(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0, 0, 0) != s) _exit(2);
    if (kc(KEYCTL_GET_KEYRING_ID, KEY_SPEC_THREAD_KEYRING, 0, 0, 0) != -1) _exit(3);
    if (kc(KEYCTL_GET_KEYRING_ID, KEY_SPEC_PROCESS_KEYRING, 0, 0, 0) != -1) _exit(4);
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
  pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    char arg[32];
    snprintf(arg, sizeof(arg), "%ld", s);
    execl(conf_self, conf_self, "exec-check", arg, (char *)NULL);
    _exit(99);
  }
  CHECK_EXIT(pid, 0);
}
TEST(inheritance) { in_child(inheritance_body); }

static void other_user_body(void) {
  char buf[256];
  int32_t ids[4];
  // A key in the session keyring the child inherits: possessed, so the possessor's rights
  // hold for the other user too.
  long possessed = add_key("user", "possessed", "pv", 2, KEY_SPEC_SESSION_KEYRING);
  // Keys only this process's process keyring holds: not possessed by the child.
  long hidden = add_key("user", "hidden", "hv", 2, KEY_SPEC_PROCESS_KEYRING);
  long viewable = add_key("user", "viewable", "vv", 2, KEY_SPEC_PROCESS_KEYRING);
  CHECK(possessed > 0 && hidden > 0 && viewable > 0);
  CHECK_OK(kc(KEYCTL_SETPERM, viewable, 0x3f010001, 0, 0));  // other: view
  CHECK_ERRNO(kc(KEYCTL_SETPERM, viewable, 0x40000000, 0, 0), EINVAL);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    CHECK_OK(setgroups(0, NULL));
    CHECK_OK(setgid(1000));
    CHECK_OK(setuid(1000));
    CHECK_EQ(kc(KEYCTL_READ, possessed, (long)buf, sizeof(buf), 0), 2);
    CHECK_ERRNO(kc(KEYCTL_DESCRIBE, hidden, (long)buf, sizeof(buf), 0), EACCES);
    CHECK_ERRNO(kc(KEYCTL_READ, hidden, (long)buf, sizeof(buf), 0), EACCES);
    CHECK(kc(KEYCTL_DESCRIBE, viewable, (long)buf, sizeof(buf), 0) > 0);
    CHECK(strcmp(buf, "user;0;0;3f010001;viewable") == 0);
    CHECK_ERRNO(kc(KEYCTL_READ, viewable, (long)buf, sizeof(buf), 0), EACCES);
    CHECK_ERRNO(kc(KEYCTL_SETPERM, possessed, 0x3f3f0000, 0, 0), EACCES);
    CHECK_ERRNO(kc(KEYCTL_CHOWN, possessed, 1000, -1, 0), EACCES);
    // Its own user keyring is another one.
    CHECK(kc(KEYCTL_DESCRIBE, KEY_SPEC_USER_KEYRING, (long)buf, sizeof(buf), 0) > 0);
    CHECK(strcmp(buf, "keyring;1000;65534;1f3f0000;_uid.1000") == 0);
    // The quota of an ordinary user: 20,000 bytes.
    static char big[20000];
    long ring = add_key("keyring", "mine", NULL, 0, KEY_SPEC_THREAD_KEYRING);
    CHECK(ring > 0);
    CHECK_ERRNO(add_key("user", "big", big, sizeof(big), ring), EDQUOT);
    CHECK(add_key("user", "small", big, 100, ring) > 0);
    CHECK_EQ(kc(KEYCTL_READ, ring, (long)ids, sizeof(ids), 0), 4);
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
  // Root may give a key away.
  CHECK_OK(kc(KEYCTL_CHOWN, hidden, 1000, 1000, 0));
  describe(hidden, buf, sizeof(buf));
  CHECK(strcmp(buf, "user;1000;1000;3f010000;hidden") == 0);
}
TEST(other_user) {
  if (getuid() != 0) return;  // needs to become another user
  in_child(other_user_body);
}

TEST(capabilities) {
  unsigned char caps[4] = {0xff, 0xff, 0xff, 0xff};
  long n = kc(KEYCTL_CAPABILITIES, (long)caps, sizeof(caps), 0, 0);
  CHECK(n >= 2);
  // What programs test for before they use these commands.
  CHECK(caps[0] & KEYCTL_CAPS0_CAPABILITIES);
  CHECK(caps[0] & KEYCTL_CAPS0_INVALIDATE);
  CHECK(caps[0] & KEYCTL_CAPS0_RESTRICT_KEYRING);
  CHECK(caps[0] & KEYCTL_CAPS0_MOVE);
  CHECK_EQ(kc(KEYCTL_CAPABILITIES, 0, 0, 0, 0), n);
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  if (argc == 3 && strcmp(argv[1], "exec-check") == 0) return exec_check(atol(argv[2]));
  RUN(special_ids);
  RUN(session_keyrings);
  RUN(add_key_errors);
  RUN(update_read);
  RUN(keyrings);
  RUN(key_states);
  RUN(request_key);
  RUN(inheritance);
  RUN(other_user);
  RUN(capabilities);
  PASS("keys");
  return 0;
}
