#!/usr/bin/env bash
# `podman --runtime SENTRY` (conmon drives the runtime, with no global flags and --flag=value
# forms), with a private storage root under a temporary directory: run, exit status, -e,
# --memory/--pids-limit (the host cgroup), run -d, exec, stop, rm. The image is the busybox
# rootfs imported with `podman import`, never pulled.
# usage: podman.sh SENTRY   (exit 77: skipped, with the reason)
set -uo pipefail
SENTRY=$(realpath "$1")
skip() {
  echo "SKIP: $*"
  exit 77
}
((EUID == 0)) || skip "podman with cgroupfs needs root here"
command -v podman >/dev/null && command -v conmon >/dev/null ||
  skip "podman is not installed (tools/setup.sh installs it)"
BUSYBOX=$(command -v busybox) && file -L "$BUSYBOX" | grep -q static ||
  skip "a static busybox is needed (apt-get install busybox-static)"
work=$(mktemp -d /tmp/spod.XXXXXX)
P=(podman --root "$work/root" --runroot "$work/runroot" --storage-driver vfs
   --cgroup-manager cgroupfs --events-backend file --runtime "$SENTRY")
cleanup() {
  "${P[@]}" rm -af -t 0 >/dev/null 2>&1
  umount -R "$work/root" "$work/runroot" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/rootfs/bin" "$work/rootfs/tmp" "$work/rootfs/etc"
cp "$BUSYBOX" "$work/rootfs/bin/busybox"
for a in $("$BUSYBOX" --list); do
  [[ -e $work/rootfs/bin/$a ]] || ln -s busybox "$work/rootfs/bin/$a"
done
IMG=localhost/sentry-test-busybox
tar -C "$work/rootfs" -c . | timeout 120 "${P[@]}" import - $IMG >/dev/null 2>"$work/err" ||
  skip "podman import failed: $(tail -1 "$work/err")"

failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
pass() { echo "ok: $*"; }
RUN=(timeout 120 "${P[@]}" run --rm --network none)

out=$("${RUN[@]}" $IMG echo hi 2>"$work/err")
[[ $out == hi ]] && pass "podman run echo hi" || fail "echo hi: $out $(cat "$work/err")"
out=$("${RUN[@]}" -e FOO=bar -w /tmp $IMG sh -c 'echo $FOO $(pwd); exit 3' 2>&1)
rc=$?
[[ $rc == 3 && $out == "bar /tmp" ]] && pass "-e, -w, exit 3" || fail "rc=$rc out=$out"
out=$("${RUN[@]}" --memory 64m --pids-limit 50 $IMG sh -c 'echo limited' 2>&1)
[[ $out == limited ]] && pass "--memory 64m --pids-limit 50 (the host cgroup)" || fail "limits: $out"
# process.user.umask, process.rlimits, noNewPrivileges and /proc/sys read-only as podman asks,
# and the same under runc (podman's --runtime is global: the last of P names ours).
probe='umask; ulimit -Sn; ulimit -Hn; ulimit -u; grep NoNewPrivs /proc/self/status | tr -d "\t"
(echo x >/proc/sys/kernel/hostname) 2>&1 | sed "s/.*: //"'
# (An explicit nproc: podman's default for root is above what this host lets runc set.)
opts=(--umask 0027 --ulimit nofile=300:400 --ulimit nproc=1000:1000 --security-opt no-new-privileges)
out=$("${RUN[@]}" "${opts[@]}" $IMG sh -c "$probe" 2>&1)
[[ $out == $'0027\n300\n400\n1000\nNoNewPrivs:1\nRead-only file system' ]] &&
  pass "--umask, --ulimit, no-new-privileges, /proc/sys read-only" || fail "process fields: $out"
if command -v runc >/dev/null; then
  PR=("${P[@]:0:${#P[@]}-1}" runc)
  ref=$(timeout 120 "${PR[@]}" run --rm --network none "${opts[@]}" $IMG sh -c "$probe" 2>&1)
  [[ $ref == "$out" ]] && pass "the same under runc" || fail "runc gives: $ref"
fi
id=$(timeout 60 "${P[@]}" run -d --network none --memory 64m $IMG \
  sh -c 'trap "exit 0" TERM; while :; do sleep 0.2; done' 2>"$work/err")
usage=$(timeout 60 "${P[@]}" stats --no-stream --format '{{.MemUsage}}' "$id")
[[ $usage =~ ^[0-9.]+[kMG]B\ /\ 67.11MB$ ]] && pass "podman stats: $usage" || fail "stats: '$usage'"
out=$(timeout 60 "${P[@]}" exec "$id" sh -c 'echo exec-ok; exit 4')
rc=$?
[[ $rc == 4 && $out == exec-ok ]] && pass "podman exec: output, exit 4" || fail "exec: rc=$rc $out"
timeout 60 "${P[@]}" stop -t 10 "$id" >/dev/null
code=$(timeout 30 "${P[@]}" inspect -f '{{.State.ExitCode}}' "$id")
[[ $code == 0 ]] && pass "podman stop: SIGTERM reaches the guest's trap (exit 0)" ||
  fail "stop: exit code $code"
timeout 30 "${P[@]}" rm "$id" >/dev/null && ! pgrep -f "$id" >/dev/null &&
  pass "podman rm: no process left" || fail "rm: $(pgrep -af "$id")"

echo "$failures failure(s)"
((failures == 0))
