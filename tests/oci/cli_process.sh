# Sourced by cli.sh (its helpers: rt, pass, fail, reaped, edit_config): the process and path
# fields of config.json (process.user.umask and additionalGids, process.noNewPrivileges,
# process.rlimits, linux.maskedPaths, linux.readonlyPaths) checked against the values the
# config gives and, where runc is installed and we are root, against what the same bundle
# shows under runc; and the createContainer and startContainer hooks.

# A bundle that runc accepts too (its namespaces and mounts), running /probe.sh as uid 1000.
make_probe_bundle() {
  local dir=$WORK/$1
  mkdir -p "$dir/rootfs/bin" "$dir/rootfs/etc" "$dir/rootfs/secretdir" "$dir/rootfs/ro" \
    "$dir/rootfs/tmp" "$dir/rootfs/proc" "$dir/rootfs/dev" "$dir/rootfs/sys"
  chmod 1777 "$dir/rootfs/tmp"
  cp "$BUSYBOX" "$dir/rootfs/bin/busybox"
  for a in sh cat ls touch id grep wc stat tr sed; do ln -sf busybox "$dir/rootfs/bin/$a"; done
  install -m 4755 "$IDS_PROBE" "$dir/rootfs/bin/ids"
  echo secret >"$dir/rootfs/etc/secret"
  echo s >"$dir/rootfs/secretdir/f"
  cat >"$dir/rootfs/probe.sh" <<'SH'
echo "umask $(umask)"
echo "groups $(id -G)"
grep -E '^(NoNewPrivs|Groups):' /proc/self/status | tr '\t' ' '
echo "nofile $(ulimit -Sn) $(ulimit -Hn) stack $(ulimit -Ss) $(ulimit -Hs) core $(ulimit -Sc)"
/bin/ids
echo "masked file: [$(cat /etc/secret 2>&1)] $(stat -c %F /etc/secret)"
echo "masked dir: [$(ls /secretdir 2>&1)] $(stat -c '%F %a' /secretdir)"
touch /secretdir/x 2>&1 | sed 's/.*: //'
touch /ro/x 2>&1 | sed 's/.*: //'
(echo x >/proc/sys/kernel/hostname) 2>&1 | sed 's/.*: //'
umask 0; touch /tmp/new; stat -c 'new file %a' /tmp/new
SH
  cat >"$dir/config.json" <<'JSON'
{
  "ociVersion": "1.0.2-dev",
  "process": {"args": ["sh", "/probe.sh"], "env": ["PATH=/bin"], "cwd": "/",
              "user": {"uid": 1000, "gid": 1000, "additionalGids": [1000, 2000, 3000],
                       "umask": 23},
              "noNewPrivileges": true,
              "rlimits": [{"type": "RLIMIT_NOFILE", "soft": 200, "hard": 300},
                          {"type": "RLIMIT_STACK", "soft": 4194304, "hard": 16777216},
                          {"type": "RLIMIT_CORE", "soft": 0, "hard": 0}]},
  "root": {"path": "rootfs"},
  "hostname": "probe",
  "mounts": [{"destination": "/proc", "type": "proc", "source": "proc"},
             {"destination": "/dev", "type": "tmpfs", "source": "tmpfs",
              "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
             {"destination": "/sys", "type": "sysfs", "source": "sysfs",
              "options": ["nosuid", "noexec", "nodev", "ro"]}],
  "linux": {"namespaces": [{"type": "pid"}, {"type": "network"}, {"type": "ipc"},
                           {"type": "uts"}, {"type": "mount"}],
            "maskedPaths": ["/proc/kcore", "/proc/keys", "/sys/firmware", "/etc/secret",
                            "/secretdir", "/no/such/path"],
            "readonlyPaths": ["/proc/sys", "/proc/bus", "/ro", "/no/such/dir"]}
}
JSON
}

if [[ -z $IDS_PROBE ]]; then
  fail "cli_process.sh needs oci_ids_probe (cli.sh's third argument)"
else
  make_probe_bundle probe
  out=$(cd "$WORK/probe" && rt run pr1 2>&1)
  echo "$out" | sed 's/^/  sentry| /'
  want=(
    "umask 0027"
    "groups 1000 2000 3000"
    "Groups: 1000 2000 3000 "
    "NoNewPrivs: 1"
    "nofile 200 300 stack 4096 16384 core 0"
    "uid=1000 euid=1000 nnp=1"
    "masked file: [] character special file"
    "masked dir: [] directory 1777"
    "Read-only file system"
    "Read-only file system"
    "Read-only file system"
    "new file 666")
  names=("process.user.umask 027" "additionalGids (id -G)" "additionalGids (/proc/self/status)"
    "noNewPrivileges (/proc/self/status)" "process.rlimits soft and hard"
    "noNewPrivileges: a set-user-ID root program gains nothing, PR_GET_NO_NEW_PRIVS is 1"
    "maskedPaths: a file reads empty (/dev/null over it)"
    "maskedPaths: a directory is an empty tmpfs" "maskedPaths: the directory is read-only"
    "readonlyPaths: a directory of the root" "readonlyPaths: /proc/sys"
    "umask 0 set by the guest afterwards")
  mapfile -t got <<<"$out"
  for i in "${!want[@]}"; do
    [[ ${got[$i]:-} == "${want[$i]}" ]] && pass "${names[$i]}" ||
      fail "${names[$i]}: want '${want[$i]}', got '${got[$i]:-}'"
  done
  # The other platform gives the same.
  out_ptrace=$(cd "$WORK/probe" && rt --platform ptrace run pr1p 2>&1)
  [[ $out_ptrace == "$out" ]] && pass "the same output with --platform ptrace" ||
    fail "ptrace differs: $(diff <(echo "$out") <(echo "$out_ptrace") | tr '\n' ' ')"
  # The reference: the same bundle under runc, line for line.
  if command -v runc >/dev/null && ((EUID == 0)); then
    ref=$(cd "$WORK/probe" && runc --root "$WORK/runc-state" run "probe-$$" 2>&1)
    [[ $ref == "$out" ]] && pass "the same output under runc" ||
      fail "runc differs: $(diff <(echo "$ref") <(echo "$out") | tr '\n' ' ')"
  else
    echo "note: runc not installed or not root: no reference run"
  fi
  # exec: the process.json's umask and noNewPrivileges, and --no-new-privs.
  # (exec without --process starts from config.json's process, as runc's does: its
  # noNewPrivileges is off here, for --no-new-privs to turn on.)
  edit_config probe 'c["process"]["args"] = ["sh", "-c", "sleep 30"]
c["process"]["noNewPrivileges"] = False'
  (cd "$WORK/probe" && rt create --pid-file "$WORK/pr2.pid" pr2 && rt start pr2)
  cat >"$WORK/exec-process.json" <<'JSON'
{"args": ["sh", "-c", "umask; grep NoNewPrivs /proc/self/status | tr '\\t' ' '"], "env": ["PATH=/bin"],
 "cwd": "/", "user": {"uid": 0, "gid": 0, "umask": 63}, "noNewPrivileges": true}
JSON
  out=$(rt exec --process "$WORK/exec-process.json" pr2 2>&1)
  [[ $out == $'0077\nNoNewPrivs: 1' ]] && pass "exec --process: umask and noNewPrivileges" ||
    fail "exec process.json: $out"
  out=$(rt exec pr2 sh -c 'grep NoNewPrivs /proc/self/status' 2>&1; rt exec --no-new-privs pr2 \
    sh -c 'grep NoNewPrivs /proc/self/status' 2>&1)
  [[ $(echo "$out" | tr -d '\t') == $'NoNewPrivs:0\nNoNewPrivs:1' ]] &&
    pass "exec --no-new-privs" || fail "exec --no-new-privs: $out"
  # Without no_new_privs the set-user-ID root probe runs with euid 0 (in the Sentry's
  # credentials), as under runc; --no-new-privs keeps the caller's.
  out=$(rt exec pr2 /bin/ids 2>&1; rt exec --no-new-privs pr2 /bin/ids 2>&1)
  [[ $out == $'uid=1000 euid=0 nnp=0\nuid=1000 euid=1000 nnp=1' ]] &&
    pass "exec: a set-user-ID root program gains euid 0, not under --no-new-privs" ||
    fail "exec of a set-user-ID program: $(echo $out)"
  rt kill pr2 KILL
  reaped "$(cat "$WORK/pr2.pid")" >/dev/null
  rt delete pr2

  # process.capabilities: Docker's default set for a root init (a80425fb, as under runc:
  # permitted and effective follow bounding through the execve of the entry point), and an
  # exec'd user process keeping one capability through the ambient set.
  make_probe_bundle caps
  edit_config caps 'c["process"]["user"] = {"uid": 0, "gid": 0}
c["process"]["args"] = ["sh", "-c", "sleep 30"]
c["process"]["noNewPrivileges"] = False
d = ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD", "CAP_NET_RAW",
     "CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE",
     "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE"]
