// /proc: the per-process files (exe, cwd, fd, fdinfo, status, stat,
// cmdline, environ, maps, mounts, mountinfo, comm, task), /proc/self and
// /proc/thread-self, process states of other processes (R, S, T, Z), and
// the system-wide files (cpuinfo, meminfo, uptime, loadavg, filesystems,
// sys/kernel/osrelease and hostname), cross-checked against the syscalls
// (sysinfo, getrlimit, sched_getaffinity, setpriority): stat, swaps, vmstat,
// /proc/sys tunables, limits, io, oom_score_adj, smaps_rollup, the CPU count
// in /sys/devices/system/cpu, and /dev/{full,random,std*,fd,shm}.
//
// Works in its own scratch directory under /tmp (conf_tmpdir).

#include "common.h"

#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/statfs.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>

static const char *tmp;
static char self_real[PATH_MAX];  // realpath of our binary.
static const char *argv0;          // argv[0] as we got it.
static char self_comm[16];         // Its basename, cut to 15 bytes.

static char big[1 << 20];  // Scratch for whole /proc files.

static size_t slurp(const char *path) { return conf_get_file(path, big, sizeof(big)); }

static void readlink_is(const char *link, const char *want) {
  char buf[PATH_MAX + 1];
  ssize_t n = readlink(link, buf, sizeof(buf) - 1);
  CHECK(n >= 0);
  buf[n] = '\0';
  if (strcmp(buf, want) != 0) {
    fprintf(stderr, "readlink(%s) = '%s', want '%s'\n", link, buf, want);
    CHECK(0);
  }
}

// Finds "Key:" at the start of a line in big and returns what follows the
// tabs/spaces (up to the newline) in out.
static int field(const char *key, char *out, size_t cap) {
  size_t klen = strlen(key);
  for (const char *line = big; *line;) {
    const char *nl = strchr(line, '\n');
    size_t len = nl ? (size_t)(nl - line) : strlen(line);
    if (len > klen && strncmp(line, key, klen) == 0 && line[klen] == ':') {
      const char *v = line + klen + 1;
      while (*v == ' ' || *v == '\t') v++;
      size_t vlen = len - (size_t)(v - line);
      CHECK(vlen < cap);
      memcpy(out, v, vlen);
      out[vlen] = '\0';
      return 1;
    }
    if (!nl) break;
    line = nl + 1;
  }
  return 0;
}

static int has_line_with(const char *needle) {
  return strstr(big, needle) != NULL;
}

// Parses /proc/<pid>/stat: returns the state and stores pid, comm, ppid.
static char parse_stat(const char *path, int *pid, char *comm, size_t cap,
                       int *ppid) {
  slurp(path);
  char *open = strchr(big, '(');
  char *close = strrchr(big, ')');
  CHECK(open != NULL && close != NULL && close > open);
  *pid = atoi(big);
  CHECK_EQ(open[-1], ' ');
  size_t clen = (size_t)(close - open - 1);
  CHECK(clen < cap);
  memcpy(comm, open + 1, clen);
  comm[clen] = '\0';
  char state = 0;
  CHECK_EQ(sscanf(close + 1, " %c %d", &state, ppid), 2);
  // 52 fields in all since Linux 5.x; at least the classic 44.
  int fields = 2;
  for (char *p = close + 1; *p; p++) {
    if (*p == ' ') fields++;
  }
  CHECK(fields >= 44);
  return state;
}

static char state_of(pid_t pid) {
  char path[64], comm[64];
  snprintf(path, sizeof(path), "/proc/%d/stat", pid);
  int p, pp;
  char st = parse_stat(path, &p, comm, sizeof(comm), &pp);
  CHECK_EQ(p, pid);
  CHECK_EQ(pp, getpid());
  return st;
}

// Child modes, run through a re-exec with a controlled argv/envp.
static int child_main(int argc, char **argv) {
  if (strcmp(argv[1], "cmdline") == 0) {
    // Expected: argv exactly, each NUL-terminated.
    char want[4096];
    size_t n = 0;
    for (int i = 0; i < argc; i++) {
      size_t l = strlen(argv[i]) + 1;
      CHECK(n + l < sizeof(want));
      memcpy(want + n, argv[i], l);
      n += l;
    }
    size_t got = slurp("/proc/self/cmdline");
    CHECK_EQ(got, n);
    CHECK(memcmp(big, want, n) == 0);
    _exit(0);
  }
  if (strcmp(argv[1], "environ") == 0) {
    static const char want[] = "CONF_PROCFS_MARK=hello world\0OTHER=\0";
    size_t got = slurp("/proc/self/environ");
    CHECK_EQ(got, sizeof(want) - 1);
    CHECK(memcmp(big, want, got) == 0);
    CHECK_EQ(strcmp(getenv("CONF_PROCFS_MARK"), "hello world"), 0);
    _exit(0);
  }
  fprintf(stderr, "unknown child mode %s\n", argv[1]);
  _exit(2);
}

static void run_self(char *const argv[], char *const envp[]) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    execve(conf_self, argv, envp);
    _exit(127);
  }
  CHECK_EXIT(pid, 0);
}

// --- cases ---

