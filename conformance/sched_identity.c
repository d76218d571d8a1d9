// Scheduling and identity syscalls: sched_{get,set}affinity and getcpu,
// sched_{get,set}{scheduler,param,attr}, sched_get_priority_{min,max},
// sched_rr_get_interval, get/setpriority, ioprio_{get,set}, personality and
// sysinfo: values, errnos, per-thread state, inheritance over fork and exec,
// and the rules for an unprivileged process (a child that drops to uid 65534).
//
// Runs as root (natively and in the sandbox, whose guest is root). Reads
// /proc/self/{stat,status} and /sys/devices/system/cpu/online to cross-check.

#include "common.h"

#include <pthread.h>
#include <grp.h>
#include <sched.h>
#include <sys/personality.h>
#include <sys/sysinfo.h>

struct attr {  // struct sched_attr, SCHED_ATTR_SIZE_VER1
  uint32_t size, policy;
  uint64_t flags;
  int32_t nice;
  uint32_t priority;
  uint64_t runtime, deadline, period;
  uint32_t util_min, util_max;
};

#define IOPRIO(cls, level) (((cls) << 13) | (level))

static long setattr_(pid_t pid, struct attr *a, unsigned flags) {
  return syscall(SYS_sched_setattr, pid, a, flags);
}
static long getattr_(pid_t pid, struct attr *a, unsigned size, unsigned flags) {
  return syscall(SYS_sched_getattr, pid, a, size, flags);
}
static long ioprio_get_(int which, int who) { return syscall(SYS_ioprio_get, which, who); }
static long ioprio_set_(int which, int who, int prio) {
  return syscall(SYS_ioprio_set, which, who, prio);
}

static char buf[1 << 16];

// Field `n` (1-based, after the comm) of /proc/self/task/TID/stat.
static long stat_field(pid_t tid, int n) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
  conf_get_file(path, buf, sizeof(buf));
  char *p = strrchr(buf, ')');
  CHECK(p != NULL);
  p += 2;  // state is field 3
  for (int i = 3; i < n; i++) {
    p = strchr(p, ' ');
    CHECK(p != NULL);
    p++;
  }
  return strtol(p, NULL, 10);
}

static int count_cpus_in_list(const char *list) {
  int n = 0;
  const char *p = list;
  while (*p && *p != '\n') {
    char *end;
    long a = strtol(p, &end, 10), b = a;
    if (*end == '-') b = strtol(end + 1, &end, 10);
    n += (int)(b - a + 1);
    p = *end == ',' ? end + 1 : end;
  }
  return n;
}

// Drops to an unprivileged user (in a child).
static void drop_privileges(void) {
  CHECK_OK(setgroups(0, NULL));
  CHECK_OK(setresgid(65534, 65534, 65534));
  CHECK_OK(setresuid(65534, 65534, 65534));
}

