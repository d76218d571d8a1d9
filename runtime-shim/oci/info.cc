// spec and features: what the runtime offers, without a container.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "nlohmann/json.hpp"
#include "runtime-shim/oci/oci.h"
#include "runtime-shim/oci/spec.h"
#include "sentry/base/status.h"

namespace sentry::oci {

absl::Status Spec(const std::string& bundle) {
  std::string path = bundle + "/config.json";
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (errno == EEXIST) return absl::AlreadyExistsError(path + " already exists");
    return ErrnoStatus("create " + path);
  }
  std::string text = DefaultSpec().dump(2) + "\n";
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  if (!ok) return ErrnoStatus("write " + path);
  return absl::OkStatus();
}

absl::Status Features() {
  // Only what the runtime honours (startContainer hooks are not run).
  nlohmann::json f = {
      {"ociVersionMin", "1.0.0"},
      {"ociVersionMax", "1.0.2-dev"},
      {"hooks", {"prestart", "createRuntime", "createContainer", "poststart", "poststop"}},
      {"mountOptions", {"bind", "rbind", "ro", "rro", "rw", "nosuid", "nodev", "noexec"}},
      {"linux",
       {{"namespaces", {"pid", "network", "ipc", "uts", "mount"}},
        {"capabilities", nlohmann::json::array()},
        {"cgroup", {{"v1", true}, {"v2", true}, {"systemd", false}}},
        {"seccomp",
         {{"enabled", true},
          {"actions",
           {"SCMP_ACT_ALLOW", "SCMP_ACT_ERRNO", "SCMP_ACT_KILL", "SCMP_ACT_KILL_PROCESS",
            "SCMP_ACT_KILL_THREAD", "SCMP_ACT_LOG", "SCMP_ACT_TRACE", "SCMP_ACT_TRAP"}},
          {"operators",
           {"SCMP_CMP_EQ", "SCMP_CMP_GE", "SCMP_CMP_GT", "SCMP_CMP_LE", "SCMP_CMP_LT",
            "SCMP_CMP_MASKED_EQ", "SCMP_CMP_NE"}},
          {"archs", {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"}}}},
        {"apparmor", {{"enabled", false}}},
        {"selinux", {{"enabled", false}}}}},
      {"annotations", {{"io.github.sentry.runtime", "sentry"}}}};
  printf("%s\n", f.dump(4).c_str());
  return absl::OkStatus();
}

}  // namespace sentry::oci
