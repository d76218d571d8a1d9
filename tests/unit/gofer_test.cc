// The gofer end to end: a real `sentry gofer` process over a temporary host tree, driven
// through gofer::Client.
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <gtest/gtest.h>
#include <linux/fs.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gofer/client.h"
#include "gofer/launch.h"
#include "gofer/protocol.h"

#ifndef SENTRY_BINARY
#error "SENTRY_BINARY must name the built sentry binary"
#endif

namespace sentry::gofer {
namespace {

// The error code of a Result, or 0 if it holds a value.
template <typename T>
int Err(const Result<T>& r) {
  return r.ok() ? 0 : r.error().code();
}

void WriteFile(const std::string& path, const std::string& data) { std::ofstream(path) << data; }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string ReadFd(int fd) {
  std::string out;
  char buf[4096];
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

int RemoveEntry(const char* path, const struct stat*, int, struct FTW*) { return remove(path); }

// Each test runs twice: every call over the socket (gofer mode), and with both attach points
// served in this process (direct mode, Client::GoDirect).
class GoferTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gofer_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    top_ = tmpl;
    rw_ = top_ + "/rw";
    ro_ = top_ + "/ro";
    for (const auto& d : {rw_, ro_, rw_ + "/sub", top_ + "/outside"}) {
      ASSERT_EQ(mkdir(d.c_str(), 0755), 0);
    }
    WriteFile(rw_ + "/file.txt", "hello");
    WriteFile(rw_ + "/sub/inner.txt", "inner");
    WriteFile(ro_ + "/data.txt", "read only");
    WriteFile(top_ + "/outside/secret.txt", "secret");
    chmod((top_ + "/outside/secret.txt").c_str(), 0600);
    ASSERT_EQ(symlink("../outside/secret.txt", (rw_ + "/escape").c_str()), 0);
    ASSERT_EQ(symlink((top_ + "/outside").c_str(), (rw_ + "/dirlink").c_str()), 0);
    auto proc = StartGofer(SENTRY_BINARY, {{"/", rw_, false}, {"/ro", ro_, true}});
    ASSERT_TRUE(proc.ok()) << proc.status();
    proc_ = *proc;
    client_ = std::make_unique<Client>(proc_.sock);
    if (direct()) {
      EXPECT_TRUE(client_->GoDirect({"/", "/ro"}, {}).empty());
      EXPECT_TRUE(client_->direct());
    }
    bool ro = true;
    auto root = client_->Attach("/", &ro);
    ASSERT_TRUE(root.ok());
    EXPECT_FALSE(ro);
    EXPECT_EQ((root->handle & kLocalHandleBit) != 0, direct());
    root_ = root->handle;
  }

  bool direct() const { return GetParam(); }

  void TearDown() override {
    client_.reset();  // EOF on the socket: the gofer exits 0
    if (proc_.pid > 0) {
      int status = 0;
      ASSERT_EQ(waitpid(proc_.pid, &status, 0), proc_.pid);
      if (!killed_) {
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
      }
    }
    nftw(top_.c_str(), RemoveEntry, 16, FTW_DEPTH | FTW_PHYS);
  }

  Node MustWalk(Handle dir, const std::string& name) {
    auto n = client_->Walk(dir, name);
    EXPECT_TRUE(n.ok()) << name << ": " << Err(n);
    return n.ok() ? *n : Node{};
  }

  std::string top_, rw_, ro_;
  GoferProcess proc_;
  std::unique_ptr<Client> client_;
  Handle root_ = 0;
  bool killed_ = false;
};

TEST_P(GoferTest, WalkAndStat) {
  Node f = MustWalk(root_, "file.txt");
  EXPECT_TRUE(S_ISREG(f.st.st_mode));
  EXPECT_EQ(f.st.st_size, 5);
  EXPECT_EQ(f.st.st_ino, HostStat(rw_ + "/file.txt").st_ino);
  auto st = client_->Stat(f.handle);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->st_ino, f.st.st_ino);
  Node sub = MustWalk(root_, "sub");
  EXPECT_TRUE(S_ISDIR(sub.st.st_mode));
  EXPECT_TRUE(S_ISREG(MustWalk(sub.handle, "inner.txt").st.st_mode));
  EXPECT_EQ(Err(client_->Walk(root_, "missing")), ENOENT);
  EXPECT_EQ(Err(client_->Walk(f.handle, "x")), ENOTDIR);
  EXPECT_EQ(Err(client_->Attach("/nope", nullptr)), ENOENT);
  EXPECT_EQ(Err(client_->Stat(987654)), EBADF);
  client_->Close(f.handle);
  EXPECT_EQ(Err(client_->Stat(f.handle)), EBADF);
}

