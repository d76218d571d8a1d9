// probes: the classic container escapes, tried from inside. Run by tests/escape/probes.sh in the
// sandbox and, as the reference, natively in `contain` (Linux in a container); each prints one
// line per probe, `NAME: RESULT` (ok, an errno name, or a value), and the wrapper compares the
// two runs. Where the answer must be the same everywhere (nothing of the host is reachable), the
// program also checks it itself and prints `FAIL: ...`.
//
//   probes main SECRET REVERSED_TOKEN HOST_PID...   the full set (see probes_sys.c too)
//   probes tty                                      TIOCSTI and TIOCLINUX on fds 0-2, /dev/tty
//   probes hostbin PATH...                          opens PATH (a host binary of the sandbox)
//                                                   for writing in every way; none may succeed
//
// SECRET is a host file outside the guest's root; the token, reversed so that this program's
// arguments never hold it, is in the environment of the process that started the sandbox (the
// Sentry's); HOST_PIDs are host processes (the wrapper, a sleep, sentry-run itself).
// Exits 0 iff no FAIL line was printed. Nothing is ever written through a descriptor that a
// probe should not have got: it is closed at once.
#define _GNU_SOURCE
#include "probes.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

int failures;

const char* ResultName(long ret, int err) {
  if (ret >= 0) return "ok";
  const char* name = strerrorname_np(err);
  return name != NULL ? name : "E?";
}

void Report(const char* name, long ret, int err) { printf("%s: %s\n", name, ResultName(ret, err)); }

void ReportFd(const char* name, int fd, int err) {
  Report(name, fd, err);
  if (fd >= 0) close(fd);
}

void Must(int ok, const char* what) {
  if (!ok) {
    printf("FAIL: %s\n", what);
    failures++;
  }
}

// ENOENT is the only right answer for a path that leads to the host.
static void ExpectAbsent(const char* name, const char* path, int flags) {
  errno = 0;
  int fd = open(path, flags);
  int err = errno;
  ReportFd(name, fd, err);
  char what[512];
  snprintf(what, sizeof(what), "%s (%s): ENOENT, got %s", name, path, ResultName(fd, err));
  Must(fd < 0 && err == ENOENT, what);
}

static void ProbeRootLinks(const char* secret) {
  char link[256] = "";
  ssize_t n = readlink("/proc/self/root", link, sizeof(link) - 1);
  if (n >= 0) link[n] = 0;
  printf("proc_self_root.readlink: %s\n", n >= 0 ? link : ResultName(-1, errno));
  const char* bases[] = {"", "/proc/self/root/../../..", "/proc/1/root/../..",
                         "/proc/self/cwd/../..", "/proc/thread-self/root/.."};
  const char* names[] = {"secret.open", "secret.via_proc_self_root", "secret.via_proc_1_root",
                         "secret.via_proc_self_cwd", "secret.via_thread_self_root"};
  for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
    char path[4096];
    snprintf(path, sizeof(path), "%s%s", bases[i], secret);
    ExpectAbsent(names[i], path, O_RDONLY);
  }
}

// Every call that names a host process must fail as if it did not exist.
static void ProbeHostPid(int index, pid_t pid) {
  static const char* const kFiles[] = {"cwd", "exe", "root", "fd", "environ", "mem", "ns/mnt"};
  char name[128], path[128];
  for (size_t i = 0; i < sizeof(kFiles) / sizeof(kFiles[0]); i++) {
    snprintf(name, sizeof(name), "host_pid%d.proc_%s", index, kFiles[i]);
    snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, kFiles[i]);
    ExpectAbsent(name, path, O_RDONLY);
  }
  char byte;
  struct iovec local = {&byte, 1}, remote = {(void*)0x400000, 1};
  struct {
    const char* what;
    long ret;
    int err;
  } calls[9];
  int n = 0;
