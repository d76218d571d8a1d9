// Shared by the escape probes (probes.c, probes_sys.c): one output line per probe.
#ifndef SENTRY_TESTS_ESCAPE_PROBES_H_
#define SENTRY_TESTS_ESCAPE_PROBES_H_

extern int failures;

// "ok" for ret >= 0, else the errno's name (EPERM, ...).
const char* ResultName(long ret, int err);
// Prints "NAME: RESULT".
void Report(const char* name, long ret, int err);
// Report, then closes fd if the call gave one.
void ReportFd(const char* name, int fd, int err);
// Prints "FAIL: WHAT" and counts it unless ok.
void Must(int ok, const char* what);

void ProbeProcMemory(const char* token);
void ProbeKernelInterfaces(void);
void ProbeDevices(void);
void ProbeNetwork(void);
void ProbeNamespaces(const char* secret);

#endif  // SENTRY_TESTS_ESCAPE_PROBES_H_
