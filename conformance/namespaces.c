// Namespaces and mounts (as root): unshare and clone of mount, UTS and IPC namespaces and
// what each keeps to itself, mount(2) of tmpfs, binds (MS_REC), remounts (read-only, noexec
// and the other per-mount flags), MS_MOVE, propagation types, umount2 (EBUSY, MNT_DETACH,
// MNT_EXPIRE), pivot_root into a tmpfs, /proc/PID/ns files (readlink, stat, inode numbers),
// setns back through nsfs files and pidfds, and the errnos of bad calls.
//
// Every case runs in a forked child, which unshares what it needs and first makes its mounts
// private (so that nothing propagates back on a host whose / is shared): the test process's
// own namespaces stay untouched, and a namespace goes away with its last process.

#define _GNU_SOURCE  // before any system header (common.h defines it too)

#include <mqueue.h>
#include <sched.h>
#include <signal.h>
#include <sys/ipc.h>
#include <sys/mount.h>
#include <sys/shm.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>

#include "common.h"

static const char *tmp;  // the scratch directory (absolute)

static void new_mount_ns(void) {
  CHECK_OK(unshare(CLONE_NEWNS));
  CHECK_OK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
}

// Paths under the scratch directory fit in NS_BASE; paths made from them in PATH_MAX.
#define NS_BASE 1024

static void path_in_tmp(char *out, const char *name) {
  snprintf(out, NS_BASE, "%s/%s", tmp, name);
}

static void fresh_dir(const char *name) {
  char p[NS_BASE];
  path_in_tmp(p, name);
  CHECK(mkdir(p, 0755) == 0 || errno == EEXIST);
}

// The mount options field (the 6th) of the mountinfo line whose mount point is `path`, and
// the optional fields after it, in `opts` and `optional`; 0 when no such line.
static int mountinfo(const char *mountinfo_path, const char *path, char *opts, char *optional) {
  FILE *f = fopen(mountinfo_path, "r");
  CHECK(f != NULL);
  char line[4096];
  int found = 0;
  while (fgets(line, sizeof(line), f)) {
    char mp[PATH_MAX], o[512];
    int consumed = 0;
    if (sscanf(line, "%*d %*d %*s %*s %s %511s%n", mp, o, &consumed) != 2) continue;
    if (strcmp(mp, path) != 0) continue;
    found = 1;
    if (opts) strcpy(opts, o);
    if (optional) {
      const char *rest = line + consumed;
      const char *dash = strstr(rest, " - ");
      size_t n = dash ? (size_t)(dash - rest) : 0;
      memcpy(optional, rest, n);
      optional[n] = '\0';
    }
  }
  fclose(f);
  return found;
}

static int mounted(const char *path) {
  return mountinfo("/proc/self/mountinfo", path, NULL, NULL);
}

static void mount_tmpfs(const char *name) {
  char p[NS_BASE];
  fresh_dir(name);
  path_in_tmp(p, name);
  CHECK_OK(mount("conf", p, "tmpfs", 0, "mode=0755"));
}

static void touch(const char *path) {
  int fd = open(path, O_CREAT | O_WRONLY, 0644);
  CHECK(fd >= 0);
  CHECK_OK(close(fd));
}

static int exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

static unsigned long ns_ino_of(const char *link) {
  char buf[128] = {0};
  CHECK(readlink(link, buf, sizeof(buf) - 1) > 0);
  char *open_br = strchr(buf, '[');
  CHECK(open_br != NULL);
  return strtoul(open_br + 1, NULL, 10);
}

// --- mount namespaces ---------------------------------------------------------------------

static int sync_pipe[2], done_pipe[2];

static void isolated_child(void) {
  char a[NS_BASE], f[PATH_MAX];
  new_mount_ns();
  mount_tmpfs("iso");
  path_in_tmp(a, "iso");
  snprintf(f, sizeof(f), "%s/inside", a);
  touch(f);
  CHECK(mounted(a));
  CHECK(exists(f));
  char c = 'x';
  CHECK_EQ(write(sync_pipe[1], &c, 1), 1);
  CHECK_EQ(read(done_pipe[0], &c, 1), 1);
}