TEST(affinity) {
  unsigned char big[1024];
  memset(big, 0, sizeof(big));
  long size = syscall(SYS_sched_getaffinity, 0, sizeof(big), big);
  CHECK(size >= 8 && size % 8 == 0);  // the kernel's cpumask size, not the buffer's
  cpu_set_t all;
  CHECK_OK(sched_getaffinity(0, sizeof(all), &all));
  int n = CPU_COUNT(&all);
  CHECK(n >= 1);
  CHECK_EQ(n, sysconf(_SC_NPROCESSORS_ONLN));
  CHECK(n <= sysconf(_SC_NPROCESSORS_CONF));
  conf_get_file("/sys/devices/system/cpu/online", buf, sizeof(buf));
  CHECK_EQ(count_cpus_in_list(buf), n);
  // Buffer sizes: whole longs, at least as big as the CPU ids.
  unsigned char m[64];
  CHECK_ERRNO(syscall(SYS_sched_getaffinity, 0, 4, m), EINVAL);
  CHECK_ERRNO(syscall(SYS_sched_getaffinity, 0, 12, m), EINVAL);
  CHECK_ERRNO(syscall(SYS_sched_getaffinity, 0, 0, m), EINVAL);
  CHECK_EQ(syscall(SYS_sched_getaffinity, 0, 8, m), 8);
  CHECK_ERRNO(syscall(SYS_sched_getaffinity, 0, 8, (void *)8), EFAULT);
  CHECK_ERRNO(syscall(SYS_sched_getaffinity, -1, 8, m), ESRCH);
  CHECK_ERRNO(syscall(SYS_sched_getaffinity, 1 << 30, 8, m), ESRCH);
  // No CPU of ours: EINVAL (also with an empty or zero-length mask).
  cpu_set_t none;
  CPU_ZERO(&none);
  CPU_SET(1000, &none);
  CHECK_ERRNO(sched_setaffinity(0, sizeof(none), &none), EINVAL);
  CPU_ZERO(&none);
  CHECK_ERRNO(sched_setaffinity(0, sizeof(none), &none), EINVAL);
  CHECK_ERRNO(syscall(SYS_sched_setaffinity, 0, 0, m), EINVAL);
  CHECK_ERRNO(syscall(SYS_sched_setaffinity, 0, 8, (void *)8), EFAULT);
  CHECK_ERRNO(syscall(SYS_sched_setaffinity, 1 << 30, 8, m), ESRCH);

  // One CPU: shown by getaffinity, getcpu, /proc; bits past the CPUs are dropped.
  int last = -1;
  for (int c = 0; c < CPU_SETSIZE; c++) {
    if (CPU_ISSET(c, &all)) last = c;
  }
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(last, &one);
  CPU_SET(1000, &one);
  CHECK_OK(sched_setaffinity(0, sizeof(one), &one));
  cpu_set_t got;
  CHECK_OK(sched_getaffinity(0, sizeof(got), &got));
  CHECK_EQ(CPU_COUNT(&got), 1);
  CHECK(CPU_ISSET(last, &got));
  unsigned cpu = 99, node = 99;
  CHECK_OK(syscall(SYS_getcpu, &cpu, &node, NULL));
  CHECK_EQ(cpu, (unsigned)last);
  CHECK_EQ(node, 0);
  CHECK_OK(syscall(SYS_getcpu, NULL, NULL, NULL));
  // (Not sched_getcpu(): glibc reads it from the vDSO or rseq, which report the host CPU
  // the sandbox's stub runs on; the Sentry places its stubs itself.)
  conf_get_file("/proc/self/status", buf, sizeof(buf));
  char want[64];
  snprintf(want, sizeof(want), "\nCpus_allowed_list:\t%d\n", last);
  CHECK(strstr(buf, want) != NULL);
  // A short mask is zero-extended.
  unsigned char small = 1;
  if (last < 8) {
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    CHECK_OK(syscall(SYS_sched_setaffinity, 0, 1, &small));
    CHECK_OK(sched_getaffinity(0, sizeof(got), &got));
    CHECK(CPU_EQUAL(&got, &one));
  }
  // Inherited over fork and exec.
  CPU_ZERO(&one);
  CPU_SET(last, &one);
  CHECK_OK(sched_setaffinity(0, sizeof(one), &one));
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    CHECK_OK(sched_getaffinity(0, sizeof(got), &got));
    CHECK(CPU_EQUAL(&got, &one));
    char arg[16];
    snprintf(arg, sizeof(arg), "%d", last);
    execl(conf_self, conf_self, "affinity", arg, (char *)NULL);
    _exit(127);
  }
  CHECK_EXIT(pid, 0);
  // A child's mask is its own; getaffinity of another process.
  pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    CHECK_OK(sched_setaffinity(0, sizeof(all), &all));
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
  CHECK_OK(sched_getaffinity(0, sizeof(got), &got));
  CHECK(CPU_EQUAL(&got, &one));
  CHECK_OK(sched_setaffinity(0, sizeof(all), &all));
  CHECK_OK(sched_getaffinity(getppid(), sizeof(got), &got));
}

static void *thread_affinity(void *arg) {
  cpu_set_t *one = arg;
  CHECK_OK(sched_setaffinity(0, sizeof(*one), one));
  cpu_set_t got;
  CHECK_OK(sched_getaffinity(0, sizeof(got), &got));
  CHECK(CPU_EQUAL(&got, one));
  return (void *)(long)conf_gettid();
}

