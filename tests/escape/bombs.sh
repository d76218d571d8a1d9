#!/bin/bash
# The limit bombs of issue 14 (Done-when 4), each while a probe on the host measures how long a
# fork+exec of /bin/true takes: every bomb ends with its message or Linux's errno, the host
# keeps answering within 1 s, and afterwards no process, mount, cgroup or shared-memory file
# of the run is left (counted before and after; see leftovers below).
#
#   bombs.sh SENTRY_RUN MANY_FILES_BIN EXHAUST_BIN PLATFORM
#
#  - fallocate -l 100G on the in-memory layer (--fs=scratch) and on a writable bind of a 64 MiB
#    host tmpfs: ENOSPC, as natively on that tmpfs, and the tmpfs is empty afterwards; 1 MiB
#    at offset 2^63-4096 on the bind: EFBIG, as natively;
#  - 5,000 distinct host files held open at once (MANY_FILES_BIN under ulimit -n 12000): the
#    same output as natively;
#  - a fork loop (EXHAUST_BIN fork) with sentry-run in a host pids cgroup of 60 (cgroup v1,
#    made here and removed; skipped with a note if it cannot be made): EAGAIN as natively;
#  - a CPU spinner (two busy processes) under --timeout 3s: exit status 124 and the message;
#  - a fork bomb under --pids 64 --timeout 5s (124), a memory bomb under --memory 256m
#    (MemoryError), a thread bomb under --pids 64 (can't start new thread), an fd bomb under
#    --open-files 256 (EMFILE) and an in-memory-layer fill under --tmpfs-size 64m (ENOSPC).
# Exits 0 iff everything held.
set -u
if [ $# -ne 4 ]; then
  echo "usage: $0 SENTRY_RUN MANY_FILES_BIN EXHAUST_BIN PLATFORM" >&2
  exit 2
fi
sentry_run=$(realpath "$1")
many_files=$(realpath "$2")
exhaust=$(realpath "$3")
platform=$4
bindir=$(dirname "$sentry_run")
py=/usr/bin/python3
base=$(mktemp -d /var/tmp/sentry-bombs-XXXXXX) || exit 2
cg=
mounted=
prober=
cleanup() {
  [ -z "$prober" ] || kill "$prober" 2>/dev/null
  [ -z "$mounted" ] || umount -l "$mounted"
  [ -z "$cg" ] || rmdir "$cg" 2>/dev/null
  rm -rf "$base"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
source "$(dirname "$0")/../lib/checks.sh"
has() { grep -q -- "$2" <<<"$1"; }
# What a run could leave behind, counted so that other sandboxes running at the same time do
# not count: this build's processes (the test runs serially), host cgroups of sentry-run
# (named sentry-run-PID) whose process is gone, mounts naming this build or this test's
# directory, and shared-memory files named sentry made during the test (the Sentry keeps its
# memory in memfds; /tmp and /var/tmp are left out: other tests make sentry-* directories
# there all the time, and what the guest writes to the binds is checked bomb by bomb).
marker=$base/start
touch "$marker"
leftovers() {
  local stale=0 d
  for d in $(find /sys/fs/cgroup -mindepth 1 -maxdepth 3 -type d -name 'sentry-run-*' 2>/dev/null); do
    [ -d "/proc/${d##*-}" ] || stale=$((stale + 1))
  done
  echo "processes $(build_processes) stale-cgroups $stale" \
    "mounts $(grep -c -e "$bindir" -e "$base" /proc/self/mountinfo)" \
    "files $(find /dev/shm -maxdepth 1 -newer "$marker" -name '*sentry*' 2>/dev/null | wc -l)"
}
before=$(leftovers)

# The host probe: the slowest fork+exec of /bin/true, in ms, every 0.2 s while bombs run.
"$py" -c '
import subprocess, sys, time
worst = 0
while True:
    t = time.monotonic()
    subprocess.run(["/bin/true"])
    worst = max(worst, time.monotonic() - t)
    with open(sys.argv[1], "w") as f:
        f.write("%d\n" % (worst * 1000))
    time.sleep(0.2)' "$base/worst" &
prober=$!

run() {  # run ARGS...: sentry-run, bounded by a host timeout; output in $out, status in $status
  out=$(timeout -s KILL 60 "$sentry_run" --platform="$platform" --tty=never "$@" 2>&1)
  status=$?
}

# --- fallocate 100G.
run --fs=scratch -- /usr/bin/fallocate -l 100G /big
check "fallocate 100G on the in-memory layer: ENOSPC ($out)" has "$out" "No space left"
small=$base/small
mkdir "$small" && mount -t tmpfs -o size=64m sentry-bombs "$small" && mounted=$small || exit 2
native=$(/usr/bin/fallocate -l 100G "$small/big" 2>&1; /usr/bin/fallocate -o 9223372036854771712 -l 1M "$small/huge" 2>&1)
rm -f "$small/big" "$small/huge"
run --bind "$small:/small" -- /bin/sh -c \
  '/usr/bin/fallocate -l 100G /small/big; /usr/bin/fallocate -o 9223372036854771712 -l 1M /small/huge'
check "fallocate 100G and past 2^63 on a writable bind: as natively ($out vs $native)" \
  test "$(sed 's|/small/|X/|g' <<<"$out")" = "$(sed "s|$small/|X/|g" <<<"$native")"
check "... ENOSPC and EFBIG" eval 'has "$out" "No space left" && has "$out" "File too large"'
used=$(du -sk "$small" | cut -f1)
check "... and nothing huge is left on the host tmpfs (${used} KiB)" test "$used" -lt 1024
umount "$small" && mounted=

# --- 5,000 distinct host files held open at once.
files=$base/files
mkdir "$files" || exit 2
awk -v d="$files" 'BEGIN { for (i = 0; i < 5000; i++) { f = d "/f" i; print "file " i > f; close(f) } }'
native=$(bash -c 'ulimit -n 12000 && exec "$@"' sh "$many_files" "$files" 5000 2>&1)
rm -f "$files"/new-*
out=$(bash -c 'ulimit -n 12000 && exec "$@"' sh timeout -s KILL 60 "$sentry_run" \
  --platform="$platform" --tty=never --bind "$files:$files" -- "$many_files" "$files" 5000 2>&1)
check "5,000 host files held open: as natively ($(head -n1 <<<"$out"))" test "$out" = "$native"
check "... all 5,000 of them" has "$native" "opened 5000 files"

# --- A fork loop in a host pids cgroup of 60.
if [ -d /sys/fs/cgroup/pids ] && mkdir "/sys/fs/cgroup/pids/sentry-bombs-$$" 2>/dev/null; then
  cg=/sys/fs/cgroup/pids/sentry-bombs-$$
  echo 60 >"$cg/pids.max"
  in_cg() { bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$@"; }
  native=$(in_cg "$exhaust" fork 2>&1)
  out=$(in_cg timeout -s KILL 60 "$sentry_run" --platform="$platform" --tty=never -- \
    "$exhaust" fork 2>&1)
  check "fork loop in a pids cgroup of 60: as natively ($out vs $native)" test "$out" = "$native"
  check "... EAGAIN" has "$native" "EAGAIN\|Resource temporarily"
  sleep 0.5
  check "... the cgroup is empty afterwards" test -z "$(cat "$cg/cgroup.procs")"
  rmdir "$cg" && cg=
else
  echo "note: no host pids cgroup can be made here: the cgroup fork loop is not run"
fi

# --- A CPU spinner under --timeout.
start=$(date +%s%N)
run --timeout 3s -- /bin/sh -c '(while :; do :; done) & while :; do :; done'
took=$((($(date +%s%N) - start) / 1000000))
check "CPU spinner under --timeout 3s: exit status 124 (got $status)" test "$status" -eq 124
check "... the message ($out)" test "$out" = "sentry-run: timeout 3s reached; killed"
check "... within 3-6 s (${took} ms)" test "$took" -ge 3000 -a "$took" -lt 6000

# --- The other bombs, each bounded by its limit.
run --pids 64 --timeout 5s -- /bin/bash -c ':(){ :|:& };: 2>/dev/null; sleep 30'
check "fork bomb under --pids 64 --timeout 5s: exit status 124 (got $status)" test "$status" -eq 124
run --memory 256m -- "$py" -c '
x = []
try:
    while True:
        x.append(bytearray(16 << 20))
except MemoryError:
    print("memory-error")'
check "memory bomb under --memory 256m: MemoryError ($out)" test "$out" = memory-error
run --pids 64 --timeout 20s -- "$py" -c '
import threading, time
try:
    while True:
        threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
except RuntimeError as e:
    print("refused:", e)'
check "thread bomb under --pids 64: refused ($out)" has "$out" "^refused: can't start new thread"
run --open-files 256 -- "$py" -c '
fs = []
try:
    while True:
        fs.append(open("/dev/null"))
except OSError as e:
    print("errno", e.errno)'
check "fd bomb under --open-files 256: EMFILE ($out)" test "$out" = "errno 24"
run --tmpfs-size 64m -- /bin/sh -c 'dd if=/dev/zero of=/tmp/fill bs=1M count=200 2>&1 | grep -o "No space left"'
check "in-memory layer fill under --tmpfs-size 64m: ENOSPC ($out)" test "$out" = "No space left"

kill "$prober" && wait "$prober" 2>/dev/null
prober=
worst=$(cat "$base/worst" 2>/dev/null || echo 99999)
check "the host answered within 1 s throughout (worst fork+exec: ${worst} ms)" test "$worst" -lt 1000
sleep 0.5
after=$(leftovers)
check "nothing is left behind (before: $before; after: $after)" test "$before" = "$after"
[ "$fail" -eq 0 ] && echo "bombs.sh ($platform): PASS"
exit "$fail"
