// escape_fs: file-system escapes that escape.c does not try: /proc/self/root/.. and friends,
// /proc/PID of the host processes that run the sandbox, a symlink swapped in while a path walk
// is under way (from a guest thread and from the host), and writes to a read-only bind.
// Run by tests/guest/escape_fs.sh, which sets up the host side and checks it afterwards.
//
//   escape_fs guest SECRET HOST_ROOT    in the sandbox, as PID 1, with a read-only bind at /ro
//                                       and a read-write one at /rw (see escape_fs.sh)
//   escape_fs ro DIR OTHER              the read-only checks alone, on DIR (read-only) with OTHER
//                                       a writable directory on another mount; natively this
//                                       is the reference for the errnos (escape_fs.sh runs it
//                                       inside `unshare -m` on a `mount --bind` remounted ro)
//   escape_fs host-swap DIR SECRET SECS on the host: swaps names in DIR (the host side of the
//                                       read-write bind) for symlinks to SECRET and back
//
// SECRET is a host file outside every exposed directory that starts with "SENTRY-HOST-SECRET";
// HOST_ROOT is the host directory that is the guest's root. The files the guest may legitimately
// read in the race directories hold "decoy\n": reading anything else there is the escape.
//
// Guest checks:
//   (p) "/..", /proc/self/root/.., /proc/self/root/../.., /proc/1/root/.., /proc/self/cwd/..,
//       /proc/thread-self/root/.., /proc/self/fd/N/.. (N a descriptor of "/") are the guest's
//       "/" (same device and inode, same listing), the secret and HOST_ROOT are not reachable
//       below any of them, and the magic links read back as guest paths;
//   (h) the host PIDs of sentry-run and of the gofer, which the wrapper writes to /rw/pids once
//       they run, name nothing: /proc/PID and everything under it (root, exe, cwd, fd, environ,
//       cmdline, status, task) fail with ENOENT, they are not in the /proc listing, and no
//       process the guest can see is named sentry-run or sentry-gofer;
//   (r) every write to the read-only bind fails with the errno Linux gives (mostly EROFS) and
//       leaves it unchanged (the wrapper compares listings and checksums);
//   (s) a guest thread swaps a directory holding a decoy for symlinks that lead to the secret on
//       the host (absolute, relative, "/", through /proc/self/root) while another opens paths
//       through the name, on the overlay root (/tmp) and on the read-write bind (/rw);
//   (H) the host swaps, on the read-write bind, a cached file, a file in a cached directory and
//       fresh directories for symlinks to the secret while the guest opens them.
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <linux/fs.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "own_sandbox.h"

static int failures;

static void Pass(const char* what) { printf("ok: %s\n", what); }

static void Failf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
static void Failf(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("FAIL: ");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  failures++;
}

static double Now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char* ErrName(int err) {
  switch (err) {
    case 0: return "success";
    case ENOENT: return "ENOENT";
    case EROFS: return "EROFS";
    case EEXIST: return "EEXIST";
    case EXDEV: return "EXDEV";
    case EISDIR: return "EISDIR";
    case ENOTDIR: return "ENOTDIR";
    case EINVAL: return "EINVAL";
    case EPERM: return "EPERM";
    case EACCES: return "EACCES";
    case ELOOP: return "ELOOP";
    case EBADF: return "EBADF";
    case EBUSY: return "EBUSY";
    case ENOTEMPTY: return "ENOTEMPTY";
    case ESRCH: return "ESRCH";
    default: return strerror(err);
  }
}

// `ret` (with `err` = errno when it is < 0) must be a failure with `want`, or a success if
// `want` is 0. A returned descriptor is closed.
static void Expect(const char* what, long ret, int err, int want, int is_fd) {
  int got = ret < 0 ? err : 0;
  if (ret >= 0 && is_fd) close((int)ret);
  char line[1200];
  snprintf(line, sizeof(line), "%s: %s", what, ErrName(want));
  if (got != want) {
    Failf("%s (got %s)", line, ErrName(got));
  } else {
    Pass(line);
  }
}

