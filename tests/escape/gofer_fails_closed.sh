#!/bin/sh
# The gofer fails closed: when a confinement step fails, the sandbox does not start.
#
#   gofer_fails_closed.sh SENTRY_RUN
#
# Makes the first confinement step fail: in a user namespace of our own (unshare -U -r) where
# no further user namespace may be made (max_user_namespaces 0) and without CAP_SYS_ADMIN,
# neither the Sentry (its namespaces) nor the gofer (its mount namespace) can confine itself.
# Then `SENTRY_RUN -- /bin/true` must fail (126) with the one-line reason, and with
# --unsafe-no-confinement run (0) and say so. Exits 77 where unshare -U or setpriv is missing.
set -u
if [ $# -ne 1 ]; then
  echo "usage: $0 SENTRY_RUN" >&2
  exit 2
fi
sentry_run=$1
for p in unshare setpriv; do
  command -v $p >/dev/null || { echo "SKIP: $p is not installed"; exit 77; }
done
unshare -U -r true 2>/dev/null || { echo "SKIP: unshare -U is not allowed here"; exit 77; }
out=$(mktemp) || exit 2
trap 'rm -f "$out"' EXIT

# Runs sentry-run with $1 as extra flags in the crippled namespace; sets $rc, output in $out.
crippled() {
  unshare -U -r sh -c '
    echo 0 >/proc/sys/user/max_user_namespaces || exit 3
    exec setpriv --bounding-set=-sys_admin --inh-caps=-sys_admin --ambient-caps=-sys_admin \
      "$0" --tty=never $1 -- /bin/true' "$sentry_run" "$1" </dev/null >"$out" 2>&1
  rc=$?
}

failures=0
crippled ""
if [ "$rc" = 3 ]; then
  echo "SKIP: cannot lower max_user_namespaces in a user namespace here"
  exit 77
fi
# The Sentry's own namespaces (runtime-shim/namespaces.h) are the first step that fails now;
# the gofer's refusal is the same rule one step later.
if [ "$rc" != 126 ] || ! grep -q -e "confinement step failed: new user, mount, PID" \
    -e "cannot confine the gofer (unshare(CLONE_NEWUSER)" "$out"; then
  echo "FAIL: the sandbox started (or failed otherwise) with an unconfinable gofer: exit $rc"
  failures=1
fi
cat "$out"
crippled --unsafe-no-confinement
if [ "$rc" != 0 ] || ! grep -q "UNSAFE: confinement step failed, serving anyway" "$out"; then
  echo "FAIL: --unsafe-no-confinement did not serve, loudly: exit $rc"
  cat "$out"
  failures=1
fi
[ "$failures" = 0 ] && echo PASS
exit "$failures"