TEST_P(GoferTest, OpenDonatesAHostFd) {
  Node f = MustWalk(root_, "file.txt");
  auto fd = client_->Open(f.handle, O_RDONLY);
  ASSERT_TRUE(fd.ok());
  EXPECT_EQ(ReadFd(*fd), "hello");
  EXPECT_TRUE(fcntl(*fd, F_GETFD) & FD_CLOEXEC);
  EXPECT_FALSE(fcntl(*fd, F_GETFL) & O_NONBLOCK);
  close(*fd);
  auto wfd = client_->Open(f.handle, O_WRONLY | O_TRUNC);
  ASSERT_TRUE(wfd.ok());
  ASSERT_EQ(write(*wfd, "bye", 3), 3);
  close(*wfd);
  EXPECT_EQ(ReadFile(rw_ + "/file.txt"), "bye");
  EXPECT_EQ(Err(client_->Open(root_, O_RDONLY)), EISDIR);
}

TEST_P(GoferTest, FilesOutliveTheirClosedDirectoryHandle) {
  Node sub = MustWalk(root_, "sub");
  Node inner = MustWalk(sub.handle, "inner.txt");
  client_->Close(sub.handle);
  EXPECT_EQ(Err(client_->Walk(sub.handle, "inner.txt")), EBADF);
  ASSERT_TRUE(client_->Stat(inner.handle).ok());
  auto fd = client_->Open(inner.handle, O_RDONLY);
  ASSERT_TRUE(fd.ok());
  EXPECT_EQ(ReadFd(*fd), "inner");
  close(*fd);
  client_->Close(inner.handle);
  EXPECT_EQ(Err(client_->Stat(inner.handle)), EBADF);
}

TEST_P(GoferTest, CreateMkdirUnlink) {
  auto c = client_->Create(root_, "new.txt", O_RDWR, 0640, 1234, 5678);
  ASSERT_TRUE(c.ok()) << Err(c);
  auto [node, fd] = *c;
  ASSERT_EQ(write(fd, "data", 4), 4);
  close(fd);
  struct stat st = HostStat(rw_ + "/new.txt");
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(ReadFile(rw_ + "/new.txt"), "data");
  if (geteuid() == 0) {
    EXPECT_EQ(st.st_uid, 1234u);
    EXPECT_EQ(st.st_gid, 5678u);
  }
  EXPECT_EQ(Err(client_->Create(root_, "new.txt", O_RDWR, 0640, 0, 0)), EEXIST);

  auto d = client_->Mkdir(root_, "dir", 0750, 1234, 5678);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(S_ISDIR(d->st.st_mode));
  EXPECT_EQ(HostStat(rw_ + "/dir").st_mode & 07777, 0750u);
  EXPECT_TRUE(client_->Create(d->handle, "f", O_WRONLY, 0600, 0, 0).ok());
  EXPECT_EQ(Err(client_->Unlink(root_, "dir", AT_REMOVEDIR)), ENOTEMPTY);
  ASSERT_TRUE(client_->Unlink(d->handle, "f", 0).ok());
  ASSERT_TRUE(client_->Unlink(root_, "dir", AT_REMOVEDIR).ok());
  ASSERT_TRUE(client_->Unlink(root_, "new.txt", 0).ok());
  EXPECT_EQ(Err(client_->Stat(node.handle)), ENOENT);  // its name is gone
  EXPECT_EQ(access((rw_ + "/new.txt").c_str(), F_OK), -1);
  // A new file under the old name is not the old handle's file.
  ASSERT_TRUE(client_->Create(root_, "new.txt", O_RDWR, 0600, 0, 0).ok());
  EXPECT_EQ(Err(client_->Stat(node.handle)), ENOENT);
}

TEST_P(GoferTest, HandlesFollowRenames) {
  Node f = MustWalk(root_, "file.txt");
  Node sub = MustWalk(root_, "sub");
  ASSERT_TRUE(client_->Rename(root_, "file.txt", sub.handle, "moved.txt", 0).ok());
  auto st = client_->Stat(f.handle);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->st_ino, f.st.st_ino);
  ASSERT_TRUE(client_->Create(root_, "file.txt", O_RDWR, 0600, 0, 0).ok());
  auto fd = client_->Open(f.handle, O_RDONLY);
  ASSERT_TRUE(fd.ok());
  EXPECT_EQ(ReadFd(*fd), "hello");
  close(*fd);

  // A directory handle keeps working after its directory moved.
  ASSERT_TRUE(client_->Rename(root_, "sub", root_, "sub2", 0).ok());
  EXPECT_TRUE(MustWalk(sub.handle, "inner.txt").handle != 0);
  EXPECT_TRUE(client_->Stat(f.handle).ok());

  // Exchange swaps what the two handles name.
  WriteFile(rw_ + "/a", "A");
  WriteFile(rw_ + "/b", "B");
  Node a = MustWalk(root_, "a"), b = MustWalk(root_, "b");
  ASSERT_TRUE(client_->Rename(root_, "a", root_, "b", RENAME_EXCHANGE).ok());
  EXPECT_EQ(client_->Stat(a.handle)->st_ino, a.st.st_ino);
  EXPECT_EQ(client_->Stat(b.handle)->st_ino, b.st.st_ino);
  EXPECT_EQ(ReadFile(rw_ + "/b"), "A");

  // Rename over b: b's handle names nothing, a's follows.
  ASSERT_TRUE(client_->Rename(root_, "b", root_, "a", 0).ok());
  EXPECT_EQ(client_->Stat(a.handle)->st_ino, a.st.st_ino);
  EXPECT_EQ(Err(client_->Stat(b.handle)), ENOENT);
  EXPECT_EQ(Err(client_->Rename(root_, "a", root_, "sub2", RENAME_NOREPLACE)), EEXIST);
}

