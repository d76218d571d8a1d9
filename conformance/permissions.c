// Permission checks. Most cases fork a child that drops to an ordinary user
// (setgroups(0, NULL), setgid(1000), setuid(1000)) and checks what it may
// and may not do with files root prepared: owner/group/other classes,
// directory search and write bits, sticky directories, access() with real
// and effective ids, chmod/chown/utimensat rules, set-id bits cleared by
// chmod and write, exec permission. Also what root may bypass.
//
// Must run as root. Works in its own scratch directory under /tmp
// (conf_tmpdir), made searchable for the user.

#include "common.h"

#include <grp.h>
#include <sys/stat.h>

#define USER_UID 1000
#define USER_GID 1000
#define OTHER_UID 1001

// Runs fn in a child as USER_UID/USER_GID without supplementary groups.
static void as_user(void (*fn)(void)) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    CHECK_OK(setgroups(0, NULL));
    CHECK_OK(setgid(USER_GID));
    CHECK_OK(setuid(USER_UID));
    CHECK_EQ(geteuid(), USER_UID);
    CHECK_EQ(getegid(), USER_GID);
    CHECK_EQ(getgroups(0, NULL), 0);
    fn();
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
}

// Creates path with contents and exact mode, owned by uid:gid.
static void make_file(const char *path, mode_t mode, uid_t uid, gid_t gid) {
  conf_put_file(path, "data", 0600);
  CHECK_OK(chown(path, uid, gid));
  CHECK_OK(chmod(path, mode));
}

static void make_dir(const char *path, mode_t mode, uid_t uid, gid_t gid) {
  CHECK_OK(mkdir(path, 0700));
  CHECK_OK(chown(path, uid, gid));
  CHECK_OK(chmod(path, mode));
}

static mode_t mode_of(const char *path) {
  struct stat st;
  CHECK_OK(lstat(path, &st));
  return st.st_mode & 07777;
}

static void can_open(const char *path, int flags) {
  int fd = open(path, flags);
  if (fd < 0) {
    fprintf(stderr, "open(%s, %#x) failed\n", path, flags);
    CHECK(fd >= 0);
  }
  CHECK_OK(close(fd));
}

// --- cases ---

static void user_file_classes(void) {
  // Root's private file.
  CHECK_ERRNO(open("secret", O_RDONLY), EACCES);
  CHECK_ERRNO(open("secret", O_WRONLY), EACCES);
  CHECK_ERRNO(open("secret", O_RDWR | O_TRUNC), EACCES);
  struct stat st;
  CHECK_OK(stat("secret", &st));  // Needs only search on the directory.
  // Others may read, not write.
  can_open("public", O_RDONLY);
  CHECK_ERRNO(open("public", O_WRONLY), EACCES);
  CHECK_ERRNO(truncate("public", 0), EACCES);
  can_open("world_rw", O_RDWR);
  // Only one class applies: the owner class even if others have more...
  CHECK_ERRNO(open("mine_0077", O_RDONLY), EACCES);
  // ... and the group class (our gid) even if others have more.
  CHECK_ERRNO(open("group_0604", O_RDONLY), EACCES);
  can_open("group_0640", O_RDONLY);
  CHECK_ERRNO(open("group_0640", O_WRONLY), EACCES);
}

TEST(file_permission_classes) {
  make_file("secret", 0600, 0, 0);
  make_file("public", 0644, 0, 0);
  make_file("world_rw", 0606, 0, 0);
  make_file("mine_0077", 0077, USER_UID, USER_GID);
  make_file("group_0604", 0604, 0, USER_GID);
  make_file("group_0640", 0640, 0, USER_GID);
  as_user(user_file_classes);
  const char *names[] = {"public", "world_rw", "mine_0077", "group_0604",
                         "group_0640"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    CHECK_OK(unlink(names[i]));
  }
  // "secret" stays for later cases.
}

static void user_own_readonly_file(void) {
  CHECK_ERRNO(open("home/ro", O_WRONLY), EACCES);
  CHECK_ERRNO(open("home/ro", O_RDWR), EACCES);
  CHECK_ERRNO(truncate("home/ro", 0), EACCES);
  can_open("home/ro", O_RDONLY);
  // The owner may change the mode and then write.
  CHECK_OK(chmod("home/ro", 0644));
  int fd = open("home/ro", O_WRONLY | O_APPEND);
  CHECK(fd >= 0);
  CHECK_EQ(write(fd, "!", 1), 1);
  CHECK_OK(close(fd));
  // A new file we create with mode 0444 is writable through the fd that
  // created it, but not reopenable for writing.
  fd = open("home/created", O_WRONLY | O_CREAT | O_EXCL, 0444);
  CHECK(fd >= 0);
  CHECK_EQ(write(fd, "x", 1), 1);
  CHECK_OK(close(fd));
  CHECK_ERRNO(open("home/created", O_WRONLY), EACCES);
  // Deleting depends on the directory, not on the file.
  CHECK_OK(unlink("home/created"));
}

