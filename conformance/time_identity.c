// Clocks and sleeping, identity (uname, ids, groups, umask), resource
// limits, getrandom, sched_yield, arch_prctl and thread ids.

#include "common.h"

#include <asm/prctl.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/utsname.h>

#define NS_PER_MS 1000000LL
#define NS_PER_S 1000000000LL

static int64_t ts_ns(const struct timespec *ts) {
  return (int64_t)ts->tv_sec * NS_PER_S + ts->tv_nsec;
}

static struct timespec ns_ts(int64_t ns) {
  struct timespec ts = {(time_t)(ns / NS_PER_S), (long)(ns % NS_PER_S)};
  return ts;
}

// Spins until this process has used `ms` more CPU time.
static void burn_cpu_ms(int ms) {
  int64_t end = conf_now_ns(CLOCK_PROCESS_CPUTIME_ID) + ms * NS_PER_MS;
  while (conf_now_ns(CLOCK_PROCESS_CPUTIME_ID) < end) {
  }
}

// --- clocks ---

TEST(clock_gettime_all_clocks) {
  const clockid_t clocks[] = {
      CLOCK_REALTIME,         CLOCK_MONOTONIC,         CLOCK_BOOTTIME,
      CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID, CLOCK_MONOTONIC_RAW,
      CLOCK_REALTIME_COARSE,  CLOCK_MONOTONIC_COARSE,
  };
  for (size_t i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++) {
    struct timespec ts = {-1, -1};
    CHECK_OK(clock_gettime(clocks[i], &ts));
    CHECK(ts.tv_sec >= 0);
    CHECK(ts.tv_nsec >= 0 && ts.tv_nsec < NS_PER_S);
    // The raw system call (no vDSO) agrees on validity.
    CHECK_OK(syscall(SYS_clock_gettime, clocks[i], &ts));
  }
  struct timespec ts;
  CHECK_OK(clock_gettime(CLOCK_REALTIME, &ts));
  CHECK(ts.tv_sec > 1577836800);  // After 2020-01-01.
  CHECK_ERRNO(clock_gettime((clockid_t)100, &ts), EINVAL);
  CHECK_ERRNO(syscall(SYS_clock_gettime, 100, &ts), EINVAL);
}

TEST(monotonic_never_goes_back) {
  int64_t prev = conf_now_ns(CLOCK_MONOTONIC);
  for (int i = 0; i < 10000; i++) {
    int64_t now = conf_now_ns(CLOCK_MONOTONIC);
    CHECK(now >= prev);
    prev = now;
  }
  // The vDSO and the system call read the same clock.
  struct timespec ts;
  CHECK_OK(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts));
  CHECK(ts_ns(&ts) >= prev);
  CHECK(conf_now_ns(CLOCK_MONOTONIC) >= ts_ns(&ts));
  // BOOTTIME is MONOTONIC plus time spent suspended.
  int64_t mono = conf_now_ns(CLOCK_MONOTONIC);
  int64_t boot = conf_now_ns(CLOCK_BOOTTIME);
  CHECK(boot >= mono);
}

TEST(cpu_time_clocks) {
  int64_t p0 = conf_now_ns(CLOCK_PROCESS_CPUTIME_ID);
  int64_t t0 = conf_now_ns(CLOCK_THREAD_CPUTIME_ID);
  struct rusage ru0;
  CHECK_OK(getrusage(RUSAGE_SELF, &ru0));
  burn_cpu_ms(20);
  int64_t t1 = conf_now_ns(CLOCK_THREAD_CPUTIME_ID);
  int64_t p1 = conf_now_ns(CLOCK_PROCESS_CPUTIME_ID);
  CHECK(p1 - p0 >= 20 * NS_PER_MS);
  CHECK(t1 - t0 >= 15 * NS_PER_MS);
  CHECK(t1 <= p1);  // One thread's time is part of the process's.
  struct rusage ru1;
  CHECK_OK(getrusage(RUSAGE_SELF, &ru1));
  int64_t us0 = (ru0.ru_utime.tv_sec + ru0.ru_stime.tv_sec) * 1000000LL +
                ru0.ru_utime.tv_usec + ru0.ru_stime.tv_usec;
  int64_t us1 = (ru1.ru_utime.tv_sec + ru1.ru_stime.tv_sec) * 1000000LL +
                ru1.ru_utime.tv_usec + ru1.ru_stime.tv_usec;
  CHECK(us1 - us0 >= 10000);
  CHECK_ERRNO(getrusage(12345, &ru1), EINVAL);
}

