#include "vfs/inotify.h"

#include <sys/ioctl.h>

#include <atomic>
#include <cstring>
#include <deque>
#include <map>

#include "vfs/anon_file.h"
#include "vfs/vfs.h"

namespace sentry::vfs {
namespace {

std::atomic<int64_t> g_watches{0};  // live watches across all instances
std::atomic<uint32_t> g_next_cookie{1};

constexpr size_t kMaxQueuedEvents = 16384;  // Linux's default max_queued_events
// Events about the watched inode itself that never carry IN_ISDIR (checked natively).
constexpr uint32_t kNoIsDir = IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED;

struct Event {
  int wd;
  uint32_t mask;
  uint32_t cookie;
  std::string name;

  // The name NUL-terminated and padded to a multiple of sizeof(inotify_event), as Linux.
  uint32_t PaddedLen() const {
    constexpr size_t kAlign = sizeof(struct inotify_event);
    return name.empty() ? 0 : static_cast<uint32_t>((name.size() + kAlign) / kAlign * kAlign);
  }
  size_t Size() const { return sizeof(struct inotify_event) + PaddedLen(); }
  bool operator==(const Event&) const = default;
};

}  // namespace

class InotifyFile final : public AnonFile {
 public:
  explicit InotifyFile(int flags) : AnonFile(flags, "inotify") {}
  ~InotifyFile() override;

  Result<size_t> Read(Blocker& b, std::span<uint8_t> dst) override;
  EventMask Readiness(EventMask mask) override;
  WaitQueue* Queue() override { return &queue_; }
  bool SignalsAsync() const override { return true; }
  Result<uint64_t> Ioctl(Blocker& b, uint64_t cmd, uint64_t arg) override;

  Result<int> Add(const std::shared_ptr<InotifyFile>& self, const InodeRef& inode,
                  uint32_t mask);
  Result<void> Remove(int wd);
  // Queues an event for watch `wd` if it is still on `inode` and wants it.
  void Report(Inode& inode, int wd, uint32_t mask, const std::string& name, uint32_t cookie);
  // `inode` is gone: IN_DELETE_SELF (if asked for), then the watch ends.
  void Gone(Inode& inode, int wd);

