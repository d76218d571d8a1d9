// PID namespaces (as root, every case in a forked child): unshare(CLONE_NEWPID) makes the
// caller's NEXT child PID 1 of a new namespace (a second fork after that init exited gets
// ENOMEM) and clone(CLONE_NEWPID) makes the child one; inside, getpid() is 1 and getppid() 0,
// processes outside are not there (kill ESRCH), fork and wait give the namespace's numbers
// (wait4, waitid's si_pid, SIGCHLD's si_pid), orphans go to the namespace's init, its init
// ignores signals from inside it has no handler for, and its death kills every other process
// of the namespace before its parent can reap it. A proc mounted inside lists only the
// namespace's processes; NSpid/NStgid in /proc/PID/status and a pidfd's fdinfo give one number
// per level; /proc/PID/ns/pid and pid_for_children; nesting stops at level 32 (ENOSPC, EUSERS
// before Linux 4.9); EINVAL for a second unshare before a fork and for
// CLONE_NEWPID|CLONE_THREAD; EPERM without CAP_SYS_ADMIN, unless a user namespace is made in
// the same clone (as Chrome's sandbox does); setns to a namespace's file (children go there,
// an ancestor is EINVAL); SO_PEERCRED and PTRACE_GETEVENTMSG with the namespace's numbers;
// the pids System V IPC records (msg_lspid/lrpid, shm_cpid/lpid, semctl GETPID) and a POSIX
// message queue's notification si_pid, each as the reader's namespace numbers the process.
#include "common.h"

#include <dirent.h>
#include <mqueue.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/msg.h>
#include <sys/ptrace.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>

// The numbers on the `key` line of the proc file `path` (NSpid and its kin: outermost
// first); returns how many.
static int numbers_in(const char *path, const char *key, long *out, int max) {
  char line[512];
  FILE *f = fopen(path, "r");
  CHECK(f != NULL);
  int n = -1;
  size_t klen = strlen(key);
  while (fgets(line, sizeof(line), f)) {
    if (strncmp(line, key, klen) != 0 || line[klen] != ':') continue;
    n = 0;
    char *p = line + klen + 1;
    while (n < max) {
      char *end;
      long v = strtol(p, &end, 10);
      if (end == p) break;
      out[n++] = v;
      p = end;
    }
  }
  fclose(f);
  CHECK(n > 0);
  return n;
}

// The numbers of the NSpid (or another NS*) line of /proc/<pid>/status ("self" for pid 0).
static int ns_numbers(pid_t pid, const char *key, long *out, int max) {
  char path[64];
  if (pid == 0) {
    snprintf(path, sizeof(path), "/proc/self/status");
  } else {
    snprintf(path, sizeof(path), "/proc/%d/status", pid);
  }
  return numbers_in(path, key, out, max);
}

static pid_t raw_clone(unsigned long flags) {
  return (pid_t)syscall(SYS_clone, flags, 0, 0, 0, 0);
}

