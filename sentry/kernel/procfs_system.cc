// The machine-wide files of /proc. Memory and load come from the host (what a container
// sees); uptime, CPU time and task counts are the sandbox's, so that /proc/uptime, /proc/stat,
// /proc/loadavg and sysinfo(2) agree with each other.
#include "sentry/kernel/procfs_system.h"

#include <arpa/inet.h>
#include <linux/rtnetlink.h>
#include <net/route.h>

#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "netstack/host_interfaces.h"
#include "netstack/ping.h"
#include "netstack/stack.h"
#include "sentry/base/host_files.h"
#include "sentry/kernel/aio.h"
#include "sentry/kernel/keys.h"
#include "sentry/kernel/procfs.h"
#include "sentry/kernel/sched.h"
#include "sentry/kernel/sysinfo.h"
#include "vfs/lock.h"

namespace sentry::kernel {
namespace {

using vfs::InodeRef;
using vfs::SyntheticDir;
using vfs::SyntheticFile;

std::string HostText(const char* path) { return ReadHostFile(path).value_or(""); }

// A random UUID, version 4.
std::string NewUuid() {
  uint8_t b[16];
  arc4random_buf(b, sizeof(b));
  return absl::StrFormat("%02x%02x%02x%02x-%02x%02x-4%x%02x-%x%x%02x-%02x%02x%02x%02x%02x%02x\n",
                         b[0], b[1], b[2], b[3], b[4], b[5], b[6] & 15, b[7], 8 | (b[8] & 3),
                         b[8] >> 4, b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

constexpr int64_t kNsPerTick = 10'000'000;  // USER_HZ 100

// The network stack of whoever reads a /proc/sys/net or /proc/net file: the reading task's
// network namespace, or the sandbox's first one when no task reads (the Sentry itself).
netstack::Stack& ReaderStack(Kernel& k) {
  Task* t = Task::Current();
  return t ? *t->ns().net->stack : k.net();
}

class Builder {
 public:
  Builder(Kernel& k, vfs::MemSuperRef sb) : k_(k), sb_(std::move(sb)) {}

  InodeRef File(SyntheticFile::Generator gen) {
    return std::make_shared<SyntheticFile>(sb_, 0444, std::move(gen));
  }
  // Writable by root, as Linux's proc_dointvec: an integer, surrounding blanks allowed.
  InodeRef LeaseBreakTimeFile() {
    auto gen = []() -> Result<std::string> {
      return absl::StrFormat("%d\n", vfs::LeaseBreakTime());
    };
    auto write = [](const std::string& text) -> Result<void> {
      int v;
      if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &v)) return Errno(EINVAL);
      vfs::SetLeaseBreakTime(v);
      return Ok();
    };
    return std::make_shared<SyntheticFile>(sb_, 0644, gen, write);
  }
  // net.ipv4.ping_group_range of the reader's network namespace; writable by root.
  InodeRef PingGroupRangeFile() {
    auto stack = [this]() -> netstack::Stack& { return ReaderStack(k_); };
    auto gen = [stack]() -> Result<std::string> {
      auto [low, high] = stack().PingGroupRange();
      return absl::StrFormat("%u\t%u\n", low, high);
    };
    auto write = [stack](const std::string& text) -> Result<void> {
      std::vector<std::string> f =
          absl::StrSplit(text, absl::ByAnyChar(" \t\n"), absl::SkipEmpty());
      uint64_t low, high;
      if (f.size() != 2 || !absl::SimpleAtoi(f[0], &low) || !absl::SimpleAtoi(f[1], &high)) {
        return Errno(EINVAL);
      }
      return stack().SetPingGroupRange(low, high);
    };
    return std::make_shared<SyntheticFile>(sb_, 0644, gen, write);
  }
  // net.ipv4.ip_unprivileged_port_start of the reader's network namespace; writable by root.
  InodeRef UnprivilegedPortStartFile() {
    auto stack = [this]() -> netstack::Stack& { return ReaderStack(k_); };
    auto gen = [stack]() -> Result<std::string> {
      return absl::StrFormat("%d\n", stack().UnprivilegedPortStart());
    };
    auto write = [stack](const std::string& text) -> Result<void> {
      int64_t v;
      if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &v)) return Errno(EINVAL);
      return stack().SetUnprivilegedPortStart(v);
    };
    return std::make_shared<SyntheticFile>(sb_, 0644, gen, write);
  }
  InodeRef Text(std::string s) {
    return File([s]() -> Result<std::string> { return s; });
  }
  InodeRef Host(const char* path) {
    return File([path]() -> Result<std::string> { return HostText(path); });
  }
  std::shared_ptr<SyntheticDir> Dir() { return std::make_shared<SyntheticDir>(sb_, 0555); }

