// ptrace between processes: TRACEME and the exec SIGTRAP, syscall stops with
// TRACESYSGOOD (changing the number, skipping, changing the result,
// GET_SYSCALL_INFO), PEEK/POKE of data, text and the user area, registers,
// PTRACE_EVENT stops for clone/fork/exec/exit with auto-attached children,
// single steps, signal-delivery-stops (suppress, replace, SETSIGINFO), SEIZE with
// INTERRUPT and LISTEN around a group-stop, /proc TracerPid and state, and
// the errnos (EPERM, ESRCH, EIO).
#include "common.h"

#include <elf.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>

#define WALL __WALL

static volatile long poke_target = 0x1111;

// Waits for `pid` (any traced task with -1) and returns its status.
static int wait_tracee(pid_t pid, pid_t *who) {
  int status = 0;
  pid_t r;
  do {
    r = waitpid(pid, &status, WALL);
  } while (r == -1 && errno == EINTR);
  CHECK(r > 0);
  if (who) *who = r;
  return status;
}

static void expect_stop(pid_t pid, int sig) {
  int status = wait_tracee(pid, NULL);
  CHECK(WIFSTOPPED(status));
  CHECK_EQ(WSTOPSIG(status), sig);
  CHECK_EQ(status >> 16, 0);
}

// A child that asks to be traced and stops itself; returns its pid, stopped.
static pid_t traced_child(void (*body)(void)) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0) _exit(90);
    raise(SIGSTOP);
    body();
    _exit(0);
  }
  expect_stop(pid, SIGSTOP);
  return pid;
}

// The value of `key` in /proc/PID/status, as a string.
static void status_field(pid_t pid, const char *key, char *out, size_t cap) {
  char path[64], buf[4096];
  snprintf(path, sizeof(path), "/proc/%d/status", pid);
  size_t n = conf_get_file(path, buf, sizeof(buf) - 1);
  buf[n] = '\0';
  char *p = strstr(buf, key);
  CHECK(p != NULL);
  p += strlen(key);
  while (*p == '\t' || *p == ' ') p++;
  size_t i = 0;
  while (p[i] && p[i] != '\n' && i + 1 < cap) {
    out[i] = p[i];
    i++;
  }
  out[i] = '\0';
}

static void nothing(void) {}

TEST(traceme_exec_sigtrap) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0) _exit(90);
    if (ptrace(PTRACE_TRACEME, 0, 0, 0) != -1 || errno != EPERM) _exit(91);
    execl(conf_self, conf_self, "exit", "7", (char *)NULL);
    _exit(92);
  }
  // Without PTRACE_O_TRACEEXEC, a successful exec stops with a plain SIGTRAP.
  expect_stop(pid, SIGTRAP);
  siginfo_t si;
  CHECK_OK(ptrace(PTRACE_GETSIGINFO, pid, 0, &si));
  CHECK_EQ(si.si_signo, SIGTRAP);
  char v[64];
  status_field(pid, "TracerPid:", v, sizeof(v));
  CHECK_EQ(atoi(v), getpid());
  status_field(pid, "State:", v, sizeof(v));
  CHECK(strcmp(v, "t (tracing stop)") == 0);
  CHECK_OK(ptrace(PTRACE_CONT, pid, 0, 0));
  CHECK_EXIT(pid, 7);
}

static void syscalls_body(void) {
  long a = syscall(SYS_getuid);   // turned into getppid at entry
  long b = syscall(SYS_getgid);   // skipped; the tracer sets the result
  long c = syscall(SYS_geteuid);  // result changed at exit
  if (a != getppid()) _exit(10);
  if (b != 4242) _exit(11);
  if (c != 777) _exit(12);
}

