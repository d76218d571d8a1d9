#include "platform/stub/stub_control.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "platform/stub/stub_factory.h"
#include "sentry/base/status.h"

namespace sentry::platform {

namespace {
constexpr long kSeizeOptions = PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL;
}  // namespace

int WaitFor(int tid, bool nohang) {
  int status;
  for (;;) {
    pid_t r = waitpid(tid, &status, __WALL | (nohang ? WNOHANG : 0));
    if (r == tid) return status;
    if (r == 0) return kNoChange;
    if (r < 0 && errno == EINTR) continue;
    return -1;
  }
}

namespace {

// The stubs KillAndReapLater killed and nobody has reaped yet. Any thread of the Sentry may
// reap a stub that another thread traces (wait(2) without __WNOTHREAD).
struct Reaper {
  absl::Mutex mu;
  std::vector<int> pending ABSL_GUARDED_BY(mu);
  int unreaped ABSL_GUARDED_BY(mu) = 0;  // pending, and the batch being reaped
  bool started = false;                  // the thread runs; else KillAndReapLater reaps itself

  void Loop() {
    for (;;) {
      std::vector<int> batch;
      {
        absl::MutexLock l(&mu);
        mu.Await(absl::Condition(
            +[](std::vector<int>* v) { return !v->empty(); }, &pending));
        batch.swap(pending);
      }
      for (int tid : batch) {
        while (!IsDeath(WaitFor(tid))) {
        }
      }
      absl::MutexLock l(&mu);
      unreaped -= static_cast<int>(batch.size());
    }
  }
};

Reaper& TheReaper() {
  static Reaper* r = [] {
    auto* reaper = new Reaper;
    try {
      std::thread([reaper] { reaper->Loop(); }).detach();
      reaper->started = true;
    } catch (const std::system_error&) {
    }
    return reaper;
  }();
  return *r;
}

}  // namespace

void KillAndReapLater(int tid) {
  kill(tid, SIGKILL);
  Reaper& r = TheReaper();
  if (!r.started) {
    while (!IsDeath(WaitFor(tid))) {
    }
    return;
  }
  absl::MutexLock l(&r.mu);
  r.pending.push_back(tid);
  r.unreaped++;
}

absl::Status StartReaper() {
  if (!TheReaper().started) return absl::ResourceExhaustedError("cannot start the stub reaper");
  return absl::OkStatus();
}

bool AwaitReaped(absl::Duration timeout) {
  Reaper& r = TheReaper();
  absl::MutexLock l(&r.mu);
  if (r.unreaped == 0) return false;
  r.mu.AwaitWithTimeout(absl::Condition(
                            +[](int* n) { return *n == 0; }, &r.unreaped),
                        timeout);
  return true;
}

Result<int> CloneStub(StubInjector& inj, uint64_t flags) {
  for (int attempt = 0;; attempt++) {
    int64_t r = SENTRY_TRY(inj.StubSyscall(SYS_clone, flags, 0, 0, 0, 0, 0, Layout::kStubClone));
    if (r >= 0) return static_cast<int>(r);
    if (r != -EAGAIN || attempt > 0 || !AwaitReaped()) return Errno(static_cast<int>(-r));
  }
}

absl::Status SeizeStopped(int tid) {
  if (ptrace(PTRACE_SEIZE, tid, 0, kSeizeOptions) != 0) return ErrnoStatus("ptrace(SEIZE)");
  int status = WaitFor(tid);
  if (IsDeath(status)) return absl::InternalError("stub died before it could be attached");
  return absl::OkStatus();
}

Result<int64_t> InjectSyscall(int tid, const uint64_t (&args)[7], uint64_t entry, bool* interrupted,
                              int close_first) {
  if (close_first >= 0 && entry != Layout::kStubInject) {
    // Only plain injections have a close_inject twin.
    SENTRY_TRY(InjectSyscall(tid, {SYS_close, static_cast<uint64_t>(close_first), 0, 0, 0, 0, 0},
                             Layout::kStubInject, interrupted));
    close_first = -1;
  }
  Registers regs;
  if (ptrace(PTRACE_GETREGS, tid, 0, &regs) != 0) return Errno(ESRCH);
  regs.rip = entry;
  if (close_first >= 0) {
    regs.rip = Layout::kStubCloseInject;
    regs.r12 = static_cast<uint64_t>(close_first);
  }
  regs.rax = args[0];
  regs.orig_rax = ~0ull;  // not inside a syscall: no restart handling by the host
  regs.rdi = args[1];
  regs.rsi = args[2];
  regs.rdx = args[3];
  regs.r10 = args[4];
  regs.r8 = args[5];
  regs.r9 = args[6];
  if (ptrace(PTRACE_SETREGS, tid, 0, &regs) != 0) return Errno(ESRCH);
  for (;;) {
    if (ptrace(PTRACE_CONT, tid, 0, 0) != 0) return Errno(ESRCH);
    int status = WaitFor(tid);
    if (IsDeath(status)) return Errno(ESRCH);
    if (WSTOPSIG(status) == SIGTRAP && (status >> 16) == 0) break;
    // Anything else (an Interrupt's SIGSTOP, a PTRACE_INTERRUPT stop) is noted and suppressed.
    *interrupted = true;
  }
  if (ptrace(PTRACE_GETREGS, tid, 0, &regs) != 0) return Errno(ESRCH);
  return static_cast<int64_t>(regs.rax);
}

// ---------------------------------------------------------------------------------------------
// Address space.

void StubAddressSpace::AddMember(int tid) {
  absl::MutexLock l(&mu_);
  members_.push_back(tid);
}

size_t StubAddressSpace::MemberCount() {
  absl::MutexLock l(&mu_);
  return members_.size();
}

void StubAddressSpace::RemoveMember(int tid) {
  absl::MutexLock l(&mu_);
  std::erase(members_, tid);
}

int StubAddressSpace::AnyMember() {
  absl::MutexLock l(&mu_);
  return members_.empty() ? -1 : members_.front();
}

namespace {
// The host layout every stub starts with. Stubs run without address-space randomization
// (SpawnChild), from one executable with the same argv and environment, so the first stub's
// /proc/PID/maps holds for all of them: it is read once, not on every execve.
struct StubLayout {
  std::vector<std::pair<uint64_t, uint64_t>> reserved;
  uint64_t vdso_base = 0;
  std::pair<uint64_t, uint64_t> stack;
};
absl::Mutex g_layout_mu;
std::optional<StubLayout> g_layout ABSL_GUARDED_BY(g_layout_mu);
}  // namespace

absl::StatusOr<std::pair<uint64_t, uint64_t>> StubAddressSpace::LearnLayout(int pid) {
  absl::MutexLock l(&g_layout_mu);
  if (!g_layout) {
    auto read = ReadLayout(pid);
    if (!read.ok()) return read.status();
    g_layout = StubLayout{reserved_, vdso_base_, *read};
  }
  reserved_ = g_layout->reserved;
  vdso_base_ = g_layout->vdso_base;
  // A stack above kGuestTop (where it is without randomization) is out of the guest's reach
  // and may stay: one injected munmap less per execve.
  if (g_layout->stack.first >= Layout::kGuestTop) return std::pair<uint64_t, uint64_t>{0, 0};
  return g_layout->stack;
}

namespace {
int g_proc_dir = -1;  // SetProcDirForLayout
}  // namespace

absl::StatusOr<std::pair<uint64_t, uint64_t>> StubAddressSpace::ReadLayout(int pid) {
  // A plain read and a hand parse: a fresh stub has only a handful of mappings.
  std::string path = std::to_string(pid) + "/maps";
  int fd = g_proc_dir >= 0 ? openat(g_proc_dir, path.c_str(), O_RDONLY | O_CLOEXEC)
                           : open(("/proc/" + path).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("open /proc/PID/maps of the stub");
  std::string text;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, n);
  }
  close(fd);
  std::pair<uint64_t, uint64_t> stack{0, 0};
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    std::string_view line(text.data() + pos, eol - pos);
    pos = eol + 1;
    uint64_t start, end;
    if (sscanf(std::string(line.substr(0, 40)).c_str(), "%lx-%lx", &start, &end) != 2) continue;
    if (line.find("[stack]") != std::string_view::npos) {
      stack = {start, end};
      continue;
    }
    if (line.find("[vsyscall]") != std::string_view::npos) continue;
    if (line.find("[vdso]") != std::string_view::npos) vdso_base_ = start;
    reserved_.push_back({start, end});  // stub code, vdso, vvar
  }
  return stack;
}

