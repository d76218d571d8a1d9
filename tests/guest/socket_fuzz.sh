#!/bin/sh
# Runs socket_fuzz natively or under sentry-run and passes iff it made all its calls and
# exited 0; under sentry-run also iff sentry-run exited with the guest's status (0), so that
# a Sentry that died or reported an error after the guest's last line fails too.
#
#   socket_fuzz.sh SENTRY_RUN|native PLATFORM PROGRAM SEED COUNT
set -u
if [ $# -ne 5 ]; then
  echo "usage: $0 SENTRY_RUN|native PLATFORM PROGRAM SEED COUNT" >&2
  exit 2
fi
sentry_run=$1
platform=$2
program=$3
seed=$4
count=$5
out=$(mktemp) || exit 2
trap 'rm -f "$out"' EXIT
if [ "$sentry_run" = native ]; then
  "$program" -s "$seed" -n "$count" >"$out" 2>&1
else
  "$sentry_run" --platform="$platform" -- "$program" -s "$seed" -n "$count" >"$out" 2>&1
fi
status=$?
cat "$out"
if ! grep -q "^socket_fuzz: done [0-9]* calls$" "$out"; then
  echo "FAIL: socket_fuzz did not finish its $count calls"
  exit 1
fi
if [ "$status" -ne 0 ]; then
  echo "FAIL: exit status $status after the guest finished (expected 0)"
  exit 1
fi
echo "PASS: $count calls, seed $seed"