TEST(syscall_stops) {
  pid_t pid = traced_child(syscalls_body);
  CHECK_OK(ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL));
  int entries = 0, exits = 0, changed = 0;
  for (;;) {
    CHECK_OK(ptrace(PTRACE_SYSCALL, pid, 0, 0));
    int status = wait_tracee(pid, NULL);
    if (WIFEXITED(status)) {
      CHECK_EQ(WEXITSTATUS(status), 0);
      break;
    }
    CHECK(WIFSTOPPED(status));
    CHECK_EQ(WSTOPSIG(status), SIGTRAP | 0x80);
    struct __ptrace_syscall_info info;
    long size = ptrace(PTRACE_GET_SYSCALL_INFO, pid, sizeof(info), &info);
    CHECK(size > 0);
    CHECK_EQ(info.arch, 0xc000003e);  // AUDIT_ARCH_X86_64
    struct user_regs_struct regs;
    CHECK_OK(ptrace(PTRACE_GETREGS, pid, 0, &regs));
    CHECK_EQ(info.instruction_pointer, regs.rip);
    CHECK_EQ(info.stack_pointer, regs.rsp);
    if (info.op == PTRACE_SYSCALL_INFO_ENTRY) {
      entries++;
      CHECK_EQ(size, offsetof(struct __ptrace_syscall_info, entry.args) + 6 * 8);
      CHECK_EQ(info.entry.nr, regs.orig_rax);
      CHECK_EQ(info.entry.args[0], regs.rdi);
      CHECK_EQ((long)regs.rax, -ENOSYS);
      if (regs.orig_rax == SYS_getuid) {
        regs.orig_rax = SYS_getppid;
        changed++;
      } else if (regs.orig_rax == SYS_getgid) {
        regs.orig_rax = -1;
        changed++;
      }
      CHECK_OK(ptrace(PTRACE_SETREGS, pid, 0, &regs));
    } else {
      CHECK_EQ(info.op, PTRACE_SYSCALL_INFO_EXIT);
      exits++;
      CHECK_EQ(info.exit.rval, (long)regs.rax);
      if ((long)regs.orig_rax == -1) {
        CHECK_EQ((long)regs.rax, -ENOSYS);
        CHECK_EQ(info.exit.is_error, 1);
        regs.rax = 4242;
        changed++;
      } else if (regs.orig_rax == SYS_geteuid) {
        regs.rax = 777;
        changed++;
      }
      CHECK_OK(ptrace(PTRACE_SETREGS, pid, 0, &regs));
    }
  }
  CHECK_EQ(changed, 4);
  CHECK(entries >= 5);
  CHECK_EQ(exits, entries - 1);  // exit_group has no exit stop
}

static void poke_body(void) {
  if (poke_target != 0x2222) _exit(20);
}

TEST(peek_poke) {
  pid_t pid = traced_child(poke_body);
  errno = 0;
  long w = ptrace(PTRACE_PEEKDATA, pid, &poke_target, 0);
  CHECK_EQ(errno, 0);
  CHECK_EQ(w, 0x1111);
  CHECK_OK(ptrace(PTRACE_POKEDATA, pid, &poke_target, 0x2222));
  // Text: read-only in the tracee, yet a tracer may write it (breakpoints).
  long text;
  memcpy(&text, (void *)&poke_body, sizeof(text));
  errno = 0;
  CHECK_EQ(ptrace(PTRACE_PEEKTEXT, pid, &poke_body, 0), text);
  CHECK_EQ(errno, 0);
  CHECK_OK(ptrace(PTRACE_POKETEXT, pid, &poke_body, text ^ 0xff));
  CHECK_EQ(ptrace(PTRACE_PEEKTEXT, pid, &poke_body, 0), text ^ 0xff);
  CHECK_OK(ptrace(PTRACE_POKETEXT, pid, &poke_body, text));
  CHECK_ERRNO(ptrace(PTRACE_PEEKDATA, pid, (void *)8, 0), EIO);
  CHECK_ERRNO(ptrace(PTRACE_POKEDATA, pid, (void *)8, 0), EIO);
  // The user area: registers as GETREGS has them, debug registers zero.
  struct user_regs_struct regs;
  CHECK_OK(ptrace(PTRACE_GETREGS, pid, 0, &regs));
  errno = 0;
  CHECK_EQ(ptrace(PTRACE_PEEKUSER, pid, offsetof(struct user, regs.rip), 0), (long)regs.rip);
  CHECK_EQ(ptrace(PTRACE_PEEKUSER, pid, offsetof(struct user, regs.rsp), 0), (long)regs.rsp);
  CHECK_EQ(ptrace(PTRACE_PEEKUSER, pid, offsetof(struct user, u_debugreg[7]), 0), 0);
  CHECK_EQ(ptrace(PTRACE_PEEKUSER, pid, offsetof(struct user, u_debugreg[6]), 0) & 0xf, 0);
  CHECK_EQ(errno, 0);
  CHECK_ERRNO(ptrace(PTRACE_PEEKUSER, pid, 3, 0), EIO);
  CHECK_ERRNO(ptrace(PTRACE_PEEKUSER, pid, 0x10000, 0), EIO);
  CHECK_OK(ptrace(PTRACE_POKEUSER, pid, offsetof(struct user, regs.r12), 0x5a5a));
  CHECK_EQ(ptrace(PTRACE_PEEKUSER, pid, offsetof(struct user, regs.r12), 0), 0x5a5a);
  CHECK_OK(ptrace(PTRACE_POKEUSER, pid, offsetof(struct user, regs.r12), regs.r12));
  CHECK_OK(ptrace(PTRACE_CONT, pid, 0, 0));
  CHECK_EXIT(pid, 0);
}

