// A tiny test harness for the differential conformance programs.
//
// Every program is a list of cases. A case is a function declared with
// TEST(name); main() runs them in order with RUN(name), which prints
// "ok <name>" to stdout after the case returns, and ends with PASS(), which
// prints "PASS <program>". Any failed check prints "FAIL file:line: ..." to
// stderr and ends the whole process with status 1, so the first failure
// stops the program. stdout must stay deterministic: the same bytes natively
// and under the sandbox, so never print pids, times or addresses there.
//
// Failures call _exit(1), not exit(1): a check can fail in a forked child or
// in a second thread, and exit() there would flush stdio buffers copied from
// the parent (duplicating output) or run atexit handlers under other threads.
// stdout is flushed after every case, so nothing is lost.

#ifndef SENTRY_CONFORMANCE_COMMON_H_
#define SENTRY_CONFORMANCE_COMMON_H_

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

// argv[0] of the program, an absolute path; used to re-exec ourselves to get
// a child mode ("PROG <mode> args..."). A relative argv[0] ("./conf_x") is
// made absolute against the starting directory, so it survives a chdir.
static const char *conf_self;
static char conf_self_buf[PATH_MAX];

// The scratch directory of the file-system programs (see conf_tmpdir), and
// the process that made it: only that process removes it, also on failure.
static char conf_tmp_path[PATH_MAX];
static pid_t conf_tmp_owner;

static inline int conf_rm_entry_(const char *path, const struct stat *st,
                                 int type, struct FTW *ftw) {
  (void)st;
  (void)ftw;
  if (type == FTW_DP || type == FTW_DNR) {
    rmdir(path);
  } else {
    unlink(path);
  }
  return 0;
}

// Removes the scratch directory and everything in it (best effort).
static inline void conf_tmpdir_cleanup_(void) {
  if (conf_tmp_path[0] == '\0' || getpid() != conf_tmp_owner) return;
  if (chdir("/") == 0) {
    nftw(conf_tmp_path, conf_rm_entry_, 16, FTW_DEPTH | FTW_PHYS);
  }
  conf_tmp_path[0] = '\0';
}

__attribute__((noreturn)) static inline void conf_fail(const char *file,
                                                       int line,
                                                       const char *what,
                                                       int err) {
  fprintf(stderr, "FAIL %s:%d: %s (errno=%d %s)\n", file, line, what, err,
          err ? strerror(err) : "0");
  fflush(stderr);
  conf_tmpdir_cleanup_();
  _exit(1);
}

__attribute__((noreturn)) static inline void conf_fail_eq(
    const char *file, int line, const char *a, const char *b, long long va,
    long long vb, int err) {
  fprintf(stderr, "FAIL %s:%d: %s == %s (%lld vs %lld) (errno=%d %s)\n", file,
          line, a, b, va, vb, err, err ? strerror(err) : "0");
  fflush(stderr);
  conf_tmpdir_cleanup_();
  _exit(1);
}

