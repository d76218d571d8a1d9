// The gofer's logger. The gofer shares the Sentry's stderr, so every line says "gofer:".
#pragma once

#include <memory>

#include "spdlog/sinks/stdout_sinks.h"
#include "spdlog/spdlog.h"

namespace sentry::gofer {

inline spdlog::logger& Log() {
  static auto* logger = [] {
    auto l = std::make_shared<spdlog::logger>("gofer",
                                              std::make_shared<spdlog::sinks::stderr_sink_mt>());
    l->set_pattern("gofer: %v");
    l->set_level(spdlog::level::warn);
    return new std::shared_ptr<spdlog::logger>(std::move(l));
  }();
  return **logger;
}

}  // namespace sentry::gofer
