// install: registers this binary as a Docker runtime in daemon.json, as `runsc install` does.
// It restarts nothing: the user restarts (or reloads) dockerd.
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "nlohmann/json.hpp"
#include "runtime-shim/oci/oci.h"
#include "sentry/base/status.h"

namespace sentry::oci {

absl::Status Install(const std::string& config, const std::string& runtime,
                     const std::vector<std::string>& runtime_args) {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n < 0) return ErrnoStatus("readlink /proc/self/exe");
  self[n] = '\0';
  nlohmann::json daemon = nlohmann::json::object();
  if (std::ifstream in(config); in) {
    std::stringstream text;
    text << in.rdbuf();
    if (!text.str().empty()) {
      daemon = nlohmann::json::parse(text.str(), nullptr, false);
      if (daemon.is_discarded() || !daemon.is_object()) {
        return absl::InvalidArgumentError(config + ": not a JSON object; not changed");
      }
    }
  }
  if (daemon.contains("runtimes") && !daemon["runtimes"].is_object()) {
    return absl::InvalidArgumentError(config + ": \"runtimes\" is not an object; not changed");
  }
  nlohmann::json entry = {{"path", self}};
  if (!runtime_args.empty()) entry["runtimeArgs"] = runtime_args;
  daemon["runtimes"][runtime] = entry;
  std::string tmp = config + ".sentry-tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << daemon.dump(2) << "\n";
    if (!out.flush()) return absl::InternalError("cannot write " + tmp);
  }
  if (rename(tmp.c_str(), config.c_str()) != 0) return ErrnoStatus("rename to " + config);
  printf("%s: runtime \"%s\" is %s; restart dockerd to use it (docker run --runtime=%s)\n",
         config.c_str(), runtime.c_str(), self, runtime.c_str());
  return absl::OkStatus();
}

}  // namespace sentry::oci