static void regs_body(void) {
  long r = syscall(SYS_tgkill, getpid(), conf_gettid(), SIGSTOP);
  if (r != 99) _exit(30);
}

TEST(registers) {
  pid_t pid = traced_child(regs_body);
  CHECK_OK(ptrace(PTRACE_CONT, pid, 0, 0));
  expect_stop(pid, SIGSTOP);  // the tgkill's signal-delivery-stop, after the syscall
  struct user_regs_struct regs;
  CHECK_OK(ptrace(PTRACE_GETREGS, pid, 0, &regs));
  CHECK_EQ(regs.orig_rax, SYS_tgkill);
  CHECK_EQ(regs.rax, 0);
  CHECK_EQ(regs.rdx, SIGSTOP);
  // GETREGSET NT_PRSTATUS is the same block; NT_PRFPREG is the fxsave area.
  struct user_regs_struct set_regs;
  struct iovec iov = {&set_regs, sizeof(set_regs)};
  CHECK_OK(ptrace(PTRACE_GETREGSET, pid, NT_PRSTATUS, &iov));
  CHECK_EQ(iov.iov_len, sizeof(set_regs));
  CHECK(memcmp(&set_regs, &regs, sizeof(regs)) == 0);
  struct user_fpregs_struct fp, fp2;
  CHECK_OK(ptrace(PTRACE_GETFPREGS, pid, 0, &fp));
  CHECK_EQ(fp.mxcsr & 0xffc0, 0x1f80);
  iov.iov_base = &fp2;
  iov.iov_len = sizeof(fp2);
  CHECK_OK(ptrace(PTRACE_GETREGSET, pid, NT_PRFPREG, &iov));
  CHECK_EQ(iov.iov_len, sizeof(fp2));
  CHECK(memcmp(&fp, &fp2, sizeof(fp)) == 0);
  fp.xmm_space[0] = 0x12345678;
  CHECK_OK(ptrace(PTRACE_SETFPREGS, pid, 0, &fp));
  CHECK_OK(ptrace(PTRACE_GETFPREGS, pid, 0, &fp2));
  CHECK_EQ(fp2.xmm_space[0], 0x12345678);
  // A changed result; cs cannot change.
  regs.rax = 99;
  CHECK_OK(ptrace(PTRACE_SETREGS, pid, 0, &regs));
  struct user_regs_struct bad = regs;
  bad.cs = 0x1234;
  CHECK_ERRNO(ptrace(PTRACE_SETREGS, pid, 0, &bad), EIO);
  CHECK_OK(ptrace(PTRACE_CONT, pid, 0, 0));  // SIGSTOP suppressed
  CHECK_EXIT(pid, 0);
}

static volatile int step_counter;

static void step_body(void) {
  for (int i = 0; i < 100; i++) step_counter++;
  syscall(SYS_getppid);
  for (int i = 0; i < 100; i++) step_counter++;
}

// Single steps: each stops with SIGTRAP and TF never shows; a step over a syscall instruction
// stops right after it (x86 Linux reports that one as TRAP_BRKPT).
TEST(single_step) {
  pid_t pid = traced_child(step_body);
  struct user_regs_struct before, after;
  CHECK_OK(ptrace(PTRACE_GETREGS, pid, 0, &before));
  int syscalls = 0;
  for (int i = 0; i < 5000 && syscalls < 1; i++) {
    errno = 0;
    long insn = ptrace(PTRACE_PEEKTEXT, pid, before.rip, 0);
    CHECK_EQ(errno, 0);
    CHECK_OK(ptrace(PTRACE_SINGLESTEP, pid, 0, 0));
    expect_stop(pid, SIGTRAP);
    siginfo_t si;
    CHECK_OK(ptrace(PTRACE_GETSIGINFO, pid, 0, &si));
    CHECK_EQ(si.si_signo, SIGTRAP);
    CHECK_OK(ptrace(PTRACE_GETREGS, pid, 0, &after));
    CHECK_EQ(after.eflags & 0x100, 0);  // the tracer's TF does not show
    if ((insn & 0xffff) == 0x050f) {
      CHECK_EQ(after.rip, before.rip + 2);
      CHECK_EQ(si.si_code, TRAP_BRKPT);
      syscalls++;
    } else {
      CHECK_EQ(si.si_code, TRAP_TRACE);
    }
    before = after;
  }
  CHECK_EQ(syscalls, 1);  // getppid
  CHECK_OK(ptrace(PTRACE_CONT, pid, 0, 0));
  CHECK_EXIT(pid, 0);
}