TEST(mount_ns_isolation) {
  unsigned long my_mnt = ns_ino_of("/proc/self/ns/mnt");
  CHECK_OK(pipe(sync_pipe));
  CHECK_OK(pipe(done_pipe));
  fresh_dir("iso");
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    isolated_child();
    _exit(0);
  }
  char c;
  CHECK_EQ(read(sync_pipe[0], &c, 1), 1);
  char a[NS_BASE], f[PATH_MAX], link[64], info[64];
  path_in_tmp(a, "iso");
  snprintf(f, sizeof(f), "%s/inside", a);
  // The child's tmpfs and its file are not in ours...
  CHECK(!mounted(a));
  CHECK(!exists(f));
  // ...but its /proc/PID/mountinfo shows its namespace, and its ns link differs from ours.
  snprintf(info, sizeof(info), "/proc/%d/mountinfo", pid);
  CHECK(mountinfo(info, a, NULL, NULL));
  snprintf(link, sizeof(link), "/proc/%d/ns/mnt", pid);
  CHECK(ns_ino_of(link) != my_mnt);
  CHECK_EQ(write(done_pipe[1], &c, 1), 1);
  CHECK_EXIT(pid, 0);
  CHECK_EQ(ns_ino_of("/proc/self/ns/mnt"), my_mnt);
  for (int i = 0; i < 2; i++) {
    close(sync_pipe[i]);
    close(done_pipe[i]);
  }
}

static void clone_newns_child(void) {
  char a[NS_BASE];
  path_in_tmp(a, "cloned");
  // CLONE_NEWNS with CLONE_FS is refused; without it the child has its own table.
  CHECK_ERRNO(syscall(SYS_clone, CLONE_NEWNS | CLONE_FS | SIGCHLD, 0, 0, 0, 0), EINVAL);
  CHECK_OK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
  long pid = syscall(SYS_clone, CLONE_NEWNS | SIGCHLD, 0, 0, 0, 0);
  CHECK(pid >= 0);
  if (pid == 0) {
    CHECK_OK(mount("conf", a, "tmpfs", 0, NULL));
    CHECK(mounted(a));
    _exit(0);
  }
  CHECK_EXIT((pid_t)pid, 0);
  CHECK(!mounted(a));
}

TEST(clone_newns) {
  fresh_dir("cloned");
  conf_in_child(clone_newns_child);
}

// --- mount, remount, bind, move -------------------------------------------------------------

static void remount_child(void) {
  char a[NS_BASE], f[PATH_MAX], g[PATH_MAX], opts[512], opt[512];
  new_mount_ns();
  mount_tmpfs("ro");
  path_in_tmp(a, "ro");
  snprintf(f, sizeof(f), "%s/file", a);
  snprintf(g, sizeof(g), "%s/dir", a);
  touch(f);
  CHECK(mountinfo("/proc/self/mountinfo", a, opts, NULL));
  CHECK_EQ(strcmp(opts, "rw,relatime"), 0);
  // Read-only remount: every write is EROFS, reads still work.
  CHECK_OK(mount(NULL, a, NULL, MS_REMOUNT | MS_RDONLY, NULL));
  CHECK(mountinfo("/proc/self/mountinfo", a, opts, NULL));
  CHECK_EQ(strcmp(opts, "ro,relatime"), 0);
  CHECK_ERRNO(open(f, O_WRONLY), EROFS);
  CHECK_ERRNO(mkdir(g, 0755), EROFS);
  CHECK_ERRNO(unlink(f), EROFS);
  CHECK_ERRNO(chmod(f, 0600), EROFS);
  int fd = open(f, O_RDONLY);
  CHECK(fd >= 0);
  close(fd);
  struct statvfs sv;
  CHECK_OK(statvfs(a, &sv));
  CHECK(sv.f_flag & ST_RDONLY);
  // And back: a remount without MS_RDONLY is writable again.
  CHECK_OK(mount(NULL, a, NULL, MS_REMOUNT, NULL));
  CHECK_OK(mkdir(g, 0755));
  // A bind remount sets the per-mount flags: noexec refuses execve.
  CHECK_OK(mount(NULL, a, NULL, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL));
  CHECK(mountinfo("/proc/self/mountinfo", a, opt, NULL));
  CHECK_EQ(strcmp(opt, "rw,nosuid,nodev,noexec,relatime"), 0);
  char prog[PATH_MAX];
  snprintf(prog, sizeof(prog), "%s/prog", a);
  fd = open(prog, O_CREAT | O_WRONLY, 0755);
  CHECK(fd >= 0);
  CHECK_EQ(write(fd, "#!/bin/sh\nexit 0\n", 17), 17);
  close(fd);
  char *argv[] = {prog, NULL};
  CHECK_ERRNO(execve(prog, argv, argv + 1), EACCES);
  CHECK_OK(mount(NULL, a, NULL, MS_REMOUNT | MS_BIND | MS_NOATIME, NULL));
  CHECK(mountinfo("/proc/self/mountinfo", a, opt, NULL));
  CHECK_EQ(strcmp(opt, "rw,noatime"), 0);
  // Only a mount's root can be remounted; a bad tmpfs option is EINVAL.
  CHECK_ERRNO(mount(NULL, g, NULL, MS_REMOUNT | MS_RDONLY, NULL), EINVAL);
  CHECK_ERRNO(mount(NULL, a, NULL, MS_REMOUNT, "nosuchoption=1"), EINVAL);
}

