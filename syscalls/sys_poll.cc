// poll, ppoll, select, pselect6.
#include <poll.h>
#include <sys/select.h>

#include <memory>

#include "syscalls/common.h"

namespace sentry::syscalls {
namespace {

struct PollItem {
  int fd;
  short events;
  short revents = 0;
  vfs::FileRef file;
};

// Waits until some item is ready, the deadline passes or a signal arrives. Returns the
// number of ready items.
Result<int> DoPoll(Task& t, std::vector<PollItem>& items, absl::Time deadline) {
  std::vector<std::unique_ptr<ScopedWait>> waits;
  bool needs_polling = false;
  for (auto& it : items) {
    if (it.fd < 0) continue;
    auto f = t.fds().Get(it.fd);
    if (!f.ok()) continue;
    it.file = *f;
    if (WaitQueue* q = it.file->Queue()) {
      waits.push_back(std::make_unique<ScopedWait>(*q, t.waiter()));
    } else {
      needs_polling = true;  // host fds have no queue: look again now and then
    }
  }
  for (;;) {
    int ready = 0;
    for (auto& it : items) {
      it.revents = 0;
      if (it.fd < 0) continue;
      if (!it.file) {
        it.revents = POLLNVAL;
      } else {
        EventMask m = it.file->Readiness(static_cast<EventMask>(it.events) | POLLERR | POLLHUP);
        it.revents = static_cast<short>(m & (it.events | POLLERR | POLLHUP));
      }
      if (it.revents) ready++;
    }
    if (ready || absl::Now() >= deadline) return ready;
    absl::Time until = deadline;
    if (needs_polling) until = std::min(deadline, absl::Now() + absl::Milliseconds(10));
    auto r = t.Wait(until);
    if (!r.ok() && r.error() != ETIMEDOUT) return r.error();
  }
}

Result<absl::Time> DeadlineFromTimespec(Task& t, GuestAddr ts) {
  if (ts.IsNull()) return absl::InfiniteFuture();
  return absl::Now() + SENTRY_TRY(CopyInDuration(t, ts));
}

// Sets a temporary signal mask for ppoll/pselect; it is restored after any handler runs.
Result<void> SetTempMask(Task& t, GuestAddr mask_addr) {
  if (mask_addr.IsNull()) return Ok();
  abi::SigSet m = SENTRY_TRY(t.CopyIn<abi::SigSet>(mask_addr));
  absl::MutexLock l(&t.kernel().mu());
  t.saved_mask_ = t.mask_;
  t.mask_ = m & ~abi::kUnblockable;
  return Ok();
}

Result<uint64_t> PollCommon(Task& t, GuestAddr fds_addr, uint64_t nfds, absl::Time deadline) {
  if (nfds > NofileLimit(t)) return Errno(EINVAL);
  std::vector<struct pollfd> pfds(nfds);
  if (nfds) SENTRY_TRY(t.CopyInBytes(fds_addr, {reinterpret_cast<uint8_t*>(pfds.data()), nfds * sizeof(struct pollfd)}));
  std::vector<PollItem> items;
  for (auto& p : pfds) items.push_back({p.fd, p.events});
  int n = SENTRY_TRY(DoPoll(t, items, deadline));
  for (size_t i = 0; i < nfds; i++) pfds[i].revents = items[i].revents;
  if (nfds) SENTRY_TRY(t.CopyOutBytes(fds_addr, {reinterpret_cast<uint8_t*>(pfds.data()), nfds * sizeof(struct pollfd)}));
  return static_cast<uint64_t>(n);
}

Result<uint64_t> SelectCommon(Task& t, int nfds, GuestAddr r, GuestAddr w, GuestAddr e,
                              absl::Time deadline) {
  if (nfds < 0) return Errno(EINVAL);
  nfds = std::min<int>(nfds, static_cast<int>(NofileLimit(t)));
  size_t bytes = ((nfds + 63) / 64) * 8;
  std::vector<uint64_t> sets[3];
  GuestAddr addrs[3] = {r, w, e};
  for (int i = 0; i < 3; i++) {
    sets[i].assign(bytes / 8, 0);
    if (!addrs[i].IsNull() && bytes) SENTRY_TRY(t.CopyInBytes(addrs[i], {reinterpret_cast<uint8_t*>(sets[i].data()), bytes}));
  }
  std::vector<PollItem> items;
  for (int fd = 0; fd < nfds; fd++) {
    short ev = 0;
    if (sets[0][fd / 64] >> (fd % 64) & 1) ev |= POLLIN;
    if (sets[1][fd / 64] >> (fd % 64) & 1) ev |= POLLOUT;
    if (sets[2][fd / 64] >> (fd % 64) & 1) ev |= POLLPRI;
    if (ev) items.push_back({fd, ev});
  }
  for (auto& it : items) {
    if (!t.fds().Get(it.fd).ok()) return Errno(EBADF);
  }
  SENTRY_TRY(DoPoll(t, items, deadline));
  for (auto& s : sets) std::fill(s.begin(), s.end(), 0);
  int count = 0;
  for (auto& it : items) {
    auto set = [&](int i) { sets[i][it.fd / 64] |= uint64_t{1} << (it.fd % 64); count++; };
    if ((it.events & POLLIN) && (it.revents & (POLLIN | POLLHUP | POLLERR))) set(0);
    if ((it.events & POLLOUT) && (it.revents & (POLLOUT | POLLERR))) set(1);
    if ((it.events & POLLPRI) && (it.revents & POLLPRI)) set(2);
  }
  for (int i = 0; i < 3; i++) {
    if (!addrs[i].IsNull() && bytes) SENTRY_TRY(t.CopyOutBytes(addrs[i], {reinterpret_cast<uint8_t*>(sets[i].data()), bytes}));
  }
  return static_cast<uint64_t>(count);
}

}  // namespace

Result<void> SetTemporarySignalMask(Task& t, GuestAddr mask_addr) {
  return SetTempMask(t, mask_addr);
}

Result<void> SetTemporarySignalMaskPair(Task& t, GuestAddr pair) {
  if (pair.IsNull()) return Ok();
  struct {
    uint64_t mask;
    uint64_t size;
  } s = SENTRY_TRY(t.CopyIn<decltype(s)>(pair));
  if (s.mask && s.size != sizeof(abi::SigSet)) return Errno(EINVAL);
  return SetTempMask(t, GuestAddr(s.mask));
}

Result<uint64_t> SysPoll(Task& t, GuestAddr fds, uint64_t nfds, int timeout_ms) {
  absl::Time d = timeout_ms < 0 ? absl::InfiniteFuture() : absl::Now() + absl::Milliseconds(timeout_ms);
  auto r = PollCommon(t, fds, nfds, d);
  if (!r.ok() && r.error() == kERESTARTSYS) return Errno(EINTR);
  return r;
}

Result<uint64_t> SysPpoll(Task& t, GuestAddr fds, uint64_t nfds, GuestAddr ts, GuestAddr mask,
                          size_t size) {
  if (!mask.IsNull() && size != sizeof(abi::SigSet)) return Errno(EINVAL);
  absl::Time d = SENTRY_TRY(DeadlineFromTimespec(t, ts));
  SENTRY_TRY(SetTempMask(t, mask));
  auto r = PollCommon(t, fds, nfds, d);
  if (!r.ok() && r.error() == kERESTARTSYS) return Errno(kERESTARTNOHAND);
  return r;
}

Result<uint64_t> SysSelect(Task& t, int nfds, GuestAddr r, GuestAddr w, GuestAddr e,
                           GuestAddr tv_addr) {
  absl::Time d = absl::InfiniteFuture();
  if (!tv_addr.IsNull()) {
    abi::Timeval tv = SENTRY_TRY(t.CopyIn<abi::Timeval>(tv_addr));
    if (tv.sec < 0 || tv.usec < 0 || tv.usec >= 1000000) return Errno(EINVAL);
    d = absl::Now() + absl::Seconds(tv.sec) + absl::Microseconds(tv.usec);
  }
  auto res = SelectCommon(t, nfds, r, w, e, d);
  if (!res.ok() && res.error() == kERESTARTSYS) return Errno(kERESTARTNOHAND);
  return res;
}

Result<uint64_t> SysPselect6(Task& t, int nfds, GuestAddr r, GuestAddr w, GuestAddr e,
                             GuestAddr ts, GuestAddr sig) {
  absl::Time d = SENTRY_TRY(DeadlineFromTimespec(t, ts));
  SENTRY_TRY(SetTemporarySignalMaskPair(t, sig));
  auto res = SelectCommon(t, nfds, r, w, e, d);
  if (!res.ok() && res.error() == kERESTARTSYS) return Errno(kERESTARTNOHAND);
  return res;
}

}  // namespace sentry::syscalls
