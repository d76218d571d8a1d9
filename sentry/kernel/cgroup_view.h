// The sandbox's own host cgroup as the guest sees it: a read-only /sys/fs/cgroup whose files
// are the host group's (memory.limit_in_bytes, memory.max, pids.max, cpu.cfs_quota_us, ...),
// read live, and a /proc/PID/cgroup that places every process at the root of each hierarchy,
// as a container in a cgroup namespace of its own sees them under runc. So programs that
// size themselves by their container's limits (a JVM's heap, a build's job count, python's
// test suite) find the limits of `linux.resources`.
//
// Only a sandbox with a group of its own (an OCI container with linux.resources or a
// cgroupsPath) has a view; anyone else's /sys/fs/cgroup stays an empty directory and
// /proc/PID/cgroup says "0::/", so no host group of the caller's shows through. The group's
// child groups and the hierarchies' other groups are never shown; writes fail (EACCES).
#pragma once

#include <string>
#include <vector>

#include "vfs/mem_inode.h"

namespace sentry::kernel {

// One hierarchy of the view.
struct CgroupViewDir {
  std::string name;                // the hierarchy's directory ("memory", "cpu,cpuacct"); "" for v2
  std::string host_dir;            // the group's host directory
  int hierarchy_id = 0;            // /proc/PID/cgroup's first field (0 for v2)
  std::vector<std::string> files;  // the readable files of host_dir, sorted
};

// Before the Sentry's pivot: lists the readable files of each of `dirs` (a v1 group's
// directory per hierarchy, e.g. /sys/fs/cgroup/memory/docker/ID, or the one v2 group) and
// keeps an fd of each for sentry::ReadHostFile. Call once, before the guest runs; an empty
// `dirs` leaves the view empty.
void PrepareCgroupView(const std::vector<std::string>& dirs, bool v2);

// The hierarchies of the view (empty: none), and whether it is a v2 one.
const std::vector<CgroupViewDir>& CgroupView();
bool CgroupViewIsV2();

// /sys/fs/cgroup's directory: the view, or an empty directory. `sb` is sysfs's superblock.
vfs::InodeRef NewCgroupViewDir(const vfs::MemSuperRef& sb);

// /proc/PID/cgroup's text: "ID:NAME:/" per v1 hierarchy of the view (highest id first, as
// Linux lists them), then "0::/".
std::string CgroupViewProcText();

}  // namespace sentry::kernel
