// A container's state directory under --root: state.json, a lock serializing the commands
// that act on the container, and exec.fifo while the container waits for `start`.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace sentry::oci {

enum class Status { kCreated, kRunning, kPaused, kStopped };
const char* StatusName(Status s);

// One entry of config.json's hooks.
struct Hook {
  std::string path;
  std::vector<std::string> args;
  std::vector<std::string> env;
  int timeout = 0;  // seconds; 0: none
};

// What state.json holds.
struct ContainerState {
  std::string id;
  pid_t pid = 0;
  // The sandbox process's start time (/proc/PID/stat field 22), telling it from a later
  // process that reuses the PID.
  unsigned long long pid_start = 0;
  std::string bundle;
  std::string rootfs;
  std::string created;  // RFC 3339, UTC, nanoseconds
  std::map<std::string, std::string> annotations;
  // The host cgroup the sandbox runs in (runtime-shim/cgroup.h): its directories, one per
  // hierarchy; none if the container has no cgroup of its own.
  bool cgroup_v2 = false;
  std::vector<std::string> cgroup_dirs;
  // poststart and poststop hooks (kind, hook), run by `start` and `delete`.
  std::vector<std::pair<std::string, Hook>> later_hooks;
};

// A container's directory, locked (flock) for as long as this object lives.
class Container {
 public:
  // Makes ROOT/ID; fails if the container already exists.
  static absl::StatusOr<Container> New(const std::string& root, const std::string& id);
  // Opens and locks an existing container's directory.
  static absl::StatusOr<Container> Open(const std::string& root, const std::string& id);
  Container(Container&& o) noexcept;
  Container& operator=(Container&&) = delete;
  ~Container();

  const std::string& dir() const { return dir_; }
  std::string FifoPath() const { return dir_ + "/exec.fifo"; }
  ContainerState& state() { return state_; }

  absl::Status Save() const;
  // created while the sandbox process waits on exec.fifo, running after `start` (paused
  // between `pause` and `resume`), stopped
  // once the process has exited (even if its parent has not reaped it yet).
  Status CurrentStatus() const;
  // `pause` and `resume` record the state here (a file "paused" in the directory).
  absl::Status SetPaused(bool paused);
  // Removes the directory; the object must not be used afterwards.
  absl::Status Remove();

 private:
  Container(std::string dir, int lock_fd) : dir_(std::move(dir)), lock_fd_(lock_fd) {}
  std::string dir_;
  int lock_fd_ = -1;
  ContainerState state_;
};

// Container ids are names of directories: letters, digits, '_', '-', '.', not starting
// with '.'.
absl::Status CheckId(const std::string& id);
// Whether `pid` is still the live (not zombie) process that started at `start_time`.
bool ProcessAlive(pid_t pid, unsigned long long start_time);
unsigned long long ProcessStartTime(pid_t pid);
// The current time as RFC 3339 with nanoseconds ("2026-11-24T23:24:10.007711774Z").
std::string NowRfc3339();

}  // namespace sentry::oci
