// /proc: what programs read about themselves and the machine. Every file is generated at
// open from the kernel's state; per-process directories come and go with the processes.
#include "sentry/kernel/procfs.h"

#include <dirent.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "sentry/kernel/cgroup_view.h"
#include "sentry/kernel/pidfd.h"
#include "sentry/kernel/procfs_system.h"
#include "sentry/kernel/sched.h"
#include "vfs/synthetic.h"
#include "vfs/tty.h"

namespace sentry::kernel {
namespace {

using vfs::InodeRef;
using vfs::SyntheticDir;
using vfs::SyntheticFile;
using vfs::SyntheticSymlink;

constexpr uint32_t kProcSuperMagic = 0x9fa0;  // statfs f_type of /proc

class ProcFs {
 public:
  ProcFs(Kernel& k, PidNsRef ns)
      : k_(k), ns_(std::move(ns)), sb_(std::make_shared<vfs::MemSuper>(kProcSuperMagic)) {}

  InodeRef Build();

 private:
  InodeRef File(std::function<Result<std::string>()> gen, uint32_t mode = 0444,
                SyntheticFile::Writer w = nullptr) {
    return std::make_shared<SyntheticFile>(sb_, mode, std::move(gen), std::move(w));
  }
  InodeRef Text(std::string s) {
    return File([s]() -> Result<std::string> { return s; });
  }
  std::shared_ptr<SyntheticDir> Dir(uint32_t mode = 0555, uint32_t uid = 0, uint32_t gid = 0) {
    return std::make_shared<SyntheticDir>(sb_, mode, uid, gid);
  }
  InodeRef Link(std::function<Result<std::string>()> target) {
    return std::make_shared<SyntheticSymlink>(sb_, std::move(target));
  }

  // A snapshot of what a per-process file needs, taken under Kernel::mu_.
  struct Proc {
    std::shared_ptr<ThreadGroup> tg;
    Task* task = nullptr;  // the thread (the leader for /proc/PID)
  };
  Result<Proc> Find(int tgid, int tid);
  InodeRef ProcessDir(int tgid, int tid, bool with_tasks);
  InodeRef MagicLink(int tgid, std::function<vfs::FileRef(Proc&)> which);
  // /proc/PID/ns: one magic link per namespace, to its nsfs file.
  InodeRef NamespaceDir(int tgid);
  // /proc/PID/fd or fdinfo, owned by the process's effective ids as on Linux (so a process
  // that changed its uid still reads its own).
  InodeRef FdDir(int tgid, bool info, uint32_t uid, uint32_t gid);
  std::string StatLine(Proc& p);
  std::string Status(Proc& p);
  Result<void> SetOomScoreAdj(int tgid, int tid, std::string v);

  // A global pid as this proc's PID namespace numbers it (0: not there), and back.
  // Preconditions: Kernel::mu_ held.
  int Nr(int global) const { return PidIn(ns_.get(), global); }
  int Global(int nr) const { return PidFrom(ns_.get(), nr); }
  // NSpid and its kin: the numbers from this proc's namespace down to `tg`'s own.
  std::string NsNumbers(const ThreadGroup& tg, int global) const;
  // A pidfd's lines of fdinfo: its pid as this proc numbers it (0: not in this proc's
  // namespace, -1: released) and, when there, the numbers down to its own namespace.
  std::string PidFdInfo(PidFd& p);

  Kernel& k_;
  const PidNsRef ns_;  // whose processes it shows (null: the sandbox's)
  vfs::MemSuperRef sb_;
};

std::string ProcFs::NsNumbers(const ThreadGroup& tg, int global) const {
  std::vector<const PidNamespace*> chain;  // tg's namespace up to (not past) this proc's
  for (const PidNamespace* p = tg.pidns.get(); p != nullptr; p = p->parent().get()) {
    chain.push_back(p);
    if (p == ns_.get() || (ns_ == nullptr && p->level() == 0)) break;
  }
  std::string out;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    out += absl::StrFormat("%s%d", out.empty() ? "" : "\t", PidIn(*it, global));
  }
  return out;
}

std::string ProcFs::PidFdInfo(PidFd& p) {
  absl::MutexLock l(&k_.mu());
  int global = p.GlobalPid();
  int nr = global < 0 ? -1 : Nr(global);
  std::string levels = nr > 0 ? NsNumbers(*p.group(), global) : std::to_string(nr);
  return absl::StrFormat("Pid:\t%d\nNSpid:\t%s\n", nr, levels);
}

// A magic link: readlink shows the path, following it opens the very file.
class MagicLinkInode final : public vfs::MemInode {
 public:
  MagicLinkInode(vfs::MemSuperRef sb, std::function<Result<vfs::FileRef>()> file,
                 std::function<bool()> valid)
      : MemInode(std::move(sb), S_IFLNK | 0777, 0, 0),
        file_(std::move(file)),
        valid_(std::move(valid)) {}
  vfs::FileRef MagicFile() override {
    auto f = file_();
    return f.ok() ? *f : nullptr;
  }
  Result<std::string> ReadLink() override {
    auto f = SENTRY_TRY(file_());
    return f->Name();
  }
  bool Valid() override { return valid_(); }

