#!/bin/sh
# A guest holding more host files open than sentry-run's own fd limit: EMFILE exactly where
# Linux gives it, every file readable afterwards, never EIO, never "the gofer died".
#
#   many_files.sh SENTRY_RUN MANY_FILES_BIN PLATFORM
#
# Creates 5,000 files in a temporary host directory, then runs `MANY_FILES_BIN DIR 5000`
# under `ulimit -n 1024`, natively and under sentry-run (DIR bound read-write at the same
# path), and compares the outputs: the counts, the highest fd and the errno of the first
# refused open must agree.
set -u
if [ $# -ne 3 ]; then
  echo "usage: $0 SENTRY_RUN MANY_FILES_BIN PLATFORM" >&2
  exit 2
fi
sentry_run=$1
bin=$2
platform=$3
base=$(mktemp -d /var/tmp/sentry-many-files-XXXXXX) || exit 2
trap 'rm -rf "$base"' EXIT
dir=$base/files
mkdir "$dir" || exit 2
i=0
# One process writes them all (a shell loop of 5,000 redirections is slow enough).
awk -v d="$dir" 'BEGIN { for (i = 0; i < 5000; i++) { f = d "/f" i; print "file " i > f; close(f) } }' ||
  exit 2

sh -c 'ulimit -n 1024 && exec "$@"' sh "$bin" "$dir" 5000 >"$base/native" 2>&1
native_status=$?
sh -c 'ulimit -n 1024 && exec "$@"' sh "$sentry_run" --platform="$platform" --bind "$dir:$dir" \
  -- "$bin" "$dir" 5000 >"$base/sentry" 2>"$base/err"
sentry_status=$?
fail=0
if [ "$native_status" -ne 0 ] || ! grep -q "then EMFILE" "$base/native"; then
  echo "FAIL: the native run did not behave (status $native_status):"
  cat "$base/native"
  fail=1
fi
if ! cmp -s "$base/native" "$base/sentry"; then
  echo "FAIL: output differs (native <, sentry-run --platform=$platform >):"
  diff "$base/native" "$base/sentry"
  fail=1
fi
if [ "$sentry_status" -ne "$native_status" ]; then
  echo "FAIL: exit status $sentry_status under sentry-run, $native_status natively"
  fail=1
fi
if [ -s "$base/err" ]; then
  echo "FAIL: sentry-run said on stderr:"
  cat "$base/err"
  fail=1
fi
[ "$fail" -eq 0 ] && echo "many_files.sh: PASS: $(head -n1 "$base/native")"
exit "$fail"
