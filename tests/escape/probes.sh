#!/bin/sh
# The escape probes (probes.c): each classic escape gets the answer Linux in a container gives,
# or the sandbox's documented one, and nothing on the host changes.
#
#   probes.sh SENTRY_RUN PROBES CONTAIN PLATFORM USER [FILE_ACCESS]
#
# FILE_ACCESS (direct, the default, or gofer) is sentry-run's --file-access in steps 2 and 3.
# USER is root or nobody (sentry-run then runs under setpriv; skipped with exit 77 if it cannot
# run unprivileged at all). Sets up a guest root holding only PROBES, a secret file outside it
# (readable by USER), a host `sleep`, and a random token in sentry-run's environment. Then:
#  1. the reference: `CONTAIN ROOT /probes main ...` (Linux in a container: user, mount, PID,
#     net, IPC and UTS namespaces, pivot_root'ed into ROOT); skipped with a note if the host
#     does not let USER make a user namespace;
#  2. the sandbox: sentry-run --fs=scratch --rootfs ROOT with fds 3-9 open on the secret and
#     the host pids of this script, the sleep and sentry-run itself as the targets. Every line
#     must equal the reference's, except those listed for this USER in probes.expected, which
#     must give the value listed there (each with its reason);
#  3. `probes hostbin` with the default root (the host's, read-only): opening sentry-run, sentry
#     and sentry-stub for writing, truncate and chmod all fail with EROFS;
#  4. `probes tty` on a pty of its own (on_pty.py), with --tty=auto and --tty=never: TIOCSTI
#     gives EIO and ENOTTY, TIOCLINUX's paste ENOTTY, and no byte is left in the terminal's
#     input queue (natively, on the same pty, TIOCSTI works: that is the escape);
# and afterwards, on the host: the secret, the sentry binaries (checksums), the host name and
# the sleep are unchanged, and no process, mount or file of the run is left.
# Exits 0 iff everything held.
set -u