TEST_P(GoferTest, SymlinksAreReturnedNotFollowed) {
  auto s = client_->Symlink(root_, "sl", "file.txt", 0, 0);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(S_ISLNK(s->st.st_mode));
  EXPECT_EQ(*client_->ReadLink(s->handle), "file.txt");
  Node w = MustWalk(root_, "sl");
  EXPECT_TRUE(S_ISLNK(w.st.st_mode));
  EXPECT_EQ(Err(client_->Open(w.handle, O_RDONLY)), ELOOP);
  EXPECT_EQ(Err(client_->ReadLink(root_)), EINVAL);
  EXPECT_EQ(Err(client_->ReadLink(MustWalk(root_, "file.txt").handle)), EINVAL);
}

TEST_P(GoferTest, SymlinksOutsideTheAttachAreNeverFollowed) {
  std::string secret = top_ + "/outside/secret.txt";
  Node esc = MustWalk(root_, "escape");
  EXPECT_TRUE(S_ISLNK(esc.st.st_mode));
  EXPECT_EQ(*client_->ReadLink(esc.handle), "../outside/secret.txt");
  EXPECT_EQ(Err(client_->Open(esc.handle, O_RDONLY)), ELOOP);
  EXPECT_EQ(Err(client_->Open(esc.handle, O_WRONLY | O_TRUNC)), ELOOP);
  SetAttrRequest req;
  req.mask = kSetMode;
  req.mode = 0777;
  EXPECT_EQ(Err(client_->SetAttr(esc.handle, req)), EOPNOTSUPP);
  req.mask = kSetSize;
  req.size = 0;
  EXPECT_FALSE(client_->SetAttr(esc.handle, req).ok());
  EXPECT_EQ(Err(client_->GetXattr(esc.handle, "user.x")), ENODATA);
  // A hard link to the symlink links the symlink itself.
  ASSERT_TRUE(client_->Link(root_, "hard", esc.handle).ok());
  EXPECT_TRUE(S_ISLNK(HostStat(rw_ + "/hard").st_mode));
  EXPECT_EQ(HostStat(secret).st_mode & 07777, 0600u);
  EXPECT_EQ(ReadFile(secret), "secret");

  Node dl = MustWalk(root_, "dirlink");
  EXPECT_TRUE(S_ISLNK(dl.st.st_mode));
  EXPECT_EQ(Err(client_->Walk(dl.handle, "secret.txt")), ENOTDIR);
  EXPECT_EQ(Err(client_->Create(dl.handle, "x", O_RDWR, 0600, 0, 0)), ENOTDIR);
  EXPECT_EQ(Err(client_->ReadDir(dl.handle)), ENOTDIR);
}

TEST_P(GoferTest, NamesMustBeOneComponent) {
  std::vector<std::string> bad_names = {
      "", ".", "..", "a/b", "/etc", "../outside", std::string("a\0b", 3)};
  for (const auto& bad : bad_names) {
    EXPECT_EQ(Err(client_->Walk(root_, bad)), EINVAL) << bad;
    EXPECT_EQ(Err(client_->Create(root_, bad, O_RDWR, 0600, 0, 0)), EINVAL) << bad;
    EXPECT_EQ(Err(client_->Mkdir(root_, bad, 0700, 0, 0)), EINVAL) << bad;
    EXPECT_EQ(Err(client_->Symlink(root_, bad, "t", 0, 0)), EINVAL) << bad;
    EXPECT_EQ(Err(client_->Unlink(root_, bad, 0)), EINVAL) << bad;
    EXPECT_EQ(Err(client_->Rename(root_, "file.txt", root_, bad, 0)), EINVAL) << bad;
    EXPECT_EQ(Err(client_->Rename(root_, bad, root_, "x", 0)), EINVAL) << bad;
    EXPECT_EQ(Err(client_->Link(root_, bad, MustWalk(root_, "file.txt").handle)), EINVAL);
  }
  EXPECT_EQ(ReadFile(rw_ + "/file.txt"), "hello");
}

TEST_P(GoferTest, LinkAndMknod) {
  Node f = MustWalk(root_, "file.txt");
  ASSERT_TRUE(client_->Link(root_, "hard", f.handle).ok());
  EXPECT_EQ(HostStat(rw_ + "/hard").st_ino, f.st.st_ino);
  EXPECT_EQ(client_->Stat(f.handle)->st_nlink, 2u);
  EXPECT_EQ(Err(client_->Link(root_, "hard2", MustWalk(root_, "sub").handle)), EPERM);

  auto fifo = client_->Mknod(root_, "fifo", S_IFIFO | 0644, 0, 0);
  ASSERT_TRUE(fifo.ok());
  EXPECT_TRUE(S_ISFIFO(fifo->st.st_mode));
  auto fd = client_->Open(fifo->handle, O_RDONLY);  // never blocks the gofer
  ASSERT_TRUE(fd.ok());
  EXPECT_TRUE(fcntl(*fd, F_GETFL) & O_NONBLOCK);
  close(*fd);
  EXPECT_EQ(Err(client_->Mknod(root_, "null", S_IFCHR | 0666, 0, 0)), EPERM);
  EXPECT_EQ(Err(client_->Mknod(root_, "blk", S_IFBLK | 0666, 0, 0)), EPERM);
  EXPECT_TRUE(S_ISREG(client_->Mknod(root_, "reg", 0644, 0, 0)->st.st_mode));
}

