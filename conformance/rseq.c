// rseq(2): glibc's registration at start-up and in new threads, the errno rules of
// registering and unregistering (EBUSY, EPERM, EINVAL, EFAULT), what unregistering leaves in
// the area, fork keeping the registration, and a critical section interrupted by a signal
// continuing at its abort handler rather than where it was.
#include "common.h"

#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/rseq.h>

static struct rseq *glibc_area(void) {
  return (struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
}

static long rseq_(void *area, uint32_t len, int flags, uint32_t sig) {
  return syscall(SYS_rseq, area, len, flags, sig);
}

static struct rseq own_area __attribute__((aligned(32)));
static char spare[96] __attribute__((aligned(32)));

// The CPU fields once the kernel has filled them: CPUs that exist. (They are equal but for a
// migration between the two reads, so that is not checked.)
static void check_cpu_fields(const volatile struct rseq *a) {
  int cpus = (int)sysconf(_SC_NPROCESSORS_CONF);
  int cpu = (int)a->cpu_id;
  int start = (int)a->cpu_id_start;
  CHECK(cpu >= 0);
  CHECK(cpu < cpus);
  CHECK(start >= 0);
  CHECK(start < cpus);
}

TEST(glibc_registered) {
  CHECK(__rseq_size > 0);  // glibc 2.36 says 20: the fields up to flags
  check_cpu_fields(glibc_area());
}

TEST(registration_errnos) {
  struct rseq *a = glibc_area();
  CHECK_ERRNO(rseq_(a, 32, 0, RSEQ_SIG), EBUSY);
  CHECK_ERRNO(rseq_(a, 32, 0, RSEQ_SIG + 1), EPERM);
  CHECK_ERRNO(rseq_(&own_area, 32, 0, RSEQ_SIG), EINVAL);
  CHECK_ERRNO(rseq_(a, 64, 0, RSEQ_SIG), EINVAL);
  CHECK_ERRNO(rseq_(a, 32, 2, RSEQ_SIG), EINVAL);
  CHECK_ERRNO(rseq_(a, 32, RSEQ_FLAG_UNREGISTER | 2, RSEQ_SIG), EINVAL);
  CHECK_ERRNO(rseq_(a, 32, RSEQ_FLAG_UNREGISTER, RSEQ_SIG + 1), EPERM);
  CHECK_ERRNO(rseq_(&own_area, 32, RSEQ_FLAG_UNREGISTER, RSEQ_SIG), EINVAL);
  CHECK_ERRNO(rseq_(a, 64, RSEQ_FLAG_UNREGISTER, RSEQ_SIG), EINVAL);
  check_cpu_fields(a);
}

TEST(unregister_and_register_again) {
  struct rseq *a = glibc_area();
  CHECK_OK(rseq_(a, 32, RSEQ_FLAG_UNREGISTER, RSEQ_SIG));
  CHECK_EQ((int)a->cpu_id, RSEQ_CPU_ID_UNINITIALIZED);
  CHECK_EQ((int)a->cpu_id_start, 0);
  CHECK_ERRNO(rseq_(a, 32, RSEQ_FLAG_UNREGISTER, RSEQ_SIG), EINVAL);
  // New registrations: at least 32 bytes, 32-byte aligned, in user space. (Longer areas
  // are refused by 6.1, which the Sentry reports, and taken by 6.3 and later: not checked.)
  CHECK_ERRNO(rseq_(spare + 8, 32, 0, RSEQ_SIG), EINVAL);
  CHECK_ERRNO(rseq_(spare, 16, 0, RSEQ_SIG), EINVAL);
  CHECK_ERRNO(rseq_((void *)0xffffffffffff0000ul, 32, 0, RSEQ_SIG), EFAULT);
  own_area.cpu_id = (uint32_t)RSEQ_CPU_ID_UNINITIALIZED;
  CHECK_OK(rseq_(&own_area, 32, 0, 0x12345678));
  check_cpu_fields(&own_area);
  CHECK_ERRNO(rseq_(&own_area, 32, 0, 0x12345678), EBUSY);
  CHECK_ERRNO(rseq_(&own_area, 32, RSEQ_FLAG_UNREGISTER, RSEQ_SIG), EPERM);
  CHECK_OK(rseq_(&own_area, 32, RSEQ_FLAG_UNREGISTER, 0x12345678));
  CHECK_EQ((int)own_area.cpu_id, RSEQ_CPU_ID_UNINITIALIZED);
  // glibc's area back, as it was.
  CHECK_OK(rseq_(a, 32, 0, RSEQ_SIG));
  check_cpu_fields(a);
}

TEST(fork_keeps_registration) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    struct rseq *a = glibc_area();
    CHECK_ERRNO(rseq_(a, 32, 0, RSEQ_SIG), EBUSY);
    check_cpu_fields(a);
    // The registration is live in the child: unregistering resets the fields.
    CHECK_OK(rseq_(a, 32, RSEQ_FLAG_UNREGISTER, RSEQ_SIG));
    CHECK_EQ((int)a->cpu_id, RSEQ_CPU_ID_UNINITIALIZED);
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
  CHECK_ERRNO(rseq_(glibc_area(), 32, 0, RSEQ_SIG), EBUSY);
}