 private:
  std::function<Result<vfs::FileRef>()> file_;
  std::function<bool()> valid_;
};

Result<ProcFs::Proc> ProcFs::Find(int tgid, int tid) {
  absl::MutexLock l(&k_.mu());
  auto it = k_.groups().find(tgid);
  if (it == k_.groups().end()) return Errno(ENOENT);
  Proc p{it->second, nullptr};
  for (Task* t : p.tg->tasks) {
    if (t->tid() == tid) p.task = t;
  }
  if (!p.task && tid == tgid) p.task = p.tg->leader;
  if (!p.task && !p.tg->zombie) return Errno(ENOENT);
  return p;
}

std::string ProcFs::StatLine(Proc& p) {
  ThreadGroup& tg = *p.tg;
  char state = tg.zombie                               ? 'Z'
               : p.task && PtraceStopped(*p.task) ? 't'
               : tg.stopped                       ? 'T'
                                                  : (p.task == Task::Current() ? 'R' : 'S');
  std::string comm = p.task ? p.task->comm() : "";
  int ppid = tg.parent ? Nr(tg.parent->tgid) : 0;
  size_t threads = std::max<size_t>(tg.tasks.size(), 1);
  mm::MemoryManager::Usage u;
  if (tg.mm) u = tg.mm->MemoryUsage();
  uint64_t vsize = u.size * 4096;
  // The leader's line (which /proc/PID/stat shows) has the whole group's time, a thread's its
  // own; cutime and cstime are the group's in both, as Linux's.
  bool whole = p.task == nullptr || p.task == tg.leader;
  CpuTime cpu = whole ? k_.GroupCpuUsage(tg) : p.task->CpuUsage();
  auto ticks = [](int64_t ns) { return ns / 10000000; };  // USER_HZ 100
  SchedState sched = p.task ? p.task->sched_ : SchedState{};
  int64_t start = p.task ? ticks(absl::ToInt64Nanoseconds(p.task->start_time_ - k_.boot_time)) : 0;
  int cpu_id = 0;
  while (cpu_id + 1 < kMaxCpus && !sched.affinity[cpu_id] && sched.affinity.any()) cpu_id++;
  uint64_t rsslim = tg.rlimits[RLIMIT_RSS].cur;
  auto tty = vfs::ControllingTtyForProc(tg.sid);
  // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime
  // stime cutime cstime priority nice threads itrealvalue starttime vsize rss rsslim
  // startcode endcode startstack esp eip signal blocked sigignore sigcatch wchan nswap cnswap
  // exit_signal processor rt_priority policy blkio_ticks guest_time cguest_time start_data
  // end_data start_brk arg_start arg_end env_start env_end exit_code
  return absl::StrFormat(
      "%d (%s) %c %d %d %d %u %d 4194304 0 0 0 0 %d %d %d %d %d %d %d 0 %d %d %d %u "
      "0 0 0 0 0 0 0 0 0 0 0 0 %d %d %d %d 0 0 0 0 0 0 0 0 0 0 0\n",
      Nr(p.task ? p.task->tid() : tg.tgid), comm, state, ppid, Nr(tg.pgid), Nr(tg.sid), tty.first,
      tty.second > 0 ? Nr(tty.second) : tty.second, ticks(cpu.user_ns), ticks(cpu.sys_ns),
      ticks(tg.cpu_children.user_ns), ticks(tg.cpu_children.sys_ns), sched.ProcPriority(),
      sched.nice, threads, start, vsize, u.resident, rsslim, tg.exit_signal, cpu_id,
      sched.rt() ? sched.rt_priority : 0, sched.policy);
}

std::string ProcFs::Status(Proc& p) {
  ThreadGroup& tg = *p.tg;
  const char* state = tg.zombie                               ? "Z (zombie)"
                      : p.task && PtraceStopped(*p.task) ? "t (tracing stop)"
                      : tg.stopped                       ? "T (stopped)"
                                                         : "S (sleeping)";
  if (p.task == Task::Current()) state = "R (running)";
  const Credentials& c = tg.creds;
  // Ids as the reader's user namespace sees them.
  const UserNamespace* view = nullptr;
  if (Task* r = Task::Current()) view = r->tg().creds.user_ns.get();
  auto uid = [view](uint32_t id) { return ShowId(view, false, id); };
  auto gid = [view](uint32_t id) { return ShowId(view, true, id); };
  std::string groups;
  for (uint32_t g : c.groups) {
    groups += absl::StrFormat("%s%u", groups.empty() ? "" : " ", gid(g));
  }
  mm::MemoryManager::Usage u;  // VmPeak and VmHWM are not tracked: shown as VmSize, VmRSS
  if (tg.mm) u = tg.mm->MemoryUsage();
  int tid = p.task ? p.task->tid() : tg.tgid;
  SchedState sched = p.task ? p.task->sched_ : SchedState{};
  uint32_t umask = p.task && p.task->fs_ref() ? p.task->fs().umask() : 022;
  abi::SigSet ign = 0, cgt = 0;
  if (tg.handlers) {
    for (int i = 0; i < abi::kNumSignals; i++) {
      uint64_t h = tg.handlers->actions[i].handler;
      if (h == abi::kSigIgn) ign |= abi::SigBit(i + 1);
      if (h != abi::kSigIgn && h != abi::kSigDfl) cgt |= abi::SigBit(i + 1);
    }
  }
  abi::SigSet pnd = p.task ? p.task->pending_.set : 0, blk = p.task ? p.task->mask_ : 0;
  std::string out = absl::StrFormat(
      "Name:\t%s\nUmask:\t%04o\nState:\t%s\nTgid:\t%d\nNgid:\t0\nPid:\t%d\nPPid:\t%d\n"
      "TracerPid:\t%d\nUid:\t%u\t%u\t%u\t%u\nGid:\t%u\t%u\t%u\t%u\nFDSize:\t64\nGroups:\t%s \n"
      "NStgid:\t%s\nNSpid:\t%s\nNSpgid:\t%s\nNSsid:\t%s\nKthread:\t0\n",
      p.task ? p.task->comm() : "", umask, state, Nr(tg.tgid), Nr(tid),
      tg.parent ? Nr(tg.parent->tgid) : 0, p.task ? Nr(PtraceTracerPid(*p.task)) : 0, uid(c.ruid),
      uid(c.euid), uid(c.suid), uid(c.fsuid), gid(c.rgid), gid(c.egid), gid(c.sgid), gid(c.fsgid),
      groups, NsNumbers(tg, tg.tgid), NsNumbers(tg, tid), NsNumbers(tg, tg.pgid),
      NsNumbers(tg, tg.sid));
  auto kb = [](uint64_t pages) { return absl::StrFormat("%8d kB", pages * 4); };
  if (tg.mm) {
    out += absl::StrFormat(
        "VmPeak:\t%s\nVmSize:\t%s\nVmLck:\t%s\nVmPin:\t%s\nVmHWM:\t%s\nVmRSS:\t%s\n"
        "RssAnon:\t%s\nRssFile:\t%s\nRssShmem:\t%s\nVmData:\t%s\nVmStk:\t%s\nVmExe:\t%s\n"
        "VmLib:\t%s\nVmPTE:\t%s\nVmSwap:\t%s\nHugetlbPages:\t%s\n",
        kb(u.size), kb(u.size), kb(u.locked), kb(0), kb(u.resident), kb(u.resident),
        kb(u.resident - std::min(u.shared, u.resident)), kb(u.shared), kb(0), kb(u.data),
        kb(u.stack), kb(u.text), kb(0), kb(0), kb(0), kb(0));
  }
  out += absl::StrFormat(
      "CoreDumping:\t0\nTHP_enabled:\t1\nuntag_mask:\t0xffffffffffffffff\nThreads:\t%d\n"
      "SigQ:\t%d/%d\nSigPnd:\t%016x\nShdPnd:\t%016x\nSigBlk:\t%016x\nSigIgn:\t%016x\n"
      "SigCgt:\t%016x\nCapInh:\t%016x\nCapPrm:\t%016x\nCapEff:\t%016x\nCapBnd:\t%016x\n"
      "CapAmb:\t%016x\nNoNewPrivs:\t%d\nSeccomp:\t%d\n"
      "Seccomp_filters:\t%d\nCpus_allowed:\t%s\nCpus_allowed_list:\t%s\n"
      "Mems_allowed:\t%s00000001\nMems_allowed_list:\t0\n"
      "voluntary_ctxt_switches:\t%d\nnonvoluntary_ctxt_switches:\t0\n",
      std::max<size_t>(tg.tasks.size(), 1), tg.pending.queue.size(),
      tg.rlimits[RLIMIT_SIGPENDING].cur, pnd, tg.pending.set, blk, ign, cgt, c.cap_inheritable,
      c.cap_permitted, c.cap_effective, c.cap_bounding, c.cap_ambient, c.no_new_privs ? 1 : 0,
      p.task ? std::max(p.task->seccomp_.mode, 0) : 0, p.task ? p.task->seccomp_.count() : 0,
      CpuMaskHex(sched.affinity, Cpus().nr_cpu_ids), CpuList(sched.affinity),
      [] {
        std::string s;
        for (int i = 0; i < 31; i++) s += "00000000,";
        return s;
      }(),
      p.task ? p.task->nvcsw_.load(std::memory_order_relaxed) : 0);
  return out;
}

// /proc/PID/limits: every limit, as Linux formats it (no unit column for the priorities).
std::string Limits(ThreadGroup& tg) {
  static const struct {
    const char* name;
    const char* unit;
  } kRows[abi::kNumRlimits] = {
      {"Max cpu time", "seconds"},        {"Max file size", "bytes"},
      {"Max data size", "bytes"},         {"Max stack size", "bytes"},
      {"Max core file size", "bytes"},    {"Max resident set", "bytes"},
      {"Max processes", "processes"},     {"Max open files", "files"},
      {"Max locked memory", "bytes"},     {"Max address space", "bytes"},
      {"Max file locks", "locks"},        {"Max pending signals", "signals"},
      {"Max msgqueue size", "bytes"},     {"Max nice priority", nullptr},
      {"Max realtime priority", nullptr}, {"Max realtime timeout", "us"},
  };
  auto v = [](uint64_t x) {
    return x == RLIM_INFINITY ? std::string("unlimited") : std::to_string(x);
  };
  std::string out =
      absl::StrFormat("%-25s %-20s %-20s %-10s\n", "Limit", "Soft Limit", "Hard Limit", "Units");
  for (int i = 0; i < abi::kNumRlimits; i++) {
    out += absl::StrFormat("%-25s %-20s %-20s ", kRows[i].name, v(tg.rlimits[i].cur),
                           v(tg.rlimits[i].max));
    if (kRows[i].unit) out += absl::StrFormat("%-10s", kRows[i].unit);
    out += '\n';
  }
  return out;
}

std::string SmapsRollup(const mm::MemoryManager::Usage& u) {
  auto kb = [](uint64_t pages) { return pages * 4; };
  uint64_t anon = u.resident - std::min(u.shared, u.resident);
  std::string out =
      "00400000-7ffffffff000 ---p 00000000 00:00 0                          [rollup]\n";
  auto row = [&](const char* name, uint64_t v) {
    out += absl::StrFormat("%-16s%8d kB\n", std::string(name) + ":", v);
  };
  row("Rss", kb(u.resident));
  row("Pss", kb(u.resident));
  row("Pss_Dirty", kb(anon));
  row("Pss_Anon", kb(anon));
  row("Pss_File", kb(u.shared));
  row("Pss_Shmem", 0);
  row("Shared_Clean", 0);
  row("Shared_Dirty", 0);
  row("Private_Clean", kb(u.shared));
  row("Private_Dirty", kb(anon));
  row("Referenced", kb(u.resident));
  row("Anonymous", kb(anon));
  for (const char* z : {"KSM", "LazyFree", "AnonHugePages", "ShmemPmdMapped", "FilePmdMapped",
                        "Shared_Hugetlb", "Private_Hugetlb", "Swap", "SwapPss"}) {
    row(z, 0);
  }
  row("Locked", kb(u.locked_resident));
  return out;
}

// Writing /proc/PID/oom_score_adj, as Linux: -1000..1000 (EINVAL outside); going below the
// last value a privileged writer set needs CAP_SYS_RESOURCE (EACCES).
Result<void> ProcFs::SetOomScoreAdj(int tgid, int tid, std::string v) {
  if (v.size() > 12) v.resize(12);
  while (!v.empty() && isspace(static_cast<unsigned char>(v.back()))) v.pop_back();
  size_t lead = 0;
  while (lead < v.size() && isspace(static_cast<unsigned char>(v[lead]))) lead++;
  v = v.substr(lead);
  char* end = nullptr;
  errno = 0;
  long adj = strtol(v.c_str(), &end, 0);
  if (v.empty() || *end || errno || adj < -1000 || adj > 1000) return Errno(EINVAL);
  Proc p = SENTRY_TRY(Find(tgid, tid));
  Task* writer = Task::Current();
  absl::MutexLock l(&k_.mu());
  bool privileged = writer == nullptr || writer->tg().creds.HasCapability(CAP_SYS_RESOURCE);
  if (adj < p.tg->oom_score_adj_min && !privileged) return Errno(EACCES);
  p.tg->oom_score_adj = static_cast<int>(adj);
  if (privileged) p.tg->oom_score_adj_min = static_cast<int>(adj);
  return Ok();
}

InodeRef ProcFs::NamespaceDir(int tgid) {
  auto dir = Dir(0511);
  static constexpr std::pair<const char*, int> kKinds[] = {
      {"cgroup", CLONE_NEWCGROUP}, {"ipc", CLONE_NEWIPC},
      {"mnt", CLONE_NEWNS},        {"net", CLONE_NEWNET},
      {"pid", CLONE_NEWPID},       {"pid_for_children", CLONE_NEWPID},
      {"time", CLONE_NEWTIME},     {"time_for_children", CLONE_NEWTIME},
      {"user", CLONE_NEWUSER},     {"uts", CLONE_NEWUTS}};
  for (const auto& [name, type] : kKinds) {
    bool own_pid = std::string_view(name) == "pid";  // the process's own, not its children's
    dir->Add(name, MagicLink(tgid, [type = type, own_pid](Proc& p) -> vfs::FileRef {
               if (own_pid && p.tg->pidns) return PidNamespaceFile(p.tg->pidns);
               if (!p.task || !p.task->ns_) return nullptr;
               // pid_for_children of a namespace still without its init: nothing, as Linux.
               const PidNamespace& children = *p.task->ns_->pid;
               if (type == CLONE_NEWPID && children.level() > 0 && children.init == nullptr &&
                   !children.dead) {
                 return nullptr;
               }
               return NamespaceFile(*p.task->ns_, type, p.tg->creds.user_ns);
             }));
  }
  return dir;
}

InodeRef ProcFs::MagicLink(int tgid, std::function<vfs::FileRef(Proc&)> which) {
  auto file = [this, tgid, which]() -> Result<vfs::FileRef> {
    Proc p = SENTRY_TRY(Find(tgid, tgid));
    vfs::FileRef f;
    {
      absl::MutexLock l(&k_.mu());
      f = which(p);
    }
    if (!f) return Errno(ENOENT);
    return f;
  };
  auto valid = [this, tgid]() { return Find(tgid, tgid).ok(); };
  return std::make_shared<MagicLinkInode>(sb_, file, valid);
}

// A file-like handle on a directory (for cwd and root links).
vfs::FileRef PlaceFile(const vfs::Path& p) {
  vfs::FileRef f = vfs::NewPathFile(O_PATH);
  f->set_location(p.mnt, p.d, p.inode());
  return f;
}

InodeRef ProcFs::FdDir(int tgid, bool info, uint32_t uid, uint32_t gid) {
  auto dir = Dir(0500, uid, gid);
  auto fds_of = [this, tgid]() -> std::shared_ptr<vfs::FdTable> {
    auto p = Find(tgid, tgid);
    if (!p.ok() || !p->task) return nullptr;
    absl::MutexLock l(&k_.mu());
    return p->task->fds_ref();
  };
  SyntheticDir::Dynamic d;
  d.list = [this, fds_of, info]() {
    std::vector<vfs::DirEntry> out;
    if (auto t = fds_of()) {
      for (int fd : t->Fds()) {
        out.push_back({std::to_string(fd), 0x10000u + fd, info ? DT_REG : DT_LNK});
      }
    }
    return out;
  };
  d.lookup = [this, fds_of, info, tgid](const std::string& name) -> Result<InodeRef> {
    char* end;
    long fd = strtol(name.c_str(), &end, 10);
    if (*end || name.empty() || fd < 0) return Errno(ENOENT);
    auto t = fds_of();
    if (!t) return Errno(ENOENT);
    auto got = t->GetEntry(static_cast<int>(fd));
    if (!got.ok()) return Errno(ENOENT);
    auto e = *got;
    if (info) {
      // Read at read time: the name may stay cached while the fd is closed and reused.
      return File([this, fds_of, fd]() -> Result<std::string> {
        auto t = fds_of();
        if (!t) return Errno(ENOENT);
        auto got = t->GetEntry(static_cast<int>(fd));
        if (!got.ok()) return Errno(ENOENT);
        const vfs::FileRef& f = got->file;
        auto cur = f->Seek(0, SEEK_CUR);
        uint64_t pos = cur.ok() ? *cur : 0;
        int flags = f->flags() | (got->cloexec ? O_CLOEXEC : 0);
        struct stat st {};
        (void)f->Stat(&st);
        uint64_t mnt_id = f->mount() ? f->mount()->id() : 0;
        std::string out = absl::StrFormat("pos:\t%d\nflags:\t0%o\nmnt_id:\t%d\nino:\t%d\n", pos,
                                          flags, mnt_id, st.st_ino);
        if (auto* pidfd = dynamic_cast<PidFd*>(f.get())) out += PidFdInfo(*pidfd);
        return out;
      });
    }
    auto file = [fds_of, fd]() -> Result<vfs::FileRef> {
      auto t = fds_of();
      if (!t) return Errno(ENOENT);
      return t->Get(static_cast<int>(fd));
    };
    auto valid = [fds_of, fd]() {
      auto t = fds_of();
      return t && t->Get(static_cast<int>(fd)).ok();
    };
    (void)tgid;
    return InodeRef(std::make_shared<MagicLinkInode>(sb_, file, valid));
  };
  dir->set_dynamic(std::move(d));
  return dir;
}

InodeRef ProcFs::ProcessDir(int tgid, int tid, bool with_tasks) {
  // Linux shows a process's files as its effective user's (for a dumpable process).
  uint32_t uid = 0, gid = 0;
  if (auto p = Find(tgid, tid); p.ok()) {
    absl::MutexLock l(&k_.mu());
    uid = p->tg->creds.euid;
    gid = p->tg->creds.egid;
  }
  auto dir = Dir(0555, uid, gid);
  dir->set_valid([this, tgid, tid]() { return Find(tgid, tid).ok(); });
  auto gen = [this, tgid, tid](std::function<std::string(Proc&)> fn) {
    return File([this, tgid, tid, fn]() -> Result<std::string> {
      Proc p = SENTRY_TRY(Find(tgid, tid));
      absl::MutexLock l(&k_.mu());
      return fn(p);
    });
  };
  dir->Add("stat", gen([this](Proc& p) { return StatLine(p); }));
  dir->Add("status", gen([this](Proc& p) { return Status(p); }));
  dir->Add("statm", gen([](Proc& p) {
             mm::MemoryManager::Usage u;
             if (p.tg->mm) u = p.tg->mm->MemoryUsage();
             // size resident shared text lib(0 since 2.6) data(+stack) dt(0)
             return absl::StrFormat("%d %d %d %d 0 %d 0\n", u.size, u.resident, u.shared, u.text,
                                    u.data + u.stack);
           }));
  dir->Add("cmdline", gen([](Proc& p) {
             std::string out;
             for (auto& a : p.tg->argv) out += a + '\0';
             return out;
           }));
  // Debuggers find a PIE's load address here (AT_ENTRY, AT_PHDR).
  dir->Add("auxv", File([this, tgid, tid]() -> Result<std::string> {
             Proc p = SENTRY_TRY(Find(tgid, tid));
             std::shared_ptr<mm::MemoryManager> mm;
             {
               absl::MutexLock l(&k_.mu());
               mm = p.tg->mm;
             }
             std::vector<uint64_t> v = mm ? mm->auxv() : std::vector<uint64_t>{};
             return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 8);
           },
           0400));
  dir->Add("environ", gen([](Proc& p) {
             std::string out;
             for (auto& a : p.tg->envp) out += a + '\0';
             return out;
           }));
  dir->Add("comm", File(
                       [this, tgid, tid]() -> Result<std::string> {
                         Proc p = SENTRY_TRY(Find(tgid, tid));
                         return (p.task ? p.task->comm() : std::string()) + "\n";
                       },
                       0644,
                       [this, tgid, tid](const std::string& v) -> Result<void> {
                         Proc p = SENTRY_TRY(Find(tgid, tid));
                         if (p.task) p.task->set_comm(v.substr(0, v.find('\n')));
                         return Ok();
                       }));
  dir->Add("maps", File([this, tgid, tid]() -> Result<std::string> {
             Proc p = SENTRY_TRY(Find(tgid, tid));
             std::shared_ptr<mm::MemoryManager> mm;
             {
               absl::MutexLock l(&k_.mu());
               mm = p.tg->mm;
             }
             return mm ? mm->Maps() : std::string();
           }));
  // The mounts of the process's namespace that its root sees.
  auto mounts = [this, tgid, tid](bool info) {
    return File([this, tgid, tid, info]() -> Result<std::string> {
      Proc p = SENTRY_TRY(Find(tgid, tid));
      vfs::MountNsRef ns;
      std::shared_ptr<FsContext> fs;
      {
        absl::MutexLock l(&k_.mu());
        if (!p.task || !p.task->ns_) return std::string();
        ns = p.task->ns_->mnt;
        fs = p.task->fs_ref();
      }
      vfs::Path root = fs ? fs->root() : k_.vfs().NamespaceRoot(*ns);
      return k_.vfs().Mounts(*ns, root, info);
    });
  };
  dir->Add("mounts", mounts(false));
  dir->Add("mountinfo", mounts(true));
  dir->Add("cgroup", Text(CgroupViewProcText()));
  // user_namespaces(7): the maps and setgroups of the process's user namespace. The
  // writes' checks are UserNamespace's, against the writer's credentials.
  auto user_ns = [this, tgid, tid]() -> Result<UserNsRef> {
    Proc p = SENTRY_TRY(Find(tgid, tid));
    absl::MutexLock l(&k_.mu());
    return p.tg->creds.user_ns;
  };
  auto writer = [this]() -> Credentials {
    Task* w = Task::Current();
    absl::MutexLock l(&k_.mu());
    return w ? w->tg().creds : Credentials{};
  };
  for (bool gid : {false, true}) {
    dir->Add(gid ? "gid_map" : "uid_map",
             File(
                 [this, user_ns, gid]() -> Result<std::string> {
                   UserNsRef ns = SENTRY_TRY(user_ns());
                   if (!ns) return std::string("         0          0 4294967295\n");
                   Task* r = Task::Current();
                   UserNsRef reader;
                   if (r) {
                     absl::MutexLock l(&k_.mu());
                     reader = r->tg().creds.user_ns;
                   }
                   return ns->MapText(gid, reader.get());
                 },
                 0666,
                 [user_ns, writer, gid](const std::string& v) -> Result<void> {
                   UserNsRef ns = SENTRY_TRY(user_ns());
                   if (!ns) return Errno(EPERM);  // the first namespace's maps are fixed
                   return std::const_pointer_cast<UserNamespace>(ns)->WriteMap(gid, v, writer());
                 }));
  }
  dir->Add("setgroups", File(
                            [user_ns]() -> Result<std::string> {
                              UserNsRef ns = SENTRY_TRY(user_ns());
                              return ns ? ns->SetgroupsText() : std::string("allow\n");
                            },
                            0666,
                            [user_ns, writer](const std::string& v) -> Result<void> {
                              UserNsRef ns = SENTRY_TRY(user_ns());
                              if (!ns) return Errno(EPERM);
                              return std::const_pointer_cast<UserNamespace>(ns)->WriteSetgroups(
                                  v, writer());
                            }));
  dir->Add("oom_score_adj", File(
                                [this, tgid, tid]() -> Result<std::string> {
                                  Proc p = SENTRY_TRY(Find(tgid, tid));
                                  absl::MutexLock l(&k_.mu());
                                  return absl::StrFormat("%d\n", p.tg->oom_score_adj);
                                },
                                0644,
                                [this, tgid, tid](const std::string& v) -> Result<void> {
                                  return SetOomScoreAdj(tgid, tid, v);
                                }));
  dir->Add("oom_adj", gen([](Proc& p) {
             // The legacy scale: -17 .. 15.
             int adj = p.tg->oom_score_adj;
             return absl::StrFormat("%d\n", adj == 1000 ? 15 : adj * 17 / 1000);
           }));
  dir->Add("oom_score", gen([](Proc& p) {
             return absl::StrFormat("%d\n", std::clamp(666 + p.tg->oom_score_adj, 0, 2000));
           }));
  dir->Add("limits", gen([](Proc& p) { return Limits(*p.tg); }));
  dir->Add("io", gen([](Proc& p) {
             ThreadGroup& tg = *p.tg;
             return absl::StrFormat(
                 "rchar: %d\nwchar: %d\nsyscr: %d\nsyscw: %d\nread_bytes: 0\nwrite_bytes: 0\n"
                 "cancelled_write_bytes: 0\n",
                 tg.io_rchar.load(), tg.io_wchar.load(), tg.io_syscr.load(), tg.io_syscw.load());
           }));
  dir->Add("smaps_rollup", File([this, tgid, tid]() -> Result<std::string> {
             Proc p = SENTRY_TRY(Find(tgid, tid));
             std::shared_ptr<mm::MemoryManager> mm;
             {
               absl::MutexLock l(&k_.mu());
               mm = p.tg->mm;
             }
             return mm ? SmapsRollup(mm->MemoryUsage()) : std::string();
           }));
  dir->Add("exe", MagicLink(tgid, [](Proc& p) { return p.tg->exe; }));
  dir->Add("cwd", MagicLink(tgid, [](Proc& p) -> vfs::FileRef {
             if (!p.task || !p.task->fs_ref()) return nullptr;
             return PlaceFile(p.task->fs().cwd());
           }));
  dir->Add("root", MagicLink(tgid, [](Proc& p) -> vfs::FileRef {
             if (!p.task || !p.task->fs_ref()) return nullptr;
             return PlaceFile(p.task->fs().root());
           }));
  dir->Add("ns", NamespaceDir(tgid));
  dir->Add("fd", FdDir(tgid, false, uid, gid));
  dir->Add("fdinfo", FdDir(tgid, true, uid, gid));
  if (with_tasks) {
    auto tasks = Dir();
    SyntheticDir::Dynamic d;
    d.list = [this, tgid]() {
      std::vector<vfs::DirEntry> out;
      absl::MutexLock l(&k_.mu());
      auto it = k_.groups().find(tgid);
      if (it != k_.groups().end()) {
        for (Task* t : it->second->tasks) {
          int nr = Nr(t->tid());
          out.push_back({std::to_string(nr), static_cast<uint64_t>(nr), DT_DIR});
        }
      }
      return out;
    };
    d.lookup = [this, tgid](const std::string& name) -> Result<InodeRef> {
      int nr = atoi(name.c_str());
      if (std::to_string(nr) != name || nr <= 0) return Errno(ENOENT);
      int tid;
      {
        absl::MutexLock l(&k_.mu());
        tid = Global(nr);
      }
      SENTRY_TRY(Find(tgid, tid));
      return ProcessDir(tgid, tid, false);
    };
    tasks->set_dynamic(std::move(d));
    dir->Add("task", tasks);
  }
  return dir;
}

