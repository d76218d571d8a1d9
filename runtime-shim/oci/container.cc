#include "runtime-shim/oci/container.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

#include "nlohmann/json.hpp"
#include "sentry/base/status.h"

namespace sentry::oci {
namespace {

absl::Status MakeDirs(const std::string& path, mode_t mode) {
  std::string cur;
  for (size_t i = 1; i <= path.size(); i++) {
    if (i < path.size() && path[i] != '/') continue;
    cur = path.substr(0, i);
    if (mkdir(cur.c_str(), mode) != 0 && errno != EEXIST) return ErrnoStatus("mkdir " + cur);
  }
  return absl::OkStatus();
}

absl::StatusOr<int> LockDir(const std::string& dir) {
  int fd = open((dir + "/lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return ErrnoStatus("open " + dir + "/lock");
  while (flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) {
      close(fd);
      return ErrnoStatus("flock " + dir + "/lock");
    }
  }
  return fd;
}

// /proc/PID/stat fields after the command: field 3 (state) is at index 0.
bool ReadStat(pid_t pid, char* state, unsigned long long* start) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return false;
  size_t paren = line.rfind(')');
  if (paren == std::string::npos) return false;
  std::istringstream fields(line.substr(paren + 2));
  std::string f;
  for (int i = 3; fields >> f; i++) {
    if (i == 3) *state = f[0];
    if (i == 22) {
      *start = std::stoull(f);
      return true;
    }
  }
  return false;
}

}  // namespace

const char* StatusName(Status s) {
  switch (s) {
    case Status::kCreated:
      return "created";
    case Status::kRunning:
      return "running";
    case Status::kPaused:
      return "paused";
    case Status::kStopped:
      return "stopped";
  }
  return "unknown";
}

absl::Status CheckId(const std::string& id) {
  if (id.empty()) return absl::InvalidArgumentError("a container id is required");
  bool ok = id[0] != '.' && id.size() <= 1024;
  for (char c : id) ok = ok && (isalnum(static_cast<unsigned char>(c)) || strchr("_-.+", c));
  if (!ok) return absl::InvalidArgumentError("invalid container id \"" + id + "\"");
  return absl::OkStatus();
}

unsigned long long ProcessStartTime(pid_t pid) {
  char state = 0;
  unsigned long long start = 0;
  return ReadStat(pid, &state, &start) ? start : 0;
}

bool ProcessAlive(pid_t pid, unsigned long long start_time) {
  char state = 0;
  unsigned long long start = 0;
  if (pid <= 0 || !ReadStat(pid, &state, &start)) return false;
  return state != 'Z' && state != 'X' && start == start_time;
}

std::string NowRfc3339() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  struct tm tm;
  gmtime_r(&ts.tv_sec, &tm);
  char buf[64];
  size_t n = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(buf + n, sizeof(buf) - n, ".%09ldZ", ts.tv_nsec);
  return buf;
}

absl::StatusOr<Container> Container::New(const std::string& root, const std::string& id) {
  SENTRY_RETURN_IF_ERROR(CheckId(id));
  SENTRY_RETURN_IF_ERROR(MakeDirs(root, 0711));
  std::string dir = root + "/" + id;
  if (mkdir(dir.c_str(), 0711) != 0) {
    if (errno == EEXIST) return absl::AlreadyExistsError("container " + id + " already exists");
    return ErrnoStatus("mkdir " + dir);
  }
  auto fd = LockDir(dir);
  if (!fd.ok()) return fd.status();
  Container c(dir, *fd);
  c.state_.id = id;
  return c;
}