static void *thread_fn(void *arg) { return arg; }

static void events_body(void) {
  pthread_t th;
  if (pthread_create(&th, NULL, thread_fn, NULL) != 0) _exit(40);
  if (pthread_join(th, NULL) != 0) _exit(41);
  pid_t gc = fork();
  if (gc == 0) _exit(3);
  int st;
  if (waitpid(gc, &st, 0) != gc || !WIFEXITED(st) || WEXITSTATUS(st) != 3) _exit(42);
  execl(conf_self, conf_self, "exit", "5", (char *)NULL);
  _exit(43);
}

enum {
  kSawClone = 1,
  kSawThreadStop = 2,
  kSawThreadExitEvent = 4,
  kSawThreadExit = 8,
  kSawFork = 16,
  kSawGcStop = 32,
  kSawGcExitEvent = 64,
  kSawGcExit = 128,
  kSawExec = 256,
  kSawExitEvent = 512,
};

TEST(event_stops) {
  pid_t pid = traced_child(events_body);
  CHECK_OK(ptrace(PTRACE_SETOPTIONS, pid, 0,
                  PTRACE_O_TRACEFORK | PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC |
                      PTRACE_O_TRACEEXIT));
  CHECK_OK(ptrace(PTRACE_CONT, pid, 0, 0));
  pid_t thread = 0, gc = 0;
  int seen = 0;
  for (;;) {
    pid_t who;
    int status = wait_tracee(-1, &who);
    if (who == pid && WIFEXITED(status)) {
      CHECK_EQ(WEXITSTATUS(status), 5);
      break;
    }
    unsigned long msg = 0;
    if (WIFEXITED(status)) {
      if (who == thread) {
        seen |= kSawThreadExit;
      } else {
        CHECK_EQ(who, gc);
        CHECK_EQ(WEXITSTATUS(status), 3);
        seen |= kSawGcExit;
      }
      continue;
    }
    CHECK(WIFSTOPPED(status));
    int event = status >> 16;
    if (event != 0) {
      CHECK_EQ(WSTOPSIG(status), SIGTRAP);
      CHECK_OK(ptrace(PTRACE_GETEVENTMSG, who, 0, &msg));
      siginfo_t si;
      CHECK_OK(ptrace(PTRACE_GETSIGINFO, who, 0, &si));
      CHECK_EQ(si.si_code, SIGTRAP | (event << 8));
    }
    if (who == pid && event == PTRACE_EVENT_CLONE) {
      thread = (pid_t)msg;
      seen |= kSawClone;
    } else if (who == pid && event == PTRACE_EVENT_FORK) {
      gc = (pid_t)msg;
      seen |= kSawFork;
    } else if (who == pid && event == PTRACE_EVENT_EXEC) {
      CHECK_EQ(msg, pid);
      seen |= kSawExec;
    } else if (who == pid && event == PTRACE_EVENT_EXIT) {
      CHECK_EQ(msg, 5 << 8);
      seen |= kSawExitEvent;
    } else if (event == PTRACE_EVENT_EXIT) {
      if (who == thread) {
        seen |= kSawThreadExitEvent;
      } else {
        CHECK_EQ(msg, 3 << 8);
        seen |= kSawGcExitEvent;
      }
    } else if (event == 0 && WSTOPSIG(status) == SIGSTOP && who != pid) {
      // A new auto-attached task starts with SIGSTOP (it may beat the parent's event).
      seen |= (who == thread || thread == 0) && !(seen & kSawThreadStop) ? kSawThreadStop
                                                                          : kSawGcStop;
    } else if (event == 0 && WSTOPSIG(status) == SIGCHLD && who == pid) {
      CHECK_OK(ptrace(PTRACE_CONT, who, 0, SIGCHLD));  // the grandchild's exit: pass it on
      continue;
    } else {
      fprintf(stderr, "unexpected stop of %s: %#x\n", who == pid ? "child" : "other", status);
      CHECK(0);
    }
    CHECK_OK(ptrace(PTRACE_CONT, who, 0, 0));
  }
  CHECK_EQ(seen, 1023);
}

