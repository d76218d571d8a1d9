// Threads: pthread and raw clone (CLONE_THREAD, SETTID/CLEARTID, CLONE_VM
// and CLONE_FILES without CLONE_THREAD), what threads share, thread-directed
// signals, fork and execve from a non-main thread, exit vs. exit_group.
//
// Child mode "pid PID PPID" checks the ids after an execve from a thread.

#include "common.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>

static int child_main(int argc, char **argv) {
  if (strcmp(argv[1], "pid") == 0 && argc == 4) {
    // After an exec from a non-main thread the process keeps its pid and
    // the exec'ing thread becomes the (only) main thread.
    CHECK_EQ(getpid(), atoi(argv[2]));
    CHECK_EQ(conf_gettid(), getpid());
    CHECK_EQ(getppid(), atoi(argv[3]));
    _exit(33);
  }
  fprintf(stderr, "unknown child mode %s\n", argv[1]);
  _exit(2);
}

// A stack for raw clone children.
static char *clone_stack(size_t size) {
  char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(stack != MAP_FAILED);
  return stack;
}

// --- cases ---

struct thread_ids {
  pid_t tid;
  pid_t pid;
};

static void *ids_thread(void *arg) {
  struct thread_ids *ids = (struct thread_ids *)arg;
  ids->tid = conf_gettid();
  ids->pid = getpid();
  return arg;
}

TEST(pthread_ids) {
  enum { kThreads = 4 };
  pthread_t t[kThreads];
  struct thread_ids ids[kThreads];
  for (int i = 0; i < kThreads; i++) {
    CHECK_EQ(pthread_create(&t[i], NULL, ids_thread, &ids[i]), 0);
  }
  for (int i = 0; i < kThreads; i++) {
    void *ret = NULL;
    CHECK_EQ(pthread_join(t[i], &ret), 0);
    CHECK(ret == &ids[i]);
  }
  for (int i = 0; i < kThreads; i++) {
    CHECK_EQ(ids[i].pid, getpid());
    CHECK(ids[i].tid != getpid());
    for (int j = 0; j < i; j++) CHECK(ids[i].tid != ids[j].tid);
  }
}

// Shared with the raw clone thread, which runs on our TLS too.
static volatile pid_t clone_child_tid;
static volatile pid_t clone_child_pid;
static volatile pid_t clone_child_seen_ctid;
static pid_t clone_ctid;
static pid_t clone_ptid;

static int clone_fn(void *arg) {
  (void)arg;
  clone_child_tid = (pid_t)syscall(SYS_gettid);
  clone_child_pid = (pid_t)syscall(SYS_getpid);
  clone_child_seen_ctid = __atomic_load_n(&clone_ctid, __ATOMIC_SEQ_CST);
  return 0;  // glibc's clone stub then calls exit (this thread only).
}

TEST(clone_thread_settid_cleartid) {
  size_t stack_size = 256 * 1024;
  char *stack = clone_stack(stack_size);
  clone_ctid = -1;
  clone_ptid = 0;
  int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
              CLONE_THREAD | CLONE_SYSVSEM | CLONE_PARENT_SETTID |
              CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID;
  int tid = clone(clone_fn, stack + stack_size, flags, NULL, &clone_ptid,
                  NULL, &clone_ctid);
  CHECK(tid > 0);
  // CLONE_PARENT_SETTID is written before clone returns in the parent.
  CHECK_EQ(clone_ptid, tid);
  // CLONE_CHILD_CLEARTID: at thread exit the kernel stores 0 and does a
  // (shared, not private) FUTEX_WAKE on the word. Wait for that.
  int64_t deadline = conf_now_ns(CLOCK_MONOTONIC) + 5000000000LL;
  for (;;) {
    pid_t v = __atomic_load_n(&clone_ctid, __ATOMIC_SEQ_CST);
    if (v == 0) break;
    struct timespec ts = {0, 100 * 1000000L};
    syscall(SYS_futex, &clone_ctid, FUTEX_WAIT, v, &ts, NULL, 0);
    CHECK(conf_now_ns(CLOCK_MONOTONIC) < deadline);
  }
  CHECK_EQ(clone_child_tid, tid);
  CHECK_EQ(clone_child_pid, getpid());
  // CLONE_CHILD_SETTID stored the tid before the child ran any code.
  CHECK_EQ(clone_child_seen_ctid, tid);
  CHECK_OK(munmap(stack, stack_size));
}

