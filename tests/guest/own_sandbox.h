// For the escape probes (escape.c, escape_fs.c), which would escape by design if run natively:
// true only in a sandbox of our own, where this process is PID 1 of its PID namespace (an OCI
// container's process) or the child of the Sentry's own init (sentry-run's command, whose
// parent's /proc/1/comm is "sentry-init").
#pragma once

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int InOwnSandbox(void) {
  if (getpid() == 1) return 1;
  if (getppid() != 1) return 0;
  char comm[32] = {0};
  FILE* f = fopen("/proc/1/comm", "r");
  if (f == NULL) return 0;
  int ok = fgets(comm, sizeof comm, f) != NULL && strcmp(comm, "sentry-init\n") == 0;
  fclose(f);
  return ok;
}
