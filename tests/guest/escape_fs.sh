#!/bin/sh
# File-system escape test: /proc/self/root/.., /proc/PID of the host processes, symlinks swapped
# during a walk (from the guest and from the host) and writes to a read-only bind.
#
#   escape_fs.sh SENTRY_RUN ESCAPE_FS_BIN PLATFORM
#
# Sets up, on the host, in /var/tmp: a secret file outside everything exposed; a guest root
# holding only ESCAPE_FS_BIN (as /escape_fs); a directory bound read-only at /ro (a file f, a
# directory d holding inner, an empty directory e, a symlink l -> f); a directory bound
# read-write at /rw, holding hrace/ (a decoy file f, a directory d holding a decoy, and
# symlinks f.l, d.l, d/<secret name>.l to the secret) for the host-side swapper. The file links
# are relative: the gofer is pivot_root'ed into an empty root, so only a relative link would
# lead it to the secret if it followed one.
#
# First, as the reference for the errnos, runs `ESCAPE_FS_BIN ro` natively on the same
# read-only directory bind-mounted read-only in a private mount namespace (skipped, with a
# note, where `unshare -m` is not allowed). Then runs
#   SENTRY_RUN --platform=PLATFORM --rootfs ROOT --bind RO:/ro:ro --bind RW:/rw \
#     -- /escape_fs guest SECRET ROOT
# and, while it runs, writes "SENTRY_PID GOFER_PID" (the Sentry and its child sentry-gofer) to
# RW/pids for the guest, and runs `ESCAPE_FS_BIN host-swap` on RW/hrace. Afterwards checks that
# the guest passed, the secret is unchanged and the read-only directory is unchanged (listing
# with modes, sizes, times and link targets, and checksums). Exits 0 iff everything held.
set -u

if [ $# -ne 3 ]; then
  echo "usage: $0 SENTRY_RUN ESCAPE_FS_BIN PLATFORM" >&2
  exit 2
fi
sentry_run=$1
bin=$(realpath "$2")
platform=$3

base=$(mktemp -d /var/tmp/sentry-escape-fs-XXXXXX) || exit 2
secret_dir=$base/secret
root=$base/root
ro=$base/ro
rw=$base/rw
ref_other=$base/ref-other
secret=$secret_dir/secret.txt
run_pid=
swap_pid=

cleanup() {
  if [ -n "$swap_pid" ]; then kill "$swap_pid" 2>/dev/null; wait "$swap_pid" 2>/dev/null; fi
  if [ -n "$run_pid" ]; then kill "$run_pid" 2>/dev/null; wait "$run_pid" 2>/dev/null; fi
  rm -rf "$base"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

mkdir "$secret_dir" "$root" "$ro" "$rw" "$ref_other" "$rw/hrace" || exit 2
cp "$bin" "$root/escape_fs" || exit 2
echo "SENTRY-HOST-SECRET $$" >"$secret"
secret_sum=$(sha256sum <"$secret")
(
  cd "$ro" && echo ro-file >f && mkdir d e && echo inner >d/inner && ln -s f l
) || exit 2
(
  cd "$rw/hrace" && echo decoy >f && mkdir d && echo decoy >d/secret.txt &&
    ln -s ../../secret/secret.txt f.l && ln -s "$secret_dir" d.l &&
    ln -s ../../../secret/secret.txt d/secret.txt.l
) || exit 2

# What a write that got through would change: names, types, modes, sizes, times, link
# targets, and the bytes.
snapshot() {
  (cd "$ro" && find . -printf '%p %y %m %s %T@ %C@ %l\n' | sort &&
    find . -type f -exec sha256sum {} + | sort)
}
ro_before=$(snapshot)

fail=0

# The native reference for the read-only errnos.
if unshare -m true 2>/dev/null; then
  if unshare -m sh -c 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" &&
                       exec "$3" ro "$1" "$2"' sh "$ro" "$ref_other" "$bin" >"$base/ref.out" 2>&1
  then
    echo "escape_fs.sh: native reference: the read-only errnos hold on this host"
  else
    grep -v '^ok:' "$base/ref.out"
    echo "FAIL: natively, the read-only checks fail: the expected errnos are wrong for this host"
    fail=1
  fi
else
  echo "escape_fs.sh: note: unshare -m not allowed here, the native reference run is skipped"
fi
if [ "$(snapshot)" != "$ro_before" ]; then
  echo "escape_fs.sh: setup: the native reference run changed $ro" >&2
  exit 2
fi

"$bin" host-swap "$rw/hrace" "$secret" 60 &
swap_pid=$!

"$sentry_run" --platform="$platform" --rootfs "$root" --bind "$ro:/ro:ro" --bind "$rw:/rw" \
  -- /escape_fs guest "$secret" "$root" </dev/null &
run_pid=$!

# The Sentry: sentry-run's child of the same name (it runs in its own namespaces), or
# sentry-run itself (--unsafe-no-confinement). The gofer: the Sentry's child named sentry-gofer.
gofer_pid=
sentry_pid=$run_pid
i=0
while [ -z "$gofer_pid" ] && [ $i -lt 100 ] && kill -0 "$run_pid" 2>/dev/null; do
  for c in $(cat /proc/"$run_pid"/task/*/children 2>/dev/null); do
    if [ "$(cat /proc/"$c"/comm 2>/dev/null)" = sentry-run ]; then sentry_pid=$c; fi
  done
  for c in $(cat /proc/"$sentry_pid"/task/*/children 2>/dev/null); do
    if [ "$(cat /proc/"$c"/comm 2>/dev/null)" = sentry-gofer ]; then gofer_pid=$c; fi
  done
  [ -n "$gofer_pid" ] || sleep 0.05
  i=$((i + 1))
done
if [ -n "$gofer_pid" ]; then
  echo "$sentry_pid $gofer_pid" >"$rw/pids.tmp" && mv "$rw/pids.tmp" "$rw/pids"
else
  echo "FAIL: found no sentry-gofer child of the Sentry $sentry_pid (sentry-run $run_pid)"
  fail=1
fi

wait "$run_pid"
status=$?
run_pid=
# The swapper stops on hrace/stop, which the guest creates; make sure it does.
touch "$rw/hrace/stop"
wait "$swap_pid"
swap_status=$?
swap_pid=

if [ "$status" -ne 0 ]; then
  echo "FAIL: guest exit status $status"
  fail=1
fi
if [ "$swap_status" -ne 0 ]; then
  echo "FAIL: the host-side swapper exited with status $swap_status"
  fail=1
fi
if [ ! -f "$secret" ] || [ "$(sha256sum <"$secret")" != "$secret_sum" ]; then
  echo "FAIL: the host secret $secret was changed or removed"
  fail=1
fi
ro_after=$(snapshot)
if [ "$ro_after" != "$ro_before" ]; then
  echo "FAIL: the read-only bind changed on the host:"
  printf '%s\n' "$ro_before" >"$base/before"
  printf '%s\n' "$ro_after" >"$base/after"
  diff "$base/before" "$base/after"
  fail=1
fi
if [ "$fail" -eq 0 ]; then
  echo "escape_fs.sh ($platform): PASS"
fi
exit "$fail"