// Raw clone children without CLONE_SETTLS run on the parent's TLS, so they
// only use raw syscalls and plain stores: no errno, no stdio, no CHECK.
static volatile int vm_child_store;
static volatile pid_t vm_child_pid;
static volatile long vm_child_close;

static int vm_child_fn(void *arg) {
  vm_child_pid = (pid_t)syscall(SYS_getpid);
  vm_child_store = 77;
  vm_child_close = syscall(SYS_close, (long)(intptr_t)arg);
  return 5;  // Becomes the exit status: this child is a process.
}

TEST(clone_vm_without_thread) {
  const size_t size = 256 * 1024;
  char *stack = clone_stack(size);
  int p[2];
  CHECK_OK(pipe(p));
  // CLONE_VM + SIGCHLD: a separate process sharing our memory (not our
  // descriptor table): its store is visible, its close is not.
  vm_child_store = 0;
  pid_t pid = clone(vm_child_fn, stack + size, CLONE_VM | SIGCHLD,
                    (void *)(intptr_t)p[0]);
  CHECK(pid > 0);
  CHECK_EXIT(pid, 5);
  CHECK_EQ(vm_child_store, 77);
  CHECK_EQ(vm_child_pid, pid);
  CHECK(pid != getpid());
  CHECK_EQ(vm_child_close, 0);
  CHECK_EQ(fcntl(p[0], F_GETFD), 0);

  // With CLONE_FILES the descriptor table is shared too.
  pid = clone(vm_child_fn, stack + size, CLONE_VM | CLONE_FILES | SIGCHLD,
              (void *)(intptr_t)p[0]);
  CHECK(pid > 0);
  CHECK_EXIT(pid, 5);
  CHECK_EQ(vm_child_close, 0);
  CHECK_ERRNO(fcntl(p[0], F_GETFD), EBADF);
  CHECK_OK(close(p[1]));
  CHECK_OK(munmap(stack, size));
}

struct shared_state {
  int pipe[2];
  int *heap;
};

static void *sharing_thread(void *arg) {
  struct shared_state *s = (struct shared_state *)arg;
  CHECK_OK(pipe(s->pipe));
  s->heap = malloc(sizeof(int));
  CHECK(s->heap != NULL);
  *s->heap = 99;
  CHECK_EQ(write(s->pipe[1], "t", 1), 1);
  return NULL;
}

TEST(threads_share_fds_and_memory) {
  struct shared_state s;
  memset(&s, 0, sizeof(s));
  pthread_t t;
  CHECK_EQ(pthread_create(&t, NULL, sharing_thread, &s), 0);
  CHECK_EQ(pthread_join(t, NULL), 0);
  // Descriptors the thread opened are ours; so is its memory.
  char c;
  CHECK_EQ(read(s.pipe[0], &c, 1), 1);
  CHECK_EQ(c, 't');
  CHECK_EQ(*s.heap, 99);
  free(s.heap);
  CHECK_OK(close(s.pipe[0]));
  CHECK_OK(close(s.pipe[1]));
}

static volatile pid_t handler_tid;
static void record_tid_handler(int sig) {
  (void)sig;
  handler_tid = conf_gettid();
}

static volatile pid_t target_tid;
static volatile int target_go;
static volatile int target_mask_has_usr2;

static void *signal_target(void *arg) {
  (void)arg;
  // Per-thread mask: blocking SIGUSR2 here does not block it in main.
  sigset_t usr2;
  sigemptyset(&usr2);
  sigaddset(&usr2, SIGUSR2);
  CHECK_EQ(pthread_sigmask(SIG_BLOCK, &usr2, NULL), 0);
  target_tid = conf_gettid();
  int64_t deadline = conf_now_ns(CLOCK_MONOTONIC) + 5000000000LL;
  while (handler_tid == 0) {
    CHECK(conf_now_ns(CLOCK_MONOTONIC) < deadline);
    conf_sleep_ms(1);
  }
  sigset_t m;
  CHECK_EQ(pthread_sigmask(SIG_BLOCK, NULL, &m), 0);
  target_mask_has_usr2 = sigismember(&m, SIGUSR2);
  return NULL;
}

