#!/bin/sh
# Runs a static guest program natively and under sentry-run and passes iff both print the
# same output and exit with the same status.
#
#   compare_native.sh SENTRY_RUN PLATFORM PROGRAM [ARGS...]
set -u
if [ $# -lt 3 ]; then
  echo "usage: $0 SENTRY_RUN PLATFORM PROGRAM [ARGS...]" >&2
  exit 2
fi
sentry_run=$1
platform=$2
shift 2
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
"$@" >"$tmp/native" 2>&1
native_status=$?
"$sentry_run" --platform="$platform" -- "$@" >"$tmp/sentry" 2>&1
sentry_status=$?
fail=0
if ! cmp -s "$tmp/native" "$tmp/sentry"; then
  echo "FAIL: output differs (native <, sentry-run --platform=$platform >):"
  diff "$tmp/native" "$tmp/sentry"
  fail=1
fi
if [ "$native_status" -ne "$sentry_status" ]; then
  echo "FAIL: exit status $sentry_status under sentry-run, $native_status natively"
  fail=1
fi
[ "$fail" -eq 0 ] && echo "PASS: $* (status $native_status, $(wc -l <"$tmp/native") lines alike)"
exit "$fail"
