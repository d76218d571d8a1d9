// User namespaces (as root, every case in a forked child): unshare and clone with
// CLONE_NEWUSER, ids seen through uid_map/gid_map (65534 before they are written, in getuid,
// stat and /proc/self/status), the rules of writing the maps and setgroups (once; an
// unprivileged writer maps only its own ids, its gid after setgroups "deny"; malformed maps
// are EINVAL), capabilities in the new namespace (namespaces it makes are its own to
// configure; the outer UTS namespace and outer files are not), setns back (EPERM), nesting
// to depth 33 (ENOSPC past it, EUSERS before Linux 4.9), and EINVAL for bad flag mixes.

#define _GNU_SOURCE  // before any system header (common.h defines it too)

#include <grp.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include "common.h"

static const char *tmp;  // the scratch directory

// Writes `text` to /proc/PID/FILE; returns 0 or the errno of the open or the write.
static int write_proc(pid_t pid, const char *file, const char *text) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
  int fd = open(path, O_WRONLY);
  if (fd < 0) return errno;
  int err = 0;
  if (write(fd, text, strlen(text)) != (ssize_t)strlen(text)) err = errno;
  close(fd);
  return err;
}

// Maps uid `inner` and gid `inner` to `outer` (one line each), denying setgroups first.
static void map_self(pid_t pid, unsigned inner, unsigned outer) {
  char line[64];
  snprintf(line, sizeof(line), "%u %u 1\n", inner, outer);
  CHECK_EQ(write_proc(pid, "uid_map", line), 0);
  CHECK_EQ(write_proc(pid, "setgroups", "deny"), 0);
  CHECK_EQ(write_proc(pid, "gid_map", line), 0);
}

static unsigned status_uid(void) {
  char buf[4096];
  conf_get_file("/proc/self/status", buf, sizeof(buf));
  char *u = strstr(buf, "\nUid:");
  CHECK(u != NULL);
  return (unsigned)strtoul(u + 5, NULL, 10);
}

static unsigned owner_of(const char *path) {
  struct stat st;
  CHECK_OK(stat(path, &st));
  return st.st_uid;
}

static void root_child(void) {
  char before[64], after[64];
  ssize_t n = readlink("/proc/self/ns/user", before, sizeof(before) - 1);
  CHECK(n > 0);
  before[n] = '\0';
  CHECK_OK(unshare(CLONE_NEWUSER));
  n = readlink("/proc/self/ns/user", after, sizeof(after) - 1);
  CHECK(n > 0);
  after[n] = '\0';
  CHECK(strcmp(before, after) != 0);
  // Nothing is mapped yet: every id is the overflow id.
  CHECK_EQ(getuid(), 65534);
  CHECK_EQ(geteuid(), 65534);
  CHECK_EQ(getgid(), 65534);
  CHECK_EQ(owner_of("/"), 65534);
  CHECK_EQ(status_uid(), 65534);
  char buf[256];
  CHECK_EQ(conf_get_file("/proc/self/uid_map", buf, sizeof(buf)), 0);
  conf_get_file("/proc/self/setgroups", buf, sizeof(buf));
  CHECK(strcmp(buf, "allow\n") == 0);
  // Malformed maps.
  CHECK_EQ(write_proc(getpid(), "uid_map", "0 0 0\n"), EINVAL);
  CHECK_EQ(write_proc(getpid(), "uid_map", "zero 0 1\n"), EINVAL);
  CHECK_EQ(write_proc(getpid(), "uid_map", "0 0 10\n5 100 1\n"), EINVAL);
  map_self(getpid(), 0, 0);
  CHECK_EQ(getuid(), 0);
  CHECK_EQ(getgid(), 0);
  CHECK_EQ(owner_of("/"), 0);
  CHECK_EQ(status_uid(), 0);
  conf_get_file("/proc/self/uid_map", buf, sizeof(buf));
  unsigned a, b, c;
  CHECK_EQ(sscanf(buf, "%u %u %u", &a, &b, &c), 3);
  CHECK(a == 0 && b == 0 && c == 1);
  conf_get_file("/proc/self/setgroups", buf, sizeof(buf));
  CHECK(strcmp(buf, "deny\n") == 0);
  // Once only; setgroups stays denied.
  CHECK_EQ(write_proc(getpid(), "uid_map", "0 0 1\n"), EPERM);
  CHECK_EQ(write_proc(getpid(), "setgroups", "allow"), EPERM);
  CHECK_ERRNO(setgroups(0, NULL), EPERM);
  // The creator is everything inside: a UTS namespace of its own is its to rename.
  CHECK_OK(unshare(CLONE_NEWUTS));
  CHECK_OK(sethostname("inner", 5));
}

TEST(unshare_as_root) { conf_in_child(root_child); }