TEST_P(GoferTest, SetAttr) {
  Node f = MustWalk(root_, "file.txt");
  SetAttrRequest req;
  req.mask = kSetMode | kSetSize | kSetAtime | kSetMtime;
  if (geteuid() == 0) req.mask |= kSetUid | kSetGid;  // else EPERM, as on the host
  req.mode = 0604;
  req.uid = 42;
  req.gid = 43;
  req.size = 2;
  req.atime = {1000, 5};
  req.mtime = {2000, 6};
  auto st = client_->SetAttr(f.handle, req);
  ASSERT_TRUE(st.ok()) << Err(st);
  EXPECT_EQ(st->st_mode & 07777, 0604u);
  EXPECT_EQ(st->st_size, 2);
  EXPECT_EQ(st->st_atim.tv_sec, 1000);
  EXPECT_EQ(st->st_mtim.tv_sec, 2000);
  EXPECT_EQ(st->st_mtim.tv_nsec, 6);
  if (geteuid() == 0) {
    EXPECT_EQ(st->st_uid, 42u);
  }
  EXPECT_EQ(ReadFile(rw_ + "/file.txt"), "he");

  // Directories are changed through their own fd.
  Node sub = MustWalk(root_, "sub");
  req.mask = kSetMode | kSetMtime;
  req.mode = 0711;
  auto dst = client_->SetAttr(sub.handle, req);
  ASSERT_TRUE(dst.ok()) << Err(dst);
  EXPECT_EQ(HostStat(rw_ + "/sub").st_mode & 07777, 0711u);
  EXPECT_EQ(HostStat(rw_ + "/sub").st_mtim.tv_sec, 2000);
  req.mask = kSetSize;
  EXPECT_EQ(Err(client_->SetAttr(sub.handle, req)), EISDIR);
  // A symlink's times can be set without touching its target.
  Node esc = MustWalk(root_, "escape");
  req.mask = kSetMtime;
  req.mtime = {3000, 0};
  ASSERT_TRUE(client_->SetAttr(esc.handle, req).ok());
  EXPECT_EQ(HostStat(rw_ + "/escape").st_mtim.tv_sec, 3000);
  EXPECT_NE(HostStat(top_ + "/outside/secret.txt").st_mtim.tv_sec, 3000);
}

TEST_P(GoferTest, ReadDirListsEverythingAcrossPages) {
  auto ents = client_->ReadDir(root_);
  ASSERT_TRUE(ents.ok());
  std::set<std::string> names;
  for (const auto& e : *ents) names.insert(e.name);
  EXPECT_EQ(names, (std::set<std::string>{"file.txt", "sub", "escape", "dirlink"}));
  for (const auto& e : *ents) {
    if (e.name == "sub") {
      EXPECT_EQ(e.type, DT_DIR);
    } else if (e.name == "escape") {
      EXPECT_EQ(e.type, DT_LNK);
    }
  }
  // More entries than one page holds.
  Node sub = MustWalk(root_, "sub");
  for (int i = 0; i < 3000; i++) {
    WriteFile(rw_ + "/sub/a-fairly-long-file-name-to-fill-pages-" + std::to_string(i), "");
  }
  auto many = client_->ReadDir(sub.handle);
  ASSERT_TRUE(many.ok());
  std::set<std::string> uniq;
  for (const auto& e : *many) uniq.insert(e.name);
  EXPECT_EQ(many->size(), 3001u);
  EXPECT_EQ(uniq.size(), 3001u);
  EXPECT_EQ(Err(client_->ReadDir(MustWalk(root_, "file.txt").handle)), ENOTDIR);
}

TEST_P(GoferTest, StatFs) {
  auto sfs = client_->StatFs(MustWalk(root_, "file.txt").handle);
  ASSERT_TRUE(sfs.ok());
  struct statfs host;
  ASSERT_EQ(statfs(rw_.c_str(), &host), 0);
  EXPECT_EQ(sfs->f_type, host.f_type);
  EXPECT_EQ(sfs->f_bsize, host.f_bsize);
}

