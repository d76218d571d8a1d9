#!/usr/bin/env bash
# The runtime CLI alone, against hand-written bundles with a busybox root: every subcommand's
# happy path and errors, state transitions, exit statuses as containerd-shim sees them (this
# script runs under oci_subreaper, which reaps the orphaned sandbox processes), and 20
# concurrent creates.
# usage: cli.sh SENTRY SUBREAPER [IDS_PROBE]   (exit 77: skipped)
set -uo pipefail
SENTRY=$1
SUBREAPER=$2
IDS_PROBE=${3:-}  # oci_ids_probe, for cli_process.sh
if [[ ${OCI_CLI_INNER:-} != 1 ]]; then
  BUSYBOX=$(command -v busybox || true)
  if [[ -z $BUSYBOX ]] || ! file -L "$BUSYBOX" 2>/dev/null | grep -q static; then
    echo "SKIP: a static busybox is needed (apt-get install busybox-static; tools/setup.sh)"
    exit 77
  fi
  work=$(mktemp -d /tmp/sentry-oci-cli.XXXXXX)
  trap 'rm -rf "$work"' EXIT
  mkdir -p "$work/reaped"
  OCI_CLI_INNER=1 OCI_REAP_DIR=$work/reaped WORK=$work BUSYBOX=$BUSYBOX \
    "$SUBREAPER" bash "$0" "$@"
  exit $?
fi

root=$WORK/state
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
pass() { echo "ok: $*"; }
rt() { "$SENTRY" --root "$root" "$@"; }

# A bundle in $WORK/NAME running ARGS (a JSON array) in a busybox root.
make_bundle() {
  local name=$1 args=$2 dir=$WORK/$1
  mkdir -p "$dir/rootfs/bin" "$dir/rootfs/tmp" "$dir/rootfs/etc"
  cp "$BUSYBOX" "$dir/rootfs/bin/busybox"
  for a in sh echo cat sleep true false ls pwd id hostname env kill; do
    ln -sf busybox "$dir/rootfs/bin/$a"
  done
  echo "hello from the bundle" >"$dir/motd"
  echo "notes" >"$dir/notes"
  cat > "$dir/config.json" <<JSON
{
  "ociVersion": "1.0.2-dev",
  "process": {"args": $args, "env": ["PATH=/bin", "FOO=bar"], "cwd": "/tmp",
              "user": {"uid": 0, "gid": 0}},
  "root": {"path": "rootfs"},
  "hostname": "oci-test",
  "mounts": [{"destination": "/proc", "type": "proc", "source": "proc"},
             {"destination": "/dev", "type": "tmpfs", "source": "tmpfs"},
             {"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup"},
             {"destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue"},
             {"destination": "/etc/motd", "type": "bind", "source": "motd",
              "options": ["rbind", "ro"]},
             {"destination": "/data/notes", "type": "bind", "source": "notes",
              "options": ["rbind", "rw"]}],
  "annotations": {"org.example.test": "cli"}
}
JSON
}

# Waits for the reaped status of host PID $1 (written by oci_subreaper), up to 20 s.
reaped() {
  local f=$OCI_REAP_DIR/$1
  for _ in $(seq 200); do
    [[ -f $f ]] && { cat "$f"; return; }
    sleep 0.1
  done
  echo "not reaped"
}

status_of() { rt state "$1" 2>/dev/null | sed -n 's/.*"status": "\(.*\)".*/\1/p'; }

# expect_fail DESCRIPTION PATTERN CMD...: CMD must exit non-zero with PATTERN on stderr in
# one line.
expect_fail() {
  local what=$1 pattern=$2
  shift 2
  local err rc
  err=$("$@" 2>&1 >/dev/null)
  rc=$?
  if ((rc == 0)); then
    fail "$what: exit 0"
  elif ! grep -q -- "$pattern" <<<"$err"; then
    fail "$what: stderr \"$err\" lacks \"$pattern\""
  elif (($(wc -l <<<"$err") != 1)); then
    fail "$what: more than one line: $err"
  else
    pass "$what (exit $rc: $err)"
  fi
}

# --- no container ---
out=$("$SENTRY" --version)
grep -q "^sentry version" <<<"$out" && grep -q "^spec: 1.0" <<<"$out" && pass "--version" ||
  fail "--version: $out"
"$SENTRY" features | python3 -c 'import json,sys; f=json.load(sys.stdin); assert f["ociVersionMax"]' &&
  pass "features is JSON" || fail "features"
