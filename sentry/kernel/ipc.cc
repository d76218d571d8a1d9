// The parts of System V IPC the three kinds share: ids, keys, permissions.
#include "sentry/kernel/ipc.h"

#include <sys/ipc.h>

#include "sentry/kernel/kernel.h"

namespace sentry::kernel {

bool IpcCaller::InGroup(uint32_t g) const {
  if (g == gid) return true;
  for (uint32_t x : groups) {
    if (x == g) return true;
  }
  return false;
}

IpcCaller CallerOf(Task& t) {
  absl::MutexLock l(&t.kernel().mu());
  const Credentials& c = t.tg().creds;
  return IpcCaller{c.euid, c.egid, c.groups, t.tg().tgid, c.cap_effective};
}

bool IpcPerm::Allows(const IpcCaller& c, int flag) const {
  int requested = ((flag >> 6) | (flag >> 3) | flag) & 7;
  uint32_t granted = mode;
  if (c.uid == uid || c.uid == cuid) {
    granted >>= 6;
  } else if (c.InGroup(gid) || c.InGroup(cgid)) {
    granted >>= 3;
  }
  return (requested & ~granted & 7) == 0 || c.Capable(CAP_IPC_OWNER);
}

Result<int> IpcRegistry::Add(std::shared_ptr<IpcObject> o, int limit) {
  if (static_cast<int>(objects_.size()) >= limit) return Errno(ENOSPC);
  int index = 0;
  for (auto& [i, unused] : objects_) {
    if (i != index) break;
    index++;
  }
  if (index >= kMaxIndex) return Errno(ENOSPC);
  o->perm.seq = next_seq_;
  o->id = index + static_cast<int>(next_seq_) * kMaxIndex;
  next_seq_ = (next_seq_ + 1) % (INT32_MAX / kMaxIndex);
  objects_[index] = std::move(o);
  return objects_[index]->id;
}

std::shared_ptr<IpcObject> IpcRegistry::Find(int id) const {
  if (id < 0) return nullptr;
  auto it = objects_.find(id % kMaxIndex);
  if (it == objects_.end() || it->second->id != id) return nullptr;
  return it->second;
}

std::shared_ptr<IpcObject> IpcRegistry::AtIndex(int index) const {
  auto it = objects_.find(index);
  return it == objects_.end() ? nullptr : it->second;
}

std::shared_ptr<IpcObject> IpcRegistry::FindKey(int32_t key) const {
  for (auto& [i, o] : objects_) {
    if (o->perm.key == key) return o;
  }
  return nullptr;
}

void IpcRegistry::Remove(int id) {
  auto it = objects_.find(id % kMaxIndex);
  if (it != objects_.end() && it->second->id == id) objects_.erase(it);
}

}  // namespace sentry::kernel