// Runs `init` as PID 1 of a new PID namespace; checks that it returned (exit status 0).
// Returns its pid here (reaped).
static pid_t as_new_init(void (*init)(void)) {
  pid_t pid = raw_clone(CLONE_NEWPID | SIGCHLD);
  CHECK(pid >= 0);
  if (pid == 0) {
    init();
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
  return pid;
}

// raw_clone(`flags` | SIGCHLD) with a pipe between parent and child: the child keeps end
// `child_end` (0: it reads, 1: it writes), the parent the other; `*fd` is the caller's end.
static pid_t clone_with_pipe(unsigned long flags, int child_end, int *fd) {
  int p[2];
  CHECK_EQ(pipe(p), 0);
  pid_t pid = raw_clone(flags | SIGCHLD);
  CHECK(pid >= 0);
  int mine = pid == 0 ? child_end : 1 - child_end;
  close(p[1 - mine]);
  *fd = p[mine];
  return pid;
}

// Starts a child (raw_clone(`flags` | SIGCHLD)) that only waits until `*release`, the write
// end of its pipe, is closed, then exits 0: a process to look at while it lives.
static pid_t start_parked(unsigned long flags, int *release) {
  int fd;
  pid_t pid = clone_with_pipe(flags, 0, &fd);
  if (pid == 0) {
    char x;
    (void)!read(fd, &x, 1);
    _exit(0);
  }
  *release = fd;
  return pid;
}

static ino_t ns_ino(const char *which) {
  struct stat st;
  CHECK_EQ(stat(which, &st), 0);
  return st.st_ino;
}

// unshare(CLONE_NEWPID): the caller stays where it is; its next child is PID 1 with no
// parent in its namespace; once that init has exited, another fork fails with ENOMEM.
static void unshare_case(void) {
  pid_t me = getpid();
  ino_t own = ns_ino("/proc/self/ns/pid");
  CHECK_EQ(ns_ino("/proc/self/ns/pid_for_children"), own);
  CHECK_EQ(unshare(CLONE_NEWPID), 0);
  CHECK_EQ(getpid(), me);
  CHECK_EQ(ns_ino("/proc/self/ns/pid"), own);
  // pid_for_children has nothing to show until the namespace has its init.
  struct stat st;
  CHECK_ERRNO(stat("/proc/self/ns/pid_for_children", &st), ENOENT);
  // Only one new namespace per fork.
  CHECK_ERRNO(unshare(CLONE_NEWPID), EINVAL);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    if (getpid() != 1 || getppid() != 0) _exit(2);
    if (syscall(SYS_gettid) != 1) _exit(3);
    if (kill(me, 0) != -1 || errno != ESRCH) _exit(4);
    // This /proc is the outer namespace's: the parent is there by its number.
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/ns/pid_for_children", me);
    ino_t own_now = ns_ino("/proc/self/ns/pid");
    if (own_now == own || ns_ino(path) != own_now) _exit(5);
    _exit(0);
  }
  CHECK(pid != 1);
  CHECK_EXIT(pid, 0);
  CHECK(ns_ino("/proc/self/ns/pid_for_children") != own);
  CHECK_ERRNO(fork(), ENOMEM);
}

// clone(CLONE_NEWPID): the child is the init; the parent sees it under its own number.
static void clone_case(void) {
  pid_t me = getpid();
  pid_t pid = raw_clone(CLONE_NEWPID | SIGCHLD);
  CHECK(pid >= 0);
  if (pid == 0) {
    if (getpid() != 1 || getppid() != 0) _exit(2);
    if (kill(me, 0) != -1 || errno != ESRCH) _exit(3);
    if (kill(-me, 0) != -1 || errno != ESRCH) _exit(4);
    if (syscall(SYS_tgkill, me, me, 0) != -1 || errno != ESRCH) _exit(5);
    _exit(7);
  }
  CHECK(pid != 1);
  CHECK_EQ(kill(pid, 0), 0);
  CHECK_EXIT(pid, 7);
  // Bad mixes.
  CHECK_ERRNO(raw_clone(CLONE_NEWPID | CLONE_THREAD | CLONE_SIGHAND | CLONE_VM), EINVAL);
}

static volatile sig_atomic_t chld_pid;
static void on_chld(int sig, siginfo_t *si, void *ctx) {
  (void)sig;
  (void)ctx;
  chld_pid = si->si_pid;
}

// Inside: fork returns the namespace's numbers, and wait4, waitid and SIGCHLD report them.
static void init_waits(void) {
  struct sigaction sa = {0};
  sa.sa_sigaction = on_chld;
  sa.sa_flags = SA_SIGINFO;
  CHECK_EQ(sigaction(SIGCHLD, &sa, NULL), 0);
  pid_t a = fork();
  CHECK(a >= 0);
  if (a == 0) _exit(3);
  CHECK_EQ(a, 2);
  int st;
  CHECK_EQ(waitpid(a, &st, 0), 2);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 3);
  CHECK_EQ(chld_pid, 2);
  pid_t b = fork();
  CHECK(b >= 0);
  if (b == 0) _exit(4);
  CHECK_EQ(b, 3);
  siginfo_t si = {0};
  CHECK_EQ(waitid(P_PID, 3, &si, WEXITED), 0);
  CHECK_EQ(si.si_pid, 3);
  CHECK_EQ(si.si_status, 4);
  // A thread-group id of the namespace in tgkill, and getpgid/getsid by its number.
  CHECK_EQ(getpgid(0), getpgid(1));
  CHECK_ERRNO(waitpid(-1, NULL, WNOHANG), ECHILD);
  // A process group outlives its reaped leader, under its number.
  int q[2];
  CHECK_EQ(pipe(q), 0);
  pid_t leader = fork();
  CHECK(leader >= 0);
  if (leader == 0) {
    setpgid(0, 0);
    pid_t m = fork();
    if (m == 0) {
      close(q[1]);
      char x;
      (void)!read(q[0], &x, 1);
      _exit(0);
    }
    _exit(0);
  }
  close(q[0]);
  CHECK_EQ(waitpid(leader, &st, 0), leader);
  CHECK_EQ(kill(-leader, 0), 0);
  CHECK_EQ(getpgid(leader + 1), leader);
  close(q[1]);
  CHECK_EQ(waitpid(-1, &st, 0), leader + 1);  // the member, orphaned to us
  // An init may not make siblings of itself.
  CHECK_ERRNO(raw_clone(CLONE_PARENT | SIGCHLD), EINVAL);
}

