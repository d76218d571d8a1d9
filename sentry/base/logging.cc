#include "sentry/base/logging.h"

#include <atomic>

#include "spdlog/sinks/stdout_sinks.h"

namespace sentry::log {
namespace {

std::atomic<bool> g_strace{false};

std::shared_ptr<spdlog::logger> Make(const char* name) {
  // Logs go to stderr, which is also the guest's stderr: keep the format short.
  auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  auto logger = std::make_shared<spdlog::logger>(name, sink);
  logger->set_pattern("%v");
  logger->set_level(spdlog::level::warn);
  return logger;
}

}  // namespace

spdlog::logger& Sentry() {
  static auto* l = new std::shared_ptr<spdlog::logger>(Make("sentry"));
  return **l;
}
spdlog::logger& Strace() {
  static auto* l = new std::shared_ptr<spdlog::logger>(Make("strace"));
  return **l;
}
spdlog::logger& Shim() {
  static auto* l = new std::shared_ptr<spdlog::logger>(Make("shim"));
  return **l;
}

void Init(spdlog::level::level_enum level, bool strace) {
  Sentry().set_level(level);
  Shim().set_level(level);
  Sentry().set_pattern("sentry: %v");
  Shim().set_pattern("sentry-run: %v");
  Strace().set_level(strace ? spdlog::level::info : spdlog::level::off);
  g_strace.store(strace, std::memory_order_relaxed);
}

bool StraceEnabled() { return g_strace.load(std::memory_order_relaxed); }

}  // namespace sentry::log
