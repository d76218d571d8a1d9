#include "netstack/stream.h"

#include <cstring>

namespace sentry::netstack {

void StreamConn::Attach(int side, WaitQueue* q) {
  absl::MutexLock l(&mu_);
  half_[side].queue = q;
}

Result<bool> StreamConn::TrySend(int side, std::span<const uint8_t> data, size_t& done,
                                 Control& control) {
  absl::MutexLock l(&mu_);
  Half& mine = half_[side];
  Half& h = half_[1 - side];
  if (mine.err == EPIPE) return Errno(EPIPE);
  if (h.eof) return Errno(EPIPE);  // this side shut down writing
  if (h.gone || (h.rd_shut && !accept_after_close_)) {
    // TCP: the first send after the peer went away is taken (and dropped); the reset it
    // provokes makes the next one fail.
    if (accept_after_close_ && h.gone && !sent_after_close_[side]) {
      sent_after_close_[side] = true;
      mine.err = EPIPE;
      done = data.size();
      control = Control();
      return true;
    }
    return Errno(EPIPE);
  }
  size_t room = h.capacity > h.bytes ? h.capacity - h.bytes : 0;
  if (records_) {
    if (data.size() > h.capacity) return Errno(EMSGSIZE);
    if (room < data.size() || (room == 0 && h.bytes > 0)) return false;
    Segment s;
    s.data.assign(data.begin(), data.end());
    s.control = std::move(control);
    control = Control();
    h.bytes += data.size();
    h.q.push_back(std::move(s));
    done = data.size();
  } else {
    size_t n = std::min(room, data.size() - done);
    if (n == 0) return false;
    Segment s;
    s.data.assign(data.begin() + done, data.begin() + done + n);
    s.control = std::move(control);
    control = Control();
    h.bytes += n;
    h.q.push_back(std::move(s));
    done += n;
  }
  if (h.queue) h.queue->Notify(kEventIn);
  return records_ || done == data.size();
}

std::optional<Result<RecvResult>> StreamConn::TryRecv(int side, std::span<uint8_t> dst, int flags,
                                                      size_t& done, RecvResult& out) {
  std::deque<Segment> dropped;  // control data freed outside the lock
  absl::MutexLock l(&mu_);
  Half& h = half_[side];
  bool peek = flags & MSG_PEEK;
  bool discard = (flags & MSG_TRUNC) && !records_;
  if (records_) {
    if (!h.q.empty()) {
      Segment& s = h.q.front();
      size_t n = std::min(dst.size(), s.data.size());
      std::memcpy(dst.data(), s.data.data(), n);
      out.copied = n;
      out.length = s.data.size();
      if (n < s.data.size()) out.msg_flags |= MSG_TRUNC;
      out.msg_flags |= MSG_EOR;
      if (peek) {
        out.control.creds = s.control.creds;
        out.control.rights = s.control.rights;
      } else {
        out.control = std::move(s.control);
        h.bytes -= s.data.size();
        dropped.push_back(std::move(s));
        h.q.pop_front();
        if (half_[1 - side].queue) half_[1 - side].queue->Notify(kEventOut);
      }
      return Result<RecvResult>(std::move(out));
    }
  } else {
    size_t peek_at = 0;  // segments looked at so far with MSG_PEEK
    size_t peek_off = 0;
    while (done < dst.size() && peek_at < h.q.size()) {
      Segment& s = h.q[peek ? peek_at : 0];
      bool has_control = !s.control.empty();
      // A segment with control data starts a new read, and a read that took it stops.
      if (has_control && done > 0) break;
      size_t off = s.off + (peek ? peek_off : 0);
      size_t n = std::min(dst.size() - done, s.data.size() - off);
      if (!discard) std::memcpy(dst.data() + done, s.data.data() + off, n);
      done += n;
      if (has_control) {
        if (peek) {
          out.control.creds = s.control.creds;
          out.control.rights = s.control.rights;
        } else {
          out.control = std::move(s.control);
          s.control = Control();
        }
      }
      if (peek) {
        peek_off += n;
        if (off + n == s.data.size()) {
          peek_at++;
          peek_off = 0;
        }
      } else {
        s.off += n;
        h.bytes -= n;
        if (s.off == s.data.size()) {
          dropped.push_back(std::move(s));
          h.q.pop_front();
        }
      }
      if (has_control) break;
    }
    out.copied = done;
    out.length = done;
    if (done > 0 && !peek && half_[1 - side].queue) {
      half_[1 - side].queue->Notify(kEventOut);
    }
    bool want_all = (flags & MSG_WAITALL) && !peek && out.control.empty();
    if (done == dst.size() || (done > 0 && !want_all)) return Result<RecvResult>(std::move(out));
  }
  if (done > 0 && (h.eof || h.rd_shut || h.err)) return Result<RecvResult>(std::move(out));
  if (h.err && h.err != EPIPE) return Result<RecvResult>(Errno(std::exchange(h.err, 0)));
  if (h.eof || h.rd_shut) return Result<RecvResult>(std::move(out));
  if (dst.empty() && !records_) return Result<RecvResult>(std::move(out));
  return std::nullopt;
}

void StreamConn::Shutdown(int side, bool rd, bool wr) {
  absl::MutexLock l(&mu_);
  if (rd) half_[side].rd_shut = true;
  if (wr) half_[1 - side].eof = true;
  for (auto& h : half_) {
    if (h.queue) h.queue->Notify(kAllEvents);
  }
}

void StreamConn::Close(int side, bool reset) {
  std::deque<Segment> dropped;
  absl::MutexLock l(&mu_);
  Half& mine = half_[side];
  bool unread = !mine.q.empty();
  dropped.swap(mine.q);
  mine.bytes = 0;
  mine.gone = true;
  mine.queue = nullptr;
  Half& other = half_[1 - side];
  other.eof = true;
  if (unread || reset) other.err = ECONNRESET;
  if (other.queue) other.queue->Notify(kAllEvents);
}

EventMask StreamConn::Readiness(int side) {
  absl::MutexLock l(&mu_);
  const Half& in = half_[side];
  const Half& out = half_[1 - side];
  bool rcv_shut = in.eof || in.rd_shut;
  bool snd_shut = out.eof || out.rd_shut || out.gone;
  EventMask m = 0;
  if (!in.q.empty()) m |= kEventIn;
  if (rcv_shut) m |= kEventIn | kEventRdHup;
  if (rcv_shut && snd_shut) m |= kEventHup;
  if (in.err && in.err != EPIPE) m |= kEventErr;
  if (out.gone || out.bytes * 4 <= out.capacity) m |= kEventOut;
  return m;
}

size_t StreamConn::InQueue(int side) {
  absl::MutexLock l(&mu_);
  if (records_) return half_[side].q.empty() ? 0 : half_[side].q.front().data.size();
  return half_[side].bytes;
}

size_t StreamConn::OutQueue(int side) {
  absl::MutexLock l(&mu_);
  return half_[1 - side].bytes;
}

void StreamConn::SetCapacity(int side, size_t bytes) {
  absl::MutexLock l(&mu_);
  half_[1 - side].capacity = bytes;
  if (half_[side].queue) half_[side].queue->Notify(kEventOut);
}

}  // namespace sentry::netstack
