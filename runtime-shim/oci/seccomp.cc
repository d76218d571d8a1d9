#include "runtime-shim/oci/seccomp.h"

#include <seccomp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <string>

namespace sentry::oci {
namespace {

using nlohmann::json;

absl::Status Bad(const std::string& field, const std::string& what) {
  return absl::InvalidArgumentError("config.json: linux.seccomp." + field + ": " + what);
}

// An OCI action name with its errno (errnoRet, default EPERM as runc) as a libseccomp action.
absl::StatusOr<uint32_t> Action(const std::string& field, const json& name, uint32_t ret) {
  if (!name.is_string()) return Bad(field, "want a string");
  const std::string a = name.get<std::string>();
  if (a == "SCMP_ACT_KILL" || a == "SCMP_ACT_KILL_THREAD") return SCMP_ACT_KILL_THREAD;
  if (a == "SCMP_ACT_KILL_PROCESS") return SCMP_ACT_KILL_PROCESS;
  if (a == "SCMP_ACT_TRAP") return SCMP_ACT_TRAP;
  if (a == "SCMP_ACT_ERRNO") return SCMP_ACT_ERRNO(ret);
  if (a == "SCMP_ACT_TRACE") return SCMP_ACT_TRACE(ret);
  if (a == "SCMP_ACT_ALLOW") return SCMP_ACT_ALLOW;
  if (a == "SCMP_ACT_LOG") return SCMP_ACT_LOG;
  if (a == "SCMP_ACT_NOTIFY") return Bad(field, "SCMP_ACT_NOTIFY is not supported");
  return Bad(field, "unknown action \"" + a + "\"");
}

absl::StatusOr<uint32_t> ErrnoRet(const json& obj, const char* key, const std::string& field) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return EPERM;
  if (!it->is_number_unsigned()) return Bad(field, "want a number");
  return it->get<uint32_t>();
}

absl::StatusOr<scmp_compare> Op(const std::string& field, const json& op) {
  static const std::map<std::string, scmp_compare> ops = {
      {"SCMP_CMP_NE", SCMP_CMP_NE}, {"SCMP_CMP_LT", SCMP_CMP_LT},
      {"SCMP_CMP_LE", SCMP_CMP_LE}, {"SCMP_CMP_EQ", SCMP_CMP_EQ},
      {"SCMP_CMP_GE", SCMP_CMP_GE}, {"SCMP_CMP_GT", SCMP_CMP_GT},
      {"SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ}};
  if (!op.is_string() || !ops.count(op.get<std::string>())) {
    return Bad(field, "want one of SCMP_CMP_NE, _LT, _LE, _EQ, _GE, _GT, _MASKED_EQ");
  }
  return ops.at(op.get<std::string>());
}

struct Ctx {
  scmp_filter_ctx ctx;
  ~Ctx() { seccomp_release(ctx); }
};

}  // namespace

absl::StatusOr<std::vector<sock_filter>> CompileSeccompProfile(const json& profile) {
  if (!profile.is_object()) return Bad("", "want an object");
  auto def_ret = ErrnoRet(profile, "defaultErrnoRet", "defaultErrnoRet");
  if (!def_ret.ok()) return def_ret.status();
  if (!profile.contains("defaultAction")) return Bad("defaultAction", "missing");
  auto def = Action("defaultAction", profile["defaultAction"], *def_ret);
  if (!def.ok()) return def.status();
  Ctx c{seccomp_init(*def)};
  if (c.ctx == nullptr) return absl::InternalError("seccomp_init failed");
  // The program is only exported: libseccomp sets nothing on this process.
  seccomp_attr_set(c.ctx, SCMP_FLTATR_CTL_NNP, 0);
  if (auto it = profile.find("architectures"); it != profile.end() && !it->is_null()) {
    if (!it->is_array()) return Bad("architectures", "want an array of strings");
    for (const json& a : *it) {
      if (!a.is_string()) return Bad("architectures", "want an array of strings");
      std::string name = a.get<std::string>();
      // "SCMP_ARCH_X86_64" -> libseccomp's "x86_64"; names it does not know are skipped.
      std::string lower = name.rfind("SCMP_ARCH_", 0) == 0 ? name.substr(10) : name;
      for (char& ch : lower) ch = static_cast<char>(tolower(ch));
      uint32_t arch = seccomp_arch_resolve_name(lower.c_str());
      if (arch == 0) continue;
      int r = seccomp_arch_add(c.ctx, arch);
      if (r != 0 && r != -EEXIST) return Bad("architectures", "cannot add " + name);
    }
  }
  if (auto it = profile.find("syscalls"); it != profile.end() && !it->is_null()) {
    if (!it->is_array()) return Bad("syscalls", "want an array");
    for (size_t i = 0; i < it->size(); i++) {
      const json& s = (*it)[i];
      std::string field = "syscalls[" + std::to_string(i) + "]";
      if (!s.is_object()) return Bad(field, "want an object");
      auto ret = ErrnoRet(s, "errnoRet", field + ".errnoRet");
      if (!ret.ok()) return ret.status();
      if (!s.contains("action")) return Bad(field + ".action", "missing");
      auto action = Action(field + ".action", s["action"], *ret);
      if (!action.ok()) return action.status();
      if (*action == *def) continue;  // libseccomp refuses a rule that says the default
      std::vector<scmp_arg_cmp> args;
      std::set<unsigned> indexes;
      bool repeated = false;
      if (auto a = s.find("args"); a != s.end() && !a->is_null()) {
        if (!a->is_array()) return Bad(field + ".args", "want an array");
        for (size_t j = 0; j < a->size(); j++) {
          const json& arg = (*a)[j];
          std::string af = field + ".args[" + std::to_string(j) + "]";
          if (!arg.is_object() || !arg.contains("index") || !arg["index"].is_number_unsigned() ||
              arg["index"].get<unsigned>() > 5) {
            return Bad(af + ".index", "want a number from 0 to 5");
          }
          auto op = Op(af + ".op", arg.value("op", json()));
          if (!op.ok()) return op.status();
          unsigned index = arg["index"].get<unsigned>();
          repeated |= !indexes.insert(index).second;
          uint64_t value = arg.value("value", uint64_t{0});
          uint64_t two = arg.value("valueTwo", uint64_t{0});
          args.push_back({index, *op, value, two});
        }
      }
      const json* names = s.contains("names") ? &s["names"] : nullptr;
      if (names == nullptr || !names->is_array()) return Bad(field + ".names", "want an array");
      for (const json& n : *names) {
        if (!n.is_string()) return Bad(field + ".names", "want an array of strings");
        int nr = seccomp_syscall_resolve_name(n.get<std::string>().c_str());
        if (nr == __NR_SCMP_ERROR) continue;  // a syscall this libseccomp does not know
        // Conditions on one argument more than once: one rule each (libseccomp takes one
        // condition per argument in a rule), as runc does.
        std::vector<std::vector<scmp_arg_cmp>> rules;
        if (repeated) {
          for (const auto& a : args) rules.push_back({a});
        } else {
          rules.push_back(args);
        }
        for (const auto& rule : rules) {
          int r = seccomp_rule_add_array(c.ctx, *action, nr, static_cast<unsigned>(rule.size()),
                                         rule.data());
          if (r != 0) {
            return Bad(field, "libseccomp refused the rule for " + n.get<std::string>() + ": " +
                                  strerror(-r));
          }
        }
      }
    }
  }
  int fd = memfd_create("seccomp-bpf", MFD_CLOEXEC);
  if (fd < 0) return absl::InternalError("memfd_create for the seccomp program");
  std::vector<sock_filter> prog;
  int r = seccomp_export_bpf(c.ctx, fd);
  off_t size = lseek(fd, 0, SEEK_END);
  if (r == 0 && size > 0 && size % sizeof(sock_filter) == 0) {
    prog.resize(static_cast<size_t>(size) / sizeof(sock_filter));
    if (pread(fd, prog.data(), static_cast<size_t>(size), 0) != size) prog.clear();
  }
  close(fd);
  if (prog.empty()) return absl::InternalError("libseccomp could not export the program");
  return prog;
}

}  // namespace sentry::oci