#define EXPECT(want, expr)                                    \
  do {                                                        \
    errno = 0;                                                \
    long r_ = (long)(expr);                                   \
    Expect(#expr, r_, errno, want, 0);                        \
  } while (0)
#define EXPECT_FD(want, expr)                                 \
  do {                                                        \
    errno = 0;                                                \
    long r_ = (long)(expr);                                   \
    Expect(#expr, r_, errno, want, 1);                        \
  } while (0)

static void ExpectPath(const char* how, const char* path, long ret, int err, int want, int fd) {
  char what[1100];
  snprintf(what, sizeof(what), "%s %s", how, path);
  Expect(what, ret, err, want, fd);
}

// `expr` on `path` (described as `how`) fails with `want`. The call runs before errno is read.
#define EXPECT_AT(how, path, want, is_fd, expr)       \
  do {                                                \
    errno = 0;                                        \
    long r_ = (long)(expr);                           \
    ExpectPath(how, path, r_, errno, want, is_fd);    \
  } while (0)

// Reads up to `size - 1` bytes of `path` into `buf`; -1 with errno if it cannot be opened.
static ssize_t ReadFile(const char* path, char* buf, size_t size) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return -1;
  ssize_t n = read(fd, buf, size - 1);
  int err = errno;
  close(fd);
  if (n < 0) {
    errno = err;
    return -1;
  }
  buf[n] = 0;
  return n;
}

static int WriteFile(const char* path, const char* text) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return -1;
  ssize_t n = write(fd, text, strlen(text));
  close(fd);
  return n == (ssize_t)strlen(text) ? 0 : -1;
}

// ---------------------------------------------------------------------------------------------
// (p) /proc/self/root/.. and friends.

// The sorted names in `dir`, joined by '/', into `out`; -1 with errno on error.
static int Listing(const char* dir, char* out, size_t size) {
  DIR* d = opendir(dir);
  if (!d) return -1;
  char names[256][256];
  int n = 0;
  struct dirent* e;
  while ((e = readdir(d)) != NULL && n < 256) {
    snprintf(names[n++], sizeof(names[0]), "%s", e->d_name);
  }
  closedir(d);
  qsort(names, (size_t)n, sizeof(names[0]), (int (*)(const void*, const void*))strcmp);
  size_t len = 0;
  out[0] = 0;
  for (int i = 0; i < n && len + 258 < size; i++) {
    len += (size_t)snprintf(out + len, size - len, "%s/", names[i]);
  }
  return 0;
}

static void ExpectLink(const char* link, const char* want, const char* host_root) {
  char buf[4096];
  ssize_t n = readlink(link, buf, sizeof(buf) - 1);
  if (n < 0) {
    Failf("readlink %s (got %s)", link, ErrName(errno));
    return;
  }
  buf[n] = 0;
  if (strcmp(buf, want) != 0 || strstr(buf, host_root) != NULL) {
    Failf("readlink %s is %s (got %s)", link, want, buf);
  } else {
    printf("ok: readlink %s is %s\n", link, want);
  }
}

static void CheckProcRoot(const char* secret, const char* host_root) {
  struct stat root;
  char root_list[8192];
  if (stat("/", &root) != 0 || Listing("/", root_list, sizeof(root_list)) != 0) {
    Failf("stat and list / (got %s)", ErrName(errno));
    return;
  }
  int rootfd = open("/", O_RDONLY | O_DIRECTORY);
  if (chdir("/") != 0) Failf("chdir / (got %s)", ErrName(errno));
  char fd_path[64];
  snprintf(fd_path, sizeof(fd_path), "/proc/self/fd/%d/..", rootfd);
  char task_path[64];
  snprintf(task_path, sizeof(task_path), "/proc/self/task/%d/root/../..", (int)getpid());
  const char* tops[] = {
      "/..",
      "/../..",
      "/proc/self/root",
      "/proc/self/root/..",
      "/proc/self/root/../..",
      "/proc/self/root/../../..",
      "/proc/self/root/proc/self/root/..",
      "/proc/1/root/..",
      "/proc/1/root/../..",
      "/proc/thread-self/root/..",
      task_path,
      "/proc/self/cwd/..",
      "/proc/self/cwd/../..",
      "/proc/1/cwd/../..",
      "/proc/..",
      "/proc/self/../..",
      "/proc/self/fd/../../..",
      fd_path,
  };
  for (size_t i = 0; i < sizeof(tops) / sizeof(tops[0]); i++) {
    const char* top = tops[i];
    struct stat st;
    char list[8192];
    if (stat(top, &st) != 0) {
      Failf("stat %s (got %s)", top, ErrName(errno));
      continue;
    }
    if (st.st_dev != root.st_dev || st.st_ino != root.st_ino) {
      Failf("%s is the guest's / (it is dev %lu ino %lu, / is dev %lu ino %lu)", top,
            (unsigned long)st.st_dev, (unsigned long)st.st_ino, (unsigned long)root.st_dev,
            (unsigned long)root.st_ino);
    } else if (Listing(top, list, sizeof(list)) != 0 || strcmp(list, root_list) != 0) {
      Failf("%s lists as the guest's / (%s vs %s)", top, list, root_list);
    } else {
      printf("ok: %s is the guest's /\n", top);
    }
    char path[8192];
    snprintf(path, sizeof(path), "%s%s", top, secret);
    EXPECT_AT("open", path, ENOENT, 1, open(path, O_RDONLY));
    snprintf(path, sizeof(path), "%s%s/escape_fs", top, host_root);
    EXPECT_AT("stat", path, ENOENT, 0, stat(path, &st));
  }
  // The same through a directory descriptor of the magic link.
  int pfd = open("/proc/self/root", O_PATH | O_DIRECTORY);
  if (pfd < 0) {
    Failf("open /proc/self/root O_PATH (got %s)", ErrName(errno));
  } else {
    char rel[8192];
    snprintf(rel, sizeof(rel), "../../..%s", secret);
    EXPECT_AT("openat(/proc/self/root)", rel, ENOENT, 1, openat(pfd, rel, O_RDONLY));
    struct stat st;
    if (fstatat(pfd, "..", &st, 0) != 0 || st.st_ino != root.st_ino ||
        st.st_dev != root.st_dev) {
      Failf("fstatat(/proc/self/root, \"..\") is the guest's /");
    } else {
      Pass("fstatat(/proc/self/root, \"..\") is the guest's /");
    }
    close(pfd);
  }
  // From below a bind: /proc/self/cwd/../.. with the cwd in /rw.
  if (chdir("/rw") == 0) {
    char path[8192];
    snprintf(path, sizeof(path), "/proc/self/cwd/../../..%s", secret);
    EXPECT_AT("open", path, ENOENT, 1, open(path, O_RDONLY));
    ExpectLink("/proc/self/cwd", "/rw", host_root);
    if (chdir("/") != 0) Failf("chdir / (got %s)", ErrName(errno));
  } else {
    Failf("chdir /rw (got %s)", ErrName(errno));
  }
  ExpectLink("/proc/self/root", "/", host_root);
  ExpectLink("/proc/1/root", "/", host_root);
  ExpectLink("/proc/self/cwd", "/", host_root);
  ExpectLink("/proc/self/exe", "/escape_fs", host_root);
  close(rootfd);
}

