// System V message queues: msgget, msgsnd, msgrcv, msgctl.
#include <climits>

#include "sentry/kernel/ipc_impl.h"
#include "sentry/kernel/kernel.h"

#ifndef MSG_COPY
#define MSG_COPY 040000
#endif

namespace sentry::kernel {
namespace {

constexpr int kMsgSsz = 16;      // MSGSSZ
constexpr int kMsgSeg = 0xffff;  // MSGSEG

// The message msgrcv takes (find_msg): the first of `type` (0: any; MSG_EXCEPT: any other),
// the first of the lowest type <= -type for a negative one, or the type-th for MSG_COPY.
std::list<MsgQueue::Message>::iterator FindMessage(MsgQueue& q, long type, int flags) {
  auto& msgs = q.messages;
  if (flags & MSG_COPY) {
    if (type < 0 || static_cast<size_t>(type) >= msgs.size()) return msgs.end();
    return std::next(msgs.begin(), type);
  }
  if (type < 0) {
    long limit = type == LONG_MIN ? LONG_MAX : -type;
    auto best = msgs.end();
    for (auto it = msgs.begin(); it != msgs.end(); ++it) {
      if (it->type <= limit && (best == msgs.end() || it->type < best->type)) best = it;
    }
    return best;
  }
  for (auto it = msgs.begin(); it != msgs.end(); ++it) {
    if (type == 0 || ((flags & MSG_EXCEPT) ? it->type != type : it->type == type)) return it;
  }
  return msgs.end();
}

}  // namespace

Result<int> IpcNamespace::MsgGet(Task& t, int32_t key, int flags) {
  IpcCaller c = CallerOf(t);
  absl::MutexLock l(&mu_);
  auto make = [&]() -> Result<std::shared_ptr<IpcObject>> {
    auto q = std::make_shared<MsgQueue>();
    q->qbytes = static_cast<uint64_t>(limits.msgmnb);
    q->ctime = IpcNow();
    return std::shared_ptr<IpcObject>(std::move(q));
  };
  auto check = [](IpcObject&) -> Result<void> { return Ok(); };
  return Get(msg_, c, key, flags, limits.msgmni, make, check);
}

Result<void> IpcNamespace::MsgSnd(Task& t, int id, long type, std::vector<uint8_t> text,
                                  int flags) {
  IpcCaller c = CallerOf(t);
  std::shared_ptr<MsgQueue> q;
  {
    absl::MutexLock l(&mu_);
    q = std::static_pointer_cast<MsgQueue>(msg_.Find(id));
    if (!q) return Errno(EINVAL);
    if (!q->perm.Allows(c, 0222)) return Errno(EACCES);
  }
  ScopedWait wait(q->queue, t.waiter(), kEventOut);
  for (;;) {
    {
      absl::MutexLock l(&mu_);
      if (q->removed) return Errno(EIDRM);
      if (q->cbytes + text.size() <= q->qbytes && q->messages.size() + 1 <= q->qbytes) {
        q->cbytes += text.size();
        msg_count_++;
        msg_bytes_ += static_cast<int64_t>(text.size());
        q->messages.push_back({type, std::move(text)});
        q->lspid = c.pid;
        q->stime = IpcNow();
        q->queue.Notify(kEventIn);
        return Ok();
      }
      if (flags & IPC_NOWAIT) return Errno(EAGAIN);
    }
    Result<void> r = t.Wait();
    if (!r.ok()) return Errno(kERESTARTNOHAND);  // EINTR if a handler runs
  }
}

Result<std::pair<long, std::vector<uint8_t>>> IpcNamespace::MsgRcv(Task& t, int id, size_t max,
                                                                   long type, int flags) {
  if ((flags & MSG_COPY) && (!(flags & IPC_NOWAIT) || (flags & MSG_EXCEPT))) {
    return Errno(EINVAL);
  }
  IpcCaller c = CallerOf(t);
  std::shared_ptr<MsgQueue> q;
  {
    absl::MutexLock l(&mu_);
    q = std::static_pointer_cast<MsgQueue>(msg_.Find(id));
    if (!q) return Errno(EINVAL);
    if (!q->perm.Allows(c, 0444)) return Errno(EACCES);
  }
  ScopedWait wait(q->queue, t.waiter(), kEventIn);
  for (;;) {
    {
      absl::MutexLock l(&mu_);
      if (q->removed) return Errno(EIDRM);
      auto it = FindMessage(*q, type, flags);
      if (it != q->messages.end()) {
        if (it->text.size() > max && !(flags & MSG_NOERROR)) return Errno(E2BIG);
        std::pair<long, std::vector<uint8_t>> out{it->type, it->text};
        if (out.second.size() > max) out.second.resize(max);
        if (!(flags & MSG_COPY)) {
          q->cbytes -= it->text.size();
          msg_count_--;
          msg_bytes_ -= static_cast<int64_t>(it->text.size());
          q->messages.erase(it);
          q->lrpid = c.pid;
          q->rtime = IpcNow();
          q->queue.Notify(kEventOut);
        }
        return out;
      }
      if (flags & IPC_NOWAIT) return Errno(ENOMSG);
    }
    Result<void> r = t.Wait();
    if (!r.ok()) return Errno(kERESTARTNOHAND);
  }
}

Result<uint64_t> IpcNamespace::MsgCtl(Task& t, int id, int cmd, GuestAddr buf) {
  if (cmd < 0 || id < 0) return Errno(EINVAL);
  IpcCaller c = CallerOf(t);
  switch (cmd) {
    case IPC_INFO:
    case MSG_INFO: {
      struct msginfo info {};
      info.msgmni = limits.msgmni;
      info.msgmax = limits.msgmax;
      info.msgmnb = limits.msgmnb;
      info.msgssz = kMsgSsz;
      info.msgseg = kMsgSeg;
      int max;
      {
        absl::MutexLock l(&mu_);
        bool live = cmd == MSG_INFO;
        info.msgpool = live ? static_cast<int>(msg_.size())
                            : static_cast<int>(int64_t{limits.msgmni} * limits.msgmnb / 1024);
        info.msgmap =
            live ? static_cast<int>(std::min<int64_t>(msg_count_, INT_MAX)) : limits.msgmnb;
        info.msgtql =
            live ? static_cast<int>(std::min<int64_t>(msg_bytes_, INT_MAX)) : limits.msgmnb;
        max = msg_.MaxIndex();
      }
      SENTRY_TRY(t.CopyOut(buf, info));
      return max;
    }
    case IPC_STAT:
    case MSG_STAT:
    case MSG_STAT_ANY: {
      struct msqid_ds ds {};
      int ret;
      {
        absl::MutexLock l(&mu_);
        auto q =
            std::static_pointer_cast<MsgQueue>(cmd == IPC_STAT ? msg_.Find(id) : msg_.AtIndex(id));
        if (!q) return Errno(EINVAL);
        if (cmd != MSG_STAT_ANY && !q->perm.Allows(c, 0444)) return Errno(EACCES);
        ds.msg_perm = ToAbi(q->perm);
        ds.msg_stime = q->stime;
        ds.msg_rtime = q->rtime;
        ds.msg_ctime = q->ctime;
        ds.__msg_cbytes = q->cbytes;
        ds.msg_qnum = q->messages.size();
        ds.msg_qbytes = q->qbytes;
        ds.msg_lspid = q->lspid;
        ds.msg_lrpid = q->lrpid;
        ret = cmd == IPC_STAT ? 0 : q->id;
      }
      // The pids stored are global; the caller sees its PID namespace's numbers (0 for a
      // process it cannot see), as Linux's pid_vnr.
      ds.msg_lspid = t.LocalPid(ds.msg_lspid);
      ds.msg_lrpid = t.LocalPid(ds.msg_lrpid);
      SENTRY_TRY(t.CopyOut(buf, ds));
      return ret;
    }
    case IPC_SET: {
      auto ds = SENTRY_TRY(t.CopyIn<struct msqid_ds>(buf));
      absl::MutexLock l(&mu_);
      auto q = std::static_pointer_cast<MsgQueue>(msg_.Find(id));
      if (!q) return Errno(EINVAL);
      if (!q->perm.OwnedBy(c)) return Errno(EPERM);
      // Raising msg_qbytes past msgmnb takes CAP_SYS_RESOURCE.
      if (ds.msg_qbytes > static_cast<uint64_t>(limits.msgmnb) && !c.Capable(CAP_SYS_RESOURCE)) {
        return Errno(EPERM);
      }
      q->qbytes = ds.msg_qbytes;
      SetPerm(q->perm, ds.msg_perm);
      q->ctime = IpcNow();
      q->queue.Notify(kEventOut);  // senders may fit now
      return 0;
    }
    case IPC_RMID: {
      absl::MutexLock l(&mu_);
      auto q = std::static_pointer_cast<MsgQueue>(msg_.Find(id));
      if (!q) return Errno(EINVAL);
      if (!q->perm.OwnedBy(c)) return Errno(EPERM);
      q->removed = true;
      msg_count_ -= static_cast<int64_t>(q->messages.size());
      msg_bytes_ -= static_cast<int64_t>(q->cbytes);
      q->messages.clear();
      q->queue.Notify(kEventIn | kEventOut);
      msg_.Remove(id);
      return 0;
    }
    default:
      return Errno(EINVAL);
  }
}

}  // namespace sentry::kernel
