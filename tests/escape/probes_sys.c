// The escape probes that ask the kernel for more power: /proc memory, privileged syscalls,
// devices, raw sockets, mounts and namespaces. See probes.c for the output and the contract.
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "probes.h"

#define PROBE(name, expr)      \
  do {                         \
    errno = 0;                 \
    long r_ = (long)(expr);    \
    Report((name), r_, errno); \
  } while (0)

// A call that must fail everywhere: it would change or read the host kernel.
#define REFUSED(name, expr)           \
  do {                                \
    errno = 0;                        \
    long r_ = (long)(expr);           \
    Report((name), r_, errno);        \
    Must(r_ < 0, name " is refused"); \
  } while (0)

static int Contains(const char* buf, size_t n, const char* token) {
  return memmem(buf, n, token, strlen(token)) != NULL;
}

static int FileHas(const char* path, const char* token) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return 0;
  static char buf[1 << 16];
  ssize_t n = read(fd, buf, sizeof(buf));
  close(fd);
  return n > 0 && Contains(buf, (size_t)n, token);
}

// Reads every readable mapping of PID through /proc/PID/mem (at most 256 MiB in all).
static int MemoryHas(int pid, const char* token) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/maps", pid);
  FILE* maps = fopen(path, "r");
  snprintf(path, sizeof(path), "/proc/%d/mem", pid);
  int mem = open(path, O_RDONLY);
  int found = 0;
  size_t budget = 256u << 20;
  static char buf[1 << 20];
  char line[512];
  while (maps != NULL && mem >= 0 && !found && fgets(line, sizeof(line), maps) != NULL) {
    unsigned long start, end;
    char perms[8];
    if (sscanf(line, "%lx-%lx %7s", &start, &end, perms) != 3 || perms[0] != 'r') continue;
    if (strstr(line, "[vvar") != NULL) continue;  // reading it faults
    for (unsigned long a = start; a < end && budget > 0 && !found; a += sizeof(buf)) {
      size_t len = end - a < sizeof(buf) ? end - a : sizeof(buf);
      ssize_t n = pread(mem, buf, len, (off_t)a);
      if (n <= 0) break;
      budget -= (size_t)n;
      found = Contains(buf, (size_t)n, token);
    }
  }
  if (maps != NULL) fclose(maps);
  if (mem >= 0) close(mem);
  return found;
}

// The Sentry's environment holds the token: no /proc file and no memory the guest can read may
// show it. Our own memory holds it (we were told it), so only our environ is read.
void ProbeProcMemory(const char* token) {
  // PID 1: the probe itself in a container, the Sentry's init in the sandbox.
  errno = 0;
  int fd = open("/proc/1/mem", O_RDONLY);
  ReportFd("proc_1_mem.open", fd, errno);
  fd = open("/proc/1/environ", O_RDONLY);
  static char env[4096];
  printf("proc_1_environ.bytes: %d\n", fd >= 0 ? (int)read(fd, env, sizeof(env)) : -1);
  if (fd >= 0) close(fd);
  int found = FileHas("/proc/self/environ", token);
  DIR* d = opendir("/proc");
  for (struct dirent* e; d != NULL && (e = readdir(d)) != NULL;) {
    int pid = atoi(e->d_name);
    if (pid <= 0 || pid == getpid()) continue;
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/environ", pid);
    found |= FileHas(path, token);
    snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
    found |= FileHas(path, token);
    found |= MemoryHas(pid, token);
  }
  if (d != NULL) closedir(d);
  printf("proc_scan.host_token: %s\n", found ? "FOUND" : "absent");
  Must(!found, "the Sentry's environment shows through /proc (environ, cmdline or mem)");
}