TEST(gettimeofday_matches_realtime) {
  struct timeval tv;
  CHECK_OK(gettimeofday(&tv, NULL));
  int64_t rt = conf_now_ns(CLOCK_REALTIME);
  int64_t gtod = (int64_t)tv.tv_sec * NS_PER_S + tv.tv_usec * 1000LL;
  CHECK(tv.tv_usec >= 0 && tv.tv_usec < 1000000);
  CHECK(rt - gtod >= -NS_PER_MS);  // Read first, so not (much) later.
  CHECK(rt - gtod < 100 * NS_PER_MS);
  // time() may read a tick-granular copy, so allow it a second behind.
  time_t t = time(NULL);
  CHECK(t >= tv.tv_sec - 1 && t <= tv.tv_sec + 2);
}

TEST(nanosleep_sleeps_long_enough) {
  struct timespec req = {0, 50 * NS_PER_MS};
  int64_t t0 = conf_now_ns(CLOCK_MONOTONIC);
  CHECK_OK(nanosleep(&req, NULL));
  int64_t dt = conf_now_ns(CLOCK_MONOTONIC) - t0;
  CHECK(dt >= 50 * NS_PER_MS);
  CHECK(dt < NS_PER_S);
  struct timespec zero = {0, 0};
  CHECK_OK(nanosleep(&zero, NULL));
  struct timespec bad = {0, NS_PER_S};
  CHECK_ERRNO(nanosleep(&bad, NULL), EINVAL);
  struct timespec neg = {-1, 0};
  CHECK_ERRNO(nanosleep(&neg, NULL), EINVAL);
}

TEST(clock_nanosleep_abstime) {
  // clock_nanosleep returns the error number instead of setting errno.
  int64_t target = conf_now_ns(CLOCK_MONOTONIC) + 30 * NS_PER_MS;
  struct timespec ts = ns_ts(target);
  CHECK_EQ(clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL), 0);
  CHECK(conf_now_ns(CLOCK_MONOTONIC) >= target);
  // A deadline in the past returns at once.
  ts = ns_ts(conf_now_ns(CLOCK_MONOTONIC) - NS_PER_S);
  int64_t t0 = conf_now_ns(CLOCK_MONOTONIC);
  CHECK_EQ(clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL), 0);
  CHECK(conf_now_ns(CLOCK_MONOTONIC) - t0 < 500 * NS_PER_MS);
  // CLOCK_REALTIME deadlines too.
  target = conf_now_ns(CLOCK_REALTIME) + 20 * NS_PER_MS;
  ts = ns_ts(target);
  CHECK_EQ(clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL), 0);
  CHECK(conf_now_ns(CLOCK_REALTIME) >= target);
  // Relative.
  ts = ns_ts(10 * NS_PER_MS);
  t0 = conf_now_ns(CLOCK_MONOTONIC);
  CHECK_EQ(clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL), 0);
  CHECK(conf_now_ns(CLOCK_MONOTONIC) - t0 >= 10 * NS_PER_MS);
  // Errors.
  struct timespec bad = {0, NS_PER_S};
  CHECK_EQ(clock_nanosleep(CLOCK_MONOTONIC, 0, &bad, NULL), EINVAL);
  ts = ns_ts(NS_PER_MS);
  CHECK_EQ(clock_nanosleep(CLOCK_THREAD_CPUTIME_ID, 0, &ts, NULL), EINVAL);
  CHECK_EQ(clock_nanosleep((clockid_t)100, 0, &ts, NULL), EINVAL);
}

