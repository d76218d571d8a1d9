#!/bin/sh
# The host's /proc, /sys, /dev and other pseudo and memory file systems stay out of reach:
# the gofer shows a host mount it was not given as an empty read-only directory.
#
#   host_mounts.sh SENTRY_RUN PLATFORM USER
#
# USER is root or nobody (sentry-run then runs under setpriv; skipped with exit 77 if it
# cannot run unprivileged at all). Exports a random token that only the caller's environment
# holds, then runs in the sandbox, with the host's / also bound read-only at /h:
#   - listings of /h/proc, /h/sys, /h/dev, host-only /sys files (the guest's /sys is the
#     Sentry's own: CPUs, transparent hugepages), and reads of
#     /h/proc/self/environ and /h/proc/1/environ;
#   - as root also: `umount -l /proc` and then /proc, and `mount --bind / /tmp/x` and then
#     /tmp/x/proc, /tmp/x/sys, /tmp/x/dev.
# Each listing must be empty, no host /sys entry (vmcoreinfo, firmware, class/net, block,
# cgroup files) may exist, and neither the
# token nor the host pids of this script and of sentry-run may appear anywhere in the output.
# As root it then checks a workspace holding host mounts (a tmpfs, a procfs, a bind of a
# directory of the root's ext4): the first two are empty and refuse writes, the bind is served
# with --submounts=auto (the default) and hidden with --submounts=none.
# Exits 0 iff everything held.
set -u

if [ $# -ne 3 ]; then
  echo "usage: $0 SENTRY_RUN PLATFORM USER" >&2
  exit 2
fi
. "$(dirname "$0")/unpriv.sh"
platform=$2
mounted=
run_base=
cleanup() {
  for m in $mounted; do umount -l "$m"; done
  [ -z "$run_base" ] || rm -rf "$run_base"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
as_user "$3" "$1"

HOST_ONLY_TOKEN=host-only-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
export HOST_ONLY_TOKEN
fail=0
out=$run_base/out

# Prints "count NAME N" (N: entries of DIR) and the listing itself.
guest_common='
count() { echo "count $1 $(ls -A "$2" | wc -l)"; ls -A "$2"; }
count h-proc /h/proc
count h-sys /h/sys
count h-dev /h/dev
for f in /sys/kernel/vmcoreinfo /sys/firmware /sys/class/net /sys/block /sys/fs/cgroup/pids \
         /proc/self/root/sys/firmware /h/sys/kernel /h/proc/1; do
  [ -e "$f" ] && echo "present $f"
done
cat /h/proc/self/environ /h/proc/1/environ 2>&1
true
'
guest_root='
umount -l /proc || echo "trick failed: umount"
count proc /proc
cat /proc/self/environ /proc/1/environ 2>&1
mkdir -p /tmp/x && mount --bind / /tmp/x || echo "trick failed: bind"
count x-proc /tmp/x/proc
count x-sys /tmp/x/sys
count x-dev /tmp/x/dev
cat /tmp/x/proc/self/environ 2>&1
true
'
script=$guest_common
names="h-proc h-sys h-dev"
if [ "$user" = root ]; then
  script="$script$guest_root"
  names="$names proc x-proc x-sys x-dev"
fi

$run "$sentry_run" --platform="$platform" --bind /:/h:ro -- /bin/sh -c "$script" \
  </dev/null >"$out" 2>&1 &
run_pid=$!
wait "$run_pid"
status=$?

check() {
  if ! eval "$1"; then
    echo "FAIL: $2"
    fail=1
  fi
}
check '[ "$status" -eq 0 ]' "guest exit status $status"
for n in $names; do
  check 'grep -qx "count $n 0" "$out"' "the guest's listing $n is not empty"
done
check '! grep -qa "^present " "$out"' "host files exist in the guest: $(grep -a '^present ' "$out")"
check '! grep -q "trick failed" "$out"' "a guest mount trick did not run: $(grep -a 'trick failed' "$out")"
check '! grep -qa "$HOST_ONLY_TOKEN" "$out"' "the caller's environment leaked into the guest"
for p in $$ $run_pid; do
  check '! grep -qaw "$p" "$out"' "host pid $p appears in the guest's output"
done
if [ "$fail" -ne 0 ]; then
  echo "--- guest output:"
  cat -v "$out"
fi

if [ "$user" = root ]; then
  # Host mounts inside a writable workspace.
  ws=$run_base/ws
  mkdir -p "$ws/tmpfs" "$ws/proc" "$ws/ext" "$run_base/extsrc" || exit 2
  echo ext-data >"$run_base/extsrc/file"
  mount -t tmpfs sentry-test "$ws/tmpfs" && mounted="$ws/tmpfs" &&
    echo tmpfs-data >"$ws/tmpfs/file" &&
    mount -t proc proc "$ws/proc" && mounted="$mounted $ws/proc" &&
    mount --bind "$run_base/extsrc" "$ws/ext" && mounted="$mounted $ws/ext" || exit 2
  ws_script='
    echo "count tmpfs $(ls -A tmpfs | wc -l)"
    echo "count proc $(ls -A proc | wc -l)"
    stat -c "type %F" tmpfs proc
    touch tmpfs/new 2>&1 || echo "refused tmpfs/new"
    mkdir proc/new 2>&1 || echo "refused proc/new"
    cat ext/file
  '
  "$sentry_run" --platform="$platform" --workspace "$ws" -- /bin/sh -c "$ws_script" \
    </dev/null >"$out" 2>&1
  for n in tmpfs proc; do
    check 'grep -qx "count $n 0" "$out"' "workspace/$n is not empty in the guest"
    check 'grep -qx "refused $n/new" "$out"' "creating in workspace/$n was not refused"
  done
  check '[ "$(grep -c "^type directory$" "$out")" -eq 2 ]' "a sealed mount point is no directory"
  check 'grep -q "Read-only file system" "$out"' "writes to a sealed mount point: not EROFS"
  check 'grep -qx ext-data "$out"' "the ext4 bind in the workspace was not served (auto)"
  check '[ ! -e "$ws/tmpfs/new" ] && [ ! -e "$ws/proc/new" ]' "a sealed mount was written"
  "$sentry_run" --platform="$platform" --submounts=none --workspace "$ws" -- \
    /bin/sh -c 'echo "count ext $(ls -A ext | wc -l)"' </dev/null >>"$out" 2>&1
  check 'grep -qx "count ext 0" "$out"' "--submounts=none served the ext4 bind"
  if [ "$fail" -ne 0 ]; then
    echo "--- workspace guest output:"
    cat -v "$out"
  fi
fi

[ "$fail" -eq 0 ] && echo "host_mounts.sh ($platform, $user): PASS"
exit "$fail"
