# Sourced by cli.sh (its helpers: rt, make_bundle, pass, fail, reaped, expect_fail): the
# container's host cgroup (linux.resources, cgroupsPath), update, events, kill --all with a
# catchable signal, and root.readonly.

# edit_config BUNDLE PYTHON: runs PYTHON with `c` the bundle's config.json, then saves it.
edit_config() {
  python3 - "$WORK/$1/config.json" "$2" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
exec(sys.argv[2])
json.dump(c, open(sys.argv[1], "w"))
PY
}
cg_dir() {  # ID CONTROLLER: the container's group directory in that hierarchy
  python3 -c '
import json, sys
for d in json.load(open(sys.argv[1]))["cgroupDirs"]:
    if sys.argv[2] in d.split("/")[4].split(","): print(d)' "$root/$1/state.json" "$2"
}

# --- update and events errors ---
expect_fail "update of an unknown container" "container nosuch does not exist" rt update --memory 1m nosuch
expect_fail "update with a bad size" "--memory: invalid size" rt update --memory lots nosuch
expect_fail "events of an unknown container" "container nosuch does not exist" rt events --stats nosuch

if [[ ! -w /sys/fs/cgroup/memory && ! -w /sys/fs/cgroup/cgroup.procs ]]; then
  echo "note: no writable cgroup hierarchy here; the cgroup checks are skipped"
else
  # --- linux.resources: the host cgroup, made, filled, changed, read, removed ---
  make_bundle res '["sh", "-c", "echo started; sleep 60"]'
  edit_config res 'c["linux"] = {"cgroupsPath": "/sentry-oci-test/res-'$$'", "resources": {
    "memory": {"limit": 67108864, "swap": 67108864}, "pids": {"limit": 50},
    "cpu": {"shares": 512, "quota": 50000, "period": 100000, "cpus": "0"},
    "devices": [{"allow": False, "access": "rwm"}]}}'
  rt create -b "$WORK/res" --pid-file "$WORK/res.pid" res >"$WORK/res.out" 2>&1 && rt start res
  mem=$(cg_dir res memory)
  [[ $mem == */sentry-oci-test/res-$$ && $(cat "$mem/memory.limit_in_bytes") == 67108864 ]] &&
    pass "create: memory cgroup $mem, limit 64 MiB" || fail "memory cgroup: '$mem'"
  [[ ! -e $mem/memory.memsw.limit_in_bytes || $(cat "$mem/memory.memsw.limit_in_bytes") == 67108864 ]] &&
    pass "create: memory+swap limit" || fail "memsw: $(cat "$mem/memory.memsw.limit_in_bytes")"
  [[ $(cat "$(cg_dir res pids)/pids.max") == 50 ]] && pass "create: pids.max 50" ||
    fail "pids.max: $(cat "$(cg_dir res pids)/pids.max")"
  cpu=$(cg_dir res cpu)
  [[ $(cat "$cpu/cpu.shares") == 512 && $(cat "$cpu/cpu.cfs_quota_us") == 50000 &&
     $(cat "$(cg_dir res cpuset)/cpuset.cpus") == 0 ]] &&
    pass "create: cpu shares, quota, cpuset" || fail "cpu: $(cat "$cpu/cpu.shares" "$cpu/cpu.cfs_quota_us")"
  sleep 0.5
  members=$(cat "$mem/cgroup.procs" | sort -n | tr '\n' ' ')
  sandbox=$(rt ps --format json res | tr -d '[]' | tr , ' ')
  missing=""
  for p in $sandbox; do grep -qw "$p" <<<"$members" || missing="$missing $p"; done
  [[ -n $sandbox && -z $missing ]] && pass "every host process of the sandbox is in the group ($sandbox)" ||
    fail "not in the group:$missing (group: $members)"
  stats=$(rt events --stats res)
  python3 -c '