static void *thread_main(void *arg) {
  (void)arg;
  struct rseq *a = glibc_area();
  CHECK(a != &own_area);
  check_cpu_fields(a);
  CHECK_ERRNO(rseq_(a, 32, 0, RSEQ_SIG), EBUSY);
  return NULL;
}

TEST(threads_register_their_own) {
  pthread_t th;
  CHECK_EQ(pthread_create(&th, NULL, thread_main, NULL), 0);
  CHECK_EQ(pthread_join(th, NULL), 0);
}

static volatile int stop_spinning;
static void on_timer(int sig) {
  (void)sig;
  stop_spinning = 1;
}

// Spins inside a critical section until stop_spinning is set. Returns 1 if it left through
// the abort handler (a signal, a preemption or a migration), 0 if it ran to its end, which
// only happens if a signal handler returned into the middle of the section.
static int spin_in_critical_section(struct rseq *a) {
  int aborted;
  __asm__ __volatile__(
      ".pushsection .data.rseq_cs, \"aw\"\n\t"
      ".balign 32\n\t"
      "4:\n\t"
      ".long 0, 0\n\t"
      ".quad 1f, (2f - 1f), 3f\n\t"
      ".popsection\n\t"
      "leaq 4b(%%rip), %%rax\n\t"
      "movq %%rax, 8(%[area])\n\t"
      "1:\n\t"
      "cmpl $0, %[stop]\n\t"
      "je 1b\n\t"
      "movl $0, %[aborted]\n\t"
      "2:\n\t"
      "jmp 5f\n\t"
      ".long 0x53053053\n\t"
      "3:\n\t"
      "movl $1, %[aborted]\n\t"
      "5:\n\t"
      : [aborted] "=&r"(aborted)
      : [area] "r"(a), [stop] "m"(stop_spinning)
      : "rax", "memory", "cc");
  a->rseq_cs = 0;
  return aborted;
}

TEST(signal_aborts_critical_section) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_timer;
  CHECK_OK(sigaction(SIGUSR1, &sa, NULL));
  struct sigevent ev;
  memset(&ev, 0, sizeof(ev));
  ev.sigev_notify = SIGEV_SIGNAL;
  ev.sigev_signo = SIGUSR1;
  timer_t timer;
  CHECK_OK(timer_create(CLOCK_MONOTONIC, &ev, &timer));
  for (int i = 0; i < 5; i++) {
    stop_spinning = 0;
    struct itimerspec its = {{0, 0}, {0, 20 * 1000 * 1000}};
    CHECK_OK(timer_settime(timer, 0, &its, NULL));
    int aborted = spin_in_critical_section(glibc_area());
    // Aborted before the signal (a preemption): wait for it outside the section.
    while (!stop_spinning) {
    }
    CHECK_EQ(aborted, 1);
    CHECK_EQ(glibc_area()->rseq_cs, 0);
  }
  CHECK_OK(timer_delete(timer));
  signal(SIGUSR1, SIG_DFL);
}

static char *fault_page;
static void on_fault(int sig) {
  (void)sig;
  CHECK_OK(mprotect(fault_page, 4096, PROT_READ));
}

// Reads a page that faults the first time, inside a critical section. Returns 1 if it left
// through the abort handler, 0 if the handler returned into the section and it ran on.
static int fault_in_critical_section(struct rseq *a) {
  int aborted;
  __asm__ __volatile__(
      ".pushsection .data.rseq_cs, \"aw\"\n\t"
      ".balign 32\n\t"
      "4:\n\t"
      ".long 0, 0\n\t"
      ".quad 1f, (2f - 1f), 3f\n\t"
      ".popsection\n\t"
      "leaq 4b(%%rip), %%rax\n\t"
      "movq %%rax, 8(%[area])\n\t"
      "1:\n\t"
      "movl (%[page]), %%ecx\n\t"
      "movl $0, %[aborted]\n\t"
      "2:\n\t"
      "jmp 5f\n\t"
      ".long 0x53053053\n\t"
      "3:\n\t"
      "movl $1, %[aborted]\n\t"
      "5:\n\t"
      : [aborted] "=&r"(aborted)
      : [area] "r"(a), [page] "r"(fault_page)
      : "rax", "rcx", "memory", "cc");
  a->rseq_cs = 0;
  return aborted;
}

// A signal for a fault inside the section: deterministic, unlike a timer's, which a
// preemption may beat.
TEST(fault_signal_aborts_critical_section) {
  fault_page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(fault_page != MAP_FAILED);
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_fault;
  CHECK_OK(sigaction(SIGSEGV, &sa, NULL));
  CHECK_EQ(fault_in_critical_section(glibc_area()), 1);
  // Not faulting now, the section runs to its end.
  CHECK_EQ(fault_in_critical_section(glibc_area()), 0);
  signal(SIGSEGV, SIG_DFL);
  CHECK_OK(munmap(fault_page, 4096));
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  alarm(60);  // a critical section that is never left would spin forever
  RUN(glibc_registered);
  RUN(registration_errnos);
  RUN(unregister_and_register_again);
  RUN(fork_keeps_registration);
  RUN(threads_register_their_own);
  RUN(signal_aborts_critical_section);
  RUN(fault_signal_aborts_critical_section);
  PASS("rseq");
}
