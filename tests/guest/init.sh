#!/bin/sh
# sentry-run's init: PID 1 is the Sentry's own init and the command runs as PID 2, as under
# `docker run --init`, bwrap or a login shell, so that signals inside behave as on a host.
#
#   init.sh SENTRY_RUN PLATFORM
#
# Checks: `kill -9 $$` kills the command (137, where a PID 1 would survive); the command's
# parent is PID 1, named sentry-init; orphans are reaped (no zombie left in ps); signals to
# PID 1 from inside are dropped, SIGKILL included; the sandbox ends when the command exits
# even with a background job left (and that job is killed); SIGTERM, SIGINT and SIGHUP sent
# to sentry-run reach the command; no guest process outlives sentry-run on the host.
# Exits 0 iff everything held.
set -u
if [ $# -ne 2 ]; then
  echo "usage: $0 SENTRY_RUN PLATFORM" >&2
  exit 2
fi
sentry_run=$1
platform=$2
fail=0
sr() { "$sentry_run" --platform="$platform" --tty=never "$@" </dev/null; }
expect() {  # expect WHAT EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then
    echo "ok: $1"
  else
    echo "FAIL: $1: expected [$2], got [$3]"
    fail=1
  fi
}

out=$(sr -- sh -c 'kill -9 $$; echo survived')
expect "kill -9 \$\$ kills the command" "137 " "$? $out"

out=$(sr -- sh -c 'echo $$ $PPID $(cat /proc/1/comm) $(cat /proc/$PPID/stat | cut -d" " -f4)')
expect "the command is PID 2, child of the Sentry's init (ppid 0)" "2 1 sentry-init 0" "$out"

# A background job whose parent exits is an orphan: PID 1 must reap it once it ends.
out=$(sr -- sh -c '(sleep 0.2 &) ; sleep 0.8; ps -eo stat= | grep -c "^Z"')
expect "orphans are reaped (zombies left)" "0" "$out"

out=$(sr -- sh -c 'kill -TERM 1; kill -KILL 1; kill -STOP 1; sleep 0.2; echo alive; \
  cat /proc/1/stat | cut -d" " -f3')
expect "signals to PID 1 from inside are dropped" "alive S" "$(echo $out)"

start=$(date +%s)
out=$(sr -- sh -c 'sleep 30 & echo started; exit 4')
status=$?
took=$(( $(date +%s) - start ))
expect "the command's exit ends the sandbox, background job killed" "4 started" "$status $out"
[ "$took" -lt 10 ] || { echo "FAIL: sentry-run took ${took}s after the command exited"; fail=1; }

for sig in TERM INT HUP; do
  tmp=$(mktemp)
  # Started directly, not through sr: a function run with & is a subshell of its own, and the
  # signal would go to that shell.
  "$sentry_run" --platform="$platform" --tty=never -- \
    sh -c "trap 'echo got $sig; exit 7' $sig; echo ready; while :; do sleep 0.1; done" \
    </dev/null >"$tmp" 2>&1 &
  pid=$!
  i=0
  while ! grep -q ready "$tmp" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
  kill -s "$sig" "$pid"
  wait "$pid"
  status=$?
  expect "SIG$sig to sentry-run reaches the command" "7 ready got $sig" "$status $(cat "$tmp" | tr '\n' ' ' | sed 's/ $//')"
  rm -f "$tmp"
done

# Uncaught: the command dies of the signal, and sentry-run reports it shell-style.
"$sentry_run" --platform="$platform" --tty=never -- sleep 30 </dev/null &
pid=$!
sleep 1
children=$(pgrep -P "$pid" | tr '\n' ' ')
kill -TERM "$pid"
wait "$pid"
expect "an uncaught SIGTERM ends the command (143)" "143" "$?"
sleep 0.5
left=0
for c in $children; do
  # A zombie is dead already (its new parent, the host's init, reaps it).
  st=$(ps -o stat= -p "$c" 2>/dev/null)
  case "$st" in "" | Z*) ;; *) left=$((left + 1)) ;; esac
done
expect "no host process of the sandbox left running (of: $children)" "0" "$left"

exit $fail