absl::StatusOr<Container> Container::Open(const std::string& root, const std::string& id) {
  SENTRY_RETURN_IF_ERROR(CheckId(id));
  std::string dir = root + "/" + id;
  auto not_found = absl::NotFoundError("container " + id + " does not exist");
  if (access(dir.c_str(), F_OK) != 0) return not_found;
  auto fd = LockDir(dir);
  if (!fd.ok()) return fd.status();
  Container c(dir, *fd);
  // A `delete` that held the lock before us removed the directory (and unlinked our lock
  // file); a `create` that failed did the same.
  std::ifstream in(dir + "/state.json");
  if (!in) return not_found;
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) return absl::DataLossError(dir + "/state.json: not valid JSON");
  try {
    c.state_.id = j.at("id").get<std::string>();
    c.state_.pid = j.at("pid").get<pid_t>();
    c.state_.pid_start = j.at("pidStart").get<unsigned long long>();
    c.state_.bundle = j.at("bundle").get<std::string>();
    c.state_.rootfs = j.at("rootfs").get<std::string>();
    c.state_.created = j.at("created").get<std::string>();
    c.state_.annotations = j.value("annotations", std::map<std::string, std::string>{});
    c.state_.cgroup_v2 = j.value("cgroupV2", false);
    c.state_.cgroup_dirs = j.value("cgroupDirs", std::vector<std::string>{});
    for (const auto& h : j.value("laterHooks", nlohmann::json::array())) {
      c.state_.later_hooks.push_back(
          {h.at("kind").get<std::string>(),
           {h.at("path").get<std::string>(), h.at("args").get<std::vector<std::string>>(),
            h.at("env").get<std::vector<std::string>>(), h.at("timeout").get<int>()}});
    }
  } catch (const nlohmann::json::exception& e) {
    return absl::DataLossError(dir + "/state.json: " + e.what());
  }
  return c;
}

Container::Container(Container&& o) noexcept
    : dir_(std::move(o.dir_)), lock_fd_(o.lock_fd_), state_(std::move(o.state_)) {
  o.lock_fd_ = -1;
}

Container::~Container() {
  if (lock_fd_ >= 0) close(lock_fd_);
}

absl::Status Container::Save() const {
  nlohmann::json j = {{"id", state_.id},
                      {"pid", state_.pid},
                      {"pidStart", state_.pid_start},
                      {"bundle", state_.bundle},
                      {"rootfs", state_.rootfs},
                      {"created", state_.created},
                      {"annotations", state_.annotations},
                      {"cgroupV2", state_.cgroup_v2},
                      {"cgroupDirs", state_.cgroup_dirs},
                      {"laterHooks", nlohmann::json::array()}};
  for (const auto& [kind, h] : state_.later_hooks) {
    j["laterHooks"].push_back({{"kind", kind},
                               {"path", h.path},
                               {"args", h.args},
                               {"env", h.env},
                               {"timeout", h.timeout}});
  }
  // Written aside and renamed, so a reader never sees half a file.
  std::string tmp = dir_ + "/state.json.tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << j.dump() << "\n";
    if (!out.flush()) return absl::InternalError("cannot write " + tmp);
  }
  if (rename(tmp.c_str(), (dir_ + "/state.json").c_str()) != 0) {
    return ErrnoStatus("rename " + tmp);
  }
  return absl::OkStatus();
}

Status Container::CurrentStatus() const {
  if (!ProcessAlive(state_.pid, state_.pid_start)) return Status::kStopped;
  if (access(FifoPath().c_str(), F_OK) == 0) return Status::kCreated;
  if (access((dir_ + "/paused").c_str(), F_OK) == 0) return Status::kPaused;
  return Status::kRunning;
}

absl::Status Container::SetPaused(bool paused) {
  std::string marker = dir_ + "/paused";
  if (!paused) {
    if (unlink(marker.c_str()) != 0 && errno != ENOENT) return ErrnoStatus("unlink " + marker);
    return absl::OkStatus();
  }
  int fd = open(marker.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("create " + marker);
  close(fd);
  return absl::OkStatus();
}

absl::Status Container::Remove() {
  DIR* d = opendir(dir_.c_str());
  if (d == nullptr) return ErrnoStatus("opendir " + dir_);
  while (struct dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    unlink((dir_ + "/" + name).c_str());
  }
  closedir(d);
  if (rmdir(dir_.c_str()) != 0) return ErrnoStatus("rmdir " + dir_);
  return absl::OkStatus();
}

}  // namespace sentry::oci