TEST(remount) { conf_in_child(remount_child); }

static void bind_child(void) {
  char a[NS_BASE], b[NS_BASE], c[NS_BASE], sub[2 * NS_BASE], p[PATH_MAX], opt[512];
  new_mount_ns();
  mount_tmpfs("bsrc");
  path_in_tmp(a, "bsrc");
  fresh_dir("bdst");
  path_in_tmp(b, "bdst");
  fresh_dir("bdst2");
  path_in_tmp(c, "bdst2");
  snprintf(p, sizeof(p), "%s/f", a);
  touch(p);
  snprintf(sub, sizeof(sub), "%s/sub", a);
  CHECK_OK(mkdir(sub, 0755));
  CHECK_OK(mount("conf", sub, "tmpfs", 0, NULL));
  snprintf(p, sizeof(p), "%s/deep", sub);
  touch(p);
  // A plain bind shows the source's files but not what is mounted below it.
  CHECK_OK(mount(a, b, NULL, MS_BIND, NULL));
  snprintf(p, sizeof(p), "%s/f", b);
  CHECK(exists(p));
  snprintf(p, sizeof(p), "%s/sub/deep", b);
  CHECK(!exists(p));
  // MS_REC takes the mounts below along.
  CHECK_OK(mount(a, c, NULL, MS_BIND | MS_REC, NULL));
  snprintf(p, sizeof(p), "%s/sub/deep", c);
  CHECK(exists(p));
  // A bind of a read-only mount is read-only too; a bind remount makes the bind read-only.
  CHECK_OK(mount(NULL, b, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL));
  snprintf(p, sizeof(p), "%s/new", b);
  CHECK_ERRNO(open(p, O_CREAT | O_WRONLY, 0644), EROFS);
  snprintf(p, sizeof(p), "%s/new", a);
  touch(p);  // the source stays writable
  // Propagation types show in mountinfo's optional fields.
  CHECK_OK(mount(NULL, a, NULL, MS_SHARED, NULL));
  CHECK(mountinfo("/proc/self/mountinfo", a, NULL, opt));
  CHECK(strstr(opt, "shared:") != NULL);
  // A bind of a shared mount is its peer; a peer made a slave gets the group as master.
  char peer[NS_BASE], peer_opt[512];
  fresh_dir("bpeer");
  path_in_tmp(peer, "bpeer");
  CHECK_OK(mount(a, peer, NULL, MS_BIND, NULL));
  CHECK(mountinfo("/proc/self/mountinfo", peer, NULL, peer_opt));
  CHECK_EQ(strcmp(opt, peer_opt), 0);
  CHECK_OK(mount(NULL, peer, NULL, MS_SLAVE, NULL));
  CHECK(mountinfo("/proc/self/mountinfo", peer, NULL, peer_opt));
  CHECK(strstr(peer_opt, " master:") != NULL && strstr(peer_opt, "shared:") == NULL);
  CHECK_EQ(strcmp(strchr(peer_opt, ':'), strchr(opt, ':')), 0);
  CHECK_OK(umount2(peer, 0));
  // Without peers, a shared mount made a slave has no master: it is private.
  CHECK_OK(mount(NULL, a, NULL, MS_SLAVE, NULL));
  CHECK(mountinfo("/proc/self/mountinfo", a, NULL, opt));
  CHECK_EQ(strlen(opt), 0);
  CHECK_OK(mount(NULL, a, NULL, MS_SHARED, NULL));
  CHECK_OK(mount(NULL, a, NULL, MS_PRIVATE, NULL));
  CHECK(mountinfo("/proc/self/mountinfo", a, NULL, opt));
  CHECK_EQ(strlen(opt), 0);
  CHECK_OK(mount(NULL, a, NULL, MS_UNBINDABLE, NULL));
  CHECK(mountinfo("/proc/self/mountinfo", a, NULL, opt));
  CHECK(strstr(opt, "unbindable") != NULL);
  fresh_dir("bdst3");
  path_in_tmp(p, "bdst3");
  CHECK_ERRNO(mount(a, p, NULL, MS_BIND, NULL), EINVAL);
  CHECK_ERRNO(mount(NULL, a, NULL, MS_SHARED | MS_PRIVATE, NULL), EINVAL);
  CHECK_ERRNO(mount(NULL, p, NULL, MS_PRIVATE, NULL), EINVAL);  // not a mount's root
}

