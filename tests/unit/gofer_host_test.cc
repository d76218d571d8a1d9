// What the gofer lets reach the host: never a set-ID bit, the owner it was told to use, and
// no host mount below an attach root but those its submount policy allows. A real
// `sentry gofer` process over a temporary host tree, driven through gofer::Client.
#include <fcntl.h>
#include <ftw.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gofer/client.h"
#include "gofer/launch.h"

#ifndef SENTRY_BINARY
#error "SENTRY_BINARY must name the built sentry binary"
#endif

namespace sentry::gofer {
namespace {

template <typename T>
int Err(const Result<T>& r) {
  return r.ok() ? 0 : r.error().code();
}

void WriteFile(const std::string& path, const std::string& data) { std::ofstream(path) << data; }

std::string ReadFd(int fd) {
  std::string out;
  char buf[256];
  ssize_t n;
  off_t off = 0;
  while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
    out.append(buf, n);
    off += n;
  }
  return out;
}

struct stat HostStat(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(lstat(path.c_str(), &st), 0) << path;
  return st;
}

mode_t HostMode(const std::string& path) { return HostStat(path).st_mode & 07777; }

int RemoveEntry(const char* path, const struct stat*, int, struct FTW*) { return remove(path); }

// One gofer serving `dir` read-write as "/".
struct Gofer {
  // `direct`: served in this process over the root fd the gofer donates (Client::GoDirect).
  Gofer(const std::string& dir, Submounts submounts, GoferOptions options, bool direct) {
    auto p = StartGofer(SENTRY_BINARY, {{"/", dir, false, submounts}}, options);
    EXPECT_TRUE(p.ok()) << p.status();
    if (!p.ok()) return;
    proc = *p;
    client = std::make_unique<Client>(proc.sock);
    if (direct) {
      EXPECT_TRUE(client->GoDirect({"/"}, options).empty());
    }
    bool ro = true;
    auto r = client->Attach("/", &ro);
    EXPECT_TRUE(r.ok());
    if (r.ok()) root = r->handle;
  }
  ~Gofer() {
    client.reset();  // EOF: the gofer exits
    if (proc.pid > 0) waitpid(proc.pid, nullptr, 0);
  }
  Node Walk(Handle dir, const std::string& name) {
    auto n = client->Walk(dir, name);
    EXPECT_TRUE(n.ok()) << name << ": " << Err(n);
    return n.ok() ? *n : Node{};
  }
  GoferProcess proc;
  std::unique_ptr<Client> client;
  Handle root = 0;
};

// Each test runs in gofer mode and in direct mode (the same handlers, in this process).
class GoferHostTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gofer_host_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    top_ = tmpl;
    dir_ = top_ + "/served";
    ASSERT_EQ(mkdir(dir_.c_str(), 0755), 0);
  }
  void TearDown() override {
    for (auto it = mounts_.rbegin(); it != mounts_.rend(); ++it) umount2(it->c_str(), MNT_DETACH);
    nftw(top_.c_str(), RemoveEntry, 16, FTW_DEPTH | FTW_PHYS);
  }
  // mount(2) at `at` (created first); records it for TearDown.
  bool Mount(const std::string& src, const std::string& at, const char* type, unsigned long flags,
             bool file = false) {
    if (file) {
      WriteFile(at, "");
    } else {
      mkdir(at.c_str(), 0755);
    }
    if (mount(src.c_str(), at.c_str(), type, flags, nullptr) != 0) return false;
    mounts_.push_back(at);
    return true;
  }

  bool direct() const { return GetParam(); }

  std::string top_, dir_;
  std::vector<std::string> mounts_;
};