// ---------------------------------------------------------------------------------------------
// (h) the host PIDs of the Sentry and the gofer.

static int ReadPids(pid_t* sentry, pid_t* gofer) {
  char buf[128];
  double deadline = Now() + 20;
  while (ReadFile("/rw/pids", buf, sizeof(buf)) < 0) {
    if (Now() > deadline) return -1;
    usleep(20 * 1000);
  }
  int a, b;
  if (sscanf(buf, "%d %d", &a, &b) != 2 || a <= 1 || b <= 1) return -1;
  *sentry = a;
  *gofer = b;
  return 0;
}

static void CheckHostPid(pid_t pid, const char* who, const char* secret) {
  printf("-- host pid %d (%s)\n", (int)pid, who);
  // Run while the guest has one process (pid 1) and no other thread, so no guest id can
  // coincide with a host pid (never 1).
  errno = 0;
  int r = kill(pid, 0);
  char what[256];
  snprintf(what, sizeof(what), "kill(%d, 0) (%s)", (int)pid, who);
  Expect(what, r, errno, ESRCH, 0);
  const char* subs[] = {"", "/", "/root", "/root/", "/exe", "/cwd", "/fd", "/fd/0", "/fd/3",
                        "/environ", "/cmdline", "/status", "/stat", "/maps", "/mountinfo",
                        "/comm", "/fdinfo/0", "/ns/mnt", "/task", "/root/etc/hostname"};
  char path[8192];
  for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
    struct stat st;
    snprintf(path, sizeof(path), "/proc/%d%s", (int)pid, subs[i]);
    EXPECT_AT("lstat", path, ENOENT, 0, lstat(path, &st));
    EXPECT_AT("open", path, ENOENT, 1, open(path, O_RDONLY));
  }
  char buf[256];
  snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
  EXPECT_AT("readlink", path, ENOENT, 0, readlink(path, buf, sizeof(buf)));
  snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
  EXPECT_AT("readlink", path, ENOENT, 0, readlink(path, buf, sizeof(buf)));
  snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, secret);
  EXPECT_AT("open", path, ENOENT, 1, open(path, O_RDONLY));
  snprintf(path, sizeof(path), "/proc/%d/task/%d/root/..", (int)pid, (int)pid);
  EXPECT_AT("open", path, ENOENT, 1, open(path, O_RDONLY));
  snprintf(path, sizeof(path), "/proc/self/task/%d", (int)pid);
  EXPECT_AT("open", path, ENOENT, 1, open(path, O_RDONLY));
  snprintf(path, sizeof(path), "/proc/1/task/%d/environ", (int)pid);
  EXPECT_AT("open", path, ENOENT, 1, open(path, O_RDONLY));
}