TEST(affinity_per_thread) {
  cpu_set_t all, one, got;
  CHECK_OK(sched_getaffinity(0, sizeof(all), &all));
  int first = 0;
  while (!CPU_ISSET(first, &all)) first++;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  pthread_t t;
  CHECK_EQ(pthread_create(&t, NULL, thread_affinity, &one), 0);
  CHECK_EQ(pthread_join(t, NULL), 0);
  // The thread's mask did not change ours.
  CHECK_OK(sched_getaffinity(0, sizeof(got), &got));
  CHECK(CPU_EQUAL(&got, &all));
}

TEST(priorities_and_policies) {
  CHECK_EQ(sched_get_priority_min(SCHED_OTHER), 0);
  CHECK_EQ(sched_get_priority_max(SCHED_OTHER), 0);
  CHECK_EQ(sched_get_priority_min(SCHED_FIFO), 1);
  CHECK_EQ(sched_get_priority_max(SCHED_FIFO), 99);
  CHECK_EQ(sched_get_priority_min(SCHED_RR), 1);
  CHECK_EQ(sched_get_priority_max(SCHED_RR), 99);
  CHECK_EQ(sched_get_priority_max(SCHED_BATCH), 0);
  CHECK_EQ(sched_get_priority_max(SCHED_IDLE), 0);
  CHECK_EQ(sched_get_priority_max(6), 0);  // SCHED_DEADLINE
  CHECK_ERRNO(sched_get_priority_max(4), EINVAL);
  CHECK_ERRNO(sched_get_priority_min(-1), EINVAL);
  CHECK_ERRNO(sched_get_priority_min(8), EINVAL);  // (7 is SCHED_EXT on newer kernels)

  CHECK_EQ(sched_getscheduler(0), SCHED_OTHER);
  CHECK_EQ(sched_getscheduler(getpid()), SCHED_OTHER);
  CHECK_ERRNO(sched_getscheduler(-1), EINVAL);
  CHECK_ERRNO(sched_getscheduler(1 << 30), ESRCH);
  struct sched_param sp = {0};
  CHECK_OK(sched_getparam(0, &sp));
  CHECK_EQ(sp.sched_priority, 0);
  CHECK_ERRNO(syscall(SYS_sched_getparam, 0, NULL), EINVAL);
  CHECK_ERRNO(syscall(SYS_sched_getparam, -1, &sp), EINVAL);
  CHECK_ERRNO(syscall(SYS_sched_getparam, 0, (void *)8), EFAULT);

  // Priority must fit the policy.
  sp.sched_priority = 1;
  CHECK_ERRNO(sched_setscheduler(0, SCHED_OTHER, &sp), EINVAL);
  sp.sched_priority = 0;
  CHECK_ERRNO(sched_setscheduler(0, SCHED_FIFO, &sp), EINVAL);
  sp.sched_priority = 100;
  CHECK_ERRNO(sched_setscheduler(0, SCHED_RR, &sp), EINVAL);
  CHECK_ERRNO(sched_setscheduler(0, 4, &sp), EINVAL);
  CHECK_ERRNO(sched_setscheduler(0, -1, &sp), EINVAL);
  CHECK_ERRNO(syscall(SYS_sched_setscheduler, 0, SCHED_OTHER, NULL), EINVAL);
  CHECK_ERRNO(syscall(SYS_sched_setscheduler, -1, SCHED_OTHER, &sp), EINVAL);
  sp.sched_priority = 0;
  CHECK_ERRNO(sched_setscheduler(1 << 30, SCHED_OTHER, &sp), ESRCH);

  // Real time, as root: a forked child (the parent keeps its policy).
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    sp.sched_priority = 10;
    CHECK_OK(sched_setscheduler(0, SCHED_FIFO, &sp));
    CHECK_EQ(sched_getscheduler(0), SCHED_FIFO);
    memset(&sp, 0, sizeof(sp));
    CHECK_OK(sched_getparam(0, &sp));
    CHECK_EQ(sp.sched_priority, 10);
    struct timespec ts = {1, 1};
    CHECK_OK(sched_rr_get_interval(0, &ts));
    CHECK_EQ(ts.tv_sec, 0);
    CHECK_EQ(ts.tv_nsec, 0);
    CHECK_EQ(stat_field(conf_gettid(), 18), -11);  // priority: -1 - rt_priority
    CHECK_EQ(stat_field(conf_gettid(), 40), 10);   // rt_priority
    CHECK_EQ(stat_field(conf_gettid(), 41), SCHED_FIFO);
    sp.sched_priority = 5;
    CHECK_OK(sched_setscheduler(0, SCHED_RR, &sp));
    CHECK_OK(sched_rr_get_interval(0, &ts));
    CHECK_EQ(ts.tv_sec, 0);
    CHECK(ts.tv_nsec > 0);
    sp.sched_priority = 7;
    CHECK_OK(sched_setparam(0, &sp));  // keeps SCHED_RR
    CHECK_EQ(sched_getscheduler(0), SCHED_RR);
    CHECK_OK(sched_getparam(0, &sp));
    CHECK_EQ(sp.sched_priority, 7);
    sp.sched_priority = 0;
    CHECK_ERRNO(sched_setparam(0, &sp), EINVAL);
    CHECK_OK(sched_setscheduler(0, SCHED_BATCH, &sp));
    CHECK_EQ(sched_getscheduler(0), SCHED_BATCH);
    CHECK_OK(sched_getparam(0, &sp));
    CHECK_EQ(sp.sched_priority, 0);
    CHECK_OK(sched_setscheduler(0, SCHED_IDLE, &sp));
    CHECK_EQ(sched_getscheduler(0), SCHED_IDLE);
    CHECK_EQ(stat_field(conf_gettid(), 41), SCHED_IDLE);
    CHECK_OK(sched_setscheduler(0, SCHED_OTHER, &sp));
    // Of another process: the parent's.
    CHECK_EQ(sched_getscheduler(getppid()), SCHED_OTHER);
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
  CHECK_EQ(sched_getscheduler(0), SCHED_OTHER);
}