TEST_P(GoferTest, Xattrs) {
  Node f = MustWalk(root_, "file.txt");
  auto set = client_->SetXattr(f.handle, "user.test", "value", 0);
  if (Err(set) == EOPNOTSUPP) GTEST_SKIP() << "no user xattrs on " << rw_;
  ASSERT_TRUE(set.ok()) << Err(set);
  EXPECT_EQ(*client_->GetXattr(f.handle, "user.test"), "value");
  auto list = client_->ListXattr(f.handle);
  ASSERT_TRUE(list.ok());
  EXPECT_NE(std::find(list->begin(), list->end(), "user.test"), list->end());
  EXPECT_EQ(Err(client_->SetXattr(f.handle, "user.test", "v", XATTR_CREATE)), EEXIST);
  ASSERT_TRUE(client_->RemoveXattr(f.handle, "user.test").ok());
  EXPECT_EQ(Err(client_->GetXattr(f.handle, "user.test")), ENODATA);
  Node sub = MustWalk(root_, "sub");
  // ext4 keeps a value within one block.
  ASSERT_TRUE(client_->SetXattr(sub.handle, "user.d", std::string(3000, 'x'), 0).ok());
  EXPECT_EQ(client_->GetXattr(sub.handle, "user.d")->size(), 3000u);
  EXPECT_EQ(Err(client_->SetXattr(MustWalk(root_, "escape").handle, "user.x", "v", 0)), EPERM);
  EXPECT_TRUE(client_->ListXattr(MustWalk(root_, "escape").handle)->empty());
}

TEST_P(GoferTest, ReadOnlyAttachRefusesEveryChange) {
  bool ro = false;
  auto root = client_->Attach("/ro", &ro);
  ASSERT_TRUE(root.ok());
  EXPECT_TRUE(ro);
  Handle r = root->handle;
  Node f = MustWalk(r, "data.txt");
  auto fd = client_->Open(f.handle, O_RDONLY);
  ASSERT_TRUE(fd.ok());
  EXPECT_EQ(ReadFd(*fd), "read only");
  close(*fd);
  EXPECT_EQ(Err(client_->Open(f.handle, O_WRONLY)), EROFS);
  EXPECT_EQ(Err(client_->Open(f.handle, O_RDWR)), EROFS);
  EXPECT_EQ(Err(client_->Open(f.handle, O_RDONLY | O_TRUNC)), EROFS);
  EXPECT_EQ(Err(client_->Create(r, "n", O_RDONLY, 0600, 0, 0)), EROFS);
  EXPECT_EQ(Err(client_->Mkdir(r, "n", 0700, 0, 0)), EROFS);
  EXPECT_EQ(Err(client_->Symlink(r, "n", "t", 0, 0)), EROFS);
  EXPECT_EQ(Err(client_->Mknod(r, "n", S_IFIFO | 0600, 0, 0)), EROFS);
  EXPECT_EQ(Err(client_->Link(r, "n", f.handle)), EROFS);
  EXPECT_EQ(Err(client_->Unlink(r, "data.txt", 0)), EROFS);
  EXPECT_EQ(Err(client_->Rename(r, "data.txt", r, "n", 0)), EROFS);
  SetAttrRequest req;
  req.mask = kSetMode;
  req.mode = 0777;
  EXPECT_EQ(Err(client_->SetAttr(f.handle, req)), EROFS);
  EXPECT_EQ(Err(client_->SetAttr(r, req)), EROFS);
  EXPECT_EQ(Err(client_->SetXattr(f.handle, "user.x", "v", 0)), EROFS);
  EXPECT_EQ(Err(client_->RemoveXattr(f.handle, "user.x")), EROFS);
  EXPECT_EQ(ReadFile(ro_ + "/data.txt"), "read only");
  EXPECT_NE(HostStat(ro_ + "/data.txt").st_mode & 07777, 0777u);
  std::set<std::string> names;
  for (const auto& e : *client_->ReadDir(r)) names.insert(e.name);
  EXPECT_EQ(names, std::set<std::string>{"data.txt"});

  // Across attaches: EXDEV.
  EXPECT_EQ(Err(client_->Rename(root_, "file.txt", r, "x", 0)), EXDEV);
  EXPECT_EQ(Err(client_->Link(root_, "x", f.handle)), EXDEV);
}

TEST_P(GoferTest, NonDirectoryHandlesHoldNoHostFd) {
  Node sub = MustWalk(root_, "sub");
  for (int i = 0; i < 2000; i++) WriteFile(rw_ + "/sub/f" + std::to_string(i), "");
  std::vector<Handle> handles;
  // The handles live in the gofer, or in this process in direct mode.
  std::string fd_dir = "/proc/" + std::to_string(direct() ? getpid() : proc_.pid) + "/fd";
  auto count_fds = [&] {
    int fds = 0;
    if (DIR* d = opendir(fd_dir.c_str())) {
      while (readdir(d) != nullptr) fds++;
      closedir(d);
    }
    return fds;
  };
  int before = count_fds();
  for (int i = 0; i < 2000; i++) {
    handles.push_back(MustWalk(sub.handle, "f" + std::to_string(i)).handle);
  }
  EXPECT_LT(count_fds() - before, 16);
  for (Handle h : handles) client_->Close(h);
  EXPECT_TRUE(client_->Stat(sub.handle).ok());
}

