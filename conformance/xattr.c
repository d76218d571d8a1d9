// Extended attributes: set/get/list/remove and their l* and f* forms, the
// user.*, trusted.* and security.* namespaces and who may use them,
// XATTR_CREATE/XATTR_REPLACE, ERANGE/E2BIG/ENODATA/EOPNOTSUPP, and the rules
// for an unprivileged process (uid 1000 in a child).
//
// Runs as root in its own scratch directory (conf_tmpdir). The host's /tmp
// and tmpfs (Linux 6.6 and later: user.* on tmpfs) answer the same for every
// case here; values stay small so that ext4's per-inode space is no limit.
#include "common.h"

#include <grp.h>
#include <sys/xattr.h>

#define USER_UID 1000

static long get_str(const char *path, const char *name, char *buf,
                    size_t cap) {
  long n = getxattr(path, name, buf, cap);
  if (n >= 0 && (size_t)n < cap) buf[n] = '\0';
  return n;
}

// The names listxattr returns, sorted and joined with ','.
static void list_sorted(const char *path, int follow, char *out, size_t cap) {
  char raw[4096];
  long n = follow ? listxattr(path, raw, sizeof(raw))
                  : llistxattr(path, raw, sizeof(raw));
  CHECK(n >= 0);
  const char *names[64];
  int count = 0;
  for (long off = 0; off < n; off += strlen(raw + off) + 1) {
    CHECK(count < 64);
    names[count++] = raw + off;
  }
  for (int i = 0; i < count; i++) {
    for (int j = i + 1; j < count; j++) {
      if (strcmp(names[j], names[i]) < 0) {
        const char *tmp = names[i];
        names[i] = names[j];
        names[j] = tmp;
      }
    }
  }
  out[0] = '\0';
  for (int i = 0; i < count; i++) {
    if (i) strncat(out, ",", cap - strlen(out) - 1);
    strncat(out, names[i], cap - strlen(out) - 1);
  }
}

TEST(set_get_list_remove) {
  conf_put_file("f", "data", 0644);
  char buf[256], list[1024];
  CHECK_ERRNO(getxattr("f", "user.a", buf, sizeof(buf)), ENODATA);
  CHECK_OK(setxattr("f", "user.a", "one", 3, 0));
  CHECK_EQ(get_str("f", "user.a", buf, sizeof(buf)), 3);
  CHECK_EQ(strcmp(buf, "one"), 0);
  // Size 0 asks for the length; a short buffer is ERANGE.
  CHECK_EQ(getxattr("f", "user.a", NULL, 0), 3);
  CHECK_ERRNO(getxattr("f", "user.a", buf, 2), ERANGE);
  // Replacing, and an empty value.
  CHECK_OK(setxattr("f", "user.a", "longer value", 12, 0));
  CHECK_EQ(get_str("f", "user.a", buf, sizeof(buf)), 12);
  CHECK_OK(setxattr("f", "user.empty", "", 0, 0));
  CHECK_EQ(getxattr("f", "user.empty", buf, sizeof(buf)), 0);
  // Binary values keep their bytes.
  const char bin[4] = {0, 1, 0, 2};
  CHECK_OK(setxattr("f", "user.bin", bin, 4, 0));
  CHECK_EQ(getxattr("f", "user.bin", buf, sizeof(buf)), 4);
  CHECK_EQ(memcmp(buf, bin, 4), 0);
  CHECK_OK(setxattr("f", "trusted.t", "T", 1, 0));
  CHECK_OK(setxattr("f", "security.s", "S", 1, 0));
  list_sorted("f", 1, list, sizeof(list));
  CHECK_EQ(strcmp(list, "security.s,trusted.t,user.a,user.bin,user.empty"), 0);
  long total = listxattr("f", NULL, 0);
  CHECK_EQ(total, (long)strlen(list) + 1);
  CHECK_ERRNO(listxattr("f", list, 5), ERANGE);
  CHECK_OK(removexattr("f", "user.a"));
  CHECK_ERRNO(removexattr("f", "user.a"), ENODATA);
  CHECK_ERRNO(getxattr("f", "user.a", buf, sizeof(buf)), ENODATA);
  CHECK_OK(removexattr("f", "trusted.t"));
  CHECK_OK(removexattr("f", "security.s"));
  CHECK_OK(removexattr("f", "user.bin"));
  CHECK_OK(removexattr("f", "user.empty"));
  CHECK_EQ(listxattr("f", list, sizeof(list)), 0);
  CHECK_OK(unlink("f"));
}