mkdir -p "$WORK/specdir"
"$SENTRY" spec --bundle "$WORK/specdir" && python3 -c '
import json,sys; c=json.load(open(sys.argv[1])); assert c["process"]["args"]==["sh"], c' \
  "$WORK/specdir/config.json" && pass "spec" || fail "spec"
expect_fail "spec over an existing config.json" "already exists" "$SENTRY" spec -b "$WORK/specdir"
echo '{"storage-driver": "vfs", "runtimes": {"other": {"path": "/x"}}}' >"$WORK/daemon.json"
"$SENTRY" install --config "$WORK/daemon.json" --runtime-arg=--platform=ptrace >/dev/null &&
  python3 -c '
import json,sys; d=json.load(open(sys.argv[1])); r=d["runtimes"]
assert d["storage-driver"]=="vfs" and r["other"]=={"path":"/x"}, d
assert r["sentry"]["path"]==sys.argv[2] and r["sentry"]["runtimeArgs"]==["--platform=ptrace"], d
' "$WORK/daemon.json" "$(realpath "$SENTRY")" && pass "install keeps daemon.json and adds sentry" ||
  fail "install: $(cat "$WORK/daemon.json")"
echo '[1]' >"$WORK/bad-daemon.json"
expect_fail "install into a non-object daemon.json" "not a JSON object; not changed" \
  "$SENTRY" install --config "$WORK/bad-daemon.json"
"$SENTRY" create --help | grep -q -- "--pid-file" && pass "create --help" || fail "create --help"
expect_fail "unknown global flag" "unknown flag --bogus$" rt --bogus list
expect_fail "unknown subcommand flag" "unknown flag --bogus for list" rt list --bogus
expect_fail "unknown command" 'unknown command "frobnicate"' rt frobnicate
expect_fail "checkpoint" "not supported" rt checkpoint x
expect_fail "restore" "not supported" rt restore x
rm -f "$WORK/log.json"
rt --log "$WORK/log.json" --log-format json --bogus list 2>/dev/null
python3 -c '
import json,sys; l=[json.loads(x) for x in open(sys.argv[1])]; e=l[-1]
assert e["level"]=="error" and "bogus" in e["msg"] and e["time"], l' "$WORK/log.json" &&
  pass "bad flag logged as JSON to --log" || fail "JSON log of a bad flag: $(cat "$WORK/log.json")"
for cmd in state start kill delete; do
  expect_fail "$cmd of an unknown container" "container nosuch does not exist" rt "$cmd" nosuch
done
rt delete --force nosuch && pass "delete --force of an unknown container" ||
  fail "delete --force nosuch exited non-zero"
expect_fail "invalid id" "invalid container id" rt create -b "$WORK" ../x

# --- config.json errors ---
make_bundle bad '["true"]'
python3 - "$WORK/bad/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c["process"]["args"] = "true"; json.dump(c, open(sys.argv[1], "w"))
PY
rm -f "$WORK/log.json"
expect_fail "process.args of the wrong type" "config.json: process.args: expected an array" \
  rt --log "$WORK/log.json" --log-format=json create --bundle "$WORK/bad" bad1
grep -q '"msg":"config.json: process.args' "$WORK/log.json" && pass "bad field in log.json" ||
  fail "log.json: $(cat "$WORK/log.json")"
python3 - "$WORK/bad/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c["process"]["args"] = ["true"]; del c["root"]
json.dump(c, open(sys.argv[1], "w"))
PY
expect_fail "missing root.path" "config.json: root.path is missing" rt create -b "$WORK/bad" bad2
python3 - "$WORK/bad/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c["root"] = {"path": "rootfs", "readonly": "yes"}
json.dump(c, open(sys.argv[1], "w"))
PY
expect_fail "root.readonly of the wrong type" "config.json: root.readonly: expected true or false" \
  rt create -b "$WORK/bad" bad4
echo '{' > "$WORK/bad/config.json"
expect_fail "config.json not JSON" "not valid JSON" rt create -b "$WORK/bad" bad3
make_bundle noexe '["/nonexistent"]'
expect_fail "missing executable" 'exec: "/nonexistent": stat /nonexistent: no such file' \
  rt create -b "$WORK/noexe" noexe
[[ -z $(rt list -q) ]] && pass "failed creates leave no state" || fail "left: $(rt list -q)"

