#include "sentry/kernel/mqueue.h"

#include <cstdio>
#include <cstring>

namespace sentry::kernel {
namespace {

constexpr long kHardMsgMax = 65536;         // HARD_MSGMAX
constexpr long kHardMsgSizeMax = 16 << 20;  // HARD_MSGSIZEMAX

}  // namespace

long MessageQueue::count() {
  absl::MutexLock l(&mu_);
  return count_;
}

Result<std::optional<MqNotification>> MessageQueue::Send(Blocker& b, bool nonblock,
                                                         absl::Time deadline,
                                                         std::vector<uint8_t> data, unsigned prio) {
  ScopedWait wait(queue_, b.waiter(), kEventOut);
  for (;;) {
    {
      absl::MutexLock l(&mu_);
      if (count_ < maxmsg_) {
        bytes_ += data.size();
        msgs_[prio].push_back(std::move(data));
        count_++;
        queue_.Notify(kEventIn);
        std::optional<MqNotification> n;
        if (count_ == 1 && receivers_ == 0 && notify_pid_ != 0) {
          n = MqNotification{notify_pid_, notify_signo_, notify_value_};
          notify_pid_ = 0;
        }
        return n;
      }
      if (nonblock) return Errno(EAGAIN);
    }
    SENTRY_TRY(b.Wait(deadline));
  }
}

Result<std::pair<std::vector<uint8_t>, unsigned>> MessageQueue::Receive(Blocker& b, bool nonblock,
                                                                        absl::Time deadline) {
  ScopedWait wait(queue_, b.waiter(), kEventIn);
  bool counted = false;
  for (;;) {
    {
      absl::MutexLock l(&mu_);
      if (count_ > 0) {
        if (counted) receivers_--;
        auto it = msgs_.begin();
        std::pair<std::vector<uint8_t>, unsigned> out{std::move(it->second.front()), it->first};
        it->second.pop_front();
        if (it->second.empty()) msgs_.erase(it);
        count_--;
        bytes_ -= out.first.size();
        queue_.Notify(kEventOut);
        return out;
      }
      if (nonblock) return Errno(EAGAIN);
      if (!counted) receivers_++;
      counted = true;
    }
    Result<void> r = b.Wait(deadline);
    if (!r.ok()) {
      absl::MutexLock l(&mu_);
      receivers_--;
      return r.error();
    }
  }
}

Result<void> MessageQueue::SetNotify(int pid, int signo, uint64_t value) {
  absl::MutexLock l(&mu_);
  if (signo < 0) {
    if (notify_pid_ == pid) notify_pid_ = 0;
    return Ok();
  }
  if (notify_pid_ != 0) return Errno(EBUSY);
  notify_pid_ = pid;
  notify_signo_ = signo;
  notify_value_ = value;
  return Ok();
}

std::string MessageQueue::Info() {
  absl::MutexLock l(&mu_);
  char buf[128];
  snprintf(buf, sizeof(buf), "QSIZE:%-10lu NOTIFY:%-5d SIGNO:%-5d NOTIFY_PID:%-6d\n",
           static_cast<unsigned long>(bytes_), notify_pid_ != 0 && notify_signo_ == 0 ? 1 : 0,
           notify_pid_ != 0 ? notify_signo_ : 0, notify_pid_);
  return buf;
}

EventMask MessageQueue::Readiness() {
  absl::MutexLock l(&mu_);
  EventMask m = 0;
  if (count_ > 0) m |= kEventIn | kEventRdNorm;
  if (count_ < maxmsg_) m |= kEventOut | kEventWrNorm;
  return m;
}

Result<size_t> MqFile::Read(Blocker& b, std::span<uint8_t> dst) {
  (void)b;
  std::string info = q_->Info();
  absl::MutexLock l(&mu_);
  if (offset_ >= info.size()) return size_t{0};
  size_t n = std::min(dst.size(), info.size() - offset_);
  memcpy(dst.data(), info.data() + offset_, n);
  offset_ += n;
  return n;
}

Result<vfs::FileRef> MqNamespace::Open(const OpenRequest& r) {
  if (r.name.empty() || r.name.find('/') != std::string::npos || r.name == "." || r.name == "..") {
    return Errno(EACCES);
  }
  if (r.name.size() > 255) return Errno(ENAMETOOLONG);
  int acc = r.flags & O_ACCMODE;
  if (acc == (O_WRONLY | O_RDWR)) return Errno(EINVAL);
  absl::MutexLock l(&mu_);
  auto it = queues_.find(r.name);
  std::shared_ptr<MessageQueue> q;
  if (it != queues_.end()) {
    if ((r.flags & O_CREAT) && (r.flags & O_EXCL)) return Errno(EEXIST);
    q = it->second;
    uint32_t want = acc == O_RDONLY ? 4 : acc == O_WRONLY ? 2 : 6;
    uint32_t bits = q->mode();
    if (r.uid == q->uid()) {
      bits >>= 6;
    } else if (r.gid == q->gid() ||
               std::find(r.groups.begin(), r.groups.end(), q->gid()) != r.groups.end()) {
      bits >>= 3;
    }
    if ((want & ~bits & 7) && !((r.caps >> CAP_DAC_OVERRIDE) & 1)) return Errno(EACCES);
  } else {
    if (!(r.flags & O_CREAT)) return Errno(ENOENT);
    long maxmsg = std::min(msg_default, msg_max), msgsize = std::min(msgsize_default, msgsize_max);
    if (r.has_attr) {
      if (r.maxmsg <= 0 || r.msgsize <= 0) return Errno(EINVAL);
      // Past the sysctl limits takes CAP_SYS_RESOURCE.
      bool privileged = (r.caps >> CAP_SYS_RESOURCE) & 1;
      if (r.maxmsg > (privileged ? kHardMsgMax : msg_max) ||
          r.msgsize > (privileged ? kHardMsgSizeMax : msgsize_max)) {
        return Errno(EINVAL);
      }
      maxmsg = r.maxmsg;
      msgsize = r.msgsize;
    }
    q = std::make_shared<MessageQueue>(maxmsg, msgsize, r.uid, r.gid, r.mode & 0777);
    queues_[r.name] = q;
  }
  int flags = (r.flags & (O_ACCMODE | O_NONBLOCK)) | O_LARGEFILE;
  return vfs::FileRef(std::make_shared<MqFile>(std::move(q), r.name, flags));
}

Result<void> MqNamespace::Unlink(const std::string& name) {
  if (name.empty() || name.find('/') != std::string::npos) return Errno(EACCES);
  if (name.size() > 255) return Errno(ENAMETOOLONG);
  absl::MutexLock l(&mu_);
  if (queues_.erase(name) == 0) return Errno(ENOENT);
  return Ok();
}

}  // namespace sentry::kernel
