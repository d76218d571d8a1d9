// The objects behind System V IPC ids, and what ipc_{shm,sem,msg}.cc share. Private to them.
#pragma once

#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>

#include <ctime>
#include <list>

#include "sentry/kernel/ipc.h"

namespace sentry::kernel {

// The x86_64 kernel structures have glibc's layout.
static_assert(sizeof(struct ipc_perm) == 48);
static_assert(sizeof(struct shmid_ds) == 112);
static_assert(sizeof(struct semid_ds) == 104);
static_assert(sizeof(struct msqid_ds) == 120);

inline int64_t IpcNow() { return static_cast<int64_t>(time(nullptr)); }

inline struct ipc_perm ToAbi(const IpcPerm& p) {
  struct ipc_perm a {};
  a.__key = p.key;
  a.uid = p.uid;
  a.gid = p.gid;
  a.cuid = p.cuid;
  a.cgid = p.cgid;
  a.mode = static_cast<unsigned short>(p.mode);
  a.__seq = p.seq;
  return a;
}

// IPC_SET: the owner and permission bits come from the caller.
inline void SetPerm(IpcPerm& p, const struct ipc_perm& a) {
  p.uid = a.uid;
  p.gid = a.gid;
  p.mode = (p.mode & ~0777u) | (a.mode & 0777u);
}

struct ShmSegment final : IpcObject, mm::MappingObserver {
  IpcNamespace* ns = nullptr;
  uint64_t size = 0;
  int cpid = 0, lpid = 0;
  int64_t atime = 0, dtime = 0, ctime = 0;
  uint64_t nattch = 0;  // VMAs mapping it, and shmat calls under way
  vfs::FileRef file;    // on the memfds' hidden tmpfs
  dev_t dev = 0;
  uint64_t ino = 0;

  void Opened() override;
  void Closed() override;
  uint64_t DetachSize() const override { return size; }
};

// One task sleeping in semop: the operations it waits to do as a whole.
struct SemWaiter {
  const void* owner;  // the process, for SEM_UNDO
  int pid;
  std::vector<struct sembuf> sops;
  size_t blocking = 0;  // the operation it waits on (GETNCNT, GETZCNT)
  int status = -1;      // -1 while waiting, then 0 or an errno
  Waiter* waiter;
};

struct SemSet final : IpcObject {
  struct Sem {
    int val = 0;
    int pid = 0;
  };
  std::vector<Sem> sems;
  int64_t otime = 0, ctime = 0;
  std::list<SemWaiter*> waiters;  // in arrival order
  // SEM_UNDO adjustments by process (the ThreadGroup), applied when it exits.
  std::map<const void*, std::vector<int>> undo;
};

struct MsgQueue final : IpcObject {
  struct Message {
    long type;
    std::vector<uint8_t> text;
  };
  std::list<Message> messages;
  uint64_t cbytes = 0, qbytes = 0;
  int lspid = 0, lrpid = 0;
  int64_t stime = 0, rtime = 0, ctime = 0;
  bool removed = false;
  WaitQueue queue;  // kEventIn: a message came; kEventOut: room; both on removal
};

template <typename Make, typename Check>
Result<int> IpcNamespace::Get(IpcRegistry& reg, const IpcCaller& c, int32_t key, int flags,
                              int limit, Make make, Check check) {
  if (key != IPC_PRIVATE) {
    if (std::shared_ptr<IpcObject> o = reg.FindKey(key)) {
      if ((flags & IPC_CREAT) && (flags & IPC_EXCL)) return Errno(EEXIST);
      SENTRY_TRY(check(*o));
      if (!o->perm.Allows(c, flags)) return Errno(EACCES);
      return o->id;
    }
    if (!(flags & IPC_CREAT)) return Errno(ENOENT);
  }
  if (static_cast<int>(reg.size()) >= limit) return Errno(ENOSPC);
  std::shared_ptr<IpcObject> o = SENTRY_TRY(make());
  o->perm.key = key;
  o->perm.uid = o->perm.cuid = c.uid;
  o->perm.gid = o->perm.cgid = c.gid;
  o->perm.mode = flags & 0777;
  return reg.Add(std::move(o), limit);
}

}  // namespace sentry::kernel
