#include "runtime-shim/oci/resources.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "runtime-shim/oci/container.h"
#include "runtime-shim/oci/control.h"
#include "runtime-shim/oci/oci.h"
#include "runtime-shim/supervisor.h"
#include "sentry/base/status.h"

namespace sentry::oci {
namespace {

using nlohmann::json;

absl::Status Wrong(const std::string& path, const std::string& want) {
  return absl::InvalidArgumentError(path + ": expected " + want);
}

// A number field of `obj`; nullopt if absent, null or (when `zero_unset`) 0.
absl::StatusOr<std::optional<int64_t>> Number(const json& obj, const std::string& key,
                                              const std::string& where, bool zero_unset) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::optional<int64_t>();
  if (!it->is_number_integer()) return Wrong(where + "." + key, "an integer");
  int64_t v = it->get<int64_t>();
  if (v == 0 && zero_unset) return std::optional<int64_t>();
  return std::optional<int64_t>(v);
}

absl::StatusOr<std::optional<std::string>> Text(const json& obj, const std::string& key,
                                                const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::optional<std::string>();
  if (!it->is_string()) return Wrong(where + "." + key, "a string");
  if (it->get<std::string>().empty()) return std::optional<std::string>();
  return std::optional<std::string>(it->get<std::string>());
}

#define ASSIGN_FIELD(out, expr)       \
  do {                                \
    auto v_ = (expr);                 \
    if (!v_.ok()) return v_.status(); \
    out = *v_;                        \
  } while (0)

// A size as runc's flags take it: bytes, with k/m/g/t suffixes, or -1 for unlimited.
absl::StatusOr<int64_t> FlagSize(const std::string& flag, const std::string& v) {
  if (v == "-1") return -1;
  std::string t = v;
  if (t.size() > 1 && (t.back() == 'b' || t.back() == 'B')) t.pop_back();
  auto n = shim::ParseSize(t);
  if (!n) return absl::InvalidArgumentError(flag + ": invalid size \"" + v + "\"");
  return static_cast<int64_t>(*n);
}

absl::StatusOr<int64_t> FlagNumber(const std::string& flag, const std::string& v) {
  try {
    size_t used = 0;
    int64_t n = std::stoll(v, &used);
    if (used == v.size()) return n;
  } catch (...) {
  }
  return absl::InvalidArgumentError(flag + ": invalid number \"" + v + "\"");
}

// The limits runc's single flags ask for, over `l`.
absl::Status ApplyFlags(const UpdateFlags& f, shim::CgroupLimits& l) {
  auto size = [](const std::string& flag, const std::string& v, std::optional<int64_t>& out) {
    if (v.empty()) return absl::OkStatus();
    SENTRY_ASSIGN_OR_RETURN(out, FlagSize(flag, v));
    return absl::OkStatus();
  };
  SENTRY_RETURN_IF_ERROR(size("--memory", f.memory, l.memory));
  SENTRY_RETURN_IF_ERROR(size("--memory-swap", f.memory_swap, l.memory_swap));
  SENTRY_RETURN_IF_ERROR(size("--memory-reservation", f.memory_reservation, l.memory_reservation));
  if (!f.pids_limit.empty()) {
    SENTRY_ASSIGN_OR_RETURN(l.pids, FlagNumber("--pids-limit", f.pids_limit));
  }
  if (!f.cpu_quota.empty()) {
    SENTRY_ASSIGN_OR_RETURN(l.cpu_quota, FlagNumber("--cpu-quota", f.cpu_quota));
  }
  for (auto [flag, text, out] : {std::tuple{"--cpu-shares", &f.cpu_shares, &l.cpu_shares},
                                 std::tuple{"--cpu-period", &f.cpu_period, &l.cpu_period}}) {
    if (text->empty()) continue;
    SENTRY_ASSIGN_OR_RETURN(int64_t n, FlagNumber(flag, *text));
    if (n < 0) return absl::InvalidArgumentError(std::string(flag) + ": must not be negative");
    *out = static_cast<uint64_t>(n);
  }
  if (!f.cpuset_cpus.empty()) l.cpuset_cpus = f.cpuset_cpus;
  if (!f.cpuset_mems.empty()) l.cpuset_mems = f.cpuset_mems;
  return absl::OkStatus();
}

json Usage(int64_t v) { return v < 0 ? json() : json(v); }

}  // namespace

