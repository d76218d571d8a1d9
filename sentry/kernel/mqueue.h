// POSIX message queues (mq_overview(7)): named queues of prioritised messages in the sandbox's
// IPC namespace, opened as Sentry file descriptions (pollable, close-on-exec as on Linux).
//
// Lock order: MqNamespace::mu_ -> MessageQueue::mu_ -> WaitQueue::mu_.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "sentry/base/errno.h"
#include "sentry/base/wait_queue.h"
#include "vfs/file.h"

namespace sentry::kernel {

// A registered mq_notify(3) that a send triggered: the caller sends the signal.
struct MqNotification {
  int pid = 0;    // the registered process
  int signo = 0;  // 0 for SIGEV_NONE
  uint64_t value = 0;
};

class MessageQueue {
 public:
  MessageQueue(long maxmsg, long msgsize, uint32_t uid, uint32_t gid, uint32_t mode)
      : maxmsg_(maxmsg), msgsize_(msgsize), uid_(uid), gid_(gid), mode_(mode) {}

  long maxmsg() const { return maxmsg_; }
  long msgsize() const { return msgsize_; }
  uint32_t uid() const { return uid_; }
  uint32_t gid() const { return gid_; }
  uint32_t mode() const { return mode_; }
  long count();

  // Sleeps while full (unless `nonblock`: EAGAIN) until `deadline` (ETIMEDOUT). A send that
  // makes an empty queue non-empty with nobody waiting to receive fires the registration.
  Result<std::optional<MqNotification>> Send(Blocker& b, bool nonblock, absl::Time deadline,
                                             std::vector<uint8_t> data, unsigned prio);
  // The oldest message of the highest priority.
  Result<std::pair<std::vector<uint8_t>, unsigned>> Receive(Blocker& b, bool nonblock,
                                                            absl::Time deadline);
  // mq_notify: registers `pid` (EBUSY if another process is), or with signo < 0 removes
  // `pid`'s registration.
  Result<void> SetNotify(int pid, int signo, uint64_t value);
  std::string Info();  // what read(2) of the queue shows
  EventMask Readiness();
  WaitQueue& queue() { return queue_; }

 private:
  const long maxmsg_, msgsize_;
  const uint32_t uid_, gid_, mode_;
  absl::Mutex mu_;
  std::map<unsigned, std::deque<std::vector<uint8_t>>, std::greater<>> msgs_ ABSL_GUARDED_BY(mu_);
  long count_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  int receivers_ ABSL_GUARDED_BY(mu_) = 0;  // sleeping in Receive
  int notify_pid_ ABSL_GUARDED_BY(mu_) = 0;
  int notify_signo_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t notify_value_ ABSL_GUARDED_BY(mu_) = 0;
  WaitQueue queue_;  // kEventIn: a message came; kEventOut: room
};

// An open queue.
class MqFile final : public vfs::FileDescription {
 public:
  MqFile(std::shared_ptr<MessageQueue> q, std::string name, int flags)
      : FileDescription(flags), q_(std::move(q)), name_(std::move(name)) {}
  MessageQueue& mq() { return *q_; }
  Result<size_t> Read(Blocker& b, std::span<uint8_t> dst) override;
  EventMask Readiness(EventMask mask) override { return q_->Readiness() & mask; }
  WaitQueue* Queue() override { return &q_->queue(); }
  std::string Name() const override { return "/" + name_; }

 private:
  const std::shared_ptr<MessageQueue> q_;
  const std::string name_;
};

// The names.
class MqNamespace {
 public:
  // Limits (/proc/sys/fs/mqueue): the defaults and the most an unprivileged caller may ask.
  long msg_default = 10, msg_max = 10, msgsize_default = 8192, msgsize_max = 8192;

  struct OpenRequest {
    std::string name;
    int flags;
    uint32_t mode;  // umask applied
    bool has_attr;
    long maxmsg, msgsize;
    uint32_t uid, gid;
    std::vector<uint32_t> groups;
    uint64_t caps;  // effective capabilities
  };
  Result<vfs::FileRef> Open(const OpenRequest& r);
  Result<void> Unlink(const std::string& name);

 private:
  absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<MessageQueue>> queues_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sentry::kernel
