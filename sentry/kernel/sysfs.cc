// /sys as far as programs commonly read it: the sandbox's CPUs (what glibc's
// sysconf(_SC_NPROCESSORS_*) and nproc-like tools count), transparent huge page mode, and
// /sys/fs/cgroup: the sandbox's own host group read-only, or empty (cgroup_view.h).
// Everything is read-only; the host's /sys is never shown.
#include "sentry/kernel/sysfs.h"

#include "absl/strings/str_format.h"
#include "sentry/kernel/cgroup_view.h"
#include "sentry/kernel/sched.h"
#include "vfs/synthetic.h"

namespace sentry::kernel {
namespace {

constexpr uint32_t kSysfsMagic = 0x62656572;

}  // namespace

vfs::InodeRef NewSysfs(Kernel&) {
  auto sb = std::make_shared<vfs::MemSuper>(kSysfsMagic);
  auto dir = [&sb]() { return std::make_shared<vfs::SyntheticDir>(sb, 0555); };
  auto text = [&sb](std::string s) -> vfs::InodeRef {
    return std::make_shared<vfs::SyntheticFile>(sb, 0444,
                                                [s]() -> Result<std::string> { return s; });
  };
  const SandboxCpus& cpus = Cpus();
  CpuSet possible;
  for (int i = 0; i < cpus.nr_cpu_ids; i++) possible.set(i);

  auto cpu = dir();
  cpu->Add("online", text(CpuList(cpus.online) + "\n"));
  cpu->Add("possible", text(CpuList(possible) + "\n"));
  cpu->Add("present", text(CpuList(possible) + "\n"));
  cpu->Add("offline", text(CpuList(possible & ~cpus.online) + "\n"));
  cpu->Add("kernel_max", text(absl::StrFormat("%d\n", kMaxCpus - 1)));
  for (int i = 0; i < cpus.nr_cpu_ids; i++) {
    auto one = dir();
    one->Add("online", text(cpus.online[i] ? "1\n" : "0\n"));
    auto topology = dir();
    topology->Add("core_id", text(absl::StrFormat("%d\n", i)));
    topology->Add("physical_package_id", text("0\n"));
    topology->Add("thread_siblings_list", text(absl::StrFormat("%d\n", i)));
    topology->Add("core_siblings_list", text(CpuList(possible) + "\n"));
    one->Add("topology", topology);
    cpu->Add(absl::StrFormat("cpu%d", i), one);
  }
  auto system = dir();
  system->Add("cpu", cpu);
  auto node = dir();
  node->Add("online", text("0\n"));
  node->Add("possible", text("0\n"));
  system->Add("node", node);
  auto devices = dir();
  devices->Add("system", system);

  auto thp = dir();
  thp->Add("enabled", text("always [madvise] never\n"));
  thp->Add("defrag", text("always defer defer+madvise [madvise] never\n"));
  auto mm = dir();
  mm->Add("transparent_hugepage", thp);
  auto kernel = dir();
  kernel->Add("mm", mm);

  auto fs = dir();
  fs->Add("cgroup", NewCgroupViewDir(sb));

  auto root = dir();
  root->Add("devices", devices);
  root->Add("kernel", kernel);
  root->Add("fs", fs);
  root->Add("class", dir());
  root->Add("bus", dir());
  return root;
}

}  // namespace sentry::kernel
