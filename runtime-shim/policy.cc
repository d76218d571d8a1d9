#include "runtime-shim/policy.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <optional>

#include "netstack/policy.h"
#include "nlohmann/json.hpp"
#include "runtime-shim/path_glob.h"
#include "runtime-shim/supervisor.h"
#include "sentry/base/status.h"
#include "vfs/mem_inode.h"

extern char** environ;

namespace sentry::shim {
namespace {

using Json = nlohmann::json;

// Walks one policy file; every error names the file and the key it is about.
class PolicyReader {
 public:
  PolicyReader(std::string file, Policy& policy) : file_(std::move(file)), p_(policy) {}

  absl::Status Read(const Json& top) {
    if (!top.is_object()) return Fail("(top level)", "expected an object");
    SENTRY_RETURN_IF_ERROR(Keys(top, "", {"filesystem", "network", "limits", "env"}));
    if (top.contains("filesystem")) SENTRY_RETURN_IF_ERROR(Filesystem(top["filesystem"]));
    if (top.contains("network")) SENTRY_RETURN_IF_ERROR(Network(top["network"]));
    if (top.contains("limits")) SENTRY_RETURN_IF_ERROR(Limits(top["limits"]));
    if (top.contains("env")) SENTRY_RETURN_IF_ERROR(Env(top["env"]));
    return absl::OkStatus();
  }

  absl::Status Fail(const std::string& key, const std::string& what) const {
    return absl::InvalidArgumentError("policy " + file_ + ": " + key + ": " + what);
  }

 private:
  // `obj` (at `key`, "" for the top) is an object whose keys are all in `known`.
  absl::Status Keys(const Json& obj, const std::string& key,
                    std::initializer_list<const char*> known) const {
    if (!obj.is_object()) return Fail(key, "expected an object");
    for (const auto& [name, value] : obj.items()) {
      bool ok = false;
      for (const char* k : known) ok = ok || name == k;
      if (!ok) return Fail(Join(key, name), "unknown key");
    }
    return absl::OkStatus();
  }

  static std::string Join(const std::string& key, const std::string& name) {
    return key.empty() ? name : key + "." + name;
  }

  absl::Status Strings(const Json& v, const std::string& key, std::vector<std::string>& out) {
    if (!v.is_array()) return Fail(key, "expected an array of strings");
    out.clear();
    for (size_t i = 0; i < v.size(); i++) {
      if (!v[i].is_string()) return Fail(key + "[" + std::to_string(i) + "]", "expected a string");
      out.push_back(v[i].get<std::string>());
    }
    return absl::OkStatus();
  }

  static void AddNew(const std::vector<std::string>& more, std::vector<std::string>& list) {
    for (const auto& path : more) {
      if (std::find(list.begin(), list.end(), path) == list.end()) list.push_back(path);
    }
  }

  // An array of absolute paths or "~/..." (no trailing '/'), into `out`; with `relative`,
  // also paths relative to the writable roots (without ".."); with `globs`, globs too
  // (path_glob.h).
  absl::Status Paths(const Json& v, const std::string& key, std::vector<std::string>& out,
                     bool relative, bool globs) {
    SENTRY_RETURN_IF_ERROR(Strings(v, key, out));
    for (size_t i = 0; i < out.size(); i++) {
      std::string at = key + "[" + std::to_string(i) + "]";
      std::string& path = out[i];
      if (HasGlob(path)) {
        if (!globs) return Fail(at, "globs are not supported here");
        std::string bad = CheckGlob(path);
        if (!bad.empty()) return Fail(at, "bad glob: " + bad);
      }
      while (path.size() > 1 && path.back() == '/') path.pop_back();
      bool absolute = !path.empty() && (path[0] == '/' || path == "~" || path.rfind("~/", 0) == 0);
      if (relative && !absolute) {
        if (path.empty() || path == ".." || path.rfind("../", 0) == 0 ||
            path.find("/../") != std::string::npos) {
          return Fail(at, "expected a path, without \"..\"");
        }
      } else if (!absolute) {
        return Fail(at, "expected an absolute path or ~/...");
      }
    }
    return absl::OkStatus();
  }

