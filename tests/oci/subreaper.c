// oci_subreaper CMD [ARGS...]: runs CMD as a child subreaper would (containerd-shim is one),
// so that a container's sandbox process, orphaned when `sentry create` exits, is reaped here.
// Each reaped orphan's status is written to $OCI_REAP_DIR/PID as "exit N" or "signal N",
// which is how the tests see the status the shim would see. Exits with CMD's status.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static void Record(const char* dir, pid_t pid, int status) {
  char path[4096], tmp[4100];
  snprintf(path, sizeof(path), "%s/%d", dir, pid);
  snprintf(tmp, sizeof(tmp), "%s.tmp", path);
  FILE* f = fopen(tmp, "w");
  if (f == NULL) return;
  if (WIFSIGNALED(status)) {
    fprintf(f, "signal %d\n", WTERMSIG(status));
  } else {
    fprintf(f, "exit %d\n", WEXITSTATUS(status));
  }
  fclose(f);
  rename(tmp, path);
}

int main(int argc, char** argv) {
  const char* dir = getenv("OCI_REAP_DIR");
  if (argc < 2 || dir == NULL) {
    fprintf(stderr, "usage: OCI_REAP_DIR=DIR oci_subreaper CMD [ARGS...]\n");
    return 2;
  }
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    perror("oci_subreaper: PR_SET_CHILD_SUBREAPER");
    return 2;
  }
  pid_t child = fork();
  if (child == 0) {
    execvp(argv[1], argv + 1);
    perror(argv[1]);
    _exit(127);
  }
  for (;;) {
    int status;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      return 2;
    }
    if (pid != child) {
      Record(dir, pid, status);
      continue;
    }
    // Reap what has already ended; anything still running is left to init.
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) Record(dir, pid, status);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
}