static volatile int usr1_count, usr2_count, usr2_code, usr2_value, usr1_pid;

static void on_usr1(int sig, siginfo_t *si, void *uc) {
  (void)sig, (void)uc;
  usr1_count++;
  usr1_pid = si->si_pid;
}

static void on_usr2(int sig, siginfo_t *si, void *uc) {
  (void)sig, (void)uc;
  usr2_count++;
  usr2_code = si->si_code;
  usr2_value = si->si_value.sival_int;
}

static void signals_body(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_flags = SA_SIGINFO;
  sa.sa_sigaction = on_usr1;
  sigaction(SIGUSR1, &sa, NULL);
  sa.sa_sigaction = on_usr2;
  sigaction(SIGUSR2, &sa, NULL);
  kill(getpid(), SIGUSR1);  // suppressed by the tracer
  if (usr1_count != 0) _exit(50);
  kill(getpid(), SIGUSR2);  // replaced with SIGUSR1
  if (usr1_count != 1 || usr2_count != 0 || usr1_pid != getppid()) _exit(51);
  kill(getpid(), SIGUSR2);  // delivered with a siginfo the tracer rewrote
  if (usr2_count != 1 || usr2_code != SI_QUEUE || usr2_value != 1234) _exit(52);
}

TEST(signal_delivery_stops) {
  pid_t pid = traced_child(signals_body);
  CHECK_OK(ptrace(PTRACE_CONT, pid, 0, 0));
  expect_stop(pid, SIGUSR1);
  CHECK_OK(ptrace(PTRACE_CONT, pid, 0, 0));
  expect_stop(pid, SIGUSR2);
  CHECK_OK(ptrace(PTRACE_CONT, pid, 0, SIGUSR1));
  expect_stop(pid, SIGUSR2);
  siginfo_t si;
  CHECK_OK(ptrace(PTRACE_GETSIGINFO, pid, 0, &si));
  CHECK_EQ(si.si_signo, SIGUSR2);
  CHECK_EQ(si.si_code, SI_USER);
  CHECK_EQ(si.si_pid, pid);
  si.si_code = SI_QUEUE;
  si.si_value.sival_int = 1234;
  CHECK_OK(ptrace(PTRACE_SETSIGINFO, pid, 0, &si));
  CHECK_OK(ptrace(PTRACE_CONT, pid, 0, SIGUSR2));
  CHECK_EXIT(pid, 0);
}

TEST(seize_interrupt_listen) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    for (;;) pause();
  }
  CHECK_OK(ptrace(PTRACE_SEIZE, pid, 0, PTRACE_O_TRACESYSGOOD));
  CHECK_ERRNO(ptrace(PTRACE_SEIZE, pid, 0, 0), EPERM);  // already traced
  CHECK_ERRNO(ptrace(PTRACE_GETREGS, pid, 0, &(struct user_regs_struct){0}), ESRCH);
  CHECK_OK(ptrace(PTRACE_INTERRUPT, pid, 0, 0));
  int status = wait_tracee(pid, NULL);
  CHECK(WIFSTOPPED(status));
  CHECK_EQ(WSTOPSIG(status), SIGTRAP);
  CHECK_EQ(status >> 16, PTRACE_EVENT_STOP);
  CHECK_OK(ptrace(PTRACE_CONT, pid, 0, 0));
  // SIGSTOP: its signal-delivery-stop, then the group-stop as PTRACE_EVENT_STOP.
  CHECK_OK(kill(pid, SIGSTOP));
  expect_stop(pid, SIGSTOP);
  CHECK_OK(ptrace(PTRACE_CONT, pid, 0, SIGSTOP));
  status = wait_tracee(pid, NULL);
  CHECK(WIFSTOPPED(status));
  CHECK_EQ(WSTOPSIG(status), SIGSTOP);
  CHECK_EQ(status >> 16, PTRACE_EVENT_STOP);
  siginfo_t si;
  CHECK_OK(ptrace(PTRACE_GETSIGINFO, pid, 0, &si));
  CHECK_EQ(si.si_signo, SIGSTOP);
  CHECK_EQ(si.si_code, SIGSTOP | (PTRACE_EVENT_STOP << 8));
  CHECK_OK(ptrace(PTRACE_LISTEN, pid, 0, 0));
  CHECK_EQ(waitpid(pid, &status, WALL | WNOHANG), 0);
  CHECK_ERRNO(ptrace(PTRACE_GETREGS, pid, 0, &(struct user_regs_struct){0}), ESRCH);
  // SIGCONT ends the group-stop: the listening tracee traps again.
  CHECK_OK(kill(pid, SIGCONT));
  status = wait_tracee(pid, NULL);
  CHECK(WIFSTOPPED(status));
  CHECK_EQ(WSTOPSIG(status), SIGTRAP);
  CHECK_EQ(status >> 16, PTRACE_EVENT_STOP);
  CHECK_OK(ptrace(PTRACE_CONT, pid, 0, 0));
  expect_stop(pid, SIGCONT);
  CHECK_OK(ptrace(PTRACE_DETACH, pid, 0, 0));
  char v[64];
  status_field(pid, "TracerPid:", v, sizeof(v));
  CHECK_EQ(atoi(v), 0);
  CHECK_OK(kill(pid, SIGKILL));
  CHECK_KILLED(pid, SIGKILL);
}