void ProbeKernelInterfaces(void) {
  union bpf_attr attr;
  memset(&attr, 0, sizeof(attr));
  attr.map_type = BPF_MAP_TYPE_ARRAY;
  attr.key_size = 4;
  attr.value_size = 4;
  attr.max_entries = 1;
  errno = 0;
  int fd = (int)syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof(attr));
  ReportFd("bpf.map_create", fd, errno);
  struct io_uring_params params;
  memset(&params, 0, sizeof(params));
  errno = 0;
  fd = (int)syscall(SYS_io_uring_setup, 4, &params);
  ReportFd("io_uring_setup", fd, errno);
  errno = 0;
  fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
  ReportFd("userfaultfd", fd, errno);
  errno = 0;
  fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | 1 /* UFFD_USER_MODE_ONLY */);
  ReportFd("userfaultfd.user_mode_only", fd, errno);
  struct perf_event_attr pe;
  memset(&pe, 0, sizeof(pe));
  pe.size = sizeof(pe);
  pe.type = PERF_TYPE_SOFTWARE;
  pe.config = PERF_COUNT_SW_CPU_CLOCK;
  pe.disabled = 1;
  pe.exclude_kernel = 1;
  errno = 0;
  fd = (int)syscall(SYS_perf_event_open, &pe, 0, -1, -1, 0);
  ReportFd("perf_event_open.self", fd, errno);
  errno = 0;
  fd = (int)syscall(SYS_perf_event_open, &pe, -1, 0, -1, 0);
  ReportFd("perf_event_open.cpu_wide", fd, errno);
  Must(fd < 0, "a CPU-wide perf event (it sees host processes) is refused");

  REFUSED("kexec_load", syscall(SYS_kexec_load, 0, 0, NULL, 0));
  REFUSED("kexec_file_load", syscall(SYS_kexec_file_load, -1, -1, 0, "", 0));
  REFUSED("init_module", syscall(SYS_init_module, "", 0, ""));
  REFUSED("finit_module", syscall(SYS_finit_module, -1, "", 0));
  REFUSED("delete_module", syscall(SYS_delete_module, "sentry_no_such_module", O_NONBLOCK));
  REFUSED("iopl", syscall(SYS_iopl, 3));
  REFUSED("ioperm", syscall(SYS_ioperm, 0x80, 1, 1));
  static char log[4096];
  // The sandbox may keep a kernel log of its own; the host's must not show.
  errno = 0;
  int got = klogctl(3, log, sizeof(log));
  Report("syslog.read_all", got, errno);
  if (got >= 0) printf("syslog.read_all.bytes: %d\n", got);
  Must(got <= 0, "syslog READ_ALL gives nothing of the host's kernel log");
  REFUSED("swapon", swapon("/tmp/sentry-no-swap", 0));
  REFUSED("acct", syscall(SYS_acct, "/tmp/sentry-acct"));
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  REFUSED("clock_settime", clock_settime(CLOCK_REALTIME, &now));

  // open_by_handle_at walks around every mount and chroot (the "shocker" escape).
  struct {
    struct file_handle h;
    unsigned char bytes[MAX_HANDLE_SZ];
  } handle;
  memset(&handle, 0, sizeof(handle));
  handle.h.handle_bytes = MAX_HANDLE_SZ;
  int mount_id;
  PROBE("name_to_handle_at", name_to_handle_at(AT_FDCWD, "/", &handle.h, &mount_id, 0));
  int root = open("/", O_RDONLY | O_DIRECTORY);
  errno = 0;
  fd = open_by_handle_at(root, &handle.h, O_RDONLY);
  ReportFd("open_by_handle_at", fd, errno);
  Must(fd < 0, "open_by_handle_at is refused");
  // The shocker's handle: ext4's root inode (2), generation 0.
  memset(&handle, 0, sizeof(handle));
  handle.h.handle_bytes = 8;
  handle.h.handle_type = 1;  // FILEID_INO32_GEN
  handle.bytes[0] = 2;
  errno = 0;
  fd = open_by_handle_at(root, &handle.h, O_RDONLY);
  ReportFd("open_by_handle_at.crafted", fd, errno);
  Must(fd < 0, "open_by_handle_at with a crafted handle is refused");
  if (root >= 0) close(root);

  PROBE("keyctl.user_keyring",
        syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 0));
  // The sandbox's own UTS namespace: the wrapper checks the host's name did not change.
  PROBE("sethostname", sethostname("sentry-probe", 12));
}