# --- hooks, and the sandbox's own network namespace ---
add_hook() {  # BUNDLE SCRIPT: a prestart hook running sh -c SCRIPT
  python3 - "$WORK/$1/config.json" "$2" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["hooks"] = {"prestart": [{"path": "/bin/sh", "args": ["sh", "-c", sys.argv[2]],
                            "env": ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"]}]}
json.dump(c, open(sys.argv[1], "w"))
PY
}
make_bundle hook '["true"]'
add_hook hook "cat > $WORK/hook.state"
rt create -b "$WORK/hook" --pid-file "$WORK/hook.pid" h1 &&
  python3 -c '
import json,sys; s=json.load(open(sys.argv[1]))
assert s["id"]=="h1" and s["pid"]==int(open(sys.argv[2]).read()) and s["status"]=="created", s
' "$WORK/hook.state" "$WORK/hook.pid" && pass "prestart hook gets the state on stdin" ||
  fail "hook state: $(cat "$WORK/hook.state" 2>&1)"
[[ $(readlink "/proc/$(cat "$WORK/hook.pid")/ns/net") != $(readlink /proc/self/ns/net) ]] &&
  pass "the sandbox has a network namespace of its own" || fail "sandbox in the host netns"
rt delete --force h1
add_hook hook "exit 3"
expect_fail "failing prestart hook" "prestart hook /bin/sh: exit status 3" \
  rt create -b "$WORK/hook" h2
if command -v ip >/dev/null && command -v nsenter >/dev/null; then
  # What Docker's bridge set-up does: an interface moved into the sandbox's namespace.
  # The sandbox's own namespace: the guest's traffic goes through what the hook set up.
  add_hook hook 'pid=$(sed "s/.*\"pid\":\([0-9]*\).*/\1/"); nsenter -t $pid -n ip link add v0 type veth peer name v1'
  rt create -b "$WORK/hook" h3 >"$WORK/h3.out" 2>&1 &&
    pass "an interface a hook adds to the sandbox's own network namespace is accepted" ||
    fail "hook-added interface: $(cat "$WORK/h3.out")"
  rt delete -f h3 >/dev/null 2>&1
fi
[[ -z $(rt list -q) ]] && pass "failed hooks leave no state" || fail "left: $(rt list -q)"

# --- created -> running -> stopped, kill by name, start twice, delete while running ---
make_bundle b1 '["sh", "-c", "trap \"exit 9\" TERM; trap \"exit 10\" USR1; echo \"started $FOO $(pwd) $(hostname) $(cat /etc/motd)\"; while :; do sleep 0.1; done"]'
rt --debug --log "$WORK/debug.log" create --bundle "$WORK/b1" --pid-file "$WORK/b1.pid" c1 \
  >"$WORK/c1.out" 2>&1
grep -q "level=debug msg=\"mount of type mqueue at /dev/mqueue is not supported: skipped\"" \
  "$WORK/debug.log" && pass "--debug logs what config.json asks for and is not applied" ||
  fail "debug log: $(cat "$WORK/debug.log")"
pid=$(cat "$WORK/b1.pid" 2>/dev/null)
[[ -n $pid ]] && kill -0 "$pid" && pass "create wrote the pid file ($pid)" || fail "pid file"
st=$(rt state c1)
python3 -c '
import json,sys
s=json.loads(sys.argv[1]); assert s["status"]=="created" and s["id"]=="c1", s
assert s["pid"]==int(sys.argv[2]) and s["bundle"]==sys.argv[3] and s["rootfs"]==sys.argv[3]+"/rootfs", s
assert s["annotations"]=={"org.example.test":"cli"} and s["created"].endswith("Z") and "ociVersion" in s, s
' "$st" "$pid" "$WORK/b1" && pass "state: created" || fail "state after create: $st"
expect_fail "duplicate id" "container c1 already exists" rt create -b "$WORK/b1" c1
sleep 0.3
[[ ! -s $WORK/c1.out ]] && pass "init held until start" || fail "ran before start: $(cat "$WORK/c1.out")"
rt start c1 && pass "start" || fail "start"
for _ in $(seq 50); do grep -q started "$WORK/c1.out" && break; sleep 0.1; done
grep -q "started bar /tmp oci-test hello from the bundle" "$WORK/c1.out" &&
  pass "env, cwd, hostname, a file bind, stdout" ||
  fail "output: $(cat "$WORK/c1.out")"
[[ $(status_of c1) == running ]] && pass "state: running" || fail "state: $(status_of c1)"
expect_fail "start of a started container" "it is running, not created" rt start c1
expect_fail "delete of a running container" "running: stop it first" rt delete c1
rt list | grep -q "^c1 .*running" && pass "list" || fail "list: $(rt list)"
rt list --format json | python3 -c 'import json,sys; assert json.load(sys.stdin)[0]["id"]=="c1"' &&
  pass "list --format json" || fail "list --format json"
ps_json=$(rt ps --format json c1)
python3 -c '
import json,sys; p=json.loads(sys.argv[1]); assert int(sys.argv[2]) in p and len(p) >= 3, p' "$ps_json" "$pid" &&
  pass "ps --format json: host PIDs $ps_json" || fail "ps: $ps_json"
rt ps c1 | grep -q "sentry-stub" && pass "ps (table) shows the stubs" || fail "ps table: $(rt ps c1)"
# File binds are live both ways, as bind mounts (Docker rewrites /etc/resolv.conf and
# /etc/hosts after create, in its prestart hook); a read-only one refuses writes.
echo "changed on the host" >"$WORK/b1/motd"
out=$(rt exec c1 sh -c 'cat /etc/motd; (echo x >/etc/motd) 2>&1 | sed "s/.*: //"
cat /data/notes; echo "from the guest" >>/data/notes; grep -c /data/notes /proc/self/mountinfo' 2>&1)
[[ $out == $'changed on the host\nRead-only file system\nnotes\n1' &&
   $(cat "$WORK/b1/notes") == $'notes\nfrom the guest' ]] &&
  pass "file binds: host changes seen inside, guest writes reach the host, ro refused" ||
  fail "file binds: $(echo $out) / host: $(cat "$WORK/b1/notes")"
# --- exec, into the running c1 ---
out=$(rt exec c1 sh -c 'echo "$FOO $(pwd) $PPID"; echo err >&2; exit 4' 2>"$WORK/exec.err")
rc=$?
[[ $rc == 4 && $out == "bar /tmp 0" && $(cat "$WORK/exec.err") == err ]] &&
  pass "exec: the container's env and cwd, ppid 0, stdout, stderr, exit 4" ||
  fail "exec: rc=$rc out=$out err=$(cat "$WORK/exec.err")"
out=$(echo through-stdin | rt exec c1 cat)
[[ $out == through-stdin ]] && pass "exec: stdin" || fail "exec stdin: $out"
cat >"$WORK/process.json" <<'JSON'
{"user": {"uid": 1000, "gid": 1000, "additionalGids": [1000, 44]}, "args": ["sh", "-c", "id; echo $X; pwd"],
 "env": ["PATH=/bin", "X=from-process-json"], "cwd": "/", "terminal": false}
JSON
out=$(rt exec --process "$WORK/process.json" c1)
[[ $out == $'uid=1000 gid=1000 groups=1000,44\nfrom-process-json\n/' ]] &&
  pass "exec --process (user, additionalGids, env, cwd)" || fail "exec --process: $out"
out=$(rt exec -u 7:8 -e Y=1 --cwd / c1 sh -c 'echo $(id -u) $(id -g) $Y $(pwd)')
[[ $out == "7 8 1 /" ]] && pass "exec --user --env --cwd" || fail "exec flags: $out"
rt exec -d --pid-file "$WORK/x5.pid" c1 sh -c 'sleep 0.2; exit 5' &&
  [[ $(reaped "$(cat "$WORK/x5.pid")") == "exit 5" ]] &&
  pass "exec --detach: the pid-file process ends with the guest's status" ||
  fail "exec -d: $(reaped "$(cat "$WORK/x5.pid" 2>/dev/null)")"
rt exec -d --pid-file "$WORK/xt.pid" c1 sleep 60
sleep 0.3
kill -TERM "$(cat "$WORK/xt.pid")"
[[ $(reaped "$(cat "$WORK/xt.pid")") == "signal 15" ]] &&
  pass "a signal to the exec'd process's host PID reaches the guest process" ||
  fail "exec SIGTERM: $(reaped "$(cat "$WORK/xt.pid")")"
expect_fail "exec of a missing program" 'exec: "nosuchprog": executable file not found in $PATH' \
  rt exec c1 nosuchprog
expect_fail "exec into an unknown container" "container nosuch does not exist" rt exec nosuch true
expect_fail "exec -t without a console socket" "needs --console-socket" rt exec -t c1 true
# exec -t: the master of a host pty arrives on our console socket (as containerd's shim gets
# it); the process sees a terminal of its own, sized from the master, with echo and input.
out=$(python3 - "$SENTRY" "$root" c1 <<'PY'
import array, fcntl, os, select, socket, struct, subprocess, sys, termios, time
sentry, root, cid = sys.argv[1:4]
path = "/tmp/sentry-console-%d.sock" % os.getpid()
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
srv.listen(1)
p = subprocess.Popen([sentry, "--root", root, "exec", "-t", "--console-socket", path, cid,
                      "sh", "-c", "tty; sleep 1; stty size; echo ready; read x; echo got=$x; exit 7"])
srv.settimeout(10)
conn, _ = srv.accept()
_, anc, _, _ = conn.recvmsg(256, socket.CMSG_LEN(4))
fds = array.array("i")
fds.frombytes(anc[0][2][:4])
master = fds[0]
fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
out, sent, start = b"", False, time.time()
while time.time() - start < 15:
    if not select.select([master], [], [], 0.5)[0]:
        if p.poll() is not None:
            break
        continue
    try:
        data = os.read(master, 4096)
    except OSError:
        break
    if not data:
        break
    out += data
    if b"ready" in out and not sent:
        os.write(master, b"typed\n")
        sent = True
os.unlink(path)
print(out.decode().replace("\r", ""), end="")
print("rc=%d" % p.wait())
PY
)
[[ $out == $'/dev/pts/'[0-9]*$'\n40 120\nready\ntyped\ngot=typed\nrc=7' ]] &&
  pass "exec -t: a terminal of its own, its size, echo, input, exit 7" || fail "exec -t: $out"
[[ $(status_of c1) == running ]] && pass "c1 still running after the execs" || fail "c1: $(status_of c1)"

rt kill c1 SIGUSR1 && [[ $(reaped "$pid") == "exit 10" ]] && pass "kill by name SIGUSR1 -> exit 10" ||
  fail "kill SIGUSR1: $(reaped "$pid")"
[[ $(status_of c1) == stopped ]] && pass "state: stopped" || fail "state: $(status_of c1)"
expect_fail "kill of a stopped container" "not running" rt kill c1 KILL
rt delete c1 && pass "delete of a stopped container" || fail "delete c1"
expect_fail "state after delete" "does not exist" rt state c1

# --- exit statuses seen by the reaper, kill by number, --all ---
run_and_reap() {  # ID BUNDLE [SIGNAL]: create, start, (kill), print the reaped status
  rt create -b "$WORK/$2" --pid-file "$WORK/$1.pid" "$1" >/dev/null 2>&1 || { echo "create failed"; return; }
  rt start "$1"
  [[ -n ${3:-} ]] && { sleep 0.5; rt kill "$1" "$3"; }
  reaped "$(cat "$WORK/$1.pid")"
  rt delete "$1"
}
make_bundle exit3 '["sh", "-c", "exit 3"]'
[[ $(run_and_reap e3 exit3) == "exit 3" ]] && pass "exit 3 through the pid-file process" ||
  fail "exit 3: $(run_and_reap e3b exit3)"
[[ $(run_and_reap t15 b1 15) == "exit 9" ]] && pass "kill 15 (by number) reaches the guest's trap" ||
  fail "kill 15"
make_bundle exit137 '["sh", "-c", "exit 137"]'
[[ $(run_and_reap e137 exit137) == "exit 137" ]] && pass "exit 137 stays an exit, not a signal" ||
  fail "exit 137: $(run_and_reap e137b exit137)"
make_bundle sleeper '["sleep", "60"]'
[[ $(run_and_reap k9 sleeper 9) == "signal 9" ]] && pass "kill 9: the reaper sees SIGKILL" ||
  fail "kill 9"
rt create -b "$WORK/sleeper" --pid-file "$WORK/ka.pid" ka && rt start ka && rt kill --all ka KILL &&
  [[ $(reaped "$(cat "$WORK/ka.pid")") == "signal 9" ]] && pass "kill --all KILL" || fail "kill --all"
rt delete ka
expect_fail "kill with a bad signal" "unknown signal" rt kill nosuch SIGFOO

# --- pause and resume: a spinning guest uses no CPU while paused ---
make_bundle spin '["sh", "-c", "while :; do :; done"]'
rt create -b "$WORK/spin" --pid-file "$WORK/spin.pid" sp && rt start sp
ticks() {  # CPU ticks of the container's host processes over one second
  local pids a=0 b=0 p
  pids=$(rt ps --format json sp | tr -d '[]' | tr , ' ')
  for p in $pids; do a=$((a + $(awk '{print $14+$15}' "/proc/$p/stat" 2>/dev/null || echo 0))); done
  sleep 1
  for p in $pids; do b=$((b + $(awk '{print $14+$15}' "/proc/$p/stat" 2>/dev/null || echo 0))); done
  echo $((b - a))
}
sleep 0.3
before=$(ticks)
rt pause sp && [[ $(status_of sp) == paused ]] && pass "pause: state paused" || fail "pause: $(status_of sp)"
paused=$(ticks)
expect_fail "exec into a paused container" "cannot exec in a paused container" rt exec sp true
expect_fail "pause of a paused container" "it is paused" rt pause sp
expect_fail "delete of a paused container" "paused: stop it first" rt delete sp
rt resume sp && [[ $(status_of sp) == running ]] && pass "resume: state running" || fail "resume: $(status_of sp)"
after=$(ticks)
((before >= 20 && paused <= 2 && after >= 20)) &&
  pass "CPU ticks per second: $before running, $paused paused, $after resumed" ||
  fail "CPU ticks: $before running, $paused paused, $after resumed"
expect_fail "resume of a running container" "not paused" rt resume sp
rt pause sp && rt kill sp KILL && [[ $(reaped "$(cat "$WORK/spin.pid")") == "signal 9" ]] &&
  pass "kill KILL of a paused container" || fail "kill of paused"
rt delete sp

# --- delete --force of a running and of a created container ---
rt create -b "$WORK/sleeper" --pid-file "$WORK/f.pid" f1 && rt start f1
# (Reaped, not just gone: a killed process stays a zombie until the subreaper gets to it.)
rt delete --force f1 && [[ $(reaped "$(cat "$WORK/f.pid")") == "signal 9" ]] && [[ -z $(rt list -q) ]] &&
  pass "delete --force of a running container" || fail "delete --force running"
rt create -b "$WORK/sleeper" --pid-file "$WORK/f2.pid" f2
rt delete f2 && [[ $(reaped "$(cat "$WORK/f2.pid")") == "signal 9" ]] &&
  pass "delete of a created container ends its sandbox" || fail "delete created"

# --- run: foreground exit status and stdio, then the state is gone ---
make_bundle runb '["sh", "-c", "read x; echo out $x; echo err >&2; exit 4"]'
out=$(echo piped | rt run -b "$WORK/runb" r1 2>"$WORK/r1.err")
rc=$?
[[ $rc == 4 && $out == "out piped" && $(cat "$WORK/r1.err") == err ]] &&
  pass "run: stdin, stdout, stderr, exit 4" || fail "run: rc=$rc out=$out err=$(cat "$WORK/r1.err")"
expect_fail "run's state removed" "does not exist" rt state r1

# --- 20 concurrent creates ---
make_bundle many '["sh", "-c", "echo $(hostname)"]'
start_s=$(date +%s.%N)
for i in $(seq 20); do
  rt create -b "$WORK/many" --pid-file "$WORK/m$i.pid" "m$i" >"$WORK/m$i.out" 2>&1 &
done
wait
created=$(rt list -q | grep -c '^m')
elapsed=$(python3 -c "import sys; print(f'{float(sys.argv[2])-float(sys.argv[1]):.2f}')" "$start_s" "$(date +%s.%N)")
[[ $created == 20 ]] && pass "20 concurrent creates (${elapsed}s)" || fail "concurrent creates: $created of 20"
for i in $(seq 20); do rt start "m$i" & done
wait
ok=0
for i in $(seq 20); do
  [[ $(reaped "$(cat "$WORK/m$i.pid")") == "exit 0" ]] && grep -q oci-test "$WORK/m$i.out" && ok=$((ok + 1))
done
[[ $ok == 20 ]] && pass "20 containers ran and exited 0" || fail "only $ok of 20 ran"
for i in $(seq 20); do rt delete "m$i" & done
wait
[[ -z $(rt list -q) ]] && pass "all deleted" || fail "left: $(rt list -q)"

source "$(dirname "$0")/cli_resources.sh"
source "$(dirname "$0")/cli_process.sh"

# --- nothing left behind ---
left=$(pgrep -f "$WORK/" | grep -v "^$$\$" || true)
[[ -z $left ]] && pass "no process left" || fail "processes left: $(ps -o pid,cmd -p "$left")"

echo "$failures failure(s)"
((failures == 0))
