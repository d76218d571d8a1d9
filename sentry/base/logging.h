// One spdlog logger per subsystem. Trace-level logging costs a branch when off.
#pragma once

#include <memory>

#include "spdlog/spdlog.h"

namespace sentry::log {

spdlog::logger& Sentry();  // kernel and platform
spdlog::logger& Strace();  // one line per guest syscall when --strace is on
spdlog::logger& Shim();    // front ends

// Sets the level of every logger; `strace` switches the strace logger on or off.
void Init(spdlog::level::level_enum level, bool strace);
bool StraceEnabled();

}  // namespace sentry::log