namespace {
absl::Mutex g_fork_mu;
std::map<int, std::shared_ptr<StubAddressSpace>> g_fork_parents ABSL_GUARDED_BY(g_fork_mu);
}  // namespace

void StubAddressSpace::NoteFork(int handle, std::shared_ptr<StubAddressSpace> parent) {
  absl::MutexLock l(&g_fork_mu);
  g_fork_parents[handle] = std::move(parent);
}

absl::StatusOr<std::shared_ptr<StubAddressSpace>> StubAddressSpace::ForForkedStub(int handle) {
  std::shared_ptr<StubAddressSpace> parent;
  {
    absl::MutexLock l(&g_fork_mu);
    auto it = g_fork_parents.find(handle);
    if (it != g_fork_parents.end()) {
      parent = std::move(it->second);
      g_fork_parents.erase(it);
    }
  }
  auto as = std::make_shared<StubAddressSpace>(handle);
  if (parent) {
    as->CopyLayout(*parent);
  } else {
    auto r = as->LearnLayout(handle);
    if (!r.ok()) return r.status();
  }
  return as;
}

size_t StubAddressSpace::ReadMemory(GuestAddr addr, std::span<uint8_t> dst) {
  if (dst.empty()) return 0;
  if (batch_via_ != nullptr && BatchTouches(addr.value(), dst.size()) && !FlushBatch().ok()) {
    return 0;
  }
  struct iovec local = {dst.data(), dst.size()};
  struct iovec remote = {reinterpret_cast<void*>(addr.value()), dst.size()};
  ssize_t n = process_vm_readv(AnyMember(), &local, 1, &remote, 1, 0);
  if (n > 0 || dst.size() <= kPageSize) return n < 0 ? 0 : n;
  // process_vm_readv stops at the first bad iovec only: split at page boundaries so a
  // partially mapped range still yields its mapped prefix.
  size_t done = 0;
  while (done < dst.size()) {
    uint64_t a = addr.value() + done;
    size_t chunk = std::min<size_t>(dst.size() - done, kPageSize - (a & (kPageSize - 1)));
    local = {dst.data() + done, chunk};
    remote = {reinterpret_cast<void*>(a), chunk};
    n = process_vm_readv(AnyMember(), &local, 1, &remote, 1, 0);
    if (n <= 0) break;
    done += n;
    if (static_cast<size_t>(n) < chunk) break;
  }
  return done;
}

