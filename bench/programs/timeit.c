// timeit PROGRAM [ARGS...]: runs PROGRAM with the caller's stdin, stdout and stderr, waits for
// it, and prints "timeit_ns N" as the last line on stderr. Run inside a sandbox, it measures a
// workload without the sandbox's own start-up and tear-down. Exits with PROGRAM's status
// (128+N if it died of signal N).
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double NowNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s PROGRAM [ARGS...]\n", argv[0]);
    return 2;
  }
  double start = NowNs();
  pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    return 1;
  }
  if (pid == 0) {
    execvp(argv[1], argv + 1);
    perror(argv[1]);
    _exit(127);
  }
  int status;
  if (waitpid(pid, &status, 0) != pid) {
    perror("waitpid");
    return 1;
  }
  fprintf(stderr, "timeit_ns %.0f\n", NowNs() - start);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}