TEST(clock_getres) {
  struct timespec res;
  CHECK_OK(clock_getres(CLOCK_MONOTONIC, &res));
  CHECK_EQ(res.tv_sec, 0);
  CHECK(res.tv_nsec > 0 && res.tv_nsec <= NS_PER_MS);
  CHECK_OK(clock_getres(CLOCK_REALTIME, &res));
  CHECK_EQ(res.tv_sec, 0);
  CHECK(res.tv_nsec > 0 && res.tv_nsec <= NS_PER_MS);
  CHECK_OK(clock_getres(CLOCK_MONOTONIC_COARSE, &res));
  CHECK(res.tv_nsec > 0 || res.tv_sec > 0);
  CHECK_OK(clock_getres(CLOCK_MONOTONIC, NULL));
  CHECK_ERRNO(clock_getres((clockid_t)100, &res), EINVAL);
}

// --- identity ---

TEST(uname_fields) {
  struct utsname u;
  memset(&u, 0, sizeof(u));
  CHECK_OK(uname(&u));
  CHECK(strcmp(u.sysname, "Linux") == 0);
  CHECK(strcmp(u.machine, "x86_64") == 0);
  CHECK(u.release[0] >= '1' && u.release[0] <= '9');
  CHECK(strchr(u.release, '.') != NULL);
  CHECK(u.version[0] != '\0');
  CHECK(strlen(u.nodename) < sizeof(u.nodename));
}

TEST(user_and_group_ids) {
  uid_t r, e, s;
  CHECK_OK(getresuid(&r, &e, &s));
  CHECK_EQ(r, getuid());
  CHECK_EQ(e, geteuid());
  gid_t rg, eg, sg;
  CHECK_OK(getresgid(&rg, &eg, &sg));
  CHECK_EQ(rg, getgid());
  CHECK_EQ(eg, getegid());
  // -1 means "leave unchanged", always allowed.
  CHECK_OK(setresuid((uid_t)-1, (uid_t)-1, (uid_t)-1));
  CHECK_OK(setresgid((gid_t)-1, (gid_t)-1, (gid_t)-1));
  uid_t r2, e2, s2;
  CHECK_OK(getresuid(&r2, &e2, &s2));
  CHECK(r2 == r && e2 == e && s2 == s);
  // A child has the same ids.
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    CHECK_EQ(getuid(), r);
    CHECK_EQ(getegid(), eg);
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
}

TEST(getgroups_consistent) {
  int n = getgroups(0, NULL);
  CHECK(n >= 0);
  gid_t groups[1024];
  CHECK(n <= 1024);
  CHECK_EQ(getgroups(1024, groups), n);
  if (n > 0) CHECK_ERRNO(getgroups(n - 1, groups), EINVAL);
  CHECK_ERRNO(syscall(SYS_getgroups, -1, groups), EINVAL);
}

TEST(umask_returns_previous) {
  mode_t old = umask(022);
  CHECK_EQ(umask(077), 022);
  CHECK_EQ(umask(0), 077);
  // Only the permission bits are kept.
  CHECK_EQ(umask(07777), 0);
  CHECK_EQ(umask(old), 0777);
  CHECK_EQ(umask(old), old);
}

// --- resource limits ---

static long prlimit64_raw(pid_t pid, int res, const struct rlimit *nw,
                          struct rlimit *old) {
  return syscall(SYS_prlimit64, pid, res, nw, old);
}