TEST(reset_on_fork) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    struct sched_param sp = {.sched_priority = 3};
    CHECK_OK(setpriority(PRIO_PROCESS, 0, -4));
    CHECK_OK(sched_setscheduler(0, SCHED_RR | SCHED_RESET_ON_FORK, &sp));
    CHECK_EQ(sched_getscheduler(0), SCHED_RR | SCHED_RESET_ON_FORK);
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
      CHECK_EQ(sched_getscheduler(0), SCHED_OTHER);
      CHECK_OK(sched_getparam(0, &sp));
      CHECK_EQ(sp.sched_priority, 0);
      errno = 0;
      CHECK_EQ(getpriority(PRIO_PROCESS, 0), 0);  // negative nice reset
      CHECK_EQ(errno, 0);
      _exit(0);
    }
    CHECK_EXIT(c, 0);
    // Without the flag the child keeps policy and nice.
    CHECK_OK(sched_setscheduler(0, SCHED_RR, &sp));
    c = fork();
    CHECK(c >= 0);
    if (c == 0) {
      CHECK_EQ(sched_getscheduler(0), SCHED_RR);
      CHECK_EQ(getpriority(PRIO_PROCESS, 0), -4);
      _exit(0);
    }
    CHECK_EXIT(c, 0);
    sp.sched_priority = 0;
    CHECK_OK(sched_setscheduler(0, SCHED_OTHER, &sp));
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
}

