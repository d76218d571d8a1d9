// /proc: the per-process files (exe, cwd, fd, fdinfo, status, stat,
// cmdline, environ, maps, mounts, mountinfo, comm, task), /proc/self and
// /proc/thread-self, process states of other processes (R, S, T, Z), and
// the system-wide files (cpuinfo, meminfo, uptime, loadavg, filesystems,
// sys/kernel/osrelease and hostname).
//
// Works in its own scratch directory under /tmp (conf_tmpdir).

#include "common.h"

#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
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
  conf_tmpdir_remove();
  PASS("procfs");
  return 0;
}