TEST(write_to_own_readonly_file) {
  make_dir("home", 0755, USER_UID, USER_GID);
  make_file("home/ro", 0444, USER_UID, USER_GID);
  as_user(user_own_readonly_file);
  char buf[16];
  CHECK_EQ(conf_get_file("home/ro", buf, sizeof(buf)), 5);
  CHECK_EQ(strcmp(buf, "data!"), 0);
  CHECK_OK(unlink("home/ro"));
}

static void user_directory_bits(void) {
  struct stat st;
  // No search (x) permission: nothing inside can be looked up...
  CHECK_ERRNO(stat("home/nox/f", &st), EACCES);
  CHECK_ERRNO(open("home/nox/f", O_RDONLY), EACCES);
  CHECK_ERRNO(open("home/nox/new", O_WRONLY | O_CREAT, 0644), EACCES);
  CHECK_ERRNO(chdir("home/nox"), EACCES);
  CHECK_ERRNO(stat("home/nox/.", &st), EACCES);
  // ... but the directory itself can be stat'ed and, having r, listed.
  CHECK_OK(stat("home/nox", &st));
  int fd = open("home/nox", O_RDONLY | O_DIRECTORY);
  CHECK(fd >= 0);
  char buf[4096];
  long n = syscall(SYS_getdents64, fd, buf, sizeof(buf));
  CHECK(n > 0);
  CHECK_ERRNO(fstatat(fd, "f", &st, 0), EACCES);
  CHECK_OK(close(fd));

  // No read permission: listing fails, lookups by name work.
  CHECK_ERRNO(open("home/nor", O_RDONLY | O_DIRECTORY), EACCES);
  CHECK_OK(stat("home/nor/f", &st));
  can_open("home/nor/f", O_RDONLY);

  // No write permission: no creating, removing or renaming entries, but
  // existing files can still be written.
  CHECK_ERRNO(open("home/now/new", O_WRONLY | O_CREAT, 0644), EACCES);
  CHECK_ERRNO(mkdir("home/now/sub", 0755), EACCES);
  CHECK_ERRNO(unlink("home/now/f"), EACCES);
  CHECK_ERRNO(rename("home/now/f", "home/now/g"), EACCES);
  CHECK_ERRNO(rename("home/now/f", "home/moved"), EACCES);
  CHECK_ERRNO(symlink("x", "home/now/l"), EACCES);
  CHECK_ERRNO(link("home/now/f", "home/now/l"), EACCES);
  fd = open("home/now/f", O_WRONLY | O_TRUNC);
  CHECK(fd >= 0);
  CHECK_OK(close(fd));
  // O_CREAT of an existing file needs no write permission on the directory.
  fd = open("home/now/f", O_WRONLY | O_CREAT, 0644);
  CHECK(fd >= 0);
  CHECK_OK(close(fd));
}

TEST(directory_permission_bits) {
  make_dir("home/nox", 0600, USER_UID, USER_GID);
  make_file("home/nox/f", 0644, USER_UID, USER_GID);
  make_dir("home/nor", 0300, USER_UID, USER_GID);
  make_file("home/nor/f", 0644, USER_UID, USER_GID);
  make_dir("home/now", 0555, USER_UID, USER_GID);
  make_file("home/now/f", 0644, USER_UID, USER_GID);
  as_user(user_directory_bits);
  // Root is not bound by the directory bits.
  struct stat st;
  CHECK_OK(stat("home/nox/f", &st));
  CHECK_OK(unlink("home/nox/f"));
  CHECK_OK(unlink("home/nor/f"));
  CHECK_OK(unlink("home/now/f"));
  CHECK_OK(rmdir("home/nox"));
  CHECK_OK(rmdir("home/nor"));
  CHECK_OK(rmdir("home/now"));
}