#define CHECK(cond)                                      \
  do {                                                   \
    if (!(cond)) {                                       \
      int conf_err_ = errno;                             \
      conf_fail(__FILE__, __LINE__, #cond, conf_err_);   \
    }                                                    \
  } while (0)

#define CHECK_EQ(a, b)                                                     \
  do {                                                                     \
    long long conf_a_ = (long long)(a);                                    \
    long long conf_b_ = (long long)(b);                                    \
    if (conf_a_ != conf_b_) {                                              \
      int conf_err_ = errno;                                               \
      conf_fail_eq(__FILE__, __LINE__, #a, #b, conf_a_, conf_b_,           \
                   conf_err_);                                             \
    }                                                                      \
  } while (0)

// expr must return -1 (as a long) and set errno to E.
#define CHECK_ERRNO(expr, E)                                               \
  do {                                                                     \
    errno = 0;                                                             \
    long conf_r_ = (long)(expr);                                           \
    int conf_err_ = errno;                                                 \
    if (conf_r_ != -1 || conf_err_ != (E)) {                               \
      fprintf(stderr, "FAIL %s:%d: %s returned %ld, want -1 with %s\n",    \
              __FILE__, __LINE__, #expr, conf_r_, #E);                     \
      conf_fail(__FILE__, __LINE__, #expr, conf_err_);                     \
    }                                                                      \
  } while (0)

// expr must not return -1 (for calls whose result is otherwise unchecked).
#define CHECK_OK(expr)                                                     \
  do {                                                                     \
    errno = 0;                                                             \
    if ((long)(expr) == -1) {                                              \
      int conf_err_ = errno;                                               \
      conf_fail(__FILE__, __LINE__, #expr, conf_err_);                     \
    }                                                                      \
  } while (0)

#define TEST(name) static void test_##name(void)
#define RUN(name) conf_run(#name, test_##name)

static inline void conf_run(const char *name, void (*fn)(void)) {
  fn();
  printf("ok %s\n", name);
  fflush(stdout);
}

static inline void conf_pass(const char *program) {
  printf("PASS %s\n", program);
  fflush(stdout);
}
#define PASS(program) conf_pass(program)

// Called first in main. Core dumps are disabled because some cases kill
// children with SIGSEGV/SIGFPE, and a core file would be a file write.
static inline void conf_init(int argc, char **argv) {
  (void)argc;
  conf_self = argv[0];
  if (argv[0][0] != '/' && strchr(argv[0], '/') != NULL &&
      getcwd(conf_self_buf, sizeof(conf_self_buf)) != NULL) {
    size_t len = strlen(conf_self_buf);
    if (len + 1 + strlen(argv[0]) < sizeof(conf_self_buf)) {
      conf_self_buf[len] = '/';
      strcpy(conf_self_buf + len + 1, argv[0]);
      conf_self = conf_self_buf;
    }
  }
  struct rlimit rl = {0, 0};
  setrlimit(RLIMIT_CORE, &rl);
}

// --- small helpers shared by the programs ---

static inline pid_t conf_gettid(void) { return (pid_t)syscall(SYS_gettid); }

static inline int64_t conf_now_ns(clockid_t clk) {
  struct timespec ts;
  CHECK_OK(clock_gettime(clk, &ts));
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline void conf_sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
  }
}

// Waits for pid and returns its raw wait status.
static inline int conf_wait(pid_t pid) {
  int status = 0;
  pid_t r;
  do {
    r = waitpid(pid, &status, 0);
  } while (r == -1 && errno == EINTR);
  CHECK_EQ(r, pid);
  return status;
}

// Waits for pid and checks that it exited with the given status.
#define CHECK_EXIT(pid, code)                  \
  do {                                         \
    int conf_st_ = conf_wait(pid);             \
    CHECK(WIFEXITED(conf_st_));                \
    CHECK_EQ(WEXITSTATUS(conf_st_), (code));   \
  } while (0)

// Runs fn in a forked child, which must exit 0 (a failed check there exits 1).
static inline void conf_in_child(void (*fn)(void)) {
  fflush(stdout);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    fn();
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
}

// Waits for pid and checks that it was killed by the given signal.
#define CHECK_KILLED(pid, sig)                 \
  do {                                         \
    int conf_st_ = conf_wait(pid);             \
    CHECK(WIFSIGNALED(conf_st_));              \
    CHECK_EQ(WTERMSIG(conf_st_), (sig));       \
  } while (0)

// Reads exactly n bytes (pipes may return short reads).
static inline void conf_read_full(int fd, void *buf, size_t n) {
  char *p = (char *)buf;
  while (n > 0) {
    ssize_t r = read(fd, p, n);
    if (r == -1 && errno == EINTR) continue;
    CHECK(r > 0);
    p += r;
    n -= (size_t)r;
  }
}

static inline void conf_write_full(int fd, const void *buf, size_t n) {
  const char *p = (const char *)buf;
  while (n > 0) {
    ssize_t r = write(fd, p, n);
    if (r == -1 && errno == EINTR) continue;
    CHECK(r > 0);
    p += r;
    n -= (size_t)r;
  }
}

// --- scratch directories and whole files (the file-system programs) ---

// Makes a fresh directory /tmp/conf_<program>.XXXXXX (mode 0700, owned by
// us, no setgid bit inherited from /tmp), makes it the working directory and
// returns its canonical absolute path. conf_tmpdir_remove() deletes it at
// the end; a failed check deletes it too.
#ifndef CONF_TMP_BASE
#define CONF_TMP_BASE "/tmp"  // -DCONF_TMP_BASE=... to try another fs.
#endif
static inline const char *conf_tmpdir(const char *program) {
  char templ[PATH_MAX];
  snprintf(templ, sizeof(templ), CONF_TMP_BASE "/conf_%s.XXXXXX", program);
  CHECK(mkdtemp(templ) != NULL);
  CHECK(realpath(templ, conf_tmp_path) != NULL);
  conf_tmp_owner = getpid();
  CHECK_OK(chown(conf_tmp_path, geteuid(), getegid()));
  CHECK_OK(chmod(conf_tmp_path, 0700));
  CHECK_OK(chdir(conf_tmp_path));
  return conf_tmp_path;
}

static inline void conf_tmpdir_remove(void) {
  char path[PATH_MAX];
  snprintf(path, sizeof(path), "%s", conf_tmp_path);
  conf_tmpdir_cleanup_();
  struct stat st;
  CHECK_ERRNO(lstat(path, &st), ENOENT);
}

// Creates (or truncates) path with the given mode and writes s to it.
static inline void conf_put_file(const char *path, const char *s, mode_t mode) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  CHECK(fd >= 0);
  conf_write_full(fd, s, strlen(s));
  CHECK_OK(close(fd));
}

// Reads the whole file into buf (at most cap-1 bytes, NUL-terminated) and
// returns its length.
static inline size_t conf_get_file(const char *path, char *buf, size_t cap) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  CHECK(fd >= 0);
  size_t n = 0;
  for (;;) {
    size_t room = cap - 1 - n;
    char extra;
    ssize_t r = read(fd, room ? buf + n : &extra, room ? room : 1);
    if (r == -1 && errno == EINTR) continue;
    CHECK(r >= 0);
    if (r == 0) break;
    CHECK(room > 0);  // The file does not fit.
    n += (size_t)r;
  }
  buf[n] = '\0';
  CHECK_OK(close(fd));
  return n;
}

#endif  // SENTRY_CONFORMANCE_COMMON_H_
