// Memory: mmap, munmap, mprotect, mremap, madvise, brk, msync, mincore.
#include <sys/mman.h>
#include <sys/stat.h>

#include "syscalls/common.h"

namespace sentry::syscalls {

Result<uint64_t> SysMmap(Task& t, uint64_t addr, uint64_t len, int prot, int flags, int fd,
                         uint64_t off) {
  int type = flags & MAP_TYPE;
  if (len == 0 || (type != MAP_SHARED && type != MAP_PRIVATE && type != MAP_SHARED_VALIDATE)) {
    return Errno(EINVAL);
  }
  if (!PageAligned(off) || PageRoundUp(len) < len) return Errno(len ? ENOMEM : EINVAL);
  if (type == MAP_SHARED_VALIDATE) flags = (flags & ~MAP_TYPE) | MAP_SHARED;
  // No huge pages are reserved in the sandbox (as on a host with vm.nr_hugepages=0), and no
  // file here lives on hugetlbfs.
  if (flags & MAP_HUGETLB) return Errno(flags & MAP_ANONYMOUS ? ENOMEM : EINVAL);
  SENTRY_TRY(CheckLockedMapping(t, flags, len));
  const mm::VmLimits limits = VmLimitsOf(t);
  if (flags & MAP_ANONYMOUS) {
    return t.mm().MapAnonymous(t.ctx(), addr, len, prot, flags, "", nullptr, 0, limits);
  }
  auto f = SENTRY_TRY(GetFile(t, fd));
  if (!f->Readable()) return Errno(EACCES);
  struct stat st;
  SENTRY_TRY(f->Stat(&st));
  if (S_ISCHR(st.st_mode) && f->Name() == "/dev/zero") {
    return t.mm().MapAnonymous(t.ctx(), addr, len, prot, flags | MAP_ANONYMOUS, "", nullptr, 0,
                               limits);
  }
  if (!S_ISREG(st.st_mode)) return Errno(ENODEV);
  if ((flags & MAP_SHARED) && (prot & PROT_WRITE) && !f->Writable()) return Errno(EACCES);
  mm::MapSource source{st.st_dev, st.st_ino, f->Writable()};
  // A host-backed file (gofer-donated fd) is mapped directly, so the guest shares the host
  // page cache and sees the file as Linux would (shared writes, SIGBUS past EOF).
  if (vfs::FileDescription::HostFdHold host = f->HoldHostFd(); host.fd >= 0) {
    Result<uint64_t> at =
        t.mm().Map(t.ctx(), addr, len, prot, flags, FilePath(t, f), host.fd, off, &source, limits);
    if (at.ok() || at.error().code() != EOPNOTSUPP) return at;
  }
  // Partial: otherwise (files with no host fd: /proc, synthetic files) the contents are copied
  // into private memory, and shared writable mappings are refused.
  if ((flags & MAP_SHARED) && (prot & PROT_WRITE)) return Errno(EACCES);
  int mflags = (flags & ~MAP_SHARED) | MAP_PRIVATE | MAP_ANONYMOUS;
  // Writable only while it is filled: data to RLIMIT_DATA if the guest asked for PROT_WRITE.
  mm::VmLimits copy_limits = limits;
  if (!(prot & PROT_WRITE) || (flags & MAP_SHARED)) copy_limits.data = RLIM_INFINITY;
  uint64_t at = SENTRY_TRY(t.mm().MapAnonymous(t.ctx(), addr, len, prot | PROT_WRITE, mflags,
                                               FilePath(t, f), &source, off, copy_limits));
  std::vector<uint8_t> buf(1 << 20);
  for (uint64_t done = 0; done < len;) {
    size_t want = std::min<uint64_t>(buf.size(), len - done);
    size_t n = SENTRY_TRY(f->PRead(t, {buf.data(), want}, off + done));
    if (n == 0) break;
    if (t.mm().as().WriteMemory(GuestAddr(at + done), {buf.data(), n}) != n) return Errno(EFAULT);
    done += n;
  }
  if (!(prot & PROT_WRITE)) SENTRY_TRY(t.mm().Protect(t.ctx(), at, len, prot));
  return at;
}

Result<uint64_t> SysMunmap(Task& t, uint64_t addr, uint64_t len) {
  SENTRY_TRY(t.mm().Unmap(t.ctx(), addr, len));
  return 0;
}

Result<uint64_t> SysMprotect(Task& t, uint64_t addr, uint64_t len, int prot) {
  SENTRY_TRY(t.mm().Protect(t.ctx(), addr, len, prot, VmLimitsOf(t)));
  return 0;
}

Result<uint64_t> SysMremap(Task& t, uint64_t old_addr, uint64_t old_len, uint64_t new_len,
                           int flags, uint64_t new_addr) {
  if (new_len > old_len && PageAligned(old_addr)) {
    bool locked = t.mm().LockedPages(old_addr, kPageSize) > 0;
    SENTRY_TRY(CheckLockedGrowth(t, locked, new_len - old_len));
  }
  return t.mm().Remap(t.ctx(), old_addr, old_len, new_len, flags, new_addr, VmLimitsOf(t));
}

Result<uint64_t> SysMadvise(Task& t, uint64_t addr, uint64_t len, int advice) {
  SENTRY_TRY(t.mm().Advise(t.ctx(), addr, len, advice));
  return 0;
}

Result<uint64_t> SysBrk(Task& t, uint64_t addr) {
  // Under mlockall(MCL_FUTURE) the new heap is locked: past RLIMIT_MEMLOCK, brk stays put.
  if (t.mm().future_lock()) {
    uint64_t cur = SENTRY_TRY(t.mm().Brk(t.ctx(), 0));
    if (addr > cur && !CheckLockedGrowth(t, true, PageRoundUp(addr) - PageRoundUp(cur)).ok()) {
      return cur;
    }
  }
  return t.mm().Brk(t.ctx(), addr, VmLimitsOf(t));
}

Result<uint64_t> SysMsync(Task& t, uint64_t addr, uint64_t len, int flags) {
  if (!PageAligned(addr) || (flags & ~(MS_ASYNC | MS_SYNC | MS_INVALIDATE)) ||
      ((flags & MS_ASYNC) && (flags & MS_SYNC))) {
    return Errno(EINVAL);
  }
  SENTRY_TRY(t.mm().CheckMapped(addr, PageRoundUp(len)));
  return 0;
}

Result<uint64_t> SysMincore(Task& t, uint64_t addr, uint64_t len, GuestAddr vec) {
  if (!PageAligned(addr)) return Errno(EINVAL);
  SENTRY_TRY(t.mm().CheckMapped(addr, PageRoundUp(len)));
  // Every mapped page is reported resident: the host pages lazily, the guest cannot tell.
  std::vector<uint8_t> v(PageRoundUp(len) / kPageSize, 1);
  SENTRY_TRY(t.CopyOutBytes(vec, v));
  return 0;
}

}  // namespace sentry::syscalls