  absl::Status Filesystem(const Json& fs) {
    SENTRY_RETURN_IF_ERROR(
        Keys(fs, "filesystem", {"readOnly", "allowWrite", "denyWrite", "denyRead", "allowRead"}));
    if (fs.contains("readOnly")) {
      const Json& ro = fs["readOnly"];
      if (ro.is_boolean()) {
        p_.read_only = ro.get<bool>();
      } else if (ro.is_string() && ro.get<std::string>() == "scratch") {
        p_.read_only = false;
      } else {
        return Fail("filesystem.readOnly", "expected true, false or \"scratch\"");
      }
    }
    if (fs.contains("allowWrite")) {
      SENTRY_RETURN_IF_ERROR(
          Paths(fs["allowWrite"], "filesystem.allowWrite", p_.allow_write, /*relative=*/true,
                /*globs=*/false));
      for (auto& path : p_.allow_write) {
        if (path == "~" || path.rfind("~/", 0) == 0) path = CallerHome() + path.substr(1);
      }
    }
    if (fs.contains("denyRead")) {
      std::vector<std::string> more;
      SENTRY_RETURN_IF_ERROR(Paths(fs["denyRead"], "filesystem.denyRead", more, false, true));
      AddNew(more, p_.deny_read);
    }
    if (fs.contains("denyWrite")) {
      std::vector<std::string> more;
      SENTRY_RETURN_IF_ERROR(
          Paths(fs["denyWrite"], "filesystem.denyWrite", more, /*relative=*/true, /*globs=*/true));
      AddNew(more, p_.deny_write);
    }
    if (fs.contains("allowRead")) {
      SENTRY_RETURN_IF_ERROR(
          Paths(fs["allowRead"], "filesystem.allowRead", p_.allow_read, false, true));
    }
    return absl::OkStatus();
  }

  absl::Status Network(const Json& net) {
    SENTRY_RETURN_IF_ERROR(
        Keys(net, "network", {"mode", "allowedDomains", "deniedDomains", "publish"}));
    if (net.contains("mode")) {
      const Json& m = net["mode"];
      if (!m.is_string() || (m != "none" && m != "host")) {
        return Fail("network.mode", "expected \"none\" or \"host\"");
      }
      p_.net_host = m == "host";
    }
    for (auto [name, out] : {std::pair{"allowedDomains", &p_.allowed_domains},
                             std::pair{"deniedDomains", &p_.denied_domains}}) {
      if (!net.contains(name)) continue;
      std::string key = Join("network", name);
      SENTRY_RETURN_IF_ERROR(Strings(net[name], key, *out));
      for (size_t i = 0; i < out->size(); i++) {
        std::string err;
        if (!netstack::ParseNetRule((*out)[i], &err)) {
          return Fail(key + "[" + std::to_string(i) + "]", err);
        }
      }
    }
    if (net.contains("publish")) {
      // Entries are strings ("8080", "8080:80") or plain port numbers.
      const Json& list = net["publish"];
      if (!list.is_array()) return Fail("network.publish", "expected a list");
      for (size_t i = 0; i < list.size(); i++) {
        std::string key = "network.publish[" + std::to_string(i) + "]";
        const Json& e = list[i];
        std::string text;
        if (e.is_number_integer()) {
          text = std::to_string(e.get<int64_t>());
        } else if (e.is_string()) {
          text = e.get<std::string>();
        } else {
          return Fail(key, "expected a port or \"HOSTPORT:GUESTPORT[/udp]\"");
        }
        std::string err;
        if (!netstack::ParsePublish(text, &err)) return Fail(key, err);
        AddNew({text}, p_.publish);
      }
    }
    return absl::OkStatus();
  }