import json, sys
e = json.loads(sys.argv[1]); d = e["data"]
assert e["type"] == "stats" and e["id"] == "res", e
assert d["memory"]["usage"]["limit"] == 67108864 and d["memory"]["usage"]["usage"] > 0, d["memory"]
assert d["pids"]["limit"] == 50 and d["pids"]["current"] >= 3, d["pids"]
assert d["cpu"]["usage"]["total"] > 0, d["cpu"]' "$stats" &&
    pass "events --stats: memory usage and limit, pids, cpu" || fail "events --stats: $stats"
lines=$(timeout 2.5 "$SENTRY" --root "$root" events --interval 1s res | grep -c '"type":"stats"')
  ((lines >= 2)) && pass "events --interval 1s: $lines stats lines in 2.5 s" || fail "events: $lines lines"
  rt update --memory 128m --pids-limit 60 --cpu-quota 20000 res &&
    [[ $(cat "$mem/memory.limit_in_bytes") == 134217728 && $(cat "$(cg_dir res pids)/pids.max") == 60 &&
       $(cat "$cpu/cpu.cfs_quota_us") == 20000 ]] &&
    pass "update --memory 128m --pids-limit 60 --cpu-quota 20000: live" ||
    fail "update flags: $(cat "$mem/memory.limit_in_bytes")"
  echo '{"memory":{"limit":100663296,"reservation":0,"swap":134217728,"kernel":0},"cpu":{"shares":0,"quota":0,"period":0},"pids":{"limit":40},"blockIO":{"weight":0}}' |
    rt update --resources - res &&
    [[ $(cat "$mem/memory.limit_in_bytes") == 100663296 && $(cat "$(cg_dir res pids)/pids.max") == 40 &&
       $(cat "$cpu/cpu.shares") == 512 ]] &&
    pass "update --resources - (Docker's JSON): 96 MiB, 40 pids, shares kept" ||
    fail "update --resources: $(cat "$mem/memory.limit_in_bytes")"
  # The guest's view of its own group: read-only, live (the limits as updated just now), and
  # /proc/self/cgroup at the root of each hierarchy, as a runc container in its own cgroup
  # namespace sees them.
  out=$(rt exec res sh -c 'cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/cpu/cpu.shares
grep -c "^[0-9]*:memory:/\$" /proc/self/cgroup; tail -1 /proc/self/cgroup
(echo 1 >/sys/fs/cgroup/pids/pids.max) 2>/dev/null && echo written; cat /sys/fs/cgroup/pids/pids.max' 2>&1)
  [[ $out == $'100663296\n40\n512\n1\n0::/\n40' ]] &&
    pass "the guest reads its limits in /sys/fs/cgroup (live, read-only) and /proc/self/cgroup" ||
    fail "guest cgroup view: $(echo $out)"
  expect_fail "update --resources with bad JSON" "not valid JSON" sh -c "echo '{' | \"$SENTRY\" --root '$root' update -r - res"
  expect_fail "update with a wrong type" "resources.pids.limit: expected an integer" \
    sh -c "echo '{\"pids\":{\"limit\":\"x\"}}' | \"$SENTRY\" --root '$root' update -r - res"
  rt kill res KILL && [[ $(reaped "$(cat "$WORK/res.pid")") == "signal 9" ]] && rt delete res &&
    [[ ! -e $mem && ! -e $cpu ]] && pass "delete removes the cgroup" || fail "cgroup left: $mem"

  # --- the limits inside: ENOMEM from the Sentry, an OOM kill from the host, EAGAIN ---
  # The Sentry's accounting has the same 64 MiB: tail's ever larger buffer is refused (ENOMEM)
  # before it is touched; dd's 63 MiB buffer fits the accounting, but touched, with the
  # sandbox's own memory, passes the host group's limit: an OOM kill, as under runc.
  make_bundle hog '["sh", "-c", "tail /dev/zero; echo tail-ended $?"]'
  edit_config hog 'c["linux"] = {"cgroupsPath": "/sentry-oci-test/hog-'$$'",
    "resources": {"memory": {"limit": 67108864, "swap": 67108864}}}'
  rt create -b "$WORK/hog" --pid-file "$WORK/hog.pid" hog >"$WORK/hog.out" 2>&1 && rt start hog
  got=$(reaped "$(cat "$WORK/hog.pid")")
  rt delete hog
  grep -q "tail: out of memory" "$WORK/hog.out" && grep -q "tail-ended 1" "$WORK/hog.out" &&
    [[ $got == "exit 0" ]] && pass "64 MiB: tail /dev/zero gets ENOMEM inside ($got)" ||
    fail "memory hog: $got, $(cat "$WORK/hog.out")"
  make_bundle dd '["dd", "if=/dev/zero", "of=/dev/null", "bs=63M", "count=1", "iflag=fullblock"]'
  ln -sf busybox "$WORK/dd/rootfs/bin/dd"
  edit_config dd 'c["linux"] = {"cgroupsPath": "/sentry-oci-test/dd-'$$'",
    "resources": {"memory": {"limit": 67108864, "swap": 67108864}}}'
  rt create -b "$WORK/dd" --pid-file "$WORK/dd.pid" dd >"$WORK/dd.out" 2>&1 && rt start dd
  got=$(reaped "$(cat "$WORK/dd.pid")")
  kills=$(sed -n 's/^oom_kill //p' "$(cg_dir dd memory)/memory.oom_control" 2>/dev/null)
  rt delete dd
  [[ $got == "signal 9" && ${kills:-0} -ge 1 ]] &&
    pass "64 MiB: dd touching 63 MiB is OOM-killed by the host group ($got, oom_kill $kills)" ||
    fail "dd 63M: $got, oom_kill '${kills}', $(cat "$WORK/dd.out")"
  make_bundle bomb '["sh", "-c", "i=0; while [ $i -lt 80 ]; do sleep 5 & i=$((i+1)); done; echo spawned"]'
  edit_config bomb 'c["linux"] = {"cgroupsPath": "/sentry-oci-test/bomb-'$$'", "resources": {"pids": {"limit": 50}}}'
  rt create -b "$WORK/bomb" --pid-file "$WORK/bomb.pid" bomb >"$WORK/bomb.out" 2>&1 && rt start bomb
  got=$(reaped "$(cat "$WORK/bomb.pid")")
  rt delete bomb
  # busybox sh gives up at its first failed fork (exit 2), as it does on a host.
  grep -q "can't fork: Resource temporarily unavailable" "$WORK/bomb.out" && [[ $got == "exit 2" ]] &&
    pass "80 forks under pids.limit 50: EAGAIN inside, the shell's own exit 2 ($got)" ||
    fail "fork bomb: $got, $(cat "$WORK/bomb.out")"
  # The groups are gone with their containers; the parent the test named is ours to remove.
  find /sys/fs/cgroup -maxdepth 5 -type d -name sentry-oci-test -exec rmdir {} + 2>/dev/null
