#!/bin/sh
# A guest fork bomb and thread bomb while sentry-run sits in a host pids cgroup of 60: the
# guest sees EAGAIN, as natively, the Sentry survives, and every child is reaped.
#
#   pids_exhaust.sh SENTRY_RUN EXHAUST_BIN PLATFORM
#
# Makes a cgroup under /sys/fs/cgroup/pids (cgroup v1) or /sys/fs/cgroup (v2) with
# pids.max=60 and runs each command in it: first `EXHAUST_BIN fork` and `EXHAUST_BIN thread`
# natively (the reference output), then each under sentry-run twice: with the default guest
# task limit (derived from the cgroup: the Sentry's own EAGAIN) and with --pids=100000 (the
# host refuses first: the Sentry must turn that into EAGAIN, not crash). Exits 77 (skipped)
# if the cgroup cannot be made; removes it afterwards.
set -u
if [ $# -ne 3 ]; then
  echo "usage: $0 SENTRY_RUN EXHAUST_BIN PLATFORM" >&2
  exit 2
fi
sentry_run=$1
bin=$2
platform=$3

cg=
for parent in /sys/fs/cgroup/pids /sys/fs/cgroup; do
  [ -f "$parent/cgroup.procs" ] || continue
  if [ "$parent" = /sys/fs/cgroup ] && ! grep -qw pids "$parent/cgroup.subtree_control" 2>/dev/null; then
    continue
  fi
  if mkdir "$parent/sentry-pids-test-$$" 2>/dev/null; then
    cg=$parent/sentry-pids-test-$$
    break
  fi
done
if [ -z "$cg" ] || ! echo 60 >"$cg/pids.max" 2>/dev/null; then
  [ -n "$cg" ] && rmdir "$cg"
  echo "SKIP: cannot make a pids cgroup with pids.max=60 (needs root and the pids controller)"
  exit 77
fi
tmp=$(mktemp -d) || exit 2
cleanup() {
  # Whatever is left in the cgroup (nothing, normally) goes before the cgroup does.
  i=0
  while [ -s "$cg/cgroup.procs" ] && [ $i -lt 50 ]; do
    [ $i -eq 20 ] && xargs -r kill -KILL <"$cg/cgroup.procs" 2>/dev/null
    sleep 0.1
    i=$((i + 1))
  done
  rmdir "$cg" 2>/dev/null || echo "warning: could not remove $cg"
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

# Runs "$@" inside the cgroup; stdout and stderr to $tmp/out and $tmp/err.
in_cgroup() {
  timeout 120 sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$@" >"$tmp/out" 2>"$tmp/err"
}

fail=0
for mode in fork thread; do
  in_cgroup "$bin" "$mode"
  status=$?
  cp "$tmp/out" "$tmp/native.$mode"
  if [ "$status" -ne 0 ] || ! grep -q "stopped by EAGAIN" "$tmp/out"; then
    echo "FAIL: natively, $mode exited $status and printed:"
    cat "$tmp/out" "$tmp/err"
    fail=1
    continue
  fi
  for limit in default --pids=100000; do
    if [ "$limit" = default ]; then
      in_cgroup "$sentry_run" --platform="$platform" -- "$bin" "$mode"
    else
      in_cgroup "$sentry_run" --platform="$platform" "$limit" -- "$bin" "$mode"
    fi
    status=$?
    what="$mode under sentry-run --platform=$platform ($limit limit)"
    if [ "$status" -ne 0 ]; then
      echo "FAIL: $what exited $status"
      fail=1
    fi
    if ! cmp -s "$tmp/native.$mode" "$tmp/out"; then
      echo "FAIL: $what printed other than natively (native <, sentry-run >):"
      diff "$tmp/native.$mode" "$tmp/out"
      fail=1
    fi
    if grep -Eiq "abort|terminate|segmentation|core dumped" "$tmp/err"; then
      echo "FAIL: $what: the Sentry crashed:"
      cat "$tmp/err"
      fail=1
    fi
    [ "$fail" -eq 0 ] && echo "ok: $what: $(head -n1 "$tmp/out")"
  done
done
[ "$fail" -eq 0 ] && echo "pids_exhaust.sh: PASS"
exit "$fail"
