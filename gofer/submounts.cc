#include "gofer/submounts.h"

#include <linux/magic.h>

#include <algorithm>
#include <array>

namespace sentry::gofer {
namespace {

// File systems that hold files someone stored, on a disk or across the network. Not here, so
// never entered: proc, sysfs, devtmpfs, devpts, cgroup(2), debugfs, tracefs, securityfs, bpf,
// configfs, pstore, efivarfs, mqueue, hugetlbfs, binfmt_misc, autofs, selinuxfs, nsfs,
// fusectl, tmpfs, ramfs, and anything this list does not know.
constexpr std::array<long, 31> kPersistent = {
    EXT4_SUPER_MAGIC,  // ext2, ext3 and ext4 share it
    XFS_SUPER_MAGIC,
    BTRFS_SUPER_MAGIC,
    F2FS_SUPER_MAGIC,
    0x2fc12fc1,  // zfs
    0xca451a4e,  // bcachefs
    NILFS_SUPER_MAGIC,
    REISERFS_SUPER_MAGIC,
    0x3153464a,  // jfs
    OCFS2_SUPER_MAGIC,
    0x01161970,         // gfs2
    MSDOS_SUPER_MAGIC,  // vfat
    EXFAT_SUPER_MAGIC,
    0x5346544e,  // ntfs
    0x7366746e,  // ntfs3
    0x482b,      // hfsplus
    ISOFS_SUPER_MAGIC,
    UDF_SUPER_MAGIC,
    SQUASHFS_MAGIC,
    EROFS_SUPER_MAGIC_V1,
    OVERLAYFS_SUPER_MAGIC,
    FUSE_SUPER_MAGIC,  // also virtiofs
    NFS_SUPER_MAGIC,
    CIFS_SUPER_MAGIC,
    SMB2_SUPER_MAGIC,
    V9FS_MAGIC,
    CEPH_SUPER_MAGIC,
    AFS_FS_MAGIC,
    AFS_SUPER_MAGIC,
    0x0bd00bd0,  // lustre
    0x47504653,  // gpfs
};

}  // namespace

std::optional<Submounts> ParseSubmounts(std::string_view s) {
  if (s == "auto") return Submounts::kAuto;
  if (s == "none") return Submounts::kNone;
  return std::nullopt;
}

const char* SubmountsName(Submounts s) { return s == Submounts::kNone ? "none" : "auto"; }

bool IsPersistentFs(long f_type) {
  // statfs reports f_type as a signed long: magics with the top bit set come out negative
  // on some architectures; compare the low 32 bits.
  auto t = static_cast<uint32_t>(f_type);
  return std::any_of(kPersistent.begin(), kPersistent.end(),
                     [t](long m) { return static_cast<uint32_t>(m) == t; });
}

}  // namespace sentry::gofer
