#include "gofer/server.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gofer/confine.h"
#include "gofer/log.h"
#include "gofer/server_internal.h"

namespace sentry::gofer {

Server::Server(std::vector<AttachPoint> attaches, ServerOptions opts, Handle first_handle)
    : attaches_(std::move(attaches)), opts_(opts), table_(first_handle) {
  chown_to_owner_ = opts_.owner && (opts_.owner->uid != geteuid() || opts_.owner->gid != getegid());
}

bool Server::HandleRequest(Reader& in, Writer& reply, int* reply_fd, const int* lent) {
  *reply_fd = -1;
  reply_fd_ = -1;
  lent_ = lent;
  auto op = static_cast<Op>(in.U32());
  if (op == Op::kClose) {
    Handle h = in.U64();
    if (in.ok() && in.done()) table_.Close(h);
    return false;
  }
  if (op == Op::kPlace) {
    uint32_t cpu = in.U32();
    if (in.ok() && in.done() && cpu < CPU_SETSIZE) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpu, &set);
      (void)sched_setaffinity(0, sizeof(set), &set);  // a CPU we may not use: stay
    }
    return false;
  }
  Writer out;
  Result<void> r = in.ok() ? Dispatch(op, in, out) : Result<void>(Errno(EINVAL));
  if (!r.ok()) {
    if (reply_fd_ >= 0) close(reply_fd_);
    reply.I32(r.error().code());
    return true;
  }
  reply.I32(0).Bytes(out.data());
  *reply_fd = reply_fd_;
  return true;
}

Result<void> Server::Dispatch(Op op, Reader& in, Writer& out) {
  switch (op) {
    case Op::kAttach:
      return Attach(in, out);
    case Op::kWalk:
      return Walk(in, out);
    case Op::kStat:
      return Stat(in, out);
    case Op::kOpen:
      return Open(in, out);
    case Op::kWalkOpen:
      return WalkOpen(in, out);
    case Op::kCreate:
      return Create(in, out);
    case Op::kMkdir:
      return Mkdir(in, out);
    case Op::kSymlink:
      return Symlink(in, out);
    case Op::kMknod:
      return Mknod(in, out);
    case Op::kLink:
      return Link(in, out);
    case Op::kUnlink:
      return Unlink(in, out);
    case Op::kRename:
      return Rename(in, out);
    case Op::kReadLink:
      return ReadLink(in, out);
    case Op::kSetAttr:
      return SetAttr(in, out);
    case Op::kReadDir:
      return ReadDir(in, out);
    case Op::kStatFs:
      return StatFs(in, out);
    case Op::kGetXattr:
      return GetXattr(in, out);
    case Op::kListXattr:
      return ListXattr(in, out);
    case Op::kSetXattr:
      return SetXattr(in, out);
    case Op::kRemoveXattr:
      return RemoveXattr(in, out);
    case Op::kDonateRoot:
      return DonateRoot(in, out);
    case Op::kLend:
      return Lend(in, out);
    case Op::kClose:
    case Op::kPlace:
      break;  // handled by the caller: they have no reply
  }
  return Errno(ENOSYS);
}