static void waits_case(void) {
  as_new_init(init_waits);
}

// The init of a namespace drops signals from inside that it has no handler for (SIGKILL
// included); from its parent's namespace SIGKILL reaches it.
static void signals_case(void) {
  int fd;  // the init writes, we read
  pid_t pid = clone_with_pipe(CLONE_NEWPID, 1, &fd);
  if (pid == 0) {
    pid_t c = fork();
    if (c == 0) {
      if (kill(1, SIGTERM) != 0 || kill(1, SIGKILL) != 0) _exit(2);
      _exit(0);
    }
    int st;
    if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0) _exit(3);
    CHECK_EQ(write(fd, "x", 1), 1);  // still alive
    pause();
    _exit(1);
  }
  char x;
  conf_read_full(fd, &x, 1);
  close(fd);
  CHECK_EQ(kill(pid, SIGKILL), 0);
  CHECK_KILLED(pid, SIGKILL);
}

// The death of the init kills the rest of the namespace, and they are gone before the
// init's parent can reap it: the grandchild's end of a pipe is closed by then.
static void init_death_case(void) {
  int fd;  // the init's end is held by its grandchild too
  pid_t pid = clone_with_pipe(CLONE_NEWPID, 1, &fd);
  if (pid == 0) {
    int q[2];
    if (pipe(q) != 0) _exit(2);
    pid_t g = fork();
    if (g == 0) {
      signal(SIGTERM, SIG_IGN);
      if (write(q[1], "g", 1) != 1) _exit(2);
      for (;;) pause();  // keeps the pipe's write end open while it lives
    }
    char x;
    if (read(q[0], &x, 1) != 1) _exit(3);
    close(fd);
    _exit(5);  // without waiting for g
  }
  CHECK_EXIT(pid, 5);
  CHECK_EQ(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
  char x;
  CHECK_EQ(read(fd, &x, 1), 0);  // end of file, not EAGAIN: the grandchild is gone
  close(fd);
}

// An orphan goes to the namespace's init, which can wait for it.
static void init_orphans(void) {
  int p[2];
  CHECK_EQ(pipe(p), 0);
  pid_t a = fork();
  CHECK(a >= 0);
  if (a == 0) {
    pid_t b = fork();
    if (b == 0) {
      close(p[1]);
      char x;
      if (read(p[0], &x, 1) != 0) _exit(2);  // until a is gone
      for (int i = 0; i < 1000 && getppid() != 1; i++) usleep(1000);
      _exit(getppid() == 1 ? 9 : 3);
    }
    _exit(b == 3 ? 0 : 4);
  }
  close(p[0]);
  CHECK_EXIT(a, 0);
  close(p[1]);  // b goes on
  int st;
  CHECK_EQ(waitpid(3, &st, 0), 3);
  CHECK(WIFEXITED(st));
  CHECK_EQ(WEXITSTATUS(st), 9);
}

static void orphans_case(void) {
  as_new_init(init_orphans);
}

// A proc mounted inside shows the namespace only, with its numbers; /proc/self resolves.
static void init_proc(void) {
  CHECK_EQ(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
  CHECK_EQ(mount("proc", "/proc", "proc", 0, NULL), 0);
  int release;
  pid_t c = start_parked(0, &release);
  char buf[64];
  ssize_t n = readlink("/proc/self", buf, sizeof(buf) - 1);
  CHECK(n > 0);
  buf[n] = '\0';
  CHECK(strcmp(buf, "1") == 0);
  DIR *d = opendir("/proc");
  CHECK(d != NULL);
  int count = 0, seen1 = 0, seen2 = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    count++;
    seen1 |= strcmp(e->d_name, "1") == 0;
    seen2 |= strcmp(e->d_name, "2") == 0;
  }
  closedir(d);
  CHECK_EQ(count, 2);
  CHECK(seen1 && seen2);
  long v[40];
  CHECK_EQ(ns_numbers(0, "NSpid", v, 40), 1);
  CHECK_EQ(v[0], 1);
  CHECK_EQ(ns_numbers(2, "NStgid", v, 40), 1);
  CHECK_EQ(v[0], 2);
  CHECK_EQ(ns_numbers(2, "PPid", v, 40), 1);
  CHECK_EQ(v[0], 1);
  close(release);
  CHECK_EXIT(c, 0);
}

static void proc_case(void) {
  CHECK_EQ(unshare(CLONE_NEWNS), 0);
  as_new_init(init_proc);
}

// NSpid, NStgid, NSpgid and NSsid in the outer proc: the outer numbers, then the inner ones.
static void nspid_case(void) {
  long outer[40], v[40];
  int levels = ns_numbers(0, "NSpid", outer, 40);
  int release;
  pid_t pid = start_parked(CLONE_NEWPID, &release);
  CHECK_EQ(ns_numbers(pid, "NSpid", v, 40), levels + 1);
  CHECK_EQ(v[levels - 1], pid);
  CHECK_EQ(v[levels], 1);
  CHECK_EQ(ns_numbers(pid, "NStgid", v, 40), levels + 1);
  CHECK_EQ(v[levels], 1);
  // Its process group and session are its parent's, which have no number inside.
  CHECK_EQ(ns_numbers(pid, "NSpgid", v, 40), levels + 1);
  CHECK_EQ(v[levels - 1], getpgid(0));
  CHECK_EQ(v[levels], 0);
  CHECK_EQ(ns_numbers(pid, "NSsid", v, 40), levels + 1);
  CHECK_EQ(v[levels], 0);
  // A pidfd's fdinfo numbers the process as this proc does, down to its own namespace.
  int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  CHECK(pidfd >= 0);
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
  long fdinfo[40];
  CHECK_EQ(numbers_in(path, "Pid", fdinfo, 40), 1);
  CHECK_EQ(fdinfo[0], pid);
  CHECK_EQ(ns_numbers(pid, "NSpid", v, 40), levels + 1);
  CHECK_EQ(numbers_in(path, "NSpid", fdinfo, 40), levels + 1);
  for (int i = 0; i <= levels; i++) CHECK_EQ(fdinfo[i], v[i]);
  close(pidfd);
  close(release);
  CHECK_EXIT(pid, 0);
}

// System V IPC objects made outside, used by the init of a new namespace: inside, the pids
// they record are the namespace's (1 for its init, 0 for the creator outside); outside, the
// init's outer pid. A POSIX queue's notification names the sender as the notified process's
// namespace numbers it.
static int ipc_msq, ipc_shm, ipc_sem;

static void init_ipc(void) {
  struct {
    long type;
    char text[4];
  } msg = {1, "abc"};
  CHECK_EQ(msgsnd(ipc_msq, &msg, sizeof(msg.text), 0), 0);
  struct msqid_ds mds;
  CHECK_EQ(msgctl(ipc_msq, IPC_STAT, &mds), 0);
  CHECK_EQ(mds.msg_lspid, 1);
  void *at = shmat(ipc_shm, NULL, 0);
  CHECK(at != (void *)-1);
  CHECK_EQ(shmdt(at), 0);
  struct shmid_ds sds;
  CHECK_EQ(shmctl(ipc_shm, IPC_STAT, &sds), 0);
  CHECK_EQ(sds.shm_lpid, 1);
  CHECK_EQ(sds.shm_cpid, 0);  // made outside: no number here
  struct sembuf op = {0, 1, 0};
  CHECK_EQ(semop(ipc_sem, &op, 1), 0);
  CHECK_EQ(semctl(ipc_sem, 0, GETPID), 1);
  // A child of this init sends to a queue this init watches: si_pid is the child's number
  // here, not the sandbox's.
  char name[64];
  snprintf(name, sizeof(name), "/conf-pidns-%d", (int)getppid() + (int)time(NULL));
  struct mq_attr attr = {.mq_maxmsg = 4, .mq_msgsize = 8};
  mqd_t q = mq_open(name, O_CREAT | O_EXCL | O_RDWR, 0600, &attr);
  CHECK(q != (mqd_t)-1);
  CHECK_EQ(mq_unlink(name), 0);
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  CHECK_EQ(sigprocmask(SIG_BLOCK, &usr1, NULL), 0);
  struct sigevent ev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1};
  CHECK_EQ(mq_notify(q, &ev), 0);
  pid_t child = fork();
  CHECK(child >= 0);
  if (child == 0) _exit(mq_send(q, "x", 1, 0) == 0 ? 0 : 1);
  CHECK_EQ(child, 2);
  siginfo_t si;
  struct timespec ten = {10, 0};
  CHECK_EQ(sigtimedwait(&usr1, &si, &ten), SIGUSR1);
  CHECK_EQ(si.si_code, SI_MESGQ);
  CHECK_EQ(si.si_pid, child);
  CHECK_EXIT(child, 0);
  mq_close(q);
}