TEST(create_replace_flags) {
  conf_put_file("g", "", 0644);
  char buf[16];
  CHECK_ERRNO(setxattr("g", "user.x", "1", 1, XATTR_REPLACE), ENODATA);
  CHECK_OK(setxattr("g", "user.x", "1", 1, XATTR_CREATE));
  CHECK_ERRNO(setxattr("g", "user.x", "2", 1, XATTR_CREATE), EEXIST);
  CHECK_OK(setxattr("g", "user.x", "3", 1, XATTR_REPLACE));
  CHECK_EQ(getxattr("g", "user.x", buf, sizeof(buf)), 1);
  CHECK_EQ(buf[0], '3');
  CHECK_ERRNO(setxattr("g", "user.x", "4", 1, XATTR_CREATE | XATTR_REPLACE),
              EEXIST);
  CHECK_ERRNO(setxattr("g", "user.y", "4", 1, XATTR_CREATE | XATTR_REPLACE),
              ENODATA);
  CHECK_ERRNO(setxattr("g", "user.x", "4", 1, 4), EINVAL);
  CHECK_OK(unlink("g"));
}

TEST(name_and_size_errors) {
  conf_put_file("h", "", 0644);
  char buf[16];
  static char big[65537];
  char longname[300];
  memset(longname, 'n', sizeof(longname));
  memcpy(longname, "user.", 5);
  longname[256] = '\0';  // 256 bytes: one too many
  CHECK_ERRNO(setxattr("h", longname, "1", 1, 0), ERANGE);
  CHECK_ERRNO(getxattr("h", longname, buf, sizeof(buf)), ERANGE);
  longname[255] = '\0';
  CHECK_OK(setxattr("h", longname, "1", 1, 0));
  CHECK_OK(removexattr("h", longname));
  CHECK_ERRNO(setxattr("h", "", "1", 1, 0), ERANGE);
  CHECK_ERRNO(getxattr("h", "", buf, sizeof(buf)), ERANGE);
  CHECK_ERRNO(removexattr("h", ""), ERANGE);
  CHECK_ERRNO(setxattr("h", "user.big", big, sizeof(big), 0), E2BIG);
  CHECK_ERRNO(setxattr("h", "nonamespace", "1", 1, 0), EOPNOTSUPP);
  CHECK_ERRNO(setxattr("h", "other.x", "1", 1, 0), EOPNOTSUPP);
  CHECK_ERRNO(getxattr("h", "other.x", buf, sizeof(buf)), EOPNOTSUPP);
  CHECK_ERRNO(setxattr("h", "user.", "1", 1, 0), EINVAL);
  CHECK_ERRNO(setxattr("missing", "user.a", "1", 1, 0), ENOENT);
  CHECK_ERRNO(getxattr("h", (const char *)1, buf, sizeof(buf)), EFAULT);
  CHECK_OK(unlink("h"));
}

TEST(kinds_of_files) {
  char buf[16], list[256];
  CHECK_OK(mkdir("d", 0755));
  CHECK_OK(setxattr("d", "user.dir", "1", 1, 0));
  CHECK_EQ(getxattr("d", "user.dir", buf, sizeof(buf)), 1);
  CHECK_OK(symlink("d", "lnk"));
  // setxattr follows the link to the directory; lsetxattr stays on it, and a
  // symlink takes no user.* attributes but does take trusted.*.
  CHECK_EQ(getxattr("lnk", "user.dir", buf, sizeof(buf)), 1);
  CHECK_ERRNO(lgetxattr("lnk", "user.dir", buf, sizeof(buf)), ENODATA);
  CHECK_ERRNO(lsetxattr("lnk", "user.a", "1", 1, 0), EPERM);
  CHECK_OK(lsetxattr("lnk", "trusted.a", "1", 1, 0));
  list_sorted("lnk", 0, list, sizeof(list));
  CHECK_EQ(strcmp(list, "trusted.a"), 0);
  list_sorted("lnk", 1, list, sizeof(list));
  CHECK_EQ(strcmp(list, "user.dir"), 0);
  CHECK_OK(lremovexattr("lnk", "trusted.a"));
  CHECK_OK(mkfifo("fifo", 0644));
  CHECK_ERRNO(setxattr("fifo", "user.a", "1", 1, 0), EPERM);
  CHECK_ERRNO(getxattr("fifo", "user.a", buf, sizeof(buf)), ENODATA);
  CHECK_OK(setxattr("fifo", "trusted.a", "1", 1, 0));
  CHECK_OK(unlink("fifo"));
  CHECK_OK(unlink("lnk"));
  CHECK_OK(rmdir("d"));
}