TEST(self_links) {
  readlink_is("/proc/self/exe", self_real);
  char want[64];
  snprintf(want, sizeof(want), "%d", getpid());
  readlink_is("/proc/self", want);
  snprintf(want, sizeof(want), "%d/task/%d", getpid(), conf_gettid());
  readlink_is("/proc/thread-self", want);
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/exe", getpid());
  readlink_is(path, self_real);
  struct stat a, b;
  CHECK_OK(stat("/proc/self/exe", &a));
  CHECK_OK(stat(self_real, &b));
  CHECK_EQ(a.st_ino, b.st_ino);
  CHECK_EQ(a.st_dev, b.st_dev);
  // The root of our process.
  readlink_is("/proc/self/root", "/");
}

TEST(cwd_follows_chdir) {
  readlink_is("/proc/self/cwd", tmp);
  CHECK_OK(mkdir("sub", 0755));
  CHECK_OK(chdir("sub"));
  char want[PATH_MAX];
  snprintf(want, sizeof(want), "%s/sub", tmp);
  readlink_is("/proc/self/cwd", want);
  // It is a usable directory link.
  conf_put_file("/proc/self/cwd/viaproc", "v", 0644);
  struct stat st;
  CHECK_OK(stat("viaproc", &st));
  CHECK_OK(unlink("viaproc"));
  CHECK_OK(chdir(tmp));
  readlink_is("/proc/self/cwd", tmp);
  CHECK_OK(rmdir("sub"));
}

TEST(fd_directory) {
  int fd = open("file", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  int p[2];
  CHECK_OK(pipe(p));
  // The listing is exactly the open descriptors (plus the one reading it).
  DIR *dir = opendir("/proc/self/fd");
  CHECK(dir != NULL);
  char seen[1024] = {0};
  struct dirent *d;
  int dots = 0;
  while ((d = readdir(dir)) != NULL) {
    if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0) {
      dots++;
      continue;
    }
    CHECK_EQ(d->d_type, DT_LNK);
    int n = atoi(d->d_name);
    CHECK(n >= 0);
    if (n < 1024) {
      seen[n] = 1;
    } else {
      CHECK(fcntl(n, F_GETFD) >= 0);  // (Inherited high fds.)
    }
  }
  CHECK_EQ(dots, 2);
  for (int i = 0; i < 1024; i++) {
    int open_now = fcntl(i, F_GETFD) >= 0;
    if (i == dirfd(dir)) {
      CHECK(seen[i]);
    } else if (seen[i] != open_now) {
      fprintf(stderr, "fd %d: listed=%d open=%d\n", i, seen[i], open_now);
      CHECK(0);
    }
  }
  CHECK(seen[fd] && seen[p[0]] && seen[p[1]]);
  CHECK_OK(closedir(dir));

  char link[64], want[PATH_MAX + 32];
  snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  snprintf(want, sizeof(want), "%s/file", tmp);
  readlink_is(link, want);
  struct stat st;
  CHECK_OK(fstat(p[0], &st));
  snprintf(link, sizeof(link), "/proc/self/fd/%d", p[0]);
  snprintf(want, sizeof(want), "pipe:[%lu]", (unsigned long)st.st_ino);
  readlink_is(link, want);
  int null = open("/dev/null", O_RDONLY);
  CHECK(null >= 0);
  snprintf(link, sizeof(link), "/proc/self/fd/%d", null);
  readlink_is(link, "/dev/null");
  CHECK_OK(close(null));
  // A removed file is marked.
  CHECK_OK(unlink("file"));
  snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  snprintf(want, sizeof(want), "%s/file (deleted)", tmp);
  readlink_is(link, want);
  // Closed: gone.
  CHECK_OK(close(fd));
  CHECK_ERRNO(lstat(link, &st), ENOENT);
  CHECK_OK(close(p[0]));
  CHECK_OK(close(p[1]));
}

