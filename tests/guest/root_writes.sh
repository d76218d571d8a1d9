#!/bin/sh
# With --fs=scratch, writes to the root stay in the sandbox; writes to --workspace reach the
# host. (The default read-only root, where the same write fails with EROFS, is checked by
# tests/policy/policy.sh.)
#
#   root_writes.sh SENTRY_RUN
#
# The guest writes /etc/sentry-probe-PID (the root is the host's, read-only under an
# in-memory layer that --fs=scratch lets the guest write) and, in its workspace (a fresh host
# directory, also its working directory), random data, a checksum of it, a directory, a symlink and a renamed file.
# Then, from the host: the probe must not exist, the workspace files must be there byte for
# byte after the sandbox is gone. Exits 0 iff everything held.
set -u
sentry_run=$1
ws=$(mktemp -d /var/tmp/sentry-ws-XXXXXX) || exit 2
probe=/etc/sentry-probe-$$
trap 'rm -rf "$ws"; rm -f "$probe"' EXIT
rm -f "$probe"

out=$("$sentry_run" --fs=scratch --workspace "$ws" -- /bin/sh -c "
  set -e
  echo inside > $probe
  cat $probe
  pwd
  head -c 200000 /dev/urandom > data.bin
  sha256sum data.bin > sum.txt
  mkdir -p sub/deeper
  echo hello > sub/deeper/f
  mv sub/deeper/f sub/g
  ln -s sub/g link
  chmod 600 sub/g
" </dev/null)
status=$?
fail=0
check() {
  if ! eval "$1"; then
    echo "FAIL: $2"
    fail=1
  fi
}
check '[ "$status" -eq 0 ]' "guest exit status $status"
check '[ "$out" = "$(printf "inside\n%s" "$ws")" ]' "guest output was: $out"
check '[ ! -e "$probe" ]' "$probe reached the host"
check '(cd "$ws" && sha256sum -c --quiet sum.txt)' "workspace data.bin differs from the guest's"
check '[ "$(cat "$ws/sub/g" 2>/dev/null)" = hello ]' "workspace sub/g missing or wrong"
check '[ ! -e "$ws/sub/deeper/f" ]' "the rename left sub/deeper/f behind"
check '[ "$(readlink "$ws/link")" = sub/g ]' "workspace symlink missing or wrong"
check '[ "$(stat -c %a "$ws/sub/g")" = 600 ]' "chmod did not reach the host"
[ "$fail" -eq 0 ] && echo "root_writes.sh: PASS"
exit "$fail"
