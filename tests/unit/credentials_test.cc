// The capability model of kernel/credentials.cc, case by case from capabilities(7): the
// corners the conformance program cannot reach as root on the host (no_new_privs downgrades,
// fsgid outside the groups) and the invariants the syscalls rely on.
#include "sentry/kernel/credentials.h"

#include <gtest/gtest.h>
#include <sys/prctl.h>

namespace sentry::kernel {
namespace {

Credentials User(uint32_t uid) { return Credentials::Initial(uid, uid); }

TEST(CredentialsTest, InitialRootHasEverythingAndUsersNothing) {
  Credentials root = User(0);
  EXPECT_EQ(root.cap_permitted, kCapFullSet);
  EXPECT_EQ(root.cap_effective, kCapFullSet);
  EXPECT_EQ(root.cap_bounding, kCapFullSet);
  Credentials user = User(1000);
  EXPECT_EQ(user.cap_permitted, 0u);
  EXPECT_EQ(user.cap_effective, 0u);
  EXPECT_EQ(user.cap_bounding, kCapFullSet);
  EXPECT_FALSE(user.HasCapability(CAP_CHOWN));
}

TEST(CredentialsTest, LeavingRootDropsUnlessKeepCaps) {
  Credentials c = User(0);
  c.cap_inheritable = c.cap_ambient = CapBit(CAP_KILL);
  Credentials old = c;
  c.ruid = c.euid = c.suid = c.fsuid = 1000;
  c.FixupAfterUidChange(old);
  EXPECT_EQ(c.cap_permitted, 0u);
  EXPECT_EQ(c.cap_effective, 0u);
  EXPECT_EQ(c.cap_ambient, 0u);
  EXPECT_EQ(c.cap_inheritable, CapBit(CAP_KILL));

  c = old;
  c.securebits = kSecbitKeepCaps;
  c.ruid = c.euid = c.suid = c.fsuid = 1000;
  c.FixupAfterUidChange(old);
  EXPECT_EQ(c.cap_permitted, kCapFullSet);
  EXPECT_EQ(c.cap_effective, 0u);
  EXPECT_EQ(c.cap_ambient, 0u);
}

TEST(CredentialsTest, FsuidMovesTheFileSystemCapabilitiesOnly) {
  Credentials c = User(0);
  Credentials old = c;
  c.fsuid = 1000;
  c.FixupAfterFsuidChange(old);
  EXPECT_EQ(c.cap_effective, kCapFullSet & ~kCapFsSet);
  old = c;
  c.cap_permitted &= ~CapBit(CAP_CHOWN);
  old.cap_permitted = c.cap_permitted;
  c.fsuid = 0;
  c.FixupAfterFsuidChange(old);
  EXPECT_EQ(c.cap_effective, kCapFullSet & ~CapBit(CAP_CHOWN));
}

// An OCI container's init (runc): the sets as config.json gives them, then the execve of its
// entry point.
TEST(CredentialsTest, InitialWithGivenSetsIsRuncsInit) {
  CapabilitySets docker;
  docker.bounding = docker.permitted = docker.effective =
      CapBit(CAP_CHOWN) | CapBit(CAP_NET_BIND_SERVICE) | CapBit(CAP_KILL);
  Credentials root = Credentials::Initial(0, 0, &docker);
  EXPECT_EQ(root.cap_bounding, docker.bounding);
  EXPECT_EQ(root.cap_permitted, docker.bounding);  // root: bounding | inheritable
  EXPECT_EQ(root.cap_effective, docker.bounding);
  EXPECT_EQ(root.cap_inheritable, 0u);
  EXPECT_FALSE(root.HasCapability(CAP_SYS_ADMIN));
  EXPECT_TRUE(root.HasCapability(CAP_CHOWN));
  // A user: nothing survives the execve but the ambient set, which must be permitted and
  // inheritable.
  Credentials user = Credentials::Initial(1000, 1000, &docker);
  EXPECT_EQ(user.cap_permitted, 0u);
  EXPECT_EQ(user.cap_effective, 0u);
  EXPECT_EQ(user.cap_bounding, docker.bounding);
  CapabilitySets ambient = docker;
  ambient.inheritable = CapBit(CAP_NET_BIND_SERVICE) | CapBit(CAP_SYS_TIME);
  ambient.ambient = CapBit(CAP_NET_BIND_SERVICE) | CapBit(CAP_SYS_TIME);  // SYS_TIME: not permitted
  user = Credentials::Initial(1000, 1000, &ambient, /*no_new_privs=*/true);
  EXPECT_EQ(user.cap_ambient, CapBit(CAP_NET_BIND_SERVICE));
  EXPECT_EQ(user.cap_permitted, CapBit(CAP_NET_BIND_SERVICE));
  EXPECT_EQ(user.cap_effective, CapBit(CAP_NET_BIND_SERVICE));
  EXPECT_TRUE(user.no_new_privs);
  // Without given sets: a full-capability parent's, as before.
  EXPECT_EQ(Credentials::Initial(0, 0).cap_effective, kCapFullSet);
}

TEST(CredentialsTest, CapabilityNames) {
  EXPECT_EQ(CapabilityByName("CAP_CHOWN"), 0);
  EXPECT_EQ(CapabilityByName("CAP_SYS_ADMIN"), CAP_SYS_ADMIN);
  EXPECT_EQ(CapabilityByName("CAP_AUDIT_READ"), CAP_AUDIT_READ);
  EXPECT_EQ(CapabilityByName("CAP_CHECKPOINT_RESTORE"), kCapLastCap);
  EXPECT_EQ(CapabilityByName("chown"), std::nullopt);
  EXPECT_EQ(CapabilityByName("CAP_"), std::nullopt);
  EXPECT_EQ(CapabilityByName("CAP_FLY"), std::nullopt);
}

TEST(CredentialsTest, ExecKeepsAmbientForUsers) {
  Credentials c = User(1000);
  c.cap_permitted = c.cap_inheritable = c.cap_ambient = CapBit(CAP_NET_BIND_SERVICE);
  EXPECT_FALSE(c.TransformForExec());
  EXPECT_EQ(c.cap_permitted, CapBit(CAP_NET_BIND_SERVICE));
  EXPECT_EQ(c.cap_effective, CapBit(CAP_NET_BIND_SERVICE));
}

TEST(CredentialsTest, ExecWithAnFsgidOutsideTheGroupsClearsAmbient) {
  // Linux's in_group_p(egid) fails: the exec counts as changing ids.
  Credentials c = User(1000);
  c.cap_permitted = c.cap_inheritable = c.cap_ambient = CapBit(CAP_KILL);
  c.fsgid = 5;
  c.TransformForExec();
  EXPECT_EQ(c.cap_ambient, 0u);
  EXPECT_EQ(c.cap_permitted, 0u);
  EXPECT_EQ(c.fsgid, 1000u);
}

TEST(CredentialsTest, ExecWithSplitIdsIsSecure) {
  Credentials c = User(0);
  c.ruid = 1000;
  EXPECT_TRUE(c.TransformForExec());
  EXPECT_EQ(c.cap_effective, kCapFullSet);
  EXPECT_EQ(c.suid, 0u);
}

TEST(CredentialsTest, NoNewPrivsExecGainsNothing) {
  // A user whose euid is 0 but who gave its permitted set away gets it back from execve,
  // unless no_new_privs: then the ids fall back to the real ones and permitted to the old.
  Credentials c = User(0);
  c.ruid = 1000;
  c.cap_permitted = c.cap_effective = CapBit(CAP_KILL);
  c.no_new_privs = true;
  c.TransformForExec();
  EXPECT_EQ(c.euid, 1000u);
  EXPECT_EQ(c.suid, 1000u);
  EXPECT_EQ(c.cap_permitted, CapBit(CAP_KILL));
}

TEST(CredentialsTest, SetuidRootProgramGivesAUserRoot) {
  Credentials c = User(1000);
  EXPECT_TRUE(c.TransformForExec({.uid = 0}));
  EXPECT_EQ(c.ruid, 1000u);
  EXPECT_EQ(c.euid, 0u);
  EXPECT_EQ(c.suid, 0u);
  EXPECT_EQ(c.fsuid, 0u);
  EXPECT_EQ(c.egid, 1000u);
  EXPECT_EQ(c.cap_permitted, kCapFullSet);
  EXPECT_EQ(c.cap_effective, kCapFullSet);
}

TEST(CredentialsTest, SetgidProgramChangesTheGroupAndClearsAmbient) {
  Credentials c = User(1000);
  c.cap_permitted = c.cap_inheritable = c.cap_ambient = CapBit(CAP_KILL);
  EXPECT_TRUE(c.TransformForExec({.gid = 4321}));
  EXPECT_EQ(c.egid, 4321u);
  EXPECT_EQ(c.sgid, 4321u);
  EXPECT_EQ(c.rgid, 1000u);
  EXPECT_EQ(c.euid, 1000u);
  EXPECT_EQ(c.cap_ambient, 0u);
  EXPECT_EQ(c.cap_permitted, 0u);
}

TEST(CredentialsTest, NoNewPrivsIgnoresSetIdBits) {
  Credentials c = User(1000);
  c.no_new_privs = true;
  EXPECT_FALSE(c.TransformForExec({.uid = 0, .gid = 0}));
  EXPECT_EQ(c.euid, 1000u);
  EXPECT_EQ(c.egid, 1000u);
  EXPECT_EQ(c.cap_permitted, 0u);
}

TEST(CredentialsTest, AnUnprivilegedTracerKeepsTheIds) {
  // The program still counts as set-ID: secure mode, though nothing was gained.
  Credentials c = User(1000);
  EXPECT_TRUE(c.TransformForExec({.uid = 0}, /*unsafe_trace=*/true));
  EXPECT_EQ(c.euid, 1000u);
  EXPECT_EQ(c.suid, 1000u);
  EXPECT_EQ(c.cap_permitted, 0u);
  EXPECT_EQ(c.cap_effective, 0u);
  // With CAP_SETUID the caller could take the ids itself: it keeps them, but no more
  // capabilities than it had.
  Credentials d = User(1000);
  d.cap_permitted = d.cap_effective = CapBit(CAP_SETUID);
  d.TransformForExec({.uid = 0}, /*unsafe_trace=*/true);
  EXPECT_EQ(d.euid, 0u);
  EXPECT_EQ(d.cap_permitted, CapBit(CAP_SETUID));
}

TEST(CredentialsTest, NorootMakesUidZeroOrdinary) {
  Credentials c = User(0);
  c.securebits = kSecbitNoroot | kSecbitKeepCaps;
  c.TransformForExec();
  EXPECT_EQ(c.cap_permitted, 0u);
  EXPECT_EQ(c.securebits, kSecbitNoroot);  // KEEP_CAPS never survives execve
}

TEST(CredentialsTest, CapsetRules) {
  Credentials c = User(0);
  EXPECT_EQ(c.SetCapabilities(0, kCapFullSet, kCapFullSet).error().code(), 0);
  EXPECT_EQ(c.SetCapabilities(CapBit(CAP_KILL), 0, 0).error().code(), EPERM);  // eff outside prm
  EXPECT_EQ(c.SetCapabilities(0, CapBit(CAP_KILL), kCapFullSet).error().code(), 0);
  // Without CAP_SETPCAP (effective is empty) inheritable may keep what it has.
  EXPECT_EQ(c.SetCapabilities(0, CapBit(CAP_KILL), kCapFullSet).error().code(), 0);
  EXPECT_EQ(c.SetCapabilities(0, CapBit(CAP_KILL), CapBit(CAP_CHOWN)).error().code(), 0);
  EXPECT_EQ(c.SetCapabilities(0, CapBit(CAP_KILL), CapBit(CAP_SYS_ADMIN)).error().code(), EPERM);
  EXPECT_EQ(c.SetCapabilities(0, CapBit(CAP_CHOWN), 0).error().code(), EPERM);  // prm grows
}

TEST(CredentialsTest, PrctlErrors) {
  Credentials c = User(0);
  EXPECT_EQ(c.Prctl(PR_CAPBSET_READ, kCapLastCap + 1, 0, 0, 0).error().code(), EINVAL);
  EXPECT_EQ(*c.Prctl(PR_CAPBSET_DROP, CAP_SYS_BOOT, 0, 0, 0), 0u);
  EXPECT_EQ(*c.Prctl(PR_CAPBSET_READ, CAP_SYS_BOOT, 0, 0, 0), 0u);
  EXPECT_EQ(c.Prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_KILL, 0, 0).error().code(), EPERM);
  c.cap_inheritable = CapBit(CAP_KILL);
  EXPECT_EQ(*c.Prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_KILL, 0, 0), 0u);
  EXPECT_EQ(*c.Prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, CAP_KILL, 0, 0), 1u);
  EXPECT_EQ(*c.Prctl(PR_SET_SECUREBITS, kSecbitKeepCaps | kSecbitKeepCapsLocked, 0, 0, 0), 0u);
  EXPECT_EQ(c.Prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0).error().code(), EPERM);
  EXPECT_EQ(c.Prctl(PR_SET_SECUREBITS, kSecbitKeepCaps, 0, 0, 0).error().code(), EPERM);
  c.cap_effective = 0;
  EXPECT_EQ(c.Prctl(PR_CAPBSET_DROP, CAP_CHOWN, 0, 0, 0).error().code(), EPERM);
}

}  // namespace
}  // namespace sentry::kernel
