#!/bin/sh
# The in-memory layer is bounded: writes and fallocate beyond its size get ENOSPC, the space
# comes back when files go, and the Sentry's memory stays near the limit whatever the guest
# asks for. The guest writes to the root itself, so the runs use --fs=scratch (the root's
# in-memory layer); the scratch directories of the default read-only root draw on the same
# budget (tests/policy/policy.sh checks limits.tmpSize there).
#
#   tmpfs_limit.sh SENTRY_RUN PLATFORM
#
# 1. Default limit (half the RAM): `fallocate -l 100G` on the root fails with ENOSPC and
#    sentry-run's peak RSS (read on the host from /proc/PID/status while the guest waits)
#    stays under 200 MiB.
# 2. --tmpfs-size 64m: a 100 MiB write to / stops at 64 MiB with ENOSPC; after rm the same
#    write succeeds up to the limit again; a tmpfs mounted with size=1m holds 1 MiB; df
#    reports the limit. Peak RSS stays under 64 MiB plus 200 MiB.
set -u
if [ $# -ne 2 ]; then
  echo "usage: $0 SENTRY_RUN PLATFORM" >&2
  exit 2
fi
sentry_run=$1
platform=$2
out=$(mktemp) || exit 2
trap 'rm -f "$out"' EXIT
fail=0

# Runs the guest script $2 with sentry-run flags $1 in the background, waits for the guest
# to print "waiting", reads sentry-run's VmHWM (KiB) into $hwm, then lets the guest finish.
run_and_measure() {
  fifo_dir=$(mktemp -d) || exit 2
  mkfifo "$fifo_dir/go"
  # The guest cannot open a host fifo: it polls for a file the host creates in a bind.
  # shellcheck disable=SC2086
  "$sentry_run" --platform="$platform" --fs=scratch $1 --bind "$fifo_dir:/sync" -- /bin/sh -c "$2
    echo waiting
    i=0; while [ ! -e /sync/done ] && [ \$i -lt 600 ]; do sleep 0.05; i=\$((i+1)); done" \
    >"$out" 2>&1 &
  pid=$!
  i=0
  while ! grep -q '^waiting' "$out" && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
  hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null)
  : >"$fifo_dir/done"
  wait "$pid"
  status=$?
  rm -rf "$fifo_dir"
  [ -n "$hwm" ] || hwm=999999999
  return $status
}

check() {  # check NAME CONDITION-RESULT
  if [ "$2" -eq 0 ]; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi
}

# 1. The default limit.
run_and_measure "" 'fallocate -l 100G /big; echo "fallocate=$?"; ls -s /big'
status=$?
grep -q 'No space left on device' "$out"; check "fallocate 100G: ENOSPC" $?
grep -q '^fallocate=1$' "$out"; check "fallocate 100G: exit 1" $?
grep -q '^0 /big$' "$out"; check "fallocate 100G: nothing allocated" $?
[ "$hwm" -lt 204800 ]; check "default limit: sentry-run peak RSS ${hwm} KiB < 200 MiB" $?
[ $status -eq 0 ]; check "default limit: exit status $status" $?
cat "$out"

# 2. An explicit limit.
run_and_measure "--tmpfs-size 64m" '
  df -k / | awk "NR==2 {print \"avail=\" \$4}"
  dd if=/dev/zero of=/a bs=1M count=100 2>/dev/null; echo "dd1=$?"; ls -s /a
  rm /a
  dd if=/dev/zero of=/b bs=1M count=32 2>/dev/null; echo "dd2=$?"; ls -s /b
  mkdir /t && mount -t tmpfs -o size=1m none /t
  dd if=/dev/zero of=/t/c bs=4k count=1000 2>/dev/null; echo "dd3=$?"; ls -s /t/c'
status=$?
grep -q '^avail=65536$' "$out"; check "df reports 64 MiB available" $?
grep -q '^dd1=1$' "$out"; check "100 MiB into 64 MiB: dd fails" $?
grep -q '^65536 /a$' "$out"; check "100 MiB into 64 MiB: 64 MiB written" $?
grep -q '^dd2=0$' "$out"; check "after rm the space is back" $?
grep -q '^dd3=1$' "$out"; check "size=1m tmpfs: dd fails" $?
grep -q '^1024 /t/c$' "$out"; check "size=1m tmpfs: 1 MiB written" $?
[ "$hwm" -lt $((65536 + 204800)) ]; check "64m limit: sentry-run peak RSS ${hwm} KiB" $?
[ $status -eq 0 ]; check "64m limit: exit status $status" $?
cat "$out"

# 3. A bad size is one clear line and exit 2.
"$sentry_run" --tmpfs-size 12q -- true 2>"$out"
status=$?
[ $status -eq 2 ] && [ "$(wc -l <"$out")" -eq 1 ]; check "--tmpfs-size 12q: exit 2, one line" $?
exit $fail