TEST(errnos) {
  CHECK_ERRNO(ptrace(PTRACE_ATTACH, getpid(), 0, 0), EPERM);
  CHECK_ERRNO(ptrace(PTRACE_CONT, 999999, 0, 0), ESRCH);
  pid_t pid = traced_child(nothing);
  CHECK_ERRNO(ptrace(PTRACE_ATTACH, pid, 0, 0), EPERM);  // already traced
  CHECK_ERRNO(ptrace(0x12345, pid, 0, 0), EIO);
  CHECK_ERRNO(ptrace(PTRACE_CONT, pid, 0, 1000), EIO);
  CHECK_ERRNO(ptrace(PTRACE_INTERRUPT, pid, 0, 0), EIO);  // not seized
  CHECK_ERRNO(ptrace(PTRACE_LISTEN, pid, 0, 0), EIO);
  CHECK_ERRNO(ptrace(PTRACE_SETOPTIONS, pid, 0, 0x80000000), EINVAL);
  CHECK_ERRNO(ptrace(PTRACE_SEIZE, pid, 0, 0x80000000), EIO);
  CHECK_OK(ptrace(PTRACE_CONT, pid, 0, 0));
  CHECK_EXIT(pid, 0);
  // Not traced, or traced by someone else: ESRCH.
  pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    for (;;) pause();
  }
  CHECK_ERRNO(ptrace(PTRACE_GETREGS, pid, 0, &(struct user_regs_struct){0}), ESRCH);
  CHECK_ERRNO(ptrace(PTRACE_KILL, pid, 0, 0), ESRCH);
  // Another user, without CAP_SYS_PTRACE, may not attach to us (root).
  pid_t other = fork();
  CHECK(other >= 0);
  if (other == 0) {
    if (setresgid(1000, 1000, 1000) != 0 || setresuid(1000, 1000, 1000) != 0) _exit(60);
    if (ptrace(PTRACE_ATTACH, getppid(), 0, 0) != -1 || errno != EPERM) _exit(61);
    if (ptrace(PTRACE_SEIZE, pid, 0, 0) != -1 || errno != EPERM) _exit(62);
    _exit(0);
  }
  CHECK_EXIT(other, 0);
  // PTRACE_KILL of a tracee.
  CHECK_OK(ptrace(PTRACE_ATTACH, pid, 0, 0));
  expect_stop(pid, SIGSTOP);
  CHECK_OK(ptrace(PTRACE_KILL, pid, 0, 0));
  CHECK_KILLED(pid, SIGKILL);
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  if (argc == 3 && strcmp(argv[1], "exit") == 0) _exit(atoi(argv[2]));
  RUN(traceme_exec_sigtrap);
  RUN(syscall_stops);
  RUN(peek_poke);
  RUN(registers);
  RUN(single_step);
  RUN(event_stops);
  RUN(signal_delivery_stops);
  RUN(seize_interrupt_listen);
  RUN(errnos);
  PASS("ptrace");
  return 0;
}