  absl::Status Limits(const Json& lim) {
    if (lim.is_object() && lim.contains("cpus")) {
      // Documented, not enforced yet: refused, never ignored.
      return Fail("limits.cpus", "not supported yet");
    }
    SENTRY_RETURN_IF_ERROR(
        Keys(lim, "limits",
             {"pids", "tmpSize", "timeout", "memory", "openFiles", "cpuTime", "fileSize"}));
    if (lim.contains("pids")) {
      const Json& n = lim["pids"];
      if (!n.is_number_integer() || n.get<int64_t>() <= 0) {
        return Fail("limits.pids", "expected a positive integer");
      }
      p_.pids = n.get<int64_t>();
    }
    if (lim.contains("tmpSize")) {
      const Json& s = lim["tmpSize"];
      std::string text = s.is_number_unsigned() ? std::to_string(s.get<uint64_t>())
                         : s.is_string()        ? s.get<std::string>()
                                                : "";
      auto size = vfs::ParseTmpfsSize(text);
      if (!size.ok() || *size < 4096) {
        return Fail("limits.tmpSize", "expected a size such as \"512m\", \"4g\" or \"25%\"");
      }
      p_.tmp_size = text;
    }
    struct LimitKey {
      const char* name;
      absl::Status (*parse)(const std::string&, Policy&);
    };
    static constexpr LimitKey kKeys[] = {{"timeout", ParseTimeoutLimit},
                                         {"memory", ParseMemoryLimit},
                                         {"openFiles", ParseOpenFilesLimit},
                                         {"cpuTime", ParseCpuTimeLimit},
                                         {"fileSize", ParseFileSizeLimit}};
    for (auto [name, parse] : kKeys) {
      if (!lim.contains(name)) continue;
      const Json& v = lim[name];
      // Numbers as they are written: 1.5 stays "1.5" for a timeout, 10 stays "10".
      std::string text = v.is_string() ? v.get<std::string>() : v.is_number() ? v.dump() : "";
      if (absl::Status s = parse(text, p_); !s.ok()) {
        return Fail(Join("limits", name), std::string(s.message()));
      }
    }
    return absl::OkStatus();
  }

  absl::Status Env(const Json& env) {
    SENTRY_RETURN_IF_ERROR(Keys(env, "env", {"inherit", "set"}));
    if (env.contains("inherit")) {
      const Json& in = env["inherit"];
      p_.inherit_all = in.is_string() && in == "*";
      p_.inherit.clear();
      if (!p_.inherit_all) {
        if (in.is_string()) return Fail("env.inherit", "expected \"*\" or an array of names");
        SENTRY_RETURN_IF_ERROR(Strings(in, "env.inherit", p_.inherit));
        for (size_t i = 0; i < p_.inherit.size(); i++) {
          if (!ValidName(p_.inherit[i])) {
            return Fail("env.inherit[" + std::to_string(i) + "]", "not a variable name");
          }
        }
      }
    }
    if (env.contains("set")) {
      const Json& set = env["set"];
      if (!set.is_object()) return Fail("env.set", "expected an object of strings");
      p_.set.clear();
      for (const auto& [name, value] : set.items()) {
        if (!ValidName(name)) return Fail("env.set." + name, "not a variable name");
        if (!value.is_string()) return Fail("env.set." + name, "expected a string");
        p_.set.emplace_back(name, value.get<std::string>());
      }
    }
    return absl::OkStatus();
  }

  static bool ValidName(const std::string& name) {
    return !name.empty() && name.find('=') == std::string::npos;
  }

