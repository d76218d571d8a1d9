#!/bin/sh
# Killing a guest process's injector stub on the host (seccomp platform) takes its guest stub
# with it at once: nothing is left orphaned or spinning, the guest process dies as of
# SIGKILL (its parent reaps it with that status) and the sandbox carries on.
#
#   kill_injector.sh SENTRY_RUN KILL_INJECTOR_BIN
#
# The guest forks a child that pauses. The host finds the child's injector (a sentry-stub
# below sentry-run's stub factory whose parent is the first injector; injectors carry only
# the stubs' own filter, guest stubs also the notification filter), kills it, then checks
# that the child's guest stub is gone within 3 s while the sandbox still runs, that the
# Sentry and the stubs use almost no CPU meanwhile, and that the guest reports the child
# killed by signal 9 and exits 0.
set -u
if [ $# -ne 2 ]; then
  echo "usage: $0 SENTRY_RUN KILL_INJECTOR_BIN" >&2
  exit 2
fi
sentry_run=$1
bin=$2
tmp=$(mktemp -d) || exit 2
run=
cleanup() {
  [ -n "$run" ] && kill -KILL "$run" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
"$sentry_run" --platform=seccomp -- "$bin" >"$tmp/out" 2>"$tmp/err" &
run=$!
i=0
while ! grep -q "child ready" "$tmp/out" && [ $i -lt 100 ]; do
  sleep 0.1
  i=$((i + 1))
done
comm() { cat "/proc/$1/comm" 2>/dev/null; }
ppid() { awk '/^PPid:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
# The Sentry: sentry-run's child of the same name (it runs in its own namespaces), or
# sentry-run itself (--unsafe-no-confinement).
sentry=$(pgrep -P "$run" -x sentry-run | head -n1)
[ -n "$sentry" ] || sentry=$run
filters() { awk '/^Seccomp_filters:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
injector=
guest=
for p in $(pgrep -x sentry-stub); do
  parent=$(ppid "$p")
  [ -n "$parent" ] || continue
  # the Sentry -> stub factory -> init's injector -> the child's injector.
  factory=$(ppid "$parent")
  [ -n "$factory" ] && [ "$(ppid "$factory")" = "$sentry" ] || continue
  [ "$(comm "$parent")" = sentry-stub ] && [ "$(comm "$factory")" = sentry-stub ] || continue
  [ "$(filters "$p")" = 1 ] && [ "$(filters "$parent")" = 1 ] || continue
  injector=$p
  guest=$(pgrep -P "$p" -x sentry-stub | head -n1)
done
if [ -z "$injector" ] || [ -z "$guest" ]; then
  echo "FAIL: no injector with a guest stub below sentry-run $run"
  ps -eo pid,ppid,stat,comm | grep -E "sentry" >&2
  exit 1
fi
cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
kill -KILL "$injector"
fail=0
i=0
while [ -d "/proc/$guest" ] && [ $i -lt 30 ]; do
  sleep 0.1
  i=$((i + 1))
done
if [ -d "/proc/$guest" ]; then
  echo "FAIL: guest stub $guest still there 3 s after its injector $injector was killed:"
  grep -E "^(State|PPid)" "/proc/$guest/status"
  fail=1
fi
before=$(( $(cpu "$sentry") + $( [ -d "/proc/$guest" ] && cpu "$guest" || echo 0) ))
sleep 1
after=$(( $(cpu "$sentry") + $( [ -d "/proc/$guest" ] && cpu "$guest" || echo 0) ))
ticks=$(getconf CLK_TCK)
if [ $((after - before)) -gt $((ticks / 5)) ]; then
  echo "FAIL: $((after - before)) of $ticks CPU ticks in 1 s after the kill (sentry-run and stub)"
  fail=1
fi
# The guest sleeps 4 s after reaping its child: give it 15 s.
i=0
while kill -0 "$run" 2>/dev/null && [ $i -lt 150 ]; do
  sleep 0.1
  i=$((i + 1))
done
if kill -0 "$run" 2>/dev/null; then
  echo "FAIL: sentry-run still running 15 s after the kill; the guest said:"
  cat "$tmp/out"
  exit 1
fi
wait "$run"
status=$?
run=
if [ "$status" -ne 0 ]; then
  echo "FAIL: sentry-run exited $status"
  fail=1
fi
if ! grep -q "child reaped, killed by signal 9" "$tmp/out" || ! grep -q "parent done" "$tmp/out"; then
  echo "FAIL: the guest said:"
  cat "$tmp/out" "$tmp/err"
  fail=1
fi
[ "$fail" -eq 0 ] && echo "kill_injector.sh: PASS: $(sed -n 2p "$tmp/out")"
exit "$fail"