size_t StubAddressSpace::WriteMemory(GuestAddr addr, std::span<const uint8_t> src) {
  if (src.empty()) return 0;
  if (batch_via_ != nullptr && BatchTouches(addr.value(), src.size())) {
    // After the queue has run, in order: it changes no byte of this range after this point.
    if (batch_errno_ != 0) return 0;
    batch_writes_.push_back({addr.value(), std::vector<uint8_t>(src.begin(), src.end())});
    return src.size();
  }
  return WriteRaw(addr, src);
}

namespace {
bool RangesOverlap(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen) {
  return a < b + blen && b < a + alen;
}
}  // namespace

bool StubAddressSpace::BatchTouches(uint64_t addr, uint64_t len) const {
  for (const auto& e : batch_) {
    if (e[0] != SYS_close && RangesOverlap(addr, len, e[1], e[2])) return true;
  }
  return HeldWriteIn(addr, len);
}

bool StubAddressSpace::HeldWriteIn(uint64_t addr, uint64_t len) const {
  for (const auto& w : batch_writes_) {
    if (RangesOverlap(addr, len, w.addr, w.data.size())) return true;
  }
  return false;
}

size_t StubAddressSpace::WriteRaw(GuestAddr addr, std::span<const uint8_t> src) {
  size_t done = 0;
  while (done < src.size()) {
    struct iovec local = {const_cast<uint8_t*>(src.data()) + done, src.size() - done};
    struct iovec remote = {reinterpret_cast<void*>(addr.value() + done), src.size() - done};
    ssize_t n = process_vm_writev(AnyMember(), &local, 1, &remote, 1, 0);
    if (n <= 0) {
      // Retry page by page to find the writable prefix.
      if (src.size() - done > kPageSize) {
        uint64_t a = addr.value() + done;
        size_t chunk = kPageSize - (a & (kPageSize - 1));
        local = {const_cast<uint8_t*>(src.data()) + done, chunk};
        remote = {reinterpret_cast<void*>(a), chunk};
        n = process_vm_writev(AnyMember(), &local, 1, &remote, 1, 0);
        if (n > 0) {
          done += n;
          continue;
        }
      }
      break;
    }
    done += n;
  }
  return done;
}

