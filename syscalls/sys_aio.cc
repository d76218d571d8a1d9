// Linux native AIO: io_setup, io_destroy, io_submit, io_cancel, io_getevents, io_pgetevents.
// The contexts and their rings are in sentry/kernel/aio.h.
#include <linux/aio_abi.h>
#include <sys/mman.h>

#include "sentry/kernel/aio.h"
#include "syscalls/common.h"
#include "syscalls/read_write.h"
#include "vfs/eventfd.h"

namespace sentry::syscalls {
namespace {

using kernel::AioContext;
using kernel::AioEvent;
using kernel::AioTable;

// preadv2's RWF_* flags, which aio_rw_flags takes too (Linux 6.1's RWF_SUPPORTED).
constexpr int kRwfDsync = 0x2;
constexpr int kRwfSync = 0x4;
constexpr int kRwfNowait = 0x8;
constexpr int kRwfAppend = 0x10;
constexpr int kRwfSupported = 0x1f;
// x86-64's TASK_SIZE_MAX: the end of user space, as access_ok sees it.
constexpr uint64_t kUserTop = 0x7ffffffff000;

// Linux's lookup_ioctx: the slot number comes from the ring's id word in guest memory, so a
// ring that was unmapped or overwritten makes its context unreachable (EINVAL).
Result<uint32_t> RingIndex(Task& t, uint64_t id) {
  Result<uint32_t> index = t.CopyIn<uint32_t>(GuestAddr(id));
  if (!index.ok()) return Errno(EINVAL);
  return *index;
}

Result<std::shared_ptr<AioContext>> LookupContext(Task& t, uint64_t id) {
  std::shared_ptr<AioTable> table = AioTable::Of(t.mm(), false);
  if (!table) return Errno(EINVAL);
  return table->Lookup(SENTRY_TRY(RingIndex(t, id)), id);
}

// IOCB_CMD_PREAD[V] / PWRITE[V] on a reserved slot. Errors of the arguments are io_submit's;
// errors of the transfer itself go into the event, as Linux's aio_read / aio_write.
Result<int64_t> SubmitRw(Task& t, const struct iocb& cb, const vfs::FileRef& f, bool write,
                         bool vectored) {
  // Linux's aio_prep_rw. The priority is checked but not used: the Sentry does not order I/O.
  if (cb.aio_flags & IOCB_FLAG_IOPRIO) SENTRY_TRY(CheckIoprio(t, cb.aio_reqprio));
  int flags = cb.aio_rw_flags;
  if (flags & ~kRwfSupported) return Errno(EOPNOTSUPP);
  if (write ? !f->Writable() : !f->Readable()) return Errno(EBADF);
  const vfs::InodeRef& ino = f->inode();
  if (ino && S_ISDIR(ino->Type())) return Errno(EINVAL);  // no read_iter / write_iter
  GuestBuffer b;
  if (vectored) {
    if (cb.aio_nbytes > 1024) return Errno(EINVAL);
    b = SENTRY_TRY(CopyInIovecs(t, GuestAddr(cb.aio_buf), static_cast<int>(cb.aio_nbytes)));
  } else {
    b = OneRange(GuestAddr(cb.aio_buf), cb.aio_nbytes);
  }
  // Linux's access_ok at import: a range past user space fails io_submit; a range that is
  // merely unmapped fails the transfer (the event's EFAULT).
  for (const struct iovec& seg : b.segs) {
    uint64_t base = reinterpret_cast<uint64_t>(seg.iov_base);
    if (base > kUserTop || seg.iov_len > kUserTop - base) return Errno(EFAULT);
  }
  if (cb.aio_offset < 0) return Errno(EINVAL);
  // Files without positions (pipes, sockets, devices) ignore aio_offset, as their
  // read_iter does on Linux.
  bool positional = ino && S_ISREG(ino->Type());
  if ((flags & kRwfNowait) && f->Queue() != nullptr) {
    EventMask want = write ? kEventOut : kEventIn;
    if (!(f->Readiness(want) & want)) return -EAGAIN;
  }
  int64_t off = positional ? cb.aio_offset : -1;
  if (write && positional && (flags & kRwfAppend)) {
    struct stat st;
    if (auto r = f->Stat(&st); !r.ok()) return -static_cast<int64_t>(r.error().code());
    off = st.st_size;
  }
  Result<uint64_t> r = write ? DoWrite(t, f, b, off) : DoRead(t, f, b, off);
  if (!r.ok()) {
    int e = r.error().code();
    // Linux's aio_rw_done: an interrupted transfer completes with EINTR.
    if (e == kERESTARTSYS || e == kERESTARTNOINTR || e == kERESTARTNOHAND) e = EINTR;
    return -static_cast<int64_t>(e);
  }
  if (write && (flags & (kRwfDsync | kRwfSync))) {
    if (auto s = f->Sync(!(flags & kRwfSync)); !s.ok())
      return -static_cast<int64_t>(s.error().code());
  }
  return static_cast<int64_t>(*r);
}

// IOCB_CMD_FSYNC / FDSYNC: only files with an fsync operation on Linux (regular files and
// directories here; not pipes, sockets or character devices).
Result<int64_t> SubmitSync(const struct iocb& cb, const vfs::FileRef& f, bool data_only) {
  if (cb.aio_buf || cb.aio_offset || cb.aio_nbytes || cb.aio_rw_flags) return Errno(EINVAL);
  const vfs::InodeRef& ino = f->inode();
  if (!ino || !(S_ISREG(ino->Type()) || S_ISDIR(ino->Type()))) return Errno(EINVAL);
  Result<void> r = f->Sync(data_only);
  return r.ok() ? 0 : -static_cast<int64_t>(r.error().code());
}

// Linux's __io_submit_one on a reserved slot: the checks in its order, then the operation,
// which completes the slot (or, for a poll, takes it over). On error the slot is untouched.
Result<void> Issue(Task& t, AioContext& ctx, const struct iocb& cb, GuestAddr user_cb) {
  vfs::FileRef f = SENTRY_TRY(GetFile(t, static_cast<int>(cb.aio_fildes)));
  if (f->flags() & O_PATH) return Errno(EBADF);  // Linux's fget does not take them
  std::shared_ptr<vfs::EventFd> resfd;
  if (cb.aio_flags & IOCB_FLAG_RESFD) {
    vfs::FileRef e = SENTRY_TRY(GetFile(t, static_cast<int>(cb.aio_resfd)));
    resfd = std::dynamic_pointer_cast<vfs::EventFd>(e);
    if (!resfd) return Errno(EINVAL);
  }
  SENTRY_TRY(t.CopyOut<uint32_t>(user_cb + offsetof(struct iocb, aio_key), 0));  // KIOCB_KEY
  AioEvent ev{cb.aio_data, user_cb.value(), 0, 0};
  switch (cb.aio_lio_opcode) {
    case IOCB_CMD_PREAD:
    case IOCB_CMD_PWRITE:
    case IOCB_CMD_PREADV:
    case IOCB_CMD_PWRITEV: {
      bool write = cb.aio_lio_opcode == IOCB_CMD_PWRITE || cb.aio_lio_opcode == IOCB_CMD_PWRITEV;
      bool vectored = cb.aio_lio_opcode >= IOCB_CMD_PREADV;
      ev.res = SENTRY_TRY(SubmitRw(t, cb, f, write, vectored));
      break;
    }
    case IOCB_CMD_FSYNC:
    case IOCB_CMD_FDSYNC:
      ev.res = SENTRY_TRY(SubmitSync(cb, f, cb.aio_lio_opcode == IOCB_CMD_FDSYNC));
      break;
    case IOCB_CMD_POLL: {
      if (cb.aio_buf > 0xffff || cb.aio_offset || cb.aio_nbytes || cb.aio_rw_flags) {
        return Errno(EINVAL);
      }
      EventMask want = static_cast<EventMask>(cb.aio_buf) | kEventErr | kEventHup;
      ctx.StartPoll(std::move(f), want, ev, std::move(resfd));
      return Ok();
    }
    default:  // IOCB_CMD_NOOP included, as Linux
      return Errno(EINVAL);
  }
  ctx.Complete(ev, resfd);
  return Ok();
}

// One iocb, Linux's io_submit_one.
Result<void> SubmitOne(Task& t, AioContext& ctx, GuestAddr user_cb) {
  auto cb = SENTRY_TRY(t.CopyIn<struct iocb>(user_cb));
  if (cb.aio_reserved2 || static_cast<int64_t>(cb.aio_nbytes) < 0) return Errno(EINVAL);
  SENTRY_TRY(ctx.Reserve());
  Result<void> r = Issue(t, ctx, cb, user_cb);
  if (!r.ok()) ctx.Unreserve();
  return r;
}

// The deadline of io_getevents' timespec, unchecked as Linux's: no timeout for null, at
// once for zero, never for a negative time (Linux's hrtimer then never fires).
Result<absl::Time> GeteventsDeadline(Task& t, GuestAddr ts_addr) {
  if (ts_addr.IsNull()) return absl::InfiniteFuture();
  auto ts = SENTRY_TRY(t.CopyIn<struct timespec>(ts_addr));
  if (ts.tv_sec < 0) return absl::InfiniteFuture();
  if (ts.tv_sec == 0 && ts.tv_nsec == 0) return absl::InfinitePast();
  return absl::Now() + absl::Seconds(ts.tv_sec) + absl::Nanoseconds(ts.tv_nsec);
}

// Linux's read_events: waits until `min_nr` events are taken or `deadline` passes, taking up
// to `nr`. A signal ends the wait with what was taken (EINTR-like kERESTARTSYS if none).
Result<uint64_t> GetEvents(Task& t, uint64_t ctx_id, int64_t min_nr, int64_t nr, GuestAddr events,
                           absl::Time deadline) {
  auto ctx = SENTRY_TRY(LookupContext(t, ctx_id));
  if (min_nr < 0 || min_nr > nr) return Errno(EINVAL);
  ScopedWait wait(ctx->queue(), t.waiter());
  uint64_t got = 0;
  bool fault = false;
  for (;;) {
    got += ctx->Take(nr - got, [&](std::span<const AioEvent> evs) {
      GuestAddr at = events + got * sizeof(AioEvent);
      if (!t.CopyOutBytes(at, {reinterpret_cast<const uint8_t*>(evs.data()), evs.size_bytes()})
               .ok()) {
        fault = true;
        return size_t{0};
      }
      return evs.size();
    });
    if (fault) return got ? Result<uint64_t>(got) : Errno(EFAULT);
    if (ctx->dead()) return got ? Result<uint64_t>(got) : Errno(EINVAL);
    if (got >= static_cast<uint64_t>(min_nr) || deadline == absl::InfinitePast()) return got;
    Result<void> w = t.Wait(deadline);
    if (!w.ok()) {
      if (w.error() == ETIMEDOUT) return got;
      // Interrupted: what was taken, else the caller's EINTR.
      return got ? Result<uint64_t>(got) : w.error();
    }
  }
}

}  // namespace

Result<uint64_t> SysIoSetup(Task& t, uint32_t nr_events, GuestAddr ctxp) {
  uint64_t cur = SENTRY_TRY(t.CopyIn<uint64_t>(ctxp));
  if (cur != 0 || nr_events == 0) return Errno(EINVAL);
  auto ctx = SENTRY_TRY(AioContext::Create(nr_events));
  uint64_t addr =
      SENTRY_TRY(t.mm().Map(t.ctx(), 0, ctx->ring_size(), PROT_READ | PROT_WRITE, MAP_SHARED,
                            "/[aio] (deleted)", ctx->ring_fd(), 0, nullptr, VmLimitsOf(t)));
  ctx->set_id(addr);
  if (!t.CopyOut<uint64_t>(ctxp, addr).ok()) {
    ctx->Kill();
    (void)t.mm().Unmap(t.ctx(), addr, ctx->ring_size());
    return Errno(EFAULT);
  }
  AioTable::Of(t.mm(), true)->Add(std::move(ctx));
  return 0;
}

Result<uint64_t> SysIoDestroy(Task& t, uint64_t ctx_id) {
  std::shared_ptr<AioTable> table = AioTable::Of(t.mm(), false);
  if (!table) return Errno(EINVAL);
  auto ctx = SENTRY_TRY(table->Remove(SENTRY_TRY(RingIndex(t, ctx_id)), ctx_id));
  ctx->Kill();
  // The guest's view of the ring goes, as Linux's vm_munmap in kill_ioctx.
  (void)t.mm().Unmap(t.ctx(), ctx->id(), ctx->ring_size());
  return 0;
}

Result<uint64_t> SysIoSubmit(Task& t, uint64_t ctx_id, int64_t nr, GuestAddr iocbpp) {
  if (nr < 0) return Errno(EINVAL);
  auto ctx = SENTRY_TRY(LookupContext(t, ctx_id));
  nr = std::min<int64_t>(nr, ctx->nr_events());
  int64_t i = 0;
  for (; i < nr; i++) {
    Result<uint64_t> p = t.CopyIn<uint64_t>(iocbpp + i * sizeof(uint64_t));
    Result<void> r = p.ok() ? SubmitOne(t, *ctx, GuestAddr(*p)) : Result<void>(p.error());
    if (!r.ok()) {
      if (i == 0) return r.error();
      break;
    }
  }
  return i;
}

Result<uint64_t> SysIoCancel(Task& t, uint64_t ctx_id, GuestAddr iocb, GuestAddr result) {
  (void)result;  // Linux no longer writes it: the event goes to the ring
  uint32_t key = SENTRY_TRY(t.CopyIn<uint32_t>(iocb + offsetof(struct iocb, aio_key)));
  if (key != 0) return Errno(EINVAL);
  auto ctx = SENTRY_TRY(LookupContext(t, ctx_id));
  SENTRY_TRY(ctx->Cancel(iocb.value()));
  return Errno(EINPROGRESS);  // cancellation under way; the event comes through the ring
}

Result<uint64_t> SysIoGetevents(Task& t, uint64_t ctx_id, int64_t min_nr, int64_t nr,
                                GuestAddr events, GuestAddr timeout) {
  absl::Time deadline = SENTRY_TRY(GeteventsDeadline(t, timeout));
  auto r = GetEvents(t, ctx_id, min_nr, nr, events, deadline);
  // Never restarted, even with SA_RESTART, as Linux.
  if (!r.ok() && r.error() == kERESTARTSYS) return Errno(EINTR);
  return r;
}

Result<uint64_t> SysIoPgetevents(Task& t, uint64_t ctx_id, int64_t min_nr, int64_t nr,
                                 GuestAddr events, GuestAddr timeout, GuestAddr usig) {
  absl::Time deadline = SENTRY_TRY(GeteventsDeadline(t, timeout));
  SENTRY_TRY(SetTemporarySignalMaskPair(t, usig));
  auto r = GetEvents(t, ctx_id, min_nr, nr, events, deadline);
  if (!r.ok() && r.error() == kERESTARTSYS) return Errno(kERESTARTNOHAND);
  return r;
}

}  // namespace sentry::syscalls
