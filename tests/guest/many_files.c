// Holds as many distinct files of DIR open as RLIMIT_NOFILE allows, then uses them all.
//
//   many_files DIR N      DIR holds f0 .. f(N-1), each "file <i>\n"
//
// Opens f0, f1, ... and keeps them open until open fails; prints how many it opened, the
// highest fd and the errno (EMFILE where the limit says). Then reads every one of them back,
// swaps some for others, creates, writes, unlinks (while open) and reads back a new file,
// lists DIR, and does the same in a forked child (whose table starts full), so that two
// processes hold ~2x RLIMIT_NOFILE files at once. Every line must be what the host kernel
// gives: many_files.sh compares the output with a native run under the same ulimit.
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const char* dir;
static int total;
static int fds[1 << 16];

static int OpenNth(int i) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/f%d", dir, i);
  return open(path, O_RDONLY | O_CLOEXEC);
}

// Opens files from f<first> on until open fails or the files run out; returns how many.
static int OpenAll(const char* who, int first) {
  int n = 0, err = 0, high = -1;
  for (int i = first; i < total; i++) {
    int fd = OpenNth(i);
    if (fd < 0) {
      err = errno;
      break;
    }
    fds[n++] = fd;
    if (fd > high) high = fd;
  }
  printf("%s: opened %d files, highest fd %d, then %s\n", who, n, high,
         err ? strerrorname_np(err) : "none");
  return n;
}

// Reads every open file back (fds[i] is f<first + i>); returns how many were wrong.
static int CheckAll(const char* who, int first, int n) {
  int bad = 0, first_err = 0;
  for (int i = 0; i < n; i++) {
    char want[64], got[64] = {0};
    snprintf(want, sizeof(want), "file %d\n", first + i);
    ssize_t r = pread(fds[i], got, sizeof(got) - 1, 0);
    if (r < 0 && !first_err) first_err = errno;
    if (r < 0 || strcmp(got, want) != 0) bad++;
  }
  printf("%s: read back %d files, %d wrong%s%s\n", who, n, bad, first_err ? ", first error " : "",
         first_err ? strerrorname_np(first_err) : "");
  return bad;
}

static int Exercise(const char* who, int first, int n) {
  int bad = CheckAll(who, first, n);
  // Swap the last 10 for 10 others.
  for (int i = n - 10; i < n; i++) close(fds[i]);
  int swapped = 0;
  for (int i = n - 10; i < n; i++) {
    fds[i] = OpenNth(first + n + i);
    if (fds[i] >= 0) swapped++;
  }
  printf("%s: reopened %d of 10 others\n", who, swapped);
  for (int i = n - 10; i < n; i++) close(fds[i]);
  // A new file, written, unlinked while open, read back.
  char path[4096];
  snprintf(path, sizeof(path), "%s/new-%s", dir, who);
  int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  int open_errno = errno;
  int w = fd >= 0 ? (int)write(fd, "written\n", 8) : -1;
  int u = unlink(path);
  // Open and read every other file in between, so that the new file's fd is not the
  // most recently used one.
  int rereads = CheckAll(who, first, n - 10);
  char buf[16] = {0};
  int open_err = open_errno;
  int r = fd >= 0 ? (int)pread(fd, buf, sizeof(buf) - 1, 0) : -1;
  printf("%s: new file: open %s, write %d, unlink %d, read back %d \"%.7s\" %s\n", who,
         fd >= 0 ? "ok" : strerrorname_np(open_err), w, u, r, buf,
         r < 0 ? strerrorname_np(errno) : "");
  if (fd >= 0) close(fd);
  struct stat st = {0};
  snprintf(path, sizeof(path), "%s/f0", dir);
  int stat_err = stat(path, &st) == 0 ? 0 : errno;
  printf("%s: stat f0: %s, size %lld\n", who, stat_err ? strerrorname_np(stat_err) : "ok",
         (long long)st.st_size);
  DIR* d = opendir(dir);
  int entries = 0;
  while (d && readdir(d)) entries++;
  printf("%s: listed %d entries\n", who, entries);
  if (d) closedir(d);
  return bad + rereads;
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  dir = argv[1];
  total = atoi(argv[2]);
  setvbuf(stdout, NULL, _IONBF, 0);
  syscall(SYS_close_range, 3, ~0u, 0);  // the same start natively and in the sandbox
  int n = OpenAll("parent", 0);
  int bad = Exercise("parent", 0, n);
  // The parent still holds n - 10 files; the child closes its copies and opens as many
  // others, so two processes hold ~2 x RLIMIT_NOFILE files.
  pid_t p = fork();
  if (p == 0) {
    for (int i = 0; i < n - 10; i++) close(fds[i]);
    int m = OpenAll("child", n);
    _exit(Exercise("child", n, m) ? 1 : 0);
  }
  int st = -1;
  waitpid(p, &st, 0);
  printf("child exited %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
  bad += CheckAll("parent again", 0, n - 10);
  return bad || st != 0 ? 1 : 0;
}
