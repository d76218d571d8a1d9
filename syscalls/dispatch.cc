#include "syscalls/dispatch.h"

#include <arpa/inet.h>
#include <asm/unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include <atomic>
#include <bitset>
#include <chrono>
#include <cinttypes>
#include <optional>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "sentry/base/logging.h"
#include "syscalls/audit.h"
#include "syscalls/table.h"

namespace sentry::syscalls {
namespace {

// "{AF_INET, 127.0.0.1:80}", "{AF_UNIX, "/run/x.sock"}", "{AF_UNIX, @name}".
std::string FormatSockAddr(kernel::Task& t, uint64_t v, uint64_t len) {
  if (v == 0) return "NULL";
  len = std::min<uint64_t>(len, sizeof(struct sockaddr_storage));
  struct sockaddr_storage ss {};
  if (len < sizeof(sa_family_t) ||
      !t.CopyInBytes(GuestAddr(v), {reinterpret_cast<uint8_t*>(&ss), len}).ok()) {
    return absl::StrFormat("%#x", v);
  }
  char ip[INET6_ADDRSTRLEN] = "?";
  switch (ss.ss_family) {
    case AF_INET: {
      auto* sin = reinterpret_cast<struct sockaddr_in*>(&ss);
      inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip));
      return absl::StrFormat("{AF_INET, %s:%u}", ip, ntohs(sin->sin_port));
    }
    case AF_INET6: {
      auto* sin6 = reinterpret_cast<struct sockaddr_in6*>(&ss);
      inet_ntop(AF_INET6, &sin6->sin6_addr, ip, sizeof(ip));
      return absl::StrFormat("{AF_INET6, [%s]:%u}", ip, ntohs(sin6->sin6_port));
    }
    case AF_UNIX: {
      auto* sun = reinterpret_cast<struct sockaddr_un*>(&ss);
      size_t n = len - offsetof(struct sockaddr_un, sun_path);
      if (n == 0) return "{AF_UNIX}";
      if (sun->sun_path[0] == '\0') {
        return absl::StrFormat("{AF_UNIX, @%s}", std::string(sun->sun_path + 1, n - 1));
      }
      return absl::StrFormat("{AF_UNIX, \"%s\"}",
                             std::string(sun->sun_path, strnlen(sun->sun_path, n)));
    }
    case AF_NETLINK:
      return "{AF_NETLINK}";
    case AF_UNSPEC:
      return "{AF_UNSPEC}";
    default:
      return absl::StrFormat("{family=%d}", ss.ss_family);
  }
}

std::string FormatArg(kernel::Task& t, Arg kind, uint64_t v, uint64_t next) {
  switch (kind) {
    case Arg::kSockAddr:
      return FormatSockAddr(t, v, next);
    case Arg::kInt:
      return absl::StrFormat("%d", static_cast<int64_t>(v));
    case Arg::kFd:
      return static_cast<int>(v) == -100 ? "AT_FDCWD" : absl::StrFormat("%d", static_cast<int>(v));
    case Arg::kUint:
      return absl::StrFormat("%u", v);
    case Arg::kOct:
      return absl::StrFormat("0%o", v);
    case Arg::kSig:
      return absl::StrFormat("%d", static_cast<int>(v));
    case Arg::kStr: {
      auto s = t.CopyInString(GuestAddr(v), 256);
      if (!s.ok()) return absl::StrFormat("%#x", v);
      std::string out = "\"";
      for (char c : *s) {
        if (c == '"' || c == '\\') out += '\\';
        if (c == '\n') {
          out += "\\n";
          continue;
        }
        out += c;
      }
      return out + "\"";
    }
    case Arg::kNone:
    case Arg::kHex:
    case Arg::kPtr:
      break;
  }
  return v == 0 ? "NULL" : absl::StrFormat("%#x", v);
}

void Strace(kernel::Task& t, const SyscallEntry* e, uint64_t nr, const SyscallArgs& a, int64_t ret,
            std::chrono::steady_clock::duration took, const std::vector<std::string>& pre) {
  std::string line = absl::StrFormat("[%d:%d %s] ", t.tg().tgid, t.tid(), t.comm());
  if (e == nullptr) {
    line += absl::StrFormat("syscall_%d(...)", nr);
  } else {
    line += e->name;
    line += "(";
    line += absl::StrJoin(pre, ", ");
    line += ")";
  }
  if (ret < 0 && ret > -4096) {
    const char* name = ErrnoName(static_cast<int>(-ret));
    line += absl::StrFormat(" = -1 %s", name ? name : std::to_string(-ret));
  } else {
    line += absl::StrFormat(" = %d", ret);
  }
  line += absl::StrFormat(" (%dµs)",
                          std::chrono::duration_cast<std::chrono::microseconds>(took).count());
  (void)a;
  log::Strace().info("{}", line);
}

