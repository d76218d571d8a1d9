#include "runtime-shim/oci/spec.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <fstream>

#include "absl/strings/numbers.h"
#include "runtime-shim/oci/oci.h"
#include "runtime-shim/oci/resources.h"
#include "runtime-shim/oci/seccomp.h"
#include "sentry/base/status.h"
#include "vfs/mem_inode.h"

namespace sentry::oci {
namespace {

using nlohmann::json;

// Reads config.json fields by dotted path, with errors that name the field.
class Reader {
 public:
  explicit Reader(const json& root) : root_(root) {}

  // The value at `path`, or null if a part of the path is missing.
  const json* Find(const std::string& path) const {
    const json* cur = &root_;
    size_t i = 0;
    while (i <= path.size()) {
      size_t j = path.find('.', i);
      if (j == std::string::npos) j = path.size();
      if (!cur->is_object()) return nullptr;
      auto it = cur->find(path.substr(i, j - i));
      if (it == cur->end()) return nullptr;
      cur = &*it;
      i = j + 1;
    }
    return cur;
  }

  absl::StatusOr<std::string> String(const std::string& path, bool required) const {
    const json* v = Find(path);
    if (v == nullptr || v->is_null()) return Missing(path, required, std::string());
    if (!v->is_string()) return Wrong(path, "a string");
    return v->get<std::string>();
  }
  absl::StatusOr<bool> Bool(const std::string& path) const {
    const json* v = Find(path);
    if (v == nullptr || v->is_null()) return false;
    if (!v->is_boolean()) return Wrong(path, "true or false");
    return v->get<bool>();
  }
  absl::StatusOr<int64_t> Uint32(const std::string& path, int64_t absent) const {
    const json* v = Find(path);
    if (v == nullptr || v->is_null()) return absent;
    if (!v->is_number_unsigned() || v->get<uint64_t>() > UINT32_MAX) {
      return Wrong(path, "a number from 0 to 4294967295");
    }
    return v->get<int64_t>();
  }
  absl::StatusOr<std::vector<std::string>> Strings(const std::string& path, bool required) const {
    const json* v = Find(path);
    if (v == nullptr || v->is_null()) {
      return Missing(path, required, std::vector<std::string>());
    }
    if (!v->is_array()) return Wrong(path, "an array of strings");
    std::vector<std::string> out;
    for (size_t i = 0; i < v->size(); i++) {
      if (!(*v)[i].is_string()) return Wrong(path + "[" + std::to_string(i) + "]", "a string");
      out.push_back((*v)[i].get<std::string>());
    }
    return out;
  }

  static absl::Status Wrong(const std::string& path, const std::string& want) {
    return absl::InvalidArgumentError("config.json: " + path + ": expected " + want);
  }