// Every process the guest sees in /proc: not the host pids, and none named like them.
static void CheckProcListing(pid_t sentry, pid_t gofer) {
  DIR* d = opendir("/proc");
  if (!d) {
    Failf("opendir /proc (got %s)", ErrName(errno));
    return;
  }
  int seen_self = 0, bad = 0;
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    char* end;
    long pid = strtol(e->d_name, &end, 10);
    if (*end || end == e->d_name) continue;
    if (pid == getpid()) seen_self = 1;
    if (pid == sentry || pid == gofer) {
      Failf("/proc lists host pid %ld", pid);
      bad = 1;
    }
    char path[300], comm[64] = "", cmdline[4096];
    snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
    ReadFile(path, comm, sizeof(comm));
    snprintf(path, sizeof(path), "/proc/%ld/cmdline", pid);
    ssize_t n = ReadFile(path, cmdline, sizeof(cmdline));
    for (ssize_t i = 0; i + 1 < n; i++) {
      if (cmdline[i] == 0) cmdline[i] = ' ';
    }
    // PID 1 may be the Sentry's own init (sentry-run): no cmdline, like a kernel thread.
    int sentry_init = pid == 1 && strcmp(comm, "sentry-init\n") == 0 && n == 0;
    if ((strncmp(comm, "sentry", 6) == 0 && !sentry_init) ||
        (n > 0 && strstr(cmdline, "--rootfs"))) {
      Failf("/proc/%ld is a host process (comm %s, cmdline %s)", pid, comm, cmdline);
      bad = 1;
    }
  }
  closedir(d);
  if (!seen_self) Failf("/proc lists the guest itself");
  if (!bad) Pass("/proc lists neither host pid, and no process named sentry*");
}

// ---------------------------------------------------------------------------------------------
// (r) writes to a read-only bind. Expects, in DIR: a file f, a directory d holding inner, an
// empty directory e and a symlink l -> f. OTHER is writable and on another mount.