// Unknown or unimplemented numbers are logged once each.
void LogUnimplemented(uint64_t nr, const SyscallEntry* e) {
  static std::atomic<uint64_t> seen[8];
  if (nr >= 512) return;
  uint64_t bit = uint64_t{1} << (nr % 64);
  if (seen[nr / 64].fetch_or(bit) & bit) return;
  log::Sentry().info("unimplemented syscall {} ({}): ENOSYS", nr, e ? e->name : "unknown");
}

// /proc/PID/io: calls and bytes of the read and write families, as Linux's rchar/syscr.
void CountIo(kernel::Task& t, uint64_t nr, int64_t ret) {
  bool read = nr == SYS_read || nr == SYS_readv || nr == SYS_pread64 || nr == SYS_preadv ||
              nr == SYS_preadv2;
  bool write = nr == SYS_write || nr == SYS_writev || nr == SYS_pwrite64 || nr == SYS_pwritev ||
               nr == SYS_pwritev2;
  if (!(read || write) || ret == -EBADF) return;
  kernel::ThreadGroup& tg = t.tg();
  (read ? tg.io_syscr : tg.io_syscw).fetch_add(1, std::memory_order_relaxed);
  if (ret > 0) (read ? tg.io_rchar : tg.io_wchar).fetch_add(ret, std::memory_order_relaxed);
}

std::atomic<bool> g_counting{false};
std::atomic<uint64_t> g_counts[513];

}  // namespace

void StartSyscallCounts() { g_counting.store(true); }

std::vector<std::pair<uint64_t, uint64_t>> SyscallCounts() {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (uint64_t nr = 0; nr < 513; nr++) {
    uint64_t n = g_counts[nr].load(std::memory_order_relaxed);
    if (n != 0) out.emplace_back(nr, n);
  }
  return out;
}

int64_t Dispatch(kernel::Task& t) {
  platform::Registers& r = t.regs();
  uint64_t nr = r.orig_rax;
  SyscallArgs a{{r.rdi, r.rsi, r.rdx, r.r10, r.r8, r.r9}};
  const SyscallEntry* e = Lookup(nr);
  if (g_counting.load(std::memory_order_relaxed)) {
    g_counts[std::min<uint64_t>(nr, 512)].fetch_add(1, std::memory_order_relaxed);
  }
  bool tracing = log::StraceEnabled();
  std::vector<std::string> pre;
  // Only strace shows a call's duration.
  auto start = tracing ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  if (tracing && e) {
    for (int i = 0; i < 6 && e->args[i] != Arg::kNone; i++)
      pre.push_back(FormatArg(t, e->args[i], a.a[i], i < 5 ? a.a[i + 1] : 0));
  }
  bool auditing = audit::Enabled();
  audit::Pre audit_pre;
  if (auditing) audit::Before(t, nr, a, audit_pre);
  int64_t ret;
  std::optional<int64_t> filtered;
  if (t.seccomp_on_.load(std::memory_order_relaxed)) filtered = kernel::SeccompCheckSyscall(t);
  if (filtered) {
    ret = *filtered;  // the guest's seccomp filter decided; the syscall does not run
  } else if (e == nullptr || e->handler == nullptr) {
    LogUnimplemented(nr, e);
    ret = -ENOSYS;
  } else {
    Result<uint64_t> res = e->handler(t, a);
    ret = res.ok() ? static_cast<int64_t>(*res) : -static_cast<int64_t>(res.error().code());
    if (!res.ok() && log::Sentry().should_log(spdlog::level::debug)) {
      log::Sentry().debug("{}: {} at {}:{}", e->name, ErrnoName(res.error().code()) ?: "?",
                          res.error().file(), res.error().line());
    }
  }
  CountIo(t, nr, ret);
  if (auditing) audit::After(t, nr, a, ret, audit_pre);
  if (tracing) Strace(t, e, nr, a, ret, std::chrono::steady_clock::now() - start, pre);
  if (!t.exiting_) r.rax = static_cast<uint64_t>(ret);
  return ret;
}

}  // namespace sentry::syscalls