static void user_sticky_dir(void) {
  // Others' files in a sticky directory: no unlink, no rename, no
  // replacing by rename.
  CHECK_ERRNO(unlink("sticky/rootfile"), EPERM);
  CHECK_ERRNO(unlink("sticky/otherfile"), EPERM);
  CHECK_ERRNO(rename("sticky/otherfile", "sticky/mine"), EPERM);
  CHECK_OK(mkdir("sticky/mydir", 0755));
  conf_put_file("sticky/mine", "m", 0644);
  CHECK_ERRNO(rename("sticky/mine", "sticky/rootfile"), EPERM);
  CHECK_ERRNO(rmdir("sticky/otherdir"), EPERM);
  // Writing their contents is a matter of the file's own bits.
  int fd = open("sticky/rootfile", O_WRONLY);
  CHECK(fd >= 0);
  CHECK_OK(close(fd));
  // Own entries are ours to remove.
  CHECK_OK(rename("sticky/mine", "sticky/mine2"));
  CHECK_OK(unlink("sticky/mine2"));
  CHECK_OK(rmdir("sticky/mydir"));
  // Without the sticky bit, write permission on the directory is enough.
  CHECK_OK(unlink("open/rootfile"));
  CHECK_OK(rename("open/otherfile", "open/taken"));
  CHECK_OK(unlink("open/taken"));
}

TEST(sticky_directory) {
  make_dir("sticky", 01777, 0, 0);
  make_file("sticky/rootfile", 0666, 0, 0);
  make_file("sticky/otherfile", 0666, OTHER_UID, OTHER_UID);
  make_dir("sticky/otherdir", 0777, OTHER_UID, OTHER_UID);
  make_dir("open", 0777, 0, 0);
  make_file("open/rootfile", 0644, 0, 0);
  make_file("open/otherfile", 0644, OTHER_UID, OTHER_UID);
  as_user(user_sticky_dir);
  struct stat st;
  CHECK_OK(stat("sticky/rootfile", &st));
  CHECK_OK(stat("sticky/otherfile", &st));
  CHECK_ERRNO(stat("open/rootfile", &st), ENOENT);
  // The directory's owner may remove anything in it (root here anyway).
  CHECK_OK(unlink("sticky/rootfile"));
  CHECK_OK(unlink("sticky/otherfile"));
  CHECK_OK(rmdir("sticky/otherdir"));
  CHECK_OK(rmdir("sticky"));
  CHECK_OK(rmdir("open"));
}

static void user_access_checks(void) {
  CHECK_OK(access("secret", F_OK));
  CHECK_ERRNO(access("secret", R_OK), EACCES);
  CHECK_ERRNO(access("secret", W_OK), EACCES);
  CHECK_OK(access("acc_644", R_OK));
  CHECK_ERRNO(access("acc_644", W_OK), EACCES);
  CHECK_ERRNO(access("acc_644", X_OK), EACCES);
  CHECK_ERRNO(access("acc_644", R_OK | W_OK), EACCES);
  CHECK_OK(access("acc_755", R_OK | X_OK));
  CHECK_OK(faccessat(AT_FDCWD, "acc_755", X_OK, AT_EACCESS));
  CHECK_ERRNO(faccessat(AT_FDCWD, "secret", R_OK, AT_EACCESS), EACCES);
  CHECK_ERRNO(access("missing", F_OK), ENOENT);
  CHECK_ERRNO(access("home/nox_dir/x", F_OK), EACCES);  // Search denied.
  CHECK_ERRNO(access("acc_644", 0x100), EINVAL);
}

// Real uid USER_UID, effective uid 0: access() uses the real ids (and no
// capabilities), AT_EACCESS the effective ones.
static void real_user_effective_root(void) {
  CHECK_OK(setresuid(USER_UID, 0, 0));
  CHECK_ERRNO(access("secret", R_OK), EACCES);
  CHECK_OK(faccessat(AT_FDCWD, "secret", R_OK, AT_EACCESS));
  can_open("secret", O_RDONLY);  // open() uses the effective ids.
  _exit(0);
}

// Real uid 0, effective uid USER_UID: the other way round.
static void real_root_effective_user(void) {
  CHECK_OK(setresuid(0, USER_UID, 0));
  CHECK_OK(access("secret", R_OK));
  CHECK_ERRNO(faccessat(AT_FDCWD, "secret", R_OK, AT_EACCESS), EACCES);
  CHECK_ERRNO(open("secret", O_RDONLY), EACCES);
  _exit(0);
}

static void run_child(void (*fn)(void)) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) fn();
  CHECK_EXIT(pid, 0);
}