#define CALL(label, expr)    \
  do {                       \
    errno = 0;               \
    calls[n].ret = (expr);   \
    calls[n].err = errno;    \
    calls[n++].what = label; \
  } while (0)
  CALL("kill0", kill(pid, 0));
  CALL("kill_group", kill(-pid, 0));
  CALL("ptrace_attach", ptrace(PTRACE_ATTACH, pid, 0, 0));
  CALL("ptrace_seize", ptrace(PTRACE_SEIZE, pid, 0, 0));
  CALL("process_vm_readv", syscall(SYS_process_vm_readv, pid, &local, 1, &remote, 1, 0));
  CALL("pidfd_open", syscall(SYS_pidfd_open, pid, 0));
  CALL("setpriority", setpriority(PRIO_PROCESS, (id_t)pid, 19));
  CALL("sched_getaffinity", syscall(SYS_sched_getaffinity, pid, sizeof(path), path));
  siginfo_t info;
  memset(&info, 0, sizeof(info));
  info.si_code = SI_QUEUE;
  info.si_pid = getpid();
  info.si_uid = getuid();
  CALL("rt_sigqueueinfo", syscall(SYS_rt_sigqueueinfo, pid, 0, &info));
#undef CALL
  for (int i = 0; i < n; i++) {
    snprintf(name, sizeof(name), "host_pid%d.%s", index, calls[i].what);
    Report(name, calls[i].ret, calls[i].err);
    if (calls[i].ret >= 0 && strcmp(calls[i].what, "pidfd_open") == 0) close((int)calls[i].ret);
    char what[256];
    snprintf(what, sizeof(what), "%s on host pid %d: ESRCH, got %s", calls[i].what, (int)pid,
             ResultName(calls[i].ret, calls[i].err));
    Must(calls[i].ret < 0 && calls[i].err == ESRCH, what);
  }
}

// fds the sandbox was started with (the wrapper opens 3-9 on the secret) must not be there.
static void ProbeInheritedFds(void) {
  int open_fds = 0;
  for (int fd = 3; fd <= 9; fd++) {
    if (fcntl(fd, F_GETFD) >= 0) open_fds++;
  }
  printf("inherited_fds_3_to_9: %d\n", open_fds);
  Must(open_fds == 0, "no fd from 3 to 9 is open at start");
  DIR* d = opendir("/proc/self/fd");
  int listed = 0;
  for (struct dirent* e; d != NULL && (e = readdir(d)) != NULL;) {
    if (e->d_name[0] != '.') listed++;
  }
  if (d != NULL) closedir(d);
  printf("proc_self_fd.entries: %d\n", listed);  // 0, 1, 2 and the listing's own
}

// CVE-2019-5736: the runtime's binary reached through the guest's /proc/self/exe.
static void ProbeExeWrites(void) {
  const char* paths[] = {"/proc/self/exe", "/proc/1/exe"};
  const char* names[] = {"proc_self_exe", "proc_1_exe"};
  for (int i = 0; i < 2; i++) {
    char name[128];
    snprintf(name, sizeof(name), "%s.open_wronly", names[i]);
    errno = 0;
    int fd = open(paths[i], O_WRONLY);
    ReportFd(name, fd, errno);
    snprintf(name, sizeof(name), "%s.open_rdwr", names[i]);
    errno = 0;
    fd = open(paths[i], O_RDWR);
    ReportFd(name, fd, errno);
    // Through an O_PATH descriptor, reopened once the exec is over (runc's bug).
    int path_fd = open(paths[i], O_PATH);
    snprintf(name, sizeof(name), "%s.reopen_wronly", names[i]);
    char reopen[64];
    snprintf(reopen, sizeof(reopen), "/proc/self/fd/%d", path_fd);
    errno = 0;
    fd = path_fd >= 0 ? open(reopen, O_WRONLY) : -1;
    ReportFd(name, fd, path_fd >= 0 ? errno : EBADF);
    if (path_fd >= 0) close(path_fd);
  }
}

// Reverses the token into a heap buffer, never onto the stack that ScanMemory reads.
static char* Unreverse(const char* reversed) {
  size_t n = strlen(reversed);
  char* token = malloc(n + 1);
  for (size_t i = 0; i < n; i++) token[i] = reversed[n - 1 - i];
  token[n] = 0;
  return token;
}

