#include "sentry/loader/exec.h"

#include <signal.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>

#include "sentry/base/logging.h"
#include "sentry/kernel/futex.h"

namespace sentry::loader {
namespace {

constexpr uint64_t kStackTop = platform::Layout::kGuestTop;
// The stack is reserved whole at execve, as large as RLIMIT_STACK lets Linux's grow (the
// Sentry does not see the guest's faults, so it cannot grow a stack on demand): a recursion
// deeper than the limit faults as it would on Linux. An infinite or larger limit gets
// kMaxStack (Linux's would grow until it met another mapping).
constexpr uint64_t kMaxStack = uint64_t{1} << 30;
// Linux's bprm_stack_limits: the strings and pointers execve may pass, a quarter of the stack
// limit but at least ARG_MAX (32 pages) and at most three quarters of _STK_LIM (8 MiB).
constexpr uint64_t kArgMax = 32 * kPageSize;
constexpr uint64_t kStackLimitDefault = uint64_t{8} << 20;  // _STK_LIM
constexpr uint64_t kArgLimitMax = kStackLimitDefault / 4 * 3;
constexpr int kMaxInterpDepth = 4;

// Opens the resolved `p` for execution: a regular file the caller may execute, on an exec
// mount.
Result<vfs::FileRef> OpenExecPath(kernel::Task& t, const vfs::Context& ctx, const vfs::Path& p) {
  if (!S_ISREG(p.inode()->Type())) return Errno(EACCES);
  if (p.mnt->flags() & MS_NOEXEC) return Errno(EACCES);
  SENTRY_TRY(t.kernel().vfs().Access(ctx, p, X_OK));
  return t.kernel().vfs().OpenPath(ctx, p, O_RDONLY, /*exec=*/true);
}

// Whether the caller may read `f` (a program it may only execute is not dumpable).
bool Readable(kernel::Task& t, const vfs::FileRef& f) {
  struct stat st;
  if (!f->Stat(&st).ok()) return true;
  return vfs::CheckPermission(t.VfsContext().creds, st, R_OK).ok();
}

// The ids the set-ID bits of `f` give a process with credentials `c` (Linux's bprm_fill_uid):
// none on a nosuid mount, for a file with no mount (a memfd), or when the owner or group has
// no mapping in the caller's user namespace.
kernel::ExecFileIds SetIdsOf(const vfs::FileRef& f, const kernel::Credentials& c) {
  kernel::ExecFileIds ids;
  if (!f->mount() || (f->mount()->flags() & MS_NOSUID)) return ids;
  struct stat st;
  if (!f->Stat(&st).ok() || !(st.st_mode & (S_ISUID | S_ISGID))) return ids;
  const kernel::UserNamespace* ns = c.user_ns.get();
  if (!kernel::FromKernelId(ns, false, st.st_uid) || !kernel::FromKernelId(ns, true, st.st_gid)) {
    return ids;
  }
  if (st.st_mode & S_ISUID) ids.uid = st.st_uid;
  // Set-group-ID without group execute marks mandatory locking, not a set-ID program.
  if ((st.st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP)) ids.gid = st.st_gid;
  return ids;
}

}  // namespace

Result<vfs::FileRef> OpenExec(kernel::Task& t, const std::string& path) {
  vfs::Context ctx = t.VfsContext();
  return OpenExecAt(t, ctx.cwd, path, /*follow=*/true);
}

Result<vfs::FileRef> OpenExecAt(kernel::Task& t, const vfs::Path& start, const std::string& path,
                                bool follow) {
  vfs::Context ctx = t.VfsContext();
  vfs::Path p = SENTRY_TRY(t.kernel().vfs().Resolve(ctx, start, path, follow));
  if (!follow && p.inode()->IsSymlink()) return Errno(ELOOP);
  return OpenExecPath(t, ctx, p);
}

Result<vfs::FileRef> OpenExecFile(kernel::Task& t, const vfs::FileRef& f) {
  vfs::Context ctx = t.VfsContext();
  if (f->dentry()) return OpenExecPath(t, ctx, vfs::Path{f->mount(), f->dentry()});
  // A file with no place (a memfd) cannot be opened anew: it is run through this very open
  // file, which the loader only reads at explicit offsets and maps.
  if (!f->inode()) return Errno(EACCES);
  struct stat st;
  SENTRY_TRY(f->Stat(&st));
  if (!S_ISREG(st.st_mode)) return Errno(EACCES);
  SENTRY_TRY(vfs::CheckPermission(ctx.creds, st, X_OK));
  return f;
}

namespace {

// "#!interp [arg]": rewrites path and argv. Returns false if `f` is no script.
Result<bool> Shebang(kernel::Task& t, const vfs::FileRef& f, std::string& path,
                     std::vector<std::string>& argv) {
  uint8_t buf[256];
  size_t n = SENTRY_TRY(f->PRead(t, buf, 0));
  if (n < 2 || buf[0] != '#' || buf[1] != '!') return false;
  std::string line(reinterpret_cast<char*>(buf) + 2, n - 2);
  line = line.substr(0, line.find('\n'));
  size_t b = line.find_first_not_of(" \t");
  if (b == std::string::npos) return Errno(ENOEXEC);
  line = line.substr(b);
  size_t e = line.find_first_of(" \t");
  std::string interp = line.substr(0, e);
  std::string arg;
  if (e != std::string::npos) {
    size_t ab = line.find_first_not_of(" \t", e);
    if (ab != std::string::npos) {
      arg = line.substr(ab);
      arg.erase(arg.find_last_not_of(" \t\r") + 1);
    }
  }
  std::vector<std::string> nargv = {interp};
  if (!arg.empty()) nargv.push_back(arg);
  nargv.push_back(path);
  if (argv.size() > 1) nargv.insert(nargv.end(), argv.begin() + 1, argv.end());
  argv = std::move(nargv);
  path = interp;
  return true;
}

// Lays out argc, argv, envp and auxv at the top of the new stack. Returns the initial rsp.
// `stack_limit` is the new program's RLIMIT_STACK soft limit.
Result<uint64_t> BuildStack(platform::Context& ctx, mm::MemoryManager& mm,
                            const kernel::Credentials& c, bool secure, const LoadedElf& elf,
                            const std::string& execfn, const std::vector<std::string>& argv,
                            const std::vector<std::string>& envp, uint64_t stack_limit) {
  // Strings area, built downwards from the top.
  std::vector<uint8_t> strings;
  auto push = [&](const void* p, size_t n) {
    strings.insert(strings.begin(), static_cast<const uint8_t*>(p),
                   static_cast<const uint8_t*>(p) + n);
    return kStackTop - strings.size();
  };
  uint64_t execfn_addr = push(execfn.c_str(), execfn.size() + 1);
  std::vector<uint64_t> env_addrs, arg_addrs;
  for (auto it = envp.rbegin(); it != envp.rend(); ++it) env_addrs.insert(env_addrs.begin(), push(it->c_str(), it->size() + 1));
  for (auto it = argv.rbegin(); it != argv.rend(); ++it) arg_addrs.insert(arg_addrs.begin(), push(it->c_str(), it->size() + 1));
  const char kPlatform[] = "x86_64";
  uint64_t platform_addr = push(kPlatform, sizeof(kPlatform));
  uint8_t random[16];
  if (getrandom(random, sizeof(random), 0) != sizeof(random)) memset(random, 0x5a, sizeof(random));
  uint64_t random_addr = push(random, sizeof(random));
  uint64_t arg_limit = std::max(std::min(stack_limit / 4, kArgLimitMax), kArgMax);
  uint64_t pointers = (std::max<size_t>(argv.size(), 1) + envp.size()) * 8;
  if (arg_limit <= pointers || strings.size() > arg_limit - pointers) return Errno(E2BIG);

  // clang-format off
  std::vector<uint64_t> auxv = {
      abi::kAT_SYSINFO_EHDR, mm.as().VdsoBase(), abi::kAT_MINSIGSTKSZ, 2048,
      abi::kAT_HWCAP,  getauxval(AT_HWCAP), abi::kAT_PAGESZ, kPageSize,
      abi::kAT_CLKTCK, 100, abi::kAT_PHDR, elf.phdr, abi::kAT_PHENT, elf.phent,
      abi::kAT_PHNUM, elf.phnum, abi::kAT_BASE, elf.base, abi::kAT_FLAGS, 0,
      abi::kAT_ENTRY, elf.main_entry, abi::kAT_UID, c.ruid, abi::kAT_EUID, c.euid,
      abi::kAT_GID, c.rgid, abi::kAT_EGID, c.egid, abi::kAT_SECURE, secure,
      abi::kAT_RANDOM, random_addr, abi::kAT_HWCAP2, getauxval(AT_HWCAP2),
      abi::kAT_EXECFN, execfn_addr, abi::kAT_PLATFORM, platform_addr, abi::kAT_NULL, 0};
  // clang-format on
  if (mm.as().VdsoBase() == 0) auxv[1] = 0;
  mm.set_auxv(auxv);
  std::vector<uint64_t> words;
  words.push_back(argv.size());
  words.insert(words.end(), arg_addrs.begin(), arg_addrs.end());
  words.push_back(0);
  words.insert(words.end(), env_addrs.begin(), env_addrs.end());
  words.push_back(0);
  words.insert(words.end(), auxv.begin(), auxv.end());
  uint64_t strings_bottom = kStackTop - strings.size();
  uint64_t sp = (strings_bottom - words.size() * 8) & ~uint64_t{15};
  std::vector<uint8_t> block(strings_bottom - sp, 0);
  memcpy(block.data(), words.data(), words.size() * 8);
  // As Linux's setup_arg_pages, the stack holds at least what execve put on it.
  uint64_t size = std::max(PageRoundDown(std::min(stack_limit, kMaxStack)),
                           PageRoundUp(kStackTop - sp) + kPageSize);
  SENTRY_TRY(mm.MapAnonymous(ctx, kStackTop - size, size, PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_FIXED | MAP_NORESERVE, "[stack]"));
  if (mm.as().WriteMemory(GuestAddr(sp), block) != block.size() ||
      mm.as().WriteMemory(GuestAddr(strings_bottom), strings) != strings.size()) {
    return Errno(EFAULT);
  }
  return sp;
}

// Kills the other threads of the group and waits until they are gone, then makes `t` the
// group's leader (execve's de_thread). EAGAIN if the group is already exiting or another of
// its threads is exec'ing: `t` is then on its way out too, as in Linux.
Result<void> DeThread(kernel::Task& t) {
  kernel::Kernel& k = t.kernel();
  for (;;) {
    {
      absl::MutexLock l(&k.mu());
      if (t.exec_kill_ || t.tg().exiting) return Errno(EAGAIN);
      if (t.tg().tasks.size() == 1) {
        k.TakeOverLeader(t);
        return Ok();
      }
      for (kernel::Task* o : t.tg().tasks) {
        if (o == &t) continue;
        o->exec_kill_ = true;
        o->Interrupt();
      }
    }
    t.waiter().WaitUntil(absl::Now() + absl::Milliseconds(10));
  }
}

}  // namespace

Result<void> Exec(kernel::Task& t, std::string path, std::vector<std::string> argv,
                  std::vector<std::string> envp) {
  vfs::FileRef file = SENTRY_TRY(OpenExec(t, path));
  return ExecFile(t, std::move(file), std::move(path), std::move(argv), std::move(envp),
                  /*path_inaccessible=*/false);
}

Result<void> ExecFile(kernel::Task& t, vfs::FileRef file, std::string filename,
                      std::vector<std::string> argv, std::vector<std::string> envp,
                      bool path_inaccessible) {
  std::string execfn = filename;
  std::string path = std::move(filename);
  bool unreadable = false;  // Linux's would_dump: then the program is not dumpable
  for (int depth = 0;; depth++) {
    unreadable |= !Readable(t, file);
    bool script = SENTRY_TRY(Shebang(t, file, path, argv));
    if (!script) break;
    // The interpreter could not open the script by the name it would be given (binfmt_script).
    if (path_inaccessible) return Errno(ENOENT);
    if (depth >= kMaxInterpDepth) return Errno(ELOOP);
    file = SENTRY_TRY(OpenExec(t, path));
  }

  // Load into a fresh address space; the old program stays intact until this succeeds.
  auto ctx_or = t.kernel().platform().NewAddressSpace();
  if (!ctx_or.ok()) {
    log::Sentry().error("execve: {}", ctx_or.status().ToString());
    return Errno(ENOMEM);
  }
  std::unique_ptr<platform::Context> ctx = std::move(*ctx_or);
  auto mm = std::make_shared<mm::MemoryManager>(ctx->address_space());
  // No guest code has run in the new address space: its mappings go in as a batch (the
  // stack's first write, or the end of the load, carries them out).
  ctx->address_space()->BeginBatch(*ctx);
  LoadedElf elf = SENTRY_TRY(LoadElf(t, *ctx, *mm, file));
  mm->SetBrkStart(elf.brk);
  // The credentials the new program runs with (the old ones stay until the point of no
  // return); auxv already tells it its ids and whether it runs in secure mode.
  // A set-ID program's ids come from the program run (a script's interpreter, never the
  // script). A tracer without CAP_SYS_PTRACE over the caller's namespace keeps execve from
  // raising anything.
  kernel::Credentials creds;
  bool unsafe_trace = false;
  uint64_t stack_limit;
  {
    absl::MutexLock l(&t.kernel().mu());
    creds = t.tg().creds;
    stack_limit = t.tg().rlimits[RLIMIT_STACK].cur;
    kernel::Task* tracer = t.ptrace_.tracer;
    unsafe_trace = tracer && !tracer->tg().creds.CapableIn(creds.user_ns.get(), CAP_SYS_PTRACE);
  }
  const kernel::ExecFileIds set_ids =
      creds.no_new_privs ? kernel::ExecFileIds{} : SetIdsOf(file, creds);
  const bool secure = creds.TransformForExec(set_ids, unsafe_trace);
  // A set-ID program does not get a caller's larger stack limit (Linux's begin_new_exec
  // lowers it to _STK_LIM, for the layout and for the process).
  const bool lower_stack_limit = secure && stack_limit > kStackLimitDefault;
  if (lower_stack_limit) stack_limit = kStackLimitDefault;
  uint64_t sp =
      SENTRY_TRY(BuildStack(*ctx, *mm, creds, secure, elf, execfn, argv, envp, stack_limit));
  SENTRY_TRY(ctx->address_space()->EndBatch());

  // Point of no return once the other threads are gone (DeThread fails only when this thread
  // is being killed anyway).
  SENTRY_TRY(DeThread(t));
  t.RetireContextCpu();
  if (t.ctx_) t.ctx_->Kill();
  t.ctx_ = std::move(ctx);
  t.WatchHostDeath();
  t.AdoptContextCpu();
  t.mm_ = mm;
  t.fds().CloseOnExec();
  t.altstack_ = {0, abi::kSS_DISABLE, 0, 0};
  t.clear_child_tid_ = 0;
  t.robust_list_ = 0;
  t.rseq_ = {};  // the new stub has no host registration either
  // comm is the name exec'd (a script's, not its interpreter's); /proc/PID/exe the file run.
  t.set_comm(execfn.substr(execfn.rfind('/') + 1));
  // The old mm goes after the lock is dropped: its shared memory segments hear of it.
  std::shared_ptr<mm::MemoryManager> old_mm;
  {
    absl::MutexLock l(&t.kernel().mu());
    kernel::ThreadGroup& tg = t.tg();
    old_mm = std::exchange(tg.mm, mm);
    tg.argv = argv;
    tg.envp = envp;
    tg.exe = file;
    tg.did_exec = true;
    // Dumpable unless unreadable or run with split ids (Linux looks at the old ids here),
    // then as any credential change would have it.
    tg.dumpable = !unreadable && tg.creds.euid == tg.creds.ruid && tg.creds.egid == tg.creds.rgid;
    if (creds.UnsettlesDumpable(tg.creds)) tg.dumpable = false;
    if (secure || creds.UnsettlesDumpable(tg.creds)) t.pdeathsig_ = 0;
    tg.creds = std::move(creds);
    if (lower_stack_limit) tg.rlimits[RLIMIT_STACK].cur = stack_limit;
    tg.timers.KillPosix();  // itimers survive execve; POSIX timers do not
    {
      // The thread and process keyrings do not survive execve; the session keyring does.
      absl::MutexLock kl(&t.kernel().keys().mu());
      t.keyrings_.thread.reset();
      tg.process_keyring.reset();
    }
    t.personality_ &= ~0x0400000u;  // READ_IMPLIES_EXEC goes, as x86_64's SET_PERSONALITY
    // A set-ID program also loses the flags that would weaken its address space
    // (PER_CLEAR_ON_SETID: ADDR_NO_RANDOMIZE, MMAP_PAGE_ZERO, ADDR_COMPAT_LAYOUT).
    if (set_ids.uid || set_ids.gid) t.personality_ &= ~(0x0040000u | 0x0100000u | 0x0200000u);
    // Handlers reset to default; ignored signals stay ignored. The table is now private.
    auto h = std::make_shared<kernel::SignalHandlers>();
    for (int i = 0; i < abi::kNumSignals; i++) {
      if (tg.handlers->actions[i].handler == abi::kSigIgn) h->actions[i].handler = abi::kSigIgn;
    }
    tg.handlers = h;
  }
  if (t.vfork_done_) {
    t.vfork_done_->done = true;
    t.vfork_done_->queue.Notify();
    t.vfork_done_.reset();
  }
  platform::Registers r{};
  r.rip = elf.entry;
  r.rsp = sp;
  r.cs = 0x33;
  r.ss = 0x2b;
  r.eflags = 0x202;
  r.orig_rax = ~0ull;
  t.regs_ = r;
  return Ok();
}

}  // namespace sentry::loader
