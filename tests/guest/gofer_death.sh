#!/bin/sh
# Killing the gofer makes guest file operations fail (EIO), never hang, and the sandbox exits
# with a clear error.
#
#   gofer_death.sh SENTRY_RUN [FILE_ACCESS]
#
# FILE_ACCESS: sentry-run's --file-access (direct, the default, or gofer). In direct mode the
# guest's file operations never reach the gofer: its death is seen on its socket.
# The guest lists directories in a loop. The host kills the sandbox's gofer (the child of
# the Sentry named sentry-gofer), then expects sentry-run to exit non-zero within the
# time limit and to say that the gofer died.
set -u
sentry_run=$1
file_access=${2:-direct}
err=$(mktemp) || exit 2
trap 'rm -f "$err"' EXIT
"$sentry_run" --file-access="$file_access" -- /bin/sh -c '
  i=0
  while [ $i -lt 600 ]; do
    ls /usr/share > /dev/null || { echo "ls failed" >&2; exit 3; }
    cat /etc/hostname > /dev/null 2>&1
    i=$((i + 1))
    sleep 0.05
  done' </dev/null 2>"$err" &
run=$!
sleep 1
# The gofer is a child of the Sentry, sentry-run's child of the same name (in its own
# namespaces).
sentry=$(pgrep -P "$run" -x sentry-run | head -n1)
gofer=$(pgrep -P "${sentry:-$run}" -x sentry-gofer | head -n1)
if [ -z "$gofer" ]; then
  echo "FAIL: no gofer child of sentry-run $run"
  kill "$run"
  exit 1
fi
kill -KILL "$gofer"
# At most 30 s to notice and wind down.
i=0
while kill -0 "$run" 2>/dev/null && [ $i -lt 300 ]; do
  sleep 0.1
  i=$((i + 1))
done
if kill -0 "$run" 2>/dev/null; then
  echo "FAIL: sentry-run still running 30 s after the gofer died"
  kill -KILL "$run"
  exit 1
fi
wait "$run"
status=$?
fail=0
if [ "$status" -eq 0 ]; then
  echo "FAIL: sentry-run exited 0 after its gofer died"
  fail=1
fi
if ! grep -q "gofer" "$err"; then
  echo "FAIL: no error naming the gofer on stderr; it said:"
  cat "$err"
  fail=1
fi
[ "$fail" -eq 0 ] && echo "gofer_death.sh: PASS (status $status): $(grep gofer "$err" | head -n1)"
exit "$fail"