TEST(sched_attr) {
  struct attr a;
  memset(&a, 0x55, sizeof(a));
  CHECK_OK(getattr_(0, &a, sizeof(a), 0));
  CHECK_EQ(a.size, sizeof(a));
  CHECK_EQ(a.policy, SCHED_OTHER);
  CHECK_EQ(a.flags, 0);
  CHECK_EQ(a.nice, 0);
  CHECK_EQ(a.priority, 0);
  CHECK_EQ(a.deadline, 0);
  CHECK_EQ(a.period, 0);
  uint64_t slice = a.runtime;  // the fair slice (kernels with custom slices) or 0
  // A bigger buffer: the kernel's size; a VER0 one: 48 bytes.
  unsigned char big[128];
  memset(big, 0x55, sizeof(big));
  CHECK_OK(getattr_(0, (struct attr *)big, sizeof(big), 0));
  CHECK_EQ(((struct attr *)big)->size, sizeof(a));
  CHECK_EQ(big[sizeof(a)], 0);  // zero-filled (Linux 6.13 on)
  memset(&a, 0x55, sizeof(a));
  CHECK_OK(getattr_(0, &a, 48, 0));
  CHECK_EQ(a.size, 48);
  CHECK_EQ(a.util_min, 0x55555555);
  CHECK_ERRNO(getattr_(0, &a, 47, 0), EINVAL);
  CHECK_ERRNO(getattr_(0, &a, 8192, 0), EINVAL);
  CHECK_ERRNO(getattr_(0, &a, sizeof(a), 1), EINVAL);
  CHECK_ERRNO(getattr_(0, NULL, sizeof(a), 0), EINVAL);
  CHECK_ERRNO(getattr_(-1, &a, sizeof(a), 0), EINVAL);
  CHECK_ERRNO(getattr_(1 << 30, &a, sizeof(a), 0), ESRCH);
  CHECK_ERRNO(getattr_(0, (struct attr *)8, sizeof(a), 0), EFAULT);

  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    // Size rules: 0 means VER0; too small or unknown non-zero tail: E2BIG and the size
    // the kernel knows written back.
    memset(&a, 0, sizeof(a));
    a.policy = SCHED_OTHER;
    a.nice = 3;
    CHECK_OK(setattr_(0, &a, 0));
    CHECK_EQ(getpriority(PRIO_PROCESS, 0), 3);
    a.size = 47;
    CHECK_ERRNO(setattr_(0, &a, 0), E2BIG);
    CHECK_EQ(a.size, sizeof(a));
    memset(big, 0, sizeof(big));
    memcpy(big, &a, sizeof(a));
    ((struct attr *)big)->size = sizeof(big);
    CHECK_OK(setattr_(0, (struct attr *)big, 0));  // zero tail: fine
    big[100] = 1;
    CHECK_ERRNO(setattr_(0, (struct attr *)big, 0), E2BIG);
    CHECK_EQ(((struct attr *)big)->size, sizeof(a));
    a.size = sizeof(a);
    CHECK_ERRNO(setattr_(0, &a, 1), EINVAL);
    CHECK_ERRNO(setattr_(0, NULL, 0), EINVAL);
    CHECK_ERRNO(setattr_(-1, &a, 0), EINVAL);
    CHECK_ERRNO(setattr_(1 << 30, &a, 0), ESRCH);
    a.policy = 4;
    CHECK_ERRNO(setattr_(0, &a, 0), EINVAL);
    a.policy = (uint32_t)-1;
    CHECK_ERRNO(setattr_(0, &a, 0), EINVAL);
    // nice is clamped.
    a.policy = SCHED_BATCH;
    a.nice = 40;
    CHECK_OK(setattr_(0, &a, 0));
    CHECK_EQ(getpriority(PRIO_PROCESS, 0), 19);
    memset(&a, 0, sizeof(a));
    CHECK_OK(getattr_(0, &a, sizeof(a), 0));
    CHECK_EQ(a.policy, SCHED_BATCH);
    CHECK_EQ(a.nice, 19);
    // Real time through sched_attr; KEEP_POLICY changes only the parameters.
    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.policy = SCHED_FIFO;
    a.priority = 20;
    a.flags = 1;  // SCHED_FLAG_RESET_ON_FORK
    CHECK_OK(setattr_(0, &a, 0));
    CHECK_EQ(sched_getscheduler(0), SCHED_FIFO | SCHED_RESET_ON_FORK);
    memset(&a, 0, sizeof(a));
    CHECK_OK(getattr_(0, &a, sizeof(a), 0));
    CHECK_EQ(a.policy, SCHED_FIFO);
    CHECK_EQ(a.flags, 1);
    CHECK_EQ(a.priority, 20);
    CHECK_EQ(a.runtime, 0);
    CHECK_EQ(a.nice, 0);  // not reported for real-time policies
    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.policy = SCHED_OTHER;
    a.flags = 0x8 | 1;  // KEEP_POLICY | RESET_ON_FORK
    a.priority = 30;
    CHECK_OK(setattr_(0, &a, 0));
    CHECK_EQ(sched_getscheduler(0), SCHED_FIFO | SCHED_RESET_ON_FORK);
    struct sched_param sp;
    CHECK_OK(sched_getparam(0, &sp));
    CHECK_EQ(sp.sched_priority, 30);
    // Deadline parameters must hold runtime <= deadline <= period.
    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.policy = 6;
    CHECK_ERRNO(setattr_(0, &a, 0), EINVAL);
    a.runtime = 2000000;
    a.deadline = 1000000;
    a.period = 3000000;
    CHECK_ERRNO(setattr_(0, &a, 0), EINVAL);
    // Back to SCHED_OTHER; a custom slice when the kernel reports one.
    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.policy = SCHED_OTHER;
    a.flags = 0;
    CHECK_OK(setattr_(0, &a, 0));
    CHECK_EQ(sched_getscheduler(0), SCHED_OTHER);
    memset(&a, 0, sizeof(a));
    CHECK_OK(getattr_(0, &a, sizeof(a), 0));
    CHECK_EQ(a.runtime, slice);
    CHECK_EQ(a.nice, 0);
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
}

