// fork_exec COUNT [PROGRAM]: forks COUNT children one after the other, each execs PROGRAM
// (default /bin/true) and is waited for; prints "total_ns N". The clock runs inside the
// program, so sandbox start-up is not counted.
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double NowNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char** argv) {
  if (argc < 2 || atoi(argv[1]) <= 0) {
    fprintf(stderr, "usage: %s COUNT [PROGRAM]\n", argv[0]);
    return 2;
  }
  int count = atoi(argv[1]);
  const char* program = argc > 2 ? argv[2] : "/bin/true";
  double start = NowNs();
  for (int i = 0; i < count; i++) {
    pid_t pid = fork();
    if (pid < 0) {
      perror("fork");
      return 1;
    }
    if (pid == 0) {
      execl(program, program, (char*)NULL);
      _exit(127);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      fprintf(stderr, "%s: child %d of %s failed (status 0x%x)\n", argv[0], i, program, status);
      return 1;
    }
  }
  printf("total_ns %.0f\n", NowNs() - start);
  return 0;
}
