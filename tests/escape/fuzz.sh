#!/bin/sh
# One bounded run of the syscall fuzzer with churn (threads, signals during syscalls, fds
# passed between processes, mmap churn: tests/guest/syscall_fuzz.c -c) under sentry-run.
#
#   fuzz.sh SENTRY_RUN SYSCALL_FUZZ PLATFORM SEED SECONDS
#
# Passes iff the fuzzer ran SECONDS, its child stayed sane, and sentry-run exited 0 with the
# guest's status: a Sentry crash (sentry-run dies or reports an error), a hang (nothing ends
# within SECONDS + 60 s: killed) or a churn check that failed is a FAIL line naming the seed
# and the platform, with the command that replays it (tools/fuzz.sh runs many seeds).
set -u
if [ $# -ne 5 ]; then
  echo "usage: $0 SENTRY_RUN SYSCALL_FUZZ PLATFORM SEED SECONDS" >&2
  exit 2
fi
sentry_run=$1
fuzz=$2
platform=$3
seed=$4
secs=$5
out=$(mktemp) || exit 2
trap 'rm -f "$out"' EXIT
cmd="$sentry_run --platform=$platform --tty=never -- $fuzz -c -s $seed -d $secs -t $((secs + 30))"
# shellcheck disable=SC2086
timeout -s KILL $((secs + 60)) $cmd </dev/null >"$out" 2>&1
status=$?
if [ "$status" -eq 0 ] && grep -qx sane "$out" &&
  [ "$(tail -n1 "$out")" = "syscall_fuzz: child exited with status 0" ]; then
  echo "fuzz.sh: PASS (seed $seed, $platform, $secs s): $(grep '^churn:\|^done' "$out" | tr '\n' ' ')"
  exit 0
fi
case $status in
  137) why="a hang: nothing ended within $((secs + 60)) s" ;;
  0) why="sentry-run exited 0 but the fuzzer's report is incomplete" ;;
  *) why="sentry-run exited with status $status" ;;
esac
echo "FAIL: seed $seed on $platform: $why; replay with:"
echo "  $cmd"
echo "--- output (last 30 lines):"
tail -n 30 "$out"
exit 1