static void CheckReadOnly(const char* dir, const char* other) {
  if (chdir(dir) != 0) {
    Failf("chdir %s (got %s)", dir, ErrName(errno));
    return;
  }
  printf("-- read-only bind %s\n", dir);
  // open
  EXPECT_FD(EROFS, open("f", O_WRONLY));
  EXPECT_FD(EROFS, open("f", O_RDWR));
  EXPECT_FD(EROFS, open("f", O_WRONLY | O_APPEND));
  EXPECT_FD(EROFS, open("f", O_RDONLY | O_TRUNC));
  EXPECT_FD(EROFS, open("f", O_WRONLY | O_TRUNC));
  EXPECT_FD(EROFS, open("l", O_WRONLY));
  EXPECT_FD(EROFS, open("d/inner", O_RDWR));
  EXPECT_FD(EROFS, open("new", O_WRONLY | O_CREAT, 0644));
  EXPECT_FD(EROFS, open("new", O_RDONLY | O_CREAT, 0644));
  EXPECT_FD(EROFS, open("new", O_RDWR | O_CREAT | O_EXCL, 0644));
  EXPECT_FD(EROFS, open("d/new", O_WRONLY | O_CREAT, 0644));
  EXPECT_FD(EROFS, creat("new", 0644));
  EXPECT_FD(EEXIST, open("f", O_WRONLY | O_CREAT | O_EXCL, 0644));
  EXPECT_FD(0, open("f", O_RDONLY | O_CREAT, 0644));  // exists, nothing to write
  EXPECT_FD(0, open("f", O_RDONLY));
  EXPECT_FD(0, open("d", O_RDONLY | O_DIRECTORY));
  EXPECT_FD(EISDIR, open("d", O_WRONLY));
  // Reopening a read-only descriptor for writing through /proc/self/fd.
  int rfd = open("f", O_RDONLY);
  char via[64];
  snprintf(via, sizeof(via), "/proc/self/fd/%d", rfd);
  EXPECT_AT("open O_RDWR", via, EROFS, 1, open(via, O_RDWR));
  // Directories and names.
  EXPECT(EROFS, mkdir("newdir", 0755));
  EXPECT(EROFS, mkdir("d/newdir", 0755));
  EXPECT(EEXIST, mkdir("d", 0755));
  EXPECT(EROFS, mknod("fifo", S_IFIFO | 0644, 0));
  EXPECT(EROFS, unlink("f"));
  EXPECT(EROFS, unlink("l"));
  EXPECT(EROFS, unlink("d/inner"));
  EXPECT(EROFS, unlink("missing"));
  EXPECT(EROFS, unlink("d"));
  EXPECT(EROFS, rmdir("e"));
  EXPECT(EROFS, rmdir("d"));
  EXPECT(EROFS, rmdir("missing"));
  EXPECT(EROFS, rmdir("f"));
  EXPECT(EROFS, rename("f", "g"));
  EXPECT(EROFS, rename("f", "d/inner"));
  EXPECT(EROFS, rename("e", "e2"));
  EXPECT(EROFS, rename("missing", "g"));
  EXPECT(EROFS, syscall(SYS_renameat2, AT_FDCWD, "f", AT_FDCWD, "e", RENAME_EXCHANGE));
  EXPECT(EROFS, syscall(SYS_renameat2, AT_FDCWD, "f", AT_FDCWD, "g", RENAME_NOREPLACE));
  EXPECT(EROFS, symlink("f", "newlink"));
  EXPECT(EROFS, symlink("/", "d/newlink"));
  EXPECT(EEXIST, symlink("f", "l"));
  EXPECT(EROFS, link("f", "hard"));
  EXPECT(EROFS, link("d/inner", "hard"));
  // Across mounts: rename compares the mounts first (EXDEV); link asks the new name's mount
  // for write access while it looks the name up, before it compares the mounts (EROFS).
  char src[4096], dst[4096];
  snprintf(src, sizeof(src), "%s/xdev-%d", other, (int)getpid());
  if (WriteFile(src, "x\n") != 0) {
    Failf("create %s (got %s)", src, ErrName(errno));
  } else {
    snprintf(dst, sizeof(dst), "%s/xdev", dir);
    EXPECT_AT("rename into", dst, EXDEV, 0, rename(src, dst));
    snprintf(dst, sizeof(dst), "%s/f", dir);
    EXPECT_AT("rename from", dst, EXDEV, 0, rename(dst, src));
    EXPECT_AT("link into", dir, EROFS, 0, link(src, "xdev"));
    unlink(src);
  }
  // Attributes.
  EXPECT(EROFS, chmod("f", 0600));
  EXPECT(EROFS, chmod("d", 0700));
  EXPECT(EROFS, chmod("l", 0600));  // follows to f
  EXPECT(EROFS, fchmod(rfd, 0600));
  EXPECT(EROFS, chown("f", 0, 0));
  EXPECT(EROFS, lchown("l", 0, 0));
  EXPECT(EROFS, fchown(rfd, 0, 0));
  EXPECT(EROFS, truncate("f", 0));
  EXPECT(EROFS, truncate("l", 1));
  EXPECT(EISDIR, truncate("d", 0));
  EXPECT(EINVAL, ftruncate(rfd, 0));
  struct timespec ts[2] = {{1, 0}, {2, 0}};
  EXPECT(EROFS, utimensat(AT_FDCWD, "f", NULL, 0));
  EXPECT(EROFS, utimensat(AT_FDCWD, "f", ts, 0));
  EXPECT(EROFS, utimensat(AT_FDCWD, "l", ts, AT_SYMLINK_NOFOLLOW));
  EXPECT(EROFS, utimensat(AT_FDCWD, "d", ts, 0));
  EXPECT(EROFS, futimens(rfd, ts));
  EXPECT(EROFS, setxattr("f", "user.sentry", "x", 1, 0));
  EXPECT(EROFS, removexattr("f", "user.sentry"));
  EXPECT(EROFS, access("f", W_OK));
  EXPECT(EROFS, access("d", W_OK));
  EXPECT(0, access("f", R_OK));
  close(rfd);
  if (chdir("/") != 0) Failf("chdir / (got %s)", ErrName(errno));
}

// ---------------------------------------------------------------------------------------------
// (s) a guest thread swaps a directory for symlinks while another opens paths through it.

struct Race {
  char dir[4096];        // holds x (a directory with a decoy) and the symlinks l0..l3
  char paths[3][8192];   // opened through x
  atomic_int stop;
  long swaps, opens, decoys, leaks;
};

static void* Swapper(void* arg) {
  struct Race* r = arg;
  char x[4200], xd[4200], l[4200];
  snprintf(x, sizeof(x), "%s/x", r->dir);
  snprintf(xd, sizeof(xd), "%s/x.dir", r->dir);
  for (long i = 0; !atomic_load(&r->stop); i++) {
    snprintf(l, sizeof(l), "%s/l%ld", r->dir, i % 4);
    // x: the directory, then (briefly absent) the symlink, then the directory again.
    if (rename(x, xd) != 0 || rename(l, x) != 0 || rename(x, l) != 0 || rename(xd, x) != 0) {
      Failf("swapper: rename in %s (got %s)", r->dir, ErrName(errno));
      break;
    }
    r->swaps++;
  }
  return NULL;
}