InodeRef ProcFs::Build() {
  auto root = Dir();
  // A reader outside this proc's namespace has no number in it: no self, as Linux.
  root->Add("self", Link([this]() -> Result<std::string> {
              Task* t = Task::Current();
              if (!t) return Errno(ENOENT);
              absl::MutexLock l(&k_.mu());
              int nr = Nr(t->tg().tgid);
              if (nr == 0) return Errno(ENOENT);
              return std::to_string(nr);
            }));
  root->Add("thread-self", Link([this]() -> Result<std::string> {
              Task* t = Task::Current();
              if (!t) return Errno(ENOENT);
              absl::MutexLock l(&k_.mu());
              int nr = Nr(t->tg().tgid);
              if (nr == 0) return Errno(ENOENT);
              return absl::StrFormat("%d/task/%d", nr, Nr(t->tid()));
            }));
  root->Add("mounts", Link([]() -> Result<std::string> { return std::string("self/mounts"); }));
  AddProcSystemFiles(k_, sb_, *root);

  SyntheticDir::Dynamic d;
  d.list = [this]() {
    std::vector<vfs::DirEntry> out;
    absl::MutexLock l(&k_.mu());
    for (auto& [tgid, tg] : k_.groups()) {
      int nr = Nr(tgid);
      if (nr == 0) continue;  // not in this proc's namespace
      out.push_back({std::to_string(nr), static_cast<uint64_t>(nr), DT_DIR});
    }
    return out;
  };
  d.lookup = [this](const std::string& name) -> Result<InodeRef> {
    int nr = atoi(name.c_str());
    if (std::to_string(nr) != name || nr <= 0) return Errno(ENOENT);
    // A thread id also names its thread (hidden from the listing), as Linux does.
    int tgid, owner;
    {
      absl::MutexLock l(&k_.mu());
      tgid = owner = Global(nr);
      Task* t = k_.TaskByTid(tgid);
      if (t) owner = t->tg().tgid;
    }
    SENTRY_TRY(Find(owner, tgid));
    return ProcessDir(owner, tgid, true);
  };
  root->set_dynamic(std::move(d));
  return root;
}

}  // namespace

std::string OsRelease() { return "6.1.0-sentry"; }

vfs::InodeRef NewProcfs(Kernel& k, PidNsRef ns) {
  if (ns != nullptr && ns->level() == 0) ns = nullptr;
  auto fs = std::make_shared<ProcFs>(k, std::move(ns));
  vfs::InodeRef root = fs->Build();
  // The closures inside capture the builder by pointer: keep it alive with the root.
  static std::vector<std::shared_ptr<ProcFs>> keep;
  keep.push_back(fs);
  return root;
}

}  // namespace sentry::kernel