 private:
  template <typename T>
  static absl::StatusOr<T> Missing(const std::string& path, bool required, T empty) {
    if (required) return absl::InvalidArgumentError("config.json: " + path + " is missing");
    return empty;
  }
  const json& root_;
};

#define ASSIGN_OR_RETURN_FIELD(lhs, expr)       \
  auto lhs##_or = (expr);                       \
  if (!lhs##_or.ok()) return lhs##_or.status(); \
  auto lhs = std::move(*lhs##_or)

std::string Absolute(const std::string& base, const std::string& p) {
  return !p.empty() && p[0] == '/' ? p : base + "/" + p;
}

bool Has(const std::vector<std::string>& options, const char* o) {
  for (const auto& x : options) {
    if (x == o) return true;
  }
  return false;
}

// The Sentry mounts its own /proc, /sys (with /sys/fs/cgroup, the container's group), /dev,
// /dev/pts and /dev/shm; these config mounts are met by those.
bool ProvidedBySentry(const std::string& type, const std::string& dest) {
  return (type == "proc" && dest == "/proc") || (type == "sysfs" && dest == "/sys") ||
         (type == "cgroup" && dest == "/sys/fs/cgroup") ||
         (type == "devpts" && dest == "/dev/pts") ||
         (type == "tmpfs" && (dest == "/dev" || dest == "/dev/shm"));
}

// A tmpfs mount's "mode=" and "size=" options (bytes, or with a k/m/g suffix, or a
// percentage of memory, as Linux's tmpfs takes them).
absl::StatusOr<shim::SandboxOptions::Tmpfs> TmpfsOf(const std::string& at, const std::string& dest,
                                                    const std::vector<std::string>& options) {
  shim::SandboxOptions::Tmpfs t{dest};
  for (const std::string& o : options) {
    if (o.rfind("size=", 0) == 0) {
      auto size = vfs::ParseTmpfsSize(o.substr(5));
      if (!size.ok()) return Reader::Wrong(at + ".options", "a tmpfs size (" + o + ")");
      t.size = *size;
    } else if (o.rfind("mode=", 0) == 0) {
      char* end = nullptr;
      unsigned long mode = strtoul(o.c_str() + 5, &end, 8);
      if (o.size() == 5 || *end != '\0' || mode > 07777) {
        return Reader::Wrong(at + ".options", "an octal tmpfs mode (" + o + ")");
      }
      t.mode = static_cast<uint32_t>(mode);
    }
  }
  return t;
}

absl::Status ReadMounts(const Reader& r, const std::string& bundle, BundleSpec& spec) {
  const json* mounts = r.Find("mounts");
  if (mounts == nullptr || mounts->is_null()) return absl::OkStatus();
  if (!mounts->is_array()) return Reader::Wrong("mounts", "an array");
  for (size_t i = 0; i < mounts->size(); i++) {
    std::string at = "mounts[" + std::to_string(i) + "]";
    Reader m((*mounts)[i]);
    if (!(*mounts)[i].is_object()) return Reader::Wrong(at, "an object");
    ASSIGN_OR_RETURN_FIELD(dest, m.String("destination", true));
    ASSIGN_OR_RETURN_FIELD(type, m.String("type", false));
    ASSIGN_OR_RETURN_FIELD(source, m.String("source", false));
    ASSIGN_OR_RETURN_FIELD(options, m.Strings("options", false));
    if (dest.empty() || dest[0] != '/')
      return Reader::Wrong(at + ".destination", "an absolute path");
    bool bind = type == "bind" || Has(options, "bind") || Has(options, "rbind");
    if (bind) {
      std::string host = Absolute(bundle, source);
      struct stat st;
      if (stat(host.c_str(), &st) != 0) {
        return absl::InvalidArgumentError("config.json: " + at + ".source: " + host + ": " +
                                          strerror(errno));
      }
      if (S_ISREG(st.st_mode)) {
        spec.sandbox.file_binds.push_back({host, dest, Has(options, "ro") || Has(options, "rro")});
        continue;
      }
      if (!S_ISDIR(st.st_mode)) {
        spec.ignored.push_back("bind mount of " + host + " at " + dest +
                               " (neither a directory nor a regular file) is skipped");
        continue;
      }
      spec.sandbox.binds.push_back({host, dest, Has(options, "ro") || Has(options, "rro")});
    } else if (type == "tmpfs" && dest == "/dev/shm") {
      SENTRY_ASSIGN_OR_RETURN(auto shm, TmpfsOf(at, dest, options));
      spec.sandbox.shm_size = shm.size;
    } else if (ProvidedBySentry(type, dest)) {
      continue;
    } else if (type == "tmpfs") {
      SENTRY_ASSIGN_OR_RETURN(auto t, TmpfsOf(at, dest, options));
      spec.sandbox.tmpfs_mounts.push_back(t);
    } else {
      spec.ignored.push_back("mount of type " + type + " at " + dest +
                             " is not supported: skipped");
    }
  }
  return absl::OkStatus();
}

absl::Status ReadHooks(const Reader& r, BundleSpec& spec) {
  const json* hooks = r.Find("hooks");
  if (hooks == nullptr || hooks->is_null()) return absl::OkStatus();
  if (!hooks->is_object()) return Reader::Wrong("hooks", "an object");
  for (const char* kind : {"prestart", "createRuntime", "createContainer", "startContainer",
                           "poststart", "poststop"}) {
    std::string at = std::string("hooks.") + kind;
    const json* list = r.Find(at);
    if (list == nullptr || list->is_null()) continue;
    if (!list->is_array()) return Reader::Wrong(at, "an array");
    bool at_create = std::string(kind) == "prestart" || std::string(kind) == "createRuntime" ||
                     std::string(kind) == "createContainer";
    for (size_t i = 0; i < list->size(); i++) {
      std::string item = at + "[" + std::to_string(i) + "]";
      if (!(*list)[i].is_object()) return Reader::Wrong(item, "an object");
      Reader h((*list)[i]);
      Hook hook;
      ASSIGN_OR_RETURN_FIELD(path, h.String("path", true));
      ASSIGN_OR_RETURN_FIELD(args, h.Strings("args", false));
      ASSIGN_OR_RETURN_FIELD(env, h.Strings("env", false));
      ASSIGN_OR_RETURN_FIELD(timeout, h.Uint32("timeout", 0));
      hook = {path, args, env, static_cast<int>(timeout)};
      if (at_create) {
        spec.create_hooks.push_back({kind, hook});
      } else {
        spec.later_hooks.push_back({kind, hook});
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ReadNetworkNamespace(const Reader& r, BundleSpec& spec) {
  const json* nss = r.Find("linux.namespaces");
  if (nss == nullptr || nss->is_null()) return absl::OkStatus();
  if (!nss->is_array()) return Reader::Wrong("linux.namespaces", "an array");
  for (size_t i = 0; i < nss->size(); i++) {
    std::string at = "linux.namespaces[" + std::to_string(i) + "]";
    if (!(*nss)[i].is_object()) return Reader::Wrong(at, "an object");
    Reader ns((*nss)[i]);
    ASSIGN_OR_RETURN_FIELD(type, ns.String("type", true));
    ASSIGN_OR_RETURN_FIELD(path, ns.String("path", false));
    if (type == "network") spec.netns_path = path;
  }
  return absl::OkStatus();
}

// The host path behind guest path `guest`: the bind mount with the longest destination that
// holds it (a file bind only for the path itself), else the root's.
std::string HostPathOf(const BundleSpec& spec, const std::string& guest) {
  const std::string root = spec.rootfs == "/" ? "" : spec.rootfs;
  std::string best_host = root + guest;
  size_t best_len = 0;
  auto consider = [&](const std::string& host, const std::string& dest, bool file) {
    bool holds = guest == dest ||
                 (!file && guest.size() > dest.size() && guest.compare(0, dest.size(), dest) == 0 &&
                  (dest == "/" || guest[dest.size()] == '/'));
    if (!holds || dest.size() < best_len) return;
    best_len = dest.size();
    best_host = dest == "/" ? host + guest : host + guest.substr(dest.size());
  };
  for (const auto& b : spec.sandbox.binds) consider(b.host, b.guest, false);
  for (const auto& b : spec.sandbox.file_binds) consider(b.host, b.guest, true);
  return best_host;
}

// Where argv[0] is in the guest: runc's `exec` looks it up on the PATH of process.env. The
// check is made on the host's view of the root and the bind mounts (Docker's --init binds
// /sbin/docker-init into an image that may have no /sbin), for an early, clear error from
// `create`.
absl::StatusOr<std::string> FindProgram(const BundleSpec& spec, const std::string& cwd,
                                        const std::string& prog,
                                        const std::vector<std::string>& env) {
  struct stat st;
  if (prog.find('/') != std::string::npos) {
    std::string guest = prog[0] == '/' ? prog : Absolute(cwd, prog);
    if (lstat(HostPathOf(spec, guest).c_str(), &st) != 0) {
      return absl::NotFoundError("exec: \"" + prog + "\": stat " + prog +
                                 ": no such file or directory");
    }
    return guest;
  }
  for (const std::string& dir : SearchPath(env)) {
    std::string guest = dir + "/" + prog;
    if (lstat(HostPathOf(spec, guest).c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) return guest;
  }
  return absl::NotFoundError("exec: \"" + prog + "\": executable file not found in $PATH");
}

// linux.cgroupsPath and linux.resources. The memory limit is the Sentry's own too (mmap and
// brk fail with ENOMEM there); the pids limit needs no copy: the Sentry derives its task cap
// from the pids cgroup it starts in (kernel/host_limits.h), which leaves room for its own
// threads.
absl::Status ReadResources(const Reader& r, BundleSpec& spec) {
  ASSIGN_OR_RETURN_FIELD(path, r.String("linux.cgroupsPath", false));
  const json* res = r.Find("linux.resources");
  auto parsed = ParseResources(res == nullptr ? json() : *res, "config.json: linux.resources");
  if (!parsed.ok()) return parsed.status();
  spec.cgroups_path = path;
  spec.limits = parsed->limits;
  spec.cgroup = !path.empty() || HasLimits(spec.limits);
  for (const auto& line : parsed->ignored) spec.ignored.push_back(line);
  if (spec.limits.memory && *spec.limits.memory > 0) {
    spec.sandbox.memory_limit = static_cast<uint64_t>(*spec.limits.memory);
  }
  return absl::OkStatus();
}

// process.rlimits: every entry becomes the guest init's limit, soft and hard as given (what
// getrlimit and /proc/self/limits show; the Sentry enforces those it meters: NOFILE, FSIZE,
// CPU, NPROC, SIGPENDING, MEMLOCK, NICE, RTPRIO). An unknown type is an error, as in runc.
absl::Status ReadRlimits(const Reader& r, BundleSpec& spec) {
  static const std::map<std::string, int> kTypes = {
      {"RLIMIT_CPU", RLIMIT_CPU},           {"RLIMIT_FSIZE", RLIMIT_FSIZE},
      {"RLIMIT_DATA", RLIMIT_DATA},         {"RLIMIT_STACK", RLIMIT_STACK},
      {"RLIMIT_CORE", RLIMIT_CORE},         {"RLIMIT_RSS", RLIMIT_RSS},
      {"RLIMIT_NPROC", RLIMIT_NPROC},       {"RLIMIT_NOFILE", RLIMIT_NOFILE},
      {"RLIMIT_MEMLOCK", RLIMIT_MEMLOCK},   {"RLIMIT_AS", RLIMIT_AS},
      {"RLIMIT_LOCKS", RLIMIT_LOCKS},       {"RLIMIT_SIGPENDING", RLIMIT_SIGPENDING},
      {"RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE}, {"RLIMIT_NICE", RLIMIT_NICE},
      {"RLIMIT_RTPRIO", RLIMIT_RTPRIO},     {"RLIMIT_RTTIME", RLIMIT_RTTIME}};
  const json* list = r.Find("process.rlimits");
  if (list == nullptr || list->is_null()) return absl::OkStatus();
  if (!list->is_array()) return Reader::Wrong("process.rlimits", "an array");
  for (size_t i = 0; i < list->size(); i++) {
    std::string at = "process.rlimits[" + std::to_string(i) + "]";
    const json& e = (*list)[i];
    if (!e.is_object() || !e.contains("type") || !e["type"].is_string() ||
        !e.value("soft", json()).is_number_unsigned() ||
        !e.value("hard", json()).is_number_unsigned()) {
      return Reader::Wrong(at, "an object with a type, a soft and a hard limit");
    }
    std::string type = e["type"].get<std::string>();
    auto it = kTypes.find(type);
    if (it == kTypes.end()) return Reader::Wrong(at + ".type", "an RLIMIT_ name");
    uint64_t soft = e["soft"].get<uint64_t>(), hard = e["hard"].get<uint64_t>();
    if (soft > hard) return Reader::Wrong(at, "a soft limit no greater than the hard one");
    spec.sandbox.rlimits.push_back({it->second, soft, hard});
  }
  return absl::OkStatus();
}

// process.user's umask and additionalGids, process.noNewPrivileges, and the paths the guest
// may not see (maskedPaths) or change (readonlyPaths).
absl::Status ReadUserAndPaths(const Reader& r, BundleSpec& spec) {
  shim::SandboxOptions& o = spec.sandbox;
  ASSIGN_OR_RETURN_FIELD(umask, r.Uint32("process.user.umask", 022));
  if (umask > 0777) return Reader::Wrong("process.user.umask", "a mode from 0 to 0777");
  o.umask = static_cast<uint32_t>(umask);
  if (const json* gids = r.Find("process.user.additionalGids"); gids && !gids->is_null()) {
    if (!gids->is_array()) return Reader::Wrong("process.user.additionalGids", "an array");
    for (size_t i = 0; i < gids->size(); i++) {
      const json& g = (*gids)[i];
      if (!g.is_number_unsigned() || g.get<uint64_t>() > UINT32_MAX) {
        return Reader::Wrong("process.user.additionalGids[" + std::to_string(i) + "]",
                             "a number from 0 to 4294967295");
      }
      o.groups.push_back(g.get<uint32_t>());
    }
  }
  ASSIGN_OR_RETURN_FIELD(nnp, r.Bool("process.noNewPrivileges"));
  o.no_new_privs = nnp;
  if (const json* process = r.Find("process"); process != nullptr && process->is_object()) {
    auto caps = ReadCapabilities(*process, "process");
    if (!caps.ok()) {
      return absl::InvalidArgumentError("config.json: " + std::string(caps.status().message()));
    }
    o.caps = *caps;
  }
  for (auto [key, out] : {std::pair{"linux.maskedPaths", &o.masked_paths},
                          std::pair{"linux.readonlyPaths", &o.readonly_paths}}) {
    ASSIGN_OR_RETURN_FIELD(paths, r.Strings(key, false));
    for (size_t i = 0; i < paths.size(); i++) {
      if (paths[i].empty() || paths[i][0] != '/') {
        return Reader::Wrong(std::string(key) + "[" + std::to_string(i) + "]", "an absolute path");
      }
    }
    *out = std::move(paths);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<BundleSpec> LoadSpec(const std::string& bundle) {
  std::string file = bundle + "/config.json";
  std::ifstream in(file);
  if (!in) return absl::NotFoundError(file + ": " + strerror(errno));
  json j;
  try {
    j = json::parse(in);
  } catch (const json::parse_error& e) {
    return absl::InvalidArgumentError("config.json: not valid JSON: " + std::string(e.what()));
  }
  if (!j.is_object()) return Reader::Wrong("the top level", "an object");
  Reader r(j);
  BundleSpec spec;
  shim::SandboxOptions& o = spec.sandbox;
  ASSIGN_OR_RETURN_FIELD(version, r.String("ociVersion", true));
  ASSIGN_OR_RETURN_FIELD(root, r.String("root.path", true));
  ASSIGN_OR_RETURN_FIELD(readonly, r.Bool("root.readonly"));
  if (r.Find("process") == nullptr) {
    return absl::InvalidArgumentError("config.json: process is missing");
  }
  ASSIGN_OR_RETURN_FIELD(args, r.Strings("process.args", true));
  if (args.empty()) return Reader::Wrong("process.args", "at least one argument");
  ASSIGN_OR_RETURN_FIELD(env, r.Strings("process.env", false));
  ASSIGN_OR_RETURN_FIELD(cwd, r.String("process.cwd", true));
  if (cwd.empty() || cwd[0] != '/') return Reader::Wrong("process.cwd", "an absolute path");
  ASSIGN_OR_RETURN_FIELD(uid, r.Uint32("process.user.uid", -1));
  ASSIGN_OR_RETURN_FIELD(gid, r.Uint32("process.user.gid", -1));
  ASSIGN_OR_RETURN_FIELD(terminal, r.Bool("process.terminal"));
  ASSIGN_OR_RETURN_FIELD(hostname, r.String("hostname", false));

  spec.rootfs = Absolute(bundle, root);
  char real[PATH_MAX];
  if (realpath(spec.rootfs.c_str(), real) == nullptr) {
    return absl::InvalidArgumentError("config.json: root.path: " + spec.rootfs + ": " +
                                      strerror(errno));
  }
  spec.rootfs = real;
  o.rootfs = spec.rootfs;
  // The whole root is read-only to the guest (EROFS); mounts (Docker's --tmpfs, volumes,
  // /dev) keep their own modes, and no scratch directory is made writable behind the
  // caller's back.
  o.read_only_root = readonly;
  o.root_writes_host = !readonly;
  o.scratch_dirs = false;
  o.argv = args;
  o.env = env;
  o.env_exact = true;
  o.cwd = cwd;
  o.uid = uid;
  o.gid = gid;
  o.hostname = hostname;
  spec.terminal = terminal;
  for (auto [key, out] : {std::pair{"process.consoleSize.height", &spec.console_rows},
                          std::pair{"process.consoleSize.width", &spec.console_cols}}) {
    const json* v = r.Find(key);
    if (v == nullptr || v->is_null()) continue;
    if (!v->is_number_unsigned() || v->get<uint64_t>() > 65535) {
      return Reader::Wrong(key, "a number from 0 to 65535");
    }
    *out = v->get<int>();
  }

  const json* ann = r.Find("annotations");
  if (ann != nullptr && !ann->is_null()) {
    if (!ann->is_object()) return Reader::Wrong("annotations", "an object of strings");
    for (const auto& [k, v] : ann->items()) {
      if (!v.is_string()) return Reader::Wrong("annotations." + k, "a string");
      spec.annotations[k] = v.get<std::string>();
    }
  }
  SENTRY_RETURN_IF_ERROR(ReadMounts(r, bundle, spec));
  auto program = FindProgram(spec, cwd, args[0], env);
  if (!program.ok()) return program.status();
  o.program = *program;
  SENTRY_RETURN_IF_ERROR(ReadHooks(r, spec));
  SENTRY_RETURN_IF_ERROR(ReadNetworkNamespace(r, spec));
  if (const json* sc = r.Find("linux.seccomp"); sc != nullptr && !sc->is_null()) {
    auto prog = CompileSeccompProfile(*sc);
    if (!prog.ok()) return prog.status();
    o.seccomp_filter = std::move(*prog);
  }
  SENTRY_RETURN_IF_ERROR(ReadResources(r, spec));
  SENTRY_RETURN_IF_ERROR(ReadRlimits(r, spec));
  SENTRY_RETURN_IF_ERROR(ReadUserAndPaths(r, spec));
  if (const json* adj = r.Find("process.oomScoreAdj"); adj != nullptr && !adj->is_null()) {
    if (!adj->is_number_integer() || adj->get<int64_t>() < -1000 || adj->get<int64_t>() > 1000) {
      return Reader::Wrong("process.oomScoreAdj", "a number from -1000 to 1000");
    }
    spec.oom_score_adj = adj->get<int>();
  }
  if (const json* sysctl = r.Find("linux.sysctl"); sysctl != nullptr && !sysctl->is_null()) {
    if (!sysctl->is_object()) return Reader::Wrong("linux.sysctl", "an object of strings");
    for (const auto& [key, value] : sysctl->items()) {
      if (!value.is_string()) return Reader::Wrong("linux.sysctl." + key, "a string");
      bool per_netns = key.rfind("net.", 0) == 0 && key.find("..") == std::string::npos &&
                       key.find('/') == std::string::npos;
      if (per_netns) {
        spec.net_sysctls[key] = value.get<std::string>();
        // The one the Sentry's own stack enforces as well (a guest bind below it).
        if (key == "net.ipv4.ip_unprivileged_port_start") {
          int port;
          if (!absl::SimpleAtoi(value.get<std::string>(), &port) || port < 0 || port > 65535) {
            return Reader::Wrong("linux.sysctl." + key, "a port number");
          }
          o.unprivileged_port_start = port;
        }
      } else {
        spec.ignored.push_back("linux.sysctl." + key + " is not applied (only net.* are)");
      }
    }
  }
  return spec;
}

namespace {

// The five capability sets, by their names in config.json.
constexpr std::pair<const char*, uint64_t kernel::CapabilitySets::*> kCapabilitySets[] = {
    {"bounding", &kernel::CapabilitySets::bounding},
    {"effective", &kernel::CapabilitySets::effective},
    {"permitted", &kernel::CapabilitySets::permitted},
    {"inheritable", &kernel::CapabilitySets::inheritable},
    {"ambient", &kernel::CapabilitySets::ambient}};

}  // namespace

absl::StatusOr<std::optional<kernel::CapabilitySets>> ReadCapabilities(
    const json& process, const std::string& where) {
  auto it = process.find("capabilities");
  if (it == process.end() || it->is_null()) return std::nullopt;
  const std::string at = where + ".capabilities";
  auto wrong = [](const std::string& path, const std::string& want) {
    return absl::InvalidArgumentError(path + ": expected " + want);
  };
  if (!it->is_object()) return wrong(at, "an object");
  kernel::CapabilitySets caps;
  for (auto [name, member] : kCapabilitySets) {
    auto set = it->find(name);
    if (set == it->end() || set->is_null()) continue;
    const std::string path = at + "." + name;
    if (!set->is_array()) return wrong(path, "an array of capability names");
    for (size_t i = 0; i < set->size(); i++) {
      const json& v = (*set)[i];
      std::optional<int> cap =
          v.is_string() ? kernel::CapabilityByName(v.get<std::string>()) : std::nullopt;
      if (!cap) {
        return wrong(path + "[" + std::to_string(i) + "]",
                     "a capability name such as CAP_CHOWN, not " + v.dump());
      }
      caps.*member |= kernel::CapBit(*cap);
    }
  }
  return caps;
}

json CapabilitiesToJson(const kernel::CapabilitySets& caps) {
  json j = json::object();
  for (auto [name, member] : kCapabilitySets) j[name] = caps.*member;
  return j;
}

kernel::CapabilitySets CapabilitiesFromJson(const json& j) {
  kernel::CapabilitySets caps;
  for (auto [name, member] : kCapabilitySets) caps.*member = j.at(name).get<uint64_t>();
  return caps;
}

nlohmann::json DefaultSpec() {
  return {{"ociVersion", "1.0.2-dev"},
          {"process",
           {{"terminal", false},
            {"user", {{"uid", 0}, {"gid", 0}}},
            {"args", {"sh"}},
            {"env",
             {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm"}},
            {"cwd", "/"},
            {"noNewPrivileges", true}}},
          {"root", {{"path", "rootfs"}, {"readonly", false}}},
          {"hostname", "sentry"},
          {"mounts",
           {{{"destination", "/proc"}, {"type", "proc"}, {"source", "proc"}},
            {{"destination", "/dev"},
             {"type", "tmpfs"},
             {"source", "tmpfs"},
             {"options", {"nosuid", "strictatime", "mode=755", "size=65536k"}}},
            {{"destination", "/dev/pts"},
             {"type", "devpts"},
             {"source", "devpts"},
             {"options", {"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"}}},
            {{"destination", "/dev/shm"},
             {"type", "tmpfs"},
             {"source", "shm"},
             {"options", {"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"}}},
            {{"destination", "/sys"},
             {"type", "sysfs"},
             {"source", "sysfs"},
             {"options", {"nosuid", "noexec", "nodev", "ro"}}}}},
          {"linux",
           {{"namespaces",
             {{{"type", "pid"}},
              {{"type", "network"}},
              {{"type", "ipc"}},
              {{"type", "uts"}},
              {{"type", "mount"}}}}}}};
}

}  // namespace sentry::oci
