#!/usr/bin/env bash
# The unimplemented-syscall census: runs the workload scripts of this directory (python3,
# gcc and make, git, tar, find/grep, coreutils, timeout, sockets) and a node one-liner under
# `sentry-run --strace`, counts the syscalls they make, and fails if any returned ENOSYS,
# naming the syscall and the program that made it.
#   census.sh SENTRY_RUN WORKLOAD_DIR [PLATFORM]
set -u
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  echo "usage: $0 SENTRY_RUN WORKLOAD_DIR [PLATFORM]" >&2
  exit 2
fi
sentry_run=$(realpath "$1") || exit 2
dir=$(realpath "$2") || exit 2
platform=${3:-seccomp}
work=$(mktemp -d /tmp/census.XXXXXX) || exit 2
trap 'rm -rf "$work"' EXIT

scripts=()
for name in bash_basic python python_mp gcc_make git tar find_grep coreutils timeout sysinfo \
            everyday \
            network; do
  scripts+=("$dir/$name.sh")
done

run() {  # run LABEL CMD...: the guest's output is dropped, the trace kept
  local label=$1
  shift
  cd "$work" || exit 2
  timeout -k 5 240 env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 \
    "$sentry_run" --platform="$platform" --strace -- "$@" </dev/null >/dev/null \
    2>"$work/$label.trace"
  echo "$label: exit $?, $(grep -c '^\[' "$work/$label.trace") syscalls traced"
}

for s in "${scripts[@]}"; do
  run "$(basename "$s" .sh)" /bin/bash "$s"
done
if command -v node >/dev/null; then
  run node node -e 'const fs = require("fs"); fs.readdirSync("/");
    require("child_process").execSync("true"); setTimeout(() => {}, 10)'
fi

# "[pid:tid comm] name(args) = -1 ENOSYS (..)"
cat "$work"/*.trace | sed -n 's/^\[[0-9]*:[0-9]* \([^]]*\)\] \([a-z_0-9]*\)(.*= -1 ENOSYS .*/\2 (by \1)/p' \
  | sort | uniq -c | sort -rn >"$work/enosys"
echo "--- syscalls made, most frequent first"
cat "$work"/*.trace | sed -n 's/^\[[^]]*\] \([a-z_0-9]*\)(.*/\1/p' | sort | uniq -c | sort -rn \
  | awk '{printf "%s %s, ", $2, $1} END {print ""}'
if [ -s "$work/enosys" ]; then
  echo "--- FAIL: syscalls that returned ENOSYS"
  cat "$work/enosys"
  exit 1
fi
echo "--- no syscall returned ENOSYS"