absl::StatusOr<Resources> ParseResources(const json& r, const std::string& where) {
  Resources out;
  if (r.is_null()) return out;
  if (!r.is_object()) return Wrong(where, "an object");
  shim::CgroupLimits& l = out.limits;
  for (const auto& [key, value] : r.items()) {
    std::string at = where + "." + key;
    if (value.is_null()) continue;
    if (key == "memory" || key == "cpu" || key == "pids") {
      if (!value.is_object()) return Wrong(at, "an object");
    } else {
      out.ignored.push_back(at + " is not applied");
    }
  }
  if (const json* m = r.contains("memory") ? &r["memory"] : nullptr; m && m->is_object()) {
    std::string at = where + ".memory";
    ASSIGN_FIELD(l.memory, Number(*m, "limit", at, true));
    ASSIGN_FIELD(l.memory_swap, Number(*m, "swap", at, true));
    ASSIGN_FIELD(l.memory_reservation, Number(*m, "reservation", at, true));
    for (const char* k : {"kernel", "kernelTCP", "swappiness"}) {
      if (m->contains(k) && !(*m)[k].is_null() && (*m)[k] != 0) {
        out.ignored.push_back(at + "." + k + " is not applied");
      }
    }
    if (m->value("disableOOMKiller", false)) {
      out.ignored.push_back(at + ".disableOOMKiller is not applied");
    }
  }
  if (const json* c = r.contains("cpu") ? &r["cpu"] : nullptr; c && c->is_object()) {
    std::string at = where + ".cpu";
    std::optional<int64_t> shares, period;
    ASSIGN_FIELD(shares, Number(*c, "shares", at, true));
    ASSIGN_FIELD(period, Number(*c, "period", at, true));
    ASSIGN_FIELD(l.cpu_quota, Number(*c, "quota", at, true));
    if ((shares && *shares < 0) || (period && *period < 0)) {
      return Wrong(at, "shares and period that are not negative");
    }
    if (shares) l.cpu_shares = static_cast<uint64_t>(*shares);
    if (period) l.cpu_period = static_cast<uint64_t>(*period);
    ASSIGN_FIELD(l.cpuset_cpus, Text(*c, "cpus", at));
    ASSIGN_FIELD(l.cpuset_mems, Text(*c, "mems", at));
  }
  if (const json* p = r.contains("pids") ? &r["pids"] : nullptr; p && p->is_object()) {
    ASSIGN_FIELD(l.pids, Number(*p, "limit", where + ".pids", true));
  }
  return out;
}

bool HasLimits(const shim::CgroupLimits& l) {
  return l.memory || l.memory_swap || l.memory_reservation || l.pids || l.cpu_shares ||
         l.cpu_quota || l.cpu_period || l.cpuset_cpus || l.cpuset_mems;
}

std::string CgroupName(const std::string& cgroups_path, const std::string& id) {
  if (cgroups_path.empty()) return "/" + id;
  size_t a = cgroups_path.find(':');
  size_t b = a == std::string::npos ? a : cgroups_path.find(':', a + 1);
  if (cgroups_path[0] != '/' && b != std::string::npos) {
    std::string slice = cgroups_path.substr(0, a);
    std::string prefix = cgroups_path.substr(a + 1, b - a - 1);
    std::string name = cgroups_path.substr(b + 1);
    return "/" + (slice.empty() ? "" : slice + "/") + (prefix.empty() ? "" : prefix + "-") + name +
           ".scope";
  }
  return cgroups_path;
}