TEST(thread_directed_signal_and_masks) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = record_tid_handler;
  CHECK_OK(sigaction(SIGUSR1, &sa, NULL));
  handler_tid = 0;
  target_tid = 0;
  pthread_t t;
  CHECK_EQ(pthread_create(&t, NULL, signal_target, NULL), 0);
  while (target_tid == 0) conf_sleep_ms(1);
  // tgkill picks the thread; the handler runs on it.
  CHECK_OK(syscall(SYS_tgkill, getpid(), target_tid, SIGUSR1));
  CHECK_EQ(pthread_join(t, NULL), 0);
  CHECK_EQ(handler_tid, target_tid);
  CHECK_EQ(target_mask_has_usr2, 1);
  sigset_t m;
  CHECK_OK(sigprocmask(SIG_BLOCK, NULL, &m));
  CHECK(!sigismember(&m, SIGUSR2));
  // Once the thread is gone its tid no longer names a thread of ours.
  // (pthread_join returns when the kernel clears the tid word, a little
  // before the exiting thread is released, so poll.)
  int64_t deadline = conf_now_ns(CLOCK_MONOTONIC) + 5000000000LL;
  while (syscall(SYS_tgkill, getpid(), target_tid, 0) == 0) {
    CHECK(conf_now_ns(CLOCK_MONOTONIC) < deadline);
    conf_sleep_ms(1);
  }
  CHECK_EQ(errno, ESRCH);
  sa.sa_handler = SIG_DFL;
  CHECK_OK(sigaction(SIGUSR1, &sa, NULL));
}

static void *forking_thread(void *arg) {
  pid_t parent = *(pid_t *)arg;
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    // Only the forking thread exists in the child, as its main thread.
    CHECK_EQ(conf_gettid(), getpid());
    CHECK_EQ(getppid(), parent);
    _exit(21);
  }
  CHECK_EXIT(pid, 21);
  return NULL;
}

TEST(fork_from_thread) {
  pid_t me = getpid();
  pthread_t t;
  CHECK_EQ(pthread_create(&t, NULL, forking_thread, &me), 0);
  CHECK_EQ(pthread_join(t, NULL), 0);
}

static void *exit_group_thread(void *arg) {
  (void)arg;
  conf_sleep_ms(10);
  _exit(5);  // exit_group: takes the whole process down.
}

static void *survivor_thread(void *arg) {
  (void)arg;
  // Runs on after the main thread has exited with SYS_exit.
  conf_sleep_ms(30);
  _exit(9);
}

TEST(thread_exit_semantics) {
  // exit_group from a non-main thread kills the main thread too.
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, exit_group_thread, NULL), 0);
    for (;;) pause();
  }
  CHECK_EXIT(pid, 5);

  // The main thread exiting alone (SYS_exit) leaves the process running
  // until its last thread is gone; the status is the last exit_group's.
  pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, survivor_thread, NULL), 0);
    syscall(SYS_exit, 0);
    _exit(99);
  }
  CHECK_EXIT(pid, 9);
}

static pid_t exec_thread_pid;
static pid_t exec_thread_ppid;

static void *exec_thread(void *arg) {
  (void)arg;
  char pid[16], ppid[16];
  snprintf(pid, sizeof(pid), "%d", exec_thread_pid);
  snprintf(ppid, sizeof(ppid), "%d", exec_thread_ppid);
  execl(conf_self, conf_self, "pid", pid, ppid, (char *)NULL);
  _exit(127);
}

TEST(execve_from_thread) {
  pid_t parent = getpid();
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    exec_thread_pid = getpid();
    exec_thread_ppid = parent;
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, exec_thread, NULL), 0);
    // The exec kills this (main) thread; it never returns from pause.
    for (;;) pause();
  }
  CHECK_EXIT(pid, 33);
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  if (argc > 1) return child_main(argc, argv);
  RUN(pthread_ids);
  RUN(clone_thread_settid_cleartid);
  RUN(clone_vm_without_thread);
  RUN(threads_share_fds_and_memory);
  RUN(thread_directed_signal_and_masks);
  RUN(fork_from_thread);
  RUN(thread_exit_semantics);
  RUN(execve_from_thread);
  PASS("threads");
  return 0;
}
