#!/bin/bash
# kill -9 from outside, of each host process of a running sandbox: the guest dies as Linux
# would have it, and nothing is left behind.
#
#   kill9.sh SENTRY_RUN PLATFORM
#
# Each case starts sentry-run in its own process group (the guest: a shell that starts
# `sleep 30`, says so through a bind and waits for it, then prints how it ended), waits until
# the sleep runs, then SIGKILLs one host process:
#  - the Sentry (sentry-run itself): within 3 s no process of the sandbox is left (the gofer
#    and every stub die with it);
#  - the gofer, while the guest lists directories and reads files in a loop: sentry-run exits
#    non-zero within 10 s and says the gofer died;
#  - the stub running the guest's `sleep` (the newest leaf stub: on seccomp the one that also
#    carries the notification filter): the shell sees `sleep` killed by signal 9 and goes on,
#    exactly as natively, so the output is "killed 137" and sentry-run exits 0 within 10 s
#    (long before the sleep would have ended: the task learns of its stub's death while it
#    is blocked in the Sentry).
# Afterwards no process of this
# build, no mount naming it and no stale sentry-run cgroup is left. Exits 0 iff all held.
set -u
if [ $# -ne 2 ]; then
  echo "usage: $0 SENTRY_RUN PLATFORM" >&2
  exit 2
fi
sentry_run=$(realpath "$1")
platform=$2
bindir=$(dirname "$sentry_run")
base=$(mktemp -d /var/tmp/sentry-kill9-XXXXXX) || exit 2
run_pid=
cleanup() {
  [ -z "$run_pid" ] || kill -9 -- "-$run_pid" 2>/dev/null
  rm -rf "$base"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
source "$(dirname "$0")/../lib/checks.sh"
ours() {  # ours [PATTERN]: pids of this build's processes (whose exe is PATTERN)
  local exe
  for exe in /proc/[0-9]*/exe; do
    case "$(readlink "$exe" 2>/dev/null)" in "$bindir"/${1:-*}) echo "${exe//[^0-9]/}" ;; esac
  done
}
leftovers() {
  local stale=0 d
  for d in $(find /sys/fs/cgroup -mindepth 1 -maxdepth 3 -type d -name 'sentry-run-*' 2>/dev/null); do
    [ -d "/proc/${d##*-}" ] || stale=$((stale + 1))
  done
  echo "processes $(ours | wc -l) stale-cgroups $stale mounts $(grep -c "$bindir" /proc/self/mountinfo)"
}
before=$(leftovers)
# Descendants of $1 (breadth first), from the host's ppid links.
descendants() {
  local all queue=$1 next p
  all=$(for s in /proc/[0-9]*/stat; do awk '{print $1, $4}' "$s" 2>/dev/null; done)
  while [ -n "$queue" ]; do
    next=
    for p in $queue; do
      for c in $(awk -v p="$p" '$2 == p {print $1}' <<<"$all"); do
        echo "$c"
        next="$next $c"
      done
    done
    queue=$next
  done
}
# The stub running the guest's sleep: a stub below sentry-run with no stub child, the newest,
# preferring the most seccomp filters (on seccomp, injectors have one, guest stubs two).
guest_stub() {
  local best= best_filters=-1 p f
  local stubs
  stubs=$(descendants "$run_pid" | while read -r p; do
    [ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$bindir/sentry-stub" ] && echo "$p"
  done)
  for p in $stubs; do
    if awk -v p="$p" '$4 == p {found = 1} END {exit !found}' \
      <(for c in $stubs; do cat "/proc/$c/stat" 2>/dev/null; done); then
      continue  # it has a stub child
    fi
    f=$(awk '/^Seccomp_filters/ {print $2}' "/proc/$p/status" 2>/dev/null)
    if [ "${f:-0}" -ge "$best_filters" ]; then
      best=$p
      best_filters=${f:-0}
    fi
  done
  echo "$best"
}
# start COMMAND: sentry-run -- /bin/sh -c COMMAND in its own process group, with $base bound
# at /b; returns once COMMAND made /b/started (or after 20 s), plus a second for an exec.
start() {
  rm -f "$base/started"
  setsid "$sentry_run" --platform="$platform" --tty=never --bind "$base:/b" -- /bin/sh -c "$1" \
    </dev/null >"$base/out" 2>&1 &
  run_pid=$!
  for i in $(seq 200); do
    [ -e "$base/started" ] && break
    sleep 0.1
  done
  sleep 1
}
sleeper='/bin/sleep 30 & : >/b/started; wait $!; echo "killed $?"; echo survived-only-if-killed-above'
# wait_gone PID SECONDS: 0 iff PID ended within SECONDS.
# Sets $took (ms).
wait_gone() {
  local t0 i
  t0=$(date +%s%N)
  for i in $(seq $(($2 * 10))); do
    kill -0 "$1" 2>/dev/null || break
    sleep 0.1
  done
  took=$((($(date +%s%N) - t0) / 1000000))
  ! kill -0 "$1" 2>/dev/null
}

# --- The Sentry.
start "$sleeper"
members=$(descendants "$run_pid")
kill -9 "$run_pid"
wait "$run_pid" 2>/dev/null
alive=
for i in $(seq 30); do
  alive=$(for p in $members; do kill -0 "$p" 2>/dev/null && echo "$p"; done)
  [ -z "$alive" ] && break
  sleep 0.1
done
check "kill -9 of the Sentry: its gofer and stubs are gone within 3 s (left: ${alive:-none})" \
  test -z "$alive"
check "... the guest never ran on" eval '! grep -q "killed\|survived" "$base/out"'
run_pid=

# --- The gofer. In the direct file mode the Sentry needs it only for some operations, so the
# guest keeps using files until one fails (as tests/guest/gofer_death.sh does).
start ': >/b/started; while :; do ls /usr/share >/dev/null && cat /etc/hostname >/dev/null || exit 3; sleep 0.1; done'
gofer=$(for p in $(descendants "$run_pid"); do
  [ "$(cat "/proc/$p/comm" 2>/dev/null)" = sentry-gofer ] && echo "$p"
done | head -n1)
check "the gofer is found (${gofer:-none})" test -n "$gofer"
[ -z "$gofer" ] || kill -9 "$gofer"
wait_gone "$run_pid" 10
check "kill -9 of the gofer: sentry-run ends within 10 s ($took ms)" test $? -eq 0
wait "$run_pid" 2>/dev/null
status=$?
check "... with a non-zero status ($status)" test "$status" -ne 0
check "... saying the gofer died ($(head -c 300 "$base/out"))" grep -qi "gofer" "$base/out"
run_pid=

# --- The guest's stub.
start "$sleeper"
stub=$(guest_stub)
check "the guest's stub is found (${stub:-none})" test -n "$stub"
[ -z "$stub" ] || kill -9 "$stub"
wait_gone "$run_pid" 20
check "kill -9 of the guest's stub: the sandbox goes on and ends within 10 s ($took ms)" \
  test $? -eq 0 -a "$took" -lt 10000
wait "$run_pid" 2>/dev/null
status=$?
check "... the shell saw its child die of SIGKILL, as natively ($(tr '\n' ' ' <"$base/out"))" \
  grep -qx "killed 137" "$base/out"
check "... and sentry-run exits with the guest's status 0 ($status)" test "$status" -eq 0
run_pid=

sleep 0.5
after=$(leftovers)
check "nothing is left behind (before: $before; after: $after)" test "$before" = "$after"
[ "$fail" -eq 0 ] && echo "kill9.sh ($platform): PASS"
exit "$fail"