json StatsEvent(const std::string& id, const shim::CgroupStats& st) {
  json raw = json::object();
  for (const auto& [k, v] : st.memory_raw) raw[k] = v;
  json data = {{"cpu",
                {{"usage",
                  {{"total", Usage(st.cpu_total_ns)},
                   {"percpu", st.cpu_percpu_ns},
                   {"kernel", Usage(st.cpu_kernel_ns)},
                   {"user", Usage(st.cpu_user_ns)}}},
                 {"throttling",
                  {{"periods", Usage(st.periods)},
                   {"throttledPeriods", Usage(st.throttled_count)},
                   {"throttledTime", Usage(st.throttled_ns)}}}}},
               {"memory",
                {{"usage",
                  {{"limit", Usage(st.memory_limit)},
                   {"usage", Usage(st.memory_usage)},
                   {"max", Usage(st.memory_max_usage)},
                   {"failcnt", Usage(st.memory_failcnt)}}},
                 {"swap", {{"limit", Usage(st.swap_limit)}, {"usage", Usage(st.swap_usage)}}},
                 {"kernel", json::object()},
                 {"kernelTCP", json::object()},
                 {"raw", raw}}},
               {"pids", {{"current", Usage(st.pids_current)}, {"limit", Usage(st.pids_limit)}}},
               {"blkio", json::object()},
               {"hugetlb", json::object()}};
  return {{"type", "stats"}, {"id", id}, {"data", data}};
}

absl::Status Update(const Globals& g, const UpdateFlags& f) {
  Resources res;
  if (!f.resources.empty()) {
    std::string text;
    if (f.resources == "-") {
      text = ReadAll(STDIN_FILENO);
    } else {
      std::ifstream in(f.resources);
      if (!in) return absl::NotFoundError("--resources " + f.resources + ": cannot read it");
      std::stringstream s;
      s << in.rdbuf();
      text = s.str();
    }
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded()) return absl::InvalidArgumentError("--resources: not valid JSON");
    SENTRY_ASSIGN_OR_RETURN(res, ParseResources(j, "resources"));
  }
  SENTRY_RETURN_IF_ERROR(ApplyFlags(f, res.limits));
  for (const auto& line : res.ignored) LogDebug(g, "update: " + line);
  SENTRY_ASSIGN_OR_RETURN(Container c, Container::Open(g.root, f.id));
  Status s = c.CurrentStatus();
  if (s == Status::kStopped) {
    return absl::FailedPreconditionError("container " + f.id + " is not running");
  }
  if (c.state().cgroup_dirs.empty()) {
    return absl::FailedPreconditionError("container " + f.id +
                                         " has no cgroup (its config.json had neither "
                                         "linux.resources nor linux.cgroupsPath)");
  }
  auto group = shim::Cgroup::Open(c.state().cgroup_v2, c.state().cgroup_dirs);
  SENTRY_RETURN_IF_ERROR(group->Apply(res.limits));
  // The Sentry serves its control socket once the guest runs; before, the limit it was
  // created with stays its own (the host cgroup's is new already).
  if (res.limits.memory && (s == Status::kRunning || s == Status::kPaused)) {
    SENTRY_RETURN_IF_ERROR(
        ControlRequest(c.dir(), {{"op", "update"}, {"memory", *res.limits.memory}}).status());
  }
  return absl::OkStatus();
}

absl::Status Events(const Globals& g, const std::string& id, bool stats, int64_t interval_ms) {
  if (interval_ms <= 0) return absl::InvalidArgumentError("--interval must be positive");
  std::unique_ptr<shim::Cgroup> group;
  {
    SENTRY_ASSIGN_OR_RETURN(Container c, Container::Open(g.root, id));
    if (c.CurrentStatus() == Status::kStopped) {
      return absl::FailedPreconditionError("container " + id + " is not running");
    }
    if (c.state().cgroup_dirs.empty()) {
      return absl::FailedPreconditionError("container " + id + " has no cgroup to report on");
    }
    group = shim::Cgroup::Open(c.state().cgroup_v2, c.state().cgroup_dirs);
  }
  if (stats) {
    printf("%s\n", StatsEvent(id, group->Stats()).dump().c_str());
    return absl::OkStatus();
  }
  uint64_t ooms = group->OomKills();
  for (;;) {
    {
      // The lock only while looking: `delete` must not wait for us.
      auto c = Container::Open(g.root, id);
      if (!c.ok() || c->CurrentStatus() == Status::kStopped) return absl::OkStatus();
    }
    shim::CgroupStats st = group->Stats();
    if (st.oom_kills > ooms) {
      printf("%s\n", json({{"type", "oom"}, {"id", id}}).dump().c_str());
      ooms = st.oom_kills;
    }
    printf("%s\n", StatsEvent(id, st).dump().c_str());
    fflush(stdout);
    usleep(static_cast<useconds_t>(std::min<int64_t>(interval_ms, 3600000) * 1000));
  }
}

}  // namespace sentry::oci
