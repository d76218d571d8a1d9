// Where start-up time goes: with SENTRY_STARTUP_TRACE=1 in the environment, sentry-run and
// `sentry do` print each start-up phase's offset from the first mark to stderr at exit
// (docs/performance.md uses it). Off by default, when a mark costs one load of a flag.
//
// The marks live in this process's memory: a child forked or cloned without exec inherits
// those made before, so the Sentry's report starts where its parent's did.
#pragma once

namespace sentry::startup {

// Records that `phase` (a string literal) ends now. Thread-safe; marks past the 48th are
// dropped.
void Mark(const char* phase);

// Prints the marks made in this process (and inherited) as "who: start-up ...", one line
// each, if tracing is on.
void Report(const char* who);

}  // namespace sentry::startup