fi

# --- kill --all: a catchable signal reaches every guest process, not only the init ---
# (Signalled once both have set their traps: a loaded machine may start the child late.)
make_bundle ka2 '["sh", "-c", "sh -c '\''trap \"echo child-usr1; exit 0\" USR1; echo child-ready; while :; do sleep 0.1; done'\'' & trap \"echo init-usr1\" USR1; echo ready; wait; wait; echo done"]'
rt create -b "$WORK/ka2" --pid-file "$WORK/ka2.pid" ka2 >"$WORK/ka2.out" 2>&1 && rt start ka2
for _ in $(seq 100); do grep -q ready "$WORK/ka2.out" && grep -q child-ready "$WORK/ka2.out" && break; sleep 0.1; done
rt kill --all ka2 USR1
got=$(reaped "$(cat "$WORK/ka2.pid")")
grep -q child-usr1 "$WORK/ka2.out" && grep -q init-usr1 "$WORK/ka2.out" && [[ $got == "exit 0" ]] &&
  pass "kill --all USR1 reaches the init and its child ($got)" || fail "kill --all USR1: $got, $(cat "$WORK/ka2.out")"
rt delete ka2

# --- root.readonly: EROFS everywhere but the mounts that say otherwise ---
make_bundle ro '["sh", "-c", "touch /x 2>&1; touch /tmp/y 2>&1; echo > /scratch/z && echo scratch-ok; echo > /dev/null && echo dev-ok"]'
edit_config ro 'c["root"]["readonly"] = True
c["mounts"].append({"destination": "/scratch", "type": "tmpfs", "source": "tmpfs"})'
out=$(rt run -b "$WORK/ro" ro 2>&1)
[[ $(grep -c "Read-only file system" <<<"$out") == 2 ]] && grep -q scratch-ok <<<"$out" && grep -q dev-ok <<<"$out" &&
  pass "root.readonly: / and /tmp EROFS, a tmpfs mount and /dev writable" || fail "readonly: $out"