TEST(fd_reopen_and_fdinfo) {
  int w = open("data", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  CHECK(w >= 0);
  CHECK_EQ(write(w, "hello", 5), 5);
  char link[64];
  snprintf(link, sizeof(link), "/proc/self/fd/%d", w);
  // Reopening makes a new open file: other mode, own offset.
  int r = open(link, O_RDONLY);
  CHECK(r >= 0);
  CHECK_EQ(lseek(r, 0, SEEK_CUR), 0);
  char buf[16] = {0};
  CHECK_EQ(read(r, buf, sizeof(buf)), 5);
  CHECK(memcmp(buf, "hello", 5) == 0);
  CHECK_EQ(lseek(w, 0, SEEK_CUR), 5);
  CHECK_OK(close(r));
  // Even after the file lost its name.
  CHECK_OK(unlink("data"));
  r = open(link, O_RDONLY);
  CHECK(r >= 0);
  CHECK_EQ(pread(r, buf, sizeof(buf), 1), 4);
  CHECK(memcmp(buf, "ello", 4) == 0);
  CHECK_OK(close(r));

  // fdinfo: position and flags (octal).
  char info[64], val[64];
  snprintf(info, sizeof(info), "/proc/self/fdinfo/%d", w);
  slurp(info);
  CHECK(field("pos", val, sizeof(val)));
  CHECK_EQ(strcmp(val, "5"), 0);
  CHECK(field("flags", val, sizeof(val)));
  CHECK_EQ(val[0], '0');  // Octal.
  long flags = strtol(val, NULL, 8);
  CHECK_EQ(flags & O_ACCMODE, O_WRONLY);
  CHECK(flags & O_CLOEXEC);  // fdinfo shows the close-on-exec flag too.
  CHECK(field("mnt_id", val, sizeof(val)));
  CHECK_OK(lseek(w, 2, SEEK_SET));
  slurp(info);
  CHECK(field("pos", val, sizeof(val)));
  CHECK_EQ(strcmp(val, "2"), 0);
  CHECK_OK(close(w));
}

TEST(status_file) {
  slurp("/proc/self/status");
  char val[256], want[64];
  CHECK(field("Name", val, sizeof(val)));
  CHECK_EQ(strcmp(val, self_comm), 0);
  CHECK(field("State", val, sizeof(val)));
  CHECK_EQ(strcmp(val, "R (running)"), 0);
  CHECK(field("Pid", val, sizeof(val)));
  CHECK_EQ(atoi(val), getpid());
  CHECK(field("Tgid", val, sizeof(val)));
  CHECK_EQ(atoi(val), getpid());
  CHECK(field("PPid", val, sizeof(val)));
  CHECK_EQ(atoi(val), getppid());
  uid_t ru, eu, su;
  gid_t rg, eg, sg;
  CHECK_OK(getresuid(&ru, &eu, &su));
  CHECK_OK(getresgid(&rg, &eg, &sg));
  CHECK(field("Uid", val, sizeof(val)));
  snprintf(want, sizeof(want), "%u\t%u\t%u\t%u", ru, eu, su, eu);
  CHECK_EQ(strcmp(val, want), 0);
  CHECK(field("Gid", val, sizeof(val)));
  snprintf(want, sizeof(want), "%u\t%u\t%u\t%u", rg, eg, sg, eg);
  CHECK_EQ(strcmp(val, want), 0);
  CHECK(field("Threads", val, sizeof(val)));
  CHECK_EQ(atoi(val), 1);
  CHECK(field("VmRSS", val, sizeof(val)));
  CHECK(strstr(val, " kB") != NULL);
  CHECK(field("SigBlk", val, sizeof(val)));
  CHECK_EQ(strlen(val), 16);  // 64 signals in hex.
}

TEST(stat_file) {
  int pid, ppid;
  char comm[64];
  char state = parse_stat("/proc/self/stat", &pid, comm, sizeof(comm), &ppid);
  CHECK_EQ(pid, getpid());
  CHECK_EQ(strcmp(comm, self_comm), 0);
  CHECK_EQ(state, 'R');
  CHECK_EQ(ppid, getppid());
  // The per-thread view agrees.
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/task/%d/stat", conf_gettid());
  state = parse_stat(path, &pid, comm, sizeof(comm), &ppid);
  CHECK_EQ(pid, conf_gettid());
  CHECK_EQ(state, 'R');
  // statm: seven numbers, size >= resident.
  slurp("/proc/self/statm");
  long v[7];
  CHECK_EQ(sscanf(big, "%ld %ld %ld %ld %ld %ld %ld", &v[0], &v[1], &v[2],
                  &v[3], &v[4], &v[5], &v[6]),
           7);
  CHECK(v[0] >= v[1]);
  CHECK(v[1] > 0);
}

TEST(cmdline_and_environ) {
  // Our own: just argv[0] (no arguments in normal runs).
  size_t n = slurp("/proc/self/cmdline");
  CHECK(n > 0);
  CHECK_EQ(big[n - 1], '\0');
  CHECK_EQ(strcmp(big, argv0), 0);
  // A child with odd arguments, including an empty one.
  char *argv[] = {(char *)conf_self, "cmdline", "a b", "", "c", NULL};
  char *env[] = {NULL};
  run_self(argv, env);
  // A child with a chosen environment.
  char *argv2[] = {(char *)conf_self, "environ", NULL};
  char *env2[] = {"CONF_PROCFS_MARK=hello world", "OTHER=", NULL};
  run_self(argv2, env2);
}

TEST(maps_file) {
  conf_put_file("mapped", "0123456789", 0644);
  int fd = open("mapped", O_RDONLY);
  CHECK(fd >= 0);
  void *m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
  CHECK(m != MAP_FAILED);
  CHECK_OK(close(fd));
  slurp("/proc/self/maps");
  int stack = 0, exe = 0, file = 0;
  char want_file[PATH_MAX + 16];
  snprintf(want_file, sizeof(want_file), "%s/mapped", tmp);
  char *save = NULL;
  for (char *line = strtok_r(big, "\n", &save); line;
       line = strtok_r(NULL, "\n", &save)) {
    unsigned long lo, hi;
    char perms[8];
    int consumed = 0;
    CHECK_EQ(sscanf(line, "%lx-%lx %7s %*x %*x:%*x %*u%n", &lo, &hi, perms,
                    &consumed),
             3);
    CHECK(lo < hi);
    CHECK_EQ(strlen(perms), 4);
    const char *path = line + consumed;
    while (*path == ' ') path++;
    if (strcmp(path, "[stack]") == 0) {
      stack++;
      CHECK_EQ(strcmp(perms, "rw-p"), 0);
      char here;
      CHECK((unsigned long)&here >= lo && (unsigned long)&here < hi);
    }
    if (strcmp(path, self_real) == 0) exe++;
    if (strcmp(path, want_file) == 0) {
      file++;
      CHECK_EQ(lo, (unsigned long)m);
      CHECK_EQ(strcmp(perms, "r--p"), 0);
    }
  }
  CHECK_EQ(stack, 1);
  CHECK(exe >= 1);
  CHECK_EQ(file, 1);
  CHECK_OK(munmap(m, 4096));
  CHECK_OK(unlink("mapped"));
}

TEST(mounts_and_mountinfo) {
  size_t n = slurp("/proc/self/mounts");
  CHECK(n > 0);
  int root = 0, proc = 0;
  char *save = NULL;
  for (char *line = strtok_r(big, "\n", &save); line;
       line = strtok_r(NULL, "\n", &save)) {
    char dev[256], mnt[256], type[64], opts[512];
    int a, b;
    CHECK_EQ(sscanf(line, "%255s %255s %63s %511s %d %d", dev, mnt, type,
                    opts, &a, &b),
             6);
    if (strcmp(mnt, "/") == 0) root++;
    if (strcmp(mnt, "/proc") == 0 && strcmp(type, "proc") == 0) proc++;
  }
  CHECK(root >= 1);
  CHECK(proc >= 1);
  // /proc/mounts is the same file.
  readlink_is("/proc/mounts", "self/mounts");

  n = slurp("/proc/self/mountinfo");
  CHECK(n > 0);
  root = 0;
  save = NULL;
  for (char *line = strtok_r(big, "\n", &save); line;
       line = strtok_r(NULL, "\n", &save)) {
    int id, parent;
    char devno[32], fsroot[256], mnt[256];
    CHECK_EQ(sscanf(line, "%d %d %31s %255s %255s", &id, &parent, devno,
                    fsroot, mnt),
             5);
    CHECK(strchr(devno, ':') != NULL);
    CHECK(strstr(line, " - ") != NULL);  // The separator before fs type.
    if (strcmp(mnt, "/") == 0) root++;
  }
  CHECK(root >= 1);
}

TEST(comm_and_prctl_name) {
  char want[32];
  snprintf(want, sizeof(want), "%s\n", self_comm);
  slurp("/proc/self/comm");
  CHECK_EQ(strcmp(big, want), 0);
  char name[17] = {0};
  CHECK_OK(prctl(PR_GET_NAME, name));
  CHECK_EQ(strcmp(name, self_comm), 0);

  CHECK_OK(prctl(PR_SET_NAME, "a-much-longer-thread-name"));
  slurp("/proc/self/comm");
  CHECK_EQ(strcmp(big, "a-much-longer-t\n"), 0);  // 15 bytes.
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/task/%d/comm", conf_gettid());
  slurp(path);
  CHECK_EQ(strcmp(big, "a-much-longer-t\n"), 0);
  slurp("/proc/self/status");
  char val[64];
  CHECK(field("Name", val, sizeof(val)));
  CHECK_EQ(strcmp(val, "a-much-longer-t"), 0);
  int pid, ppid;
  char comm[64];
  parse_stat("/proc/self/stat", &pid, comm, sizeof(comm), &ppid);
  CHECK_EQ(strcmp(comm, "a-much-longer-t"), 0);
  // A name with a space and parentheses: stat parsers must use the last ')'.
  CHECK_OK(prctl(PR_SET_NAME, "x) (y z"));
  parse_stat("/proc/self/stat", &pid, comm, sizeof(comm), &ppid);
  CHECK_EQ(strcmp(comm, "x) (y z"), 0);
  CHECK_EQ(pid, getpid());
  // Writing comm is the same as PR_SET_NAME.
  int fd = open("/proc/self/comm", O_WRONLY);
  CHECK(fd >= 0);
  CHECK_EQ(write(fd, "written", 7), 7);
  CHECK_OK(close(fd));
  CHECK_OK(prctl(PR_GET_NAME, name));
  CHECK_EQ(strcmp(name, "written"), 0);
  CHECK_OK(prctl(PR_SET_NAME, self_comm));
}

static void *idle_thread(void *arg) {
  int fd = *(int *)arg;
  char c;
  CHECK_EQ(read(fd, &c, 1), 1);
  return NULL;
}

TEST(task_directory) {
  int p[2];
  CHECK_OK(pipe(p));
  pthread_t t;
  CHECK_EQ(pthread_create(&t, NULL, idle_thread, &p[0]), 0);
  DIR *dir = opendir("/proc/self/task");
  CHECK(dir != NULL);
  int tasks = 0, me = 0;
  struct dirent *d;
  while ((d = readdir(dir)) != NULL) {
    if (d->d_name[0] == '.') continue;
    tasks++;
    if (atoi(d->d_name) == conf_gettid()) me = 1;
  }
  CHECK_OK(closedir(dir));
  CHECK_EQ(tasks, 2);
  CHECK(me);
  slurp("/proc/self/status");
  char val[32];
  CHECK(field("Threads", val, sizeof(val)));
  CHECK_EQ(atoi(val), 2);
  CHECK_EQ(write(p[1], "x", 1), 1);
  CHECK_EQ(pthread_join(t, NULL), 0);
  CHECK_OK(close(p[0]));
  CHECK_OK(close(p[1]));
}

TEST(child_states) {
  // Sleeping in a read: S (once it gets there).
  int p[2];
  CHECK_OK(pipe(p));
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    char c;
    _exit(read(p[0], &c, 1) == 1 ? 0 : 1);
  }
  char st = 0;
  for (int i = 0; i < 5000 && (st = state_of(pid)) != 'S'; i++) {
    conf_sleep_ms(1);
  }
  CHECK_EQ(st, 'S');
  CHECK_EQ(write(p[1], "x", 1), 1);
  CHECK_EXIT(pid, 0);
  CHECK_OK(close(p[0]));
  CHECK_OK(close(p[1]));

  // Stopped: T.
  pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    raise(SIGSTOP);
    _exit(0);
  }
  int status;
  CHECK_EQ(waitpid(pid, &status, WUNTRACED), pid);
  CHECK(WIFSTOPPED(status));
  CHECK_EQ(state_of(pid), 'T');
  char path[64], val[64];
  snprintf(path, sizeof(path), "/proc/%d/status", pid);
  slurp(path);
  CHECK(field("State", val, sizeof(val)));
  CHECK_EQ(strcmp(val, "T (stopped)"), 0);
  CHECK_OK(kill(pid, SIGCONT));
  CHECK_EXIT(pid, 0);

  // Exited, not yet reaped: Z.
  pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) _exit(7);
  siginfo_t si;
  memset(&si, 0, sizeof(si));
  CHECK_OK(waitid(P_PID, pid, &si, WEXITED | WNOWAIT));
  CHECK_EQ(si.si_pid, pid);
  CHECK_EQ(state_of(pid), 'Z');
  snprintf(path, sizeof(path), "/proc/%d/status", pid);
  slurp(path);
  CHECK(field("State", val, sizeof(val)));
  CHECK_EQ(strcmp(val, "Z (zombie)"), 0);
  CHECK_EXIT(pid, 7);
  // Reaped: gone.
  struct stat sb;
  snprintf(path, sizeof(path), "/proc/%d", pid);
  CHECK_ERRNO(stat(path, &sb), ENOENT);
}