c["process"]["capabilities"] = {"bounding": d, "effective": d, "permitted": d}'
  (cd "$WORK/caps" && rt create --pid-file "$WORK/caps.pid" caps && rt start caps)
  want_caps=$'CapInh: 0000000000000000\nCapPrm: 00000000a80425fb\nCapEff: 00000000a80425fb\nCapBnd: 00000000a80425fb\nCapAmb: 0000000000000000'
  out=$(rt exec caps sh -c 'grep ^Cap /proc/self/status | tr "\t" " "' 2>&1)
  [[ $out == "$want_caps" ]] && pass "process.capabilities: Docker's default set (exec from config.json's process)" ||
    fail "process.capabilities: want $(echo $want_caps), got $(echo $out)"
  cat >"$WORK/caps-process.json" <<'JSON'
{"args": ["sh", "-c", "grep -E '^Cap(Prm|Eff|Amb)' /proc/self/status | tr '\t' ' '"], "env": ["PATH=/bin"],
 "cwd": "/", "user": {"uid": 1000, "gid": 1000},
 "capabilities": {"bounding": ["CAP_NET_BIND_SERVICE", "CAP_KILL"], "permitted": ["CAP_NET_BIND_SERVICE"],
                  "effective": ["CAP_NET_BIND_SERVICE"], "inheritable": ["CAP_NET_BIND_SERVICE"],
                  "ambient": ["CAP_NET_BIND_SERVICE"]}}
