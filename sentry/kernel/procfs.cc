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
#include "vfs/synthetic.h"

namespace sentry::kernel {
namespace {

using vfs::InodeRef;
using vfs::SyntheticDir;
using vfs::SyntheticFile;
using vfs::SyntheticSymlink;

// Reads a host file that only describes the hardware (cpuinfo, meminfo).
std::string HostText(const char* path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

constexpr uint32_t kProcSuperMagic = 0x9fa0;  // statfs f_type of /proc

class ProcFs {
 public:
  ProcFs(Kernel& k) : k_(k), sb_(std::make_shared<vfs::MemSuper>(kProcSuperMagic)) {}

  InodeRef Build();

 private:
  InodeRef File(std::function<Result<std::string>()> gen, uint32_t mode = 0444,
                SyntheticFile::Writer w = nullptr) {
    return std::make_shared<SyntheticFile>(sb_, mode, std::move(gen), std::move(w));
  }
  InodeRef Text(std::string s) {
    return File([s]() -> Result<std::string> { return s; });
  }
  std::shared_ptr<SyntheticDir> Dir(uint32_t mode = 0555) {
    return std::make_shared<SyntheticDir>(sb_, mode);
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
  InodeRef FdDir(int tgid, bool info);
  std::string StatLine(Proc& p);
  std::string Status(Proc& p);

  Kernel& k_;
  vfs::MemSuperRef sb_;
};

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
  char state = tg.zombie ? 'Z' : tg.stopped ? 'T' : (p.task == Task::Current() ? 'R' : 'S');
  std::string comm = p.task ? p.task->comm() : "";
  int ppid = tg.parent ? tg.parent->tgid : 0;
  size_t threads = std::max<size_t>(tg.tasks.size(), 1);
  mm::MemoryManager::Usage u;
  if (tg.mm) u = tg.mm->MemoryUsage();
  uint64_t vsize = u.size * 4096;
  // The leader's line (which /proc/PID/stat shows) has the whole group's time, a thread's its
  // own; cutime and cstime are the group's in both, as Linux's.
  bool whole = p.task == nullptr || p.task == tg.leader;
  CpuTime cpu = whole ? k_.GroupCpuUsage(tg) : p.task->CpuUsage();
  auto ticks = [](int64_t ns) { return ns / 10000000; };  // USER_HZ 100
  // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime
  // stime cutime cstime priority nice threads itrealvalue starttime vsize rss ...
  return absl::StrFormat(
      "%d (%s) %c %d %d %d 0 -1 4194304 0 0 0 0 %d %d %d %d 20 0 %d 0 0 %d %d "
      "18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
      p.task ? p.task->tid() : tg.tgid, comm, state, ppid, tg.pgid, tg.sid, ticks(cpu.user_ns),
      ticks(cpu.sys_ns), ticks(tg.cpu_children.user_ns), ticks(tg.cpu_children.sys_ns), threads,
      vsize, u.resident);
}

std::string ProcFs::Status(Proc& p) {
  ThreadGroup& tg = *p.tg;
  const char* state = tg.zombie ? "Z (zombie)" : tg.stopped ? "T (stopped)" : "S (sleeping)";
  if (p.task == Task::Current()) state = "R (running)";
  const Credentials& c = tg.creds;
  std::string groups = absl::StrJoin(c.groups, " ");
  mm::MemoryManager::Usage u;  // VmPeak is not tracked: shown as VmSize
  if (tg.mm) u = tg.mm->MemoryUsage();
  return absl::StrFormat(
      "Name:\t%s\nUmask:\t0022\nState:\t%s\nTgid:\t%d\nNgid:\t0\nPid:\t%d\nPPid:\t%d\n"
      "TracerPid:\t0\nUid:\t%u\t%u\t%u\t%u\nGid:\t%u\t%u\t%u\t%u\nFDSize:\t64\nGroups:\t%s\n"
      "VmPeak:\t%8d kB\nVmSize:\t%8d kB\nVmRSS:\t%8d kB\nThreads:\t%d\n"
      "SigQ:\t0/0\nSigPnd:\t0000000000000000\nShdPnd:\t%016x\nSigBlk:\t0000000000000000\n"
      "SigIgn:\t0000000000000000\nSigCgt:\t0000000000000000\nCapInh:\t0000000000000000\n"
      "CapPrm:\t%s\nCapEff:\t%s\nCapBnd:\t000001ffffffffff\nCapAmb:\t0000000000000000\n"
      "NoNewPrivs:\t0\nSeccomp:\t0\nCpus_allowed_list:\t0-%d\n",
      p.task ? p.task->comm() : "", state, tg.tgid, p.task ? p.task->tid() : tg.tgid,
      tg.parent ? tg.parent->tgid : 0, c.ruid, c.euid, c.suid, c.fsuid, c.rgid, c.egid, c.sgid,
      c.fsgid, groups, u.size * 4, u.size * 4, u.resident * 4,
      std::max<size_t>(tg.tasks.size(), 1), tg.pending.set,
      c.euid == 0 ? "000001ffffffffff" : "0000000000000000",
      c.euid == 0 ? "000001ffffffffff" : "0000000000000000", get_nprocs() - 1);
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

InodeRef ProcFs::FdDir(int tgid, bool info) {
  auto dir = Dir(info ? 0500 : 0500);
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
      return File([fds_of, fd]() -> Result<std::string> {
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
        return absl::StrFormat("pos:\t%d\nflags:\t0%o\nmnt_id:\t%d\nino:\t%d\n", pos, flags,
                               mnt_id, st.st_ino);
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
  auto dir = Dir();
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
             // size resident shared text lib(0 since 2.6) data dt(0)
             return absl::StrFormat("%d %d %d %d 0 %d 0\n", u.size, u.resident, u.shared,
                                    u.text, u.data);
           }));
  dir->Add("cmdline", gen([](Proc& p) {
             std::string out;
             for (auto& a : p.tg->argv) out += a + '\0';
             return out;
           }));
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
  auto mounts = [this](bool info) {
    return File([this, info]() -> Result<std::string> {
      Task* t = Task::Current();
      vfs::Path root = t ? t->fs().root() : k_.vfs().Root();
      return k_.vfs().Mounts(root, info);
    });
  };
  dir->Add("mounts", mounts(false));
  dir->Add("mountinfo", mounts(true));
  dir->Add("cgroup", Text("0::/\n"));
  dir->Add("oom_score_adj", File([]() -> Result<std::string> { return std::string("0\n"); },
                                 0644, [](const std::string&) -> Result<void> { return Ok(); }));
  dir->Add("limits", gen([](Proc& p) {
             std::string out = "Limit                     Soft Limit           Hard Limit\n";
             auto v = [](uint64_t x) {
               return x == RLIM_INFINITY ? std::string("unlimited") : std::to_string(x);
             };
             out += absl::StrFormat("Max open files            %-20s %-20s files\n",
                                    v(p.tg->rlimits[RLIMIT_NOFILE].cur),
                                    v(p.tg->rlimits[RLIMIT_NOFILE].max));
             return out;
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
  dir->Add("fd", FdDir(tgid, false));
  dir->Add("fdinfo", FdDir(tgid, true));
  if (with_tasks) {
    auto tasks = Dir();
    SyntheticDir::Dynamic d;
    d.list = [this, tgid]() {
      std::vector<vfs::DirEntry> out;
      absl::MutexLock l(&k_.mu());
      auto it = k_.groups().find(tgid);
      if (it != k_.groups().end()) {
        for (Task* t : it->second->tasks) {
          out.push_back({std::to_string(t->tid()), static_cast<uint64_t>(t->tid()), DT_DIR});
        }
      }
      return out;
    };
    d.lookup = [this, tgid](const std::string& name) -> Result<InodeRef> {
      int tid = atoi(name.c_str());
      if (std::to_string(tid) != name) return Errno(ENOENT);
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
  root->Add("self", Link([]() -> Result<std::string> {
              Task* t = Task::Current();
              if (!t) return Errno(ENOENT);
              return std::to_string(t->tg().tgid);
            }));
  root->Add("thread-self", Link([]() -> Result<std::string> {
              Task* t = Task::Current();
              if (!t) return Errno(ENOENT);
              return absl::StrFormat("%d/task/%d", t->tg().tgid, t->tid());
            }));
  root->Add("mounts", Link([]() -> Result<std::string> { return std::string("self/mounts"); }));
  root->Add("cpuinfo", Text(HostText("/proc/cpuinfo")));
  root->Add("meminfo", File([]() -> Result<std::string> { return HostText("/proc/meminfo"); }));
  root->Add("version", File([this]() -> Result<std::string> {
              return absl::StrFormat("Linux version %s (sentry) #1 SMP\n", OsRelease());
            }));
  root->Add("uptime", File([this]() -> Result<std::string> {
              double up = absl::ToDoubleSeconds(absl::Now() - k_.boot_time);
              return absl::StrFormat("%.2f %.2f\n", up, up * get_nprocs());
            }));
  root->Add("loadavg", File([this]() -> Result<std::string> {
              size_t n;
              int last;
              {
                absl::MutexLock l(&k_.mu());
                n = k_.tasks().size();
                last = k_.tasks().empty() ? 1 : k_.tasks().rbegin()->first;
              }
              return absl::StrFormat("0.00 0.00 0.00 1/%d %d\n", n, last);
            }));
  root->Add("stat", File([this]() -> Result<std::string> {
              std::string out = "cpu  0 0 0 0 0 0 0 0 0 0\n";
              for (int i = 0; i < get_nprocs(); i++) {
                out += absl::StrFormat("cpu%d 0 0 0 0 0 0 0 0 0 0\n", i);
              }
              out += absl::StrFormat("intr 0\nctxt 0\nbtime %d\nprocesses 0\nprocs_running 1\n"
                                     "procs_blocked 0\n",
                                     absl::ToUnixSeconds(k_.boot_time));
              return out;
            }));
  root->Add("filesystems", Text("nodev\ttmpfs\nnodev\tproc\nnodev\toverlay\nnodev\tdevtmpfs\n"
                                "nodev\tsysfs\nnodev\tpipefs\n"));
  auto sys = Dir();
  auto kernel = Dir();
  kernel->Add("hostname", File([this]() -> Result<std::string> { return k_.hostname + "\n"; }));
  kernel->Add("osrelease", File([this]() -> Result<std::string> { return OsRelease() + "\n"; }));
  kernel->Add("ostype", Text("Linux\n"));
  kernel->Add("ngroups_max", Text("65536\n"));
  kernel->Add("pid_max", Text("4194304\n"));
  kernel->Add("cap_last_cap", Text("40\n"));
  kernel->Add("overflowuid", Text("65534\n"));
  kernel->Add("overflowgid", Text("65534\n"));
  // The limits the IPC namespace enforces (read-only here).
  const IpcLimits& ipc = k_.ipc().limits;
  kernel->Add("shmmax", Text(absl::StrFormat("%d\n", ipc.shmmax)));
  kernel->Add("shmall", Text(absl::StrFormat("%d\n", ipc.shmall)));
  kernel->Add("shmmni", Text(absl::StrFormat("%d\n", ipc.shmmni)));
  kernel->Add("msgmax", Text(absl::StrFormat("%d\n", ipc.msgmax)));
  kernel->Add("msgmnb", Text(absl::StrFormat("%d\n", ipc.msgmnb)));
  kernel->Add("msgmni", Text(absl::StrFormat("%d\n", ipc.msgmni)));
  kernel->Add("sem", Text(absl::StrFormat("%d\t%d\t%d\t%d\n", ipc.semmsl, ipc.semmns, ipc.semopm,
                                          ipc.semmni)));
  auto random = Dir();
  random->Add("boot_id", Text("6f1c3d2e-5b7a-4c1e-9a2b-0d3e4f5a6b7c\n"));
  random->Add("uuid", File([]() -> Result<std::string> {
                uint8_t b[16];
                arc4random_buf(b, sizeof(b));
                return absl::StrFormat(
                    "%02x%02x%02x%02x-%02x%02x-4%x%02x-%x%02x-%02x%02x%02x%02x%02x%02x\n", b[0],
                    b[1], b[2], b[3], b[4], b[5], b[6] & 15, b[7], 8 | (b[8] & 3), b[9], b[10],
                    b[11], b[12], b[13], b[14], b[15]);
              }));
  kernel->Add("random", random);
  sys->Add("kernel", kernel);
  auto vm = Dir();
  vm->Add("overcommit_memory", Text("0\n"));
  vm->Add("max_map_count", Text("65530\n"));
  sys->Add("vm", vm);
  auto fs = Dir();
  fs->Add("nr_open", Text("1048576\n"));
  auto mqueue = Dir();
  const MqNamespace& mq = k_.ipc().mq;
  mqueue->Add("msg_default", Text(absl::StrFormat("%d\n", mq.msg_default)));
  mqueue->Add("msg_max", Text(absl::StrFormat("%d\n", mq.msg_max)));
  mqueue->Add("msgsize_default", Text(absl::StrFormat("%d\n", mq.msgsize_default)));
  mqueue->Add("msgsize_max", Text(absl::StrFormat("%d\n", mq.msgsize_max)));
  fs->Add("mqueue", mqueue);
  fs->Add("file-max", Text("9223372036854775807\n"));
  sys->Add("fs", fs);
  root->Add("sys", sys);

  SyntheticDir::Dynamic d;
  d.list = [this]() {
    std::vector<vfs::DirEntry> out;
    absl::MutexLock l(&k_.mu());
    for (auto& [tgid, tg] : k_.groups()) {
      out.push_back({std::to_string(tgid), static_cast<uint64_t>(tgid), DT_DIR});
    }
    return out;
  };
  d.lookup = [this](const std::string& name) -> Result<InodeRef> {
    int tgid = atoi(name.c_str());
    if (std::to_string(tgid) != name) return Errno(ENOENT);
    // A thread id also names its thread (hidden from the listing), as Linux does.
    int owner = tgid;
    {
      absl::MutexLock l(&k_.mu());
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

vfs::InodeRef NewProcfs(Kernel& k) {
  auto fs = std::make_shared<ProcFs>(k);
  vfs::InodeRef root = fs->Build();
  // The closures inside capture the builder by pointer: keep it alive with the root.
  static std::vector<std::shared_ptr<ProcFs>> keep;
  keep.push_back(fs);
  return root;
}

}  // namespace sentry::kernel
