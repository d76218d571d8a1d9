// System V shared memory: shmget, shmat, shmctl (shmdt is MemoryManager::DetachShared).
#include <sys/mman.h>

#include <cstdio>

#include "sentry/kernel/ipc_impl.h"
#include "sentry/kernel/kernel.h"
#include "vfs/memfd.h"

namespace sentry::kernel {
namespace {

constexpr uint64_t kShmLba = 4096;  // SHMLBA on x86_64: the page size

int CurrentPid() {
  Task* t = Task::Current();
  return t != nullptr ? t->tg().tgid : 0;
}

uint64_t Pages(uint64_t size) { return PageRoundUp(size) / kPageSize; }

}  // namespace

// shm_open / shm_close: every VMA of the segment counts as an attachment, and each change
// records the time and the process, as Linux does (a fork attaches in the parent's name).
void ShmSegment::Opened() {
  absl::MutexLock l(&ns->mu_);
  nattch++;
  atime = IpcNow();
  if (int pid = CurrentPid()) lpid = pid;
}

void ShmSegment::Closed() {
  absl::MutexLock l(&ns->mu_);
  dtime = IpcNow();
  if (int pid = CurrentPid()) lpid = pid;
  ns->ShmUnpin(*this);
}

void IpcNamespace::ShmUnpin(ShmSegment& seg) {
  if (--seg.nattch == 0 && (seg.perm.mode & SHM_DEST)) ShmDestroy(seg);
}

void IpcNamespace::ShmDestroy(ShmSegment& seg) {
  shm_pages_ -= Pages(seg.size);
  shm_.Remove(seg.id);
  seg.file.reset();  // mappings that remain keep the host memfd's pages
}

Result<int> IpcNamespace::ShmGet(Task& t, int32_t key, uint64_t size, int flags) {
  IpcCaller c = CallerOf(t);
  absl::MutexLock l(&mu_);
  auto make = [&]() -> Result<std::shared_ptr<IpcObject>> {
    if (size < 1 || size > limits.shmmax) return Errno(EINVAL);
    if (Pages(size) > limits.shmall - shm_pages_) return Errno(ENOSPC);
    char name[32];
    snprintf(name, sizeof(name), "SYSV%08x", static_cast<uint32_t>(key));
    vfs::FileRef file = SENTRY_TRY(vfs::NewMemfd(name, false, vfs::Creds{c.uid, c.gid, {}}));
    vfs::SetAttrRequest r;
    r.mask = vfs::kAttrSize;
    r.size = size;
    SENTRY_TRY(file->inode()->SetAttr(r));
    struct stat st;
    SENTRY_TRY(file->Stat(&st));
    auto seg = std::make_shared<ShmSegment>();
    seg->ns = this;
    seg->size = size;
    seg->cpid = c.pid;
    seg->ctime = IpcNow();
    seg->file = std::move(file);
    seg->dev = st.st_dev;
    seg->ino = st.st_ino;
    shm_pages_ += Pages(size);
    return std::shared_ptr<IpcObject>(std::move(seg));
  };
  auto check = [&](IpcObject& o) -> Result<void> {
    if (static_cast<ShmSegment&>(o).size < size) return Errno(EINVAL);
    return Ok();
  };
  return Get(shm_, c, key, flags, limits.shmmni, make, check);
}

Result<uint64_t> IpcNamespace::ShmAt(Task& t, int id, uint64_t addr, int flags) {
  int mflags = MAP_SHARED;
  if (addr != 0) {
    if (addr & (kShmLba - 1)) {
      if (!(flags & SHM_RND)) return Errno(EINVAL);
      addr &= ~(kShmLba - 1);
      if (addr == 0) return Errno(EINVAL);
    }
    // Without SHM_REMAP the range must be free (Linux: EINVAL on any overlap).
    mflags |= (flags & SHM_REMAP) ? MAP_FIXED : MAP_FIXED_NOREPLACE;
  } else if (flags & SHM_REMAP) {
    return Errno(EINVAL);
  }
  bool rdonly = flags & SHM_RDONLY;
  int prot = PROT_READ | (rdonly ? 0 : PROT_WRITE) | (flags & SHM_EXEC ? PROT_EXEC : 0);
  int access = 0444 | (rdonly ? 0 : 0222) | (flags & SHM_EXEC ? 0111 : 0);
  IpcCaller c = CallerOf(t);
  mm::VmLimits vm_limits;  // do_shmat maps as mmap does: RLIMIT_AS applies
  {
    absl::MutexLock l(&t.kernel().mu());
    vm_limits.as = t.tg().rlimits[RLIMIT_AS].cur;
  }
  std::shared_ptr<ShmSegment> seg;
  {
    absl::MutexLock l(&mu_);
    seg = std::static_pointer_cast<ShmSegment>(shm_.Find(id));
    if (!seg) return Errno(EINVAL);
    if (!seg->perm.Allows(c, access)) return Errno(EACCES);
    seg->nattch++;  // an IPC_RMID meanwhile must not destroy it
  }
  Result<uint64_t> at = Errno(ENOMEM);
  if (int host_fd = seg->file->HostFd(); host_fd >= 0) {
    char name[48];
    snprintf(name, sizeof(name), "/SYSV%08x (deleted)", static_cast<uint32_t>(seg->perm.key));
    mm::MapSource source{seg->dev, seg->ino, !rdonly, seg};
    at = t.mm().Map(t.ctx(), addr, seg->size, prot, mflags, name, host_fd, 0, &source, vm_limits);
  }
  absl::MutexLock l(&mu_);
  ShmUnpin(*seg);
  if (!at.ok() && at.error() == EEXIST) return Errno(EINVAL);
  // The platform could not hand the memfd to the stub: no copy can stand in for shared memory.
  if (!at.ok() && at.error() == EOPNOTSUPP) return Errno(ENOMEM);
  return at;
}

Result<uint64_t> IpcNamespace::ShmCtl(Task& t, int id, int cmd, GuestAddr buf) {
  if (cmd < 0 || id < 0) return Errno(EINVAL);
  IpcCaller c = CallerOf(t);
  switch (cmd) {
    case IPC_INFO: {
      struct shminfo info {};
      info.shmmax = limits.shmmax;
      info.shmmin = 1;
      info.shmmni = static_cast<unsigned long>(limits.shmmni);
      info.shmseg = info.shmmni;
      info.shmall = limits.shmall;
      SENTRY_TRY(t.CopyOut(buf, info));
      absl::MutexLock l(&mu_);
      return shm_.MaxIndex();
    }
    case SHM_INFO: {
      struct shm_info info {};
      int max;
      {
        absl::MutexLock l(&mu_);
        info.used_ids = static_cast<int>(shm_.size());
        info.shm_tot = shm_pages_;
        info.shm_rss = shm_pages_;
        max = shm_.MaxIndex();
      }
      SENTRY_TRY(t.CopyOut(buf, info));
      return max;
    }
    case IPC_STAT:
    case SHM_STAT:
    case SHM_STAT_ANY: {
      struct shmid_ds ds {};
      int ret;
      {
        absl::MutexLock l(&mu_);
        auto seg = std::static_pointer_cast<ShmSegment>(cmd == IPC_STAT ? shm_.Find(id)
                                                                        : shm_.AtIndex(id));
        if (!seg) return Errno(EINVAL);
        if (cmd != SHM_STAT_ANY && !seg->perm.Allows(c, 0444)) return Errno(EACCES);
        ds.shm_perm = ToAbi(seg->perm);
        ds.shm_segsz = seg->size;
        ds.shm_atime = seg->atime;
        ds.shm_dtime = seg->dtime;
        ds.shm_ctime = seg->ctime;
        ds.shm_cpid = seg->cpid;
        ds.shm_lpid = seg->lpid;
        ds.shm_nattch = seg->nattch;
        ret = cmd == IPC_STAT ? 0 : seg->id;
      }
      // Global pids, shown as the caller's PID namespace numbers them (0: not visible).
      ds.shm_cpid = t.LocalPid(ds.shm_cpid);
      ds.shm_lpid = t.LocalPid(ds.shm_lpid);
      SENTRY_TRY(t.CopyOut(buf, ds));
      return ret;
    }
    case IPC_SET: {
      auto ds = SENTRY_TRY(t.CopyIn<struct shmid_ds>(buf));
      absl::MutexLock l(&mu_);
      auto seg = std::static_pointer_cast<ShmSegment>(shm_.Find(id));
      if (!seg) return Errno(EINVAL);
      if (!seg->perm.OwnedBy(c)) return Errno(EPERM);
      SetPerm(seg->perm, ds.shm_perm);
      seg->ctime = IpcNow();
      return 0;
    }
    case IPC_RMID: {
      absl::MutexLock l(&mu_);
      auto seg = std::static_pointer_cast<ShmSegment>(shm_.Find(id));
      if (!seg) return Errno(EINVAL);
      if (!seg->perm.OwnedBy(c)) return Errno(EPERM);
      if (seg->nattch == 0) {
        ShmDestroy(*seg);
      } else {
        // Gone once the last attachment goes; the key is free at once.
        seg->perm.mode |= SHM_DEST;
        seg->perm.key = IPC_PRIVATE;
      }
      return 0;
    }
    case SHM_LOCK:
    case SHM_UNLOCK: {
      // Accepted: the Sentry does not swap, so a segment is as good as locked anyway.
      absl::MutexLock l(&mu_);
      auto seg = std::static_pointer_cast<ShmSegment>(shm_.Find(id));
      if (!seg) return Errno(EINVAL);
      if (!seg->perm.OwnedBy(c)) return Errno(EPERM);
      if (cmd == SHM_LOCK) {
        seg->perm.mode |= SHM_LOCKED;
      } else {
        seg->perm.mode &= ~static_cast<uint32_t>(SHM_LOCKED);
      }
      return 0;
    }
    default:
      return Errno(EINVAL);
  }
}

}  // namespace sentry::kernel