# --- process.rlimits (NOFILE, FSIZE) and oomScoreAdj ---
make_bundle rl '["sh", "-c", "ulimit -n; ulimit -f; cat /proc/self/oom_score_adj; sleep 1"]'
edit_config rl 'c["process"]["rlimits"] = [{"type": "RLIMIT_NOFILE", "soft": 100, "hard": 100},
  {"type": "RLIMIT_FSIZE", "soft": 1048576, "hard": 1048576}, {"type": "RLIMIT_NPROC", "soft": 9, "hard": 9}]
c["process"]["oomScoreAdj"] = 500'
rt create -b "$WORK/rl" --pid-file "$WORK/rl.pid" rl >"$WORK/rl.out" 2>&1 && rt start rl
adj=$(cat "/proc/$(cat "$WORK/rl.pid")/oom_score_adj" 2>/dev/null)
reaped "$(cat "$WORK/rl.pid")" >/dev/null
rt delete rl
[[ $(sed -n 1,2p "$WORK/rl.out" | tr '\n' ' ') == "100 2048 " ]] &&
  pass "process.rlimits: NOFILE 100, FSIZE 1 MiB (2048 blocks)" || fail "rlimits: $(cat "$WORK/rl.out")"
[[ $adj == 500 ]] && pass "process.oomScoreAdj 500 on the sandbox process" || fail "oomScoreAdj: '$adj'"

# --- poststart (run by start) and poststop (run by delete) hooks, with the state on stdin ---
make_bundle hk '["sh", "-c", "sleep 0.5"]'
edit_config hk 'c["hooks"] = {
  "poststart": [{"path": "/bin/sh", "args": ["sh", "-c", "cat >'$WORK'/poststart.json"]}],
  "poststop": [{"path": "/bin/sh", "args": ["sh", "-c", "cat >'$WORK'/poststop.json"]},
               {"path": "/bin/false"}]}'
rt create -b "$WORK/hk" --pid-file "$WORK/hk.pid" hk && rt start hk
python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); assert s["id"]=="hk" and s["status"]=="running", s' \
  "$WORK/poststart.json" 2>/dev/null && pass "poststart hook: run by start, state running on stdin" ||
  fail "poststart: $(cat "$WORK/poststart.json" 2>&1)"
reaped "$(cat "$WORK/hk.pid")" >/dev/null
err=$(rt delete hk 2>&1)
rc=$?
python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); assert s["status"]=="stopped", s' \
  "$WORK/poststop.json" 2>/dev/null && ((rc == 0)) && [[ $err == *"warning: poststop hook /bin/false"* ]] &&
  pass "poststop hooks: run by delete; a failing one is a warning ($err)" ||
  fail "poststop: rc=$rc $err $(cat "$WORK/poststop.json" 2>&1)"
