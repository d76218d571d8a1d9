# Sourced by the guest tests that run sentry-run as root or as an unprivileged user.
#
#   as_user USER SENTRY_RUN   USER is root or nobody. Sets $run (a command prefix that runs a
#                             command as USER), $run_uid, $run_gid, $sentry_run (a binary USER
#                             can run) and $run_base (a fresh directory under /var/tmp that
#                             USER owns; the caller's EXIT trap removes it). Exits 77 (CTest's
#                             skip) with a line saying why if sentry-run cannot run as USER.
#
# Copies of the binaries go to $run_base when USER cannot reach the build tree.

as_user() {
  user=$1
  sentry_run=$2
  run_base=$(mktemp -d /var/tmp/sentry-test-XXXXXX) || exit 2
  chmod 755 "$run_base"
  if [ "$user" = root ]; then
    run=
    run_uid=0
    run_gid=0
    return
  fi
  if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: the unprivileged variant needs root to switch to $user"
    exit 77
  fi
  if ! command -v setpriv >/dev/null; then
    echo "SKIP: setpriv is not installed"
    exit 77
  fi
  run_uid=$(id -u "$user") || exit 2
  run_gid=$(id -g "$user") || exit 2
  run="setpriv --reuid=$run_uid --regid=$run_gid --clear-groups"
  chown "$run_uid:$run_gid" "$run_base"
  if ! $run test -x "$sentry_run"; then
    # The build tree is not reachable for $user: run copies (sentry-stub sits next to
    # sentry-run, where the platform looks for it).
    dir=$(dirname "$sentry_run")
    cp "$sentry_run" "$dir/sentry-stub" "$run_base/" || exit 2
    sentry_run=$run_base/$(basename "$sentry_run")
  fi
  if ! $run "$sentry_run" -- /bin/true </dev/null >"$run_base/probe" 2>&1; then
    echo "SKIP: sentry-run does not run as $user at all on this host:"
    cat "$run_base/probe"
    exit 77
  fi
}
