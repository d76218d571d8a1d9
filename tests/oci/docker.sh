#!/usr/bin/env bash
# `docker run --runtime=sentry` end to end, with a private dockerd (its own socket, data root,
# exec root and pidfile under a temporary directory; no bridge, no iptables) that this script
# starts and stops. The image is busybox-static imported from a tarball, never pulled.
# usage: docker.sh SENTRY   (exit 77: skipped, with the reason)
set -uo pipefail
SENTRY=$(realpath "$1")
skip() {
  echo "SKIP: $*"
  exit 77
}
((EUID == 0)) || skip "dockerd needs root"
for p in dockerd containerd containerd-shim-runc-v2 docker; do
  command -v $p >/dev/null || skip "$p is not installed (tools/setup.sh installs docker.io)"
done
BUSYBOX=$(command -v busybox) && file -L "$BUSYBOX" | grep -q static ||
  skip "a static busybox is needed (apt-get install busybox-static)"

work=$(mktemp -d /tmp/sdock.XXXXXX)  # short: the sockets' paths live under it
dockerd_pid=
cleanup() {
  if [[ -n $dockerd_pid ]]; then
    for t in $("${CTR[@]}" tasks ls -q 2>/dev/null); do
      "${CTR[@]}" tasks kill -s SIGKILL "$t" >/dev/null 2>&1
      "${CTR[@]}" tasks delete -f "$t" >/dev/null 2>&1
    done
    "${CTR[@]}" containers ls -q 2>/dev/null | xargs -r "${CTR[@]}" containers rm >/dev/null 2>&1
    # Containers first (their shims outlive dockerd otherwise), then the daemon.
    docker ps -aq 2>/dev/null | xargs -r docker rm -f >/dev/null 2>&1
    kill "$dockerd_pid" 2>/dev/null
    for _ in $(seq 100); do kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$dockerd_pid" 2>/dev/null
  fi
  # vfs layers are plain directories; anything dockerd mounted there is gone with it.
  umount -R "$work/data" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
export DOCKER_HOST=unix://$work/docker.sock
# containerd without Docker: ctr against the private dockerd's own containerd, in a namespace
# of its own.
CTR=(ctr --address "$work/exec/containerd/containerd.sock" -n sentry-test)
cat >"$work/daemon.json" <<JSON
{"runtimes": {"sentry": {"path": "$SENTRY"}$(
  runsc=$(command -v runsc) && printf ', "runsc": {"path": "%s", "runtimeArgs": ["--platform=ptrace", "--network=none"]}' "$runsc")}}
JSON
# In a network namespace of its own (when unshare can make one), dockerd may keep its default
# bridge network: the bridge and its veths live there, never on the host's network.
netns=(unshare --net)
bridge=()
"${netns[@]}" true 2>/dev/null || { netns=(); bridge=(--bridge=none); }
"${netns[@]}" dockerd --host "$DOCKER_HOST" --data-root "$work/data" --exec-root "$work/exec" \
  --pidfile "$work/docker.pid" --config-file "$work/daemon.json" "${bridge[@]}" \
  --iptables=false --ip6tables=false --ip-forward=false --ip-masq=false \
  --storage-driver=vfs >"$work/dockerd.log" 2>&1 &
dockerd_pid=$!
for _ in $(seq 150); do
  docker version >/dev/null 2>&1 && break
  kill -0 $dockerd_pid 2>/dev/null || break
  sleep 0.2
done
docker version >/dev/null 2>&1 || {
  tail -5 "$work/dockerd.log"
  skip "the private dockerd did not start (log above)"
}

mkdir -p "$work/rootfs/bin" "$work/rootfs/tmp" "$work/rootfs/etc" "$work/rootfs/root"
cp "$BUSYBOX" "$work/rootfs/bin/busybox"
for a in $("$BUSYBOX" --list); do
  [[ -e $work/rootfs/bin/$a ]] || ln -s busybox "$work/rootfs/bin/$a"
done
IMG=sentry-test-busybox:latest
tar -C "$work/rootfs" -c . | docker import - $IMG >/dev/null || skip "docker import failed"

failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
pass() { echo "ok: $*"; }
RUN=(docker run --rm --network none --runtime=sentry)

out=$("${RUN[@]}" $IMG echo hi 2>"$work/err")
[[ $out == hi ]] && pass "run echo hi" || fail "echo hi: out=$out err=$(cat "$work/err")"
out=$("${RUN[@]}" $IMG sh -c 'echo out; echo err >&2; exit 3' 2>"$work/err")
rc=$?
[[ $rc == 3 && $out == out && $(cat "$work/err") == err ]] && pass "stdout, stderr, exit 3" ||
  fail "rc=$rc out=$out err=$(cat "$work/err")"
out=$("${RUN[@]}" -e FOO=bar -w /tmp --hostname box $IMG sh -c 'echo $FOO $(pwd) $(hostname)')
[[ $out == "bar /tmp box" ]] && pass "-e, -w, --hostname" || fail "-e -w --hostname: $out"
out=$("${RUN[@]}" --hostname box $IMG sh -c 'cat /etc/hostname; grep -c localhost /etc/hosts')
[[ $out == $'box\n'[1-9]* ]] && pass "Docker's /etc/hostname and /etc/hosts" || fail "files: $out"
out=$("${RUN[@]}" -u 1000:1000 $IMG id)
[[ $out == "uid=1000 gid=1000"* ]] && pass "-u 1000:1000" || fail "-u: $out"
out=$(printf 'line1\nline2\n' | "${RUN[@]}" -i $IMG sh -c 'cat; echo done')
[[ $out == $'line1\nline2\ndone' ]] && pass "run -i with stdin" || fail "-i: $out"
mkdir -p "$work/vol" && echo from-host >"$work/vol/f"
out=$("${RUN[@]}" -v "$work/vol:/mnt:ro" $IMG sh -c 'cat /mnt/f; (echo x >/mnt/g) 2>/dev/null || echo ro')
[[ $out == $'from-host\nro' ]] && pass "-v host:guest:ro" || fail "-v: $out"
# A file bound with -v is the host's file, both ways (Docker's own /etc/hosts, hostname and
# resolv.conf are such binds too).
echo "line 1" >"$work/notes.txt"
out=$("${RUN[@]}" -v "$work/notes.txt:/notes.txt" $IMG sh -c 'cat /notes.txt; echo "line 2" >>/notes.txt')
[[ $out == "line 1" && $(cat "$work/notes.txt") == $'line 1\nline 2' ]] &&
  pass "-v FILE:FILE: the guest reads the host's file and its writes reach it" ||
  fail "-v FILE:FILE: out=$out host=$(cat "$work/notes.txt")"
out=$("${RUN[@]}" --tmpfs /scratch $IMG sh -c 'echo x >/scratch/f && mount | grep -c " /scratch "')
[[ $out == 1 ]] && pass "--tmpfs" || fail "--tmpfs: $out"
# Seccomp: Docker's default profile and a custom one are the guest's filter (run in the
# Sentry); unconfined means none.
out=$("${RUN[@]}" $IMG sh -c 'grep "^Seccomp:" /proc/self/status; ls / >/dev/null && echo works')
[[ $out == $'Seccomp:\t2\nworks' ]] && pass "Docker's default seccomp profile applied" ||
  fail "default profile: $out"
cat >"$work/deny-mkdir.json" <<'JSON'
{"defaultAction": "SCMP_ACT_ALLOW",
 "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}
JSON
out=$("${RUN[@]}" --security-opt seccomp="$work/deny-mkdir.json" $IMG \
      sh -c 'mkdir /tmp/d 2>&1; echo rc=$?; touch /tmp/f && echo touch-ok')
[[ $out == *"Operation not permitted"*$'\nrc=1\ntouch-ok' ]] && pass "a custom seccomp profile" ||
  fail "custom profile: $out"
out=$("${RUN[@]}" --security-opt seccomp=unconfined $IMG grep "^Seccomp:" /proc/self/status)
[[ $out == $'Seccomp:\t0' ]] && pass "seccomp=unconfined" || fail "unconfined: $out"
err=$("${RUN[@]}" $IMG /nonexistent 2>&1)
rc=$?
[[ $rc != 0 && $err == *'exec: "/nonexistent": stat /nonexistent: no such file or directory'* ]] &&
  pass "failing create: docker shows the runtime's error (rc=$rc)" || fail "missing exe: rc=$rc $err"
if ((${#netns[@]})); then
  # The default bridge network (in dockerd's own network namespace, so nothing reaches the
  # host's): a sandboxed client reaches a runc container's server by its bridge address; a
  # sandboxed server on port 80 is reached from a runc container and, through -p and
  # docker-proxy, from dockerd's namespace; --network none still has no way out.
  in_docker_ns() { nsenter --net="/proc/$dockerd_pid/ns/net" "$@"; }
  # busybox-static's wget crashes (natively too); its nc speaks plain HTTP well enough. The
  # daemon warns on stderr that IPv4 forwarding is off (nothing here needs it).
  get='printf "GET / HTTP/1.0\r\n\r\n" | nc -w 5 "$0" "$1" | tail -1'
  serve='mkdir -p /www && echo "from $0" >/www/index.html && exec httpd -f -p 80 -h /www'
  docker run -d --name web-runc $IMG sh -c "$serve" runc >/dev/null 2>&1
  docker run -d --name web-sentry --runtime=sentry -p 18080:80 $IMG sh -c "$serve" sentry \
    >"$work/web.out" 2>&1
  runc_ip=$(docker inspect -f '{{.NetworkSettings.IPAddress}}' web-runc 2>/dev/null)
  sentry_ip=$(docker inspect -f '{{.NetworkSettings.IPAddress}}' web-sentry 2>/dev/null)
  sleep 1
  out=$(docker run --rm --runtime=sentry $IMG sh -c "$get" "$runc_ip" 80 2>/dev/null)
  [[ $out == "from runc" ]] && pass "bridge: a sandboxed client reaches a runc container" ||
    fail "bridge client: ip=$runc_ip out=$out"
  out=$(docker run --rm $IMG sh -c "$get" "$sentry_ip" 80 2>/dev/null)
  [[ $out == "from sentry" ]] && pass "bridge: a runc container reaches a sandboxed server on port 80" ||
    fail "bridge server: ip=$sentry_ip out=$out $(cat "$work/web.out"; docker logs web-sentry 2>&1)"
  # docker-proxy listens in dockerd's namespace, whose lo starts down (local traffic, even
  # to docker0's address, goes through lo).
  in_docker_ns ip link set lo up
  out=$(in_docker_ns sh -c "printf 'GET / HTTP/1.0\r\n\r\n' | $BUSYBOX nc -w 5 127.0.0.1 18080 | tail -1" 2>&1)
  [[ $out == "from sentry" ]] && pass "-p 18080:80 reaches the sandboxed server" || fail "-p: $out"
  # The second request goes to the client sandbox's own loopback, where nothing listens.
  out=$(docker run --rm --runtime=sentry $IMG sh -c "$get; sh -c '$get' 127.0.0.1 18080" \
    "$sentry_ip" 80 2>/dev/null)
  [[ $out == "from sentry" ]] &&
    pass "bridge: sandbox to sandbox; 127.0.0.1 stays the sandbox's own" || fail "sandbox to sandbox: $out"
  # The container's eth0 as the guest sees it (ip, ifconfig's ioctls, /proc/net/dev): the
  # address, prefix, MAC and MTU Docker gave it, as a runc container sees its own; and a
  # server bound to that address (not 0.0.0.0) is reached from a runc container.
  show='ip -o -4 addr show eth0 | sed "s/.*inet \([^ ]*\).*/\1/"; ip link show eth0 | sed -n "s/.*mtu \([0-9]*\).*/mtu \1/p"
ip link show eth0 | sed -n "s/.*ether \([^ ]*\).*/\1/p"; grep -c "eth0:" /proc/net/dev; ifconfig eth0 | grep -o "Mask:[0-9.]*"'
  iface_view() {  # RUNTIME: the guest's view, then docker inspect's line
    local id
    id=$(docker run -d --runtime="$1" $IMG sleep 60)
    docker exec "$id" sh -c "$show" 2>&1
    docker inspect -f '{{.NetworkSettings.IPAddress}}/{{.NetworkSettings.IPPrefixLen}} {{.NetworkSettings.MacAddress}}' "$id"
    docker rm -f "$id" >/dev/null 2>&1
  }
  s_out=$(iface_view sentry)
  r_out=$(iface_view runc)
  # ip route and /proc/net/route (what busybox's and net-tools' `route` read): the default
  # route through Docker's gateway and the subnet's (the source address is each
  # container's own), byte for byte as under runc.
  routes_of() {
    local id
    id=$(docker run -d --runtime="$1" $IMG sleep 60)
    docker exec "$id" sh -c 'ip route | sed "s/src [0-9.]*/src ADDR/"; cat /proc/net/route' 2>&1
    docker rm -f "$id" >/dev/null 2>&1
  }
  s_routes=$(routes_of sentry)
  r_routes=$(routes_of runc)
  [[ $s_routes == "$r_routes" && $s_routes == "default via "*" dev eth0"* &&
     $s_routes == *$'\neth0\t00000000\t'* ]] &&
    pass "bridge: ip route and /proc/net/route as under runc ($(echo $s_routes | head -c 300))" ||
    fail "routes: sentry '$s_routes' runc '$r_routes'"
  check_if() {  # OUTPUT: the guest's view must match docker inspect's last line
    local lines insp
    mapfile -t lines <<<"$1"
    insp=${lines[-1]}
    [[ ${lines[0]} == "${insp%% *}" && ${lines[2]} == "${insp##* }" && ${lines[3]} == 1 &&
       ${lines[4]} == Mask:255.255.* ]]
  }
  check_if "$s_out" && check_if "$r_out" && [[ $(sed -n 2p <<<"$s_out") == $(sed -n 2p <<<"$r_out") ]] &&
    pass "bridge: the guest sees eth0 with Docker's address, prefix, MAC and the MTU runc shows ($(echo $s_out | tr '\n' ' '))" ||
    fail "eth0: sentry '$s_out' runc '$r_out'"
  # /proc/net/dev counts eth0's traffic (the host's counters of the container's interface):
  # a request to the runc server moves both directions.
  id=$(docker run -d --runtime=sentry $IMG sleep 60)
  out=$(docker exec "$id" sh -c "$get >/dev/null; grep eth0: /proc/net/dev" "$runc_ip" 80 2>&1)
  docker rm -f "$id" >/dev/null 2>&1
  read -r rx_bytes _ _ _ _ _ _ _ tx_bytes _ <<<"${out#*:}"
  [[ ${rx_bytes:-0} -gt 0 && ${tx_bytes:-0} -gt 0 ]] &&
    pass "bridge: /proc/net/dev counts eth0's traffic (rx $rx_bytes, tx $tx_bytes bytes)" ||
    fail "/proc/net/dev counters: $out"
  docker run -d --name web-ip --runtime=sentry $IMG sh -c \
    'mkdir -p /www && echo from-ip >/www/index.html && ip=$(ip -o -4 addr show eth0 | sed "s/.*inet \([^/]*\).*/\1/") && exec httpd -f -p $ip:80 -h /www' >/dev/null 2>&1
  web_ip=$(docker inspect -f '{{.NetworkSettings.IPAddress}}' web-ip 2>/dev/null)
  sleep 1
  out=$(docker run --rm $IMG sh -c "$get" "$web_ip" 80 2>/dev/null)
  [[ $out == from-ip ]] && pass "bridge: a sandboxed server bound to the container's own address ($web_ip)" ||
    fail "bind to $web_ip: $out $(docker logs web-ip 2>&1)"
  docker rm -f web-ip >/dev/null 2>&1
  out=$(docker run --rm --network none --runtime=sentry $IMG nc -w 3 "$runc_ip" 80 </dev/null 2>&1)
  [[ $out == *"unreachable"* ]] && pass "--network none: no route out ($out)" || fail "--network none: $out"
  # A user-defined network (docker compose's kind): names resolve through Docker's embedded
  # DNS at 127.0.0.11, which the guest reaches in the container's namespace (its own
  # loopback has nothing there), and a client finds a server by its container name, as
  # under runc.
  docker network create sentry-test-net >/dev/null 2>&1
  docker run -d --name webn --network sentry-test-net $IMG sh -c "$serve" named >/dev/null 2>&1
  sleep 1
  by_name() {
    docker run --rm --network sentry-test-net --runtime="$1" $IMG sh -c \
      "grep ^nameserver /etc/resolv.conf; nslookup webn | grep -c '^Address: '; $get" webn 80 2>/dev/null
  }
  s_named=$(by_name sentry)
  r_named=$(by_name runc)
  [[ $s_named == "$r_named" && $s_named == $'nameserver 127.0.0.11\n'[1-9]$'\nfrom named' ]] &&
    pass "user-defined network: a container name resolves through 127.0.0.11 and is reached, as under runc" ||
    fail "user-defined network: sentry '$s_named' runc '$r_named'"
  docker rm -f webn >/dev/null 2>&1
  docker network rm sentry-test-net >/dev/null 2>&1
  docker rm -f web-runc web-sentry >/dev/null 2>&1
fi
source "$(dirname "$0")/docker_resources.sh"
source "$(dirname "$0")/docker_debian.sh"
# run -t through a real terminal (script): the guest's stdio is a terminal of the sandbox,
# relayed to the pty whose master went to containerd's shim over the console socket; docker
# sizes it from the client's terminal once the container has started (so the guest waits a
# moment before it asks, as it would have to with runc).
out=$(timeout 60 script -qec "stty rows 30 cols 100; docker run --rm -t --network none --runtime=sentry \
      $IMG sh -c 'tty; sleep 1; stty size; test -t 0 && test -t 1 && echo tty-ok; exit 4'; echo rc=\$?" \
      /dev/null </dev/null 2>&1 | tr -d '\r')
[[ $out == *"/dev/pts/0"*"30 100"*"tty-ok"*"rc=4"* ]] && pass "run -t: a terminal of its own" ||
  fail "-t: $out"

# docker run -it: ^C typed at the client's terminal reaches the guest's handler, as with runc.
interrupt='trap "echo got-int; exit 7" INT; echo ready; sleep 10 & wait'
for rt in runc sentry; do
  out=$(python3 "$(dirname "$0")/interrupt_on_pty.py" docker run --rm -it --network none \
        --runtime=$rt $IMG sh -c "$interrupt" 2>&1)
  printf -v "ctrl_c_$rt" '%s' "$(grep -oE 'got-int|rc=[0-9]+' <<<"$out" | tr '\n' ' ')"
done
[[ $ctrl_c_sentry == "got-int rc=7 " && $ctrl_c_sentry == "$ctrl_c_runc" ]] &&
  pass "run -it: ^C reaches the guest's SIGINT handler (exit 7)" ||
  fail "run -it ^C: sentry '$ctrl_c_sentry', runc '$ctrl_c_runc'"

# A detached container: kill -s USR1 reaches a guest handler; stop; rm -f leaves nothing.
id=$(docker run -d --network none --runtime=sentry $IMG \
  sh -c 'trap "echo got-usr1" USR1; echo up; while :; do sleep 0.1; echo tick; done')
# Up to 30 s each: under CI's load `docker logs` alone can take a good part of a second.
for _ in $(seq 300); do docker logs "$id" 2>/dev/null | grep -q up && break; sleep 0.1; done
docker kill -s USR1 "$id" >/dev/null
for _ in $(seq 300); do docker logs "$id" 2>/dev/null | grep -q got-usr1 && break; sleep 0.1; done
# (The logs read whole: with pipefail, `docker logs | grep -q` fails when grep leaves early
# and docker, still writing the ticks, gets SIGPIPE.)
logs=$(docker logs "$id" 2>&1)
[[ $logs == *got-usr1* ]] && pass "docker kill -s USR1 reaches the guest's trap" ||
  fail "USR1: $logs"
# docker exec (the runtime's exec --process --detach --pid-file), pause and unpause.
out=$(docker exec "$id" sh -c 'echo exec-ok $PPID; exit 4')
rc=$?
[[ $rc == 4 && $out == "exec-ok 0" ]] && pass "docker exec: output and exit status 4" ||
  fail "docker exec: rc=$rc out=$out"
out=$(docker exec -u 1000:1000 -e X=1 -w /tmp "$id" sh -c 'echo $(id -u) $X $(pwd)')
[[ $out == "1000 1 /tmp" ]] && pass "docker exec -u -e -w" || fail "docker exec -u -e -w: $out"
out=$(echo via-stdin | docker exec -i "$id" cat)
[[ $out == via-stdin ]] && pass "docker exec -i" || fail "docker exec -i: $out"
err=$(docker exec "$id" nosuchprog 2>&1)
rc=$?
[[ $rc != 0 && $err == *'executable file not found in $PATH'* ]] &&
  pass "docker exec of a missing program (rc=$rc)" || fail "exec missing: rc=$rc $err"
out=$(timeout 60 script -qec "stty rows 33 cols 77; docker exec -it $id sh -c 'tty; sleep 1; stty size; exit 5'; echo rc=\$?" \
      /dev/null </dev/null 2>&1 | tr -d '\r')
[[ $out == *"/dev/pts/"*"33 77"*"rc=5"* ]] && pass "docker exec -it: a terminal, its size, exit 5" ||
  fail "exec -it: $out"
docker pause "$id" >/dev/null
st=$(docker inspect -f '{{.State.Status}}' "$id")
n1=$(docker logs "$id" 2>&1 | wc -l)
sleep 1
n2=$(docker logs "$id" 2>&1 | wc -l)
docker unpause "$id" >/dev/null
sleep 1
n3=$(docker logs "$id" 2>&1 | wc -l)
[[ $st == paused && $n1 == "$n2" && $n3 -gt $n2 ]] &&
  pass "docker pause/unpause: no output while paused ($n1 -> $n2 lines), more after ($n3)" ||
  fail "pause: state=$st lines $n1 $n2 $n3"
top=$(docker top "$id")
grep -q sentry-stub <<<"$top" && pass "docker top shows host PIDs of the stubs" || fail "top: $top"
# Every host process of the container: its shim (named by the id), and their descendants.
descendants() {
  local pids
  pids=$(pgrep -f "$1")
  local frontier=$pids
  while [[ -n $frontier ]]; do
    local next=""
    for p in $frontier; do next+=" $(pgrep -P "$p")"; done
    frontier=$(echo $next)
    pids+=" $frontier"
  done
  echo $pids
}
procs=$(descendants "$id")
[[ -n $procs ]] && pass "container processes on the host: $(wc -w <<<"$procs")" || fail "no processes"
docker kill "$id" >/dev/null
code=$(docker inspect -f '{{.State.ExitCode}}' "$id")
[[ $code == 137 ]] && pass "docker kill: exit code 137" || fail "docker kill: exit code $code"
docker rm -f "$id" >/dev/null
sleep 0.5
left=""
# A zombie is left to whoever inherited it (here PID 1, for dockerd's own shim too).
for p in $procs; do
  state=$(sed 's/.*) \(.\).*/\1/' "/proc/$p/stat" 2>/dev/null)
  [[ -n $state && $state != Z ]] && left+=" $p"
done
[[ -z $left ]] && pass "docker rm -f: no process left" ||
  fail "left: $(for p in $left; do echo "$p $(cat /proc/$p/stat 2>/dev/null | cut -d" " -f2-4)"; done)"

# The container's writable root is Docker's own directory, as under runc: what the guest
# writes there (as root, and as uid 1000 with its ids), docker cp, diff, commit and export
# see, and a file docker cp puts in reaches the guest. Compared with runc in the same daemon.
root_view() {
  local rt=$1 name=rootview-$1 out
  docker run -d --name $name --network none --runtime="$rt" $IMG sleep 60 >/dev/null
  docker exec $name sh -c 'echo made-inside >/tmp/inside; mkdir /made; rm /bin/true' &&
    docker exec $name sh -c 'mkdir /u && chown 1000:1000 /u' &&
    docker exec -u 1000:1000 $name sh -c 'echo by-1000 >/u/by1000'
  echo from-host >"$work/cp-in"
  docker cp "$work/cp-in" $name:/tmp/cp-in && out+="cp-in:$(docker exec $name cat /tmp/cp-in) "
  docker cp $name:/tmp/inside "$work/cp-out-$rt" && out+="cp-out:$(cat "$work/cp-out-$rt") "
  out+="diff:$(docker diff $name | sort | tr '\n' ',') "
  out+="export:$(docker export $name | tar -tv 2>/dev/null | awk '/u\/by1000$/ {print $2}') "
  docker commit $name rootview-img-$rt >/dev/null &&
    out+="commit:$(docker run --rm --network none --runtime="$rt" rootview-img-$rt \
                    sh -c 'cat /tmp/inside; ls -d /made; ls /bin/true 2>&1 | grep -c "No such"')"
  docker rm -f $name >/dev/null
  docker rmi rootview-img-$rt >/dev/null 2>&1
  echo "$out"
}
want=$(root_view runc)
got=$(root_view sentry)
[[ -n $want && $got == "$want" && $got == *"cp-out:made-inside"* && $got == *"1000/1000"* ]] &&
  pass "the container's root on the host: docker cp both ways, diff, export (owner 1000), commit" ||
  fail "root on the host: sentry '$got', runc '$want'"
# What runc derives for the process, compared in the same daemon: HOME from the image's
# /etc/passwd (Docker passes none), /dev/shm's size (--shm-size), and Docker's
# net.ipv4.ip_unprivileged_port_start=0 letting uid 1000 listen on port 80.
docker_shell() {
  docker run --rm --network none --runtime="$1" "${@:3}" $IMG sh -c "$2" 2>&1
}
probe='echo $HOME; df -k /dev/shm | awk "NR==2 {print \$2}"; nc -l -p 80 & sleep 0.5; kill %1 && echo listened'
for user in 0:0 1000:1000; do
  want=$(docker_shell runc "$probe" -u $user --shm-size 16m)
  got=$(docker_shell sentry "$probe" -u $user --shm-size 16m)
  [[ $got == "$want" && $got == *$'\n16384\nlistened' ]] &&
    pass "-u $user: HOME, --shm-size 16m, port 80 as under runc ($(echo $got))" ||
    fail "-u $user: sentry '$got', runc '$want'"
done
want=$(docker run --rm --init --network none --runtime=runc $IMG sh -c 'ps -o comm | sed -n 2p')
got=$(docker run --rm --init --network none --runtime=sentry $IMG sh -c 'ps -o comm | sed -n 2p' 2>&1)
[[ $got == docker-init && $got == "$want" ]] && pass "docker run --init: docker-init is PID 1" ||
  fail "--init: sentry '$got', runc '$want'"

id=$(docker run -d --network none --runtime=sentry $IMG sleep 60)
docker rm -f "$id" >/dev/null && ! pgrep -f "$id" >/dev/null && pass "rm -f of a running container" ||
  fail "rm -f running: $(pgrep -af "$id")"
mounts=$(grep -c "$work/exec" /proc/self/mountinfo)
echo "note: $mounts mounts of the private daemon's exec root remain (dockerd's own)"

# containerd alone: ctr run --runc-binary, as a Kubernetes RuntimeClass handler would.
if docker save $IMG | "${CTR[@]}" images import --snapshotter native - >/dev/null 2>&1; then
  CIMG=docker.io/library/$IMG
  out=$("${CTR[@]}" run --rm --snapshotter native --runc-binary "$SENTRY" $CIMG ctr1 \
    sh -c 'echo hello-from-ctr; exit 7' 2>&1)
  rc=$?
  [[ $rc == 7 && $out == hello-from-ctr ]] && pass "ctr run: stdout, exit 7" ||
    fail "ctr run: rc=$rc out=$out"
  "${CTR[@]}" run -d --snapshotter native --runc-binary "$SENTRY" $CIMG ctr2 sleep 60 >/dev/null
  pids=$("${CTR[@]}" tasks ps ctr2 2>/dev/null | awk 'NR > 1 {print $1}')
  [[ $(wc -w <<<"$pids") -ge 3 ]] && pass "ctr tasks ps: $(wc -w <<<"$pids") host PIDs" ||
    fail "ctr tasks ps: $pids"
  "${CTR[@]}" tasks kill -s SIGKILL ctr2
  for _ in $(seq 50); do
    "${CTR[@]}" tasks ls 2>/dev/null | grep -q "ctr2.*STOPPED" && break
    sleep 0.1
  done
  "${CTR[@]}" tasks delete ctr2 >/dev/null && "${CTR[@]}" containers rm ctr2 &&
    pass "ctr tasks kill, delete" || fail "ctr kill/delete: $("${CTR[@]}" tasks ls 2>&1)"
  left=""
  for p in $pids; do [[ -d /proc/$p ]] && grep -qv "^[^)]*) Z" "/proc/$p/stat" && left+=" $p"; done
  [[ -z $left ]] && pass "ctr: no process left" || fail "ctr left:$left"
else
  echo "note: ctr image import failed; the ctr checks were not run"
fi

# Start-up time, reported only: median of 5 runs of `docker run --rm IMG true`.
median() {
  local rt=$1 times=()
  for _ in 1 2 3 4 5; do
    local t0 t1
    t0=$(date +%s%N)
    docker run --rm --network none --runtime="$rt" $IMG true >/dev/null 2>&1 || return
    t1=$(date +%s%N)
    times+=($(((t1 - t0) / 1000000)))
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n 3p
}
# runsc (gVisor, ptrace platform) when installed; "n/a" if it cannot run here.
runsc_ms="n/a (not installed)"
if command -v runsc >/dev/null; then
  ms=$(median runsc)
  runsc_ms=${ms:+$ms ms}
  runsc_ms=${runsc_ms:-"n/a ($(docker run --rm --network none --runtime=runsc $IMG true 2>&1 | tail -c 200))"}
fi
echo "startup median of 5 (docker run --rm IMG true): sentry $(median sentry) ms," \
  "runc $(median runc) ms, runsc $runsc_ms"

echo "$failures failure(s)"
((failures == 0))