  std::string Uptime();
  std::string Stat();
  std::shared_ptr<SyntheticDir> Sys();

 private:
  Kernel& k_;
  vfs::MemSuperRef sb_;
};

std::string Builder::Uptime() {
  double up = absl::ToDoubleSeconds(kernel::Uptime(k_));
  CpuTime busy;
  {
    absl::MutexLock l(&k_.mu());
    busy = SandboxCpuTime(k_);
  }
  double idle = std::max(0.0, up * Cpus().count() - busy.total_ns() / 1e9);
  return absl::StrFormat("%.2f %.2f\n", up, idle);
}

std::string Builder::Stat() {
  int64_t up_ticks = absl::ToInt64Nanoseconds(kernel::Uptime(k_)) / kNsPerTick;
  CpuTime busy;
  uint64_t ctxt = 0;
  int running = 0, blocked = 0, last = 0;
  {
    absl::MutexLock l(&k_.mu());
    busy = SandboxCpuTime(k_);
    for (auto& [tid, t] : k_.tasks()) {
      ctxt += t->nvcsw_.load(std::memory_order_relaxed);
      if (!t->sleeping_.load(std::memory_order_relaxed)) running++;
    }
    last = k_.LastPid();
  }
  // The sandbox's time spread evenly over its CPUs; each CPU idles for the rest.
  const SandboxCpus& cpus = Cpus();
  int n = cpus.count();
  int64_t user = busy.user_ns / kNsPerTick, sys = busy.sys_ns / kNsPerTick;
  auto line = [](const std::string& name, int64_t u, int64_t s, int64_t idle) {
    return absl::StrFormat("%s %d 0 %d %d 0 0 0 0 0 0\n", name, u, s, std::max<int64_t>(idle, 0));
  };
  std::string out = line("cpu ", user, sys, up_ticks * n - user - sys);
  for (int c = 0; c < kMaxCpus; c++) {
    if (!cpus.online[c]) continue;
    out += line(absl::StrFormat("cpu%d", c), user / n, sys / n, up_ticks - (user + sys) / n);
  }
  out += absl::StrFormat(
      "intr 0\nctxt %d\nbtime %d\nprocesses %d\nprocs_running %d\nprocs_blocked %d\n"
      "softirq 0 0 0 0 0 0 0 0 0 0 0\n",
      ctxt, absl::ToUnixSeconds(k_.boot_time), last, std::max(running, 1), blocked);
  return out;
}

