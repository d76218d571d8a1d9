#!/bin/sh
# Differential test: run a busybox shell script natively and in the sandbox.
#
#   compare.sh SENTRY_RUN BUSYBOX SCRIPT_FILE
#
# Runs `BUSYBOX sh -c "<script>"` natively and `SENTRY_RUN -- BUSYBOX sh -c "<script>"`,
# both with stdin from /dev/null, and passes iff stdout and the exit status are the
# same. stderr is not compared (error messages name the program and may differ) but is
# shown on a mismatch. Exits 0 on a match, 1 on a mismatch, 2 on a usage error.
#
# The script text gets `export BB='<absolute path of BUSYBOX>'` prepended, and the
# scripts run every non-builtin applet as `$BB applet`. Why: Debian's busybox-static is
# built with FEATURE_SH_STANDALONE, so its sh runs applets that are not NOFORK/NOEXEC
# (tr, cat, wc, sleep, ...) with execve("/proc/self/exe", ...). The sandbox has no
# /proc yet; there that execve fails and ash falls back to a $PATH search, which finds
# the host's dynamic coreutils in /usr/bin. The test would then silently compare
# different programs. `$BB applet` is a plain execve of the (exposed) busybox path on
# both sides.
set -u

if [ $# -ne 3 ]; then
  echo "usage: $0 SENTRY_RUN BUSYBOX SCRIPT_FILE" >&2
  exit 2
fi
sentry_run=$1
bb=$2
script_file=$3

case $bb in
  /*) ;;
  *) bb=$PWD/$bb ;;
esac
case $bb in
  *"'"*) echo "compare.sh: busybox path must not contain a single quote: $bb" >&2; exit 2 ;;
esac
if [ ! -f "$bb" ] || [ ! -x "$bb" ] || ! "$bb" true </dev/null; then
  echo "compare.sh: not a working busybox: $bb" >&2
  exit 2
fi
if [ ! -r "$script_file" ]; then
  echo "compare.sh: cannot read $script_file" >&2
  exit 2
fi

text="export BB='$bb'
$(cat "$script_file")"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$bb" sh -c "$text" >"$tmp/native.out" 2>"$tmp/native.err" </dev/null
native_status=$?
"$sentry_run" -- "$bb" sh -c "$text" >"$tmp/sandbox.out" 2>"$tmp/sandbox.err" </dev/null
sandbox_status=$?

name=$(basename "$script_file")
fail=0
if ! cmp -s "$tmp/native.out" "$tmp/sandbox.out"; then
  echo "FAIL $name: stdout differs (--- native, +++ sandbox):"
  diff -u --label native --label sandbox "$tmp/native.out" "$tmp/sandbox.out"
  fail=1
fi
if [ "$native_status" -ne "$sandbox_status" ]; then
  echo "FAIL $name: exit status native $native_status, sandbox $sandbox_status"
  fail=1
fi
if [ "$fail" -ne 0 ]; then
  for side in native sandbox; do
    if [ -s "$tmp/$side.err" ]; then
      echo "--- $side stderr:"
      cat "$tmp/$side.err"
    fi
  done
  exit 1
fi
echo "PASS $name: $(wc -l <"$tmp/native.out") lines, exit status $native_status"
exit 0