TEST(rlimit_nofile_round_trip) {
  struct rlimit orig;
  CHECK_OK(getrlimit(RLIMIT_NOFILE, &orig));
  CHECK(orig.rlim_cur <= orig.rlim_max);
  CHECK(orig.rlim_max >= 64);

  struct rlimit low = {64, orig.rlim_max};
  CHECK_OK(setrlimit(RLIMIT_NOFILE, &low));
  struct rlimit got;
  CHECK_OK(getrlimit(RLIMIT_NOFILE, &got));
  CHECK_EQ(got.rlim_cur, 64);
  CHECK_EQ(got.rlim_max, orig.rlim_max);
  // The lower limit is enforced on new descriptors.
  int fd = open("/dev/null", O_RDONLY);
  CHECK(fd >= 0 && fd < 64);
  CHECK_ERRNO(fcntl(fd, F_DUPFD, 64), EINVAL);
  CHECK_ERRNO(dup2(fd, 64), EBADF);
  CHECK_EQ(fcntl(fd, F_DUPFD, 63), 63);
  CHECK_OK(close(63));
  CHECK_OK(close(fd));

  // prlimit64 sees it, for pid 0 and for our own pid, and can put the old
  // value back while returning the current one.
  struct rlimit via;
  CHECK_OK(prlimit64_raw(0, RLIMIT_NOFILE, NULL, &via));
  CHECK_EQ(via.rlim_cur, 64);
  CHECK_OK(prlimit64_raw(getpid(), RLIMIT_NOFILE, NULL, &via));
  CHECK_EQ(via.rlim_cur, 64);
  struct rlimit prev;
  CHECK_OK(prlimit64_raw(0, RLIMIT_NOFILE, &orig, &prev));
  CHECK_EQ(prev.rlim_cur, 64);
  CHECK_OK(getrlimit(RLIMIT_NOFILE, &got));
  CHECK_EQ(got.rlim_cur, orig.rlim_cur);
  CHECK_EQ(got.rlim_max, orig.rlim_max);

  // soft > hard is invalid.
  struct rlimit inverted = {orig.rlim_max, orig.rlim_max - 1};
  CHECK_ERRNO(setrlimit(RLIMIT_NOFILE, &inverted), EINVAL);
  CHECK_ERRNO(prlimit64_raw(0, RLIMIT_NOFILE, &inverted, NULL), EINVAL);
  CHECK_ERRNO(getrlimit(1000, &got), EINVAL);
  CHECK_ERRNO(prlimit64_raw(0, 1000, NULL, &got), EINVAL);
  pid_t gone = fork();
  CHECK(gone >= 0);
  if (gone == 0) _exit(0);
  CHECK_EXIT(gone, 0);
  CHECK_ERRNO(prlimit64_raw(gone, RLIMIT_NOFILE, NULL, &got), ESRCH);
  CHECK_OK(getrlimit(RLIMIT_NOFILE, &got));
  CHECK_EQ(got.rlim_cur, orig.rlim_cur);
}

// --- misc ---

TEST(getrandom_fills) {
  unsigned char a[64], b[64];
  memset(a, 0, sizeof(a));
  memset(b, 0, sizeof(b));
  CHECK_EQ(getrandom(a, sizeof(a), 0), (ssize_t)sizeof(a));
  CHECK_EQ(getrandom(b, sizeof(b), GRND_NONBLOCK), (ssize_t)sizeof(b));
  int nonzero = 0;
  for (size_t i = 0; i < sizeof(a); i++) nonzero |= a[i];
  CHECK(nonzero != 0);
  CHECK(memcmp(a, b, sizeof(a)) != 0);
  CHECK_EQ(getrandom(a, 0, 0), 0);
  CHECK_ERRNO(getrandom(a, sizeof(a), 0x100), EINVAL);
}

TEST(sched_yield_ok) {
  for (int i = 0; i < 100; i++) CHECK_EQ(sched_yield(), 0);
}

// arch_prctl runs as an inline system call: while FS points at our fake
// block, glibc functions (errno, the stack protector, TLS) must not run.
static long raw_syscall2(long nr, long a, long b) {
  long ret;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(nr), "D"(a), "S"(b)
                   : "rcx", "r11", "memory");
  return ret;
}

static __thread int tls_value = 1234;
static uintptr_t fake_tcb[64];