// Opens `path`: any content other than the decoy is a leak.
static void OpenThrough(const char* path, long* decoys, long* leaks) {
  char buf[256];
  if (ReadFile(path, buf, sizeof(buf)) < 0) return;
  if (strcmp(buf, "decoy\n") == 0) {
    (*decoys)++;
    return;
  }
  (*leaks)++;
  if (strstr(buf, "SENTRY-HOST-SECRET")) {
    Failf("open %s read the host secret \"%.60s\": the walk escaped", path, buf);
  } else {
    Failf("open %s read \"%.60s\", not the decoy", path, buf);
  }
}

static void GuestRace(const char* dir, const char* secret, double seconds) {
  printf("-- guest-side swap in %s for %.1f s\n", dir, seconds);
  struct Race* r = calloc(1, sizeof(*r));
  snprintf(r->dir, sizeof(r->dir), "%s", dir);
  char secret_dir[4096], p[4200];
  snprintf(secret_dir, sizeof(secret_dir), "%s", secret);
  dirname(secret_dir);
  const char* secret_name = strrchr(secret, '/') + 1;
  // Targets that reach the secret's directory on the HOST if anything follows them there.
  char up[512] = "";
  for (int i = 0; i < 16; i++) strcat(up, "../");
  char targets[4][8192];
  snprintf(targets[0], sizeof(targets[0]), "%s", secret_dir);
  snprintf(targets[1], sizeof(targets[1]), "%s%s", up, secret_dir + 1);
  snprintf(targets[2], sizeof(targets[2]), "/");
  snprintf(targets[3], sizeof(targets[3]), "/proc/self/root/..%s", secret_dir);
  snprintf(p, sizeof(p), "%s/x", dir);
  if (mkdir(dir, 0755) != 0 || mkdir(p, 0755) != 0) {
    Failf("set up %s (got %s)", p, ErrName(errno));
    free(r);
    return;
  }
  snprintf(p, sizeof(p), "%s/x/%s", dir, secret_name);
  int ok = WriteFile(p, "decoy\n") == 0;
  for (int i = 0; i < 4 && ok; i++) {
    snprintf(p, sizeof(p), "%s/l%d", dir, i);
    ok = symlink(targets[i], p) == 0;
  }
  if (!ok) {
    Failf("set up %s (got %s)", dir, ErrName(errno));
    free(r);
    return;
  }
  // x/secret.txt: the decoy or, through the symlinks, the host's secret; x/<secret path>:
  // through "/"; x/../../..<secret path>: ".." after following a symlink.
  snprintf(r->paths[0], sizeof(r->paths[0]), "%s/x/%s", dir, secret_name);
  snprintf(r->paths[1], sizeof(r->paths[1]), "%s/x%s", dir, secret);
  snprintf(r->paths[2], sizeof(r->paths[2]), "%s/x/%s%s", dir, up, secret + 1);
  pthread_t t;
  if (pthread_create(&t, NULL, Swapper, r) != 0) {
    Failf("pthread_create");
    free(r);
    return;
  }
  double end = Now() + seconds;
  while (Now() < end) {
    for (int i = 0; i < 3; i++) OpenThrough(r->paths[i], &r->decoys, &r->leaks);
    r->opens += 3;
  }
  atomic_store(&r->stop, 1);
  pthread_join(t, NULL);
  printf("   %ld swaps, %ld opens, %ld decoys read\n", r->swaps, r->opens, r->decoys);
  if (r->swaps == 0 || r->decoys == 0) {
    Failf("the race in %s ran (swaps %ld, decoys read %ld)", dir, r->swaps, r->decoys);
  } else if (r->leaks == 0) {
    printf("ok: no open through the swapped name in %s escaped\n", dir);
  }
  free(r);
}

// ---------------------------------------------------------------------------------------------
// (H) the host swaps names on the read-write bind (see HostSwap) while the guest opens them.

