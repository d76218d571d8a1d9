// LoadSpec (runtime-shim/oci/spec.h): config.json to SandboxOptions, and its errors.
#include "runtime-shim/oci/spec.h"

#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"
#include "runtime-shim/oci/resources.h"

namespace sentry::oci {
namespace {

class SpecTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sentry-spec-test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    bundle_ = tmpl;
    std::filesystem::create_directories(bundle_ + "/rootfs/bin");
    std::filesystem::create_directories(bundle_ + "/data");
    std::ofstream(bundle_ + "/rootfs/bin/sh") << "";
    std::ofstream(bundle_ + "/hosts") << "127.0.0.1 localhost\n";
    config_ = {{"ociVersion", "1.0.2"},
               {"root", {{"path", "rootfs"}}},
               {"process",
                {{"args", {"sh", "-c", "true"}},
                 {"env", {"PATH=/bin", "A=1"}},
                 {"cwd", "/"},
                 {"user", {{"uid", 1000}, {"gid", 100}}}}},
               {"hostname", "box"}};
  }
  void TearDown() override { std::filesystem::remove_all(bundle_); }

  absl::StatusOr<BundleSpec> Load() {
    std::ofstream(bundle_ + "/config.json") << config_.dump();
    return LoadSpec(bundle_);
  }

  std::string bundle_;
  nlohmann::json config_;
};

TEST_F(SpecTest, MapsProcessRootAndHostname) {
  auto spec = Load();
  ASSERT_TRUE(spec.ok()) << spec.status();
  const shim::SandboxOptions& o = spec->sandbox;
  EXPECT_EQ(o.rootfs, std::filesystem::canonical(bundle_ + "/rootfs").string());
  EXPECT_EQ(o.argv, (std::vector<std::string>{"sh", "-c", "true"}));
  EXPECT_EQ(o.program, "/bin/sh");  // found on process.env's PATH inside the root
  EXPECT_EQ(o.env, (std::vector<std::string>{"PATH=/bin", "A=1"}));
  EXPECT_TRUE(o.env_exact);
  EXPECT_EQ(o.uid, 1000);
  EXPECT_EQ(o.gid, 100);
  EXPECT_EQ(o.hostname, "box");
}

TEST_F(SpecTest, MapsMounts) {
  config_["mounts"] = {
      {{"destination", "/data"}, {"type", "bind"}, {"source", "data"}, {"options", {"ro"}}},
      {{"destination", "/etc/hosts"}, {"type", "bind"}, {"source", "hosts"}},
      {{"destination", "/etc/hostname"}, {"type", "bind"}, {"source", "hosts"}, {"options", {"rbind", "ro"}}},
      {{"destination", "/tmp"}, {"type", "tmpfs"}, {"source", "tmpfs"}},
      {{"destination", "/proc"}, {"type", "proc"}, {"source", "proc"}},
      {{"destination", "/dev/mqueue"}, {"type", "mqueue"}, {"source", "mqueue"}}};
  auto spec = Load();
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_EQ(spec->sandbox.binds.size(), 1u);
  EXPECT_EQ(spec->sandbox.binds[0].guest, "/data");
  EXPECT_TRUE(spec->sandbox.binds[0].read_only);
  ASSERT_EQ(spec->sandbox.file_binds.size(), 2u);
  EXPECT_EQ(spec->sandbox.file_binds[0].guest, "/etc/hosts");
  EXPECT_FALSE(spec->sandbox.file_binds[0].read_only);
  EXPECT_EQ(spec->sandbox.file_binds[1].guest, "/etc/hostname");
  EXPECT_TRUE(spec->sandbox.file_binds[1].read_only);
  ASSERT_EQ(spec->sandbox.tmpfs_mounts.size(), 1u);
  EXPECT_EQ(spec->sandbox.tmpfs_mounts[0].guest, "/tmp");
  bool mqueue_logged = false;
  for (const auto& line : spec->ignored) mqueue_logged |= line.find("/dev/mqueue") != line.npos;
  EXPECT_TRUE(mqueue_logged);
}