TEST(fd_forms) {
  conf_put_file("ff", "", 0644);
  char buf[16];
  int fd = open("ff", O_RDONLY);
  CHECK(fd >= 0);
  // A read-only open file may still set attributes: the inode's mode rules.
  CHECK_OK(fsetxattr(fd, "user.fd", "v", 1, 0));
  CHECK_EQ(fgetxattr(fd, "user.fd", buf, sizeof(buf)), 1);
  CHECK_EQ(flistxattr(fd, buf, sizeof(buf)), 8);
  CHECK_EQ(strcmp(buf, "user.fd"), 0);
  CHECK_OK(fremovexattr(fd, "user.fd"));
  CHECK_ERRNO(fgetxattr(fd, "user.fd", buf, sizeof(buf)), ENODATA);
  CHECK_OK(close(fd));
  fd = open("ff", O_PATH);
  CHECK(fd >= 0);
  CHECK_ERRNO(fsetxattr(fd, "user.fd", "v", 1, 0), EBADF);
  CHECK_ERRNO(fgetxattr(fd, "user.fd", buf, sizeof(buf)), EBADF);
  CHECK_OK(close(fd));
  CHECK_ERRNO(fgetxattr(999, "user.fd", buf, sizeof(buf)), EBADF);
  CHECK_OK(unlink("ff"));
}

// What uid 1000 may do: user.* follows the file's mode, trusted.* is
// invisible, security.* is readable but not writable, and a sticky directory
// keeps its user.* attributes for its owner.
static void unprivileged_checks(void) {
  char buf[16], list[256];
  CHECK_OK(setxattr("mine", "user.m", "1", 1, 0));
  CHECK_EQ(getxattr("theirs", "user.t", buf, sizeof(buf)), 1);
  CHECK_ERRNO(setxattr("theirs", "user.t", "2", 1, 0), EACCES);
  CHECK_ERRNO(removexattr("theirs", "user.t"), EACCES);
  CHECK_ERRNO(getxattr("secret", "user.s", buf, sizeof(buf)), EACCES);
  CHECK_ERRNO(getxattr("theirs", "trusted.t", buf, sizeof(buf)), ENODATA);
  CHECK_ERRNO(setxattr("mine", "trusted.t", "1", 1, 0), EPERM);
  CHECK_ERRNO(removexattr("theirs", "trusted.t"), EPERM);
  list_sorted("theirs", 1, list, sizeof(list));
  CHECK_EQ(strcmp(list, "security.s,user.t"), 0);
  CHECK_EQ(getxattr("theirs", "security.s", buf, sizeof(buf)), 1);
  CHECK_ERRNO(setxattr("mine", "security.s", "1", 1, 0), EPERM);
  CHECK_ERRNO(setxattr("sticky", "user.d", "1", 1, 0), EPERM);
  CHECK_EQ(getxattr("sticky", "user.d", buf, sizeof(buf)), 1);
}

TEST(unprivileged) {
  conf_put_file("theirs", "", 0644);
  conf_put_file("secret", "", 0600);
  conf_put_file("mine", "", 0644);
  CHECK_OK(chown("mine", USER_UID, USER_UID));
  CHECK_OK(mkdir("sticky", 01777));
  CHECK_OK(setxattr("theirs", "user.t", "1", 1, 0));
  CHECK_OK(setxattr("theirs", "trusted.t", "1", 1, 0));
  CHECK_OK(setxattr("theirs", "security.s", "1", 1, 0));
  CHECK_OK(setxattr("secret", "user.s", "1", 1, 0));
  CHECK_OK(setxattr("sticky", "user.d", "1", 1, 0));
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    CHECK_OK(setgroups(0, NULL));
    CHECK_OK(setgid(USER_UID));
    CHECK_OK(setuid(USER_UID));
    unprivileged_checks();
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
  CHECK_OK(unlink("theirs"));
  CHECK_OK(unlink("secret"));
  CHECK_OK(unlink("mine"));
  CHECK_OK(rmdir("sticky"));
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  umask(022);
  conf_tmpdir("xattr");
  // The scratch directory must be reachable by uid 1000.
  CHECK_OK(chmod(".", 0755));
  RUN(set_get_list_remove);
  RUN(create_replace_flags);
  RUN(name_and_size_errors);
  RUN(kinds_of_files);
  RUN(fd_forms);
  RUN(unprivileged);
  conf_tmpdir_remove();
  PASS("xattr");
  return 0;
}