if [ $# -ne 5 ] && [ $# -ne 6 ]; then
  echo "usage: $0 SENTRY_RUN PROBES CONTAIN PLATFORM USER [direct|gofer]" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../guest/unpriv.sh"
probes_bin=$(realpath "$2")
contain_bin=$(realpath "$3")
platform=$4
file_access=${6:-direct}
bindir=$(dirname "$(realpath "$1")")
run_base=
sleep_pid=
cleanup() {
  [ -z "$sleep_pid" ] || kill "$sleep_pid" 2>/dev/null
  [ -z "$run_base" ] || rm -rf "$run_base"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
as_user "$5" "$(realpath "$1")"

fail=0
check() {  # check DESCRIPTION COMMAND...
  local_what=$1
  shift
  if ! "$@"; then
    echo "FAIL: $local_what"
    fail=1
  fi
}
# Host processes of this build (sentry-run, the gofer, stubs) or of the run's copies.
ours() {
  n=0
  for exe in /proc/[0-9]*/exe; do
    case "$(readlink "$exe" 2>/dev/null)" in "$bindir"/* | "$run_base"/*) n=$((n + 1)) ;; esac
  done
  echo "$n"
}
procs_before=$(ours)
# Mounts the run could leave: naming this build or this run's directory (others come and go
# with whatever else runs on the host).
our_mounts() { grep -c -e "$bindir" -e "$run_base" /proc/self/mountinfo; }
mounts_before=$(our_mounts)
hostname_before=$(hostname)
tmp_before=$(ls -d /tmp/probe-* 2>/dev/null | wc -l)

root=$run_base/root
mkdir -p "$root/proc" "$root/tmp" "$root/dev" "$root/.old" || exit 2
cp "$probes_bin" "$root/probes" || exit 2
secret=$run_base/secret.txt
echo "SENTRY-HOST-SECRET $$" >"$secret"
chown -R "$run_uid:$run_gid" "$root" "$secret"
secret_sum=$(sha256sum <"$secret")
token=sentry-escape-token-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
reversed=$(printf '%s' "$token" | rev)
bin_sums=$(cat "$bindir/sentry-run" "$bindir/sentry" "$bindir/sentry-stub" | sha256sum)
setsid sleep 300 </dev/null >/dev/null 2>&1 &
sleep_pid=$!

# 1. The reference.
native=$run_base/native.txt
$run "$contain_bin" "$root" /probes main "$secret" "$reversed" $$ "$sleep_pid" $$ \
  </dev/null >"$native" 2>&1
native_status=$?
if [ "$native_status" -eq 125 ]; then
  echo "note: no reference run, $user may not make a user namespace here: $(cat "$native")"
  : >"$native"
else
  check "the reference run passes its own checks (status $native_status)" \
    test "$native_status" -eq 0
fi

# 2. The sandbox. The inner shell's pid becomes sentry-run's: exec all the way down.
sandbox=$run_base/sandbox.txt
# shellcheck disable=SC2016
sh -c 'exec "$@" $$' sh $run env SENTRY_ESCAPE_TOKEN="$token" "$sentry_run" \
  --platform="$platform" --file-access="$file_access" --tty=never --fs=scratch --rootfs "$root" -- \
  /probes main "$secret" "$reversed" $$ "$sleep_pid" \
  </dev/null >"$sandbox" 2>&1 3<"$secret" 4<"$secret" 5<"$secret" 6<"$secret" 7<"$secret" \
  8<"$secret" 9<"$secret"
sandbox_status=$?
check "the sandbox run passes its own checks (status $sandbox_status)" \
  test "$sandbox_status" -eq 0
if [ -s "$native" ]; then
  # What the sandbox must print: the reference, with this user's listed differences.
  want=$run_base/want.txt
  awk -v user="$user" '
    FNR == NR {
      if ($0 ~ /^#/ || NF < 3) next
      if ($1 == user || $1 == "any") { over[$2] = $3; seen[$2] = 0 }
      next
    }
    /^FAIL|^probes:/ { next }
    {
      name = $1; sub(/:$/, "", name)
      if (name in over) { seen[name] = 1; if (over[name] != "-") print name ": " over[name] }
      else print
    }
    END { for (n in over) if (!seen[n] && over[n] != "-") print n ": " over[n] }
  ' "$here/probes.expected" "$native" | sort >"$want"
  grep -v '^FAIL\|^probes:' "$sandbox" | sort >"$run_base/got.txt"
  if ! diff "$want" "$run_base/got.txt" >"$run_base/diff.txt"; then
    echo "FAIL: the sandbox's answers differ from the reference's (< want, > got):"
    cat "$run_base/diff.txt"
    fail=1
  fi
fi

# 3. The sandbox's own binaries, through the host's root (read-only).
# (As nobody, when the build tree is out of reach, sentry-run runs from a copy in /var/tmp,
# which the default root shows under a writable in-memory layer: only the build's are probed.)
hostbin=$run_base/hostbin.txt
targets="$bindir/sentry-run $bindir/sentry $bindir/sentry-stub"
if ! $run test -r "$bindir/sentry-run"; then
  echo "note: the build tree is out of $user's reach: the hostbin probe is skipped"
else
  # shellcheck disable=SC2086
  $run "$sentry_run" --platform="$platform" --file-access="$file_access" --tty=never -- \
    "$probes_bin" hostbin $targets \
    </dev/null >"$hostbin" 2>&1
  check "hostbin: status $? and every write refused with EROFS" \
    test "$(grep -c ': EROFS$' "$hostbin")" -eq 15 -a "$(wc -l <"$hostbin")" -eq 15
  [ "$fail" -eq 0 ] || cat "$hostbin"
fi

# 4. The caller's terminal.
tty_out=$run_base/tty.txt
for mode in auto never; do
  $run /usr/bin/python3 "$here/on_pty.py" "$sentry_run" --platform="$platform" --tty=$mode -- \
    "$probes_bin" tty </dev/null >"$tty_out" 2>&1
  check "--tty=$mode: the guest exits 0" test $? -eq 0
  check "--tty=$mode: nothing was pushed into the terminal's input" \
    grep -qx 'pending input: 0' "$tty_out"
  check "--tty=$mode: TIOCLINUX paste is ENOTTY everywhere" \
    test "$(grep -c 'tioclinux_paste: ENOTTY$' "$tty_out")" -eq "$(grep -c 'tioclinux' "$tty_out")"
  if [ $mode = auto ]; then
    check "--tty=auto: TIOCSTI is EIO on the guest's pty (fds 0-2, /dev/tty)" \
      test "$(grep -c 'tiocsti: EIO$' "$tty_out")" -eq 4
  else
    check "--tty=never: TIOCSTI is ENOTTY on the caller's fds 0-2" \
      test "$(grep -c 'tiocsti: ENOTTY$' "$tty_out")" -eq 3
    check "--tty=never: the guest has no /dev/tty (ENXIO)" grep -qx 'dev_tty.open: ENXIO' "$tty_out"
  fi
  [ "$fail" -eq 0 ] || cat "$tty_out"
done

# Afterwards, on the host.
check "the secret is unchanged" test "$(sha256sum <"$secret")" = "$secret_sum"
check "the sentry binaries are unchanged" \
  test "$(cat "$bindir/sentry-run" "$bindir/sentry" "$bindir/sentry-stub" | sha256sum)" = "$bin_sums"
check "the host name is unchanged" test "$(hostname)" = "$hostname_before"
check "the host sleep is alive" kill -0 "$sleep_pid"
check "no process of the run is left ($(ours) vs $procs_before)" test "$(ours)" -eq "$procs_before"
check "no mount is left" test "$(our_mounts)" -eq "$mounts_before"
check "no /tmp/probe-* appeared on the host" \
  test "$(ls -d /tmp/probe-* 2>/dev/null | wc -l)" -eq "$tmp_before"
if [ "$fail" -ne 0 ]; then
  echo "--- sandbox output:"
  cat "$sandbox"
fi
[ "$fail" -eq 0 ] && echo "probes.sh ($platform, $user): PASS ($(wc -l <"$sandbox") probes)"
exit "$fail"
