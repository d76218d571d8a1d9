#!/bin/sh
# Escape test: the sandbox must keep a guest away from host files and host processes.
#
#   escape.sh SENTRY_RUN ESCAPE_BIN
#
# Sets up, on the host: a guest root directory holding only ESCAPE_BIN (as /escape), a
# secret file in /var/tmp (outside that root), symlinks to it inside the root (absolute,
# relative with enough "..", and through a linked directory), and a `sleep` in its own
# process group. Runs `SENTRY_RUN --rootfs ROOT -- /escape SECRET SLEEP_PID LINKS...` (see
# escape.c for what the guest checks), then checks from the host that init, the sleep and
# this script are alive and the secret is unchanged. Cleans up in any case. Exits 0 iff
# everything held.
#
# This test only makes sense under the sandbox: natively the guest program would escape (it
# refuses to run unless it is PID 1 of its own PID namespace).
set -u

if [ $# -ne 2 ]; then
  echo "usage: $0 SENTRY_RUN ESCAPE_BIN" >&2
  exit 2
fi
sentry_run=$1
escape_bin=$(realpath "$2")

secret_dir=$(mktemp -d /var/tmp/sentry-escape-secret-XXXXXX) || exit 2
root=$(mktemp -d /var/tmp/sentry-escape-root-XXXXXX) || exit 2
bin_dir=$root
secret=$secret_dir/secret.txt
link_file=$bin_dir/escape-link-$$-file
link_rel=$bin_dir/escape-link-$$-rel
link_dir=$bin_dir/escape-link-$$-dir
sleep_pid=

cleanup() {
  if [ -n "$sleep_pid" ]; then kill "$sleep_pid" 2>/dev/null; fi
  rm -rf "$secret_dir" "$root"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
cp "$escape_bin" "$root/escape" && mkdir -p "$root/etc" "$root/usr/lib" || exit 2

echo "sentry escape test secret $$" >"$secret"
chmod 644 "$secret"
secret_sum=$(sha256sum <"$secret")
ln -s "$secret" "$link_file"
ln -s "$(realpath --relative-to="$bin_dir" "$secret")" "$link_rel"
ln -s "$secret_dir" "$link_dir"
for l in "$link_file" "$link_rel" "$link_dir/secret.txt"; do
  if ! cmp -s "$l" "$secret"; then
    echo "escape.sh: setup: $l does not reach the secret on the host" >&2
    exit 2
  fi
done

# A host process in its own process group: setsid does not fork here (a background job of a
# non-interactive shell is not a group leader), so $! is the sleep, and its pgid is its pid.
setsid sleep 300 </dev/null >/dev/null 2>&1 &
sleep_pid=$!
sleep 0.2
if [ "$(cut -d' ' -f5 "/proc/$sleep_pid/stat" 2>/dev/null)" != "$sleep_pid" ]; then
  echo "escape.sh: setup: sleep $sleep_pid is not its own process group leader" >&2
  exit 2
fi

"$sentry_run" --rootfs "$root" -- /escape "$secret" "$sleep_pid" \
  "/$(basename "$link_file")" "/$(basename "$link_rel")" "/$(basename "$link_dir")/secret.txt" \
  </dev/null
status=$?

fail=0
if [ "$status" -ne 0 ]; then
  if [ "$status" -eq 137 ]; then
    echo "FAIL: the guest died of SIGKILL. If its output stops before 'PID 1 survived', its" \
      "child's kill(1, SIGKILL) killed it; Linux ignores that (a signal with a default action" \
      "sent to a PID namespace's init from inside the namespace)"
  else
    echo "FAIL: guest exit status $status"
  fi
  fail=1
fi
if ! kill -0 1 2>/dev/null; then
  echo "FAIL: host init is gone"
  fail=1
fi
if ! kill -0 "$sleep_pid" 2>/dev/null; then
  echo "FAIL: host process $sleep_pid (sleep) was killed from inside the sandbox"
  fail=1
fi
if [ ! -f "$secret" ] || [ "$(sha256sum <"$secret")" != "$secret_sum" ]; then
  echo "FAIL: the host secret $secret was changed or removed"
  fail=1
fi
if [ "$fail" -eq 0 ]; then
  echo "escape.sh: PASS"
fi
exit "$fail"