TEST(system_files) {
  slurp("/proc/cpuinfo");
  CHECK(strncmp(big, "processor", 9) == 0);
  slurp("/proc/meminfo");
  char val[64];
  CHECK(field("MemTotal", val, sizeof(val)));
  CHECK(atol(val) > 0);
  CHECK(strstr(val, " kB") != NULL);
  CHECK(field("MemFree", val, sizeof(val)));
  CHECK(field("MemAvailable", val, sizeof(val)));

  slurp("/proc/uptime");
  double up, idle;
  char tail;
  CHECK_EQ(sscanf(big, "%lf %lf%c", &up, &idle, &tail), 3);
  CHECK(up > 0);
  CHECK(idle >= 0);
  CHECK_EQ(tail, '\n');

  slurp("/proc/loadavg");
  double l1, l5, l15;
  int running, total, last;
  CHECK_EQ(sscanf(big, "%lf %lf %lf %d/%d %d", &l1, &l5, &l15, &running,
                  &total, &last),
           6);
  CHECK(l1 >= 0 && l5 >= 0 && l15 >= 0);
  CHECK(running >= 1);
  CHECK(total >= running);

  struct utsname u;
  CHECK_OK(uname(&u));
  char want[sizeof(u.release) + 2];
  slurp("/proc/sys/kernel/osrelease");
  snprintf(want, sizeof(want), "%s\n", u.release);
  CHECK_EQ(strcmp(big, want), 0);
  slurp("/proc/sys/kernel/hostname");
  snprintf(want, sizeof(want), "%s\n", u.nodename);
  CHECK_EQ(strcmp(big, want), 0);
  slurp("/proc/sys/kernel/ostype");
  CHECK_EQ(strcmp(big, "Linux\n"), 0);

  slurp("/proc/filesystems");
  CHECK(has_line_with("nodev\ttmpfs\n"));
  CHECK(has_line_with("nodev\tproc\n"));

  // /proc files report size 0 but read fine.
  struct stat st;
  CHECK_OK(stat("/proc/meminfo", &st));
  CHECK_EQ(st.st_size, 0);
  CHECK(S_ISREG(st.st_mode));
}