TEST(nice_values) {
  errno = 0;
  CHECK_EQ(getpriority(PRIO_PROCESS, 0), 0);
  CHECK_EQ(errno, 0);
  CHECK_EQ(syscall(SYS_getpriority, PRIO_PROCESS, 0), 20);  // the raw value: 20 - nice
  CHECK_ERRNO(getpriority(3, 0), EINVAL);
  CHECK_ERRNO(setpriority(-1, 0, 0), EINVAL);
  CHECK_ERRNO(getpriority(PRIO_PROCESS, 1 << 30), ESRCH);
  CHECK_ERRNO(setpriority(PRIO_PROCESS, 1 << 30, 0), ESRCH);
  CHECK_ERRNO(getpriority(PRIO_PGRP, 1 << 30), ESRCH);
  CHECK_ERRNO(getpriority(PRIO_USER, 54321), ESRCH);

  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    CHECK_OK(setpgid(0, 0));
    CHECK_OK(setpriority(PRIO_PROCESS, 0, 5));
    CHECK_EQ(getpriority(PRIO_PROCESS, 0), 5);
    CHECK_EQ(getpriority(PRIO_PROCESS, getpid()), 5);
    CHECK_EQ(stat_field(conf_gettid(), 19), 5);   // nice
    CHECK_EQ(stat_field(conf_gettid(), 18), 25);  // priority: 20 + nice
    CHECK_OK(setpriority(PRIO_PROCESS, 0, 100));  // clamped
    CHECK_EQ(getpriority(PRIO_PROCESS, 0), 19);
    CHECK_OK(setpriority(PRIO_PROCESS, 0, -100));
    CHECK_EQ(getpriority(PRIO_PROCESS, 0), -20);
    // By process group: the whole group, and the best (lowest) value reported.
    CHECK_OK(setpriority(PRIO_PGRP, 0, 2));
    CHECK_EQ(getpriority(PRIO_PGRP, 0), 2);
    CHECK_EQ(getpriority(PRIO_PGRP, getpid()), 2);
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
      CHECK_EQ(getpriority(PRIO_PROCESS, 0), 2);  // inherited
      CHECK_OK(setpriority(PRIO_PROCESS, 0, 6));
      execl(conf_self, conf_self, "nice", "6", (char *)NULL);
      _exit(127);
    }
    CHECK_EXIT(c, 0);
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
  CHECK_EQ(getpriority(PRIO_PROCESS, 0), 0);
}

static void *thread_nice(void *arg) {
  (void)arg;
  CHECK_OK(setpriority(PRIO_PROCESS, conf_gettid(), 7));
  CHECK_EQ(getpriority(PRIO_PROCESS, conf_gettid()), 7);
  return NULL;
}

TEST(nice_per_thread) {
  pthread_t t;
  CHECK_EQ(pthread_create(&t, NULL, thread_nice, NULL), 0);
  CHECK_EQ(pthread_join(t, NULL), 0);
  CHECK_EQ(getpriority(PRIO_PROCESS, 0), 0);  // a thread's nice is its own
}