std::shared_ptr<SyntheticDir> Builder::Sys() {
  auto sys = Dir();
  auto kernel = Dir();
  // The reader's UTS namespace's names.
  auto uts = [&k = k_](bool host) {
    return [&k, host]() -> Result<std::string> {
      Task* t = Task::Current();
      absl::MutexLock l(&k.mu());
      const UtsNamespace& u = t ? *t->ns().uts : k.init_uts();
      return (host ? u.hostname : u.domainname) + "\n";
    };
  };
  // Written as Linux's proc_do_uts_string: the bytes before the first newline or NUL, at
  // most 64, become the writer's UTS namespace's name; the mode (0644, root's) decides who.
  auto set_uts = [&k = k_](bool host) {
    return [&k, host](const std::string& text) -> Result<void> {
      Task* t = Task::Current();
      if (t == nullptr) return Errno(EPERM);
      std::string v = text.substr(0, std::min(text.find_first_of(std::string("\n\0", 2)), 64ul));
      absl::MutexLock l(&k.mu());
      UtsNamespace& u = *t->ns().uts;
      (host ? u.hostname : u.domainname) = v;
      return Ok();
    };
  };
  kernel->Add("hostname", std::make_shared<SyntheticFile>(sb_, 0644, uts(true), set_uts(true)));
  kernel->Add("domainname", std::make_shared<SyntheticFile>(sb_, 0644, uts(false), set_uts(false)));
  kernel->Add("osrelease", Text(OsRelease() + "\n"));
  kernel->Add("ostype", Text("Linux\n"));
  kernel->Add("version", Text("#1 SMP sentry\n"));
  kernel->Add("ngroups_max", Text("65536\n"));
  // Linux's default: 1024 per possible CPU, at least 32768 (ps sizes its PID column by it).
  // Since Linux 6.14 it is per PID namespace, and a nested one reads PID_MAX_LIMIT.
  kernel->Add("pid_max", File([&k = k_]() -> Result<std::string> {
                int max = std::max(32768, 1024 * Cpus().nr_cpu_ids);
                Task* t = Task::Current();
                if (t != nullptr) {
                  absl::MutexLock l(&k.mu());
                  if (t->tg().pidns != nullptr && t->tg().pidns->level() > 0) max = 4194304;
                }
                return absl::StrFormat("%d\n", max);
              }));
  kernel->Add("threads-max", Text("32768\n"));
  kernel->Add("cap_last_cap", Text("40\n"));
  kernel->Add("overflowuid", Text("65534\n"));
  kernel->Add("overflowgid", Text("65534\n"));
  // The limits the sandbox's IPC namespace enforces (read-only here).
  const IpcLimits& ipc = k_.ipc().limits;
  kernel->Add("shmmax", Text(absl::StrFormat("%d\n", ipc.shmmax)));
  kernel->Add("shmall", Text(absl::StrFormat("%d\n", ipc.shmall)));
  kernel->Add("shmmni", Text(absl::StrFormat("%d\n", ipc.shmmni)));
  kernel->Add("msgmax", Text(absl::StrFormat("%d\n", ipc.msgmax)));
  kernel->Add("msgmnb", Text(absl::StrFormat("%d\n", ipc.msgmnb)));
  kernel->Add("msgmni", Text(absl::StrFormat("%d\n", ipc.msgmni)));
  kernel->Add("sem", Text(absl::StrFormat("%d\t%d\t%d\t%d\n", ipc.semmsl, ipc.semmns, ipc.semopm,
                                          ipc.semmni)));
  kernel->Add("sched_rr_timeslice_ms",
              Text(absl::StrFormat("%d\n", Cpus().rr_timeslice_ns / 1'000'000)));
  auto random = Dir();
  random->Add("boot_id", Text(NewUuid()));  // one per sandbox
  random->Add("uuid", File([]() -> Result<std::string> { return NewUuid(); }));
  random->Add("entropy_avail", Text("256\n"));
  random->Add("poolsize", Text("256\n"));
  kernel->Add("random", random);
  auto keys = Dir();  // the key quotas (keys.h), and Linux's collection timings
  keys->Add("maxkeys", Text(absl::StrFormat("%u\n", kKeyMaxKeys)));
  keys->Add("maxbytes", Text(absl::StrFormat("%u\n", kKeyMaxBytes)));
  keys->Add("root_maxkeys", Text(absl::StrFormat("%u\n", kKeyRootMaxKeys)));
  keys->Add("root_maxbytes", Text(absl::StrFormat("%u\n", kKeyRootMaxBytes)));
  keys->Add("gc_delay", Text("300\n"));
  kernel->Add("keys", keys);
  sys->Add("kernel", kernel);
  auto vm = Dir();
  vm->Add("overcommit_memory", Text("0\n"));
  vm->Add("overcommit_ratio", Text("50\n"));
  vm->Add("max_map_count", Text("65530\n"));
  vm->Add("mmap_min_addr", Text("65536\n"));
  sys->Add("vm", vm);
  auto fs = Dir();
  fs->Add("nr_open", Text("1048576\n"));
  fs->Add("file-max", Text("9223372036854775807\n"));
  fs->Add("pipe-max-size", Text("1048576\n"));
  fs->Add("aio-max-nr", Text(absl::StrFormat("%d\n", AioContext::kMaxNr)));
  fs->Add("aio-nr", File([]() -> Result<std::string> {
    return absl::StrFormat("%d\n", AioContext::TotalRequested());
  }));
  fs->Add("lease-break-time", LeaseBreakTimeFile());
  auto mqueue = Dir();
  const MqNamespace& mq = k_.ipc().mq;
  mqueue->Add("msg_default", Text(absl::StrFormat("%d\n", mq.msg_default)));
  mqueue->Add("msg_max", Text(absl::StrFormat("%d\n", mq.msg_max)));
  mqueue->Add("msgsize_default", Text(absl::StrFormat("%d\n", mq.msgsize_default)));
  mqueue->Add("msgsize_max", Text(absl::StrFormat("%d\n", mq.msgsize_max)));
  fs->Add("mqueue", mqueue);
  sys->Add("fs", fs);
  // The netstack's own constants (netstack/): what programs tune their buffers by.
  auto net = Dir();
  auto core = Dir();
  core->Add("somaxconn", Text("4096\n"));
  core->Add("rmem_default", Text("212992\n"));
  core->Add("wmem_default", Text("212992\n"));
  core->Add("rmem_max", Text("212992\n"));
  core->Add("wmem_max", Text("212992\n"));
  core->Add("optmem_max", Text("20480\n"));
  net->Add("core", core);
  auto ipv4 = Dir();
  ipv4->Add("ip_local_port_range", Text("32768\t60999\n"));
  ipv4->Add("tcp_rmem", Text("4096\t131072\t6291456\n"));
  ipv4->Add("tcp_wmem", Text("4096\t16384\t4194304\n"));
  ipv4->Add("tcp_fin_timeout", Text("60\n"));
  ipv4->Add("ping_group_range", PingGroupRangeFile());
  ipv4->Add("ip_unprivileged_port_start", UnprivilegedPortStartFile());
  net->Add("ipv4", ipv4);
  auto unx = Dir();
  unx->Add("max_dgram_qlen", Text("10\n"));
  net->Add("unix", unx);
  sys->Add("net", net);
  return sys;
}

}  // namespace