JSON
  out=$(rt exec --process "$WORK/caps-process.json" caps 2>&1)
  [[ $out == $'CapPrm: 0000000000000400\nCapEff: 0000000000000400\nCapAmb: 0000000000000400' ]] &&
    pass "exec --process: a user keeps CAP_NET_BIND_SERVICE through the ambient set" ||
    fail "exec --process capabilities: $(echo $out)"
  out=$(rt exec caps sh -c 'busybox chroot / true && echo chroot ok
busybox hostname x 2>&1 | sed "s/.*: //"' 2>&1)
  [[ $out == $'chroot ok\nOperation not permitted' ]] &&
    pass "process.capabilities enforced: CAP_SYS_CHROOT kept, CAP_SYS_ADMIN (sethostname) not" ||
    fail "capabilities enforced: $(echo $out)"
  rt kill caps KILL
  reaped "$(cat "$WORK/caps.pid")" >/dev/null
  rt delete caps
  if command -v runc >/dev/null && ((EUID == 0)); then
    edit_config caps 'c["process"]["args"] = ["sh", "-c", "grep ^Cap /proc/self/status | tr \"\\t\" \" \""]'
    ref=$(cd "$WORK/caps" && runc --root "$WORK/runc-state" run "caps-$$" 2>&1)
    [[ $ref == "$want_caps" ]] && pass "runc shows the same capabilities" ||
      fail "runc's capabilities: $(echo $ref)"
  fi
fi

# --- createContainer (at create) and startContainer (at start) hooks, on the host ---
make_bundle hk2 '["sh", "-c", "echo ran"]'
edit_config hk2 'c["hooks"] = {
  "createContainer": [{"path": "/bin/sh", "args": ["sh", "-c", "cat >'$WORK'/cc.json"]}],
  "startContainer": [{"path": "/bin/sh", "args": ["sh", "-c", "cat >'$WORK'/sc.json"]}]}'
rt create -b "$WORK/hk2" --pid-file "$WORK/hk2.pid" hk2 >"$WORK/hk2.out" 2>&1
[[ -f $WORK/cc.json && ! -e $WORK/sc.json ]] && pass "createContainer hook at create, startContainer not yet" ||
  fail "hooks at create: $(ls "$WORK"/*c.json 2>&1)"
rt start hk2
python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); assert s["id"]=="hk2" and s["status"]=="created" and s["pid"]>0, s' \
  "$WORK/sc.json" 2>/dev/null && pass "startContainer hook at start, with the state (created) on stdin" ||
  fail "startContainer: $(cat "$WORK/sc.json" 2>&1)"
[[ $(reaped "$(cat "$WORK/hk2.pid")") == "exit 0" ]] && grep -q ran "$WORK/hk2.out" &&
  pass "the program ran after the startContainer hook" || fail "hk2: $(cat "$WORK/hk2.out")"
rt delete hk2
edit_config hk2 'c["hooks"] = {"startContainer": [{"path": "/bin/false"}]}'
rt create -b "$WORK/hk2" --pid-file "$WORK/hk3.pid" hk3 >"$WORK/hk3.out" 2>&1
err=$(rt start hk3 2>&1)
rc=$?
((rc != 0)) && [[ $err == *"startContainer hook /bin/false"* ]] && [[ $(reaped "$(cat "$WORK/hk3.pid")") != "exit 0" ]] &&
  ! grep -q ran "$WORK/hk3.out" && pass "a failing startContainer hook fails start; the program never runs" ||
  fail "failing startContainer: rc=$rc $err $(cat "$WORK/hk3.out")"
rt delete --force hk3
