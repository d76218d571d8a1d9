// A fork bomb or a thread bomb that stops at the first refusal: `exhaust fork` forks children
// that wait on a pipe, `exhaust thread` starts threads that do, until fork or pthread_create
// fails. Prints the errno of that failure, releases and reaps every child (or joins every
// thread), checks that a new one can be made again, and exits 0. The counts depend on the
// limit hit first and are not printed. pids_exhaust.sh runs it in a small pids cgroup,
// natively and under sentry-run.
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { kMax = 4096 };
static int release[2];

static void WaitForRelease(void) {
  char c;
  while (read(release[0], &c, 1) < 0 && errno == EINTR) {
  }
}

static void* ThreadMain(void* arg) {
  (void)arg;
  WaitForRelease();
  return NULL;
}

static int ForkBomb(void) {
  static pid_t kids[kMax];
  int n = 0, err = 0;
  for (; n < kMax; n++) {
    pid_t p = fork();
    if (p == 0) {
      close(release[1]);  // EOF once the parent closes its end
      WaitForRelease();
      _exit(7);
    }
    if (p < 0) {
      err = errno;
      break;
    }
    kids[n] = p;
  }
  printf("fork: stopped by %s\n", n == kMax ? "nothing" : strerrorname_np(err));
  close(release[1]);
  int bad = 0;
  for (int i = 0; i < n; i++) {
    int st;
    if (waitpid(kids[i], &st, 0) != kids[i] || !WIFEXITED(st) || WEXITSTATUS(st) != 7) bad++;
  }
  printf("fork: children reaped, %d with a wrong status\n", bad);
  // A reaped task may be counted by the host for a moment more: try for up to a second.
  pid_t p = -1;
  for (int i = 0; i < 100 && (p = fork()) < 0; i++) usleep(10000);
  if (p == 0) _exit(0);
  int st = -1;
  printf("fork again: %s\n", p > 0 && waitpid(p, &st, 0) == p && st == 0 ? "ok" : "failed");
  return n > 0 && n < kMax && bad == 0 ? 0 : 1;
}

static int ThreadBomb(void) {
  static pthread_t threads[kMax];
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 * 1024);
  int n = 0, err = 0;
  for (; n < kMax; n++) {
    err = pthread_create(&threads[n], &attr, ThreadMain, NULL);
    if (err != 0) break;
  }
  printf("thread: stopped by %s\n", n == kMax ? "nothing" : strerrorname_np(err));
  close(release[1]);
  for (int i = 0; i < n; i++) pthread_join(threads[i], NULL);
  printf("thread: all joined\n");
  // A joined thread may be counted by the host for a moment more: try for up to a second.
  pthread_t t;
  int again = EAGAIN;
  for (int i = 0; i < 100 && (again = pthread_create(&t, &attr, ThreadMain, NULL)) != 0; i++) {
    usleep(10000);
  }
  if (again == 0) pthread_join(t, NULL);
  printf("thread again: %s\n", again == 0 ? "ok" : strerrorname_np(again));
  return n > 0 && n < kMax ? 0 : 1;
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IONBF, 0);
  if (argc != 2 || pipe(release) != 0) return 2;
  if (strcmp(argv[1], "fork") == 0) return ForkBomb();
  if (strcmp(argv[1], "thread") == 0) return ThreadBomb();
  return 2;
}
