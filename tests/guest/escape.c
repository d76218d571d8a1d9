// escape: asserts, from inside the sandbox, that the guest cannot reach host files or host
// processes. Run by tests/guest/escape.sh, which sets up the host side and checks it afterwards.
//
//   escape SECRET_FILE HOST_PID [PATH_THAT_MUST_NOT_RESOLVE...]
//
// SECRET_FILE exists on the host outside every exposed directory; HOST_PID is a host process
// (a `sleep`, leader of its own process group) that must stay out of reach. The extra paths are
// symlinks the wrapper put in this program's (exposed) directory that point at the secret on the
// host: the sandbox must resolve them in its own view, where their targets do not exist.
//
// Checks:
//   (a) the secret, its directory, `../` walks to it from exposed directories (by path, by openat
//       on a directory fd, and relative to the cwd) and the symlinks fail with ENOENT;
//   (c) kill/tkill/tgkill/pidfd_open on HOST_PID and kill on its process group fail (ESRCH);
//   (b) a child's kill(1, SIGKILL) does not end the sandbox (Linux drops signals with a default
//       action that a process of a namespace sends to its init: us, or under sentry-run the
//       Sentry's init whose death would end us), and a child's
//       kill(-1, SIGTERM) kills a guest sibling but not us. The wrapper checks that host init and
//       HOST_PID survived.
//
// Natively this program WOULD escape (and kill(-1, SIGTERM) as root would hit every process on
// the host), so it refuses to run unless it is PID 1, i.e. the init of its own PID namespace, or
// the child of the Sentry's init (its /proc/1/comm is "sentry-init");
// there kill(-1) cannot leave the namespace. That makes it safe to try by hand with
// `unshare --pid --fork --mount ...` too.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "own_sandbox.h"

static int failures;

// err > 0: the call failed with it; 0: the call succeeded; < 0: nothing to add.
static void Fail(const char* what, int err) {
  if (err > 0) {
    printf("FAIL: %s (got %s)\n", what, strerror(err));
  } else if (err == 0) {
    printf("FAIL: %s (it succeeded)\n", what);
  } else {
    printf("FAIL: %s\n", what);
  }
  failures++;
}

static void Pass(const char* what) { printf("ok: %s\n", what); }

// Reports a file that opened: that is the escape, so show what leaked.
static void ShowLeak(int fd) {
  char buf[64];
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  if (n > 0) {
    buf[n] = 0;
    printf("  leaked content: %s\n", buf);
  }
  close(fd);
}

// The result `ret` (an fd if `is_fd`), or -1 with `err`, must be ENOENT.
static void ExpectEnoentRet(int ret, int err, const char* how, const char* path, int is_fd) {
  char what[8400];
  snprintf(what, sizeof(what), "%s %s: ENOENT", how, path);
  if (ret >= 0) {
    Fail(what, 0);
    if (is_fd) ShowLeak(ret);
  } else if (err != ENOENT) {
    Fail(what, err);
  } else {
    Pass(what);
  }
}

static void ExpectEnoent(int fd, int err, const char* how, const char* path) {
  ExpectEnoentRet(fd, err, how, path, 1);
}

static void CheckOpen(const char* path) {
  int fd = open(path, O_RDONLY);
  ExpectEnoent(fd, errno, "open", path);
  fd = openat(AT_FDCWD, path, O_RDONLY);
  ExpectEnoent(fd, errno, "openat(AT_FDCWD)", path);
}

static void CheckStat(const char* path) {
  struct stat st;
  int r = stat(path, &st);
  ExpectEnoentRet(r, errno, "stat", path, 0);
  r = access(path, F_OK);
  ExpectEnoentRet(r, errno, "access", path, 0);
}

// "../" repeated more often than any exposed directory is deep, then `rel`.
static void UpAndOver(char* out, size_t size, const char* prefix, const char* rel) {
  size_t n = (size_t)snprintf(out, size, "%s", prefix);
  for (int i = 0; i < 24 && n + 3 < size; i++) n += (size_t)snprintf(out + n, size - n, "../");
  snprintf(out + n, size - n, "%s", rel);
}

// (a): the secret must not be reachable by any path.
static void CheckFiles(const char* secret, const char* own_dir, char** links, int nlinks) {
  char secret_dir[4096];
  snprintf(secret_dir, sizeof(secret_dir), "%s", secret);
  dirname(secret_dir);
  const char* rel = secret + 1;  // the secret without its leading '/'

  CheckOpen(secret);
  CheckStat(secret);
  int fd = open(secret_dir, O_RDONLY | O_DIRECTORY);
  ExpectEnoent(fd, errno, "open directory", secret_dir);

  const char* starts[] = {"/", "/etc", "/usr", "/usr/lib", "/dev", own_dir};
  for (size_t i = 0; i < sizeof(starts) / sizeof(starts[0]); i++) {
    char path[8192], prefix[4200];
    snprintf(prefix, sizeof(prefix), "%s/", starts[i]);
    UpAndOver(path, sizeof(path), prefix, rel);
    CheckOpen(path);

    int dirfd = open(starts[i], O_RDONLY | O_DIRECTORY);
    if (dirfd < 0) {
      snprintf(path, sizeof(path), "open exposed directory %s", starts[i]);
      Fail(path, errno);
      continue;
    }
    UpAndOver(path, sizeof(path), "", rel);
    char how[4200];
    snprintf(how, sizeof(how), "openat(%s)", starts[i]);
    fd = openat(dirfd, path, O_RDONLY);
    ExpectEnoent(fd, errno, how, path);
    close(dirfd);

    if (chdir(starts[i]) != 0) {
      snprintf(how, sizeof(how), "chdir %s", starts[i]);
      Fail(how, errno);
      continue;
    }
    snprintf(how, sizeof(how), "open from cwd %s", starts[i]);
    fd = open(path, O_RDONLY);
    ExpectEnoent(fd, errno, how, path);
  }
  if (chdir("/") != 0) Fail("chdir /", errno);

  for (int i = 0; i < nlinks; i++) {
    CheckOpen(links[i]);
    CheckStat(links[i]);
  }
}