TEST(unprivileged) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    struct rlimit zero = {0, 0};
    CHECK_OK(setrlimit(RLIMIT_NICE, &zero));
    CHECK_OK(setrlimit(RLIMIT_RTPRIO, &zero));
    CHECK_OK(setpriority(PRIO_PROCESS, 0, 4));
    pid_t root_owned = getppid();
    drop_privileges();
    // Raising nice is fine, lowering it is not.
    CHECK_OK(setpriority(PRIO_PROCESS, 0, 8));
    CHECK_ERRNO(setpriority(PRIO_PROCESS, 0, 7), EACCES);
    CHECK_EQ(getpriority(PRIO_PROCESS, 0), 8);
    // Other users' processes: EPERM.
    CHECK_ERRNO(setpriority(PRIO_PROCESS, root_owned, 10), EPERM);
    CHECK_EQ(getpriority(PRIO_PROCESS, root_owned), 0);
    // Real-time policies need CAP_SYS_NICE (or RLIMIT_RTPRIO).
    struct sched_param sp = {.sched_priority = 1};
    CHECK_ERRNO(sched_setscheduler(0, SCHED_FIFO, &sp), EPERM);
    CHECK_ERRNO(sched_setscheduler(0, SCHED_RR, &sp), EPERM);
    sp.sched_priority = 0;
    CHECK_ERRNO(sched_setscheduler(root_owned, SCHED_BATCH, &sp), EPERM);
    CHECK_OK(sched_setscheduler(0, SCHED_BATCH, &sp));
    CHECK_OK(sched_setscheduler(0, SCHED_IDLE, &sp));
    // Leaving SCHED_IDLE is a nice decrease: RLIMIT_NICE 0 forbids it.
    CHECK_ERRNO(sched_setscheduler(0, SCHED_OTHER, &sp), EPERM);
    struct attr a;
    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.policy = SCHED_IDLE;
    a.nice = 2;  // SCHED_IDLE ignores the nice value: no check, no change
    CHECK_OK(setattr_(0, &a, 0));
    CHECK_EQ(getpriority(PRIO_PROCESS, 0), 8);
    a.policy = SCHED_BATCH;  // a nice decrease with a policy that carries nice
    CHECK_ERRNO(setattr_(0, &a, 0), EPERM);
    // Affinity of a root-owned process: EPERM; our own: fine.
    cpu_set_t all;
    CHECK_OK(sched_getaffinity(0, sizeof(all), &all));
    CHECK_ERRNO(sched_setaffinity(root_owned, sizeof(all), &all), EPERM);
    CHECK_OK(sched_setaffinity(0, sizeof(all), &all));
    // I/O priorities: real-time class needs privileges; others' processes: EPERM.
    CHECK_ERRNO(ioprio_set_(1, 0, IOPRIO(1, 0)), EPERM);
    CHECK_OK(ioprio_set_(1, 0, IOPRIO(2, 7)));
    CHECK_ERRNO(ioprio_set_(1, root_owned, IOPRIO(2, 7)), EPERM);
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
}

TEST(io_priorities) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    CHECK_OK(setpgid(0, 0));
    CHECK_EQ(ioprio_get_(1, 0), 0);  // no I/O context yet
    CHECK_ERRNO(ioprio_get_(0, 0), EINVAL);
    CHECK_ERRNO(ioprio_get_(4, 0), EINVAL);
    CHECK_ERRNO(ioprio_get_(1, 1 << 30), ESRCH);
    CHECK_ERRNO(ioprio_set_(1, 0, IOPRIO(0, 1)), EINVAL);
    CHECK_ERRNO(ioprio_set_(1, 0, IOPRIO(4, 0)), EINVAL);
    CHECK_ERRNO(ioprio_set_(1, 0, IOPRIO(7, 0)), EINVAL);
    CHECK_ERRNO(ioprio_set_(5, 0, IOPRIO(2, 0)), EINVAL);
    CHECK_ERRNO(ioprio_set_(1, 1 << 30, IOPRIO(2, 0)), ESRCH);
    CHECK_OK(ioprio_set_(1, 0, IOPRIO(2, 3)));
    CHECK_EQ(ioprio_get_(1, 0), IOPRIO(2, 3));
    CHECK_EQ(ioprio_get_(1, getpid()), IOPRIO(2, 3));
    CHECK_EQ(ioprio_get_(2, 0), IOPRIO(2, 3));
    CHECK_OK(ioprio_set_(1, 0, IOPRIO(1, 2)));  // real time, as root
    CHECK_EQ(ioprio_get_(1, 0), IOPRIO(1, 2));
    CHECK_OK(ioprio_set_(1, 0, IOPRIO(3, 0)));
    CHECK_EQ(ioprio_get_(1, 0), IOPRIO(3, 0));
    // Inherited over fork when a class is set.
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
      CHECK_EQ(ioprio_get_(1, 0), IOPRIO(3, 0));
      _exit(0);
    }
    CHECK_EXIT(c, 0);
    // No class: reported as set (I/O then follows nice); a group's best counts it as
    // best effort, normal level.
    CHECK_OK(ioprio_set_(1, 0, IOPRIO(0, 0)));
    CHECK_EQ(ioprio_get_(1, 0), 0);
    CHECK_OK(setpriority(PRIO_PROCESS, 0, 10));
    CHECK_EQ(ioprio_get_(1, 0), 0);
    // By process group.
    CHECK_OK(ioprio_set_(2, 0, IOPRIO(2, 1)));
    CHECK_EQ(ioprio_get_(1, 0), IOPRIO(2, 1));
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
}