Result<uint64_t> StubAddressSpace::Host(StubInjector& via, uint64_t nr, uint64_t a0,
                                        uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4,
                                        uint64_t a5) {
  if (batch_via_ != nullptr) {
    // Queued when the result is known: MAP_FIXED puts the mapping at a0 or fails.
    bool fixed_map = nr == SYS_mmap && (a3 & MAP_FIXED) && !(a3 & MAP_FIXED_NOREPLACE);
    if (&via == batch_via_ && (fixed_map || nr == SYS_munmap || nr == SYS_mprotect)) {
      // A write held back for the end of the queue must not come after a change to its range.
      if (HeldWriteIn(a0, a1) || batch_.size() == kBatchCapacity) SENTRY_TRY(FlushBatch());
      batch_.push_back({nr, a0, a1, a2, a3, a4, a5, 0});
      return fixed_map ? a0 : 0;
    }
    SENTRY_TRY(FlushBatch());
  }
  Result<int64_t> r = via.StubSyscall(nr, a0, a1, a2, a3, a4, a5);
  if (!r.ok()) return r.error();
  if (*r < 0 && *r > -4096) return Errno(static_cast<int>(-*r));
  return static_cast<uint64_t>(*r);
}

Result<uint64_t> StubAddressSpace::Map(Context& via, GuestAddr addr, uint64_t len, int prot,
                                       int flags, int host_fd, uint64_t offset) {
  auto& inj = dynamic_cast<StubInjector&>(via);
  if (host_fd < 0) {
    return Host(inj, SYS_mmap, addr.value(), len, prot, flags, ~uint64_t{0}, offset);
  }
  int remote = SENTRY_TRY(Lend(inj, host_fd));
  return Host(inj, SYS_mmap, addr.value(), len, prot, flags, static_cast<uint64_t>(remote), offset);
}

Result<int> StubAddressSpace::Lend(StubInjector& inj, int host_fd) {
  struct stat st;
  if (fstat(host_fd, &st) != 0) return Errno(errno);
  StubInjector::LentFile& lent = inj.lent_file;
  if (lent.remote >= 0 && lent.dev == st.st_dev && lent.ino == st.st_ino &&
      lent.ctime.tv_sec == st.st_ctim.tv_sec && lent.ctime.tv_nsec == st.st_ctim.tv_nsec) {
    return lent.remote;
  }
  if (lent.remote >= 0) {
    // Queued mappings of the file lent before still use its fd: its close goes after them.
    if (&inj == batch_via_) {
      if (batch_.size() == kBatchCapacity) SENTRY_TRY(FlushBatch());
      batch_.push_back({SYS_close, static_cast<uint64_t>(lent.remote), 0, 0, 0, 0, 0, 0});
    } else {
      if (batch_via_ != nullptr) SENTRY_TRY(FlushBatch());
      inj.DeferClose(lent.remote);
    }
    lent.remote = -1;
  }
  int remote = SENTRY_TRY(inj.LendFd(host_fd));
  lent = {st.st_dev, st.st_ino, st.st_ctim, remote};
  return remote;
}