void ProbeDevices(void) {
  static const char* const kDevices[] = {"/dev/mem",    "/dev/kmem", "/dev/port", "/dev/kmsg",
                                         "/proc/kcore", "/dev/sda",  "/dev/vda",  "/dev/nvme0n1"};
  for (size_t i = 0; i < sizeof(kDevices) / sizeof(kDevices[0]); i++) {
    char name[64], what[128];
    snprintf(name, sizeof(name), "open%s", kDevices[i]);
    for (char* c = name + 4; *c != 0; c++) {
      if (*c == '/') *c = '_';
    }
    errno = 0;
    int fd = open(kDevices[i], O_RDONLY);
    ReportFd(name, fd, errno);
    snprintf(what, sizeof(what), "%s cannot be opened", kDevices[i]);
    Must(fd < 0, what);
  }
  // Host kernel knobs, opened for writing only (never written: in the reference container,
  // which masks nothing, the open may succeed).
  static const char* const kKnobs[] = {"/proc/sysrq-trigger", "/proc/sys/kernel/core_pattern",
                                       "/proc/sys/kernel/modprobe", "/proc/sys/vm/drop_caches",
                                       "/proc/sys/kernel/hostname"};
  for (size_t i = 0; i < sizeof(kKnobs) / sizeof(kKnobs[0]); i++) {
    char name[64];
    snprintf(name, sizeof(name), "write%s", kKnobs[i]);
    for (char* c = name + 5; *c != 0; c++) {
      if (*c == '/') *c = '_';
    }
    errno = 0;
    int fd = open(kKnobs[i], O_WRONLY);
    ReportFd(name, fd, errno);
  }
  // A device node made in the sandbox's own files must not reach the host's device.
  const dev_t devs[] = {makedev(1, 1), makedev(1, 11), makedev(8, 0)};
  const char* names[] = {"mknod.mem", "mknod.kmsg", "mknod.sda"};
  for (int i = 0; i < 3; i++) {
    char node[64], name[64];
    snprintf(node, sizeof(node), "/tmp/probe-node-%d", i);
    errno = 0;
    int r = mknod(node, (i == 2 ? S_IFBLK : S_IFCHR) | 0600, devs[i]);
    Report(names[i], r, errno);
    if (r != 0) continue;
    snprintf(name, sizeof(name), "%s.open", names[i]);
    errno = 0;
    int fd = open(node, O_RDONLY);
    ReportFd(name, fd, errno);
    Must(fd < 0, "a planted device node cannot be opened");
    unlink(node);
  }
}

void ProbeNetwork(void) {
  errno = 0;
  int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
  ReportFd("socket.packet_raw", fd, errno);
  errno = 0;
  fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
  ReportFd("socket.inet_raw", fd, errno);
  errno = 0;
  fd = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
  ReportFd("socket.inet_raw_icmp", fd, errno);
  errno = 0;
  fd = socket(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6);
  ReportFd("socket.inet6_raw", fd, errno);
  // Whatever sockets there are, the only interface is the sandbox's own loopback.
  char names[256] = "";
  struct if_nameindex* ifs = if_nameindex();
  for (struct if_nameindex* i = ifs; i != NULL && i->if_index != 0; i++) {
    snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", names[0] != 0 ? "," : "",
             i->if_name);
  }
  if (ifs != NULL) if_freenameindex(ifs);
  printf("interfaces: %s\n", names[0] != 0 ? names : "none");
  Must(strcmp(names, "lo") == 0 || names[0] == 0, "no host interface is visible");
}

// Runs fn in a child (so that mounts, chroots and namespaces end with it) and waits.
static void InChild(void (*fn)(const char*), const char* secret) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    fn(secret);
    fflush(stdout);
    _exit(0);
  }
  int status;
  waitpid(pid, &status, 0);
  Must(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a namespace probe's child exits 0");
}

static int CountNumeric(const char* dir, const char* must_be_in) {
  int n = 0;
  DIR* d = opendir(dir);
  for (struct dirent* e; d != NULL && (e = readdir(d)) != NULL;) {
    if (atoi(e->d_name) <= 0) continue;
    n++;
    if (must_be_in != NULL) {
      char path[300], what[400];
      snprintf(path, sizeof(path), "%s/%s", must_be_in, e->d_name);
      snprintf(what, sizeof(what), "%s/%s names a process that %s does not show", dir, e->d_name,
               must_be_in);
      Must(access(path, F_OK) == 0, what);
    }
  }
  if (d != NULL) closedir(d);
  return n;
}