// The machine-wide files against the syscalls: loadavg, meminfo vs sysinfo, the CPU count
// everywhere it shows, uptime, stat, swaps, vmstat, version, cmdline.
TEST(system_consistency) {
  slurp("/proc/loadavg");
  double l[3];
  int running, total, last;
  char tail;
  CHECK_EQ(sscanf(big, "%lf %lf %lf %d/%d %d%c", &l[0], &l[1], &l[2], &running, &total,
                  &last, &tail),
           7);
  CHECK_EQ(tail, '\n');
  CHECK(running >= 1 && total >= running && last >= 1);
  double g[3];
  CHECK_EQ(getloadavg(g, 3), 3);

  struct sysinfo si;
  CHECK_OK(sysinfo(&si));
  slurp("/proc/meminfo");
  char val[64];
  CHECK(field("MemTotal", val, sizeof(val)));
  CHECK_EQ((unsigned long long)atol(val) * 1024,
           (unsigned long long)si.totalram * si.mem_unit);
  CHECK(field("SwapTotal", val, sizeof(val)));
  CHECK_EQ((unsigned long long)atol(val) * 1024,
           (unsigned long long)si.totalswap * si.mem_unit);

  // The CPU count: sysconf, affinity, /sys, /proc/stat agree.
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  cpu_set_t set;
  CHECK_OK(sched_getaffinity(0, sizeof(set), &set));
  CHECK_EQ(CPU_COUNT(&set), n);
  slurp("/sys/devices/system/cpu/online");
  int online = 0;
  for (char *p = big; *p && *p != '\n';) {
    char *end;
    long a = strtol(p, &end, 10), b = a;
    if (*end == '-') b = strtol(end + 1, &end, 10);
    online += (int)(b - a + 1);
    p = *end == ',' ? end + 1 : end;
  }
  CHECK_EQ(online, n);
  slurp("/sys/devices/system/cpu/possible");
  CHECK(big[0] == '0');
  slurp("/proc/stat");
  CHECK(strncmp(big, "cpu ", 4) == 0);
  int cpus = 0;
  for (char *p = big; (p = strstr(p, "\ncpu")) != NULL; p++) cpus++;
  CHECK_EQ(cpus, n);
  CHECK(has_line_with("\nbtime "));
  CHECK(has_line_with("\nprocs_running "));

  slurp("/proc/uptime");
  double up, idle;
  CHECK_EQ(sscanf(big, "%lf %lf", &up, &idle), 2);
  CHECK(up <= (double)si.uptime + 1.0);
  CHECK(si.uptime <= up + 2.0);

  slurp("/proc/swaps");
  CHECK(strncmp(big, "Filename", 8) == 0);
  slurp("/proc/vmstat");
  CHECK(strncmp(big, "nr_free_pages ", 14) == 0);
  slurp("/proc/version");
  CHECK(strncmp(big, "Linux version ", 14) == 0);
  size_t len = slurp("/proc/cmdline");
  CHECK(len > 0 && big[len - 1] == '\n');
  slurp("/sys/kernel/mm/transparent_hugepage/enabled");
  CHECK(strchr(big, '[') != NULL);
  struct stat st;
  CHECK_OK(stat("/sys/fs/cgroup", &st));
  CHECK(S_ISDIR(st.st_mode));
}

