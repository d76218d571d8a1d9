// System V IPC: shared memory segments, semaphore sets and message queues, in one IPC
// namespace per sandbox (Kernel::ipc()).
//
// A shared memory segment is a file on the hidden tmpfs that memfds use; shmat maps it
// MAP_SHARED through the same path as mmap of a memfd, so the data lives in one host memfd
// every attaching stub maps, fork inherits attachments, and futex keys are per segment. The
// segment counts its attachments through mm::MappingObserver, which also drives the deferred
// destruction after IPC_RMID.
//
// Lock order: MemoryManager::mu_ -> IpcNamespace::mu_ -> WaitQueue::mu_. Kernel::mu_ is
// never held with mu_: callers' credentials are read before, signals for mq_notify are sent
// after, and a MemoryManager (whose segments take mu_ in Closed) is dropped outside it.
#pragma once

#include <linux/capability.h>
#include <sys/sem.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "sentry/base/errno.h"
#include "sentry/base/guest_addr.h"
#include "sentry/base/wait_queue.h"
#include "sentry/kernel/mqueue.h"
#include "sentry/mm/memory_manager.h"
#include "vfs/file.h"

namespace sentry::kernel {

class Task;
class IpcNamespace;

// The limits this namespace enforces (Linux's defaults; /proc/sys/kernel shows them).
struct IpcLimits {
  uint64_t shmmax = UINT64_MAX - (uint64_t{1} << 24);
  uint64_t shmall = UINT64_MAX - (uint64_t{1} << 24);  // pages
  int shmmni = 4096;
  int semmsl = 32000, semmns = 1024000000, semopm = 500, semmni = 32000;
  int msgmax = 8192, msgmnb = 16384, msgmni = 32000;
};

// Who is calling: the effective ids decide permissions, the tgid is recorded as *pid.
struct IpcCaller {
  uint32_t uid = 0, gid = 0;
  std::vector<uint32_t> groups;
  int pid = 0;
  uint64_t caps = ~uint64_t{0};  // effective capabilities
  bool InGroup(uint32_t g) const;
  bool Capable(int cap) const { return (caps >> cap) & 1; }
};
IpcCaller CallerOf(Task& t);

// kern_ipc_perm.
struct IpcPerm {
  int32_t key = 0;
  uint32_t uid = 0, gid = 0, cuid = 0, cgid = 0;
  uint32_t mode = 0;
  uint16_t seq = 0;
  // ipcperms(): may `c` access with `flag`'s rwx bits (0444 read, 0222 write)?
  bool Allows(const IpcCaller& c, int flag) const;
  // The owner or creator, or a holder of CAP_SYS_ADMIN: who may IPC_SET and IPC_RMID.
  bool OwnedBy(const IpcCaller& c) const {
    return c.uid == uid || c.uid == cuid || c.Capable(CAP_SYS_ADMIN);
  }
};

struct IpcObject {
  virtual ~IpcObject() = default;
  IpcPerm perm;
  int id = 0;
};

// The objects of one kind by id. An id is index + seq * 32768, the index the lowest free one.
// Guarded by IpcNamespace::mu_.
class IpcRegistry {
 public:
  static constexpr int kMaxIndex = 32768;
  // Gives `o` an index and id. ENOSPC past `limit` objects.
  Result<int> Add(std::shared_ptr<IpcObject> o, int limit);
  std::shared_ptr<IpcObject> Find(int id) const;
  std::shared_ptr<IpcObject> AtIndex(int index) const;
  std::shared_ptr<IpcObject> FindKey(int32_t key) const;
  void Remove(int id);
  int MaxIndex() const { return objects_.empty() ? 0 : objects_.rbegin()->first; }
  size_t size() const { return objects_.size(); }
  const std::map<int, std::shared_ptr<IpcObject>>& objects() const { return objects_; }

 private:
  std::map<int, std::shared_ptr<IpcObject>> objects_;  // by index
  uint16_t next_seq_ = 0;
};

struct ShmSegment;
struct SemSet;
struct MsgQueue;

class IpcNamespace {
 public:
  IpcLimits limits;
  MqNamespace mq;  // POSIX message queues (mqueue.h)

  // --- shm (ipc_shm.cc) ---
  Result<int> ShmGet(Task& t, int32_t key, uint64_t size, int flags);
  Result<uint64_t> ShmAt(Task& t, int id, uint64_t addr, int flags);
  Result<uint64_t> ShmCtl(Task& t, int id, int cmd, GuestAddr buf);

  // --- semaphores (ipc_sem.cc) ---
  Result<int> SemGet(Task& t, int32_t key, int nsems, int flags);
  // `sops` is struct sembuf[]; `deadline` infinite for semop.
  Result<void> SemOp(Task& t, int id, std::vector<struct sembuf> sops, absl::Time deadline);
  Result<uint64_t> SemCtl(Task& t, int id, int num, int cmd, uint64_t arg);
  // exit_sem: applies and forgets the SEM_UNDO adjustments of the exiting process `owner`.
  void ExitSem(const void* owner, int pid);

  // --- message queues (ipc_msg.cc) ---
  Result<int> MsgGet(Task& t, int32_t key, int flags);
  Result<void> MsgSnd(Task& t, int id, long type, std::vector<uint8_t> text, int flags);
  // Returns the message's type and text (truncated to `max` with MSG_NOERROR).
  Result<std::pair<long, std::vector<uint8_t>>> MsgRcv(Task& t, int id, size_t max, long type,
                                                       int flags);
  Result<uint64_t> MsgCtl(Task& t, int id, int cmd, GuestAddr buf);

 private:
  friend struct ShmSegment;
  // The common part of shmget/semget/msgget (ipcget): the id of the object under `key`, after
  // `check` (the kind's own checks, such as the size); or a new object from `make`.
  template <typename Make, typename Check>
  Result<int> Get(IpcRegistry& reg, const IpcCaller& c, int32_t key, int flags, int limit,
                  Make make, Check check) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ShmUnpin(ShmSegment& seg) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ShmDestroy(ShmSegment& seg) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SemUpdate(SemSet& set) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex mu_;
  IpcRegistry shm_ ABSL_GUARDED_BY(mu_);
  IpcRegistry sem_ ABSL_GUARDED_BY(mu_);
  IpcRegistry msg_ ABSL_GUARDED_BY(mu_);
  uint64_t shm_pages_ ABSL_GUARDED_BY(mu_) = 0;  // of all segments, against shmall
  int64_t sem_count_ ABSL_GUARDED_BY(mu_) = 0;   // semaphores in all sets, against semmns
  int64_t msg_count_ ABSL_GUARDED_BY(mu_) = 0;   // messages queued, for MSG_INFO
  int64_t msg_bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace sentry::kernel