TEST(access_and_faccessat) {
  make_file("acc_644", 0644, 0, 0);
  make_file("acc_755", 0755, 0, 0);
  make_dir("home/nox_dir", 0700, 0, 0);
  as_user(user_access_checks);
  run_child(real_user_effective_root);
  run_child(real_root_effective_user);
  CHECK_OK(unlink("acc_644"));
  CHECK_OK(unlink("acc_755"));
  CHECK_OK(rmdir("home/nox_dir"));
}

static void user_chmod_chown(void) {
  CHECK_ERRNO(chmod("secret", 0777), EPERM);
  CHECK_ERRNO(chown("secret", USER_UID, USER_GID), EPERM);
  CHECK_ERRNO(chown("secret", 0, 0), EPERM);  // Even "unchanged" ids.
  CHECK_OK(chown("secret", -1, -1));  // But changing nothing is allowed.
  int fd = open("shared_rw", O_RDWR);
  CHECK(fd >= 0);
  CHECK_ERRNO(fchmod(fd, 0600), EPERM);
  CHECK_ERRNO(fchown(fd, USER_UID, -1), EPERM);
  // Setting times: "now" needs write access; explicit times need
  // ownership.
  CHECK_OK(futimens(fd, NULL));
  struct timespec ts[2] = {{1000, 0}, {2000, 0}};
  CHECK_ERRNO(futimens(fd, ts), EPERM);
  CHECK_ERRNO(utimensat(AT_FDCWD, "secret", NULL, 0), EACCES);
  CHECK_OK(close(fd));

  // Own file: the owner may chmod; may change the group only to one of
  // its own groups; may never give the file away.
  CHECK_OK(chmod("home/own", 0640));
  CHECK_ERRNO(chown("home/own", OTHER_UID, -1), EPERM);
  CHECK_ERRNO(chown("home/own", -1, 0), EPERM);
  CHECK_OK(chown("home/own", USER_UID, USER_GID));  // No change: fine.
  CHECK_OK(chown("home/own", -1, -1));
  CHECK_OK(utimensat(AT_FDCWD, "home/own", ts, 0));
  struct stat st;
  CHECK_OK(stat("home/own", &st));
  CHECK_EQ(st.st_mtim.tv_sec, 2000);

  // chmod by someone outside the file's group silently drops S_ISGID.
  CHECK_OK(chmod("home/own_rootgroup", 02755));
  CHECK_OK(stat("home/own_rootgroup", &st));
  CHECK_EQ(st.st_mode & 07777, 0755);
  CHECK_OK(chmod("home/own", 02755));  // In our group: kept.
  CHECK_OK(stat("home/own", &st));
  CHECK_EQ(st.st_mode & 07777, 02755);

  // A write by an unprivileged user clears set-user-ID, and set-group-ID
  // when group execute is set.
  fd = open("home/suid", O_WRONLY);
  CHECK(fd >= 0);
  CHECK_EQ(write(fd, "w", 1), 1);
  CHECK_OK(close(fd));
  CHECK_OK(stat("home/suid", &st));
  CHECK_EQ(st.st_mode & 07777, 0775);

  // The umask applies to us as to anyone.
  umask(077);
  fd = open("home/masked", O_WRONLY | O_CREAT | O_EXCL, 0666);
  CHECK(fd >= 0);
  CHECK_OK(fstat(fd, &st));
  CHECK_EQ(st.st_mode & 07777, 0600);
  CHECK_EQ(st.st_uid, USER_UID);
  CHECK_EQ(st.st_gid, USER_GID);
  CHECK_OK(close(fd));
}

TEST(chmod_chown_utimes_rules) {
  make_file("shared_rw", 0666, 0, 0);
  make_file("home/own", 0644, USER_UID, USER_GID);
  make_file("home/own_rootgroup", 0644, USER_UID, 0);
  make_file("home/suid", 06775, USER_UID, USER_GID);
  CHECK_EQ(mode_of("home/suid"), 06775);
  as_user(user_chmod_chown);
  // Root may do all of it.
  CHECK_OK(chown("home/own", OTHER_UID, 0));
  CHECK_OK(chmod("secret", 0600));
  struct stat st;
  CHECK_OK(stat("home/own", &st));
  CHECK_EQ(st.st_uid, OTHER_UID);
  CHECK_EQ(st.st_gid, 0);
  // chown by root clears the set-id bits of an executable too.
  CHECK_OK(chmod("home/own", 06755));
  CHECK_OK(chown("home/own", USER_UID, USER_GID));
  CHECK_EQ(mode_of("home/own"), 0755);
  const char *names[] = {"shared_rw", "home/own", "home/own_rootgroup",
                         "home/suid", "home/masked"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    CHECK_OK(unlink(names[i]));
  }
}