static void unprivileged_child(void) {
  CHECK_OK(setgroups(0, NULL));
  CHECK_OK(setresgid(1000, 1000, 1000));
  CHECK_OK(setresuid(1000, 1000, 1000));
  CHECK_OK(prctl(PR_SET_DUMPABLE, 1));  // else /proc/self stays root's after the id change
  CHECK_ERRNO(unshare(CLONE_NEWUTS), EPERM);
  CHECK_OK(unshare(CLONE_NEWUSER));
  // Only one's own uid, and the gid only after setgroups "deny".
  CHECK_EQ(write_proc(getpid(), "uid_map", "0 0 1\n"), EPERM);
  CHECK_EQ(write_proc(getpid(), "uid_map", "0 1000 1\n"), 0);
  CHECK_EQ(write_proc(getpid(), "gid_map", "0 1000 1\n"), EPERM);
  CHECK_EQ(write_proc(getpid(), "setgroups", "deny\n"), 0);
  CHECK_EQ(write_proc(getpid(), "gid_map", "0 1000 1\n"), 0);
  CHECK_EQ(getuid(), 0);
  CHECK_EQ(getegid(), 0);
  CHECK_EQ(owner_of("/"), 65534);  // root outside is unmapped here
  char path[PATH_MAX];
  snprintf(path, sizeof(path), "%s/mine", tmp);
  int fd = open(path, O_CREAT | O_WRONLY, 0644);
  CHECK(fd >= 0);
  close(fd);
  CHECK_EQ(owner_of(path), 0);  // uid 1000 outside is root here
  // Root here is nobody outside: the sandbox's (or host's) own objects stay out of reach.
  CHECK_ERRNO(sethostname("x", 1), EPERM);
  CHECK_ERRNO(chown("/", 0, 0), EPERM);
  CHECK_ERRNO(setuid(5), EINVAL);  // unmapped
  CHECK_OK(setuid(0));
  // Namespaces made here are its own: mount a tmpfs, bring lo up.
  CHECK_OK(unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWUTS));
  CHECK_OK(sethostname("inner", 5));
  CHECK_OK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
  CHECK_OK(mount("t", tmp, "tmpfs", 0, NULL));
  CHECK_OK(umount(tmp));
  int s = socket(AF_INET, SOCK_DGRAM, 0);
  CHECK(s >= 0);
  struct ifreq r;
  memset(&r, 0, sizeof(r));
  strcpy(r.ifr_name, "lo");
  r.ifr_flags = IFF_UP;
  CHECK_OK(ioctl(s, SIOCSIFFLAGS, &r));
  CHECK_OK(unlink(path));
}

TEST(unshare_unprivileged) {
  CHECK_OK(chmod(tmp, 0777));
  conf_in_child(unprivileged_child);
}

// pipes[0..1]: the child says it saw 65534; pipes[2..3]: the parent says it mapped.
static int clone_fn(void *arg) {
  int *pipes = arg;
  char c = getuid() == 65534 ? 'y' : 'n';
  if (write(pipes[1], &c, 1) != 1 || c != 'y') return 2;
  if (read(pipes[2], &c, 1) != 1) return 3;
  if (getuid() != 0) return 4;
  return 0;
}

TEST(clone_newuser) {
  int p[4];
  CHECK_OK(pipe(p));
  CHECK_OK(pipe(p + 2));
  static char stack[64 * 1024];
  pid_t pid = clone(clone_fn, stack + sizeof(stack), CLONE_NEWUSER | SIGCHLD, p);
  CHECK(pid > 0);
  char c;
  CHECK_EQ(read(p[0], &c, 1), 1);
  // The parent, privileged in the child's parent namespace, maps any ids.
  CHECK_EQ(write_proc(pid, "uid_map", "0 0 1\n1 2000 10\n"), 0);
  CHECK_EQ(write(p[3], "x", 1), 1);
  CHECK_EXIT(pid, 0);
  for (int i = 0; i < 4; i++) close(p[i]);
  CHECK_ERRNO(clone(clone_fn, stack + sizeof(stack), CLONE_NEWUSER | CLONE_FS | SIGCHLD, p),
              EINVAL);
}

static void setns_child(void) {
  int outer = open("/proc/self/ns/user", O_RDONLY);
  CHECK(outer >= 0);
  CHECK_OK(unshare(CLONE_NEWUSER));
  int own = open("/proc/self/ns/user", O_RDONLY);
  CHECK(own >= 0);
  CHECK_ERRNO(setns(own, CLONE_NEWUSER), EINVAL);
  CHECK_ERRNO(setns(outer, CLONE_NEWUSER), EPERM);  // no capability up there
}

TEST(setns) { conf_in_child(setns_child); }

static void depth_child(void) {
  int made = 0;
  for (int i = 0; i < 40; i++) {
    if (unshare(CLONE_NEWUSER) != 0) {
      CHECK_EQ(errno, ENOSPC);  // EUSERS before Linux 4.9
      break;
    }
    made++;
    map_self(getpid(), 0, 0);
  }
  // 33 below the first namespace (Linux refuses a child of level 33); fewer when the test's
  // own namespace is already nested.
  CHECK(made > 0 && made <= 33);
  CHECK(made < 40);
}

TEST(depth) { conf_in_child(depth_child); }

static void *idle_thread(void *arg) {
  (void)arg;
  pause();
  return NULL;
}

static void threaded_child(void) {
  pthread_t th;
  CHECK_EQ(pthread_create(&th, NULL, idle_thread, NULL), 0);
  CHECK_ERRNO(unshare(CLONE_NEWUSER), EINVAL);
}

TEST(threaded) { conf_in_child(threaded_child); }

int main(int argc, char **argv) {
  conf_init(argc, argv);
  tmp = conf_tmpdir("userns");
  RUN(unshare_as_root);
  RUN(unshare_unprivileged);
  RUN(clone_newuser);
  RUN(setns);
  RUN(depth);
  RUN(threaded);
  conf_tmpdir_remove();
  PASS("userns");
  return 0;
}