TEST(personality_flags) {
  CHECK_EQ(personality(0xffffffff), PER_LINUX);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    CHECK_EQ(personality(ADDR_NO_RANDOMIZE), PER_LINUX);
    CHECK_EQ(personality(0xffffffff), ADDR_NO_RANDOMIZE);
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
      CHECK_EQ(personality(0xffffffff), ADDR_NO_RANDOMIZE);
      _exit(0);
    }
    CHECK_EXIT(c, 0);
    // Kept over exec, but for READ_IMPLIES_EXEC.
    CHECK_EQ(personality(ADDR_NO_RANDOMIZE | READ_IMPLIES_EXEC), ADDR_NO_RANDOMIZE);
    char arg[32];
    snprintf(arg, sizeof(arg), "%d", ADDR_NO_RANDOMIZE);
    execl(conf_self, conf_self, "personality", arg, (char *)NULL);
    _exit(127);
  }
  CHECK_EXIT(pid, 0);
  CHECK_EQ(personality(0xffffffff), PER_LINUX);
}

TEST(system_info) {
  struct sysinfo si;
  CHECK_OK(sysinfo(&si));
  CHECK(si.uptime >= 0);
  CHECK(si.mem_unit >= 1);
  CHECK(si.totalram > 0);
  CHECK(si.freeram <= si.totalram);
  CHECK(si.sharedram <= si.totalram);
  CHECK(si.freeswap <= si.totalswap);
  CHECK(si.procs >= 1);
  CHECK_EQ(si.totalhigh, 0);
  CHECK_ERRNO(sysinfo(NULL), EFAULT);
  // procs counts threads: one more while a thread lives (nothing else starts here).
  double load[3];
  CHECK_EQ(getloadavg(load, 3), 3);
  CHECK(load[0] >= 0 && load[1] >= 0 && load[2] >= 0);
}

// Child modes, reached through execve.
static int child_main(char **argv) {
  if (strcmp(argv[1], "affinity") == 0) {
    cpu_set_t got;
    CHECK_OK(sched_getaffinity(0, sizeof(got), &got));
    CHECK_EQ(CPU_COUNT(&got), 1);
    CHECK(CPU_ISSET(atoi(argv[2]), &got));
    return 0;
  }
  if (strcmp(argv[1], "nice") == 0) {
    CHECK_EQ(getpriority(PRIO_PROCESS, 0), atoi(argv[2]));
    return 0;
  }
  if (strcmp(argv[1], "personality") == 0) {
    CHECK_EQ(personality(0xffffffff), atoi(argv[2]));
    return 0;
  }
  fprintf(stderr, "unknown child mode %s\n", argv[1]);
  return 2;
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  if (argc > 1) return child_main(argv);
  RUN(affinity);
  RUN(affinity_per_thread);
  RUN(priorities_and_policies);
  RUN(reset_on_fork);
  RUN(sched_attr);
  RUN(nice_values);
  RUN(nice_per_thread);
  RUN(unprivileged);
  RUN(io_priorities);
  RUN(personality_flags);
  RUN(system_info);
  PASS("sched_identity");
  return 0;
}