static long read_long(const char *path) {
  slurp(path);
  char *end;
  long v = strtol(big, &end, 10);
  CHECK(end != big && *end == '\n');
  return v;
}

TEST(sys_tunables) {
  CHECK(read_long("/proc/sys/kernel/pid_max") >= 32768);
  CHECK_EQ(read_long("/proc/sys/kernel/ngroups_max"), sysconf(_SC_NGROUPS_MAX));
  CHECK_EQ(read_long("/proc/sys/kernel/shmmni"), 4096);
  CHECK_EQ(read_long("/proc/sys/kernel/msgmax"), 8192);
  slurp("/proc/sys/kernel/shmmax");
  CHECK(strtoull(big, NULL, 10) > 0);
  slurp("/proc/sys/kernel/shmall");
  CHECK(strtoull(big, NULL, 10) > 0);
  long oc = read_long("/proc/sys/vm/overcommit_memory");
  CHECK(oc >= 0 && oc <= 2);
  CHECK(read_long("/proc/sys/vm/max_map_count") > 0);
  CHECK(read_long("/proc/sys/fs/file-max") > 0);
  struct rlimit rl;
  CHECK_OK(getrlimit(RLIMIT_NOFILE, &rl));
  CHECK((unsigned long)read_long("/proc/sys/fs/nr_open") >= rl.rlim_max);
  CHECK(read_long("/proc/sys/fs/pipe-max-size") >= 4096);
  // boot_id is fixed, uuid new at every read.
  char a[64], b[64];
  slurp("/proc/sys/kernel/random/boot_id");
  CHECK_EQ(strlen(big), 37);
  snprintf(a, sizeof(a), "%.63s", big);
  slurp("/proc/sys/kernel/random/boot_id");
  CHECK_EQ(strcmp(a, big), 0);
  slurp("/proc/sys/kernel/random/uuid");
  snprintf(b, sizeof(b), "%.63s", big);
  slurp("/proc/sys/kernel/random/uuid");
  CHECK_EQ(strlen(big), 37);
  CHECK(strcmp(b, big) != 0);
}

