// Error and debug lines: stderr for the user, and --log for the caller (containerd-shim reads
// the last JSON line's "msg" back into the error it shows).
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>

#include "nlohmann/json.hpp"
#include "runtime-shim/oci/container.h"
#include "runtime-shim/oci/oci.h"

namespace sentry::oci {
namespace {

std::string TimeSeconds() {
  time_t now = time(nullptr);
  struct tm tm;
  gmtime_r(&now, &tm);
  char buf[32];
  strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// --log opened for good by KeepLogOpen, or -1.
int g_kept_fd = -1;

// One line to --log, appended with a single write so concurrent commands do not interleave.
void Append(const Globals& g, const char* level, const std::string& msg) {
  std::string line;
  if (g.log_format == "json") {
    line = nlohmann::json{{"level", level}, {"msg", msg}, {"time", TimeSeconds()}}.dump(
               -1, ' ', false, nlohmann::json::error_handler_t::replace) +
           "\n";
  } else {
    line = "time=\"" + TimeSeconds() + "\" level=" + level + " msg=" +
           nlohmann::json(msg).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
           "\n";
  }
  if (g_kept_fd >= 0) {
    (void)!write(g_kept_fd, line.data(), line.size());
    return;
  }
  int fd = open(g.log.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  (void)!write(fd, line.data(), line.size());
  close(fd);
}

}  // namespace

void KeepLogOpen(const Globals& g) {
  if (g.log.empty() || g_kept_fd >= 0) return;
  g_kept_fd = open(g.log.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
}

void LogError(const Globals& g, const std::string& msg) {
  fprintf(stderr, "sentry: %s\n", msg.c_str());
  if (!g.log.empty()) Append(g, "error", msg);
}

void LogDebug(const Globals& g, const std::string& msg) {
  if (!g.debug) return;
  if (g.log.empty()) {
    fprintf(stderr, "sentry: debug: %s\n", msg.c_str());
  } else {
    Append(g, "debug", msg);
  }
}

}  // namespace sentry::oci