static void MainProbes(int argc, char** argv) {
  const char* secret = argv[2];
  char* token = Unreverse(argv[3]);
  ProbeInheritedFds();
  ProbeRootLinks(secret);
  for (int i = 4; i < argc; i++) ProbeHostPid(i - 4, (pid_t)atoi(argv[i]));
  ProbeExeWrites();
  ProbeProcMemory(token);
  ProbeKernelInterfaces();
  ProbeDevices();
  ProbeNetwork();
  ProbeNamespaces(secret);
  free(token);
}

// TIOCSTI pushes input into the terminal's queue: the shell that reads it next (the caller's)
// would run it. TIOCLINUX 3 pastes the console selection the same way.
static void TtyProbes(void) {
  int tty = open("/dev/tty", O_RDWR | O_NOCTTY);
  printf("dev_tty.open: %s\n", ResultName(tty, errno));
  int fds[] = {0, 1, 2, tty};
  const char* names[] = {"stdin", "stdout", "stderr", "dev_tty"};
  for (int i = 0; i < 4; i++) {
    if (fds[i] < 0) continue;
    char name[64];
    const char* inject = "echo SENTRY-TIOCSTI-ESCAPE\n";
    snprintf(name, sizeof(name), "%s.tiocsti", names[i]);
    errno = 0;
    long r = 0;
    for (const char* c = inject; *c != 0 && r == 0; c++) r = ioctl(fds[i], TIOCSTI, c);
    Report(name, r, errno);
    char paste[1] = {3};
    snprintf(name, sizeof(name), "%s.tioclinux_paste", names[i]);
    errno = 0;
    r = ioctl(fds[i], TIOCLINUX, paste);
    Report(name, r, errno);
  }
  if (tty >= 0) close(tty);
}

static void HostBinaries(int argc, char** argv) {
  for (int i = 2; i < argc; i++) {
    const char* base = strrchr(argv[i], '/');
    base = base != NULL ? base + 1 : argv[i];
    // Nothing here changes the file even if it is let through: no O_TRUNC, the same size and
    // the same mode.
    static const int kFlags[] = {O_WRONLY, O_RDWR, O_WRONLY | O_APPEND};
    static const char* const kNames[] = {"wronly", "rdwr", "append"};
    for (int f = 0; f < 3; f++) {
      char name[256], what[512];
      snprintf(name, sizeof(name), "hostbin.%s.%s", base, kNames[f]);
      errno = 0;
      int fd = open(argv[i], kFlags[f]);
      int err = errno;
      ReportFd(name, fd, err);
      snprintf(what, sizeof(what), "%s: refused, got %s", name, ResultName(fd, err));
      Must(fd < 0, what);
    }
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      Must(0, "stat of the host binary");
      continue;
    }
    char name[256];
    snprintf(name, sizeof(name), "hostbin.%s.truncate", base);
    errno = 0;
    int r = truncate(argv[i], st.st_size);
    Report(name, r, errno);
    Must(r != 0, name);
    snprintf(name, sizeof(name), "hostbin.%s.chmod", base);
    errno = 0;
    r = chmod(argv[i], st.st_mode & 07777);
    Report(name, r, errno);
    Must(r != 0, name);
  }
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc >= 4 && strcmp(argv[1], "main") == 0) {
    MainProbes(argc, argv);
  } else if (argc == 2 && strcmp(argv[1], "tty") == 0) {
    TtyProbes();
  } else if (argc >= 3 && strcmp(argv[1], "hostbin") == 0) {
    HostBinaries(argc, argv);
  } else {
    fprintf(stderr, "usage: %s main SECRET REVERSED_TOKEN HOST_PID... | tty | hostbin PATH...\n",
            argv[0]);
    return 2;
  }
  if (failures > 0) {
    printf("probes: %d check(s) FAILED\n", failures);
    return 1;
  }
  return 0;
}