TEST(arch_prctl_fs_round_trip) {
  uintptr_t old = 0;
  CHECK_EQ(raw_syscall2(SYS_arch_prctl, ARCH_GET_FS, (long)&old), 0);
  uintptr_t self;
  __asm__ volatile("mov %%fs:0, %0" : "=r"(self));
  CHECK_EQ(old, self);  // glibc's thread control block points to itself.
  tls_value = 5678;

  fake_tcb[0] = (uintptr_t)fake_tcb;
  fake_tcb[1] = 0xfeedface;
  __asm__ volatile("mov %%fs:0x28, %0" : "=r"(fake_tcb[5]));  // Canary.
  long r_set = raw_syscall2(SYS_arch_prctl, ARCH_SET_FS, (long)fake_tcb);
  uintptr_t seen0, seen1, got = 0;
  __asm__ volatile("mov %%fs:0, %0" : "=r"(seen0)::"memory");
  __asm__ volatile("mov %%fs:8, %0" : "=r"(seen1)::"memory");
  long r_get = raw_syscall2(SYS_arch_prctl, ARCH_GET_FS, (long)&got);
  long r_restore = raw_syscall2(SYS_arch_prctl, ARCH_SET_FS, (long)old);
  // TLS is back; now it is safe to check.
  CHECK_EQ(r_set, 0);
  CHECK_EQ(r_get, 0);
  CHECK_EQ(r_restore, 0);
  CHECK_EQ(seen0, (uintptr_t)fake_tcb);
  CHECK_EQ(seen1, 0xfeedface);
  CHECK_EQ(got, (uintptr_t)fake_tcb);
  CHECK_EQ(tls_value, 5678);
  uintptr_t now = 0;
  CHECK_EQ(raw_syscall2(SYS_arch_prctl, ARCH_GET_FS, (long)&now), 0);
  CHECK_EQ(now, old);

  // A non-canonical base is refused and changes nothing.
  const long noncanonical = (long)0x8000000000000000UL;
  CHECK_EQ(raw_syscall2(SYS_arch_prctl, ARCH_SET_FS, noncanonical), -EPERM);
  CHECK_EQ(tls_value, 5678);
  CHECK_EQ(raw_syscall2(SYS_arch_prctl, 0x9999, 0), -EINVAL);

  // GS is unused by glibc on x86-64: round-trip it too.
  uintptr_t old_gs = 1;
  CHECK_EQ(raw_syscall2(SYS_arch_prctl, ARCH_GET_GS, (long)&old_gs), 0);
  CHECK_EQ(raw_syscall2(SYS_arch_prctl, ARCH_SET_GS, (long)fake_tcb), 0);
  uintptr_t gs1;
  __asm__ volatile("mov %%gs:8, %0" : "=r"(gs1)::"memory");
  CHECK_EQ(gs1, 0xfeedface);
  CHECK_EQ(raw_syscall2(SYS_arch_prctl, ARCH_SET_GS, (long)old_gs), 0);
}

struct thread_info {
  pid_t tid, pid;
  uintptr_t fs;
  int tls;
};

static void *info_thread(void *arg) {
  struct thread_info *ti = (struct thread_info *)arg;
  ti->tid = conf_gettid();
  ti->pid = getpid();
  raw_syscall2(SYS_arch_prctl, ARCH_GET_FS, (long)&ti->fs);
  ti->tls = tls_value;  // A new thread gets the initial TLS image.
  return NULL;
}

TEST(thread_ids_and_tls) {
  CHECK_EQ(conf_gettid(), getpid());
  struct thread_info ti;
  memset(&ti, 0, sizeof(ti));
  pthread_t t;
  CHECK_EQ(pthread_create(&t, NULL, info_thread, &ti), 0);
  CHECK_EQ(pthread_join(t, NULL), 0);
  CHECK_EQ(ti.pid, getpid());
  CHECK(ti.tid != getpid());
  CHECK(ti.tid > 0);
  uintptr_t main_fs = 0;
  CHECK_EQ(raw_syscall2(SYS_arch_prctl, ARCH_GET_FS, (long)&main_fs), 0);
  CHECK(ti.fs != 0 && ti.fs != main_fs);
  CHECK_EQ(ti.tls, 1234);
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  RUN(clock_gettime_all_clocks);
  RUN(monotonic_never_goes_back);
  RUN(cpu_time_clocks);
  RUN(gettimeofday_matches_realtime);
  RUN(nanosleep_sleeps_long_enough);
  RUN(clock_nanosleep_abstime);
  RUN(clock_getres);
  RUN(uname_fields);
  RUN(user_and_group_ids);
  RUN(getgroups_consistent);
  RUN(umask_returns_previous);
  RUN(rlimit_nofile_round_trip);
  RUN(getrandom_fills);
  RUN(sched_yield_ok);
  RUN(arch_prctl_fs_round_trip);
  RUN(thread_ids_and_tls);
  PASS("time_identity");
  return 0;
}