TEST(bind_and_propagation) { conf_in_child(bind_child); }

static void move_child(void) {
  char a[NS_BASE], b[NS_BASE], p[PATH_MAX], inner[PATH_MAX];
  new_mount_ns();
  mount_tmpfs("msrc");
  path_in_tmp(a, "msrc");
  fresh_dir("mdst");
  path_in_tmp(b, "mdst");
  snprintf(p, sizeof(p), "%s/f", a);
  touch(p);
  CHECK_OK(mount(a, b, NULL, MS_MOVE, NULL));
  CHECK(!mounted(a));
  CHECK(mounted(b));
  CHECK(!exists(p));
  snprintf(p, sizeof(p), "%s/f", b);
  CHECK(exists(p));
  // Below itself: ELOOP; a directory that is no mount's root: EINVAL; no source: EINVAL.
  snprintf(inner, sizeof(inner), "%s/inner", b);
  CHECK_OK(mkdir(inner, 0755));
  CHECK_ERRNO(mount(b, inner, NULL, MS_MOVE, NULL), ELOOP);
  CHECK_ERRNO(mount(inner, a, NULL, MS_MOVE, NULL), EINVAL);
  CHECK_ERRNO(mount("", a, NULL, MS_MOVE, NULL), EINVAL);
}

TEST(move) { conf_in_child(move_child); }

static void umount_child(void) {
  char a[NS_BASE], p[PATH_MAX], sub[PATH_MAX];
  new_mount_ns();
  mount_tmpfs("um");
  path_in_tmp(a, "um");
  snprintf(p, sizeof(p), "%s/f", a);
  touch(p);
  // Busy while a file is open on it, while it is a working directory, while something is
  // mounted below it.
  int fd = open(p, O_RDONLY);
  CHECK(fd >= 0);
  CHECK_ERRNO(umount2(a, 0), EBUSY);
  close(fd);
  CHECK_OK(chdir(a));
  CHECK_ERRNO(umount2(a, 0), EBUSY);
  CHECK_OK(chdir("/"));
  snprintf(sub, sizeof(sub), "%s/sub", a);
  CHECK_OK(mkdir(sub, 0755));
  CHECK_OK(mount("conf", sub, "tmpfs", 0, NULL));
  CHECK_ERRNO(umount2(a, 0), EBUSY);
  CHECK_ERRNO(rmdir(sub), EBUSY);
  // MNT_DETACH takes the whole tree out at once.
  CHECK_OK(umount2(a, MNT_DETACH));
  CHECK(!mounted(a));
  CHECK(!mounted(sub));
  CHECK(!exists(p));
  // MNT_EXPIRE: the first call marks (EAGAIN), the second unmounts.
  mount_tmpfs("um");
  CHECK_ERRNO(umount2(a, MNT_EXPIRE | MNT_DETACH), EINVAL);
  CHECK_ERRNO(umount2(a, MNT_EXPIRE), EAGAIN);
  CHECK_OK(umount2(a, MNT_EXPIRE));
  CHECK(!mounted(a));
  // Errors: not a mount's root, no such path, bad flags, a symlink with UMOUNT_NOFOLLOW.
  CHECK_ERRNO(umount2(a, 0), EINVAL);
  path_in_tmp(p, "nosuch");
  CHECK_ERRNO(umount2(p, 0), ENOENT);
  CHECK_ERRNO(umount2(a, 0x100), EINVAL);
  mount_tmpfs("um");
  path_in_tmp(p, "um_link");
  CHECK_OK(symlink(a, p));
  CHECK_ERRNO(umount2(p, UMOUNT_NOFOLLOW), EINVAL);
  CHECK_OK(umount2(p, MNT_FORCE));
  CHECK(!mounted(a));
}

