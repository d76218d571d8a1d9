// A child process whose injector stub is killed on the host (kill_injector.sh): the parent
// sees the child die of SIGKILL, as if the child had been killed, and carries on.
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0);
  pid_t p = fork();
  if (p == 0) {
    printf("child ready\n");
    for (;;) pause();
  }
  int st = 0;
  pid_t w = waitpid(p, &st, 0);
  printf("child %s, %s %d\n", w == p ? "reaped" : "not reaped",
         WIFSIGNALED(st) ? "killed by signal" : "exited", WIFSIGNALED(st) ? WTERMSIG(st) : st);
  // The host side checks, meanwhile, that nothing of the child is left.
  sleep(4);
  printf("parent done\n");
  return 0;
}