TEST_P(GoferHostTest, NoSetIdBitReachesTheHost) {
  Gofer g(dir_, Submounts::kAuto, {}, direct());
  auto c = g.client->Create(g.root, "created", O_RDWR, 06755, 0, 0);
  ASSERT_TRUE(c.ok()) << Err(c);
  close(c->second);
  EXPECT_EQ(HostMode(dir_ + "/created"), 0755u);
  ASSERT_TRUE(g.client->Mknod(g.root, "reg", S_IFREG | 06755, 0, 0).ok());
  EXPECT_EQ(HostMode(dir_ + "/reg"), 0755u);
  ASSERT_TRUE(g.client->Mknod(g.root, "fifo", S_IFIFO | 06755, 0, 0).ok());
  EXPECT_EQ(HostMode(dir_ + "/fifo"), 0755u);
  auto d = g.client->Mkdir(g.root, "dir", 07755, 0, 0);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(HostMode(dir_ + "/dir") & S_ISUID, 0u);

  // chmod: a file loses both bits, a directory keeps S_ISGID (group inheritance only).
  SetAttrRequest req;
  req.mask = kSetMode;
  req.mode = 06755;
  auto st = g.client->SetAttr(c->first.handle, req);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->st_mode & 07777, 0755u);
  EXPECT_EQ(HostMode(dir_ + "/created"), 0755u);
  req.mode = 06775;
  ASSERT_TRUE(g.client->SetAttr(d->handle, req).ok());
  EXPECT_EQ(HostMode(dir_ + "/dir"), 02775u);

  // A set-ID file the host made loses its bits before the gofer hands out a writable fd, or
  // truncates it; a read-only open leaves it alone.
  WriteFile(dir_ + "/host_suid", "x");
  ASSERT_EQ(chmod((dir_ + "/host_suid").c_str(), 06755), 0);
  Node h = g.Walk(g.root, "host_suid");
  auto rfd = g.client->Open(h.handle, O_RDONLY);
  ASSERT_TRUE(rfd.ok());
  close(*rfd);
  EXPECT_EQ(HostMode(dir_ + "/host_suid"), 06755u);
  auto wfd = g.client->Open(h.handle, O_WRONLY | O_APPEND);
  ASSERT_TRUE(wfd.ok()) << Err(wfd);
  close(*wfd);
  EXPECT_EQ(HostMode(dir_ + "/host_suid"), 0755u);
  ASSERT_EQ(chmod((dir_ + "/host_suid").c_str(), 02750), 0);  // S_ISGID with group exec
  req.mask = kSetSize;
  req.size = 0;
  ASSERT_TRUE(g.client->SetAttr(h.handle, req).ok());
  EXPECT_EQ(HostMode(dir_ + "/host_suid"), 0750u);

  // File capabilities are set-ID bits by another name.
  EXPECT_EQ(Err(g.client->SetXattr(
                c->first.handle, "security.capability",
                std::string("\x01\x00\x00\x02\x80\x00\x00\x00", 8) + std::string(12, '\0'), 0)),
            EPERM);
}

TEST_P(GoferHostTest, FixedOwnerOwnsEverythingCreated) {
  GoferOptions opts;
  opts.owner = GoferOptions::Owner{geteuid(), getegid()};
  Gofer g(dir_, Submounts::kAuto, opts, direct());
  auto c = g.client->Create(g.root, "f", O_RDWR, 0644, 1234, 5678);
  ASSERT_TRUE(c.ok());
  close(c->second);
  ASSERT_TRUE(g.client->Mkdir(g.root, "d", 0755, 1234, 5678).ok());
  ASSERT_TRUE(g.client->Symlink(g.root, "l", "f", 1234, 5678).ok());
  ASSERT_TRUE(g.client->Mknod(g.root, "p", S_IFIFO | 0644, 1234, 5678).ok());
  for (const char* name : {"f", "d", "l", "p"}) {
    struct stat st = HostStat(dir_ + "/" + name);
    EXPECT_EQ(st.st_uid, geteuid()) << name;
    EXPECT_EQ(st.st_gid, getegid()) << name;
  }
  // A chown succeeds and changes nothing on the host.
  SetAttrRequest req;
  req.mask = kSetUid | kSetGid;
  req.uid = 0;
  req.gid = 0;
  if (geteuid() == 0) req.uid = req.gid = 1234;
  auto st = g.client->SetAttr(c->first.handle, req);
  ASSERT_TRUE(st.ok()) << Err(st);
  EXPECT_EQ(st->st_uid, geteuid());
  EXPECT_EQ(HostStat(dir_ + "/f").st_uid, geteuid());

  if (geteuid() != 0) return;
  // It needs no CAP_CHOWN then (nor CAP_FSETID): DAC_OVERRIDE, DAC_READ_SEARCH, FOWNER.
  std::ifstream status("/proc/" + std::to_string(g.proc.pid) + "/status");
  std::stringstream ss;
  ss << status.rdbuf();
  EXPECT_NE(ss.str().find("CapEff:\t000000000000000e"), std::string::npos) << ss.str();

  // An owner other than the gofer's own ids: a chown to it.
  opts.owner = GoferOptions::Owner{4321, 8765};
  Gofer other(dir_, Submounts::kAuto, opts, direct());
  auto c2 = other.client->Create(other.root, "f2", O_RDWR, 0644, 1234, 5678);
  ASSERT_TRUE(c2.ok());
  close(c2->second);
  EXPECT_EQ(HostStat(dir_ + "/f2").st_uid, 4321u);
  EXPECT_EQ(HostStat(dir_ + "/f2").st_gid, 8765u);
}