TEST_F(SpecTest, ErrorsNameTheField) {
  struct Case {
    const char* pointer;
    nlohmann::json value;
    const char* message;
  } cases[] = {
      {"/process/args", "sh", "config.json: process.args: expected an array of strings"},
      {"/process/args", nlohmann::json::array(), "process.args: expected at least one"},
      {"/process/args", {"sh", 1}, "process.args[1]: expected a string"},
      {"/process/cwd", "relative", "process.cwd: expected an absolute path"},
      {"/process/user/uid", -1, "process.user.uid: expected a number"},
      {"/root/readonly", "yes", "root.readonly: expected true or false"},
      {"/linux/resources/memory/limit", "64m", "linux.resources.memory.limit: expected an integer"},
      {"/linux/resources/cpu", 5, "linux.resources.cpu: expected an object"},
      {"/hostname", 7, "hostname: expected a string"},
      {"/mounts", nlohmann::json::object(), "mounts: expected an array"},
      {"/process/args", {"nosuch"}, "exec: \"nosuch\": executable file not found in $PATH"},
  };
  for (const auto& c : cases) {
    nlohmann::json saved = config_;
    config_[nlohmann::json::json_pointer(c.pointer)] = c.value;
    auto spec = Load();
    EXPECT_FALSE(spec.ok()) << c.pointer;
    EXPECT_NE(spec.status().message().find(c.message), std::string::npos)
        << c.pointer << ": " << spec.status();
    config_ = saved;
  }
  config_.erase("root");
  auto spec = Load();
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().message(), "config.json: root.path is missing");
}

TEST_F(SpecTest, ReadOnlyRootHasNoScratchDirs) {
  config_["root"]["readonly"] = true;
  auto spec = Load();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_TRUE(spec->sandbox.read_only_root);
  EXPECT_FALSE(spec->sandbox.scratch_dirs);
}

TEST_F(SpecTest, MapsResources) {
  config_["linux"] = {{"cgroupsPath", "/docker/abc"},
                      {"resources",
                       {{"memory", {{"limit", 67108864}, {"swap", 134217728}, {"kernel", 0}}},
                        {"cpu", {{"shares", 0}, {"quota", 50000}, {"period", 100000}}},
                        {"pids", {{"limit", 50}}},
                        {"blockIO", {{"weight", 10}}}}}};
  auto spec = Load();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_TRUE(spec->cgroup);
  EXPECT_EQ(spec->cgroups_path, "/docker/abc");
  EXPECT_EQ(spec->limits.memory, 67108864);
  EXPECT_EQ(spec->limits.memory_swap, 134217728);
  EXPECT_FALSE(spec->limits.cpu_shares.has_value());  // Docker's 0: not set
  EXPECT_EQ(spec->limits.cpu_quota, 50000);
  EXPECT_EQ(spec->limits.cpu_period, 100000u);
  EXPECT_EQ(spec->limits.pids, 50);
  EXPECT_EQ(spec->sandbox.memory_limit, 67108864u);  // the Sentry's accounting too
  bool block_io_noted = false;
  for (const auto& line : spec->ignored) {
    block_io_noted = block_io_noted || line.find("blockIO") != std::string::npos;
  }
  EXPECT_TRUE(block_io_noted);
}

TEST_F(SpecTest, NoCgroupWithoutResourcesOrPath) {
  auto spec = Load();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_FALSE(spec->cgroup);
}

TEST_F(SpecTest, MapsUserRlimitsAndPaths) {
  config_["process"]["user"]["umask"] = 023;
  config_["process"]["user"]["additionalGids"] = {100, 2000};
  config_["process"]["noNewPrivileges"] = true;
  config_["process"]["rlimits"] = {{{"type", "RLIMIT_NOFILE"}, {"soft", 200}, {"hard", 300}},
                                   {{"type", "RLIMIT_STACK"}, {"soft", 4096}, {"hard", 8192}}};
  config_["linux"]["maskedPaths"] = {"/proc/kcore"};
  config_["linux"]["readonlyPaths"] = {"/proc/sys"};
  auto spec = Load();
  ASSERT_TRUE(spec.ok()) << spec.status();
  const shim::SandboxOptions& o = spec->sandbox;
  EXPECT_EQ(o.umask, 023u);
  EXPECT_EQ(o.groups, (std::vector<uint32_t>{100, 2000}));
  EXPECT_TRUE(o.no_new_privs);
  ASSERT_EQ(o.rlimits.size(), 2u);
  EXPECT_EQ(o.rlimits[0], std::make_tuple(int{RLIMIT_NOFILE}, uint64_t{200}, uint64_t{300}));
  EXPECT_EQ(o.rlimits[1], std::make_tuple(int{RLIMIT_STACK}, uint64_t{4096}, uint64_t{8192}));
  EXPECT_EQ(o.masked_paths, (std::vector<std::string>{"/proc/kcore"}));
  EXPECT_EQ(o.readonly_paths, (std::vector<std::string>{"/proc/sys"}));
}

TEST_F(SpecTest, UserDefaultsAreRuncs) {
  auto spec = Load();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->sandbox.umask, 022u);
  EXPECT_TRUE(spec->sandbox.groups.empty());
  EXPECT_FALSE(spec->sandbox.no_new_privs);
}

