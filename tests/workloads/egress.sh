#!/usr/bin/env bash
# Egress policy of `sentry-run --net=host` (docs/network.md, "The egress test"):
#
#   egress.sh SENTRY_RUN PLATFORM
#
# Builds a private network of two namespaces joined by a veth pair -- "guest" 198.18.0.1/24,
# "far" 198.18.0.2/24, which also holds 169.254.169.254 (a cloud metadata address) and
# 10.77.0.2 (a private range), routed from the guest side -- with dnsmasq and python http.server
# on the far side, then runs sentry-run in the guest namespace under a series of
# --allow-net / --deny-net policies and checks what its guest can reach, what its DNS answers
# and what sentry-run reports. Nothing leaves the machine: no interface of the test is in the
# caller's namespace.
#
# Prints `ok CASE` or `FAIL CASE: why` per case. Exit status: 0 all cases passed; 1 a case
# failed; 2 a usage or harness error (the network does not work natively, so the sandbox was
# not judged); 77 (CTest SKIP_RETURN_CODE) the host cannot build the network (not root, no
# network namespaces or veth, no dnsmasq, ip or python3: see tools/setup.sh).
#
# Time: setup waits at most 10 s for the servers and 20 s for the native check; each sandbox
# run gets at most 20 s and none lasts past 100 s after the script began (the cases left then
# are reported as FAIL), so the script ends within about 105 s even when every run hangs.
set -u