TEST_P(GoferTest, ConcurrentCallsAreSerialized) {
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; i++) {
        auto n = client_->Walk(root_, "file.txt");
        if (!n.ok() || n->st.st_size != 5) failures++;
        if (n.ok()) client_->Close(n->handle);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST_P(GoferTest, GoferIsConfined) {
  if (geteuid() != 0) GTEST_SKIP() << "confinement needs root";
  std::string proc = "/proc/" + std::to_string(proc_.pid);
  std::string status = ReadFile(proc + "/status");
  EXPECT_NE(status.find("NoNewPrivs:\t1"), std::string::npos) << status;
  EXPECT_NE(status.find("Seccomp:\t2"), std::string::npos) << status;
  EXPECT_NE(status.find("CapEff:\t000000000000000f"), std::string::npos) << status;
  EXPECT_NE(status.find("CapBnd:\t000000000000000f"), std::string::npos) << status;
  // Its root is an empty file system of its own.
  struct stat groot, host_root;
  ASSERT_EQ(stat((proc + "/root/").c_str(), &groot), 0);
  ASSERT_EQ(stat("/", &host_root), 0);
  EXPECT_NE(groot.st_dev, host_root.st_dev);
  DIR* d = opendir((proc + "/root/").c_str());
  ASSERT_NE(d, nullptr);
  int entries = 0;
  while (dirent* e = readdir(d)) entries += e->d_name[0] != '.';
  closedir(d);
  EXPECT_EQ(entries, 0);
  EXPECT_TRUE(client_->Walk(root_, "file.txt").ok());  // and it still serves
}

// With set_follow_caller, a call that reaches the gofer process (every call in gofer mode; a
// change, lent, in direct mode) first moves the gofer to the caller's CPU: it moves itself,
// so this holds whatever capabilities the caller kept.
TEST_P(GoferTest, GoferFollowsTheCallersCpu) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE && cpus.size() < 2; c++) {
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  }
  if (cpus.size() < 2) GTEST_SKIP() << "one CPU: nowhere to move";
  client_->set_follow_caller(true);
  Node f = MustWalk(root_, "file.txt");
  for (int cpu : {cpus[1], cpus[0], cpus[1]}) {
    std::thread caller([&] {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
      SetAttrRequest req;
      req.mask = kSetMode;
      req.mode = cpu == cpus[0] ? 0600 : 0644;
      ASSERT_TRUE(client_->SetAttr(f.handle, req).ok());
    });
    caller.join();
    cpu_set_t gofer;
    ASSERT_EQ(sched_getaffinity(proc_.pid, sizeof(gofer), &gofer), 0);
    EXPECT_EQ(CPU_COUNT(&gofer), 1) << "on CPU " << cpu;
    EXPECT_TRUE(CPU_ISSET(cpu, &gofer)) << "on CPU " << cpu;
  }
}

TEST_P(GoferTest, DeadGoferMeansEio) {
  std::atomic<int> deaths = 0;
  client_->set_on_death([&] { deaths++; });
  // Direct mode sends the gofer nothing: its death is seen on the socket by a watcher.
  if (direct()) client_->WatchPeer();
  Node f = MustWalk(root_, "file.txt");
  ASSERT_EQ(kill(proc_.pid, SIGKILL), 0);
  killed_ = true;
  for (int i = 0; i < 500 && direct() && !client_->dead(); i++) usleep(10'000);
  EXPECT_EQ(Err(client_->Stat(f.handle)), EIO);
  EXPECT_TRUE(client_->dead());
  EXPECT_EQ(deaths, 1);
  EXPECT_EQ(Err(client_->Walk(root_, "file.txt")), EIO);
  EXPECT_EQ(Err(client_->Open(f.handle, O_RDONLY)), EIO);
  client_->Close(f.handle);
  EXPECT_EQ(deaths, 1);
}

INSTANTIATE_TEST_SUITE_P(Modes, GoferTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return p.param ? "Direct" : "Gofer";
                         });

// An attach point whose root fd does not come stays with the gofer; the others are served
// here, and each call goes where its handle says.
TEST(GoferDirectTest, MixedAttachPointsAndFallback) {
  char tmpl[] = "/tmp/gofer_direct.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string top = tmpl;
  ASSERT_EQ(mkdir((top + "/a").c_str(), 0755), 0);
  ASSERT_EQ(mkdir((top + "/b").c_str(), 0755), 0);
  WriteFile(top + "/a/x", "a");
  WriteFile(top + "/b/y", "bb");
  auto proc = StartGofer(SENTRY_BINARY, {{"/", top + "/a", false}, {"/b", top + "/b", true}});
  ASSERT_TRUE(proc.ok()) << proc.status();
  {
    Client client(proc->sock);
    client.set_follow_caller(true);
    // "/nope" is no attach point of the gofer's: it cannot donate it.
    auto kept = client.GoDirect({"/", "/nope"}, {});
    EXPECT_EQ(kept, std::vector<std::string>{"/nope"});
    bool ro = false;
    auto a = client.Attach("/", &ro);
    auto b = client.Attach("/b", &ro);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_TRUE(ro);
    EXPECT_NE(a->handle & kLocalHandleBit, 0u);
    EXPECT_EQ(b->handle & kLocalHandleBit, 0u);
    auto x = client.Walk(a->handle, "x");
    auto y = client.Walk(b->handle, "y");
    ASSERT_TRUE(x.ok() && y.ok());
    EXPECT_EQ(x->st.st_size, 1);
    EXPECT_EQ(y->st.st_size, 2);
    EXPECT_EQ(Err(client.Attach("/nope", nullptr)), ENOENT);
    // The gofer still enforces its read-only attach; the local server its own.
    EXPECT_EQ(Err(client.Create(b->handle, "new", O_RDWR, 0644, 0, 0)), EROFS);
    auto made = client.Create(a->handle, "new", O_RDWR, 0644, getuid(), getgid());
    ASSERT_TRUE(made.ok());
    close(made->second);
    EXPECT_EQ(HostStat(top + "/a/new").st_mode & 0777, 0644u);
  }
  waitpid(proc->pid, nullptr, 0);
  nftw(top.c_str(), RemoveEntry, 16, FTW_DEPTH | FTW_PHYS);
}