TEST_F(SpecTest, BadUserRlimitAndPathFieldsAreNamed) {
  auto error_of = [&](auto edit) {
    nlohmann::json saved = config_;
    edit(config_);
    auto spec = Load();
    config_ = saved;
    return spec.ok() ? std::string("ok") : std::string(spec.status().message());
  };
  EXPECT_NE(
      error_of([](auto& c) { c["process"]["user"]["umask"] = 01000; }).find("process.user.umask"),
      std::string::npos);
  EXPECT_NE(error_of([](auto& c) {
              c["process"]["user"]["additionalGids"] = {"x"};
            }).find("process.user.additionalGids[0]"),
            std::string::npos);
  EXPECT_NE(error_of([](auto& c) {
              c["process"]["rlimits"] = {{{"type", "RLIMIT_BOGUS"}, {"soft", 1}, {"hard", 1}}};
            }).find("process.rlimits[0].type"),
            std::string::npos);
  EXPECT_NE(error_of([](auto& c) {
              c["process"]["rlimits"] = {{{"type", "RLIMIT_NOFILE"}, {"soft", 9}, {"hard", 1}}};
            }).find("process.rlimits[0]"),
            std::string::npos);
  EXPECT_NE(error_of([](auto& c) {
              c["linux"]["maskedPaths"] = {"relative"};
            }).find("linux.maskedPaths[0]"),
            std::string::npos);
  EXPECT_NE(error_of([](auto& c) {
              c["process"]["noNewPrivileges"] = "yes";
            }).find("process.noNewPrivileges"),
            std::string::npos);
}

// process.capabilities: the five sets as masks; absent: none given (a full-capability
// parent's, as before); a set left out is empty, as runc takes it.
TEST_F(SpecTest, MapsCapabilities) {
  auto spec = Load();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_FALSE(spec->sandbox.caps);
  config_["process"]["capabilities"] = {
      {"bounding", {"CAP_CHOWN", "CAP_NET_BIND_SERVICE", "CAP_KILL"}},
      {"effective", {"CAP_CHOWN", "CAP_KILL"}},
      {"permitted", {"CAP_CHOWN", "CAP_NET_BIND_SERVICE", "CAP_KILL"}},
      {"ambient", {"CAP_CHECKPOINT_RESTORE"}}};
  spec = Load();
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_TRUE(spec->sandbox.caps);
  const kernel::CapabilitySets& c = *spec->sandbox.caps;
  EXPECT_EQ(c.bounding, (1u << CAP_CHOWN) | (1u << CAP_NET_BIND_SERVICE) | (1u << CAP_KILL));
  EXPECT_EQ(c.effective, (1u << CAP_CHOWN) | (1u << CAP_KILL));
  EXPECT_EQ(c.permitted, c.bounding);
  EXPECT_EQ(c.inheritable, 0u);
  EXPECT_EQ(c.ambient, uint64_t{1} << CAP_CHECKPOINT_RESTORE);
  // The exec request carries the same sets.
  auto back = CapabilitiesFromJson(CapabilitiesToJson(c));
  EXPECT_EQ(back.bounding, c.bounding);
  EXPECT_EQ(back.ambient, c.ambient);
}

TEST_F(SpecTest, BadCapabilitiesAreNamed) {
  config_["process"]["capabilities"] = {{"bounding", {"CAP_CHOWN", "CAP_FLY"}}};
  auto spec = Load();
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.status().message().find("config.json: process.capabilities.bounding[1]"),
            std::string::npos)
      << spec.status();
  EXPECT_NE(spec.status().message().find("CAP_FLY"), std::string::npos) << spec.status();
  config_["process"]["capabilities"] = {{"effective", "CAP_CHOWN"}};
  spec = Load();
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.status().message().find("process.capabilities.effective"), std::string::npos)
      << spec.status();
  config_["process"]["capabilities"] = {"CAP_CHOWN"};
  spec = Load();
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.status().message().find("process.capabilities: expected an object"),
            std::string::npos)
      << spec.status();
}

TEST(CgroupNameTest, Forms) {
  EXPECT_EQ(CgroupName("/docker/abc", "abc"), "/docker/abc");
  EXPECT_EQ(CgroupName("", "abc"), "/abc");
  EXPECT_EQ(CgroupName("system.slice:docker:abc", "abc"), "/system.slice/docker-abc.scope");
  EXPECT_EQ(shim::SharesToWeight(1024), 39u);
  EXPECT_EQ(shim::SharesToWeight(2), 1u);
}

}  // namespace
}  // namespace sentry::oci