 private:
  struct Watch {
    InodeRef inode;  // a watch keeps its inode alive, as on Linux
    uint32_t mask;
  };
  void PushLocked(Event e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(ev_mu_);
  // Ends a watch: off its inode's list, IN_IGNORED queued.
  void EndLocked(std::map<int, Watch>::iterator it) ABSL_EXCLUSIVE_LOCKS_REQUIRED(ev_mu_);

  WaitQueue queue_;
  absl::Mutex ev_mu_;
  std::map<int, Watch> watches_ ABSL_GUARDED_BY(ev_mu_);
  std::map<const Inode*, int> wd_of_ ABSL_GUARDED_BY(ev_mu_);
  int next_wd_ ABSL_GUARDED_BY(ev_mu_) = 1;  // never reused, as Linux's cyclic idr
  std::deque<Event> events_ ABSL_GUARDED_BY(ev_mu_);
  size_t bytes_ ABSL_GUARDED_BY(ev_mu_) = 0;  // FIONREAD
};

namespace {

// Drops `owner`'s entry for `wd` from `inode`'s list.
void Unlist(Inode& inode, const InotifyFile* owner, int wd) {
  InodeWatches* iw = inode.watches_if_any();
  if (!iw) return;
  absl::MutexLock l(&iw->mu_);
  std::erase_if(iw->entries_, [&](const InodeWatches::Entry& e) {
    return e.wd == wd && e.id == owner;
  });
}

std::vector<InodeWatches::Entry> EntriesOf(Inode& inode) {
  InodeWatches* iw = inode.watches_if_any();
  if (!iw) return {};
  absl::MutexLock l(&iw->mu_);
  return iw->entries_;
}

}  // namespace

InotifyFile::~InotifyFile() {
  absl::MutexLock l(&ev_mu_);
  for (auto& [wd, w] : watches_) Unlist(*w.inode, this, wd);
  g_watches.fetch_sub(static_cast<int64_t>(watches_.size()));
}

Result<size_t> InotifyFile::Read(Blocker& b, std::span<uint8_t> dst) {
  bool nonblock = NonBlocking();
  ScopedWait wait(queue_, b.waiter(), kEventIn);
  for (;;) {
    {
      absl::MutexLock l(&ev_mu_);
      if (!events_.empty()) {
        if (events_.front().Size() > dst.size()) return Errno(EINVAL);
        size_t used = 0;
        while (!events_.empty() && used + events_.front().Size() <= dst.size()) {
          const Event& e = events_.front();
          struct inotify_event h {};
          h.wd = e.wd;
          h.mask = e.mask;
          h.cookie = e.cookie;
          h.len = e.PaddedLen();
          uint8_t* at = dst.data() + used;
          memcpy(at, &h, sizeof(h));
          memset(at + sizeof(h), 0, h.len);
          memcpy(at + sizeof(h), e.name.data(), e.name.size());
          used += e.Size();
          bytes_ -= e.Size();
          events_.pop_front();
        }
        return used;
      }
      if (nonblock) return Errno(EAGAIN);
    }
    SENTRY_TRY(b.Wait());
  }
}

EventMask InotifyFile::Readiness(EventMask mask) {
  absl::MutexLock l(&ev_mu_);
  return events_.empty() ? 0 : (mask & (kEventIn | kEventRdNorm));
}

Result<uint64_t> InotifyFile::Ioctl(Blocker&, uint64_t cmd, uint64_t) {
  if (cmd != FIONREAD) return Errno(ENOTTY);
  absl::MutexLock l(&ev_mu_);
  return static_cast<uint64_t>(bytes_);
}

Result<int> InotifyFile::Add(const std::shared_ptr<InotifyFile>& self, const InodeRef& inode,
                             uint32_t mask) {
  constexpr uint32_t kHow = IN_MASK_ADD | IN_MASK_CREATE;
  absl::MutexLock l(&ev_mu_);
  if (auto it = wd_of_.find(inode.get()); it != wd_of_.end()) {
    if (mask & IN_MASK_CREATE) return Errno(EEXIST);
    Watch& w = watches_[it->second];
    w.mask = ((mask & IN_MASK_ADD) ? w.mask | mask : mask) & ~kHow;
    return it->second;
  }
  int wd = next_wd_++;
  watches_[wd] = {inode, mask & ~kHow};
  wd_of_[inode.get()] = wd;
  InodeWatches& iw = inode->watches();
  {
    absl::MutexLock il(&iw.mu_);
    iw.entries_.push_back({self, self.get(), wd});
  }
  g_watches.fetch_add(1);
  return wd;
}

Result<void> InotifyFile::Remove(int wd) {
  absl::MutexLock l(&ev_mu_);
  auto it = watches_.find(wd);
  if (it == watches_.end()) return Errno(EINVAL);
  EndLocked(it);
  return Ok();
}

void InotifyFile::Report(Inode& inode, int wd, uint32_t mask, const std::string& name,
                         uint32_t cookie) {
  absl::MutexLock l(&ev_mu_);
  auto it = watches_.find(wd);
  if (it == watches_.end() || it->second.inode.get() != &inode) return;
  uint32_t want = it->second.mask;
  if (!(mask & want & IN_ALL_EVENTS)) return;
  PushLocked({wd, mask, cookie, name});
  if (want & IN_ONESHOT) EndLocked(it);
}

void InotifyFile::Gone(Inode& inode, int wd) {
  absl::MutexLock l(&ev_mu_);
  auto it = watches_.find(wd);
  if (it == watches_.end() || it->second.inode.get() != &inode) return;
  if (it->second.mask & IN_DELETE_SELF) PushLocked({wd, IN_DELETE_SELF, 0, ""});
  EndLocked(it);
}

void InotifyFile::PushLocked(Event e) {
  // An event identical to the last one queued is merged into it.
  if (!events_.empty() && events_.back() == e) return;
  if (events_.size() >= kMaxQueuedEvents) {
    if (events_.back().mask == IN_Q_OVERFLOW) return;
    e = {-1, IN_Q_OVERFLOW, 0, ""};
  }
  bytes_ += e.Size();
  events_.push_back(std::move(e));
  queue_.Notify(kEventIn);
}

void InotifyFile::EndLocked(std::map<int, Watch>::iterator it) {
  int wd = it->first;
  InodeRef inode = std::move(it->second.inode);
  watches_.erase(it);
  wd_of_.erase(inode.get());
  Unlist(*inode, this, wd);
  g_watches.fetch_sub(1);
  PushLocked({wd, IN_IGNORED, 0, ""});
}

bool InotifyActive() { return g_watches.load(std::memory_order_relaxed) > 0; }

void NotifyInode(Inode& inode, uint32_t mask, uint32_t cookie) {
  if (!InotifyActive()) return;
  if (inode.IsDir() && !(mask & kNoIsDir)) mask |= IN_ISDIR;
  for (const auto& e : EntriesOf(inode)) {
    if (auto in = e.owner.lock()) in->Report(inode, e.wd, mask, "", cookie);
  }
}

void NotifyChild(Inode& dir, uint32_t mask, const std::string& name, bool is_dir,
                 uint32_t cookie) {
  if (!InotifyActive()) return;
  if (is_dir) mask |= IN_ISDIR;
  for (const auto& e : EntriesOf(dir)) {
    if (auto in = e.owner.lock()) in->Report(dir, e.wd, mask, name, cookie);
  }
}

void MaybeDeleteSelf(Inode& inode) {
  if (!InotifyActive() || !inode.watches_if_any()) return;
  if (inode.open_files().load() > 0) return;
  auto st = inode.Stat();
  if (!st.ok() || st->st_nlink > 0) return;
  for (const auto& e : EntriesOf(inode)) {
    if (auto in = e.owner.lock()) in->Gone(inode, e.wd);
  }
}

uint32_t NewMoveCookie() { return g_next_cookie.fetch_add(1); }

void NotifyFile(const FileDescription& f, uint32_t mask) {
  if (!InotifyActive() || !f.dentry() || !f.mount()) return;
  f.mount()->vfs()->NotifyDentry(f.dentry(), mask);
}

Result<FileRef> NewInotify(int flags) {
  return FileRef(std::make_shared<InotifyFile>(O_RDONLY | (flags & O_NONBLOCK)));
}

bool IsInotify(const FileDescription& f) { return dynamic_cast<const InotifyFile*>(&f); }

Result<int> AddWatch(const FileRef& f, const InodeRef& inode, uint32_t mask) {
  auto in = std::dynamic_pointer_cast<InotifyFile>(f);
  if (!in) return Errno(EINVAL);
  return in->Add(in, inode, mask);
}

Result<void> RemoveWatch(const FileRef& f, int wd) {
  auto* in = dynamic_cast<InotifyFile*>(f.get());
  if (!in) return Errno(EINVAL);
  return in->Remove(wd);
}

}  // namespace sentry::vfs