static void ipc_case(void) {
  ipc_msq = msgget(IPC_PRIVATE, 0600);
  ipc_shm = shmget(IPC_PRIVATE, 4096, 0600);
  ipc_sem = semget(IPC_PRIVATE, 1, 0600);
  CHECK(ipc_msq >= 0 && ipc_shm >= 0 && ipc_sem >= 0);
  pid_t pid = as_new_init(init_ipc);
  struct msqid_ds mds;
  CHECK_EQ(msgctl(ipc_msq, IPC_STAT, &mds), 0);
  CHECK_EQ(mds.msg_lspid, pid);
  struct shmid_ds sds;
  CHECK_EQ(shmctl(ipc_shm, IPC_STAT, &sds), 0);
  CHECK_EQ(sds.shm_lpid, pid);
  CHECK_EQ(sds.shm_cpid, getpid());
  CHECK_EQ(semctl(ipc_sem, 0, GETPID), pid);
  CHECK_EQ(msgctl(ipc_msq, IPC_RMID, NULL), 0);
  CHECK_EQ(shmctl(ipc_shm, IPC_RMID, NULL), 0);
  CHECK_EQ(semctl(ipc_sem, 0, IPC_RMID), 0);
}

// Nesting: unshare and fork down to level 32; the next unshare fails with ENOSPC. Each
// level reports the result of the one below in its exit status.
static int nest(int depth) {
  if (unshare(CLONE_NEWPID) != 0) return errno == ENOSPC ? 100 + depth : 1;
  pid_t pid = fork();
  if (pid < 0) return 2;
  if (pid == 0) _exit(nest(depth + 1));
  int st;
  if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) return 3;
  return WEXITSTATUS(st);
}

