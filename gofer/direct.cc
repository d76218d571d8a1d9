// Direct file access: the Client's side that serves attach points in this process (client.h).
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <utility>

#include "gofer/client.h"
#include "gofer/launch.h"
#include "gofer/log.h"
#include "gofer/protocol.h"
#include "gofer/server_internal.h"

namespace sentry::gofer {
namespace {

uint32_t Code(Op op) { return static_cast<uint32_t>(op); }

ServerOptions ToServerOptions(const GoferOptions& o) {
  ServerOptions s;
  if (o.owner) s.owner = ServerOptions::Owner{o.owner->uid, o.owner->gid};
  for (const auto& [dev, ino] : o.hidden) s.hidden.insert({dev, ino});
  for (const auto& [dev, ino] : o.protected_files) s.protected_files.insert({dev, ino});
  for (const auto& [dev, ino, name] : o.protected_names) {
    s.protected_names.insert({dev, ino, name});
  }
  return s;
}

}  // namespace

std::vector<std::string> Client::GoDirect(const std::vector<std::string>& names,
                                          const GoferOptions& options) {
  std::vector<AttachPoint> attaches;
  std::vector<std::string> kept;
  for (const std::string& name : names) {
    int fd = -1;
    Result<std::string> reply = Call(Code(Op::kDonateRoot), Writer().Str(name).Take(), &fd);
    Reader r(reply.ok() ? *reply : std::string());
    uint8_t read_only = r.U8();
    uint8_t submounts = r.U8();
    if (!reply.ok() || !r.ok() || !r.done() || fd < 0 || submounts > 1) {
      if (fd >= 0) close(fd);
      Log().warn("attach point {}: no root fd from the gofer ({}); it keeps serving it", name,
                 reply.ok() ? "no fd" : strerror(reply.error().code()));
      kept.push_back(name);
      continue;
    }
    attaches.push_back(AttachPoint{name, fd, read_only != 0,
                                   submounts == 1 ? Submounts::kNone : Submounts::kAuto});
    local_names_.insert(name);
  }
  if (attaches.empty()) return kept;
  umask(0);
  local_ =
      std::make_unique<Server>(std::move(attaches), ToServerOptions(options), kLocalHandleBit | 1);
  local_->set_mutations(NewLender());
  return kept;
}

bool Client::IsLocal(uint32_t op, const std::string& request) const {
  Reader r(request);
  if (op == Code(Op::kAttach)) return local_names_.count(r.Str()) != 0;
  // Every other op names a handle first.
  return (r.U64() & kLocalHandleBit) != 0;
}

Result<std::string> Client::CallLocal(uint32_t op, const std::string& request, int* fd_out) {
  std::string msg = Writer().U32(op).Take() + request;
  Reader in(msg);
  Writer reply;
  int fd = -1;
  {
    absl::MutexLock lock(&local_mu_);
    if (!local_->HandleRequest(in, reply, &fd)) return std::string();  // kClose
  }
  // The fd is this process's own already: no copy to close, unlike a donated one.
  return DecodeReply(reply.data().data(), reply.size(), fd, fd_out);
}

int Client::LendCall(const std::string& request, int fd, int fd2) {
  if (fd < 0) return EBADF;  // every lent call lends at least one fd
  Result<std::string> r = Call(Code(Op::kLend), request, nullptr, fd, fd2);
  if (!r.ok()) return r.error().code();
  return r->empty() ? 0 : EIO;
}

void Client::PeerDied() {
  bool first;
  {
    absl::MutexLock lock(&mu_);
    first = MarkDeadLocked();
  }
  if (first && on_death_) on_death_();
}

void Client::WatchPeer() {
  if (watcher_.joinable()) return;
  watcher_wake_ = eventfd(0, EFD_CLOEXEC);
  if (watcher_wake_ < 0) return;  // then only a call notices the death, as in gofer mode
  watcher_ = std::thread([this] {
    for (;;) {
      // POLLRDHUP alone: the host wakes this poll for the peer's hang-up, not for the reply
      // to each call (a wake-up of a second thread, often on the other core, per lend).
      struct pollfd pfd[2] = {{sock_, POLLRDHUP, 0}, {watcher_wake_, POLLIN, 0}};
      if (poll(pfd, 2, -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (pfd[1].revents != 0) return;
      if ((pfd[0].revents & (POLLRDHUP | POLLHUP | POLLERR)) == 0) continue;
      PeerDied();
      return;
    }
  });
}

}  // namespace sentry::gofer