TEST(umount) { conf_in_child(umount_child); }

// Mount points with spaces, tabs and backslashes show as octal escapes.
static void mangle_child(void) {
  char a[NS_BASE], shown[PATH_MAX];
  new_mount_ns();
  mount_tmpfs("sp ace\\tab\t");
  path_in_tmp(a, "sp ace\\tab\t");
  snprintf(shown, sizeof(shown), "%s/sp\\040ace\\134tab\\011", tmp);
  CHECK(mountinfo("/proc/self/mountinfo", shown, NULL, NULL));
  CHECK_OK(umount2(a, 0));
  CHECK(!mountinfo("/proc/self/mountinfo", shown, NULL, NULL));
}

TEST(mangled_names) { conf_in_child(mangle_child); }

static void pivot_child(void) {
  char nr[NS_BASE], p[PATH_MAX], old_tmp[PATH_MAX];
  new_mount_ns();
  // The root's own mount, a file, not a mount's root: EBUSY, ENOTDIR, EINVAL. (/tmp may or
  // may not be a mount of its own, so the cases use / and tmpfs mounts made here.)
  CHECK_ERRNO(syscall(SYS_pivot_root, "/", "/"), EBUSY);
  mount_tmpfs("newroot");
  path_in_tmp(nr, "newroot");
  snprintf(p, sizeof(p), "%s/d", nr);
  CHECK_OK(mkdir(p, 0755));
  CHECK_ERRNO(syscall(SYS_pivot_root, p, p), EINVAL);
  snprintf(p, sizeof(p), "%s/file", nr);
  touch(p);
  CHECK_ERRNO(syscall(SYS_pivot_root, nr, p), ENOTDIR);
  CHECK_ERRNO(syscall(SYS_pivot_root, nr, "/"), EBUSY);  // put_old on the root's mount
  mount_tmpfs("elsewhere");
  path_in_tmp(p, "elsewhere");
  CHECK_ERRNO(syscall(SYS_pivot_root, nr, p), EINVAL);  // put_old not under new_root
  snprintf(p, sizeof(p), "%s/oldroot", nr);
  CHECK_OK(mkdir(p, 0755));
  CHECK_OK(chdir(nr));
  CHECK_OK(syscall(SYS_pivot_root, nr, p));
  CHECK_OK(chdir("/"));
  CHECK(exists("/file"));
  CHECK_OK(mkdir("/proc", 0555));
  CHECK_OK(mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL));
  CHECK(exists("/oldroot"));
  snprintf(old_tmp, sizeof(old_tmp), "/oldroot%s", tmp);
  CHECK(exists(old_tmp));
  CHECK(mounted("/"));
  CHECK(mounted("/oldroot"));
  CHECK_OK(umount2("/oldroot", MNT_DETACH));
  CHECK(!exists(old_tmp));
  CHECK(!mounted("/oldroot"));
}

TEST(pivot_root) { conf_in_child(pivot_child); }

// --- UTS and IPC namespaces ----------------------------------------------------------------

static void uts_child(void) {
  struct utsname before, after;
  CHECK_OK(uname(&before));
  long pid = syscall(SYS_clone, CLONE_NEWUTS | SIGCHLD, 0, 0, 0, 0);
  CHECK(pid >= 0);
  if (pid == 0) {
    CHECK_OK(sethostname("conf-inner", 10));
    CHECK_OK(setdomainname("conf-dom", 8));
    struct utsname u;
    CHECK_OK(uname(&u));
    CHECK_EQ(strcmp(u.nodename, "conf-inner"), 0);
    CHECK_EQ(strcmp(u.domainname, "conf-dom"), 0);
    char buf[64] = {0};
    int fd = open("/proc/sys/kernel/hostname", O_RDONLY);
    CHECK(fd >= 0);
    CHECK(read(fd, buf, sizeof(buf) - 1) > 0);
    close(fd);
    CHECK_EQ(strcmp(buf, "conf-inner\n"), 0);
    _exit(0);
  }
  CHECK_EXIT((pid_t)pid, 0);
  CHECK_OK(uname(&after));
  CHECK_EQ(strcmp(before.nodename, after.nodename), 0);
  CHECK_EQ(strcmp(before.domainname, after.domainname), 0);
  // unshare: the same, in the calling process.
  CHECK_OK(unshare(CLONE_NEWUTS));
  CHECK_OK(sethostname("conf-two", 8));
  CHECK_OK(uname(&after));
  CHECK_EQ(strcmp(after.nodename, "conf-two"), 0);
}