CpuTime SandboxCpuTime(Kernel& k) {
  CpuTime sum;
  for (auto& [tgid, tg] : k.groups()) {
    sum += k.GroupCpuUsage(*tg);
    sum += tg->cpu_children;
  }
  return sum;
}

void AddProcSystemFiles(Kernel& k, const vfs::MemSuperRef& sb, SyntheticDir& root) {
  auto b = std::make_shared<Builder>(k, sb);
  root.Add("cpuinfo", b->Text(HostText("/proc/cpuinfo")));
  root.Add("meminfo", b->File([]() -> Result<std::string> { return ReadHostMeminfo().text; }));
  root.Add("vmstat", b->Host("/proc/vmstat"));
  root.Add("swaps", b->Host("/proc/swaps"));
  root.Add("version", b->Text(absl::StrFormat(
                          "Linux version %s (sentry@sentry) (gcc) #1 SMP sentry\n", OsRelease())));
  root.Add("cmdline", b->Text("BOOT_IMAGE=/vmlinuz-" + OsRelease() + " ro quiet\n"));
  root.Add("uptime", b->File([b]() -> Result<std::string> { return b->Uptime(); }));
  root.Add("stat", b->File([b]() -> Result<std::string> { return b->Stat(); }));
  root.Add("loadavg", b->File([&k]() -> Result<std::string> {
    SysinfoData d = Sysinfo(k);
    return LoadavgText(k, d.loads);
  }));
  root.Add("filesystems", b->Text("nodev\tsysfs\nnodev\ttmpfs\nnodev\tproc\nnodev\tdevtmpfs\n"
                                  "nodev\tpipefs\nnodev\tdevpts\nnodev\toverlay\n"
                                  "nodev\tmqueue\n"));
  root.Add("sys", b->Sys());
  auto net = b->Dir();
  for (const char* name : {"unix", "tcp", "tcp6", "udp", "udp6"}) {
    // The reader's network namespace, as Linux's /proc/net (a link to self/net).
    net->Add(name, b->File([&k, n = std::string(name)]() -> Result<std::string> {
      return ReaderStack(k).ProcNet(n);
    }));
  }
  // lo, and on the first stack in host mode the container's own interfaces
  // (netstack/host_interfaces.h). Their traffic is the host sockets' in that namespace, so
  // their counters are the host's lines for them (/proc/self/net/dev, kept open from before
  // the Sentry's pivot); lo is the sandbox's own and counts nothing (0).
  net->Add("dev", b->File([&k]() -> Result<std::string> {
    netstack::Stack& stack = ReaderStack(k);
    std::string out =
        "Inter-|   Receive                                                |  Transmit\n"
        " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs "
        "drop fifo colls carrier compressed\n";
    // Linux's dev_seq_printf_stats format, over the sixteen counters in the file's order.
    auto line = [&out](const std::string& name, const std::array<uint64_t, 16>& c) {
      out += absl::StrFormat(
          "%6s:%8u %7u %4u %4u %4u %5u %10u %9u %8u %7u %4u %4u %4u %5u %7u %10u\n", name, c[0],
          c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10], c[11], c[12], c[13],
          c[14], c[15]);
    };
    line("lo", {});
    if (stack.mode() != netstack::NetMode::kHost) return out;
    for (const auto& h : netstack::HostInterfaces()) {
      line(h.name, netstack::HostInterfaceCounters(h.name).value_or(std::array<uint64_t, 16>{}));
    }
    return out;
  }));
  // The main table's IPv4 routes, as Linux's fib_route_seq_show prints them: addresses as
  // the hexadecimal of their bytes in memory, every line padded to 127 characters. A guest's
  // own namespace, and a sandbox not in host mode, have none (lo's routes are in the local
  // table, which this file does not show).
  net->Add("route", b->File([&k]() -> Result<std::string> {
    netstack::Stack& stack = ReaderStack(k);
    std::string out =
        absl::StrFormat("%-127s\n",
                        "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU"
                        "\tWindow\tIRTT");
    if (stack.mode() != netstack::NetMode::kHost) return out;
    for (const auto& r : netstack::HostRoutes()) {
      std::string dev = "*";
      for (const auto& h : netstack::HostInterfaces()) {
        if (h.index == r.oif) dev = h.name;
      }
      uint32_t mask = r.prefix == 0 ? 0 : htonl(~uint32_t{0} << (32 - r.prefix));
      uint32_t flags = RTF_UP;
      if (r.gateway != 0) flags |= RTF_GATEWAY;
      if (r.prefix == 32) flags |= RTF_HOST;
      if (r.type == RTN_UNREACHABLE) flags = RTF_REJECT;
      out += absl::StrFormat(
          "%-127s\n", absl::StrFormat("%s\t%08X\t%08X\t%04X\t0\t0\t%d\t%08X\t0\t0\t0", dev, r.dst,
                                      r.gateway, flags, static_cast<int>(r.priority), mask));
    }
    return out;
  }));
  net->Add("if_inet6", b->Text("00000000000000000000000000000001 01 80 10 80       lo\n"));
  root.Add("net", net);
}

}  // namespace sentry::kernel