static void HostRaceGuest(const char* dir, const char* secret, double seconds) {
  printf("-- host-side swap in %s for %.1f s\n", dir, seconds);
  char f[4200], inner[4200], go[4200], stop[4200];
  const char* secret_name = strrchr(secret, '/') + 1;
  snprintf(f, sizeof(f), "%s/f", dir);
  snprintf(inner, sizeof(inner), "%s/d/%s", dir, secret_name);
  snprintf(go, sizeof(go), "%s/go", dir);
  snprintf(stop, sizeof(stop), "%s/stop", dir);
  long decoys = 0, leaks = 0, opens = 0, fresh = 0;
  // First lookups while nothing moves: the Sentry now holds f and d as a file and a directory,
  // so every later open goes to the gofer by handle while the host swaps the names under it.
  OpenThrough(f, &decoys, &leaks);
  OpenThrough(inner, &decoys, &leaks);
  if (decoys != 2) Failf("read the decoys %s and %s before the race", f, inner);
  if (WriteFile(go, "go\n") != 0) Failf("create %s (got %s)", go, ErrName(errno));
  double end = Now() + seconds;
  while (Now() < end) {
    OpenThrough(f, &decoys, &leaks);
    OpenThrough(inner, &decoys, &leaks);
    opens += 2;
    // The fresh directories n<i>: first lookups that race the host's swaps.
    DIR* d = opendir(dir);
    if (!d) continue;
    struct dirent* e;
    while ((e = readdir(d)) != NULL) {
      if (e->d_name[0] != 'n') continue;
      char p[8400];
      snprintf(p, sizeof(p), "%s/%s/%s", dir, e->d_name, secret_name);
      OpenThrough(p, &decoys, &leaks);
      snprintf(p, sizeof(p), "%s/%s%s", dir, e->d_name, secret);
      OpenThrough(p, &decoys, &leaks);
      opens += 2;
      fresh++;
    }
    closedir(d);
  }
  if (WriteFile(stop, "stop\n") != 0) Failf("create %s (got %s)", stop, ErrName(errno));
  printf("   %ld opens (%ld through fresh names), %ld decoys read\n", opens, fresh * 2, decoys);
  if (leaks == 0 && decoys > 2) {
    Pass("no open through a name the host swapped escaped");
  } else if (decoys <= 2) {
    Failf("the host-side race ran (decoys read during it: %ld)", decoys - 2);
  }
}

// Removes the directory or symlink `name` in `dfd` without following a symlink anywhere: the
// directory's decoy by a descriptor of the directory itself.
static void RemoveFresh(int dfd, const char* name, const char* secret_name) {
  int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  if (fd >= 0) {
    unlinkat(fd, secret_name, 0);
    close(fd);
    unlinkat(dfd, name, AT_REMOVEDIR);
  } else {
    unlinkat(dfd, name, 0);
  }
}