TEST(GoferStartTest, ReportsStartupFailures) {
  auto bad_binary = StartGofer("/nonexistent/sentry", {});
  ASSERT_FALSE(bad_binary.ok());
  EXPECT_NE(bad_binary.status().message().find("exec /nonexistent/sentry"), std::string::npos)
      << bad_binary.status();
  auto bad_path = StartGofer(SENTRY_BINARY, {{"/", "/nonexistent/dir", false}});
  ASSERT_FALSE(bad_path.ok());
  EXPECT_NE(bad_path.status().message().find("exited with status 1"), std::string::npos)
      << bad_path.status();
  EXPECT_FALSE(StartGofer(SENTRY_BINARY, {{"a=b", "/tmp", false}}).ok());
}

// Sends a raw request (with `fd` and `fd2` if >= 0) and returns the errno of its reply (-1
// if there was none).
int RawCall(int sock, const std::string& msg, int fd = -1, int fd2 = -1) {
  if (SendMessage(sock, msg, fd, fd2) != 0) return -1;
  std::vector<char> buf(kMaxMessage);
  size_t len = 0;
  int got = -1;
  if (RecvMessage(sock, buf.data(), buf.size(), &len, &got) != 0) return -1;
  if (got >= 0) close(got);
  Reader r(buf.data(), len);
  return r.I32();
}