TEST(uts) { conf_in_child(uts_child); }

static void ipc_child(void) {
  key_t key = 0x4e530001;
  int id = shmget(key, 4096, IPC_CREAT | IPC_EXCL | 0600);
  CHECK(id >= 0);
  struct mq_attr attr = {0, 4, 16, 0, {0}};
  mqd_t q = mq_open("/conf_ns_q", O_CREAT | O_EXCL | O_RDWR, 0600, &attr);
  CHECK(q != (mqd_t)-1);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    CHECK_OK(unshare(CLONE_NEWIPC));
    // Neither the segment nor the queue is in the new namespace; the same key is free.
    CHECK_ERRNO(shmget(key, 0, 0), ENOENT);
    CHECK_ERRNO(mq_open("/conf_ns_q", O_RDWR), ENOENT);
    int mine = shmget(key, 4096, IPC_CREAT | IPC_EXCL | 0600);
    CHECK(mine >= 0);
    CHECK_OK(shmctl(mine, IPC_RMID, NULL));
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
  CHECK_EQ(shmget(key, 0, 0), id);
  CHECK_OK(shmctl(id, IPC_RMID, NULL));
  mq_close(q);
  CHECK_OK(mq_unlink("/conf_ns_q"));
}

TEST(ipc) { conf_in_child(ipc_child); }

// --- nsfs and setns -------------------------------------------------------------------------

static void nsfs_child(void) {
  static const char *kinds[][2] = {{"cgroup", "cgroup"}, {"ipc", "ipc"},
                                   {"mnt", "mnt"},       {"net", "net"},
                                   {"pid", "pid"},       {"pid_for_children", "pid"},
                                   {"time", "time"},     {"time_for_children", "time"},
                                   {"user", "user"},     {"uts", "uts"}};
  for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
    char link[64], buf[128] = {0}, want[64];
    snprintf(link, sizeof(link), "/proc/self/ns/%s", kinds[i][0]);
    CHECK(readlink(link, buf, sizeof(buf) - 1) > 0);
    unsigned long ino = ns_ino_of(link);
    snprintf(want, sizeof(want), "%s:[%lu]", kinds[i][1], ino);
    CHECK_EQ(strcmp(buf, want), 0);
    // stat follows the link to the nsfs inode; an open fd has the same one.
    struct stat st, fst;
    CHECK_OK(stat(link, &st));
    CHECK_EQ(st.st_ino, ino);
    int fd = open(link, O_RDONLY);
    CHECK(fd >= 0);
    CHECK_OK(fstat(fd, &fst));
    CHECK_EQ(fst.st_ino, ino);
    CHECK_EQ(fst.st_dev, st.st_dev);
    close(fd);
    // The parent (the same namespaces) shows the same inode.
    char plink[64];
    snprintf(plink, sizeof(plink), "/proc/%d/ns/%s", getppid(), kinds[i][0]);
    CHECK_EQ(ns_ino_of(plink), ino);
  }
  unsigned long uts = ns_ino_of("/proc/self/ns/uts");
  CHECK_OK(unshare(CLONE_NEWUTS));
  CHECK(ns_ino_of("/proc/self/ns/uts") != uts);
}

TEST(nsfs) { conf_in_child(nsfs_child); }