static void nesting_case(void) {
  long v[40];
  int base = ns_numbers(0, "NSpid", v, 40) - 1;  // our level, seen from this proc
  CHECK_EQ(nest(base), 100 + 32);
}

// setns to a namespace's file: the caller stays, its children go there (the init's number
// is taken: the child gets 2, with no parent there); back to an ancestor is EINVAL.
static void setns_case(void) {
  int outer = open("/proc/self/ns/pid", O_RDONLY);
  CHECK(outer >= 0);
  int release;
  pid_t init = start_parked(CLONE_NEWPID, &release);
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/ns/pid", init);
  int inner = open(path, O_RDONLY);
  CHECK(inner >= 0);
  pid_t me = getpid();
  CHECK_EQ(setns(inner, CLONE_NEWPID), 0);
  CHECK_EQ(getpid(), me);
  pid_t c = fork();
  CHECK(c >= 0);
  if (c == 0) {
    if (getpid() != 2 || getppid() != 0) _exit(2);
    if (setns(outer, CLONE_NEWPID) != -1 || errno != EINVAL) _exit(3);
    _exit(0);
  }
  CHECK_EXIT(c, 0);
  CHECK_ERRNO(setns(inner, CLONE_NEWNET), EINVAL);  // the wrong type
  close(release);
  CHECK_EXIT(init, 0);
  close(inner);
  close(outer);
}