namespace {

struct Options {
  int sock = -1;
  struct Mount {
    std::string name, host_path;
    bool read_only = false;
    Submounts submounts = Submounts::kAuto;
  };
  std::vector<Mount> mounts;
  ServerOptions server;
  bool unsafe_no_confinement = false;  // serve even if a confinement step failed
};

// Parses the options after a host path: "ro" or "rw", then ",submounts=auto|none".
bool ParseAttachOptions(const std::string& s, Options::Mount* m) {
  size_t comma = s.find(',');
  std::string mode = s.substr(0, comma);
  if (mode != "ro" && mode != "rw") return false;
  m->read_only = mode == "ro";
  while (comma != std::string::npos) {
    size_t next = s.find(',', comma + 1);
    std::string opt = s.substr(comma + 1, next == std::string::npos ? next : next - comma - 1);
    comma = next;
    constexpr std::string_view kSubmounts = "submounts=";
    if (opt.rfind(kSubmounts, 0) != 0) return false;
    auto sm = ParseSubmounts(std::string_view(opt).substr(kSubmounts.size()));
    if (!sm) return false;
    m->submounts = *sm;
  }
  return true;
}

// "NAME=HOSTPATH[:ro|:rw[,submounts=auto|none]]". The options are stripped if present, so a
// launcher that always writes them can pass any host path.
bool ParseAttach(const std::string& arg, Options::Mount* m) {
  size_t eq = arg.find('=');
  if (eq == 0 || eq == std::string::npos) return false;
  m->name = arg.substr(0, eq);
  m->host_path = arg.substr(eq + 1);
  size_t colon = m->host_path.rfind(':');
  if (colon != std::string::npos && colon > 0 &&
      ParseAttachOptions(m->host_path.substr(colon + 1), m)) {
    m->host_path.resize(colon);
  }
  return !m->host_path.empty();
}

// "UID:GID", decimal.
bool ParseOwner(const std::string& s, ServerOptions* opts) {
  char* end = nullptr;
  errno = 0;
  unsigned long uid = strtoul(s.c_str(), &end, 10);
  if (end == s.c_str() || *end != ':' || errno != 0 || uid >= UINT32_MAX) return false;
  const char* g = end + 1;
  unsigned long gid = strtoul(g, &end, 10);
  if (end == g || *end != '\0' || errno != 0 || gid >= UINT32_MAX) return false;
  opts->owner = ServerOptions::Owner{static_cast<uid_t>(uid), static_cast<gid_t>(gid)};
  return true;
}

// "DEV:INO" (decimal) at the start of `s`; `*rest` gets what follows it.
bool ParseDevIno(const char* s, std::pair<dev_t, ino_t>* id, const char** rest) {
  char* end = nullptr;
  errno = 0;
  unsigned long long dev = strtoull(s, &end, 10);
  if (end == s || *end != ':' || errno != 0) return false;
  const char* i = end + 1;
  unsigned long long ino = strtoull(i, &end, 10);
  if (end == i || errno != 0) return false;
  *id = {static_cast<dev_t>(dev), static_cast<ino_t>(ino)};
  *rest = end;
  return true;
}

// "DEV:INO": a host file (to hide, or to protect).
bool ParseFileId(const std::string& s, std::set<std::pair<dev_t, ino_t>>* out) {
  std::pair<dev_t, ino_t> id;
  const char* rest;
  if (!ParseDevIno(s.c_str(), &id, &rest) || *rest != '\0') return false;
  out->insert(id);
  return true;
}

// "DEV:INO:NAME": a protected name in the directory DEV:INO.
bool ParseProtectedName(const std::string& s, ServerOptions* opts) {
  std::pair<dev_t, ino_t> id;
  const char* rest;
  if (!ParseDevIno(s.c_str(), &id, &rest) || *rest != ':') return false;
  std::string name = rest + 1;
  if (!CheckName(name).ok()) return false;
  opts->protected_names.insert({id.first, id.second, name});
  return true;
}

bool ParseArgs(int argc, char** argv, Options* opts) {
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a.rfind("--sock-fd=", 0) == 0) {
      char* end = nullptr;
      long fd = strtol(a.c_str() + 10, &end, 10);
      if (*end != '\0' || fd < 0 || fd > 1 << 30) return false;
      opts->sock = static_cast<int>(fd);
    } else if (a.rfind("--attach=", 0) == 0) {
      Options::Mount m;
      if (!ParseAttach(a.substr(9), &m)) return false;
      opts->mounts.push_back(std::move(m));
    } else if (a == "--unsafe-no-confinement") {
      opts->unsafe_no_confinement = true;
    } else if (a.rfind("--owner=", 0) == 0) {
      if (!ParseOwner(a.substr(8), &opts->server)) return false;
    } else if (a.rfind("--hide=", 0) == 0) {
      if (!ParseFileId(a.substr(7), &opts->server.hidden)) return false;
    } else if (a.rfind("--protect=", 0) == 0) {
      if (!ParseFileId(a.substr(10), &opts->server.protected_files)) return false;
    } else if (a.rfind("--protect-name=", 0) == 0) {
      if (!ParseProtectedName(a.substr(15), &opts->server)) return false;
    } else {
      return false;
    }
  }
  return opts->sock >= 0;
}

