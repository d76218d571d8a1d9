#!/bin/sh
# Namespace tools inside the sandbox (issue 9, item 7): each command runs natively and under
# sentry-run, and both must print the same output and exit with the same status.
#
#   namespace_tools.sh SENTRY_RUN PLATFORM
#
# 1. `unshare -m sh -c 'mount -t tmpfs t DIR && touch DIR/x && ls DIR'`: a tmpfs in a new
#    mount namespace, and afterwards DIR is empty again outside it.
# 2. `unshare -m` with a read-only remount of that tmpfs: the write fails with EROFS.
# 3. `unshare -u sh -c 'hostname inner; hostname'`, and the outer hostname is unchanged.
# 4. `unshare -i` with `ipcmk`/`ipcs`: a queue made inside is not seen outside.
# 8. `unshare -r`/`unshare -U` (ids and maps), and as uid 1000 (setpriv): `unshare -r`,
#    `-rn` with lo up, `-rmu` with a hostname and a tmpfs, bwrap --unshare-user/net/uts.
# 7. `unshare -n` with `ip link`/`ip addr`/`ip link set lo up`/`ip route`: lo only, down,
#    then up with its addresses, and no route out.
# 6. In the sandbox only: remounts, binds and moves never make its locked read-only root
#    writable.
# 5. `bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp -- sh -c 'echo ok; ...'` if
#    bubblewrap is installed (tools/setup.sh installs it).
# 9. PID namespaces: `unshare -pf --mount-proc ps -o pid,comm`, `unshare -rpf --mount-proc
#    sh -c 'echo $$'`, the parent outside out of reach, `bwrap --unshare-pid`.
# Natively this needs root (CAP_SYS_ADMIN); skipped (77) otherwise.
set -u
if [ $# -ne 2 ]; then
  echo "usage: $0 SENTRY_RUN PLATFORM" >&2
  exit 2
fi
sentry_run=$1
platform=$2
if [ "$(id -u)" -ne 0 ] || ! unshare -m true 2>/dev/null; then
  echo "SKIP: natively, unshare -m needs root"
  exit 77
fi
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
dir=$tmp/mnt
mkdir "$dir"
fail=0
n=0

# same CMD...: CMD's output and status natively and in the sandbox must be the same.
same() {
  n=$((n + 1))
  timeout 60 "$@" >"$tmp/native" 2>&1
  native=$?
  timeout 60 "$sentry_run" --platform="$platform" -- "$@" >"$tmp/sentry" 2>&1
  sentry=$?
  if ! cmp -s "$tmp/native" "$tmp/sentry" || [ "$native" -ne "$sentry" ]; then
    echo "FAIL ($platform): $* (native status $native, sentry $sentry):"
    diff "$tmp/native" "$tmp/sentry"
    fail=1
  else
    echo "ok $n: $* (status $native)"
  fi
}

same unshare -m sh -c "mount -t tmpfs t $dir && touch $dir/x && ls $dir && grep -c ' $dir ' /proc/self/mountinfo"
same sh -c "unshare -m sh -c 'mount -t tmpfs t $dir; touch $dir/x'; ls -A $dir; grep -c ' $dir ' /proc/self/mountinfo"
same unshare -m sh -c "mount -t tmpfs t $dir && mount -o remount,ro $dir && touch $dir/y; echo status \$?; grep ' $dir ' /proc/self/mounts | cut -d' ' -f4"
same unshare -m sh -c "mount -t tmpfs t $dir && mkdir $dir/a $dir/b && mount --bind $dir/a $dir/b && touch $dir/a/f && ls $dir/b && umount $dir/b && ls $dir/b"
same sh -c "h=\$(hostname); unshare -u sh -c 'hostname inner; hostname'; [ \"\$(hostname)\" = \"\$h\" ] && echo outer unchanged"
same sh -c "unshare -i sh -c 'ipcmk -Q >/dev/null && ipcs -q | grep -c 0x'; ipcs -q | grep -c 0x"
same sh -c "readlink /proc/self/ns/uts | cut -d: -f1; unshare -u readlink /proc/self/ns/uts | cut -d: -f1"
# Network namespaces: a fresh one has lo only, down and without addresses; `ip link set lo
# up` gives it 127.0.0.1 and ::1; nothing outside is reachable from it.
if command -v ip >/dev/null 2>&1; then
  same unshare -n ip -o link
  same unshare -n ip -o addr
  same unshare -n sh -c 'ip link set lo up && ip -o addr | cut -d" " -f2,7 && ip -o link | cut -d" " -f2,3'
  same unshare -n sh -c 'ip route; ping -c1 -W1 192.0.2.1 >/dev/null 2>&1; echo ping status $?'
else
  echo "note: iproute2 is not installed; its cases were not run"
fi
# User namespaces: root mapped to itself; nothing mapped before the maps are written; a
# non-root user (setpriv, util-linux) who is root only inside, and bwrap as that user.
same unshare -r id
same sh -c 'unshare -U cat /proc/self/uid_map; unshare -U id -u'
same unshare -r sh -c 'cat /proc/self/uid_map /proc/self/gid_map /proc/self/setgroups'
if command -v setpriv >/dev/null 2>&1; then
  nonroot="setpriv --reuid 1000 --regid 1000 --clear-groups"
  chmod 755 "$tmp"  # uid 1000 walks to $dir
  same $nonroot unshare -r sh -c 'id; cat /proc/self/uid_map; stat -c %u /; hostname x 2>/dev/null || echo no hostname'
  same $nonroot unshare -rn sh -c 'ip link set lo up && ip -o addr | cut -d" " -f2,7'
  same $nonroot unshare -rmu sh -c "hostname inner && hostname && mount -t tmpfs t $dir && touch $dir/f && ls $dir"
  if command -v bwrap >/dev/null 2>&1; then
    same $nonroot bwrap --unshare-user --unshare-net --unshare-uts --ro-bind / / --tmpfs /tmp -- sh -c 'id -u; ip -o link | cut -d" " -f2,3; ls -A /tmp | wc -l'
  fi
fi
if command -v bwrap >/dev/null 2>&1; then
  same bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp -- sh -c 'echo ok; ls /tmp | wc -l; test -c /dev/null && echo dev'
else
  echo "note: bwrap is not installed; its case was not run"
fi
# PID namespaces: the command is PID 1 of its own namespace and a proc mounted there shows
# only it; as a non-root user inside a user namespace too; bwrap's init is PID 1 and the
# command PID 2.
same unshare -pf --mount-proc ps -o pid,comm
same unshare -rpf --mount-proc sh -c 'echo $$'
same unshare -pf sh -c 'echo $$ $PPID; sh -c "echo \$\$ \$PPID"'
if command -v bwrap >/dev/null 2>&1; then
  same bwrap --unshare-pid --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp -- sh -c 'echo $$; exec readlink /proc/self'
fi
# Sandbox only (natively the root is writable): no remount, bind or move inside the guest
# makes the read-only root that sentry-run locked writable, and nothing reaches the host.
probe=/usr/.sentry-ns-probe-$$
out=$(timeout 60 "$sentry_run" --platform="$platform" -- unshare -m sh -c "
  mount -o remount,rw / 2>/dev/null && echo remounted
  mount --bind /usr $dir && mount -o remount,bind,rw $dir 2>/dev/null && echo rebound
  mount --move $dir /mnt 2>/dev/null; mount -o remount,rw /mnt 2>/dev/null && echo moved
  touch $dir/.sentry-ns-probe-$$ /mnt/.sentry-ns-probe-$$ $probe 2>/dev/null && echo wrote
  cut -d' ' -f2,4 /proc/self/mounts | grep -c '^/ ro,'" 2>&1)
if [ "$out" != "1" ] || [ -e "$probe" ]; then
  echo "FAIL ($platform): the locked read-only root became writable: $out"
  fail=1
else
  echo "ok: the locked read-only root stays read-only through remount, bind and move"
fi
[ "$fail" -eq 0 ] && echo "PASS: $n commands alike natively and on $platform"
exit "$fail"