  std::string file_;
  Policy& p_;
};

}  // namespace

absl::Status LoadPolicyFile(const std::string& path, Policy& policy) {
  std::ifstream in(path);
  if (!in) return absl::InvalidArgumentError("policy " + path + ": " + strerror(errno));
  Json top = Json::parse(in, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
  if (top.is_discarded()) return absl::InvalidArgumentError("policy " + path + ": not valid JSON");
  Policy copy = policy;  // a file with an error changes nothing
  absl::Status s = PolicyReader(path, copy).Read(top);
  if (s.ok()) policy = std::move(copy);
  return s;
}

namespace {

bool Unlimited(const std::string& text) { return text == "none" || text == "unlimited"; }

// FindProtectedFiles for denyWrite entries that may be globs: an absolute glob stands for the
// paths it matches; a relative one, in each writable root, for its matches there (relative
// to that root, so that only names inside the root are protected on the way).
ProtectedFiles FindProtectedGlobs(const std::vector<std::string>& paths,
                                  const std::vector<std::string>& roots) {
  std::vector<std::string> plain;
  ProtectedFiles out;
  auto add = [&out](ProtectedFiles more) {
    out.files.insert(out.files.end(), more.files.begin(), more.files.end());
    out.names.insert(out.names.end(), more.names.begin(), more.names.end());
  };
  for (const auto& p : paths) {
    if (!HasGlob(p)) {
      plain.push_back(p);
    } else if (p[0] == '/') {
      for (auto& m : ExpandGlob(p)) plain.push_back(std::move(m));
    } else {
      for (const auto& root : roots) {
        std::vector<std::string> rel;
        for (const auto& m : ExpandGlob(root + "/" + p)) rel.push_back(m.substr(root.size() + 1));
        if (!rel.empty()) add(FindProtectedFiles(rel, {root}));
      }
    }
  }
  add(FindProtectedFiles(plain, roots));
  std::sort(out.files.begin(), out.files.end());
  out.files.erase(std::unique(out.files.begin(), out.files.end()), out.files.end());
  std::sort(out.names.begin(), out.names.end());
  out.names.erase(std::unique(out.names.begin(), out.names.end()), out.names.end());
  return out;
}

// A positive integer no greater than `max`, or nullopt.
std::optional<int64_t> Count(const std::string& text, int64_t max) {
  if (text.empty() || !isdigit(static_cast<unsigned char>(text[0]))) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  long long n = strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || n <= 0 || n > max) return std::nullopt;
  return n;
}

}  // namespace

absl::Status ParseTimeoutLimit(const std::string& text, Policy& p) {
  auto ms = Unlimited(text) ? std::optional<int64_t>(0) : ParseDuration(text);
  if (!ms) return absl::InvalidArgumentError("expected a duration such as \"30s\", \"5m\" or 10");
  p.timeout_ms = *ms;
  p.timeout = *ms == 0 ? "" : text;
  return absl::OkStatus();
}

absl::Status ParseMemoryLimit(const std::string& text, Policy& p) {
  auto bytes = Unlimited(text) ? std::optional<uint64_t>(0) : ParseSize(text);
  // Below a few MiB not even a shell starts: refused rather than a sandbox that cannot run.
  if (!bytes || (*bytes != 0 && *bytes < (uint64_t{16} << 20))) {
    return absl::InvalidArgumentError(
        "expected a size of at least 16m, such as \"512m\" or \"2g\"");
  }
  p.memory = *bytes;
  p.memory_text = *bytes == 0 ? "" : text;
  return absl::OkStatus();
}

absl::Status ParseFileSizeLimit(const std::string& text, Policy& p) {
  auto bytes = Unlimited(text) ? std::optional<uint64_t>(0) : ParseSize(text);
  if (!bytes) return absl::InvalidArgumentError("expected a size such as \"100m\" or \"1g\"");
  p.file_size = *bytes;
  p.file_size_text = *bytes == 0 ? "" : text;
  return absl::OkStatus();
}

absl::Status ParseOpenFilesLimit(const std::string& text, Policy& p) {
  if (text == "inherit") {
    p.open_files = 0;
    return absl::OkStatus();
  }
  auto n = Count(text, 1 << 20);
  if (!n) return absl::InvalidArgumentError("expected a number from 1 to 1048576");
  p.open_files = *n;
  return absl::OkStatus();
}

absl::Status ParseCpuTimeLimit(const std::string& text, Policy& p) {
  auto n = Unlimited(text) ? std::optional<int64_t>(0) : Count(text, int64_t{1} << 40);
  if (!n) return absl::InvalidArgumentError("expected a positive number of seconds");
  p.cpu_time = *n;
  return absl::OkStatus();
}

std::string CallerHome() {
  if (const char* home = getenv("HOME"); home != nullptr && *home != '\0') return home;
  struct passwd* pw = getpwuid(getuid());
  return pw != nullptr && pw->pw_dir != nullptr ? pw->pw_dir : "";
}

std::string DefaultPolicyPath() {
  std::string home = CallerHome();
  return home.empty() ? "" : home + "/.config/sentry/policy.json";
}

std::string PolicyJson(const Policy& p) {
  nlohmann::ordered_json j;
  j["filesystem"]["readOnly"] = p.read_only ? nlohmann::ordered_json(true) : "scratch";
  j["filesystem"]["allowWrite"] = p.allow_write;
  j["filesystem"]["denyWrite"] = p.deny_write;
  j["filesystem"]["denyRead"] = p.deny_read;
  j["filesystem"]["allowRead"] = p.allow_read;
  j["network"]["mode"] = p.net_host ? "host" : "none";
  j["network"]["allowedDomains"] = p.allowed_domains;
  j["network"]["deniedDomains"] = p.denied_domains;
  j["network"]["publish"] = p.publish;
  j["limits"]["pids"] = p.pids > 0 ? nlohmann::ordered_json(p.pids) : "auto";
  j["limits"]["tmpSize"] = p.tmp_size.empty() ? "50%" : p.tmp_size;
  j["limits"]["timeout"] = p.timeout.empty() ? "none" : p.timeout;
  j["limits"]["memory"] = p.memory_text.empty() ? "none" : p.memory_text;
  j["limits"]["openFiles"] = p.open_files > 0 ? nlohmann::ordered_json(p.open_files) : "inherit";
  j["limits"]["cpuTime"] = p.cpu_time > 0 ? nlohmann::ordered_json(p.cpu_time) : "none";
  j["limits"]["fileSize"] = p.file_size_text.empty() ? "none" : p.file_size_text;
  j["env"]["inherit"] =
      p.inherit_all ? nlohmann::ordered_json("*") : nlohmann::ordered_json(p.inherit);
  j["env"]["set"] = nlohmann::ordered_json::object();
  for (const auto& [name, value] : p.set) j["env"]["set"][name] = value;
  return j.dump(2) + "\n";
}

absl::Status ApplyPolicy(const Policy& p, SandboxOptions& opts) {
  opts.read_only_root = p.read_only;
  std::vector<std::string> unprotected;
  for (const auto& dir : p.allow_write) {
    if (dir[0] != '/') {
      unprotected.push_back(dir);
      continue;
    }
    auto b = ParseBind(dir + ":" + dir + ":rw");
    if (!b.ok()) return b.status();
    b->guest = b->host;
    if (b->file) {
      opts.file_binds.push_back({b->host, b->guest, false});  // one writable file
    } else {
      opts.binds.push_back(*b);
    }
  }
  std::vector<std::string> homes = Homes(opts.default_home);
  std::vector<std::string> writable_roots;
  for (const auto& b : opts.binds) {
    if (!b.read_only) writable_roots.push_back(b.host);
  }
  std::vector<std::string> protect;
  for (const auto& path : ExpandHomes(p.deny_write, homes)) {
    if (std::find(unprotected.begin(), unprotected.end(), path) == unprotected.end()) {
      protect.push_back(path);
    }
  }
  for (const auto& b : opts.binds) {
    if (!b.review) continue;
    // The overlay over a workspace under review keeps these read-only by path.
    for (const auto& path : protect) {
      if (path[0] != '/') {
        opts.review.protected_paths.push_back(path);
      } else if (path.rfind(b.host + "/", 0) == 0) {
        opts.review.protected_paths.push_back(path.substr(b.host.size() + 1));
      }
    }
  }
  ProtectedFiles pf = FindProtectedGlobs(protect, writable_roots);
  opts.protected_files = std::move(pf.files);
  opts.protected_names = std::move(pf.names);
  opts.hidden_files = HiddenFiles(ExpandGlobs(ExpandHomes(p.deny_read, homes)),
                                  ExpandGlobs(ExpandHomes(p.allow_read, homes)));
  opts.net_host = p.net_host;
  std::string err;
  for (const auto& r : p.allowed_domains)
    opts.allow_net.push_back(*netstack::ParseNetRule(r, &err));
  for (const auto& r : p.denied_domains) opts.deny_net.push_back(*netstack::ParseNetRule(r, &err));
  for (const auto& text : p.publish) {
    netstack::PublishedPort pub = *netstack::ParsePublish(text, &err);
    opts.publish[{pub.protocol, pub.guest_port}] = pub.host_port;
  }
  opts.max_tasks = p.pids;
  if (!p.tmp_size.empty()) opts.tmpfs_size = *vfs::ParseTmpfsSize(p.tmp_size);
  opts.memory_limit = p.memory;
  opts.open_files = p.open_files;
  opts.cpu_time = p.cpu_time;
  opts.file_size = p.file_size;
  if (p.inherit_all) {
    for (char** e = environ; *e != nullptr; e++) opts.env.push_back(*e);
  }
  for (const auto& name : p.inherit) {
    if (const char* v = getenv(name.c_str())) opts.env.push_back(name + "=" + v);
  }
  for (const auto& [name, value] : p.set) opts.env.push_back(name + "=" + value);
  return absl::OkStatus();
}

}  // namespace sentry::shim