// The gofer starts with no fds but stdio and its socket, whatever its parent leaked.
void CloseInheritedFds(int sock) {
  if (sock > 3) close_range(3, sock - 1, 0);
  close_range(sock + 1, ~0U, 0);
}

void RaiseFdLimit() {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
}

bool OpenAttaches(const Options& opts, std::vector<AttachPoint>* out) {
  for (const auto& m : opts.mounts) {
    int fd = open(m.host_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
      Log().error("cannot open attach root {}: {}", m.host_path, strerror(errno));
      return false;
    }
    out->push_back(AttachPoint{m.name, fd, m.read_only, m.submounts});
  }
  return true;
}

int Serve(int sock, Server& server) {
  std::vector<char> buf(kMaxMessage);
  for (;;) {
    size_t len = 0;
    int lent[2] = {-1, -1};  // only kLend uses fds the Sentry sends
    int err = RecvMessage(sock, buf.data(), buf.size(), &len, &lent[0], &lent[1]);
    if (lent[0] == kFdLost) lent[0] = -1;
    auto close_lent = [&] {
      for (int& fd : lent) {
        if (fd >= 0) close(fd);
        fd = -1;
      }
    };
    if (err == ECONNRESET) return 0;  // the Sentry is gone
    if (err != 0) close_lent();
    Writer reply;
    int reply_fd = -1;
    if (err == EMSGSIZE) {
      reply.I32(EINVAL);  // only a request with a reply can be this long
    } else if (err != 0) {
      Log().error("recvmsg: {}", strerror(err));
      return 1;
    } else {
      Reader in(buf.data(), len);
      bool has_reply = server.HandleRequest(in, reply, &reply_fd, lent);
      close_lent();
      if (!has_reply) continue;
    }
    err = SendMessage(sock, reply.data(), reply_fd);
    if (reply_fd >= 0) close(reply_fd);
    if (err == EPIPE || err == ECONNRESET) return 0;
    if (err != 0) {
      Log().error("sendmsg: {}", strerror(err));
      return 1;
    }
  }
}

}  // namespace

int GoferMain(int argc, char** argv) {
  Options opts;
  if (!ParseArgs(argc, argv, &opts)) {
    fprintf(stderr,
            "usage: sentry gofer --sock-fd=N [--owner=UID:GID] [--unsafe-no-confinement] "
            "--attach=NAME=HOSTPATH[:ro|:rw[,submounts=auto|none]] ...\n");
    return 2;
  }
  struct stat st;
  if (fstat(opts.sock, &st) != 0 || !S_ISSOCK(st.st_mode)) {
    Log().error("--sock-fd={} is not a socket", opts.sock);
    return 2;
  }
  CloseInheritedFds(opts.sock);
  prctl(PR_SET_NAME, "sentry-gofer");  // how ps and the tests tell it from the Sentry
  Log();     // built before seccomp, so that building it can make no unexpected system call
  umask(0);  // modes arrive with the guest's umask applied
  RaiseFdLimit();
  std::vector<AttachPoint> attaches;
  if (!OpenAttaches(opts, &attaches)) return 1;
  Server server(std::move(attaches), opts.server);
  std::vector<std::string> failures = Confine(opts.sock, server.needs_chown()).failures;
  if (!failures.empty() && !opts.unsafe_no_confinement) {
    // Fail closed: an unconfined gofer would serve the host's whole file system.
    Log().error(
        "cannot confine the gofer ({}{}); refusing to serve (--unsafe-no-confinement "
        "serves anyway, for debugging only)",
        failures[0], failures.size() > 1 ? ", ..." : "");
    return 1;
  }
  for (const auto& failure : failures) {
    Log().warn("UNSAFE: confinement step failed, serving anyway: {}", failure);
  }
  if (SendMessage(opts.sock, Writer().I32(0).Bytes(kHello).Take()) != 0) return 1;
  return Serve(opts.sock, server);
}

}  // namespace sentry::gofer
