// spdlog's and fmt's compiled parts, built into our binaries rather than loaded from
// libspdlog.so and libfmt.so, which would bring libstdc++.so with them: every shared library
// costs the dynamic loader page faults at each start (CMakeLists.txt, SENTRY_STATIC_DEPS).
// The headers are used in their "compiled library" mode (SPDLOG_COMPILED_LIB, as Debian's
// package builds them); this file provides the definitions that mode leaves out, for the
// parts the Sentry uses: loggers, the pattern formatter, and the stdout/stderr sinks.
#include "fmt/format-inl.h"
#include "spdlog/common-inl.h"
#include "spdlog/details/backtracer-inl.h"
#include "spdlog/details/log_msg-inl.h"
#include "spdlog/details/log_msg_buffer-inl.h"
#include "spdlog/details/os-inl.h"
#include "spdlog/details/periodic_worker-inl.h"
#include "spdlog/details/registry-inl.h"
#include "spdlog/logger-inl.h"
#include "spdlog/pattern_formatter-inl.h"
#include "spdlog/sinks/ansicolor_sink-inl.h"
#include "spdlog/sinks/base_sink-inl.h"
#include "spdlog/sinks/sink-inl.h"
#include "spdlog/sinks/stdout_sinks-inl.h"
#include "spdlog/spdlog-inl.h"

// The sinks the Sentry makes (sentry/base/logging.cc, gofer/log.h).
template class spdlog::sinks::stdout_sink_base<spdlog::details::console_mutex>;
template class spdlog::sinks::stderr_sink<spdlog::details::console_mutex>;
// The registry's default logger, which spdlog makes whether it is used or not.
template class spdlog::sinks::ansicolor_sink<spdlog::details::console_mutex>;
template class spdlog::sinks::ansicolor_stdout_sink<spdlog::details::console_mutex>;

// fmt's formatting core for char, as fmt's own library instantiates it.
namespace fmt {
FMT_BEGIN_DETAIL_NAMESPACE
template FMT_API auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
template FMT_API locale_ref::locale_ref(const std::locale& loc);
template FMT_API auto locale_ref::get<std::locale>() const -> std::locale;
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API void buffer<char>::append(const char*, const char*);
template FMT_API void vformat_to(buffer<char>&, string_view,
                                 basic_format_args<FMT_BUFFER_CONTEXT(char)>, locale_ref);
FMT_END_DETAIL_NAMESPACE
}  // namespace fmt
