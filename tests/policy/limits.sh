#!/bin/bash
# sentry-run's sandbox-wide limits (docs/sentry-run.md, "Limits").
#
#   limits.sh SENTRY_RUN PLATFORM
#
# --timeout kills the whole sandbox (one line, exit status 124); --memory: the Sentry's
# accounting fails mmap with ENOMEM and tmpfs writes with ENOSPC, and the host memory cgroup
# (where one can be made) ends the sandbox on an OOM kill (one line, 137) and is removed at
# exit; --open-files, --cpu-time and --file-size are the guest's RLIMIT_NOFILE, RLIMIT_CPU
# and RLIMIT_FSIZE with Linux's EMFILE, SIGXCPU, SIGXFSZ and EFBIG. Bombs (fork, thread, fd,
# memory, tmpfs fill) end with their message or errno, each within a few seconds, and no
# process of this build's sentry-run or stub is left on the host. The policy file's keys,
# --print-policy, and bad values (one line, exit status 2). Exits 0 iff every check held.
set -u
if [ $# -ne 2 ]; then
  echo "usage: $0 SENTRY_RUN PLATFORM" >&2
  exit 2
fi
sentry_run=$(readlink -f "$1")  # absolute: some checks run from /
platform=$2
bindir=$(dirname "$(readlink -f "$sentry_run")")
py=/usr/bin/python3
base=$(mktemp -d) || exit 2
trap 'rm -rf "$base"' EXIT
source "$(dirname "$0")/../lib/checks.sh"
has() { grep -q -- "$2" <<<"$1"; }
# run ARGS...: sentry-run on this platform, bounded by the host's timeout(1) in case a limit
# does not hold; stdout and stderr in $out, the status in $status.
run() {
  out=$(timeout -s KILL 60 "$sentry_run" --platform="$platform" --tty=never "$@" 2>&1)
  status=$?
}
before=$(build_processes)

# --- --timeout: the wall clock ends the whole sandbox.
run --timeout 2s -- /bin/sh -c 'trap "" TERM INT HUP; sleep 30; echo not-killed'
check "--timeout 2s: exit status 124 (got $status)" test "$status" -eq 124
check "--timeout 2s: the message ($out)" test "$out" = "sentry-run: timeout 2s reached; killed"
run --timeout 30s -- /bin/sh -c 'exit 3'
check "--timeout 30s: a guest that ends first keeps its status (got $status)" test "$status" -eq 3
"$sentry_run" --platform="$platform" --tty=never --timeout 30s -- /bin/sleep 20 >/dev/null 2>&1 &
watcher=$!
sleep 1
kill -TERM "$watcher"
wait "$watcher"
status=$?
check "--timeout: a SIGTERM to sentry-run is passed on and ends the sandbox ($status, 143)" \
  test "$status" -eq 143
echo '{"limits": {"timeout": 1.5}}' >"$base/timeout.json"
run --policy "$base/timeout.json" -- /bin/sleep 30
check "limits.timeout 1.5: exit status 124 (got $status)" test "$status" -eq 124
check "limits.timeout 1.5: the message ($out)" test "$out" = "sentry-run: timeout 1.5s reached; killed"
check "after the timeouts no process is left ($(build_processes) vs $before)" test "$(build_processes)" -eq "$before"

# --- --memory: the Sentry's accounting.
mem_bomb='x = []
try:
    while True:
        x.append(bytearray(16 << 20))
except MemoryError:
    print("memory-error after", len(x) * 16, "MiB")'
run --memory 256m -- $py -c "$mem_bomb"
check "--memory 256m: a memory bomb gets MemoryError ($out)" has "$out" "^memory-error after"
check "--memory 256m: ... and the guest exits 0 (got $status)" test "$status" -eq 0
got=$(sed -n 's/^memory-error after \([0-9]*\) MiB/\1/p' <<<"$out")
check "--memory 256m: it got most of it, not more (${got:-?} MiB)" \
  test "${got:-0}" -ge 128 -a "${got:-999}" -le 256
run --memory 256m -- $py -c '
import mmap
try:
    mmap.mmap(-1, 512 << 20, flags=mmap.MAP_PRIVATE)
    print("mapped")
except OSError as e:
    print("errno", e.errno)
mmap.mmap(-1, 64 << 20, flags=mmap.MAP_PRIVATE)
print("small-mapped")'
check "--memory 256m: a 512 MiB private mmap fails with ENOMEM ($out)" has "$out" "^errno 12"
check "--memory 256m: a 64 MiB one still works" has "$out" "^small-mapped"
run -- $py -c 'import mmap; mmap.mmap(-1, 512 << 20, flags=mmap.MAP_PRIVATE); print("mapped")'
check "without --memory the 512 MiB mmap works" has "$out" "^mapped"
run --memory 64m -- /bin/sh -c 'for i in $(seq 200); do /bin/true || exit 1; done; echo loop-ok'
check "--memory 64m: 200 fork+exec+exit give their memory back ($status)" has "$out" "^loop-ok$"
run --memory 64m -- /bin/sh -c 'dd if=/dev/zero of=/tmp/fill bs=1M count=200 2>&1 | grep -o "No space left"'
check "--memory 64m: a tmpfs fill ends with ENOSPC ($out)" has "$out" "No space left"
run --memory 64m -- /bin/sh -c 'dd if=/dev/zero of=/dev/shm/fill bs=1M count=200 2>&1 | grep -o "No space left"'
check "--memory 64m: /dev/shm too ($out)" has "$out" "No space left"

# --- --memory: the host cgroup, for what the accounting does not see (shared anonymous
# memory, touched page by page).
run --debug --memory 64m -- /bin/true
cg_line=$(grep -o "host memory cgroup [^ ]*\|no host memory cgroup" <<<"$out" | head -1)
check "--memory --debug says whether a host cgroup was made ($cg_line)" test -n "$cg_line"
cg_dir=$(sed -n 's/^host memory cgroup \([^,]*\),*$/\1/p' <<<"$cg_line")
if [ -n "$cg_dir" ]; then
  check "the host cgroup $cg_dir is removed at exit" test ! -e "$cg_dir"
  run --memory 64m -- $py -c '
import mmap
m = mmap.mmap(-1, 512 << 20)
for i in range(0, 512 << 20, 4096):
    m[i] = 1
print("survived")'
  check "--memory 64m: shared memory past the cgroup's limit: exit status 137 (got $status)" \
    test "$status" -eq 137
  check "--memory 64m: the message ($out)" has "$out" "^sentry-run: memory limit 64 MiB reached; killed$"
else
  echo "skip: no host memory cgroup here; the OOM backstop is not tested"
fi
check "after the memory checks no process is left ($(build_processes) vs $before)" test "$(build_processes)" -eq "$before"

# --- Unprivileged (nobody): no cgroup can be made; --debug says so, and the accounting and
# the timeout still hold.
nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null && $nobody test -x "$sentry_run"; then
  out=$(cd / && timeout -s KILL 60 $nobody "$sentry_run" --platform="$platform" --tty=never \
    --debug --memory 64m -- $py -c '
import mmap
try:
    mmap.mmap(-1, 512 << 20, flags=mmap.MAP_PRIVATE)
except OSError as e:
    print("errno", e.errno)' 2>&1)
  check "as nobody, --debug: no host memory cgroup, and why" has "$out" \
    "^sentry-run: no host memory cgroup (.*): the memory limit rests on the Sentry's accounting alone$"
  check "as nobody, --memory 64m: a 512 MiB private mmap fails with ENOMEM" has "$out" "^errno 12$"
  out=$(cd / && timeout -s KILL 60 $nobody "$sentry_run" --platform="$platform" --tty=never \
    --timeout 1s -- /bin/sleep 30 2>&1)
  status=$?
  check "as nobody, --timeout 1s: exit status 124 (got $status)" test "$status" -eq 124
else
  echo "skip: not root, or no setpriv: the unprivileged checks are not run"
fi

# --- --open-files: RLIMIT_NOFILE, EMFILE.
run --open-files 64 -- /bin/sh -c 'echo "$(ulimit -Sn) $(ulimit -Hn)"'
check "--open-files 64: the guest's RLIMIT_NOFILE is 64 64 ($out)" test "$out" = "64 64"
run --open-files 64 -- $py -c '
fs = []
try:
    while True:
        fs.append(open("/dev/null"))
except OSError as e:
    print("errno", e.errno, "after", len(fs))'
check "--open-files 64: an fd bomb ends with EMFILE ($out)" has "$out" "^errno 24 after "
n=$(sed -n 's/^errno 24 after \([0-9]*\)$/\1/p' <<<"$out")
check "--open-files 64: ... after at most 61 files (${n:-?})" test "${n:-99}" -le 61 -a "${n:-0}" -ge 50
# As on Linux, only CAP_SYS_RESOURCE raises a hard limit: a guest that is root in the sandbox
# may; one that dropped to nobody may not.
run --open-files 64 -- $py -c '
import os, resource
os.setgid(65534)
os.setuid(65534)
try:
    resource.setrlimit(resource.RLIMIT_NOFILE, (128, 128))
    print("raised")
except ValueError:
    print("refused")'
check "--open-files 64: an unprivileged guest cannot raise it ($out)" test "$out" = refused

# --- --cpu-time: RLIMIT_CPU, SIGXCPU then SIGKILL.
run --cpu-time 1 -- /bin/sh -c 'echo "$(ulimit -St) $(ulimit -Ht)"'
check "--cpu-time 1: the guest's RLIMIT_CPU is 1 2 ($out)" test "$out" = "1 2"
# A process dies of SIGXCPU (152) at the soft limit; one that catches it, of SIGKILL (137) at
# the hard one. The command itself is not PID 1 (the Sentry's init is), so it dies as natively.
run --cpu-time 1 --timeout 20s -- /bin/sh -c '/bin/sh -c "while :; do :; done"; echo "loop $?"
/usr/bin/python3 -c "
import signal
signal.signal(signal.SIGXCPU, lambda *a: print(\"xcpu\", flush=True))
while True: pass"
echo "catcher $?"'
check "--cpu-time 1: a busy loop dies of SIGXCPU ($out)" has "$out" "^loop 152$"
check "--cpu-time 1: a process catching SIGXCPU runs its handler" has "$out" "^xcpu$"
check "--cpu-time 1: ... and is killed at the hard limit" has "$out" "^catcher 137$"
run --cpu-time 1 --timeout 20s -- /bin/sh -c 'while :; do :; done'
check "--cpu-time 1: the busy command dies of SIGXCPU (exit status $status)" \
  test "$status" -eq 152

# --- --file-size: RLIMIT_FSIZE, SIGXFSZ, EFBIG.
run --file-size 1m -- /bin/bash -c 'echo "$(ulimit -f)"
dd if=/dev/zero of=/tmp/f bs=4k count=512 2>/dev/null; echo "dd $?"; wc -c </tmp/f'
check "--file-size 1m: ulimit -f shows 1024 blocks ($out)" has "$out" "^1024$"
check "--file-size 1m: dd dies of SIGXFSZ (153)" has "$out" "^dd 153$"
check "--file-size 1m: the file stops at 1 MiB" has "$out" "^1048576$"
run --file-size 1m -- $py -c '
import os, signal
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
fd = os.open("/tmp/f", os.O_WRONLY | os.O_CREAT)
print("wrote", os.write(fd, b"x" * (2 << 20)))
try:
    os.write(fd, b"x")
except OSError as e:
    print("errno", e.errno)
try:
    os.ftruncate(fd, 4 << 20)
except OSError as e:
    print("truncate errno", e.errno)'
check "--file-size 1m: a write is cut at the limit ($out)" has "$out" "^wrote 1048576$"
check "--file-size 1m: the next one fails with EFBIG" has "$out" "^errno 27$"
check "--file-size 1m: ftruncate past it fails with EFBIG" has "$out" "^truncate errno 27$"

# --- Bombs: each ends by itself or by its bound, within seconds.
run --pids 64 --timeout 5s -- /bin/bash -c ':(){ :|:& };: 2>/dev/null; sleep 30'
check "fork bomb under --pids 64 --timeout 5s: exit status 124 (got $status)" test "$status" -eq 124
check "fork bomb: the timeout's message" has "$out" "^sentry-run: timeout 5s reached; killed$"
run --pids 64 --timeout 20s -- $py -c '
import threading, time
n = 0
try:
    while True:
        threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
        n += 1
except RuntimeError as e:
    print("threads", n, e)'
check "thread bomb under --pids 64: can't start new thread ($out)" has "$out" "^threads [0-9]* "
n=$(sed -n 's/^threads \([0-9]*\) .*/\1/p' <<<"$out")
check "thread bomb under --pids 64: at most 63 threads besides the main one (${n:-?})" \
  test "${n:-99}" -le 63 -a "${n:-0}" -ge 32
run --memory 256m --timeout 20s -- $py -c '
import threading, time
n = 0
try:
    while True:
        threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
        n += 1
except RuntimeError as e:
    print("threads", n, e)'
check "thread bomb under --memory 256m: its stacks hit the limit ($out)" has "$out" "^threads "
check "after the bombs no process is left ($(build_processes) vs $before)" test "$(build_processes)" -eq "$before"

# --- Policy file and --print-policy.
cat >"$base/all.json" <<'JSON'
{"limits": {"timeout": "5m", "memory": "2g", "openFiles": 256, "cpuTime": 60,
            "fileSize": "10m"}}
JSON
got=$("$sentry_run" --policy "$base/all.json" --open-files 128 --print-policy | $py -c '
import json, sys
l = json.load(sys.stdin)["limits"]
print(l["timeout"], l["memory"], l["openFiles"], l["cpuTime"], l["fileSize"])')
check "--print-policy: the file's limits, --open-files over it ($got)" \
  test "$got" = "5m 2g 128 60 10m"
got=$("$sentry_run" --print-policy | $py -c '
import json, sys
l = json.load(sys.stdin)["limits"]
print(l["timeout"], l["memory"], l["openFiles"], l["cpuTime"], l["fileSize"])')
check "--print-policy: the defaults ($got)" test "$got" = "none none inherit none none"
"$sentry_run" --policy "$base/all.json" --print-policy | $py -c '
import json, sys
l = json.load(sys.stdin)["limits"]
json.dump({"limits": {k: l[k] for k in ("timeout", "memory", "openFiles", "cpuTime", "fileSize")}},
          sys.stdout)' >"$base/printed.json"
"$sentry_run" --print-policy >"$base/defaults.json"
$py -c '
import json, sys
l = json.load(open(sys.argv[1]))["limits"]
json.dump({"limits": {k: l[k] for k in ("timeout", "memory", "openFiles", "cpuTime", "fileSize")}},
          open(sys.argv[1], "w"))' "$base/defaults.json"
for f in printed defaults; do
  got=$("$sentry_run" --policy "$base/$f.json" --print-policy 2>&1 >/dev/null)
  check "--print-policy's limits ($f) are accepted back ($got)" test -z "$got"
done
run --policy "$base/all.json" -- /bin/bash -c 'echo "$(ulimit -n) $(ulimit -t) $(ulimit -f)"'
check "the policy's limits reach the guest ($out)" test "$out" = "256 60 10240"

bad_flag() {  # bad_flag EXPECTED-LINE ARGS...
  local want=$1
  shift
  local err st
  err=$("$sentry_run" "$@" -- /bin/echo ran 2>&1 >/dev/null)
  st=$?
  check "bad $*: exit status 2 (got $st)" test "$st" -eq 2
  check "bad $*: one line ($err)" test "$err" = "$want"
}
bad_flag 'sentry-run: --timeout "soon": expected a duration such as "30s", "5m" or 10' --timeout soon
bad_flag 'sentry-run: --memory "1k": expected a size of at least 16m, such as "512m" or "2g"' --memory 1k
bad_flag 'sentry-run: --open-files "0": expected a number from 1 to 1048576' --open-files 0
bad_flag 'sentry-run: --cpu-time "-1": expected a positive number of seconds' --cpu-time=-1
bad_flag 'sentry-run: --file-size "ten": expected a size such as "100m" or "1g"' --file-size ten
bad() {  # bad NAME JSON EXPECTED-KEY-AND-MESSAGE
  printf '%s\n' "$2" >"$base/bad-$1.json"
  bad_flag "sentry-run: policy $base/bad-$1.json: $3" --policy "$base/bad-$1.json"
}
bad timeout '{"limits": {"timeout": "1 hour"}}' \
  'limits.timeout: expected a duration such as "30s", "5m" or 10'
bad memory '{"limits": {"memory": true}}' \
  'limits.memory: expected a size of at least 16m, such as "512m" or "2g"'
bad open-files '{"limits": {"openFiles": 2000000}}' \
  'limits.openFiles: expected a number from 1 to 1048576'
bad cpus '{"limits": {"cpus": 2}}' 'limits.cpus: not supported yet'

check "at the end no process is left ($(build_processes) vs $before)" test "$(build_processes)" -eq "$before"
[ "$fail" -eq 0 ] && echo "limits.sh ($platform): PASS"
exit "$fail"