// The per-process files that mirror syscalls: limits, status, stat, io, oom_score_adj.
TEST(limits_file) {
  static const char *names[] = {
      "Max cpu time",      "Max file size",        "Max data size",
      "Max stack size",    "Max core file size",   "Max resident set",
      "Max processes",     "Max open files",       "Max locked memory",
      "Max address space", "Max file locks",       "Max pending signals",
      "Max msgqueue size", "Max nice priority",    "Max realtime priority",
      "Max realtime timeout"};
  struct rlimit low;
  CHECK_OK(getrlimit(RLIMIT_CORE, &low));
  low.rlim_cur = 0;
  CHECK_OK(setrlimit(RLIMIT_CORE, &low));
  slurp("/proc/self/limits");
  CHECK(strncmp(big, "Limit                     Soft Limit           Hard Limit           Units     \n",
                79) == 0);
  char *line = strchr(big, '\n') + 1;
  for (int r = 0; r < 16; r++) {
    CHECK(strncmp(line, names[r], strlen(names[r])) == 0);
    struct rlimit rl;
    CHECK_OK(getrlimit(r, &rl));
    char soft[32], hard[32];
    CHECK_EQ(sscanf(line + 26, "%31s %31s", soft, hard), 2);
    char want[32];
    snprintf(want, sizeof(want), "%llu", (unsigned long long)rl.rlim_cur);
    CHECK_EQ(strcmp(soft, rl.rlim_cur == RLIM_INFINITY ? "unlimited" : want), 0);
    snprintf(want, sizeof(want), "%llu", (unsigned long long)rl.rlim_max);
    CHECK_EQ(strcmp(hard, rl.rlim_max == RLIM_INFINITY ? "unlimited" : want), 0);
    line = strchr(line, '\n') + 1;
  }
  CHECK_EQ(*line, '\0');
}

TEST(status_sched_fields) {
  cpu_set_t all, one;
  CHECK_OK(sched_getaffinity(0, sizeof(all), &all));
  int first = 0;
  while (!CPU_ISSET(first, &all)) first++;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  CHECK_OK(sched_setaffinity(0, sizeof(one), &one));
  slurp("/proc/self/status");
  char val[4096], want[64];
  CHECK(field("Cpus_allowed_list", val, sizeof(val)));
  snprintf(want, sizeof(want), "%d", first);
  CHECK_EQ(strcmp(val, want), 0);
  CHECK(field("Cpus_allowed", val, sizeof(val)));
  CHECK(strtoul(strrchr(val, ',') ? strrchr(val, ',') + 1 : val, NULL, 16) ==
        (first < 32 ? 1ul << first : 0));
  CHECK_OK(sched_setaffinity(0, sizeof(all), &all));
  static const char *fields[] = {"Umask", "NSpid", "NStgid", "VmSize", "VmRSS",
                                 "SigQ", "SigIgn", "SigCgt", "CapEff", "Seccomp",
                                 "Mems_allowed_list", "voluntary_ctxt_switches",
                                 "nonvoluntary_ctxt_switches"};
  for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
    const char *f = fields[i];
    if (!field(f, val, sizeof(val))) {
      fprintf(stderr, "status lacks %s\n", f);
      CHECK(0);
    }
  }
  CHECK(field("Umask", val, sizeof(val)));
  CHECK_EQ(strcmp(val, "0022"), 0);
  CHECK(field("NSpid", val, sizeof(val)));
  CHECK_EQ(atoi(val), getpid());
  // stat: nice and priority follow setpriority; threads; policy.
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    CHECK_OK(setpriority(PRIO_PROCESS, 0, 3));
    slurp("/proc/self/stat");
    char *p = strrchr(big, ')') + 2;
    long f[52];
    int i = 3;
    for (; i <= 41 && p; i++) {
      f[i] = strtol(p, NULL, 10);
      p = strchr(p, ' ');
      if (p) p++;
    }
    CHECK_EQ(f[18], 23);
    CHECK_EQ(f[19], 3);
    CHECK_EQ(f[20], 1);
    CHECK_EQ(f[38], SIGCHLD);
    CHECK_EQ(f[41], SCHED_OTHER);
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
}

TEST(io_file) {
  slurp("/proc/self/io");
  unsigned long long rchar, wchar, syscr, syscw, rb, wb, cwb;
  CHECK_EQ(sscanf(big,
                  "rchar: %llu\nwchar: %llu\nsyscr: %llu\nsyscw: %llu\nread_bytes: %llu\n"
                  "write_bytes: %llu\ncancelled_write_bytes: %llu\n",
                  &rchar, &wchar, &syscr, &syscw, &rb, &wb, &cwb),
           7);
  int fd = open("/dev/zero", O_RDONLY);
  CHECK(fd >= 0);
  char b[1000];
  CHECK_EQ(read(fd, b, sizeof(b)), 1000);
  CHECK_OK(close(fd));
  slurp("/proc/self/io");
  unsigned long long rchar2, syscr2;
  CHECK_EQ(sscanf(big, "rchar: %llu\nwchar: %*u\nsyscr: %llu", &rchar2, &syscr2), 2);
  CHECK(rchar2 >= rchar + 1000);
  CHECK(syscr2 >= syscr + 1);
}

static void put_oom(const char *v, int want_errno) {
  int fd = open("/proc/self/oom_score_adj", O_WRONLY);
  CHECK(fd >= 0);
  ssize_t n = write(fd, v, strlen(v));
  if (want_errno) {
    CHECK_EQ(n, -1);
    CHECK_EQ(errno, want_errno);
  } else {
    CHECK_EQ(n, (ssize_t)strlen(v));
  }
  CHECK_OK(close(fd));
}

