// A connected pair of stream (or seqpacket) endpoints inside the Sentry: what AF_UNIX stream
// and seqpacket sockets and loopback TCP share. Each side has a receive queue of segments
// written by the other side; a segment carries the bytes of one send and its control data.
//
// Lock order: StreamConn::mu_ -> WaitQueue::mu_ (of either side's socket).
#pragma once

#include <array>
#include <deque>
#include <memory>

#include "netstack/socket.h"

namespace sentry::netstack {

class StreamConn {
 public:
  // `records`: seqpacket (each send is one record, a read takes at most one). `capacity`:
  // bytes each receive queue holds before senders block.
  StreamConn(bool records, size_t capacity) : records_(records) {
    for (auto& h : half_) h.capacity = capacity;
  }

  // The sockets' wait queues, notified as data, room, EOF and errors come and go. Each side
  // sets its own at connection and clears it when it goes away (Close).
  void Attach(int side, WaitQueue* q);

  // Sends from `side`. Blocks (through `wait`, which sleeps on the side's own queue) until
  // everything is queued, unless `nonblock`. EPIPE once the other side can no longer read.
  // `wait` returns an error to stop early (a signal, a timeout).
  template <typename WaitFn>
  Result<size_t> Send(int side, std::span<const uint8_t> data, Control& control, bool nonblock,
                      WaitFn wait);
  // Receives into `dst` on `side`: MSG_PEEK, MSG_WAITALL, MSG_TRUNC are honoured (flags).
  template <typename WaitFn>
  Result<RecvResult> Recv(int side, std::span<uint8_t> dst, int flags, bool nonblock, WaitFn wait);

  // shutdown(2) by `side`: SHUT_RD stops its reading, SHUT_WR sends EOF to the other side.
  void Shutdown(int side, bool rd, bool wr);
  // The side's socket is gone. With unread data (or `reset`), the other side sees
  // ECONNRESET, as Linux's unix and TCP sockets do; otherwise EOF.
  void Close(int side, bool reset);

  EventMask Readiness(int side);
  size_t InQueue(int side);
  size_t OutQueue(int side);
  void SetCapacity(int side, size_t bytes);
  // A send from a side whose peer has closed: TCP accepts the first one (the peer's RST
  // comes back), so the caller tells whether EPIPE should wait a round.
  void set_accept_after_close(bool v) { accept_after_close_ = v; }

 private:
  struct Segment {
    std::vector<uint8_t> data;
    size_t off = 0;
    Control control;
  };
  // The data flowing toward one side.
  struct Half {
    std::deque<Segment> q;
    size_t bytes = 0;
    size_t capacity = 0;
    bool eof = false;            // the sender shut down writing or went away
    bool rd_shut = false;        // the receiver shut down reading
    bool gone = false;           // the receiver went away
    int err = 0;                 // an error the receiver sees next (ECONNRESET)
    WaitQueue* queue = nullptr;  // the receiver's socket queue
  };

  // One attempt at queueing; true once everything (and the control data) is queued.
  Result<bool> TrySend(int side, std::span<const uint8_t> data, size_t& done, Control& control);
  // One attempt at receiving; nullopt when the caller must wait.
  std::optional<Result<RecvResult>> TryRecv(int side, std::span<uint8_t> dst, int flags,
                                            size_t& done, RecvResult& out);

  const bool records_;
  bool accept_after_close_ = false;
  absl::Mutex mu_;
  std::array<Half, 2> half_ ABSL_GUARDED_BY(mu_);
  std::array<bool, 2> sent_after_close_ ABSL_GUARDED_BY(mu_) = {false, false};
};

template <typename WaitFn>
Result<size_t> StreamConn::Send(int side, std::span<const uint8_t> data, Control& control,
                                bool nonblock, WaitFn wait) {
  size_t done = 0;
  for (;;) {
    auto r = TrySend(side, data, done, control);
    if (!r.ok()) return done ? Result<size_t>(done) : r.error();
    if (*r) return done;
    if (nonblock) return done ? Result<size_t>(done) : Errno(EAGAIN);
    auto w = wait();
    if (!w.ok()) return done ? Result<size_t>(done) : w.error();
  }
}

template <typename WaitFn>
Result<RecvResult> StreamConn::Recv(int side, std::span<uint8_t> dst, int flags, bool nonblock,
                                    WaitFn wait) {
  size_t done = 0;
  RecvResult out;
  for (;;) {
    if (auto r = TryRecv(side, dst, flags, done, out)) return std::move(*r);
    if (nonblock) return done ? Result<RecvResult>(std::move(out)) : Errno(EAGAIN);
    auto w = wait();
    if (!w.ok()) return done ? Result<RecvResult>(std::move(out)) : w.error();
  }
}

}  // namespace sentry::netstack