static void BindRoot(const char* secret) {
  mkdir("/tmp/probe-x", 0755);
  errno = 0;
  int r = mount("/", "/tmp/probe-x", NULL, MS_BIND | MS_REC, NULL);
  Report("mount.bind_root", r, errno);
  if (r != 0) return;
  CountNumeric("/tmp/probe-x/proc", "/proc");
  Must(access("/tmp/probe-x/sys/firmware", F_OK) != 0, "host /sys through a bind of /");
  char path[4200];
  snprintf(path, sizeof(path), "/tmp/probe-x%s", secret);
  Must(access(path, F_OK) != 0, "the secret through a bind of /");
  umount2("/tmp/probe-x", MNT_DETACH);
}

static void UmountProc(const char* secret) {
  (void)secret;
  PROBE("unshare.newns", unshare(CLONE_NEWNS));
  errno = 0;
  int r = umount2("/proc", MNT_DETACH);
  Report("umount_proc", r, errno);
  if (r == 0) printf("umount_proc.pids_left: %d\n", CountNumeric("/proc", NULL));
}

static void MountTmpfs(const char* secret) {
  (void)secret;
  mkdir("/tmp/probe-m", 0755);
  errno = 0;
  int r = mount("none", "/tmp/probe-m", "tmpfs", 0, "size=1m");
  Report("mount.tmpfs", r, errno);
  if (r == 0) umount2("/tmp/probe-m", 0);
}

static void PivotRoot(const char* secret) {
  if (unshare(CLONE_NEWNS) != 0) return;
  mkdir("/tmp/probe-pr", 0755);
  if (mount("none", "/tmp/probe-pr", "tmpfs", 0, NULL) != 0) return;
  mkdir("/tmp/probe-pr/old", 0755);
  PROBE("pivot_root", syscall(SYS_pivot_root, "/tmp/probe-pr", "/tmp/probe-pr/old"));
  if (chdir("/") != 0) return;
  PROBE("pivot_root.umount_old", umount2("/old", MNT_DETACH));
  DIR* d = opendir("/");
  int n = 0;
  for (struct dirent* e; d != NULL && (e = readdir(d)) != NULL;) n += e->d_name[0] != '.';
  if (d != NULL) closedir(d);
  printf("pivot_root.root_entries: %d\n", n);
  Must(access(secret, F_OK) != 0, "the secret after pivot_root");
}

// The classic: chroot into a subdirectory, keep the cwd outside, climb, chroot(".").
static void ChrootEscape(const char* secret) {
  struct stat before, after;
  stat("/", &before);
  mkdir("/tmp/probe-cr", 0755);
  mkdir("/tmp/probe-cr/sub", 0755);
  if (chdir("/tmp/probe-cr") != 0) return;
  errno = 0;
  int r = chroot("sub");
  Report("chroot", r, errno);
  if (r != 0) return;
  for (int i = 0; i < 64; i++) {
    if (chdir("..") != 0) break;
  }
  PROBE("chroot.climb", chroot("."));
  stat("/", &after);
  printf("chroot.climb_root: %s\n", before.st_dev == after.st_dev && before.st_ino == after.st_ino
                                        ? "the original"
                                        : "another");
  Must(access(secret, F_OK) != 0, "the secret after a chroot climb");
}

static void UnshareEach(const char* secret) {
  (void)secret;
  static const struct {
    const char* name;
    int flag;
  } kFlags[] = {{"unshare.user", CLONE_NEWUSER}, {"unshare.net", CLONE_NEWNET},
                {"unshare.pid", CLONE_NEWPID},   {"unshare.uts", CLONE_NEWUTS},
                {"unshare.ipc", CLONE_NEWIPC},   {"unshare.cgroup", CLONE_NEWCGROUP},
                {"unshare.time", CLONE_NEWTIME}};
  for (size_t i = 0; i < sizeof(kFlags) / sizeof(kFlags[0]); i++) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      PROBE(kFlags[i].name, unshare(kFlags[i].flag));
      fflush(stdout);
      _exit(0);
    }
    waitpid(pid, NULL, 0);
  }
  int fd = open("/proc/self/ns/net", O_RDONLY);
  PROBE("setns.own_net", setns(fd, CLONE_NEWNET));
  if (fd >= 0) close(fd);
}

void ProbeNamespaces(const char* secret) {
  InChild(MountTmpfs, secret);
  InChild(BindRoot, secret);
  InChild(UmountProc, secret);
  InChild(PivotRoot, secret);
  InChild(ChrootEscape, secret);
  InChild(UnshareEach, secret);
}
