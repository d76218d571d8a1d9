#!/bin/sh
# Direct file access changes nothing a guest can see: each conformance program given runs on a
# read-write host bind at /tmp (so that its files are made, renamed, linked, chmod'ed on the
# host through the gofer's handlers) once with --file-access=gofer and once with
# --file-access=direct, and the two runs must end with the same status and report the same
# failed checks (the FAIL lines of conformance/common.h).
#
#   file_access_modes.sh SENTRY_RUN PLATFORM PROGRAM...
#
# The bind is a fresh host directory per run. (Where a program fails on a bind in both modes,
# the gap is the gofer file system's, not this test's: see the report it prints.)
set -u
sentry_run=$1
platform=$2
shift 2
fail=0
run() {  # run MODE PROGRAM: prints the exit status, then the FAIL lines
  dir=$(mktemp -d) || exit 2
  chmod 1777 "$dir"
  timeout 60 "$sentry_run" --platform="$platform" --file-access="$1" --fs=scratch --tty=never \
    --bind "$dir:/tmp" -- "$2" </dev/null >"$dir.out" 2>&1
  echo "status $?"
  grep '^FAIL' "$dir.out"
  rm -rf "$dir" "$dir.out"
}
for prog in "$@"; do
  gofer=$(run gofer "$prog")
  direct=$(run direct "$prog")
  name=$(basename "$prog")
  if [ "$gofer" != "$direct" ]; then
    echo "FAIL $name: --file-access=gofer and direct differ"
    echo "--- gofer:"
    echo "$gofer"
    echo "--- direct:"
    echo "$direct"
    fail=1
  else
    echo "same in both modes: $name ($(echo "$gofer" | head -n 1), $(($(echo "$gofer" | wc -l) - 1)) FAIL lines)"
  fi
done
[ "$fail" -eq 0 ] && echo "file_access_modes.sh: PASS"
exit "$fail"
