// The syscall table: every x86_64 syscall number, in order. The single source of truth for
// dispatch, support levels and notes (`sentry syscalls` prints it) and --strace formats.
#include "syscalls/table.h"

#include <algorithm>

namespace sentry::syscalls {

using kernel::Task;

Result<uint64_t> SysAccess(Task& t, GuestAddr path, int mode);
Result<uint64_t> SysPtrace(Task& t, int64_t request, int pid, uint64_t addr, uint64_t data);
Result<uint64_t> SysSethostname(Task& t, GuestAddr name, int len);
Result<uint64_t> SysSetdomainname(Task& t, GuestAddr name, int len);
Result<uint64_t> SysSocket(Task& t, int domain, int type, int protocol);
Result<uint64_t> SysSocketpair(Task& t, int domain, int type, int protocol, GuestAddr sv);
Result<uint64_t> SysBind(Task& t, int fd, GuestAddr addr, int len);
Result<uint64_t> SysListen(Task& t, int fd, int backlog);
Result<uint64_t> SysAccept(Task& t, int fd, GuestAddr addr, GuestAddr len_addr);
Result<uint64_t> SysAccept4(Task& t, int fd, GuestAddr addr, GuestAddr len_addr, int flags);
Result<uint64_t> SysConnect(Task& t, int fd, GuestAddr addr, int len);
Result<uint64_t> SysShutdown(Task& t, int fd, int how);
Result<uint64_t> SysGetsockname(Task& t, int fd, GuestAddr addr, GuestAddr len_addr);
Result<uint64_t> SysGetpeername(Task& t, int fd, GuestAddr addr, GuestAddr len_addr);
Result<uint64_t> SysSetsockopt(Task& t, int fd, int level, int name, GuestAddr val, int len);
Result<uint64_t> SysGetsockopt(Task& t, int fd, int level, int name, GuestAddr val, GuestAddr len_addr);
Result<uint64_t> SysSendto(Task& t, int fd, GuestAddr buf, size_t len, int flags, GuestAddr addr, int addrlen);
Result<uint64_t> SysRecvfrom(Task& t, int fd, GuestAddr buf, size_t len, int flags, GuestAddr addr, GuestAddr len_addr);
Result<uint64_t> SysSendmsg(Task& t, int fd, GuestAddr msg, int flags);
Result<uint64_t> SysRecvmsg(Task& t, int fd, GuestAddr msg, int flags);
Result<uint64_t> SysSendmmsg(Task& t, int fd, GuestAddr vec, unsigned vlen, int flags);
Result<uint64_t> SysRecvmmsg(Task& t, int fd, GuestAddr vec, unsigned vlen, int flags, GuestAddr timeout);
Result<uint64_t> SysArchPrctl(Task& t, int code, uint64_t addr);
Result<uint64_t> SysBrk(Task& t, uint64_t addr);
Result<uint64_t> SysChdir(Task& t, GuestAddr path_addr);
Result<uint64_t> SysFlock(Task& t, int fd, int op);
Result<uint64_t> SysMkdir(Task& t, GuestAddr path, uint32_t mode);
Result<uint64_t> SysMkdirat(Task& t, int dirfd, GuestAddr path, uint32_t mode);
Result<uint64_t> SysMknod(Task& t, GuestAddr path, uint32_t mode, uint32_t dev);
Result<uint64_t> SysMknodat(Task& t, int dirfd, GuestAddr path, uint32_t mode, uint32_t dev);
Result<uint64_t> SysRmdir(Task& t, GuestAddr path);
Result<uint64_t> SysUnlink(Task& t, GuestAddr path);
Result<uint64_t> SysUnlinkat(Task& t, int dirfd, GuestAddr path, int flags);
Result<uint64_t> SysRename(Task& t, GuestAddr oldpath, GuestAddr newpath);
Result<uint64_t> SysRenameat(Task& t, int olddirfd, GuestAddr oldpath, int newdirfd, GuestAddr newpath);
Result<uint64_t> SysRenameat2(Task& t, int olddirfd, GuestAddr oldpath, int newdirfd, GuestAddr newpath, uint32_t flags);
Result<uint64_t> SysLink(Task& t, GuestAddr oldpath, GuestAddr newpath);
Result<uint64_t> SysLinkat(Task& t, int olddirfd, GuestAddr oldpath, int newdirfd, GuestAddr newpath, int flags);
Result<uint64_t> SysSymlink(Task& t, GuestAddr target, GuestAddr path);
Result<uint64_t> SysSymlinkat(Task& t, GuestAddr target, int dirfd, GuestAddr path);
Result<uint64_t> SysChmod(Task& t, GuestAddr path, uint32_t mode);
Result<uint64_t> SysFchmod(Task& t, int fd, uint32_t mode);
Result<uint64_t> SysFchmodat(Task& t, int dirfd, GuestAddr path, uint32_t mode);
Result<uint64_t> SysChown(Task& t, GuestAddr path, uint32_t uid, uint32_t gid);
Result<uint64_t> SysFchown(Task& t, int fd, uint32_t uid, uint32_t gid);
Result<uint64_t> SysLchown(Task& t, GuestAddr path, uint32_t uid, uint32_t gid);
Result<uint64_t> SysFchownat(Task& t, int dirfd, GuestAddr path, uint32_t uid, uint32_t gid, int flags);
Result<uint64_t> SysUtimensat(Task& t, int dirfd, GuestAddr path, GuestAddr times, int flags);
Result<uint64_t> SysFutimesat(Task& t, int dirfd, GuestAddr path, GuestAddr times);
Result<uint64_t> SysUtimes(Task& t, GuestAddr path, GuestAddr times);
Result<uint64_t> SysUtime(Task& t, GuestAddr path, GuestAddr times);
Result<uint64_t> SysTruncate(Task& t, GuestAddr path, int64_t length);
Result<uint64_t> SysFtruncate(Task& t, int fd, int64_t length);
Result<uint64_t> SysFallocate(Task& t, int fd, int mode, int64_t offset, int64_t len);
Result<uint64_t> SysFsync(Task& t, int fd);
Result<uint64_t> SysFdatasync(Task& t, int fd);
Result<uint64_t> SysSyncfs(Task& t, int fd);
Result<uint64_t> SysSync(Task& t);
Result<uint64_t> SysStatfs(Task& t, GuestAddr path, GuestAddr buf);
Result<uint64_t> SysFstatfs(Task& t, int fd, GuestAddr buf);
Result<uint64_t> SysFadvise64(Task& t, int fd, int64_t offset, int64_t len, int advice);
Result<uint64_t> SysReadahead(Task& t, int fd, int64_t offset, size_t count);
Result<uint64_t> SysNameToHandleAt(Task& t, int dirfd, GuestAddr path, GuestAddr handle, GuestAddr mount_id, int flags);
Result<uint64_t> SysGetxattr(Task& t, GuestAddr path, GuestAddr name, GuestAddr value, size_t size);
Result<uint64_t> SysLgetxattr(Task& t, GuestAddr path, GuestAddr name, GuestAddr value, size_t size);
Result<uint64_t> SysFgetxattr(Task& t, int fd, GuestAddr name, GuestAddr value, size_t size);
Result<uint64_t> SysSetxattr(Task& t, GuestAddr path, GuestAddr name, GuestAddr value, size_t size, int flags);
Result<uint64_t> SysLsetxattr(Task& t, GuestAddr path, GuestAddr name, GuestAddr value, size_t size, int flags);
Result<uint64_t> SysFsetxattr(Task& t, int fd, GuestAddr name, GuestAddr value, size_t size, int flags);
Result<uint64_t> SysListxattr(Task& t, GuestAddr path, GuestAddr list, size_t size);
Result<uint64_t> SysLlistxattr(Task& t, GuestAddr path, GuestAddr list, size_t size);
Result<uint64_t> SysFlistxattr(Task& t, int fd, GuestAddr list, size_t size);
Result<uint64_t> SysRemovexattr(Task& t, GuestAddr path, GuestAddr name);
Result<uint64_t> SysLremovexattr(Task& t, GuestAddr path, GuestAddr name);
Result<uint64_t> SysFremovexattr(Task& t, int fd, GuestAddr name);
Result<uint64_t> SysMount(Task& t, GuestAddr source, GuestAddr target, GuestAddr type, uint64_t flags, GuestAddr data);
Result<uint64_t> SysUmount2(Task& t, GuestAddr target, int flags);
Result<uint64_t> SysPivotRoot(Task& t, GuestAddr new_root, GuestAddr put_old);
Result<uint64_t> SysUnshare(Task& t, uint64_t flags);
Result<uint64_t> SysSetns(Task& t, int fd, int nstype);
Result<uint64_t> SysChroot(Task& t, GuestAddr path);
Result<uint64_t> SysClockGetres(Task& t, int clock, GuestAddr tp);
Result<uint64_t> SysGetitimer(Task& t, int which, GuestAddr value);
Result<uint64_t> SysSetitimer(Task& t, int which, GuestAddr value, GuestAddr ovalue);
Result<uint64_t> SysAlarm(Task& t, uint32_t seconds);
Result<uint64_t> SysTimerCreate(Task& t, int clock, GuestAddr sevp, GuestAddr idp);
Result<uint64_t> SysTimerSettime(Task& t, int id, int flags, GuestAddr new_value, GuestAddr old_value);
Result<uint64_t> SysTimerGettime(Task& t, int id, GuestAddr value);
Result<uint64_t> SysTimerGetoverrun(Task& t, int id);
Result<uint64_t> SysTimerDelete(Task& t, int id);
Result<uint64_t> SysClockGettime(Task& t, int clock, GuestAddr tp);
Result<uint64_t> SysClockSettime(Task& t, int clock, GuestAddr tp);
Result<uint64_t> SysSettimeofday(Task& t, GuestAddr tv, GuestAddr tz);
Result<uint64_t> SysClockNanosleep(Task& t, int clock, int flags, GuestAddr req, GuestAddr rem);
Result<uint64_t> SysClone(Task& t, uint64_t flags, uint64_t stack, GuestAddr parent_tid, GuestAddr child_tid, uint64_t tls);
Result<uint64_t> SysClone3(Task& t, GuestAddr args, size_t size);
Result<uint64_t> SysClose(Task& t, int fd);
Result<uint64_t> SysCloseRange(Task& t, uint32_t first, uint32_t last, uint32_t flags);
Result<uint64_t> SysCreat(Task& t, GuestAddr path, uint32_t mode);
Result<uint64_t> SysDup(Task& t, int fd);
Result<uint64_t> SysDup2(Task& t, int oldfd, int newfd);
Result<uint64_t> SysDup3(Task& t, int oldfd, int newfd, int flags);
Result<uint64_t> SysExecve(Task& t, GuestAddr path_addr, GuestAddr argv_addr, GuestAddr envp_addr);
Result<uint64_t> SysExecveat(Task& t, int dirfd, GuestAddr path, GuestAddr argv, GuestAddr envp, int flags);
Result<uint64_t> SysExit(Task& t, int code);
Result<uint64_t> SysExitGroup(Task& t, int code);
Result<uint64_t> SysFaccessat(Task& t, int dirfd, GuestAddr path, int mode);
Result<uint64_t> SysFaccessat2(Task& t, int dirfd, GuestAddr path_addr, int mode, int flags);
Result<uint64_t> SysFchdir(Task& t, int fd);
Result<uint64_t> SysFcntl(Task& t, int fd, int cmd, uint64_t arg);
Result<uint64_t> SysFork(Task& t);
Result<uint64_t> SysFstat(Task& t, int fd, GuestAddr buf);
Result<uint64_t> SysFutex(Task& t, uint64_t addr, int op, uint32_t val, uint64_t timeout_or_val2, uint64_t addr2, uint32_t val3);
Result<uint64_t> SysGetRobustList(Task& t, int pid, GuestAddr head, GuestAddr len);
Result<uint64_t> SysGetcwd(Task& t, GuestAddr buf, size_t size);
Result<uint64_t> SysGetdents64(Task& t, int fd, GuestAddr buf, uint32_t count);
Result<uint64_t> SysGetdents(Task& t, int fd, GuestAddr buf, uint32_t count);
Result<uint64_t> SysGetegid(Task& t);
Result<uint64_t> SysGeteuid(Task& t);
Result<uint64_t> SysGetgid(Task& t);
Result<uint64_t> SysGetgroups(Task& t, int size, GuestAddr list);
Result<uint64_t> SysGetpgid(Task& t, int pid);
Result<uint64_t> SysGetpgrp(Task& t);
Result<uint64_t> SysGetpid(Task& t);
Result<uint64_t> SysGetppid(Task& t);
Result<uint64_t> SysGetrandom(Task& t, GuestAddr buf, size_t len, unsigned flags);
Result<uint64_t> SysGetresgid(Task& t, GuestAddr r, GuestAddr e, GuestAddr s);
Result<uint64_t> SysGetresuid(Task& t, GuestAddr r, GuestAddr e, GuestAddr s);
Result<uint64_t> SysGetrlimit(Task& t, unsigned res, GuestAddr out);
Result<uint64_t> SysGetrusage(Task& t, int who, GuestAddr buf);
Result<uint64_t> SysGetsid(Task& t, int pid);
Result<uint64_t> SysGettid(Task& t);
Result<uint64_t> SysGettimeofday(Task& t, GuestAddr tv, GuestAddr tz);
Result<uint64_t> SysGetuid(Task& t);
Result<uint64_t> SysIoctl(Task& t, int fd, uint64_t cmd, uint64_t arg);
Result<uint64_t> SysKill(Task& t, int pid, int sig);
Result<uint64_t> SysLseek(Task& t, int fd, int64_t off, int whence);
Result<uint64_t> SysLstat(Task& t, GuestAddr path, GuestAddr buf);
Result<uint64_t> SysMadvise(Task& t, uint64_t addr, uint64_t len, int advice);
Result<uint64_t> SysMincore(Task& t, uint64_t addr, uint64_t len, GuestAddr vec);
Result<uint64_t> SysMmap(Task& t, uint64_t addr, uint64_t len, int prot, int flags, int fd, uint64_t off);
Result<uint64_t> SysMprotect(Task& t, uint64_t addr, uint64_t len, int prot);
Result<uint64_t> SysMremap(Task& t, uint64_t old_addr, uint64_t old_len, uint64_t new_len, int flags, uint64_t new_addr);
Result<uint64_t> SysMsync(Task& t, uint64_t addr, uint64_t len, int flags);
Result<uint64_t> SysMunmap(Task& t, uint64_t addr, uint64_t len);
Result<uint64_t> SysNanosleep(Task& t, GuestAddr req, GuestAddr rem);
Result<uint64_t> SysNewfstatat(Task& t, int dirfd, GuestAddr path, GuestAddr buf, int flags);
Result<uint64_t> SysOpen(Task& t, GuestAddr path, int flags, uint32_t mode);
Result<uint64_t> SysOpenat(Task& t, int dirfd, GuestAddr path_addr, int flags, uint32_t mode);
Result<uint64_t> SysOpenat2(Task& t, int dirfd, GuestAddr path_addr, GuestAddr how_addr,
                            size_t size);
Result<uint64_t> SysPause(Task& t);
Result<uint64_t> SysPipe(Task& t, GuestAddr fds);
Result<uint64_t> SysPipe2(Task& t, GuestAddr fds_addr, int flags);
Result<uint64_t> SysPoll(Task& t, GuestAddr fds, uint64_t nfds, int timeout_ms);
Result<uint64_t> SysPpoll(Task& t, GuestAddr fds, uint64_t nfds, GuestAddr ts, GuestAddr mask, size_t size);
Result<uint64_t> SysPrctl(Task& t, int option, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5);
Result<uint64_t> SysPread64(Task& t, int fd, GuestAddr buf, size_t count, int64_t off);
Result<uint64_t> SysPrlimit64(Task& t, int pid, unsigned res, GuestAddr new_addr, GuestAddr old_addr);
Result<uint64_t> SysPselect6(Task& t, int nfds, GuestAddr r, GuestAddr w, GuestAddr e, GuestAddr ts, GuestAddr sig);
Result<uint64_t> SysPwrite64(Task& t, int fd, GuestAddr buf, size_t count, int64_t off);
Result<uint64_t> SysRead(Task& t, int fd, GuestAddr buf, size_t count);
Result<uint64_t> SysReadlink(Task& t, GuestAddr path, GuestAddr buf, int size);
Result<uint64_t> SysReadlinkat(Task& t, int dirfd, GuestAddr path_addr, GuestAddr buf, int size);
Result<uint64_t> SysReadv(Task& t, int fd, GuestAddr iov, int iovcnt);
Result<uint64_t> SysRestartSyscall(Task& t);
Result<uint64_t> SysRtSigaction(Task& t, int sig, GuestAddr act, GuestAddr oact, size_t size);
Result<uint64_t> SysRtSigpending(Task& t, GuestAddr set, size_t size);
Result<uint64_t> SysRtSigprocmask(Task& t, int how, GuestAddr set, GuestAddr oset, size_t size);
Result<uint64_t> SysRtSigqueueinfo(Task& t, int pid, int sig, GuestAddr uinfo);
Result<uint64_t> SysRtSigreturn(Task& t);
Result<uint64_t> SysRtSigsuspend(Task& t, GuestAddr set, size_t size);
Result<uint64_t> SysRtSigtimedwait(Task& t, GuestAddr set, GuestAddr info_addr, GuestAddr timeout, size_t size);
Result<uint64_t> SysRtTgsigqueueinfo(Task& t, int tgid, int tid, int sig, GuestAddr uinfo);
Result<uint64_t> SysSchedGetaffinity(Task& t, int pid, uint32_t len, GuestAddr mask);
Result<uint64_t> SysSchedSetaffinity(Task& t, int pid, uint32_t len, GuestAddr mask);
Result<uint64_t> SysGetcpu(Task& t, GuestAddr cpu, GuestAddr node, GuestAddr tcache);
Result<uint64_t> SysSchedSetscheduler(Task& t, int pid, int policy, GuestAddr param);
Result<uint64_t> SysSchedSetparam(Task& t, int pid, GuestAddr param);
Result<uint64_t> SysSchedGetscheduler(Task& t, int pid);
Result<uint64_t> SysSchedGetparam(Task& t, int pid, GuestAddr param);
Result<uint64_t> SysSchedSetattr(Task& t, int pid, GuestAddr attr, uint32_t flags);
Result<uint64_t> SysSchedGetattr(Task& t, int pid, GuestAddr attr, uint32_t size, uint32_t flags);
Result<uint64_t> SysSchedGetPriorityMax(Task& t, int policy);
Result<uint64_t> SysSchedGetPriorityMin(Task& t, int policy);
Result<uint64_t> SysSchedRrGetInterval(Task& t, int pid, GuestAddr interval);
Result<uint64_t> SysGetpriority(Task& t, int which, int who);
Result<uint64_t> SysSetpriority(Task& t, int which, int who, int nice);
Result<uint64_t> SysIoprioSet(Task& t, int which, int who, int ioprio);
Result<uint64_t> SysIoprioGet(Task& t, int which, int who);
Result<uint64_t> SysSysinfo(Task& t, GuestAddr info);
Result<uint64_t> SysPersonality(Task& t, uint32_t persona);
Result<uint64_t> SysSchedYield(Task&);
Result<uint64_t> SysSelect(Task& t, int nfds, GuestAddr r, GuestAddr w, GuestAddr e, GuestAddr tv_addr);
Result<uint64_t> SysSetRobustList(Task& t, uint64_t head, size_t len);
Result<uint64_t> SysSetTidAddress(Task& t, uint64_t addr);
Result<uint64_t> SysSetpgid(Task& t, int pid, int pgid);
Result<uint64_t> SysSetrlimit(Task& t, unsigned res, GuestAddr in);
Result<uint64_t> SysSetsid(Task& t);
Result<uint64_t> SysSigaltstack(Task& t, GuestAddr ss, GuestAddr old_ss);
Result<uint64_t> SysStat(Task& t, GuestAddr path, GuestAddr buf);
Result<uint64_t> SysStatx(Task& t, int dirfd, GuestAddr path, int flags, uint32_t mask, GuestAddr buf);
Result<uint64_t> SysTgkill(Task& t, int tgid, int tid, int sig);
Result<uint64_t> SysTime(Task& t, GuestAddr tloc);
Result<uint64_t> SysTimes(Task& t, GuestAddr buf);
Result<uint64_t> SysTkill(Task& t, int tid, int sig);
Result<uint64_t> SysUmask(Task& t, uint32_t mask);
Result<uint64_t> SysUname(Task& t, GuestAddr buf);
Result<uint64_t> SysVfork(Task& t);
Result<uint64_t> SysWait4(Task& t, int pid, GuestAddr status, int options, GuestAddr rusage);
Result<uint64_t> SysWaitid(Task& t, int idtype, int id, GuestAddr infop, int options, GuestAddr rusage);
Result<uint64_t> SysWrite(Task& t, int fd, GuestAddr buf, size_t count);
Result<uint64_t> SysWritev(Task& t, int fd, GuestAddr iov, int iovcnt);

Result<uint64_t> SysSetuid(Task& t, uint32_t id);
Result<uint64_t> SysSetgid(Task& t, uint32_t id);
Result<uint64_t> SysSetreuid(Task& t, uint32_t r, uint32_t e);
Result<uint64_t> SysSetregid(Task& t, uint32_t r, uint32_t e);
Result<uint64_t> SysSetresuid(Task& t, uint32_t r, uint32_t e, uint32_t s);
Result<uint64_t> SysSetresgid(Task& t, uint32_t r, uint32_t e, uint32_t s);
Result<uint64_t> SysSetgroups(Task& t, int size, GuestAddr list);
Result<uint64_t> SysSetfsuid(Task& t, uint32_t id);
Result<uint64_t> SysSetfsgid(Task& t, uint32_t id);
Result<uint64_t> SysCapget(Task& t, GuestAddr header, GuestAddr data);
Result<uint64_t> SysCapset(Task& t, GuestAddr header, GuestAddr data);
Result<uint64_t> SysPreadv(Task& t, int fd, GuestAddr iov, int iovcnt, int64_t off);
Result<uint64_t> SysEpollCreate(Task& t, int size);
Result<uint64_t> SysEpollCreate1(Task& t, int flags);
Result<uint64_t> SysEpollCtl(Task& t, int epfd, int op, int fd, GuestAddr event);
Result<uint64_t> SysEpollWait(Task& t, int epfd, GuestAddr events, int maxevents, int timeout);
Result<uint64_t> SysEpollPwait(Task& t, int epfd, GuestAddr events, int maxevents, int timeout, GuestAddr sigmask, size_t sigsetsize);
Result<uint64_t> SysEpollPwait2(Task& t, int epfd, GuestAddr events, int maxevents, GuestAddr timeout, GuestAddr sigmask, size_t sigsetsize);
Result<uint64_t> SysEventfd(Task& t, uint32_t initval);
Result<uint64_t> SysEventfd2(Task& t, uint32_t initval, int flags);
Result<uint64_t> SysTimerfdCreate(Task& t, int clock, int flags);
Result<uint64_t> SysTimerfdSettime(Task& t, int fd, int flags, GuestAddr new_addr, GuestAddr old_addr);
Result<uint64_t> SysTimerfdGettime(Task& t, int fd, GuestAddr cur_addr);
Result<uint64_t> SysSignalfd(Task& t, int fd, GuestAddr mask_addr, size_t sizemask);
Result<uint64_t> SysSignalfd4(Task& t, int fd, GuestAddr mask_addr, size_t sizemask, int flags);
Result<uint64_t> SysMemfdCreate(Task& t, GuestAddr name_addr, unsigned flags);
Result<uint64_t> SysPwritev(Task& t, int fd, GuestAddr iov, int iovcnt, int64_t off);
Result<uint64_t> SysInotifyInit(Task& t);
Result<uint64_t> SysInotifyInit1(Task& t, int flags);
Result<uint64_t> SysInotifyAddWatch(Task& t, int fd, GuestAddr path, uint32_t mask);
Result<uint64_t> SysInotifyRmWatch(Task& t, int fd, int wd);
Result<uint64_t> SysSendfile(Task& t, int out_fd, int in_fd, GuestAddr offset, size_t count);
Result<uint64_t> SysSplice(Task& t, int fd_in, GuestAddr off_in, int fd_out, GuestAddr off_out, size_t len, unsigned flags);
Result<uint64_t> SysTee(Task& t, int fd_in, int fd_out, size_t len, unsigned flags);
Result<uint64_t> SysCopyFileRange(Task& t, int fd_in, GuestAddr off_in, int fd_out, GuestAddr off_out, size_t len, unsigned flags);

Result<uint64_t> SysShmget(Task& t, int32_t key, uint64_t size, int flags);
Result<uint64_t> SysShmat(Task& t, int id, uint64_t addr, int flags);
Result<uint64_t> SysShmdt(Task& t, uint64_t addr);
Result<uint64_t> SysShmctl(Task& t, int id, int cmd, GuestAddr buf);
Result<uint64_t> SysSemget(Task& t, int32_t key, int nsems, int flags);
Result<uint64_t> SysSemop(Task& t, int id, GuestAddr sops, size_t nsops);
Result<uint64_t> SysSemtimedop(Task& t, int id, GuestAddr sops, size_t nsops, GuestAddr timeout);
Result<uint64_t> SysSemctl(Task& t, int id, int num, int cmd, uint64_t arg);
Result<uint64_t> SysMsgget(Task& t, int32_t key, int flags);
Result<uint64_t> SysMsgsnd(Task& t, int id, GuestAddr msgp, size_t size, int flags);
Result<uint64_t> SysMsgrcv(Task& t, int id, GuestAddr msgp, size_t size, long type, int flags);
Result<uint64_t> SysMsgctl(Task& t, int id, int cmd, GuestAddr buf);

Result<uint64_t> SysMqOpen(Task& t, GuestAddr name, int flags, uint32_t mode, GuestAddr attr);
Result<uint64_t> SysMqUnlink(Task& t, GuestAddr name);
Result<uint64_t> SysMqTimedsend(Task& t, int fd, GuestAddr msg, size_t len, unsigned prio, GuestAddr timeout);
Result<uint64_t> SysMqTimedreceive(Task& t, int fd, GuestAddr msg, size_t len, GuestAddr prio, GuestAddr timeout);
Result<uint64_t> SysMqNotify(Task& t, int fd, GuestAddr sevp);
Result<uint64_t> SysMqGetsetattr(Task& t, int fd, GuestAddr new_attr, GuestAddr old_attr);

Result<uint64_t> SysPidfdOpen(Task& t, int pid, unsigned flags);
Result<uint64_t> SysPidfdSendSignal(Task& t, int pidfd, int sig, GuestAddr uinfo, unsigned flags);
Result<uint64_t> SysPidfdGetfd(Task& t, int pidfd, int fd, unsigned flags);
Result<uint64_t> SysProcessVmReadv(Task& t, int pid, GuestAddr lvec, uint64_t lcount, GuestAddr rvec, uint64_t rcount, uint64_t flags);
Result<uint64_t> SysProcessVmWritev(Task& t, int pid, GuestAddr lvec, uint64_t lcount, GuestAddr rvec, uint64_t rcount, uint64_t flags);
Result<uint64_t> SysKcmp(Task& t, int pid1, int pid2, int type, uint64_t idx1, uint64_t idx2);
Result<uint64_t> SysMlock(Task& t, uint64_t addr, uint64_t len);
Result<uint64_t> SysMlock2(Task& t, uint64_t addr, uint64_t len, unsigned flags);
Result<uint64_t> SysMunlock(Task& t, uint64_t addr, uint64_t len);
Result<uint64_t> SysMlockall(Task& t, int flags);
Result<uint64_t> SysMunlockall(Task& t);
Result<uint64_t> SysMembarrier(Task& t, int cmd, unsigned flags, int cpu_id);
Result<uint64_t> SysRseq(Task& t, uint64_t area, uint32_t len, int flags, uint32_t sig);
Result<uint64_t> SysSeccomp(Task& t, unsigned op, unsigned flags, GuestAddr args);
Result<uint64_t> SysSetMempolicy(Task& t, int mode, GuestAddr nmask, uint64_t maxnode);
Result<uint64_t> SysGetMempolicy(Task& t, GuestAddr mode_addr, GuestAddr nmask, uint64_t maxnode, uint64_t addr, uint64_t flags);
Result<uint64_t> SysMbind(Task& t, uint64_t start, uint64_t len, int mode, GuestAddr nmask, uint64_t maxnode, unsigned flags);
Result<uint64_t> SysSetMempolicyHomeNode(Task& t, uint64_t start, uint64_t len, uint64_t node, uint64_t flags);
Result<uint64_t> SysPkeyAlloc(Task& t, uint64_t flags, uint64_t init_val);
Result<uint64_t> SysPkeyFree(Task& t, int pkey);
Result<uint64_t> SysPkeyMprotect(Task& t, uint64_t addr, uint64_t len, int prot, int pkey);
Result<uint64_t> SysSyslog(Task& t, int type, GuestAddr buf, int len);
Result<uint64_t> SysSyncFileRange(Task& t, int fd, int64_t off, int64_t nbytes, unsigned flags);
Result<uint64_t> SysPreadv2(Task& t, int fd, GuestAddr iov, int iovcnt, int64_t off, int64_t off_high, int flags);
Result<uint64_t> SysIoSetup(Task& t, uint32_t nr_events, GuestAddr ctxp);
Result<uint64_t> SysIoDestroy(Task& t, uint64_t ctx_id);
Result<uint64_t> SysIoGetevents(Task& t, uint64_t ctx_id, int64_t min_nr, int64_t nr, GuestAddr events, GuestAddr timeout);
Result<uint64_t> SysIoSubmit(Task& t, uint64_t ctx_id, int64_t nr, GuestAddr iocbpp);
Result<uint64_t> SysIoCancel(Task& t, uint64_t ctx_id, GuestAddr iocb, GuestAddr result);
Result<uint64_t> SysIoPgetevents(Task& t, uint64_t ctx_id, int64_t min_nr, int64_t nr, GuestAddr events, GuestAddr timeout, GuestAddr usig);
Result<uint64_t> SysPwritev2(Task& t, int fd, GuestAddr iov, int iovcnt, int64_t off, int64_t off_high, int flags);
Result<uint64_t> SysAddKey(Task& t, GuestAddr type, GuestAddr desc, GuestAddr payload, uint64_t len, int32_t ring);
Result<uint64_t> SysRequestKey(Task& t, GuestAddr type, GuestAddr desc, GuestAddr callout, int32_t dest);
Result<uint64_t> SysKeyctl(Task& t, int cmd, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5);

namespace {

#define FULL(nr, name, fn, ...) {nr, name, Support::kFull, &Wrap<&fn>::Call, "", {__VA_ARGS__}}
#define PARTIAL(nr, name, fn, note, ...) \
  {nr, name, Support::kPartial, &Wrap<&fn>::Call, note, {__VA_ARGS__}}
#define UNIMPL(nr, name, note) {nr, name, Support::kUnimplemented, nullptr, note, {}}

constexpr SyscallEntry kTable[] = {
    FULL(0, "read", SysRead, Arg::kFd, Arg::kPtr, Arg::kUint),
    FULL(1, "write", SysWrite, Arg::kFd, Arg::kPtr, Arg::kUint),
    PARTIAL(2, "open", SysOpen, "O_TMPFILE: EOPNOTSUPP; FIFOs of host bind mounts (gofer) open without waiting for the other side", Arg::kStr, Arg::kHex, Arg::kOct),
    FULL(3, "close", SysClose, Arg::kFd),
    FULL(4, "stat", SysStat, Arg::kStr, Arg::kPtr),
    FULL(5, "fstat", SysFstat, Arg::kFd, Arg::kPtr),
    FULL(6, "lstat", SysLstat, Arg::kStr, Arg::kPtr),
    FULL(7, "poll", SysPoll, Arg::kPtr, Arg::kUint, Arg::kInt),
    FULL(8, "lseek", SysLseek, Arg::kFd, Arg::kInt, Arg::kInt),
    PARTIAL(9, "mmap", SysMmap, "gofer files map the donated host fd on both platforms (shared page cache, real MAP_SHARED, SIGBUS past EOF); other files (tmpfs, overlay upper) are private copies (shared writable ones refused); MAP_HUGETLB: ENOMEM, no huge pages", Arg::kPtr, Arg::kUint, Arg::kHex, Arg::kHex, Arg::kFd, Arg::kHex),
    FULL(10, "mprotect", SysMprotect, Arg::kPtr, Arg::kUint, Arg::kHex),
    FULL(11, "munmap", SysMunmap, Arg::kPtr, Arg::kUint),
    FULL(12, "brk", SysBrk, Arg::kPtr),
    FULL(13, "rt_sigaction", SysRtSigaction, Arg::kSig, Arg::kPtr, Arg::kPtr, Arg::kUint),
    FULL(14, "rt_sigprocmask", SysRtSigprocmask, Arg::kInt, Arg::kPtr, Arg::kPtr, Arg::kUint),
    FULL(15, "rt_sigreturn", SysRtSigreturn),
    PARTIAL(16, "ioctl", SysIoctl, "FIONREAD, FIONBIO, FIOASYNC, FIOCLEX/FIONCLEX; ptys: termios (TCGETS/TCSETS*, termios2), window size, foreground group, controlling terminal, TIOCGPTN/TIOCSPTLCK/TIOCGPTPEER, TCFLSH; TIOCSTI refused (EIO); no packet mode (TIOCPKT) or modem lines; the caller's own terminal (sentry-run's stdio): ENOTTY", Arg::kFd, Arg::kHex, Arg::kHex),
    FULL(17, "pread64", SysPread64, Arg::kFd, Arg::kPtr, Arg::kUint, Arg::kInt),
    FULL(18, "pwrite64", SysPwrite64, Arg::kFd, Arg::kPtr, Arg::kUint, Arg::kInt),
    FULL(19, "readv", SysReadv, Arg::kFd, Arg::kPtr, Arg::kInt),
    FULL(20, "writev", SysWritev, Arg::kFd, Arg::kPtr, Arg::kInt),
    FULL(21, "access", SysAccess, Arg::kStr, Arg::kOct),
    FULL(22, "pipe", SysPipe, Arg::kPtr),
    FULL(23, "select", SysSelect, Arg::kInt, Arg::kPtr, Arg::kPtr, Arg::kPtr, Arg::kPtr),
    FULL(24, "sched_yield", SysSchedYield),
    PARTIAL(25, "mremap", SysMremap, "MREMAP_DONTUNMAP: EINVAL", Arg::kPtr, Arg::kUint, Arg::kUint, Arg::kHex, Arg::kPtr),
    FULL(26, "msync", SysMsync, Arg::kPtr, Arg::kUint, Arg::kHex),
    PARTIAL(27, "mincore", SysMincore, "every mapped page reports resident", Arg::kPtr, Arg::kUint, Arg::kPtr),
    PARTIAL(28, "madvise", SysMadvise, "DONTNEED/FREE/REMOVE act; other advice is accepted as a hint", Arg::kPtr, Arg::kUint, Arg::kInt),
    PARTIAL(29, "shmget", SysShmget, "one IPC namespace per sandbox; a segment is a file on the memfds' hidden tmpfs (one host memfd); SHM_HUGETLB/SHM_NORESERVE ignored", Arg::kHex, Arg::kUint, Arg::kOct),
    FULL(30, "shmat", SysShmat, Arg::kInt, Arg::kPtr, Arg::kHex),
    PARTIAL(31, "shmctl", SysShmctl, "SHM_LOCK/SHM_UNLOCK only set the mode bit (nothing is swapped anyway)", Arg::kInt, Arg::kInt, Arg::kPtr),
    FULL(32, "dup", SysDup, Arg::kFd),
    FULL(33, "dup2", SysDup2, Arg::kFd, Arg::kFd),
    FULL(34, "pause", SysPause),
    FULL(35, "nanosleep", SysNanosleep, Arg::kPtr, Arg::kPtr),
    PARTIAL(36, "getitimer", SysGetitimer, "VIRTUAL/PROF: the CPU clock is sampled (see setitimer)", Arg::kInt, Arg::kPtr),
    FULL(37, "alarm", SysAlarm, Arg::kUint),
    PARTIAL(38, "setitimer", SysSetitimer, "REAL exact; VIRTUAL/PROF count the guest's CPU time by sampling it (at the earliest possible expiry, every 1-50 ms of wall time while armed), so they fire up to ~1 ms late (Linux: up to a tick), and Linux's extra tick on arming is not added", Arg::kInt, Arg::kPtr, Arg::kPtr),
    FULL(39, "getpid", SysGetpid),
    FULL(40, "sendfile", SysSendfile, Arg::kFd, Arg::kFd, Arg::kPtr, Arg::kUint),
    PARTIAL(41, "socket", SysSocket, "AF_UNIX in the Sentry; AF_INET/AF_INET6 on the sandbox's loopback; other destinations ENETUNREACH under --net=none, relayed through host sockets under --net=host after the egress policy (host-side listening only for --publish ports, TCP only); ICMP echo (ping) sockets answered on loopback and relayed through host ping sockets under --net=host, with an empty error queue (IP_RECVERR); raw ICMP sockets with CAP_NET_RAW emulated the same way (loopback ICMP to every raw ICMP socket of the namespace, echoes only through the host; IP_HDRINCL ENOPROTOOPT); AF_NETLINK NETLINK_ROUTE read-only (others EPROTONOSUPPORT); no packet or other raw sockets (EPERM)", Arg::kInt, Arg::kHex, Arg::kInt),
    PARTIAL(42, "connect", SysConnect, "AF_UNIX in the Sentry; AF_INET/AF_INET6 on the sandbox's loopback; other destinations ENETUNREACH under --net=none, relayed through host sockets under --net=host after the egress policy; ping and raw ICMP sockets as socket(2) says; NETLINK_ROUTE read-only", Arg::kFd, Arg::kSockAddr, Arg::kInt),
    FULL(43, "accept", SysAccept, Arg::kFd, Arg::kPtr, Arg::kPtr),
    PARTIAL(44, "sendto", SysSendto, "MSG_OOB: EOPNOTSUPP; MSG_MORE/TCP_CORK do not delay on loopback; --net=host: UDP to port 53 is answered by the Sentry's DNS, other destinations after the egress policy (EPERM if denied)", Arg::kFd, Arg::kPtr, Arg::kUint, Arg::kHex, Arg::kSockAddr, Arg::kInt),
    PARTIAL(45, "recvfrom", SysRecvfrom, "MSG_OOB: EOPNOTSUPP/EINVAL; MSG_ERRQUEUE: EAGAIN", Arg::kFd, Arg::kPtr, Arg::kUint, Arg::kHex, Arg::kPtr, Arg::kPtr),
    PARTIAL(46, "sendmsg", SysSendmsg, "SCM_RIGHTS and SCM_CREDENTIALS on AF_UNIX; IP-level control messages are ignored", Arg::kFd, Arg::kPtr, Arg::kHex),
    PARTIAL(47, "recvmsg", SysRecvmsg, "SCM_RIGHTS and SCM_CREDENTIALS; no IP_PKTINFO/timestamps control messages", Arg::kFd, Arg::kPtr, Arg::kHex),
    FULL(48, "shutdown", SysShutdown, Arg::kFd, Arg::kInt),
    PARTIAL(49, "bind", SysBind, "inet: loopback and wildcard addresses only (others EADDRNOTAVAIL); no TIME_WAIT, so a port is free again as soon as its socket closes", Arg::kFd, Arg::kSockAddr, Arg::kInt),
    FULL(50, "listen", SysListen, Arg::kFd, Arg::kInt),
    FULL(51, "getsockname", SysGetsockname, Arg::kFd, Arg::kPtr, Arg::kPtr),
    FULL(52, "getpeername", SysGetpeername, Arg::kFd, Arg::kPtr, Arg::kPtr),
    PARTIAL(53, "socketpair", SysSocketpair, "AF_UNIX (stream, dgram, seqpacket); others EOPNOTSUPP/EAFNOSUPPORT as Linux", Arg::kInt, Arg::kHex, Arg::kInt, Arg::kPtr),
    PARTIAL(54, "setsockopt", SysSetsockopt, "SOL_SOCKET options kept and honoured where they matter here (timeouts, buffers, linger, reuse, passcred); TCP/IP/IPv6 options are stored and read back; no multicast or filters (SO_ATTACH_FILTER: ENOPROTOOPT)", Arg::kFd, Arg::kInt, Arg::kInt, Arg::kPtr, Arg::kInt),
    PARTIAL(55, "getsockopt", SysGetsockopt, "as setsockopt; TCP_INFO fills the state and MSS only", Arg::kFd, Arg::kInt, Arg::kInt, Arg::kPtr, Arg::kPtr),
    PARTIAL(56, "clone", SysClone, "CLONE_NEWNS/NEWUTS/NEWIPC/NEWNET/NEWCGROUP/NEWTIME/NEWUSER/NEWPID as unshare (CLONE_NEWUSER with CLONE_THREAD or CLONE_FS, CLONE_NEWPID with CLONE_THREAD, CLONE_PARENT from a namespace's init: EINVAL; the result and CLONE_PARENT_SETTID/CHILD_SETTID in the caller's/child's PID namespace); CLONE_VM without CLONE_THREAD only with CLONE_VFORK; CLONE_PIDFD (with CLONE_THREAD: a thread pidfd, as Linux 6.9+)", Arg::kHex, Arg::kPtr, Arg::kPtr, Arg::kPtr, Arg::kHex),
    FULL(57, "fork", SysFork),
    FULL(58, "vfork", SysVfork),
    PARTIAL(59, "execve", SysExecve, "set-user-ID and set-group-ID programs as Linux (not on nosuid mounts, under no_new_privs or an unprivileged tracer); file capabilities (security.capability) are not honoured", Arg::kStr, Arg::kPtr, Arg::kPtr),
    FULL(60, "exit", SysExit, Arg::kInt),
    PARTIAL(61, "wait4", SysWait4, "rusage has the CPU times only; its other fields are zero", Arg::kInt, Arg::kPtr, Arg::kHex, Arg::kPtr),
    FULL(62, "kill", SysKill, Arg::kInt, Arg::kSig),
    FULL(63, "uname", SysUname, Arg::kPtr),
    FULL(64, "semget", SysSemget, Arg::kHex, Arg::kInt, Arg::kOct),
    FULL(65, "semop", SysSemop, Arg::kInt, Arg::kPtr, Arg::kUint),
    FULL(66, "semctl", SysSemctl, Arg::kInt, Arg::kInt, Arg::kInt, Arg::kHex),
    FULL(67, "shmdt", SysShmdt, Arg::kPtr),
    FULL(68, "msgget", SysMsgget, Arg::kHex, Arg::kOct),
    FULL(69, "msgsnd", SysMsgsnd, Arg::kInt, Arg::kPtr, Arg::kUint, Arg::kHex),
    FULL(70, "msgrcv", SysMsgrcv, Arg::kInt, Arg::kPtr, Arg::kUint, Arg::kInt, Arg::kHex),
    FULL(71, "msgctl", SysMsgctl, Arg::kInt, Arg::kInt, Arg::kPtr),
    PARTIAL(72, "fcntl", SysFcntl, "F_NOTIFY (dnotify) is accepted on directories but sends no signal; O_ASYNC signals (SIGIO or F_SETSIG) go out shortly after the event rather than during the call that caused it", Arg::kFd, Arg::kInt, Arg::kHex),
    FULL(73, "flock", SysFlock, Arg::kFd, Arg::kHex),
    FULL(74, "fsync", SysFsync, Arg::kFd),
    PARTIAL(75, "fdatasync", SysFdatasync, "a host file's is an fsync (metadata too), which the Sentry's allowlist has", Arg::kFd),
    FULL(76, "truncate", SysTruncate, Arg::kStr, Arg::kInt),
    FULL(77, "ftruncate", SysFtruncate, Arg::kFd, Arg::kInt),
    FULL(78, "getdents", SysGetdents, Arg::kFd, Arg::kPtr, Arg::kUint),
    FULL(79, "getcwd", SysGetcwd, Arg::kPtr, Arg::kUint),
    FULL(80, "chdir", SysChdir, Arg::kStr),
    FULL(81, "fchdir", SysFchdir, Arg::kFd),
    PARTIAL(82, "rename", SysRename, "directories with a lower-layer part: EXDEV (as overlayfs)", Arg::kStr, Arg::kStr),
    FULL(83, "mkdir", SysMkdir, Arg::kStr, Arg::kOct),
    FULL(84, "rmdir", SysRmdir, Arg::kStr),
    FULL(85, "creat", SysCreat, Arg::kStr, Arg::kOct),
    FULL(86, "link", SysLink, Arg::kStr, Arg::kStr),
    FULL(87, "unlink", SysUnlink, Arg::kStr),
    FULL(88, "symlink", SysSymlink, Arg::kStr, Arg::kStr),
    FULL(89, "readlink", SysReadlink, Arg::kStr, Arg::kPtr, Arg::kInt),
    FULL(90, "chmod", SysChmod, Arg::kStr, Arg::kOct),
    FULL(91, "fchmod", SysFchmod, Arg::kFd, Arg::kOct),
    FULL(92, "chown", SysChown, Arg::kStr, Arg::kInt, Arg::kInt),
    FULL(93, "fchown", SysFchown, Arg::kFd, Arg::kInt, Arg::kInt),
    FULL(94, "lchown", SysLchown, Arg::kStr, Arg::kInt, Arg::kInt),
    FULL(95, "umask", SysUmask, Arg::kOct),
    FULL(96, "gettimeofday", SysGettimeofday, Arg::kPtr, Arg::kPtr),
    FULL(97, "getrlimit", SysGetrlimit, Arg::kInt, Arg::kPtr),
    PARTIAL(98, "getrusage", SysGetrusage, "CPU times only (the stubs' plus the Sentry's work for the task, as system time); the other fields are zero", Arg::kInt, Arg::kPtr),
    PARTIAL(99, "sysinfo", SysSysinfo, "uptime and procs are the sandbox's (procs: guest threads); loads, RAM and swap are the host's", Arg::kPtr),
    FULL(100, "times", SysTimes, Arg::kPtr),
    PARTIAL(101, "ptrace", SysPtrace, "guest tracing guest, all in the Sentry (never host ptrace): TRACEME, ATTACH, SEIZE, INTERRUPT, LISTEN, DETACH, KILL, PEEK/POKE TEXT/DATA (POKE writes read-only private text, as FOLL_FORCE), PEEK/POKEUSER (registers; debug registers read 0 and take only 0: no hardware breakpoints), GET/SETREGS, GET/SETFPREGS, GET/SETREGSET (NT_PRSTATUS, NT_PRFPREG, NT_X86_XSTATE), GET/SETSIGINFO, SETOPTIONS, GETEVENTMSG, CONT, SYSCALL, SINGLESTEP (EFLAGS.TF on both platforms), GET_SYSCALL_INFO; signal-delivery, group, syscall-enter/exit and fork/vfork/clone/exec/exit event stops; wait() sees tracees that are not children. Missing: SYSEMU, GETSIGMASK/SETSIGMASK, PEEKSIGINFO, ARCH_PRCTL, SECCOMP_GET_FILTER, CLONE_PTRACE; PTRACE_O_TRACESECCOMP and TRACEVFORKDONE are accepted but never stop, SUSPEND_SECCOMP is accepted without effect. Partial: the vfork event comes after the child released the parent; a LISTEN at an INTERRUPT trap re-traps at once; a tracee's exit is reported to a tracer that is not its parent at once, without holding back the parent's wait; ATTACH to pid 1 is EPERM; YAMA and dumpability are not checked; no /proc/PID/mem (gdb falls back to PEEK/POKE with a warning)", Arg::kInt, Arg::kInt, Arg::kHex, Arg::kHex),
    FULL(102, "getuid", SysGetuid),
    PARTIAL(103, "syslog", SysSyslog, "the sandbox's own kernel log, always empty (READ waits for a signal); access as with dmesg_restrict=1 (CAP_SYSLOG is euid 0 for now); console controls accepted without effect", Arg::kInt, Arg::kPtr, Arg::kInt),
    FULL(104, "getgid", SysGetgid),
    PARTIAL(105, "setuid", SysSetuid, "guest-visible credentials only; the host credentials never change", Arg::kInt),
    PARTIAL(106, "setgid", SysSetgid, "guest-visible credentials only; the host credentials never change", Arg::kInt),
    FULL(107, "geteuid", SysGeteuid),
    FULL(108, "getegid", SysGetegid),
    FULL(109, "setpgid", SysSetpgid, Arg::kInt, Arg::kInt),
    FULL(110, "getppid", SysGetppid),
    FULL(111, "getpgrp", SysGetpgrp),
    FULL(112, "setsid", SysSetsid),
    PARTIAL(113, "setreuid", SysSetreuid, "guest-visible credentials only; the host credentials never change", Arg::kInt, Arg::kInt),
    PARTIAL(114, "setregid", SysSetregid, "guest-visible credentials only; the host credentials never change", Arg::kInt, Arg::kInt),
    FULL(115, "getgroups", SysGetgroups, Arg::kInt, Arg::kPtr),
    PARTIAL(116, "setgroups", SysSetgroups, "guest-visible credentials only; the host credentials never change", Arg::kInt, Arg::kPtr),
    PARTIAL(117, "setresuid", SysSetresuid, "guest-visible credentials only; the host credentials never change", Arg::kInt, Arg::kInt, Arg::kInt),
    FULL(118, "getresuid", SysGetresuid, Arg::kPtr, Arg::kPtr, Arg::kPtr),
    PARTIAL(119, "setresgid", SysSetresgid, "guest-visible credentials only; the host credentials never change", Arg::kInt, Arg::kInt, Arg::kInt),
    FULL(120, "getresgid", SysGetresgid, Arg::kPtr, Arg::kPtr, Arg::kPtr),
    FULL(121, "getpgid", SysGetpgid, Arg::kInt),
    PARTIAL(122, "setfsuid", SysSetfsuid, "guest-visible credentials only; the host credentials never change", Arg::kInt),
    PARTIAL(123, "setfsgid", SysSetfsgid, "guest-visible credentials only; the host credentials never change", Arg::kInt),
    FULL(124, "getsid", SysGetsid, Arg::kInt),
    FULL(125, "capget", SysCapget, Arg::kPtr, Arg::kPtr),
    PARTIAL(126, "capset", SysCapset, "the sets are per process, not per thread (a thread's capset changes its whole process); guest-visible only, the host credentials never change", Arg::kPtr, Arg::kPtr),
    FULL(127, "rt_sigpending", SysRtSigpending, Arg::kPtr, Arg::kUint),
    FULL(128, "rt_sigtimedwait", SysRtSigtimedwait, Arg::kPtr, Arg::kPtr, Arg::kPtr, Arg::kUint),
    FULL(129, "rt_sigqueueinfo", SysRtSigqueueinfo, Arg::kInt, Arg::kSig, Arg::kPtr),
    FULL(130, "rt_sigsuspend", SysRtSigsuspend, Arg::kPtr, Arg::kUint),
    PARTIAL(131, "sigaltstack", SysSigaltstack, "SS_AUTODISARM is ignored", Arg::kPtr, Arg::kPtr),
    FULL(132, "utime", SysUtime, Arg::kStr, Arg::kPtr),
    PARTIAL(133, "mknod", SysMknod, "FIFOs of host bind mounts (gofer) open without waiting for the other side", Arg::kStr, Arg::kOct, Arg::kHex),
    UNIMPL(134, "uselib", ""),
    PARTIAL(135, "personality", SysPersonality, "any value is stored, inherited over clone and kept by execve (READ_IMPLIES_EXEC dropped); the sandbox never randomizes, so ADDR_NO_RANDOMIZE and the other flags change nothing", Arg::kHex),
    UNIMPL(136, "ustat", ""),
    FULL(137, "statfs", SysStatfs, Arg::kStr, Arg::kPtr),
    FULL(138, "fstatfs", SysFstatfs, Arg::kFd, Arg::kPtr),
    UNIMPL(139, "sysfs", ""),
    FULL(140, "getpriority", SysGetpriority, Arg::kInt, Arg::kInt),
    PARTIAL(141, "setpriority", SysSetpriority, "nice is stored per thread with Linux's rules (RLIMIT_NICE, EACCES, EPERM); it does not change how the host schedules the thread", Arg::kInt, Arg::kInt, Arg::kInt),
    PARTIAL(142, "sched_setparam", SysSchedSetparam, "stored and reported, not applied on the host", Arg::kInt, Arg::kPtr),
    FULL(143, "sched_getparam", SysSchedGetparam, Arg::kInt, Arg::kPtr),
    PARTIAL(144, "sched_setscheduler", SysSchedSetscheduler, "policy and priority are stored per thread with Linux's checks (FIFO/RR need CAP_SYS_NICE or RLIMIT_RTPRIO); the host runs every guest thread as SCHED_OTHER", Arg::kInt, Arg::kInt, Arg::kPtr),
    FULL(145, "sched_getscheduler", SysSchedGetscheduler, Arg::kInt),
    FULL(146, "sched_get_priority_max", SysSchedGetPriorityMax, Arg::kInt),
    FULL(147, "sched_get_priority_min", SysSchedGetPriorityMin, Arg::kInt),
    PARTIAL(148, "sched_rr_get_interval", SysSchedRrGetInterval, "SCHED_RR: the host's sched_rr_timeslice_ms; fair policies: the host's answer for a fair thread", Arg::kInt, Arg::kPtr),
    PARTIAL(149, "mlock", SysMlock, "locks are recorded in the VMAs and accounted as Linux (VmLck, RLIMIT_MEMLOCK with ENOMEM/EPERM/EAGAIN, ENOMEM for holes, not inherited by fork) but host memory is neither locked nor pre-faulted", Arg::kPtr, Arg::kUint),
    PARTIAL(150, "munlock", SysMunlock, "locks are recorded in the VMAs and accounted as Linux (VmLck, RLIMIT_MEMLOCK with ENOMEM/EPERM/EAGAIN, ENOMEM for holes, not inherited by fork) but host memory is neither locked nor pre-faulted", Arg::kPtr, Arg::kUint),
    PARTIAL(151, "mlockall", SysMlockall, "MCL_CURRENT/FUTURE/ONFAULT as Linux, MCL_FUTURE also for mmap/mremap/brk (EAGAIN past the limit); locks are recorded in the VMAs and accounted as Linux (VmLck, RLIMIT_MEMLOCK with ENOMEM/EPERM/EAGAIN, ENOMEM for holes, not inherited by fork) but host memory is neither locked nor pre-faulted", Arg::kHex),
    PARTIAL(152, "munlockall", SysMunlockall, "locks are recorded in the VMAs and accounted as Linux (VmLck, RLIMIT_MEMLOCK with ENOMEM/EPERM/EAGAIN, ENOMEM for holes, not inherited by fork) but host memory is neither locked nor pre-faulted"),
    UNIMPL(153, "vhangup", ""),
    UNIMPL(154, "modify_ldt", ""),
    PARTIAL(155, "pivot_root", SysPivotRoot, "Linux's checks and order; the namespace's root mount has no parent here (Linux's sits on rootfs), so pivoting it makes the new root the namespace's root; the shared-propagation checks see recorded types", Arg::kStr, Arg::kStr),
    UNIMPL(156, "_sysctl", ""),
    PARTIAL(157, "prctl", SysPrctl, "PR_SET/GET_NAME, PDEATHSIG, CHILD_SUBREAPER, DUMPABLE (per process; cleared by id changes as Linux's commit_creds, no core dumps either way), NO_NEW_PRIVS, GET/SET_SECCOMP (as seccomp(2)), CAPBSET_READ/DROP, CAP_AMBIENT, KEEPCAPS, SECUREBITS (Linux 6.1's four flags); other options EINVAL", Arg::kInt, Arg::kHex, Arg::kHex, Arg::kHex, Arg::kHex),
    PARTIAL(158, "arch_prctl", SysArchPrctl, "ARCH_SET/GET_FS and _GS only", Arg::kHex, Arg::kPtr),
    UNIMPL(159, "adjtimex", ""),
    PARTIAL(160, "setrlimit", SysSetrlimit, "limits are recorded (getrlimit, /proc/PID/limits, inherited over fork and execve); enforced: RLIMIT_NOFILE, NPROC, CPU, FSIZE, MEMLOCK, NICE, RTPRIO, AS (mmap, mremap, brk, shmat, io_setup; ENOMEM past VmSize) and DATA (brk and private writable non-stack mappings, mprotect to writable; Valgrind's soft 0); RLIMIT_STACK sizes the stack at execve, reserved whole (VmSize counts all of it, stack faults never reach RLIMIT_AS) with no legacy layout for an infinite limit (1 GiB then); RLIMIT_CORE: no core files are written (a core signal shows as dumped in the wait status only with RLIMIT_CORE >= 4096 and a dumpable process, as with a file core_pattern); RLIMIT_SIGPENDING, MSGQUEUE, RTTIME: recorded only", Arg::kInt, Arg::kPtr),
    FULL(161, "chroot", SysChroot, Arg::kStr),
    FULL(162, "sync", SysSync),
    UNIMPL(163, "acct", ""),
    PARTIAL(164, "settimeofday", SysSettimeofday, "the host clock is never set: EPERM after Linux's argument checks, as for a caller without CAP_SYS_TIME", Arg::kPtr, Arg::kPtr),
    PARTIAL(165, "mount", SysMount, "new tmpfs, proc, sysfs and devpts (the sandbox's one devpts, newinstance or not), other types ENODEV; binds (MS_REC too); MS_REMOUNT sets the per-mount flags (ro, nosuid, nodev, noexec, atime modes), not the superblock's, so other mounts of one tmpfs stay writable, and tmpfs options are checked, not applied; MS_MOVE; propagation types recorded and shown in mountinfo, but no mount event propagates between peers or namespaces", Arg::kStr, Arg::kStr, Arg::kStr, Arg::kHex, Arg::kPtr),
    PARTIAL(166, "umount2", SysUmount2, "the namespace's root is EINVAL (Linux remounts it read-only); MNT_FORCE acts as a plain umount (no network file systems)", Arg::kStr, Arg::kHex),
    UNIMPL(167, "swapon", ""),
    UNIMPL(168, "swapoff", ""),
    UNIMPL(169, "reboot", ""),
    FULL(170, "sethostname", SysSethostname, Arg::kStr, Arg::kInt),
    FULL(171, "setdomainname", SysSetdomainname, Arg::kStr, Arg::kInt),
    UNIMPL(172, "iopl", ""),
    UNIMPL(173, "ioperm", ""),
    UNIMPL(174, "create_module", ""),
    UNIMPL(175, "init_module", ""),
    UNIMPL(176, "delete_module", ""),
    UNIMPL(177, "get_kernel_syms", ""),
    UNIMPL(178, "query_module", ""),
    UNIMPL(179, "quotactl", ""),
    UNIMPL(180, "nfsservctl", ""),
    UNIMPL(181, "getpmsg", ""),
    UNIMPL(182, "putpmsg", ""),
    UNIMPL(183, "afs_syscall", ""),
    UNIMPL(184, "tuxcall", ""),
    UNIMPL(185, "security", ""),
    FULL(186, "gettid", SysGettid),
    PARTIAL(187, "readahead", SysReadahead, "a hint; does nothing", Arg::kFd, Arg::kInt, Arg::kUint),
    PARTIAL(188, "setxattr", SysSetxattr, "tmpfs and the overlay upper keep trusted.*, security.* and user.* in memory; no system.posix_acl_* (EOPNOTSUPP), and security.capability values are not validated", Arg::kStr, Arg::kStr, Arg::kPtr, Arg::kUint, Arg::kHex),
    PARTIAL(189, "lsetxattr", SysLsetxattr, "tmpfs and the overlay upper keep trusted.*, security.* and user.* in memory; no system.posix_acl_* (EOPNOTSUPP), and security.capability values are not validated", Arg::kStr, Arg::kStr, Arg::kPtr, Arg::kUint, Arg::kHex),
    PARTIAL(190, "fsetxattr", SysFsetxattr, "tmpfs and the overlay upper keep trusted.*, security.* and user.* in memory; no system.posix_acl_* (EOPNOTSUPP), and security.capability values are not validated", Arg::kFd, Arg::kStr, Arg::kPtr, Arg::kUint, Arg::kHex),
    FULL(191, "getxattr", SysGetxattr, Arg::kStr, Arg::kStr, Arg::kPtr, Arg::kUint),
    FULL(192, "lgetxattr", SysLgetxattr, Arg::kStr, Arg::kStr, Arg::kPtr, Arg::kUint),
    FULL(193, "fgetxattr", SysFgetxattr, Arg::kFd, Arg::kStr, Arg::kPtr, Arg::kUint),
    FULL(194, "listxattr", SysListxattr, Arg::kStr, Arg::kPtr, Arg::kUint),
    FULL(195, "llistxattr", SysLlistxattr, Arg::kStr, Arg::kPtr, Arg::kUint),
    FULL(196, "flistxattr", SysFlistxattr, Arg::kFd, Arg::kPtr, Arg::kUint),
    FULL(197, "removexattr", SysRemovexattr, Arg::kStr, Arg::kStr),
    FULL(198, "lremovexattr", SysLremovexattr, Arg::kStr, Arg::kStr),
    FULL(199, "fremovexattr", SysFremovexattr, Arg::kFd, Arg::kStr),
    FULL(200, "tkill", SysTkill, Arg::kInt, Arg::kSig),
    FULL(201, "time", SysTime, Arg::kPtr),
    PARTIAL(202, "futex", SysFutex, "no PI futexes; WAKE_OP is not atomic against plain guest stores", Arg::kPtr, Arg::kHex, Arg::kUint, Arg::kPtr, Arg::kPtr, Arg::kHex),
    PARTIAL(203, "sched_setaffinity", SysSchedSetaffinity, "the mask (cut to the sandbox's CPUs; none left: EINVAL) is stored per thread and inherited; the Sentry still places the thread itself", Arg::kInt, Arg::kUint, Arg::kPtr),
    FULL(204, "sched_getaffinity", SysSchedGetaffinity, Arg::kInt, Arg::kUint, Arg::kPtr),
    UNIMPL(205, "set_thread_area", ""),
    PARTIAL(206, "io_setup", SysIoSetup, "Linux's sizing, errors and ring (struct aio_ring at the context id, mapped shared read-write and kept coherent: user space may read and reap it); fs.aio-max-nr is a fixed 65536 per sandbox", Arg::kUint, Arg::kPtr),
    FULL(207, "io_destroy", SysIoDestroy, Arg::kHex),
    FULL(208, "io_getevents", SysIoGetevents, Arg::kHex, Arg::kInt, Arg::kInt, Arg::kPtr, Arg::kPtr),
    PARTIAL(209, "io_submit", SysIoSubmit, "PREAD/PWRITE/PREADV/PWRITEV/FSYNC/FDSYNC complete during the call, as Linux's buffered I/O (a read from an empty blocking pipe blocks io_submit, as on Linux); POLL completes later; IOCB_FLAG_RESFD; RWF_* flags; IOCB_FLAG_IOPRIO is checked but does not order I/O", Arg::kHex, Arg::kInt, Arg::kPtr),
    PARTIAL(210, "io_cancel", SysIoCancel, "only POLL is cancellable (EINPROGRESS, the event comes through the ring), as Linux for buffered I/O", Arg::kHex, Arg::kPtr, Arg::kPtr),
    UNIMPL(211, "get_thread_area", ""),
    UNIMPL(212, "lookup_dcookie", ""),
    FULL(213, "epoll_create", SysEpollCreate, Arg::kInt),
    UNIMPL(214, "epoll_ctl_old", ""),
    UNIMPL(215, "epoll_wait_old", ""),
    UNIMPL(216, "remap_file_pages", ""),
    FULL(217, "getdents64", SysGetdents64, Arg::kFd, Arg::kPtr, Arg::kUint),
    FULL(218, "set_tid_address", SysSetTidAddress, Arg::kPtr),
    FULL(219, "restart_syscall", SysRestartSyscall),
    FULL(220, "semtimedop", SysSemtimedop, Arg::kInt, Arg::kPtr, Arg::kUint, Arg::kPtr),
    PARTIAL(221, "fadvise64", SysFadvise64, "advice is accepted and ignored", Arg::kFd, Arg::kInt, Arg::kInt, Arg::kInt),
    PARTIAL(222, "timer_create", SysTimerCreate, "REALTIME, MONOTONIC, BOOTTIME, TAI and the CPU clocks (CPU timers sampled as setitimer's); the alarm clocks as the host has them (EOPNOTSUPP without an RTC), as plain clocks without CAP_WAKE_ALARM's EPERM; a periodic timer whose signal is ignored keeps running (Linux parks it until unignored)", Arg::kInt, Arg::kPtr, Arg::kPtr),
    FULL(223, "timer_settime", SysTimerSettime, Arg::kInt, Arg::kHex, Arg::kPtr, Arg::kPtr),
    FULL(224, "timer_gettime", SysTimerGettime, Arg::kInt, Arg::kPtr),
    FULL(225, "timer_getoverrun", SysTimerGetoverrun, Arg::kInt),
    FULL(226, "timer_delete", SysTimerDelete, Arg::kInt),
    PARTIAL(227, "clock_settime", SysClockSettime, "the host clock is never set: EPERM for CLOCK_REALTIME after Linux's argument checks (EINVAL for other clocks)", Arg::kInt, Arg::kPtr),
    FULL(228, "clock_gettime", SysClockGettime, Arg::kInt, Arg::kPtr),
    FULL(229, "clock_getres", SysClockGetres, Arg::kInt, Arg::kPtr),
    FULL(230, "clock_nanosleep", SysClockNanosleep, Arg::kInt, Arg::kHex, Arg::kPtr, Arg::kPtr),
    FULL(231, "exit_group", SysExitGroup, Arg::kInt),
    PARTIAL(232, "epoll_wait", SysEpollWait, "EPOLLEXCLUSIVE is accepted but wakes every waiter; stdio host fds are polled every 10ms", Arg::kFd, Arg::kPtr, Arg::kInt, Arg::kInt),
    PARTIAL(233, "epoll_ctl", SysEpollCtl, "EPOLLEXCLUSIVE is accepted but not exclusive; EPOLLWAKEUP is ignored", Arg::kFd, Arg::kInt, Arg::kFd, Arg::kPtr),
    FULL(234, "tgkill", SysTgkill, Arg::kInt, Arg::kInt, Arg::kSig),
    FULL(235, "utimes", SysUtimes, Arg::kStr, Arg::kPtr),
    UNIMPL(236, "vserver", ""),
    PARTIAL(237, "mbind", SysMbind, "one memory node: the range, mode, flags and nodemask are checked as Linux (EINVAL, EFAULT for holes, EPERM for MPOL_MF_MOVE_ALL) but the range's policy is not recorded", Arg::kPtr, Arg::kUint, Arg::kInt, Arg::kPtr, Arg::kUint, Arg::kHex),
    FULL(238, "set_mempolicy", SysSetMempolicy, Arg::kInt, Arg::kPtr, Arg::kUint),
    PARTIAL(239, "get_mempolicy", SysGetMempolicy, "the thread's policy as set; MPOL_F_ADDR reports the default policy (mbind's are not recorded); one memory node", Arg::kPtr, Arg::kPtr, Arg::kUint, Arg::kPtr, Arg::kHex),
    PARTIAL(240, "mq_open", SysMqOpen, "one namespace per sandbox; no /dev/mqueue mount (queues are reached by name only); RLIMIT_MSGQUEUE not enforced", Arg::kStr, Arg::kHex, Arg::kOct, Arg::kPtr),
    PARTIAL(241, "mq_unlink", SysMqUnlink, "no permission check: the caller may remove any queue", Arg::kStr),
    FULL(242, "mq_timedsend", SysMqTimedsend, Arg::kFd, Arg::kPtr, Arg::kUint, Arg::kUint, Arg::kPtr),
    FULL(243, "mq_timedreceive", SysMqTimedreceive, Arg::kFd, Arg::kPtr, Arg::kUint, Arg::kPtr, Arg::kPtr),
    PARTIAL(244, "mq_notify", SysMqNotify, "SIGEV_SIGNAL and SIGEV_NONE; SIGEV_THREAD needs a netlink socket: EBADF; a registration is not dropped when its owner closes the fd", Arg::kFd, Arg::kPtr),
    FULL(245, "mq_getsetattr", SysMqGetsetattr, Arg::kFd, Arg::kPtr, Arg::kPtr),
    UNIMPL(246, "kexec_load", ""),
    PARTIAL(247, "waitid", SysWaitid, "rusage has the CPU times only; its other fields are zero; P_PIDFD (PIDFD_NONBLOCK: EAGAIN) supported", Arg::kInt, Arg::kInt, Arg::kPtr, Arg::kHex, Arg::kPtr),
    PARTIAL(248, "add_key", SysAddKey, "key types keyring, user and logon; others (big_key, asymmetric, encrypted, trusted) ENODEV", Arg::kStr, Arg::kStr, Arg::kPtr, Arg::kUint, Arg::kInt),
    PARTIAL(249, "request_key", SysRequestKey, "searches the caller's keyrings; never constructs a key (no request-key upcall: ENOENT with callout info, ENOKEY without, as Linux without the helper)", Arg::kStr, Arg::kStr, Arg::kStr, Arg::kInt),
    PARTIAL(250, "keyctl", SysKeyctl, "key types keyring, user and logon; thread/process/session/user keyrings, quotas, permissions and possession as Linux; no persistent keyrings, DH, public-key or big_key operations and no notifications (EOPNOTSUPP, as a kernel built without them); INSTANTIATE/NEGATE/REJECT: EPERM (no request-key authority ever exists); RESTRICT_KEYRING only without a restriction type", Arg::kInt, Arg::kHex, Arg::kHex, Arg::kHex, Arg::kHex),
    PARTIAL(251, "ioprio_set", SysIoprioSet, "stored per thread with Linux's checks; no effect on host I/O", Arg::kInt, Arg::kInt, Arg::kHex),
    FULL(252, "ioprio_get", SysIoprioGet, Arg::kInt, Arg::kInt),
    FULL(253, "inotify_init", SysInotifyInit),
    PARTIAL(254, "inotify_add_watch", SysInotifyAddWatch, "events for changes made inside the sandbox only (not host-side changes under gofer mounts); a hard link made on the overlay is a separate inode to watches; IN_EXCL_UNLINK accepted, not applied; no IN_UNMOUNT", Arg::kFd, Arg::kStr, Arg::kHex),
    FULL(255, "inotify_rm_watch", SysInotifyRmWatch, Arg::kFd, Arg::kInt),
    UNIMPL(256, "migrate_pages", ""),
    PARTIAL(257, "openat", SysOpenat, "O_TMPFILE: EOPNOTSUPP; FIFOs of host bind mounts (gofer) open without waiting for the other side", Arg::kFd, Arg::kStr, Arg::kHex, Arg::kOct),
    FULL(258, "mkdirat", SysMkdirat, Arg::kFd, Arg::kStr, Arg::kOct),
    PARTIAL(259, "mknodat", SysMknodat, "FIFOs of host bind mounts (gofer) open without waiting for the other side", Arg::kFd, Arg::kStr, Arg::kOct, Arg::kHex),
    FULL(260, "fchownat", SysFchownat, Arg::kFd, Arg::kStr, Arg::kInt, Arg::kInt, Arg::kHex),
    FULL(261, "futimesat", SysFutimesat, Arg::kFd, Arg::kStr, Arg::kPtr),
    FULL(262, "newfstatat", SysNewfstatat, Arg::kFd, Arg::kStr, Arg::kPtr, Arg::kHex),
    FULL(263, "unlinkat", SysUnlinkat, Arg::kFd, Arg::kStr, Arg::kHex),
    PARTIAL(264, "renameat", SysRenameat, "directories with a lower-layer part: EXDEV (as overlayfs)", Arg::kFd, Arg::kStr, Arg::kFd, Arg::kStr),
    FULL(265, "linkat", SysLinkat, Arg::kFd, Arg::kStr, Arg::kFd, Arg::kStr, Arg::kHex),
    FULL(266, "symlinkat", SysSymlinkat, Arg::kStr, Arg::kFd, Arg::kStr),
    FULL(267, "readlinkat", SysReadlinkat, Arg::kFd, Arg::kStr, Arg::kPtr, Arg::kInt),
    FULL(268, "fchmodat", SysFchmodat, Arg::kFd, Arg::kStr, Arg::kOct),
    FULL(269, "faccessat", SysFaccessat, Arg::kFd, Arg::kStr, Arg::kOct),
    FULL(270, "pselect6", SysPselect6, Arg::kInt, Arg::kPtr, Arg::kPtr, Arg::kPtr, Arg::kPtr, Arg::kPtr),
    FULL(271, "ppoll", SysPpoll, Arg::kPtr, Arg::kUint, Arg::kPtr, Arg::kPtr, Arg::kUint),
    PARTIAL(272, "unshare", SysUnshare, "mount, UTS, IPC (SysV and POSIX mq), network (a stack of its own: lo only, down; only lo up/down is configurable; no route out), user (uid_map/gid_map/setgroups with Linux's rules, ids seen through the maps in getuid/getgroups/stat/statx/proc status, and mapped back in set*id/setgroups/chown; capabilities against the owning namespace for set*id, namespaces, mount, sethostname and lo; missing: file permission overrides (CAP_DAC_*, CAP_FOWNER, CAP_CHOWN) are not granted inside a child user namespace at all, ids in SO_PEERCRED/SCM_CREDENTIALS, /proc/PID/stat, wait's si_uid and IPC/keys are not translated, no user.max_* limits), cgroup and time namespaces; cgroup and time ones are identities only (the cgroup view is / anyway; no timens_offsets); PID (hierarchical as Linux: the next child is the namespace's init, ENOMEM once it has exited, EINVAL for a second unshare before a fork, ENOSPC past level 32; getpid/getppid/gettid, wait, kill/tgkill/sigqueue, process groups and sessions, pidfd_open, ptrace (targets, PTRACE_GETEVENTMSG), F_SETOWN, TIOCGPGRP/TIOCSPGRP/TIOCGSID, capget, sched_*/priority, process_vm_*, kcmp, CPU clocks, SO_PEERCRED/SCM_CREDENTIALS, si_pid, the pids SysV IPC reports and a message queue notification's sender translated; a proc mounted inside shows its namespace with NSpid/NStgid/NSpgid/NSsid; missing: clone3's set_tid)", Arg::kHex),
    PARTIAL(273, "set_robust_list", SysSetRobustList, "the list is recorded; owner-death walking is not done yet", Arg::kPtr, Arg::kUint),
    FULL(274, "get_robust_list", SysGetRobustList, Arg::kInt, Arg::kPtr, Arg::kPtr),
    PARTIAL(275, "splice", SysSplice, "bytes are copied, not pages moved (SPLICE_F_MOVE/GIFT are hints); at most one pipe's worth per call", Arg::kFd, Arg::kPtr, Arg::kFd, Arg::kPtr, Arg::kUint, Arg::kHex),
    FULL(276, "tee", SysTee, Arg::kFd, Arg::kFd, Arg::kUint, Arg::kHex),
    PARTIAL(277, "sync_file_range", SysSyncFileRange, "checks as Linux; SYNC_FILE_RANGE_WRITE writes back the whole file's data (fdatasync), not just the range", Arg::kFd, Arg::kInt, Arg::kInt, Arg::kHex),
    UNIMPL(278, "vmsplice", ""),
    UNIMPL(279, "move_pages", ""),
    FULL(280, "utimensat", SysUtimensat, Arg::kFd, Arg::kStr, Arg::kPtr, Arg::kHex),
    PARTIAL(281, "epoll_pwait", SysEpollPwait, "EPOLLEXCLUSIVE is accepted but wakes every waiter; stdio host fds are polled every 10ms", Arg::kFd, Arg::kPtr, Arg::kInt, Arg::kInt, Arg::kPtr, Arg::kUint),
    FULL(282, "signalfd", SysSignalfd, Arg::kFd, Arg::kPtr, Arg::kUint),
    PARTIAL(283, "timerfd_create", SysTimerfdCreate, "the _ALARM clocks act as their plain clocks; no TFD_IOC_SET_TICKS", Arg::kInt, Arg::kHex),
    FULL(284, "eventfd", SysEventfd, Arg::kUint),
    PARTIAL(285, "fallocate", SysFallocate, "tmpfs: only mode 0 and FALLOC_FL_KEEP_SIZE", Arg::kFd, Arg::kHex, Arg::kInt, Arg::kInt),
    PARTIAL(286, "timerfd_settime", SysTimerfdSettime, "TFD_TIMER_CANCEL_ON_SET is accepted; reads never get ECANCELED", Arg::kFd, Arg::kHex, Arg::kPtr, Arg::kPtr),
    FULL(287, "timerfd_gettime", SysTimerfdGettime, Arg::kFd, Arg::kPtr),
    FULL(288, "accept4", SysAccept4, Arg::kFd, Arg::kPtr, Arg::kPtr, Arg::kHex),
    FULL(289, "signalfd4", SysSignalfd4, Arg::kFd, Arg::kPtr, Arg::kUint, Arg::kHex),
    FULL(290, "eventfd2", SysEventfd2, Arg::kUint, Arg::kHex),
    FULL(291, "epoll_create1", SysEpollCreate1, Arg::kHex),
    FULL(292, "dup3", SysDup3, Arg::kFd, Arg::kFd, Arg::kHex),
    FULL(293, "pipe2", SysPipe2, Arg::kPtr, Arg::kHex),
    FULL(294, "inotify_init1", SysInotifyInit1, Arg::kHex),
    FULL(295, "preadv", SysPreadv, Arg::kFd, Arg::kPtr, Arg::kInt, Arg::kInt),
    FULL(296, "pwritev", SysPwritev, Arg::kFd, Arg::kPtr, Arg::kInt, Arg::kInt),
    FULL(297, "rt_tgsigqueueinfo", SysRtTgsigqueueinfo, Arg::kInt, Arg::kInt, Arg::kSig, Arg::kPtr),
    UNIMPL(298, "perf_event_open", ""),
    FULL(299, "recvmmsg", SysRecvmmsg, Arg::kFd, Arg::kPtr, Arg::kUint, Arg::kHex, Arg::kPtr),
    UNIMPL(300, "fanotify_init", ""),
    UNIMPL(301, "fanotify_mark", ""),
    PARTIAL(302, "prlimit64", SysPrlimit64, "as setrlimit: RLIMIT_CORE writes no core files; RLIMIT_STACK takes effect at the next execve, as on Linux, but reserves the whole stack; RLIMIT_SIGPENDING, MSGQUEUE, RTTIME are recorded only", Arg::kInt, Arg::kInt, Arg::kPtr, Arg::kPtr),
    PARTIAL(303, "name_to_handle_at", SysNameToHandleAt, "file handles are not offered: EOPNOTSUPP", Arg::kFd, Arg::kStr, Arg::kPtr, Arg::kPtr, Arg::kHex),
    UNIMPL(304, "open_by_handle_at", ""),
    UNIMPL(305, "clock_adjtime", ""),
    FULL(306, "syncfs", SysSyncfs, Arg::kFd),
    FULL(307, "sendmmsg", SysSendmmsg, Arg::kFd, Arg::kPtr, Arg::kUint, Arg::kHex),
    PARTIAL(308, "setns", SysSetns, "nsfs files of /proc/PID/ns and pidfds; user namespaces with Linux's checks (one's own: EINVAL; CAP_SYS_ADMIN over the target; the joiner gets every capability there), the others with CAP_SYS_ADMIN over their owning user namespace; a PID namespace (from a file or a pidfd's process) only if it is the caller's own or below it (EINVAL), for the caller's children", Arg::kFd, Arg::kHex),
    PARTIAL(309, "getcpu", SysGetcpu, "the host CPU of the Sentry thread serving the call when the thread's mask allows it, else the mask's first CPU; node 0. The vDSO's getcpu (glibc's sched_getcpu) reports the host CPU of the stub, which may lie outside the mask", Arg::kPtr, Arg::kPtr, Arg::kPtr),
    PARTIAL(310, "process_vm_readv", SysProcessVmReadv, "through the target's memory manager, partial transfers and errnos as Linux; ptrace access is by uid/gid or euid 0 (dumpability is not tracked)", Arg::kInt, Arg::kPtr, Arg::kUint, Arg::kPtr, Arg::kUint, Arg::kHex),
    PARTIAL(311, "process_vm_writev", SysProcessVmWritev, "as process_vm_readv", Arg::kInt, Arg::kPtr, Arg::kUint, Arg::kPtr, Arg::kUint, Arg::kHex),
    PARTIAL(312, "kcmp", SysKcmp, "KCMP_FILE, VM, FILES, FS, SIGHAND; KCMP_IO, SYSVSEM and EPOLL_TFD: EOPNOTSUPP", Arg::kInt, Arg::kInt, Arg::kInt, Arg::kUint, Arg::kUint),
    UNIMPL(313, "finit_module", ""),
    PARTIAL(314, "sched_setattr", SysSchedSetattr, "as sched_setscheduler; SCHED_DEADLINE parameters are checked and stored (no admission control); utilization clamps: EOPNOTSUPP", Arg::kInt, Arg::kPtr, Arg::kHex),
    FULL(315, "sched_getattr", SysSchedGetattr, Arg::kInt, Arg::kPtr, Arg::kUint, Arg::kHex),
    PARTIAL(316, "renameat2", SysRenameat2, "RENAME_WHITEOUT unsupported; lower-layer directories: EXDEV", Arg::kFd, Arg::kStr, Arg::kFd, Arg::kStr, Arg::kHex),
    PARTIAL(317, "seccomp", SysSeccomp, "strict mode and classic BPF filters checked and run as Linux (all actions, their precedence, TSYNC, LOG; SIGSYS with SYS_SECCOMP for TRAP); no user notification (NEW_LISTENER and GET_NOTIF_SIZES are EINVAL, USER_NOTIF is not available); TRACE finds no tracer (ENOSYS)", Arg::kInt, Arg::kHex, Arg::kPtr),
    FULL(318, "getrandom", SysGetrandom, Arg::kPtr, Arg::kUint, Arg::kHex),
    PARTIAL(319, "memfd_create", SysMemfdCreate, "tmpfs-backed: MAP_SHARED writable mappings are refused (EACCES); MFD_HUGETLB: EINVAL", Arg::kStr, Arg::kHex),
    UNIMPL(320, "kexec_file_load", ""),
    UNIMPL(321, "bpf", ""),
    PARTIAL(322, "execveat", SysExecveat, "set-user-ID and set-group-ID programs as Linux (not on nosuid mounts, under no_new_privs or an unprivileged tracer); file capabilities (security.capability) are not honoured", Arg::kFd, Arg::kStr, Arg::kPtr, Arg::kPtr, Arg::kHex),
    UNIMPL(323, "userfaultfd", ""),
    PARTIAL(324, "membarrier", SysMembarrier, "Linux 6.1's commands and errnos (no GET_REGISTRATIONS); every barrier is the host's MEMBARRIER_CMD_GLOBAL (all CPUs); the RSEQ barrier does not restart other threads' rseq critical sections", Arg::kInt, Arg::kHex, Arg::kInt),
    PARTIAL(325, "mlock2", SysMlock2, "MLOCK_ONFAULT; locks are recorded in the VMAs and accounted as Linux (VmLck, RLIMIT_MEMLOCK with ENOMEM/EPERM/EAGAIN, ENOMEM for holes, not inherited by fork) but host memory is neither locked nor pre-faulted", Arg::kPtr, Arg::kUint, Arg::kHex),
    FULL(326, "copy_file_range", SysCopyFileRange, Arg::kFd, Arg::kPtr, Arg::kFd, Arg::kPtr, Arg::kUint, Arg::kHex),
    PARTIAL(327, "preadv2", SysPreadv2, "offset -1 and RWF_HIPRI/DSYNC/SYNC/NOWAIT/APPEND (Linux 6.1's); RWF_NOWAIT fails only pollable files that are not ready; later flags: EOPNOTSUPP", Arg::kFd, Arg::kPtr, Arg::kInt, Arg::kInt, Arg::kInt, Arg::kHex),
    PARTIAL(328, "pwritev2", SysPwritev2, "as preadv2; RWF_APPEND writes at the end of regular files; RWF_DSYNC/SYNC sync after the write", Arg::kFd, Arg::kPtr, Arg::kInt, Arg::kInt, Arg::kInt, Arg::kHex),
    PARTIAL(329, "pkey_mprotect", SysPkeyMprotect, "as Linux on a CPU without protection keys, like this host: EINVAL for every key (pkey_mprotect with -1 is mprotect); keys are not emulated", Arg::kPtr, Arg::kUint, Arg::kHex, Arg::kInt),
    PARTIAL(330, "pkey_alloc", SysPkeyAlloc, "as Linux on a CPU without protection keys, like this host: EINVAL for every key (pkey_mprotect with -1 is mprotect); keys are not emulated", Arg::kHex, Arg::kHex),
    PARTIAL(331, "pkey_free", SysPkeyFree, "as Linux on a CPU without protection keys, like this host: EINVAL for every key (pkey_mprotect with -1 is mprotect); keys are not emulated", Arg::kInt),
    FULL(332, "statx", SysStatx, Arg::kFd, Arg::kStr, Arg::kHex, Arg::kHex, Arg::kPtr),
    FULL(333, "io_pgetevents", SysIoPgetevents, Arg::kHex, Arg::kInt, Arg::kInt, Arg::kPtr, Arg::kPtr, Arg::kPtr),
    PARTIAL(334, "rseq", SysRseq, "Linux 6.1's rules and errnos (32-byte area); registered with the host kernel on the guest's host thread, which keeps cpu_id current and restarts critical sections on preemption and migration; the Sentry restarts them on signal delivery; membarrier's RSEQ barrier does not restart other threads' sections", Arg::kPtr, Arg::kUint, Arg::kHex, Arg::kHex),
    PARTIAL(424, "pidfd_send_signal", SysPidfdSendSignal, "siginfo rules and PIDFD_SIGNAL_* flags as Linux; a /proc/PID directory fd is not taken as a pidfd (EBADF)", Arg::kFd, Arg::kSig, Arg::kPtr, Arg::kHex),
    UNIMPL(425, "io_uring_setup", ""),
    UNIMPL(426, "io_uring_enter", ""),
    UNIMPL(427, "io_uring_register", ""),
    UNIMPL(428, "open_tree", ""),
    UNIMPL(429, "move_mount", ""),
    UNIMPL(430, "fsopen", ""),
    UNIMPL(431, "fsconfig", ""),
    UNIMPL(432, "fsmount", ""),
    UNIMPL(433, "fspick", ""),
    PARTIAL(434, "pidfd_open", SysPidfdOpen, "PIDFD_NONBLOCK and PIDFD_THREAD (Linux 6.9); polls POLLIN at exit, POLLHUP once reaped, ENOENT for a non-leader without PIDFD_THREAD (as 6.9+)", Arg::kInt, Arg::kHex),
    PARTIAL(435, "clone3", SysClone3, "argument checks as Linux, CLONE_PIDFD, CLONE_CLEAR_SIGHAND; namespaces as clone (CLONE_NEWPID included); set_tid and CLONE_INTO_CGROUP refused (EINVAL)", Arg::kPtr, Arg::kUint),
    FULL(436, "close_range", SysCloseRange, Arg::kUint, Arg::kUint, Arg::kHex),
    PARTIAL(437, "openat2", SysOpenat2, "all RESOLVE_* flags; RESOLVE_CACHED refuses only O_CREAT/O_TRUNC/O_TMPFILE (EAGAIN); O_TMPFILE: EOPNOTSUPP as openat", Arg::kFd, Arg::kStr, Arg::kPtr, Arg::kUint),
    PARTIAL(438, "pidfd_getfd", SysPidfdGetfd, "ptrace access is by uid/gid or euid 0 (dumpability is not tracked)", Arg::kFd, Arg::kInt, Arg::kHex),
    FULL(439, "faccessat2", SysFaccessat2, Arg::kFd, Arg::kStr, Arg::kOct, Arg::kHex),
    UNIMPL(440, "process_madvise", ""),
    PARTIAL(441, "epoll_pwait2", SysEpollPwait2, "EPOLLEXCLUSIVE is accepted but wakes every waiter; stdio host fds are polled every 10ms", Arg::kFd, Arg::kPtr, Arg::kInt, Arg::kPtr, Arg::kPtr, Arg::kUint),
    UNIMPL(442, "mount_setattr", ""),
    UNIMPL(443, "quotactl_fd", ""),
    UNIMPL(444, "landlock_create_ruleset", ""),
    UNIMPL(445, "landlock_add_rule", ""),
    UNIMPL(446, "landlock_restrict_self", ""),
    UNIMPL(447, "memfd_secret", ""),
    UNIMPL(448, "process_mrelease", ""),
    UNIMPL(449, "futex_waitv", ""),
    PARTIAL(450, "set_mempolicy_home_node", SysSetMempolicyHomeNode, "checks as Linux; there are no per-range policies to change", Arg::kPtr, Arg::kUint, Arg::kUint, Arg::kHex),
};

#undef FULL
#undef PARTIAL
#undef UNIMPL

constexpr bool Sorted() {
  for (size_t i = 1; i < std::size(kTable); i++) {
    if (kTable[i - 1].nr >= kTable[i].nr) return false;
  }
  return true;
}
static_assert(Sorted(), "the syscall table must be sorted by number");

// Every guest syscall looks its number up here: a direct index (built at compile time) rather
// than a search of the table.
constexpr size_t kIndexSize = 512;
static_assert(kTable[std::size(kTable) - 1].nr < static_cast<int>(kIndexSize));
constexpr auto kIndex = [] {
  std::array<int16_t, kIndexSize> index{};
  index.fill(-1);
  for (size_t i = 0; i < std::size(kTable); i++) index[kTable[i].nr] = static_cast<int16_t>(i);
  return index;
}();

}  // namespace

const SyscallEntry* Lookup(uint64_t nr) {
  if (nr >= kIndexSize || kIndex[nr] < 0) return nullptr;
  return &kTable[kIndex[nr]];
}

std::span<const SyscallEntry> AllSyscalls() { return kTable; }

}  // namespace sentry::syscalls