// ptrace inside: the fork event's new pid (PTRACE_GETEVENTMSG) is the namespace's number.
static void init_ptrace(void) {
  pid_t c = fork();
  CHECK(c >= 0);
  if (c == 0) {
    if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0) _exit(2);
    raise(SIGSTOP);
    pid_t g = fork();
    if (g == 0) _exit(0);
    waitpid(g, NULL, 0);
    _exit(0);
  }
  CHECK_EQ(c, 2);
  int st;
  CHECK_EQ(waitpid(c, &st, 0), 2);
  CHECK(WIFSTOPPED(st));
  CHECK_EQ(ptrace(PTRACE_SETOPTIONS, c, 0, PTRACE_O_TRACEFORK), 0);
  CHECK_EQ(ptrace(PTRACE_CONT, c, 0, 0), 0);
  CHECK_EQ(waitpid(c, &st, 0), 2);
  CHECK(WIFSTOPPED(st));
  CHECK_EQ(st >> 8, SIGTRAP | (PTRACE_EVENT_FORK << 8));
  unsigned long msg = 0;
  CHECK_EQ(ptrace(PTRACE_GETEVENTMSG, c, 0, &msg), 0);
  CHECK_EQ(msg, 3);
  CHECK_EQ(ptrace(PTRACE_DETACH, c, 0, 0), 0);
  // The traced grandchild starts stopped: let it go.
  CHECK_EQ(waitpid(3, &st, __WALL), 3);
  CHECK_EQ(ptrace(PTRACE_DETACH, 3, 0, 0), 0);
  CHECK_EQ(waitpid(c, &st, 0), 2);
  CHECK(WIFEXITED(st));
}

static void ptrace_case(void) {
  as_new_init(init_ptrace);
}

// A user namespace makes the rest possible without privilege (Chrome's sandbox does this
// in one clone), and SO_PEERCRED shows the peer's number in the namespace.
static void unprivileged_case(void) {
  CHECK_EQ(setresuid(1000, 1000, 1000), 0);
  pid_t pid = raw_clone(CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | SIGCHLD);
  CHECK(pid >= 0);
  if (pid == 0) {
    if (getpid() != 1 || getppid() != 0) _exit(2);
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) _exit(3);
    pid_t c = fork();
    if (c == 0) {
      struct ucred u;
      socklen_t len = sizeof(u);
      if (getsockopt(sv[1], SOL_SOCKET, SO_PEERCRED, &u, &len) != 0) _exit(4);
      _exit(u.pid == 1 ? 0 : 5);
    }
    int st;
    if (waitpid(c, &st, 0) != c || !WIFEXITED(st)) _exit(6);
    if (WEXITSTATUS(st) != 0) _exit(WEXITSTATUS(st));
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
}

static void eperm_case(void) {
  CHECK_EQ(setresuid(1000, 1000, 1000), 0);
  CHECK_ERRNO(unshare(CLONE_NEWPID), EPERM);
  CHECK_ERRNO(raw_clone(CLONE_NEWPID | SIGCHLD), EPERM);
}

TEST(unshare) { conf_in_child(unshare_case); }
TEST(clone) { conf_in_child(clone_case); }
TEST(waits) { conf_in_child(waits_case); }
TEST(signals) { conf_in_child(signals_case); }
TEST(init_death) { conf_in_child(init_death_case); }
TEST(orphans) { conf_in_child(orphans_case); }
TEST(proc) { conf_in_child(proc_case); }
TEST(nspid) { conf_in_child(nspid_case); }
TEST(ipc) { conf_in_child(ipc_case); }
TEST(nesting) { conf_in_child(nesting_case); }
TEST(setns) { conf_in_child(setns_case); }
TEST(ptrace) { conf_in_child(ptrace_case); }
TEST(unprivileged) { conf_in_child(unprivileged_case); }
TEST(eperm) { conf_in_child(eperm_case); }

int main(int argc, char **argv) {
  conf_init(argc, argv);
  RUN(unshare);
  RUN(clone);
  RUN(waits);
  RUN(signals);
  RUN(init_death);
  RUN(orphans);
  RUN(proc);
  RUN(nspid);
  RUN(ipc);
  RUN(nesting);
  RUN(setns);
  RUN(ptrace);
  RUN(unprivileged);
  RUN(eperm);
  PASS("pidns");
  return 0;
}