void StubAddressSpace::BeginBatch(Context& via) {
  batch_via_ = &dynamic_cast<StubInjector&>(via);
  batch_errno_ = 0;
}

Result<void> StubAddressSpace::EndBatch() {
  if (batch_via_ == nullptr) return Ok();
  Result<void> r = FlushBatch();
  batch_via_ = nullptr;
  batch_.clear();
  batch_writes_.clear();
  return r;
}

Result<void> StubAddressSpace::FlushBatch() {
  if (batch_errno_ != 0) return Errno(batch_errno_);
  if (!batch_.empty()) SENTRY_TRY(RunBatch());
  std::vector<BatchWrite> writes = std::move(batch_writes_);
  batch_writes_.clear();
  for (const BatchWrite& w : writes) {
    if (WriteRaw(GuestAddr(w.addr), w.data) != w.data.size()) {
      batch_errno_ = EFAULT;
      return Errno(EFAULT);
    }
  }
  return Ok();
}

Result<void> StubAddressSpace::RunBatch() {
  std::vector<std::array<uint64_t, 8>> table = std::move(batch_);
  batch_.clear();
  // A close DeferClose left goes first in the table, if there is room (else StubSyscall
  // injects it before).
  if (int fd = table.size() < kBatchCapacity ? batch_via_->TakeDeferredClose() : -1; fd >= 0) {
    table.insert(table.begin(), {SYS_close, static_cast<uint64_t>(fd), 0, 0, 0, 0, 0, 0});
  }
  auto bytes = std::as_bytes(std::span(table));
  std::span<const uint8_t> raw(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  Result<int64_t> r = raw.size() <= Layout::kStubBatchTableSize &&
                              WriteRaw(GuestAddr(Layout::kStubBatchTable), raw) == raw.size()
                          ? batch_via_->StubSyscall(0, Layout::kStubBatchTable, table.size(), 0,
                                                    0, 0, 0, Layout::kStubBatch)
                          : Result<int64_t>(Errno(EFAULT));
  if (!r.ok()) {
    batch_errno_ = r.error().code();
  } else if (*r < 0 && *r > -4096) {
    batch_errno_ = static_cast<int>(-*r);
  }
  return batch_errno_ != 0 ? Result<void>(Errno(batch_errno_)) : Ok();
}

Result<int> StubAddressSpace::LendFd(StubInjector& via, int host_fd) {
  if (channel_ == nullptr) return Errno(EOPNOTSUPP);
  return channel_->Lend(via, *this, host_fd);
}

Result<void> StubAddressSpace::Unmap(Context& via, GuestAddr addr, uint64_t len) {
  SENTRY_TRY(Host(dynamic_cast<StubInjector&>(via), SYS_munmap, addr.value(), len));
  return Ok();
}

Result<void> StubAddressSpace::Protect(Context& via, GuestAddr addr, uint64_t len, int prot) {
  SENTRY_TRY(Host(dynamic_cast<StubInjector&>(via), SYS_mprotect, addr.value(), len, prot));
  return Ok();
}

Result<uint64_t> StubAddressSpace::Remap(Context& via, GuestAddr old_addr, uint64_t old_len,
                                         uint64_t new_len, int flags, GuestAddr new_addr) {
  return Host(dynamic_cast<StubInjector&>(via), SYS_mremap, old_addr.value(), old_len, new_len,
              flags, new_addr.value());
}

Result<void> StubAddressSpace::Advise(Context& via, GuestAddr addr, uint64_t len, int advice) {
  SENTRY_TRY(Host(dynamic_cast<StubInjector&>(via), SYS_madvise, addr.value(), len, advice));
  return Ok();
}

// ---------------------------------------------------------------------------------------------
// Starting stubs.

namespace {

struct SpawnArgs {
  int exe_fd;
  int channel_fd;  // or -1
};

// Closes every fd but `a` and `b` (which may be equal).
void CloseAllBut(int a, int b) {
  int lo = std::min(a, b), hi = std::max(a, b);
  if (lo > 0) syscall(SYS_close_range, 0, lo - 1, 0);
  if (hi > lo + 1) syscall(SYS_close_range, lo + 1, hi - 1, 0);
  syscall(SYS_close_range, hi + 1, ~0u, 0);
}

// Leaves the calling thread with no capability, now and after execve: an empty bounding set
// (where CAP_SETPCAP allows; without it the Sentry has nothing to drop from it that a stub
// could regain: a rootless Sentry's execve grants no file capabilities beyond its own), no
// ambient and no inheritable ones, then nothing effective or permitted. Even a root Sentry's
// stubs then start with CapEff 0 (execve gives root only bounding & file capabilities), so
// guest code that slipped past its filter would hold no privilege. NO_NEW_PRIVS, set by the
// stub itself (stub.S), keeps set-ID and file capabilities from adding any back.
// Raw syscalls only: it runs in SpawnChild.
void DropAllCapabilities() {
  for (long cap = 0; cap <= 63; cap++) {
    // EINVAL past the kernel's last capability; EPERM without CAP_SETPCAP.
    if (syscall(SYS_prctl, PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) break;
  }
  syscall(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct none[2] = {};
  if (syscall(SYS_capset, &header, none) != 0) syscall(SYS_exit, 126);
}

int SpawnChild(void* arg) {
  // Runs on a private stack in the Sentry's address space (CLONE_VM | CLONE_VFORK) but with a
  // copy of its fd table: only raw syscalls until execveat replaces the image.
  const auto* args = static_cast<const SpawnArgs*>(arg);
  int exe = args->exe_fd;
  int keep = exe;
  if (args->channel_fd >= 0) {
    if (exe == kStubChannelFd) {
      exe = static_cast<int>(syscall(SYS_fcntl, exe, F_DUPFD_CLOEXEC, kStubChannelFd + 1));
    }
    if (args->channel_fd == kStubChannelFd) {
      syscall(SYS_fcntl, kStubChannelFd, F_SETFD, 0);  // keep it across execveat
    } else {
      syscall(SYS_dup2, args->channel_fd, kStubChannelFd);  // the copy is not close-on-exec
    }
    keep = kStubChannelFd;
  }
  CloseAllBut(exe, keep);  // `exe` is close-on-exec: execveat closes it once it has used it
  DropAllCapabilities();
  // No address-space randomization: every stub then has the same host layout (LearnLayout).
  if (syscall(SYS_personality, ADDR_NO_RANDOMIZE) < 0) syscall(SYS_exit, 127);
  char name[] = "sentry-stub";
  char* argv[] = {name, nullptr};
  char* envp[] = {nullptr};
  syscall(SYS_execveat, exe, "", argv, envp, AT_EMPTY_PATH);
  syscall(SYS_exit, 127);
  return 127;
}

}  // namespace

absl::StatusOr<int> SpawnStub(int stub_fd, int channel_fd) {
  if (StubFactoryRunning()) return ForkStubFromFactory(channel_fd);
  static thread_local std::vector<uint8_t> stack(64 * 1024);
  SpawnArgs args{stub_fd, channel_fd};
  int pid = clone(SpawnChild, stack.data() + stack.size(), CLONE_VM | CLONE_VFORK | SIGCHLD, &args);
  if (pid < 0) return ErrnoStatus("clone (stub)");
  absl::Status st = SeizeStopped(pid);
  if (!st.ok()) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, __WALL);
    return st;
  }
  return pid;
}

void SetProcDirForLayout(int dir_fd) { g_proc_dir = dir_fd; }

absl::StatusOr<int> OpenStubExecutable() {
  static absl::Mutex mu;
  static int opened = -1;
  absl::MutexLock l(&mu);
  if (opened >= 0) return opened;
  std::string stub = getenv("SENTRY_STUB") ? getenv("SENTRY_STUB") : "";
  if (stub.empty()) {
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n < 0) return ErrnoStatus("readlink /proc/self/exe");
    self[n] = 0;
    std::string dir(self);
    dir = dir.substr(0, dir.rfind('/'));
    stub = dir + "/sentry-stub";
  }
  int fd = open(stub.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("open stub " + stub);
  opened = fd;
  return fd;
}

}  // namespace sentry::platform
