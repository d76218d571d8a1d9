// Message transport of the gofer protocol: sendmsg/recvmsg with at most two SCM_RIGHTS fds
// (one from the gofer; two when the Sentry lends a rename's or a link's directories).
#include "gofer/protocol.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace sentry::gofer {
namespace {

// Control buffer for up to two fds, aligned as cmsghdr requires.
union FdControl {
  char buf[CMSG_SPACE(2 * sizeof(int))];
  struct cmsghdr align;
};

}  // namespace

void Reader::Copy(void* dst, size_t n) {
  if (static_cast<size_t>(end_ - p_) < n) {
    ok_ = false;
    p_ = end_;
    return;
  }
  memcpy(dst, p_, n);
  p_ += n;
}

int SendMessage(int sock, std::string_view msg, int fd, int fd2) {
  struct iovec iov = {const_cast<char*>(msg.data()), msg.size()};
  struct msghdr mh = {};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  FdControl control = {};
  int fds[2] = {fd, fd2};
  size_t n = fd < 0 ? 0 : fd2 < 0 ? 1 : 2;
  if (n > 0) {
    mh.msg_control = control.buf;
    mh.msg_controllen = CMSG_SPACE(n * sizeof(int));
    struct cmsghdr* cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(n * sizeof(int));
    memcpy(CMSG_DATA(cm), fds, n * sizeof(int));
  }
  for (;;) {
    ssize_t n = sendmsg(sock, &mh, MSG_NOSIGNAL);
    if (n >= 0) return static_cast<size_t>(n) == msg.size() ? 0 : EMSGSIZE;
    if (errno != EINTR) return errno;
  }
}

int RecvMessage(int sock, char* buf, size_t cap, size_t* len, int* fd, int* fd2) {
  *fd = -1;
  int second = -1;
  struct iovec iov = {buf, cap};
  struct msghdr mh = {};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  FdControl control = {};
  mh.msg_control = control.buf;
  mh.msg_controllen = sizeof(control.buf);
  ssize_t n;
  do {
    n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return errno;
  if (n == 0) return ECONNRESET;  // SOCK_SEQPACKET: 0 bytes is EOF (we never send empty)
  for (struct cmsghdr* cm = CMSG_FIRSTHDR(&mh); cm != nullptr; cm = CMSG_NXTHDR(&mh, cm)) {
    if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS) continue;
    if (cm->cmsg_len == CMSG_LEN(sizeof(int))) {
      memcpy(fd, CMSG_DATA(cm), sizeof(int));
    } else if (cm->cmsg_len == CMSG_LEN(2 * sizeof(int))) {
      int two[2];
      memcpy(two, CMSG_DATA(cm), sizeof(two));
      *fd = two[0];
      second = two[1];
    }
  }
  if (fd2 != nullptr) {
    *fd2 = second;
  } else if (second >= 0) {
    close(second);
  }
  if ((mh.msg_flags & MSG_CTRUNC) && !(mh.msg_flags & MSG_TRUNC) && *fd < 0) {
    *fd = kFdLost;
    *len = static_cast<size_t>(n);
    return 0;
  }
  if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
    if (fd2 != nullptr && *fd2 >= 0) close(*fd2);
    if (fd2 != nullptr) *fd2 = -1;
    return EMSGSIZE;
  }
  *len = static_cast<size_t>(n);
  return 0;
}

}  // namespace sentry::gofer
