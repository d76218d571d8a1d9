#!/bin/sh
# Long fuzz runs: the syscall fuzzer with churn (tests/guest/syscall_fuzz.c -c) under
# sentry-run, one seed after another, alternating the platforms, for DURATION in all.
#
#   tools/fuzz.sh SEED DURATION [PLATFORM...]
#
# SEED is the first seed (the next rounds take SEED+1, SEED+2, ...); DURATION is seconds, or
# with an m or h suffix; PLATFORM defaults to "seccomp ptrace". Each round runs 60 s (less at
# the end). BUILD (default: build) is the build directory. Stops at the first failure (a Sentry
# crash or hang, or a failed churn check) and prints its seed, its platform and the command
# that replays it; exits 0 iff every round passed.
set -u
if [ $# -lt 2 ]; then
  echo "usage: $0 SEED DURATION [PLATFORM...]" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$here/build}
seed=$1
first=$1
case $2 in
  *h) total=$((${2%h} * 3600)) ;;
  *m) total=$((${2%m} * 60)) ;;
  *) total=$2 ;;
esac
shift 2
platforms=${*:-seccomp ptrace}
for f in "$build/bin/sentry-run" "$build/tests/guest/syscall_fuzz"; do
  [ -x "$f" ] || { echo "tools/fuzz.sh: $f is missing: build first" >&2; exit 2; }
done
end=$(($(date +%s) + total))
rounds=0
while [ "$(date +%s)" -lt "$end" ]; do
  for platform in $platforms; do
    left=$((end - $(date +%s)))
    [ "$left" -gt 0 ] || break
    secs=$((left < 60 ? left : 60))
    if ! "$here/tests/escape/fuzz.sh" "$build/bin/sentry-run" "$build/tests/guest/syscall_fuzz" \
      "$platform" "$seed" "$secs"; then
      echo "tools/fuzz.sh: failed after $rounds passing rounds"
      exit 1
    fi
    rounds=$((rounds + 1))
    seed=$((seed + 1))
  done
done
echo "tools/fuzz.sh: $rounds rounds passed (seeds $first to $((seed - 1)))"