TEST(oom_score_adj) {
  slurp("/proc/self/oom_score_adj");
  CHECK_EQ(strcmp(big, "0\n"), 0);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    put_oom("123\n", 0);
    slurp("/proc/self/oom_score_adj");
    CHECK_EQ(strcmp(big, "123\n"), 0);
    put_oom("1001", EINVAL);
    put_oom("-1001", EINVAL);
    put_oom("abc", EINVAL);
    // (Not below 0: that needs CAP_SYS_RESOURCE, which the host's root may lack.)
    put_oom(" 1000 ", 0);
    slurp("/proc/self/oom_score_adj");
    CHECK_EQ(strcmp(big, "1000\n"), 0);
    slurp("/proc/self/oom_adj");
    CHECK_EQ(strcmp(big, "15\n"), 0);
    put_oom("500", 0);
    // Inherited over fork; a child's own value does not touch the parent's.
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
      slurp("/proc/self/oom_score_adj");
      CHECK_EQ(strcmp(big, "500\n"), 0);
      put_oom("7", 0);
      _exit(0);
    }
    CHECK_EXIT(c, 0);
    slurp("/proc/self/oom_score_adj");
    CHECK_EQ(strcmp(big, "500\n"), 0);
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", getppid());
    slurp(path);
    CHECK_EQ(strcmp(big, "0\n"), 0);
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
  slurp("/proc/self/oom_score");
  CHECK(atoi(big) >= 0);
}

TEST(smaps_rollup_and_cgroup) {
  slurp("/proc/self/smaps_rollup");
  CHECK(strstr(big, "[rollup]\n") != NULL);
  char val[64];
  CHECK(field("Rss", val, sizeof(val)));
  CHECK(strstr(val, " kB") != NULL);
  CHECK(field("Pss", val, sizeof(val)));
  CHECK(field("Swap", val, sizeof(val)));
  slurp("/proc/self/cgroup");
  CHECK(has_line_with("0::/"));
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/task/%d/status", conf_gettid());
  slurp(path);
  CHECK(field("Cpus_allowed_list", val, sizeof(val)));
}

// /dev: full, random, the std* links and fd, and a tmpfs /dev/shm.
TEST(dev_files) {
  int fd = open("/dev/full", O_RDWR);
  CHECK(fd >= 0);
  CHECK_ERRNO(write(fd, "x", 1), ENOSPC);
  char b[16];
  memset(b, 1, sizeof(b));
  CHECK_EQ(read(fd, b, sizeof(b)), 16);
  CHECK_EQ(b[0] | b[15], 0);
  CHECK_OK(close(fd));
  fd = open("/dev/random", O_RDONLY);
  CHECK(fd >= 0);
  CHECK_EQ(read(fd, b, sizeof(b)), 16);
  CHECK_OK(close(fd));
  readlink_is("/dev/stdin", "/proc/self/fd/0");
  readlink_is("/dev/stdout", "/proc/self/fd/1");
  readlink_is("/dev/stderr", "/proc/self/fd/2");
  readlink_is("/dev/fd", "/proc/self/fd");
  struct stat st;
  CHECK_OK(stat("/dev/fd/0", &st));
  struct statfs sf;
  CHECK_OK(statfs("/dev/shm", &sf));
  CHECK_EQ(sf.f_type, 0x01021994);  // TMPFS_MAGIC
  CHECK_OK(stat("/dev/shm", &st));
  CHECK_EQ(st.st_mode & 07777, 01777);
}

// /proc/PID/fd belongs to the process's effective user: a process that dropped root reads
// its own.
TEST(own_fd_dir_after_setuid) {
  if (geteuid() != 0) return;
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    if (setgid(1000) != 0 || setuid(1000) != 0) _exit(2);
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL) _exit(3);
    closedir(d);
    char buf[64];
    if (readlink("/proc/self/fd/0", buf, sizeof(buf)) < 0) _exit(4);
    struct stat st;
    if (stat("/proc/self/fd", &st) != 0) _exit(5);  // Linux: root-owned once undumpable
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  if (argc > 1) return child_main(argc, argv);
  CHECK(realpath(conf_self, self_real) != NULL);
  argv0 = argv[0];
  // The kernel names a process after the file it executed (the basename
  // of execve's path, which is argv[0] here), cut to 15 bytes.
  const char *base = strrchr(argv[0], '/');
  snprintf(self_comm, sizeof(self_comm), "%s", base ? base + 1 : argv[0]);
  umask(022);
  tmp = conf_tmpdir("procfs");
  RUN(self_links);
  RUN(own_fd_dir_after_setuid);
  RUN(cwd_follows_chdir);
  RUN(fd_directory);
  RUN(fd_reopen_and_fdinfo);
  RUN(status_file);
  RUN(stat_file);
  RUN(cmdline_and_environ);
  RUN(maps_file);
  RUN(mounts_and_mountinfo);
  RUN(comm_and_prctl_name);
  RUN(task_directory);
  RUN(child_states);
  RUN(system_files);
  RUN(system_consistency);
  RUN(sys_tunables);
  RUN(limits_file);
  RUN(status_sched_fields);
  RUN(io_file);
  RUN(oom_score_adj);
  RUN(smaps_rollup_and_cgroup);
  RUN(dev_files);
  conf_tmpdir_remove();
  PASS("procfs");
  return 0;
}
