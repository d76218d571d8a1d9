// contain: the reference for the escape probes, "Linux in a container" built from the host
// kernel alone, the way a container runtime builds one.
//
//   contain ROOT PROGRAM [ARGS...]
//
// Makes new user, mount, PID, network, IPC and UTS namespaces (the caller's uid and gid mapped
// to themselves: root stays root inside, nobody stays nobody), then, as PID 1 of the new PID
// namespace: binds ROOT on itself, mounts a fresh proc at ROOT/proc, a tmpfs at ROOT/tmp and at
// ROOT/dev holding only a bind of the host's /dev/null, pivot_roots into ROOT, detaches the old
// root, closes every fd above 2 (as runc does) and execs PROGRAM (a path inside ROOT) with an
// empty environment. Exits with PROGRAM's status (128+N if it died of signal N).
//
// ROOT must hold the directories proc, tmp, dev and .old. Nothing on the host changes: every
// mount lives in the new mount namespace and goes with it.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void Die(const char* what) {
  fprintf(stderr, "contain: %s: %s\n", what, strerror(errno));
  exit(125);
}

static void WriteFile(const char* path, const char* text) {
  int fd = open(path, O_WRONLY);
  if (fd < 0) Die(path);
  if (write(fd, text, strlen(text)) != (ssize_t)strlen(text)) Die(path);
  close(fd);
}

static void MapIds(uid_t uid, gid_t gid) {
  char map[64];
  WriteFile("/proc/self/setgroups", "deny");
  snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
  WriteFile("/proc/self/uid_map", map);
  snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
  WriteFile("/proc/self/gid_map", map);
}

static void Mount(const char* src, const char* dst, const char* type, unsigned long flags) {
  if (mount(src, dst, type, flags, NULL) != 0) Die(dst);
}

// Runs as PID 1 of the new namespaces; never returns.
static void EnterRoot(const char* root, char** argv) {
  char path[4096];
  Mount(NULL, "/", NULL, MS_REC | MS_PRIVATE);
  Mount(root, root, NULL, MS_BIND | MS_REC);
  snprintf(path, sizeof(path), "%s/proc", root);
  Mount("proc", path, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC);
  snprintf(path, sizeof(path), "%s/tmp", root);
  Mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV);
  snprintf(path, sizeof(path), "%s/dev", root);
  Mount("tmpfs", path, "tmpfs", MS_NOSUID);
  snprintf(path, sizeof(path), "%s/dev/null", root);
  int fd = open(path, O_CREAT | O_WRONLY, 0666);
  if (fd < 0) Die(path);
  close(fd);
  Mount("/dev/null", path, NULL, MS_BIND);
  if (chdir(root) != 0) Die("chdir ROOT");
  if (syscall(SYS_pivot_root, ".", ".old") != 0) Die("pivot_root");
  if (chdir("/") != 0) Die("chdir /");
  if (umount2("/.old", MNT_DETACH) != 0) Die("umount /.old");
  if (syscall(SYS_close_range, 3, ~0U, 0) != 0) Die("close_range");
  char* no_env[] = {NULL};
  execve(argv[0], argv, no_env);
  Die(argv[0]);
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s ROOT PROGRAM [ARGS...]\n", argv[0]);
    return 2;
  }
  uid_t uid = getuid();
  gid_t gid = getgid();
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
              CLONE_NEWUTS) != 0) {
    Die("unshare");
  }
  MapIds(uid, gid);
  fflush(NULL);
  pid_t child = fork();
  if (child < 0) Die("fork");
  if (child == 0) EnterRoot(argv[1], argv + 2);
  int status;
  if (waitpid(child, &status, 0) != child) Die("waitpid");
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}