// Copies our own binary to path with the given mode (an executable that
// exits 0 in "exit0" mode).
static void copy_self(const char *path, mode_t mode) {
  int in = open(conf_self, O_RDONLY);
  CHECK(in >= 0);
  int out = open(path, O_WRONLY | O_CREAT | O_EXCL, 0700);
  CHECK(out >= 0);
  static char buf[65536];
  for (;;) {
    ssize_t n = read(in, buf, sizeof(buf));
    CHECK(n >= 0);
    if (n == 0) break;
    conf_write_full(out, buf, (size_t)n);
  }
  CHECK_OK(close(in));
  CHECK_OK(close(out));
  CHECK_OK(chmod(path, mode));
}

// Runs path (mode "exit0") in a child; returns the exec errno, or 0 if it
// ran and exited 0.
static int try_exec(const char *path) {
  int p[2];
  CHECK_OK(pipe2(p, O_CLOEXEC));
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    execl(path, path, "exit0", (char *)NULL);
    int e = errno;
    if (write(p[1], &e, sizeof(e)) != sizeof(e)) _exit(3);
    _exit(2);
  }
  CHECK_OK(close(p[1]));
  int e = 0;
  ssize_t n = read(p[0], &e, sizeof(e));
  CHECK_OK(close(p[0]));
  int status = conf_wait(pid);
  if (n == 0) {
    CHECK(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), 0);
    return 0;
  }
  CHECK_EQ(n, (ssize_t)sizeof(e));
  return e;
}

static void user_exec(void) {
  CHECK_EQ(try_exec("home/prog_0755"), 0);
  CHECK_EQ(try_exec("home/prog_0644"), EACCES);
  CHECK_EQ(try_exec("home/prog_0700"), EACCES);  // Root's, owner-only x.
  CHECK_EQ(try_exec("home/prog_0711"), 0);       // x without r is enough.
}

TEST(exec_permission) {
  copy_self("home/prog_0755", 0755);
  copy_self("home/prog_0644", 0644);
  copy_self("home/prog_0700", 0700);
  copy_self("home/prog_0711", 0711);
  copy_self("home/prog_0001", 0001);
  as_user(user_exec);
  // Root: no x bit at all is refused; any one x bit is enough.
  CHECK_EQ(try_exec("home/prog_0644"), EACCES);
  CHECK_EQ(try_exec("home/prog_0001"), 0);
  CHECK_ERRNO(access("home/prog_0644", X_OK), EACCES);
  CHECK_OK(access("home/prog_0001", X_OK));
  // A directory is never executable.
  CHECK_EQ(try_exec("home"), EACCES);
  const char *names[] = {"home/prog_0755", "home/prog_0644", "home/prog_0700",
                         "home/prog_0711", "home/prog_0001"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    CHECK_OK(unlink(names[i]));
  }
}

TEST(root_bypasses_rw_bits) {
  make_file("none", 0000, USER_UID, USER_GID);
  can_open("none", O_RDWR);
  CHECK_OK(access("none", R_OK | W_OK));
  CHECK_ERRNO(access("none", X_OK), EACCES);
  make_dir("closed", 0000, USER_UID, USER_GID);
  conf_put_file("closed/inside", "x", 0644);  // Search and write bypassed.
  int fd = open("closed", O_RDONLY | O_DIRECTORY);  // Read bypassed.
  CHECK(fd >= 0);
  CHECK_OK(close(fd));
  CHECK_OK(access("closed", R_OK | W_OK | X_OK));  // Directories: x too.
  CHECK_OK(unlink("closed/inside"));
  CHECK_OK(rmdir("closed"));
  CHECK_OK(unlink("none"));
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  if (argc > 1 && strcmp(argv[1], "exit0") == 0) return 0;
  CHECK_EQ(geteuid(), 0);  // This program must run as root.
  umask(022);
  conf_tmpdir("permissions");
  CHECK_OK(chmod(".", 0755));  // Searchable for the user.
  RUN(file_permission_classes);
  RUN(write_to_own_readonly_file);
  RUN(directory_permission_bits);
  RUN(sticky_directory);
  RUN(access_and_faccessat);
  RUN(chmod_chown_utimes_rules);
  RUN(exec_permission);
  RUN(root_bypasses_rw_bits);
  CHECK_OK(unlink("secret"));
  CHECK_OK(rmdir("home"));
  conf_tmpdir_remove();
  PASS("permissions");
  return 0;
}