TEST(GoferProtocolTest, MalformedRequestsAreRefused) {
  auto proc = StartGofer(SENTRY_BINARY, {{"/", "/tmp", true}});
  ASSERT_TRUE(proc.ok()) << proc.status();
  int sock = proc->sock;
  auto op = [](Op o) { return static_cast<uint32_t>(o); };
  EXPECT_EQ(RawCall(sock, Writer().U32(999).Take()), ENOSYS);
  EXPECT_EQ(RawCall(sock, Writer().U32(op(Op::kWalk)).U64(1).Take()), EINVAL);
  EXPECT_EQ(RawCall(sock, Writer().U32(op(Op::kAttach)).Str("/").U8(0).Take()), EINVAL);
  EXPECT_EQ(RawCall(sock, Writer().U32(op(Op::kWalk)).U64(1).U32(1000).Take()), EINVAL);
  EXPECT_EQ(RawCall(sock, std::string(kMaxMessage + 100, 'x')), EINVAL);
  EXPECT_EQ(RawCall(sock, Writer().U32(op(Op::kAttach)).Str("/").Take()), 0);  // still serving
  close(sock);
  int status = 0;
  ASSERT_EQ(waitpid(proc->pid, &status, 0), proc->pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

// A donated fd the receiver has no room for (MSG_CTRUNC, nothing received) leaves the message
// whole: the reply is good, only its fd is lost (kFdLost), unlike a truncated message.
TEST(GoferProtocolTest, FdLostToEmfileIsNotAProtocolError) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
  int donated = open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(donated, 0);
  ASSERT_EQ(SendMessage(sv[0], "reply", donated), 0);
  ASSERT_EQ(SendMessage(sv[0], "again", donated), 0);
  struct rlimit old;
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
  struct rlimit low = {static_cast<rlim_t>(std::max({sv[0], sv[1], donated}) + 8), old.rlim_max};
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  std::vector<int> fillers;
  for (int fd; (fd = fcntl(donated, F_DUPFD_CLOEXEC, 0)) >= 0;) fillers.push_back(fd);
  char buf[64];
  size_t len = 0;
  int fd = -1;
  int err = RecvMessage(sv[1], buf, sizeof(buf), &len, &fd);
  for (int f : fillers) close(f);
  setrlimit(RLIMIT_NOFILE, &old);
  EXPECT_EQ(err, 0);
  EXPECT_EQ(fd, kFdLost);
  EXPECT_EQ(std::string(buf, len), "reply");
  // With room again, the next one arrives with its fd.
  ASSERT_EQ(RecvMessage(sv[1], buf, sizeof(buf), &len, &fd), 0);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(std::string(buf, len), "again");
  if (fd >= 0) close(fd);
  close(donated);
  close(sv[0]);
  close(sv[1]);
}

// kLend (direct file access): the gofer makes a change on fds the Sentry lends, and checks
// the request itself whatever the Sentry claims.
int LendCall(int sock, const std::string& msg, int fd, int fd2 = -1) {
  return RawCall(sock, Writer().U32(static_cast<uint32_t>(Op::kLend)).Take() + msg, fd, fd2);
}

TEST(GoferProtocolTest, LentChangesAreCheckedByTheGofer) {
  char tmpl[] = "/tmp/gofer_lend.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string top = tmpl;
  WriteFile(top + "/f", "x");
  ASSERT_EQ(chmod((top + "/f").c_str(), 0644), 0);
  auto proc = StartGofer(SENTRY_BINARY, {{"/", top, false}});
  ASSERT_TRUE(proc.ok()) << proc.status();
  int sock = proc->sock;
  int dir = open(top.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int file = open((top + "/f").c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(dir, 0);
  ASSERT_GE(file, 0);
  auto req = [](LendOp op) {
    Writer w;
    w.U32(static_cast<uint32_t>(op));
    return w;
  };
  // No fd, or one where two are needed.
  EXPECT_EQ(LendCall(sock, req(LendOp::kMkdir).Str("d").U32(0755).Take(), -1), EBADF);
  EXPECT_EQ(LendCall(sock, req(LendOp::kRename).Str("f").Str("g").U32(0).Take(), dir), EBADF);
  // Names are one component.
  EXPECT_EQ(LendCall(sock, req(LendOp::kMkdir).Str("a/b").U32(0755).Take(), dir), EINVAL);
  EXPECT_EQ(LendCall(sock, req(LendOp::kUnlink).Str("..").I32(0).Take(), dir), EINVAL);
  EXPECT_EQ(LendCall(sock, req(LendOp::kUnlink).Str("f").I32(AT_SYMLINK_NOFOLLOW).Take(), dir),
            EINVAL);
  // No device node, no file capability, no set-user-ID bit, ClearBits only clears.
  EXPECT_EQ(LendCall(sock, req(LendOp::kMknod).Str("c").U32(S_IFCHR | 0644).Take(), dir), EPERM);
  EXPECT_EQ(LendCall(sock, req(LendOp::kSetXattr).Str("security.capability").Str("v").I32(0).Take(),
                     file),
            EPERM);
  EXPECT_EQ(LendCall(sock, req(LendOp::kClearBits).U32(0777).Take(), file), EPERM);
  EXPECT_EQ(LendCall(sock,
                     req(LendOp::kChmod).Str("f").U32(S_ISUID | S_ISGID | 0755).I32(
                         AT_SYMLINK_NOFOLLOW).Take(),
                     dir),
            0);
  EXPECT_EQ(HostStat(top + "/f").st_mode & 07777, 0755u);
  EXPECT_EQ(LendCall(sock, req(LendOp::kChmod).Str("f").U32(0600).I32(AT_EMPTY_PATH).Take(), dir),
            EINVAL);  // a name with AT_EMPTY_PATH
  // The changes themselves, relative to the lent fds.
  EXPECT_EQ(LendCall(sock, req(LendOp::kMkdir).Str("d").U32(0700).Take(), dir), 0);
  EXPECT_TRUE(S_ISDIR(HostStat(top + "/d").st_mode));
  EXPECT_EQ(LendCall(sock, req(LendOp::kRename).Str("f").Str("g").U32(0).Take(), dir, dir), 0);
  EXPECT_EQ(ReadFile(top + "/g"), "x");
  EXPECT_EQ(LendCall(sock, req(LendOp::kLink).Str("g").Str("h").Take(), dir, dir), 0);
  EXPECT_EQ(HostStat(top + "/h").st_nlink, 2u);
  EXPECT_EQ(LendCall(sock, req(LendOp::kUnlink).Str("d").I32(AT_REMOVEDIR).Take(), dir), 0);
  EXPECT_EQ(access((top + "/d").c_str(), F_OK), -1);
  EXPECT_EQ(RawCall(sock, Writer().U32(static_cast<uint32_t>(Op::kAttach)).Str("/").Take()), 0);
  close(file);
  close(dir);
  close(sock);
  int status = 0;
  ASSERT_EQ(waitpid(proc->pid, &status, 0), proc->pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  nftw(top.c_str(), RemoveEntry, 16, FTW_DEPTH | FTW_PHYS);
}

TEST(GoferProtocolTest, ReaderRejectsShortInput) {
  Writer w;
  w.U32(7).Str("abc").U64(9);
  Reader r(w.data());
  EXPECT_EQ(r.U32(), 7u);
  EXPECT_EQ(r.Str(), "abc");
  EXPECT_EQ(r.U64(), 9u);
  EXPECT_TRUE(r.ok() && r.done());
  Reader short_str(std::string_view(w.data()).substr(0, 6));
  short_str.U32();
  EXPECT_EQ(short_str.Str(), "");
  EXPECT_FALSE(short_str.ok());
}

}  // namespace
}  // namespace sentry::gofer