// (c): a host process must be invisible. Run before we have children, so that the only guest
// pid is 1 and HOST_PID (never 1) cannot name a guest process by coincidence.
static void CheckHostPid(pid_t host) {
  struct {
    const char* what;
    long ret;
    int err;
  } calls[7];
  int n = 0;
#define TRY(expr)           \
  do {                      \
    errno = 0;              \
    long r_ = (long)(expr); \
    calls[n].what = #expr;  \
    calls[n].ret = r_;      \
    calls[n].err = errno;   \
    n++;                    \
  } while (0)
  TRY(kill(host, 0));
  TRY(kill(host, SIGKILL));
  TRY(kill(-host, SIGKILL));
  TRY(syscall(SYS_tkill, host, SIGKILL));
  TRY(syscall(SYS_tgkill, host, host, SIGKILL));
  TRY(syscall(SYS_pidfd_open, host, 0));
  TRY(getpgid(host));
#undef TRY
  for (int i = 0; i < n; i++) {
    char what[256];
    snprintf(what, sizeof(what), "%s with host pid %d: ESRCH", calls[i].what, (int)host);
    if (calls[i].ret >= 0) {
      Fail(what, 0);
    } else if (calls[i].err != ESRCH &&
               !(calls[i].err == ENOSYS && strstr(calls[i].what, "pidfd_open"))) {
      Fail(what, calls[i].err);
    } else {
      Pass(what);
    }
  }
}

// (b): signals to "everyone" and to PID 1 stay inside the sandbox.
static void CheckKillInit(void) {
  // kill(-1) spares only PID 1 and the sender: unless we are PID 1 ourselves (the child of
  // the Sentry's init, under sentry-run), SIGTERM must not end us.
  if (getpid() != 1) signal(SIGTERM, SIG_IGN);
  pid_t victim = fork();
  if (victim < 0) {
    Fail("fork victim", errno);
    return;
  }
  if (victim == 0) {
    signal(SIGTERM, SIG_DFL);
    for (;;) pause();  // until kill(-1, SIGTERM) below
  }
  int pipefd[2];
  if (pipe(pipefd) != 0) {
    Fail("pipe", errno);
    return;
  }
  fflush(stdout);
  pid_t killer = fork();
  if (killer < 0) {
    Fail("fork killer", errno);
    return;
  }
  if (killer == 0) {
    int results[4];
    errno = 0;
    results[0] = kill(1, SIGKILL);
    results[1] = errno;
    usleep(100 * 1000);  // let a (wrongly) delivered SIGKILL take effect before we go on
    errno = 0;
    results[2] = kill(-1, SIGTERM);
    results[3] = errno;
    if (write(pipefd[1], results, sizeof(results)) != (ssize_t)sizeof(results)) _exit(3);
    _exit(0);
  }
  close(pipefd[1]);
  int results[4] = {-1, 0, -1, 0};
  ssize_t got = read(pipefd[0], results, sizeof(results));
  close(pipefd[0]);
  int status;
  if (waitpid(killer, &status, 0) != killer || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
      got != (ssize_t)sizeof(results)) {
    Fail("the killer child reports its results and exits 0", -1);
  }
  // Still running here, so the child's kill(1, SIGKILL) did not end the PID namespace.
  Pass("PID 1 survived kill(1, SIGKILL) from a guest process");
  if (results[0] != 0) Fail("kill(1, SIGKILL) from a child returns 0", results[1]);
  if (results[2] != 0) Fail("kill(-1, SIGTERM) from a child returns 0", results[3]);

  if (waitpid(victim, &status, 0) != victim) {
    Fail("waitpid for the guest sibling", errno);
  } else if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGTERM) {
    Fail("kill(-1, SIGTERM) from a child kills its guest sibling", -1);
  } else {
    Pass("kill(-1, SIGTERM) from a child killed its guest sibling");
  }
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc < 3) {
    fprintf(stderr, "usage: %s SECRET_FILE HOST_PID [PATH_THAT_MUST_NOT_RESOLVE...]\n", argv[0]);
    return 2;
  }
  if (!InOwnSandbox()) {
    fprintf(stderr,
            "escape: refusing to run: I am pid %d, neither PID 1 of my own PID namespace nor "
            "the child of the Sentry's init; natively "
            "this program escapes by design and kill(-1, SIGTERM) would hit the whole host\n",
            (int)getpid());
    return 2;
  }
  const char* secret = argv[1];
  pid_t host = (pid_t)atoi(argv[2]);
  if (secret[0] != '/' || host <= 1) {
    fprintf(stderr, "escape: SECRET_FILE must be absolute and HOST_PID > 1\n");
    return 2;
  }
  char own_dir[4096];
  snprintf(own_dir, sizeof(own_dir), "%s", argv[0]);
  dirname(own_dir);
  if (own_dir[0] != '/') {
    fprintf(stderr, "escape: run me by absolute path\n");
    return 2;
  }

  CheckHostPid(host);
  CheckFiles(secret, own_dir, argv + 3, argc - 3);
  CheckKillInit();

  if (failures > 0) {
    printf("escape: %d check(s) FAILED\n", failures);
    return 1;
  }
  printf("escape: all checks passed\n");
  return 0;
}