if [ $# -ne 2 ]; then
  echo "usage: $0 SENTRY_RUN PLATFORM" >&2
  exit 2
fi
sentry_run=$1
platform=$2
if [ ! -x "$sentry_run" ]; then
  echo "egress.sh: not an executable: $sentry_run" >&2
  exit 2
fi
sentry_run=$(realpath "$sentry_run") || exit 2

skip() {
  echo "SKIP egress: $*"
  exit 77
}

# The guest sees the host's /usr, not a pyenv shim or a virtualenv on PATH.
py=/usr/bin/python3
[ "$(id -u)" = 0 ] || skip "needs root (network namespaces, veth, /etc/netns)"
command -v ip >/dev/null || skip "needs ip (iproute2; see tools/setup.sh)"
command -v dnsmasq >/dev/null || skip "needs dnsmasq (dnsmasq-base; see tools/setup.sh)"
[ -x "$py" ] || skip "needs $py (python3; see tools/setup.sh)"

# Names unique to this run, so that the ptrace and seccomp tests can run side by side.
gns=sentry-egress-$$-guest
fns=sentry-egress-$$-far
work=$(mktemp -d /tmp/sentry-egress.XXXXXX) || exit 2
made_netns_dir=0
server_pids=()

cleanup() {
  local pid ns
  for pid in "${server_pids[@]}"; do kill "$pid" 2>/dev/null; done
  if [ -s "$work/dnsmasq.pid" ]; then kill "$(cat "$work/dnsmasq.pid")" 2>/dev/null; fi
  # Whatever is still in our namespaces (a sandbox left behind by a timeout) was started here.
  for ns in "$gns" "$fns"; do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
  done
  for pid in "${server_pids[@]}"; do wait "$pid" 2>/dev/null; done
  ip netns del "$gns" 2>/dev/null
  ip netns del "$fns" 2>/dev/null
  rm -rf "/etc/netns/$gns" "$work"
  if [ "$made_netns_dir" = 1 ]; then rmdir /etc/netns 2>/dev/null; fi
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
trap 'exit 129' HUP

in_guest() { ip netns exec "$gns" "$@"; }

# --- The network -------------------------------------------------------------------------------

for ns in "$gns" "$fns"; do
  ip netns add "$ns" 2>"$work/netns.err" ||
    skip "cannot create a network namespace: $(cat "$work/netns.err")"
done
# Made inside the guest namespace with its peer moved at once: no interface of ours is ever in
# the caller's namespace, so fixed names cannot collide.
ip -n "$gns" link add eg0 type veth peer name eg1 netns "$fns" 2>"$work/netns.err" ||
  skip "cannot create a veth pair: $(cat "$work/netns.err")"
setup_network() {
  ip -n "$gns" link set lo up &&
    ip -n "$gns" addr add 198.18.0.1/24 dev eg0 &&
    ip -n "$gns" link set eg0 up &&
    ip -n "$gns" route add 169.254.169.254/32 via 198.18.0.2 &&
    ip -n "$gns" route add 10.77.0.2/32 via 198.18.0.2 &&
    ip -n "$fns" link set lo up &&
    ip -n "$fns" addr add 198.18.0.2/24 dev eg1 &&
    ip -n "$fns" addr add 169.254.169.254/32 dev lo &&
    ip -n "$fns" addr add 10.77.0.2/32 dev lo &&
    ip -n "$fns" link set eg1 up &&
    # Ping sockets for every group in the guest namespace (where the Sentry opens its host
    # ping sockets); the host's default there is "1 0", nobody.
    ip netns exec "$gns" sh -c 'echo "0 2147483647" >/proc/sys/net/ipv4/ping_group_range'
}
if ! setup_network; then
  echo "ERROR egress: cannot configure the test network (see above)"
  exit 2
fi

# `ip netns exec GUEST` bind-mounts this file on /etc/resolv.conf, for the guest's tools and
# for sentry-run's own resolver alike.
[ -d /etc/netns ] || made_netns_dir=1
mkdir -p "/etc/netns/$gns" && echo "nameserver 198.18.0.2" >"/etc/netns/$gns/resolv.conf" ||
  exit 2

# dnsmasq reads no config file, hosts file nor resolv.conf and has no upstream: it knows its
# four names and nothing else. --bind-interfaces with the one address keeps it off every other
# address, even in its own namespace. It forks into the background once it listens; its pid
# file is how the cleanup finds it.
ip netns exec "$fns" dnsmasq --conf-file=/dev/null --no-resolv --no-hosts --bind-interfaces \
  --listen-address=198.18.0.2 --port=53 --pid-file="$work/dnsmasq.pid" \
  --log-facility="$work/dnsmasq.log" --log-queries --user=nobody \
  --address=/allowed.test/198.18.0.2 --address=/denied.test/198.18.0.2 \
  --address=/meta.test/169.254.169.254 --address=/private.test/10.77.0.2 \
  2>"$work/dnsmasq.err" || {
  echo "ERROR egress: dnsmasq did not start: $(cat "$work/dnsmasq.err")"
  exit 2
}

# One http.server per address and port, each serving a page that says which one it is.
serve() {
  local addr=$1 port=$2 body=$3 dir=$work/www-$1-$2
  mkdir -p "$dir" && echo "$body" >"$dir/index.html" || exit 2
  # $! is ip's pid, which becomes python's (ip netns exec execs).
  ip netns exec "$fns" "$py" -m http.server --bind "$addr" --directory "$dir" "$port" \
    >"$work/http-$addr-$port.log" 2>&1 </dev/null &
  server_pids+=($!)
}
serve 198.18.0.2 8080 far-8080
serve 198.18.0.2 8081 far-8081
serve 169.254.169.254 80 metadata
serve 10.77.0.2 80 private

# --- The client --------------------------------------------------------------------------------

# Runs natively and in the sandbox: `client OP ARGS [+ OP ARGS]...` performs each operation in
# order and prints one line per operation with its result. Errors are printed as their errno
# name (ECONNREFUSED) or getaddrinfo code (gaierror:EAI_NONAME), never raised.
read -r -d '' client <<'PYEOF'
import errno, socket, struct, subprocess, sys, time, urllib.error, urllib.request

TIMEOUT = 3.0
EAI_NAMES = {getattr(socket, n): n for n in dir(socket) if n.startswith("EAI_")}


def why(e):
    if isinstance(e, urllib.error.URLError) and isinstance(e.reason, BaseException):
        return why(e.reason)
    if isinstance(e, socket.gaierror):
        return "gaierror:" + EAI_NAMES.get(e.errno, str(e.errno))
    if isinstance(e, socket.timeout):
        return "timeout"
    if isinstance(e, OSError) and e.errno:
        return errno.errorcode.get(e.errno, str(e.errno))
    return type(e).__name__ + ":" + str(e).replace("\n", " ")


def fetch(url):
    # No proxy from the environment: the request must go where the URL says.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=TIMEOUT) as r:
            return "ok " + r.read().decode(errors="replace").strip()
    except Exception as e:
        return "err " + why(e)


def resolve(name):
    try:
        infos = socket.getaddrinfo(name, 80, socket.AF_INET, socket.SOCK_STREAM)
        return "ok " + ",".join(sorted({i[4][0] for i in infos}))
    except Exception as e:
        return "err " + why(e)


def connect(addr, port, times):
    # Each attempt's result, then how long the slowest took (ENETUNREACH must come at once).
    results, slowest = [], 0.0
    for _ in range(int(times)):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(TIMEOUT)
        start = time.monotonic()
        try:
            s.connect((addr, int(port)))
            results.append("ok")
        except Exception as e:
            results.append(why(e))
        slowest = max(slowest, time.monotonic() - start)
        s.close()
    return " ".join(results) + " slowest=%.2f" % slowest


def udp(addr, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.sendto(b"ping", (addr, int(port)))
        return "ok"
    except Exception as e:
        return "err " + why(e)
    finally:
        s.close()


def dns_query(name, qid):
    header = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)  # RD, one question
    labels = b"".join(bytes([len(p)]) + p.encode() for p in name.split("."))
    return header + labels + b"\0" + struct.pack(">HH", 1, 1)  # A, IN


def skip_name(msg, i):
    while True:
        n = msg[i]
        if n == 0:
            return i + 1
        if n & 0xC0 == 0xC0:
            return i + 2
        i += 1 + n


def dns_answer(msg, qid):
    rid, flags, qd, an, _, _ = struct.unpack(">HHHHHH", msg[:12])
    if rid != qid:
        return "err wrong-id"
    i = 12
    for _ in range(qd):
        i = skip_name(msg, i) + 4
    addrs = []
    for _ in range(an):
        i = skip_name(msg, i)
        rtype, _, _, rdlen = struct.unpack(">HHIH", msg[i:i + 10])
        i += 10
        if rtype == 1 and rdlen == 4:
            addrs.append(socket.inet_ntoa(msg[i:i + 4]))
        i += rdlen
    return "rcode=%d a=%s" % (flags & 0xF, ",".join(sorted(addrs)))


def recv_exact(s, n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise EOFError("short read")
        data += chunk
    return data


def dns(proto, server, name):
    qid = 0x5E17
    q = dns_query(name, qid)
    kind = socket.SOCK_STREAM if proto == "tcp" else socket.SOCK_DGRAM
    s = socket.socket(socket.AF_INET, kind)
    s.settimeout(TIMEOUT)
    try:
        if proto == "tcp":
            s.connect((server, 53))
            s.sendall(struct.pack(">H", len(q)) + q)
            msg = recv_exact(s, struct.unpack(">H", recv_exact(s, 2))[0])
        else:
            s.sendto(q, (server, 53))
            msg = s.recv(4096)
        return dns_answer(msg, qid)
    except Exception as e:
        return "err " + why(e)
    finally:
        s.close()


SERVER = """
import http.server
class Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"loopback-page"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), Page)
print(s.server_address[1], flush=True)
s.handle_request()
"""


def loopback():
    # A server process and this client, both in the sandbox, over its loopback.
    p = subprocess.Popen([sys.executable, "-c", SERVER], stdout=subprocess.PIPE)
    try:
        port = int(p.stdout.readline())
        return fetch("http://127.0.0.1:%d/" % port)
    except Exception as e:
        return "err " + why(e)
    finally:
        p.kill()
        p.wait()


def ping(addr):
    # One echo through a ping socket: the reply must carry this socket's ident as id, and
    # the sequence and payload sent.
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP)
    s.settimeout(TIMEOUT)
    try:
        payload = b"sentry-egress"
        s.sendto(struct.pack(">BBHHH", 8, 0, 0, 0x77, 5) + payload, (addr, 0))
        rep, src = s.recvfrom(2048)
        kind, code, _, rid, seq = struct.unpack(">BBHHH", rep[:8])
        if (kind, code, rid, seq, rep[8:]) != (0, 0, s.getsockname()[1], 5, payload):
            return "err bad-reply " + rep.hex()
        return "ok reply from " + src[0]
    except Exception as e:
        return "err " + why(e)
    finally:
        s.close()


def checksum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(">%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def rawping(addr, kind="8"):
    # One ICMP message of type `kind` through a raw socket (busybox ping's way): the reply to
    # an echo must come back with the id sent (not rewritten), behind an IPv4 header from
    # `addr` to this namespace's address with a TTL and a valid checksum.
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    s.settimeout(TIMEOUT)
    try:
        payload = b"sentry-egress-raw"
        msg = struct.pack(">BBHHH", int(kind), 0, 0, 0x4d2, 6) + payload
        msg = msg[:2] + struct.pack(">H", checksum(msg)) + msg[4:]
        s.sendto(msg, (addr, 0))
        while True:  # natively other ICMP may arrive: wait for this reply
            pkt, src = s.recvfrom(2048)
            rep = pkt[(pkt[0] & 15) * 4:]
            if len(rep) >= 8 and rep[0] == 0 and rep[4:6] == b"\x04\xd2":
                break
        _, code, _, _, seq = struct.unpack(">BBHHH", rep[:8])
        got = (pkt[0], pkt[9], socket.inet_ntoa(pkt[12:16]), socket.inet_ntoa(pkt[16:20]),
               code, seq, rep[8:], checksum(pkt[:20]), pkt[8] > 0)
        if got != (0x45, 1, addr, "198.18.0.1", 0, 6, payload, 0, True):
            return "err bad-reply " + pkt.hex()
        return "ok raw reply from " + src[0]
    except Exception as e:
        return "err " + why(e)
    finally:
        s.close()


def run(*cmd):
    # A program's exit status; its output is not judged.
    try:
        return "exit %d" % subprocess.run(list(cmd), stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL, timeout=10).returncode
    except Exception as e:
        return "err " + why(e)


def listen(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("0.0.0.0", int(port)))
        s.listen(5)
        return "ok"
    except Exception as e:
        return "err " + why(e)
    finally:
        s.close()


def serve(port, seconds):
    # A server on the wildcard address: prints "listening", answers one request (or gives up
    # after SECONDS) and returns the peers getpeername showed.
    import http.server
    peers = []

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            peers.append(self.client_address[0])
            body = b"guest-page"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    s = http.server.HTTPServer(("0.0.0.0", int(port)), Page)
    print("listening", flush=True)
    s.timeout = float(seconds)
    s.handle_request()
    s.server_close()
    return "peers=" + ",".join(peers)


def udp_serve(port, seconds):
    # A UDP socket on the wildcard address: prints "listening", echoes one datagram (or gives
    # up after SECONDS) and returns where it came from.
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", int(port)))
    print("listening", flush=True)
    s.settimeout(float(seconds))
    try:
        data, peer = s.recvfrom(2048)
        s.sendto(b"echo:" + data, peer)
        return "from=" + peer[0]
    except Exception as e:
        return "err " + why(e)
    finally:
        s.close()


def udp_ask(addr, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(TIMEOUT)
    try:
        s.sendto(b"hi", (addr, int(port)))
        return "ok " + s.recv(2048).decode()
    except Exception as e:
        return "err " + why(e)
    finally:
        s.close()


OPS = {"fetch": fetch, "resolve": resolve, "connect": connect, "udp": udp, "dns": dns,
       "loopback": loopback, "ping": ping, "rawping": rawping, "run": run, "listen": listen, "serve": serve,
       "udp_serve": udp_serve, "udp_ask": udp_ask}

args = sys.argv[1:]
while args:
    op = args[:args.index("+")] if "+" in args else args
    args = args[len(op) + 1:]
    print(OPS[op[0]](*op[1:]), flush=True)
PYEOF

# --- Is the network up? ------------------------------------------------------------------------

# Polls (at most 10 s) until dnsmasq and every http.server answer from the guest namespace.
ready_ops=(fetch http://198.18.0.2:8080/ + fetch http://198.18.0.2:8081/
           + fetch http://169.254.169.254/ + fetch http://10.77.0.2/
           + dns udp 198.18.0.2 allowed.test)
ready_want=$(printf '%s\n' "ok far-8080" "ok far-8081" "ok metadata" "ok private" \
  "rcode=0 a=198.18.0.2")
until_ready=$((SECONDS + 10))
while :; do
  got=$(in_guest timeout -k 1 5 "$py" -c "$client" "${ready_ops[@]}" 2>&1)
  [ "$got" = "$ready_want" ] || [ "$SECONDS" -ge "$until_ready" ] && break
  sleep 0.2
done
if [ "$got" != "$ready_want" ]; then
  echo "ERROR egress: the servers did not come up within 10 s; the guest namespace got:"
  echo "$got"
  echo "--- dnsmasq log:"
  cat "$work/dnsmasq.err" "$work/dnsmasq.log" 2>/dev/null | tail -n 20
  exit 2
fi

# Natively, in the guest namespace, everything the sandbox is to be refused is reachable and
# every name resolves: a refusal under sentry-run is then the Sentry's doing, not the harness's.
native_ops=(fetch http://allowed.test:8080/ + fetch http://denied.test:8081/
            + fetch http://meta.test/ + fetch http://private.test/
            + resolve denied.test + udp 198.18.0.2 9999
            + dns tcp 198.18.0.2 allowed.test + dns tcp 198.18.0.2 denied.test
            + ping 198.18.0.2 + ping 10.77.0.2 + rawping 198.18.0.2)
native_want=$(printf '%s\n' "ok far-8080" "ok far-8081" "ok metadata" "ok private" \
  "ok 198.18.0.2" "ok" "rcode=0 a=198.18.0.2" "rcode=0 a=198.18.0.2" \
  "ok reply from 198.18.0.2" "ok reply from 10.77.0.2" "ok raw reply from 198.18.0.2")
got=$(in_guest timeout -k 1 20 "$py" -c "$client" "${native_ops[@]}" 2>&1)
if [ "$got" != "$native_want" ]; then
  echo "ERROR egress: the test network does not work natively; the guest namespace got:"
  diff <(echo "$native_want") <(echo "$got")
  exit 2
fi
echo "ok native: the guest namespace reaches every server and name without the sandbox"

# --- The cases ---------------------------------------------------------------------------------

failures=0
deadline=100  # seconds since the script began (bash's SECONDS)

# fail CASE WHY -- reports CASE as failed; returns 1, for `check || return`.
fail() {
  echo "FAIL $1: $2"
  failures=$((failures + 1))
  return 1
}

# The first lines of a run's stderr, indented, for a FAIL message.
stderr_of() {
  if [ -s "$work/$1.err" ]; then
    echo
    head -n 5 "$work/$1.err" | sed 's/^/    stderr: /'
  fi
}

# sandbox CASE [SENTRY_RUN_FLAGS...] -- OP ARGS [+ OP ARGS]...
# Runs the client in a fresh sandbox in the guest namespace, its stderr kept in $work/CASE.err.
# Sets res[] to the result lines, one per OP. If sentry-run did not exit 0 with one line per OP,
# reports CASE as failed and returns 1.
sandbox() {
  local name=$1 flags=() ops=1 arg
  shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    flags+=("$1")
    shift
  done
  shift
  for arg in "$@"; do [ "$arg" = + ] && ops=$((ops + 1)); done
  res=()
  local left=$((deadline - SECONDS))
  if [ "$left" -le 0 ]; then
    fail "$name" "not run: the script's 100 s are used up"
    return
  fi
  ((left > 20)) && left=20
  # In the background: `wait` lets a TERM from CTest or ^C run the traps at once, and the
  # cleanup then kills the run (it is in the guest namespace).
  ip netns exec "$gns" timeout -k 2 "$left" \
    "$sentry_run" --platform="$platform" "${flags[@]}" -- "$py" -c "$client" "$@" \
    </dev/null >"$work/$name.out" 2>"$work/$name.err" &
  wait $!
  local status=$?
  mapfile -t res <"$work/$name.out"
  if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    fail "$name" "sentry-run ${flags[*]} timed out after $left s$(stderr_of "$name")"
    return
  fi
  if [ "$status" -ne 0 ] || [ "${#res[@]}" -ne "$ops" ]; then
    fail "$name" "sentry-run ${flags[*]} exited $status with ${#res[@]} of $ops result lines$(
      stderr_of "$name")"
    return
  fi
}

# denials CASE ADDR:PORT -- how many denial lines in CASE's stderr name that destination.
denials() {
  local re=${2//./\\.}
  grep -F 'sentry: network: denied' "$work/$1.err" | grep -cE "(^|[^0-9.])$re([^0-9]|$)"
}

# expect CASE INDEX WANT -- result line INDEX (from 0) is WANT; otherwise reports CASE failed.
expect() {
  if [ "${res[$2]}" != "$3" ]; then
    fail "$1" "operation $(($2 + 1)): want \"$3\", got \"${res[$2]}\"$(stderr_of "$1")"
  fi
}

# expect_refused CASE INDEX -- a fetch by name was refused: ECONNREFUSED at connect, or the
# name not resolved at all (NXDOMAIN). Either keeps the destination unreachable.
expect_refused() {
  case "${res[$2]}" in
    "err ECONNREFUSED" | "err gaierror:EAI_NONAME") return 0 ;;
  esac
  fail "$1" "operation $(($2 + 1)): want ECONNREFUSED or NXDOMAIN, got \"${res[$2]}\"$(
    stderr_of "$1")"
}

# expect_denials CASE ADDR:PORT N -- CASE's stderr names that destination in N denial lines.
expect_denials() {
  local n
  n=$(denials "$1" "$2")
  if [ "$n" -ne "$3" ]; then
    fail "$1" "want $3 'sentry: network: denied' line(s) for $2 on stderr, got $n$(
      stderr_of "$1")"
  fi
}

# expect_connect CASE INDEX WANT [SECONDS] -- a `connect` result: each attempt's outcome is WANT
# ("ECONNREFUSED ECONNREFUSED"), and with SECONDS, none took that long.
expect_connect() {
  local got=${res[$2]% slowest=*} slowest=${res[$2]##*slowest=}
  if [ "$got" != "$3" ]; then
    fail "$1" "operation $(($2 + 1)): want connect results \"$3\", got \"${res[$2]}\"$(
      stderr_of "$1")"
  elif [ -n "${4:-}" ] && ! awk -v s="$slowest" -v max="$4" 'BEGIN { exit !(s < max) }'; then
    fail "$1" "operation $(($2 + 1)): $3 took $slowest s, not at once (< $4 s)"
  fi
}

# Each case is a function named after it. It reports its own failure (fail) and returns 0 only
# when every check passed. Each sandbox run is a fresh sandbox, so what one case resolved does
# not open anything for the next.

allow_domain() {  # (a) an allowed name is resolved and reached; nothing is reported denied
  local c=${FUNCNAME[0]}
  sandbox "$c" --net=host --allow-net=allowed.test -- fetch http://allowed.test:8080/ &&
    expect "$c" 0 "ok far-8080" || return
  if grep -q 'sentry: network: denied' "$work/$c.err"; then
    fail "$c" "a denial was reported for an allowed fetch$(stderr_of "$c")"
  fi
}

nxdomain() {  # (b) a name no rule allows: NXDOMAIN, through libc and asked by hand over UDP
  local c=${FUNCNAME[0]}
  sandbox "$c" --net=host --allow-net=allowed.test -- \
    resolve denied.test + dns udp 198.18.0.2 denied.test &&
    expect "$c" 0 "err gaierror:EAI_NONAME" &&
    expect "$c" 1 "rcode=3 a="
}

deny_ip_once() {  # (c) 198.18.0.2 is allowed.test's address, but nothing resolved it here
  local c=${FUNCNAME[0]}
  sandbox "$c" --net=host --allow-net=allowed.test -- connect 198.18.0.2 8081 3 &&
    expect_connect "$c" 0 "ECONNREFUSED ECONNREFUSED ECONNREFUSED" &&
    expect_denials "$c" 198.18.0.2:8081 1
}

resolved_ip() {  # (c) ... and once an allowed name resolved to it in this sandbox, it is open
  local c=${FUNCNAME[0]}
  sandbox "$c" --net=host --allow-net=allowed.test -- \
    resolve allowed.test + connect 198.18.0.2 8081 1 &&
    expect "$c" 0 "ok 198.18.0.2" &&
    expect_connect "$c" 1 "ok"
}

cidr_port() {  # (d) a CIDR rule with a port opens that port only
  local c=${FUNCNAME[0]}
  sandbox "$c" --net=host --allow-net=198.18.0.0/24:8080 -- \
    fetch http://198.18.0.2:8080/ + fetch http://198.18.0.2:8081/ &&
    expect "$c" 0 "ok far-8080" &&
    expect "$c" 1 "err ECONNREFUSED" &&
    expect_denials "$c" 198.18.0.2:8081 1 &&
    expect_denials "$c" 198.18.0.2:8080 0
}

private_default() {  # (e) no allow rule: public is open, metadata and 10/8 are not
  local c=${FUNCNAME[0]}
  sandbox "$c" --net=host -- \
    fetch http://allowed.test:8080/ + fetch http://meta.test/ + fetch http://169.254.169.254/ \
    + fetch http://private.test/ + fetch http://10.77.0.2/ &&
    expect "$c" 0 "ok far-8080" &&
    expect_refused "$c" 1 &&
    expect "$c" 2 "err ECONNREFUSED" &&
    expect_refused "$c" 3 &&
    expect "$c" 4 "err ECONNREFUSED" &&
    expect_denials "$c" 169.254.169.254:80 1 &&
    expect_denials "$c" 10.77.0.2:80 1
}

private_domain_rule() {  # (e) an allowed name that resolves into a private range stays shut
  local c=${FUNCNAME[0]}
  sandbox "$c" --net=host --allow-net=meta.test --allow-net=private.test -- \
    fetch http://meta.test/ + fetch http://private.test/ &&
    expect_refused "$c" 0 &&
    expect_refused "$c" 1
}

private_cidr_rule() {  # (e) a CIDR rule covering it opens it, and only it
  local c=${FUNCNAME[0]}
  sandbox "$c" --net=host --allow-net=169.254.169.254/32 -- \
    fetch http://169.254.169.254/ + fetch http://198.18.0.2:8080/ &&
    expect "$c" 0 "ok metadata" &&
    expect "$c" 1 "err ECONNREFUSED"
}

udp_eperm() {  # (f) a denied UDP destination: EPERM, reported once
  local c=${FUNCNAME[0]}
  sandbox "$c" --net=host --allow-net=allowed.test -- udp 198.18.0.2 9999 &&
    expect "$c" 0 "err EPERM" &&
    expect_denials "$c" 198.18.0.2:9999 1
}

dns_tcp() {  # (g) the Sentry answers DNS over TCP too
  local c=${FUNCNAME[0]}
  sandbox "$c" --net=host --allow-net=allowed.test -- \
    dns tcp 198.18.0.2 allowed.test + dns tcp 198.18.0.2 denied.test &&
    expect "$c" 0 "rcode=0 a=198.18.0.2" &&
    expect "$c" 1 "rcode=3 a=" &&
    expect_denials "$c" 198.18.0.2:53 0
}

dns_any_address() {  # (g) ... at any address: 192.0.2.1 has no route from the guest namespace
  local c=${FUNCNAME[0]}
  sandbox "$c" --net=host --allow-net=allowed.test -- \
    dns udp 192.0.2.1 allowed.test + dns tcp 192.0.2.1 allowed.test &&
    expect "$c" 0 "rcode=0 a=198.18.0.2" &&
    expect "$c" 1 "rcode=0 a=198.18.0.2" &&
    expect_denials "$c" 192.0.2.1:53 0
}

deny_wins() {  # (h) a name both allowed and denied is denied
  local c=${FUNCNAME[0]}
  sandbox "$c" --net=host --allow-net=allowed.test --deny-net=allowed.test -- \
    fetch http://allowed.test:8080/ &&
    expect_refused "$c" 0
}

deny_cidr_port() {  # (h) a port denied inside an allowed CIDR
  local c=${FUNCNAME[0]}
  sandbox "$c" --net=host --allow-net=198.18.0.0/24 --deny-net=198.18.0.2:8081 -- \
    fetch http://198.18.0.2:8080/ + fetch http://198.18.0.2:8081/ &&
    expect "$c" 0 "ok far-8080" &&
    expect "$c" 1 "err ECONNREFUSED" &&
    expect_denials "$c" 198.18.0.2:8081 1
}

unreachable_default() {  # (i) without --net: loopback only, ENETUNREACH at once
  local c=${FUNCNAME[0]}
  sandbox "$c" -- connect 198.18.0.2 8080 1 &&
    expect_connect "$c" 0 "ENETUNREACH" 1.5
}

unreachable_none() {  # (i) the same with --net=none said
  local c=${FUNCNAME[0]}
  sandbox "$c" --net=none -- connect 198.18.0.2 8080 1 &&
    expect_connect "$c" 0 "ENETUNREACH" 1.5
}

loopback() {  # (j) --net=host keeps the sandbox's own loopback
  local c=${FUNCNAME[0]}
  sandbox "$c" --net=host --allow-net=allowed.test -- loopback &&
    expect "$c" 0 "ok loopback-page"
}

ping_allowed() {  # (k) an echo to an allowed address goes out through a host ping socket
  local c=${FUNCNAME[0]}
  # A raw socket's echo goes the same way (its id kept, an IPv4 header made for the reply);
  # another ICMP type cannot leave: EPERM, reported as such.
  sandbox "$c" --net=host --allow-net=198.18.0.0/24 -- \
    ping 198.18.0.2 + run ping -c 2 -i 0.2 -W 2 198.18.0.2 + run ping -c 2 -i 0.2 127.0.0.1 \
    + rawping 198.18.0.2 + rawping 198.18.0.2 13 &&
    expect "$c" 0 "ok reply from 198.18.0.2" &&
    expect "$c" 1 "exit 0" &&
    expect "$c" 2 "exit 0" &&
    expect "$c" 3 "ok raw reply from 198.18.0.2" &&
    expect "$c" 4 "err EPERM" &&
    expect_denials "$c" 198.18.0.2:0 1
}

ping_denied() {  # (k) ... to a denied one: EPERM at once, reported once, as for UDP
  local c=${FUNCNAME[0]}
  sandbox "$c" --net=host --allow-net=allowed.test -- \
    ping 198.18.0.2 + ping 198.18.0.2 + ping 10.77.0.2 + run ping -c 1 -W 2 198.18.0.2 \
    + rawping 198.18.0.2 &&
    expect "$c" 0 "err EPERM" &&
    expect "$c" 1 "err EPERM" &&
    expect "$c" 2 "err EPERM" &&
    expect "$c" 3 "exit 2" &&  # its UDP probe (connect to port 1025) is refused first
    expect "$c" 4 "err EPERM" &&  # a raw socket's echo: the same rule, the same report
    expect_denials "$c" 198.18.0.2:0 1 &&
    expect_denials "$c" 10.77.0.2:0 1
}

# published CASE FETCH_PORT [SENTRY_RUN_FLAGS...] -- a guest server on 0.0.0.0:8000 (one
# request, at most 4 s), fetched from the far side at 198.18.0.1:FETCH_PORT once it listens.
# Sets fetched (the far side's result) and res[] (the guest's lines: listening, peers=...).
# With guest_op / far_op set (udp_serve, udp_ask), the same for a UDP echo.
published() {
  local name=$1 port=$2 gop=${guest_op:-serve} fop=${far_op:-fetch}
  shift 2
  fetched="not fetched"
  res=()
  if [ $((deadline - SECONDS)) -le 12 ]; then
    fail "$name" "not run: the script's 100 s are used up"
    return
  fi
  ip netns exec "$gns" timeout -k 2 12 "$sentry_run" --platform="$platform" --net=host "$@" \
    -- "$py" -c "$client" "$gop" 8000 4 </dev/null >"$work/$name.out" 2>"$work/$name.err" &
  local pid=$! i
  for i in $(seq 50); do
    grep -q '^listening' "$work/$name.out" && break
    sleep 0.2
  done
  if [ "$fop" = fetch ]; then
    fetched=$(ip netns exec "$fns" "$py" -c "$client" fetch "http://198.18.0.1:$port/" 2>&1)
  else
    fetched=$(ip netns exec "$fns" "$py" -c "$client" "$fop" 198.18.0.1 "$port" 2>&1)
  fi
  wait "$pid"
  local status=$?
  mapfile -t res <"$work/$name.out"
  if [ "$status" -ne 0 ] || [ "${#res[@]}" -ne 2 ]; then
    fail "$name" "sentry-run $* exited $status with ${#res[@]} of 2 lines$(stderr_of "$name")"
  fi
}

publish() {  # (l) --publish=8001:8000: the far side reaches the guest's server on host port 8001
  local c=${FUNCNAME[0]}
  published "$c" 8001 --publish=8001:8000 || return
  [ "$fetched" = "ok guest-page" ] ||
    fail "$c" "the far side fetched \"$fetched\", want \"ok guest-page\"$(stderr_of "$c")" ||
    return
  expect "$c" 0 "listening" &&
    expect "$c" 1 "peers=198.18.0.2"  # getpeername: the real remote address
}

publish_none() {  # (l) without --publish the same server is the sandbox's own
  local c=${FUNCNAME[0]}
  published "$c" 8000 --allow-net=allowed.test || return
  [ "$fetched" = "err ECONNREFUSED" ] ||
    fail "$c" "the far side fetched \"$fetched\", want \"err ECONNREFUSED\"" || return
  expect "$c" 0 "listening" &&
    expect "$c" 1 "peers="
}

publish_udp() {  # (l) --publish=9053:8000/udp: a guest UDP socket on 0.0.0.0:8000 gets host 9053
  local c=${FUNCNAME[0]}
  guest_op=udp_serve far_op=udp_ask published "$c" 9053 --publish=9053:8000/udp || return
  [ "$fetched" = "ok echo:hi" ] ||
    fail "$c" "the far side got \"$fetched\", want \"ok echo:hi\"$(stderr_of "$c")" || return
  expect "$c" 0 "listening" &&
    expect "$c" 1 "from=198.18.0.2"
}

publish_taken() {  # (l) a published port the host side already uses: EADDRINUSE at listen
  local c=${FUNCNAME[0]} holder
  ip netns exec "$gns" "$py" -c "import socket, time
s = socket.socket(); s.bind(('0.0.0.0', 8002)); s.listen(1); print('up', flush=True)
time.sleep(30)" >"$work/holder.out" 2>&1 </dev/null &
  holder=$!
  server_pids+=("$holder")
  for _ in $(seq 50); do
    grep -q '^up' "$work/holder.out" && break
    sleep 0.1
  done
  sandbox "$c" --net=host --publish=8002 -- listen 8002 + listen 8003
  local ok=$?
  kill "$holder" 2>/dev/null
  [ "$ok" -eq 0 ] &&
    expect "$c" 0 "err EADDRINUSE" &&
    expect "$c" 1 "ok"
}

cases=(allow_domain nxdomain deny_ip_once resolved_ip cidr_port private_default
       private_domain_rule private_cidr_rule udp_eperm dns_tcp dns_any_address deny_wins
       deny_cidr_port unreachable_default unreachable_none loopback ping_allowed ping_denied
       publish publish_none publish_udp publish_taken)
for c in "${cases[@]}"; do
  before=$failures
  if "$c"; then
    echo "ok $c"
  elif [ "$failures" -eq "$before" ]; then
    fail "$c" "a check failed without saying why (a bug in egress.sh)"
  fi
done
echo "egress on $platform: $((${#cases[@]} - failures)) of ${#cases[@]} cases passed"
[ "$failures" -eq 0 ]