// The fresh names of round `id`: n<id>, a directory holding a decoy (filled under another
// name first, so that the guest never sees it half made), and t<id>, a symlink to the
// secret's directory (absolute or relative); retires round id-4.
static int NewFresh(int dfd, long id, const char* secret_name, const char* secret_dir,
                    const char* up) {
  char n[64], t[64], b[64], target[8192];
  snprintf(n, sizeof(n), "n%ld", id);
  snprintf(t, sizeof(t), "t%ld", id);
  snprintf(b, sizeof(b), "b%ld", id);
  if (id % 2) {
    snprintf(target, sizeof(target), "%s", secret_dir);
  } else {
    snprintf(target, sizeof(target), "%s%s", up, secret_dir + 1);
  }
  if (mkdirat(dfd, b, 0755) != 0) return -1;
  int bfd = openat(dfd, b, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  if (bfd < 0) return -1;
  int fd = openat(bfd, secret_name, O_WRONLY | O_CREAT | O_EXCL, 0644);
  close(bfd);
  if (fd < 0) return -1;
  int written = write(fd, "decoy\n", 6) == 6;
  close(fd);
  if (!written || renameat(dfd, b, dfd, n) != 0 || symlinkat(target, dfd, t) != 0) return -1;
  if (id >= 4) {
    snprintf(n, sizeof(n), "n%ld", id - 4);
    snprintf(t, sizeof(t), "t%ld", id - 4);
    RemoveFresh(dfd, n, secret_name);
    RemoveFresh(dfd, t, secret_name);
  }
  return 0;
}

// On the host: in DIR, exchanges f with f.l (-> SECRET), d with d.l (-> SECRET's directory),
// d/<secret name> with d/<secret name>.l (-> SECRET), and fresh directories n<i> holding a
// decoy with symlinks to SECRET's directory (absolute and relative), until DIR/stop appears or
// SECS seconds passed. Waits for DIR/go first.
static int HostSwap(const char* dir, const char* secret, double seconds) {
  char secret_dir[4096];
  snprintf(secret_dir, sizeof(secret_dir), "%s", secret);
  dirname(secret_dir);
  const char* secret_name = strrchr(secret, '/') + 1;
  char up[1024] = "";
  for (const char* c = dir; *c; c++) {
    if (*c == '/' && c[1] && c[1] != '/') strcat(up, "../");
  }
  char go[4200], stop[4200];
  snprintf(go, sizeof(go), "%s/go", dir);
  snprintf(stop, sizeof(stop), "%s/stop", dir);
  double deadline = Now() + 60;
  while (access(go, F_OK) != 0) {
    if (Now() > deadline || access(stop, F_OK) == 0) {
      fprintf(stderr, "host-swap: %s never appeared\n", go);
      return 1;
    }
    usleep(5 * 1000);
  }
  // The inner pair by a descriptor of the real directory: "d" itself is a symlink to the
  // secret's directory half of the time.
  int dfd = open(dir, O_RDONLY | O_DIRECTORY);
  int innerfd = openat(dfd, "d", O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  if (dfd < 0 || innerfd < 0) {
    fprintf(stderr, "host-swap: open %s and %s/d: %s\n", dir, dir, strerror(errno));
    return 1;
  }
  char b[4300];
  snprintf(b, sizeof(b), "%s.l", secret_name);
  const char* pairs[3][2] = {{"f", "f.l"}, {"d", "d.l"}, {secret_name, b}};
  const int pair_fds[3] = {dfd, dfd, innerfd};
  long swaps = 0, fresh = 0;
  double end = Now() + seconds;
  for (long i = 0; Now() < end && access(stop, F_OK) != 0; i++) {
    for (int k = 0; k < 3; k++) {
      int fd = pair_fds[k];
      if (syscall(SYS_renameat2, fd, pairs[k][0], fd, pairs[k][1], RENAME_EXCHANGE) != 0) {
        fprintf(stderr, "host-swap: exchange %s: %s\n", pairs[k][0], strerror(errno));
        return 1;
      }
      swaps++;
    }
    if (i % 64 == 0 && NewFresh(dfd, i / 64, secret_name, secret_dir, up) != 0) {
      fprintf(stderr, "host-swap: fresh directory %ld: %s\n", i / 64, strerror(errno));
      return 1;
    }
    if (i % 64 == 0) fresh++;
    char n[64], t[64];
    snprintf(n, sizeof(n), "n%ld", i / 64);
    snprintf(t, sizeof(t), "t%ld", i / 64);
    if (syscall(SYS_renameat2, dfd, n, dfd, t, RENAME_EXCHANGE) == 0) swaps++;
  }
  // Leave the stable names as they started, for the wrapper's look afterwards.
  struct stat st;
  for (int k = 0; k < 3; k++) {
    int fd = pair_fds[k];
    if (fstatat(fd, pairs[k][0], &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
      syscall(SYS_renameat2, fd, pairs[k][0], fd, pairs[k][1], RENAME_EXCHANGE);
    }
  }
  close(innerfd);
  close(dfd);
  fprintf(stderr, "host-swap: %ld swaps, %ld fresh directories\n", swaps, fresh);
  return 0;
}

// ---------------------------------------------------------------------------------------------

static int GuestMain(const char* secret, const char* host_root) {
  if (!InOwnSandbox()) {
    fprintf(stderr, "escape_fs: refusing to run the guest checks: I am pid %d, neither PID 1 "
            "of my own PID namespace nor the child of the Sentry's init (natively the walks would escape by design)\n", (int)getpid());
    return 2;
  }
  if (secret[0] != '/' || host_root[0] != '/' || !strchr(secret + 1, '/')) {
    fprintf(stderr, "escape_fs: SECRET and HOST_ROOT must be absolute\n");
    return 2;
  }
  CheckProcRoot(secret, host_root);
  pid_t sentry, gofer;
  if (ReadPids(&sentry, &gofer) != 0) {
    Failf("read the host pids from /rw/pids (written by the wrapper)");
  } else {
    CheckHostPid(sentry, "sentry-run, the Sentry", secret);
    CheckHostPid(gofer, "sentry-gofer", secret);
    CheckProcListing(sentry, gofer);
  }
  CheckReadOnly("/ro", "/rw");
  if (mkdir("/tmp", 01777) != 0 && errno != EEXIST) Failf("mkdir /tmp (got %s)", ErrName(errno));
  GuestRace("/tmp/race", secret, 1.0);
  GuestRace("/rw/grace", secret, 1.0);
  HostRaceGuest("/rw/hrace", secret, 2.0);
  if (failures > 0) {
    printf("escape_fs: %d check(s) FAILED\n", failures);
    return 1;
  }
  printf("escape_fs: all checks passed\n");
  return 0;
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc == 4 && strcmp(argv[1], "guest") == 0) return GuestMain(argv[2], argv[3]);
  if (argc == 4 && strcmp(argv[1], "ro") == 0) {
    CheckReadOnly(argv[2], argv[3]);
    printf("escape_fs ro: %d failure(s)\n", failures);
    return failures > 0;
  }
  if (argc == 5 && strcmp(argv[1], "host-swap") == 0) {
    return HostSwap(argv[2], argv[3], atof(argv[4]));
  }
  fprintf(stderr,
          "usage: %s guest SECRET HOST_ROOT | ro DIR OTHER | host-swap DIR SECRET SECONDS\n",
          argv[0]);
  return 2;
}