TEST_P(GoferHostTest, HostMountsAreSealed) {
  if (geteuid() != 0) GTEST_SKIP() << "mounting needs root";
  WriteFile(top_ + "/elsewhere", "same-fs");
  mkdir((top_ + "/extdir").c_str(), 0755);
  WriteFile(top_ + "/extdir/inner", "ext-inner");
  ASSERT_TRUE(Mount("none", dir_ + "/tmpfs", "tmpfs", 0));
  WriteFile(dir_ + "/tmpfs/hidden", "hidden");
  ASSERT_TRUE(Mount("proc", dir_ + "/proc", "proc", 0));
  ASSERT_TRUE(Mount(top_ + "/extdir", dir_ + "/bind", nullptr, MS_BIND));  // same ext4
  ASSERT_TRUE(Mount("/proc/version", dir_ + "/pfile", nullptr, MS_BIND, /*file=*/true));
  ASSERT_TRUE(Mount(top_ + "/elsewhere", dir_ + "/efile", nullptr, MS_BIND, /*file=*/true));
  Gofer g(dir_, Submounts::kAuto, {}, direct());
  for (const char* name : {"tmpfs", "proc"}) {
    SCOPED_TRACE(name);
    Node n = g.Walk(g.root, name);
    EXPECT_TRUE(S_ISDIR(n.st.st_mode));
    EXPECT_EQ(n.st.st_mode & 07777, 0555u);
    EXPECT_EQ(Err(g.client->Stat(n.handle)), 0);
    auto entries = g.client->ReadDir(n.handle);
    ASSERT_TRUE(entries.ok());
    EXPECT_TRUE(entries->empty());
    EXPECT_EQ(Err(g.client->Walk(n.handle, "hidden")), ENOENT);
    EXPECT_EQ(Err(g.client->Walk(n.handle, "self")), ENOENT);
    EXPECT_EQ(Err(g.client->WalkOpen(n.handle, "version")), ENOENT);
    EXPECT_EQ(Err(g.client->Create(n.handle, "x", O_RDWR, 0644, 0, 0)), EROFS);
    EXPECT_EQ(Err(g.client->Mkdir(n.handle, "x", 0755, 0, 0)), EROFS);
    EXPECT_EQ(Err(g.client->Symlink(n.handle, "x", "y", 0, 0)), EROFS);
    EXPECT_EQ(Err(g.client->Mknod(n.handle, "x", S_IFIFO | 0644, 0, 0)), EROFS);
    EXPECT_EQ(Err(g.client->Unlink(n.handle, "hidden", 0)), EROFS);
    EXPECT_EQ(Err(g.client->Rename(g.root, "bind", n.handle, "x", 0)), EROFS);
    SetAttrRequest req;
    req.mask = kSetMode;
    req.mode = 0777;
    EXPECT_EQ(Err(g.client->SetAttr(n.handle, req)), EROFS);
    EXPECT_EQ(Err(g.client->SetXattr(n.handle, "user.x", "v", 0)), EROFS);
    EXPECT_EQ(Err(g.client->GetXattr(n.handle, "user.x")), ENODATA);
    EXPECT_TRUE(g.client->ListXattr(n.handle)->empty());
    auto sfs = g.client->StatFs(n.handle);
    ASSERT_TRUE(sfs.ok());
    EXPECT_TRUE(sfs->f_flags & ST_RDONLY);
    EXPECT_EQ(sfs->f_type, 0);
  }
  // A file of a pseudo file system mounted over a file.
  EXPECT_EQ(Err(g.client->Walk(g.root, "pfile")), EACCES);
  // Mounts of a persistent file system are followed.
  Node b = g.Walk(g.root, "bind");
  auto in = g.client->WalkOpen(b.handle, "inner");
  ASSERT_TRUE(in.ok());
  ASSERT_GE(in->second, 0);
  EXPECT_EQ(ReadFd(in->second), "ext-inner");
  close(in->second);
  Node ef = g.Walk(g.root, "efile");
  auto efd = g.client->Open(ef.handle, O_RDONLY);
  ASSERT_TRUE(efd.ok());
  EXPECT_EQ(ReadFd(*efd), "same-fs");
  close(*efd);

  // --submounts=none: not even those.
  Gofer none(dir_, Submounts::kNone, {}, direct());
  Node nb = none.Walk(none.root, "bind");
  EXPECT_EQ(nb.st.st_mode & 07777, 0555u);
  EXPECT_EQ(Err(none.client->Walk(nb.handle, "inner")), ENOENT);
  EXPECT_EQ(Err(none.client->Walk(none.root, "efile")), EACCES);
  // The attach root itself is always served, whatever it is.
  Gofer tmpfs_root(dir_ + "/tmpfs", Submounts::kNone, {}, direct());
  auto hidden = tmpfs_root.client->WalkOpen(tmpfs_root.root, "hidden");
  ASSERT_TRUE(hidden.ok());
  ASSERT_GE(hidden->second, 0);
  EXPECT_EQ(ReadFd(hidden->second), "hidden");
  close(hidden->second);
}

TEST_P(GoferHostTest, MountAfterTheWalkIsCaughtAtOpen) {
  if (geteuid() != 0) GTEST_SKIP() << "mounting needs root";
  WriteFile(dir_ + "/f", "plain");
  Gofer g(dir_, Submounts::kAuto, {}, direct());
  Node f = g.Walk(g.root, "f");
  ASSERT_TRUE(Mount("/proc/version", dir_ + "/f", nullptr, MS_BIND, /*file=*/true));
  EXPECT_EQ(Err(g.client->Open(f.handle, O_RDONLY)), EACCES);
}

INSTANTIATE_TEST_SUITE_P(Modes, GoferHostTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return p.param ? "Direct" : "Gofer";
                         });

}  // namespace
}  // namespace sentry::gofer