static void setns_child(void) {
  struct utsname orig, u;
  CHECK_OK(uname(&orig));
  int mnt_fd = open("/proc/self/ns/mnt", O_RDONLY);
  int uts_fd = open("/proc/self/ns/uts", O_RDONLY);
  int ipc_fd = open("/proc/self/ns/ipc", O_RDONLY);
  int user_fd = open("/proc/self/ns/user", O_RDONLY);
  CHECK(mnt_fd >= 0 && uts_fd >= 0 && ipc_fd >= 0 && user_fd >= 0);
  unsigned long mnt = ns_ino_of("/proc/self/ns/mnt");
  unsigned long ipc = ns_ino_of("/proc/self/ns/ipc");
  CHECK_OK(unshare(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC));
  CHECK_OK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
  mount_tmpfs("sns");
  char a[NS_BASE];
  path_in_tmp(a, "sns");
  CHECK(mounted(a));
  CHECK_OK(sethostname("conf-setns", 10));
  // Wrong kinds and files that are no namespace: EINVAL; a bad fd: EBADF.
  CHECK_ERRNO(setns(uts_fd, CLONE_NEWNS), EINVAL);
  CHECK_ERRNO(setns(0, 0), EINVAL);
  CHECK_ERRNO(setns(-1, 0), EBADF);
  CHECK_ERRNO(setns(user_fd, CLONE_NEWUSER), EINVAL);  // one's own user namespace
  // Back into the old ones.
  CHECK_OK(setns(uts_fd, CLONE_NEWUTS));
  CHECK_OK(uname(&u));
  CHECK_EQ(strcmp(u.nodename, orig.nodename), 0);
  CHECK_OK(setns(mnt_fd, 0));
  CHECK_EQ(ns_ino_of("/proc/self/ns/mnt"), mnt);
  CHECK(!mounted(a));
  CHECK(exists(tmp));
  // Through a pidfd of the parent: the kinds asked for, and none is EINVAL.
  int pidfd = (int)syscall(SYS_pidfd_open, getppid(), 0);
  CHECK(pidfd >= 0);
  CHECK_ERRNO(setns(pidfd, 0), EINVAL);
  CHECK(ns_ino_of("/proc/self/ns/ipc") != ipc);
  CHECK_OK(setns(pidfd, CLONE_NEWIPC));
  CHECK_EQ(ns_ino_of("/proc/self/ns/ipc"), ipc);
  close(pidfd);
  close(ipc_fd);
}

TEST(setns) { conf_in_child(setns_child); }

// --- privilege and flag errors ----------------------------------------------------------

static void unprivileged_child(void) {
  char a[NS_BASE];
  path_in_tmp(a, "unpriv");
  CHECK_OK(setgid(1000));
  CHECK_OK(setuid(1000));
  CHECK_ERRNO(unshare(CLONE_NEWNS), EPERM);
  CHECK_ERRNO(unshare(CLONE_NEWUTS), EPERM);
  CHECK_ERRNO(unshare(CLONE_NEWIPC), EPERM);
  CHECK_ERRNO(mount("conf", a, "tmpfs", 0, NULL), EPERM);
  CHECK_ERRNO(umount2("/", 0), EPERM);
  CHECK_ERRNO(syscall(SYS_pivot_root, a, a), EPERM);
  CHECK_ERRNO(sethostname("x", 1), EPERM);
  int fd = open("/proc/self/ns/uts", O_RDONLY);
  CHECK(fd >= 0);
  CHECK_ERRNO(setns(fd, CLONE_NEWUTS), EPERM);
}

static void bad_flags_child(void) {
  char a[NS_BASE];
  new_mount_ns();
  fresh_dir("bad");
  path_in_tmp(a, "bad");
  CHECK_ERRNO(unshare(CLONE_PARENT), EINVAL);
  CHECK_ERRNO(unshare(CLONE_SETTLS), EINVAL);
  CHECK_ERRNO(mount("conf", a, NULL, 0, NULL), EINVAL);  // no type
  CHECK_ERRNO(mount("conf", a, "nosuchfs", 0, NULL), ENODEV);
  CHECK_ERRNO(mount("conf", a, "tmpfs", 0, "bogus"), EINVAL);
  CHECK_ERRNO(mount(NULL, a, NULL, MS_BIND, NULL), EINVAL);  // no source
  path_in_tmp(a, "nosuch");
  CHECK_ERRNO(mount("conf", a, "tmpfs", 0, NULL), ENOENT);
}

TEST(errors) {
  fresh_dir("unpriv");
  conf_in_child(unprivileged_child);
  conf_in_child(bad_flags_child);
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  tmp = conf_tmpdir("namespaces");
  CHECK_OK(chmod(tmp, 0755));  // the uid 1000 child walks through it
  RUN(mount_ns_isolation);
  RUN(clone_newns);
  RUN(remount);
  RUN(bind_and_propagation);
  RUN(move);
  RUN(umount);
  RUN(mangled_names);
  RUN(pivot_root);
  RUN(uts);
  RUN(ipc);
  RUN(nsfs);
  RUN(setns);
  RUN(errors);
  conf_tmpdir_remove();
  PASS("namespaces");
  return 0;
}
