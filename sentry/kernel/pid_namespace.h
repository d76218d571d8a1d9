// PID namespaces inside the sandbox, hierarchical as Linux's: a process has one number in
// each namespace from its own up to the sandbox's. The sandbox's namespace (level 0) keeps
// the kernel's global numbers (Kernel::tasks(), ThreadGroup::tgid, pgid, sid and every pid the
// kernel stores are global); a nested namespace maps global numbers to its own, so that a
// syscall only translates at its edge: numbers in from the caller's namespace, out to it.
//
// A process's namespace (ThreadGroup::pidns) is fixed at its creation; Namespaces::pid is
// pid_for_children, which unshare(CLONE_NEWPID) and setns change.
#pragma once

#include <cstdint>
#include <map>
#include <memory>

#include "sentry/kernel/user_namespace.h"

namespace sentry::kernel {

class ThreadGroup;

// Linux's MAX_PID_NS_LEVEL: the deepest level a namespace may have.
inline constexpr int kMaxPidNsLevel = 32;

class PidNamespace {
 public:
  // The sandbox's own (level 0).
  explicit PidNamespace(uint64_t ino) : ino_(ino) {}
  // A child of `parent`, owned by user namespace `owner`.
  PidNamespace(std::shared_ptr<PidNamespace> parent, UserNsRef owner, uint64_t ino)
      : ino_(ino),
        level_(parent->level_ + 1),
        parent_(std::move(parent)),
        owner_(std::move(owner)) {}

  uint64_t ino() const { return ino_; }
  int level() const { return level_; }
  const std::shared_ptr<PidNamespace>& parent() const { return parent_; }
  const UserNsRef& owner() const { return owner_; }
  // `this` is `other` or one of its ancestors (its processes see `other`'s).
  bool Contains(const PidNamespace* other) const {
    for (; other != nullptr; other = other->parent_.get()) {
      if (other == this) return true;
    }
    return false;
  }

  // Everything below: Preconditions: Kernel::mu_ held.
  // The number global pid `global` has here; 0 when it has none (not visible from here).
  int Local(int global) const {
    if (level_ == 0) return global;
    auto it = to_local_.find(global);
    return it == to_local_.end() ? 0 : it->second;
  }
  // The global pid of this namespace's number `local`; 0 when none.
  int Global(int local) const {
    if (level_ == 0) return local;
    auto it = to_global_.find(local);
    return it == to_global_.end() ? 0 : it->second;
  }
  // Gives global pid `global` the next number here (nested namespaces only).
  int Assign(int global) {
    int local = next_++;
    to_local_[global] = local;
    to_global_[local] = global;
    return local;
  }
  void Release(int global) {
    auto it = to_local_.find(global);
    if (it == to_local_.end()) return;
    to_global_.erase(it->second);
    to_local_.erase(it);
  }
  // No number was handed out yet: the next process made here is its init.
  bool empty() const { return next_ == 1; }

  // The namespace's init (its child reaper); null before it is made and once it has exited.
  ThreadGroup* init = nullptr;
  // Its init has exited: no process may join any more (fork gives ENOMEM, as Linux).
  bool dead = false;

 private:
  const uint64_t ino_;
  const int level_ = 0;
  const std::shared_ptr<PidNamespace> parent_;
  const UserNsRef owner_;
  int next_ = 1;
  std::map<int, int> to_local_;
  std::map<int, int> to_global_;
};
using PidNsRef = std::shared_ptr<PidNamespace>;

// The number of global pid `global` in `ns` (null: the sandbox's), 0 if it has none there.
// Preconditions: Kernel::mu_ held.
inline int PidIn(const PidNamespace* ns, int global) {
  return ns == nullptr || global <= 0 ? global : ns->Local(global);
}
// The global pid of number `local` of `ns` (null: the sandbox's), 0 if none.
// Preconditions: Kernel::mu_ held.
inline int PidFrom(const PidNamespace* ns, int local) {
  return ns == nullptr || local <= 0 ? local : ns->Global(local);
}

}  // namespace sentry::kernel
