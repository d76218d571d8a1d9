# Workload: programs that talk over sockets inside one sandbox -- python's http.server fetched
# 200 times by urllib, an asyncio echo server and client, multiprocessing.Manager (a server
# process on a unix socket), node's http server fetched by curl, `git clone` over `git
# daemon` on loopback, ssh-agent with ssh-add, and socat relaying a unix socket to a TCP
# port. Only deterministic output is printed.
set -eu
work=$(mktemp -d /tmp/wl_net.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
cd "$work"

cat >py_net.py <<'PYEOF'
import asyncio
import http.server
import multiprocessing as m
import socket
import threading
import urllib.request


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def http_round():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    port = srv.server_address[1]
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    sizes = set()
    for _ in range(200):
        with urllib.request.urlopen("http://127.0.0.1:%d/index.txt" % port) as r:
            sizes.add((r.status, len(r.read())))
    srv.shutdown()
    print("http.server", sorted(sizes))


async def echo(reader, writer):
    while data := await reader.read(100):
        writer.write(data.upper())
        await writer.drain()
    writer.close()


async def asyncio_round():
    server = await asyncio.start_server(echo, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    out = []
    for word in ("alpha", "beta", "gamma"):
        r, w = await asyncio.open_connection("127.0.0.1", port)
        w.write(word.encode())
        await w.drain()
        out.append((await r.read(100)).decode())
        w.close()
        await w.wait_closed()
    server.close()
    await server.wait_closed()
    print("asyncio", out)


def manager_round():
    with m.Manager() as mgr:
        d = mgr.dict()
        lst = mgr.list()
        ps = [m.Process(target=fill, args=(d, lst, i)) for i in range(4)]
        for p in ps:
            p.start()
        for p in ps:
            p.join()
        print("manager", sorted(d.items()), sorted(lst))


def fill(d, lst, i):
    d[i] = i * i
    lst.append(i)


def unix_dgram_round():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    a.send(b"x" * 10)
    print("unix dgram", len(b.recv(100)))


if __name__ == "__main__":
    with open("index.txt", "w") as f:
        f.write("hello over loopback\n" * 100)
    http_round()
    asyncio.run(asyncio_round())
    manager_round()
    unix_dgram_round()
PYEOF
/usr/bin/python3 py_net.py

# node's http server, fetched by curl.
if command -v node >/dev/null && command -v curl >/dev/null; then
  cat >srv.js <<'JSEOF'
const http = require('http');
const s = http.createServer((req, res) => { res.end('node says ' + req.url + '\n'); });
s.listen(0, '127.0.0.1', () => { console.log(s.address().port); });
JSEOF
  node srv.js >port.txt &
  for _ in $(seq 100); do [ -s port.txt ] && break; sleep 0.05; done
  port=$(cat port.txt)
  for i in 1 2 3; do curl -s "http://127.0.0.1:$port/req$i"; done
  kill %1
  wait 2>/dev/null || true
fi

# git clone over git daemon on loopback.
git init -q -b main repo
git -C repo -c user.email=a@b -c user.name=n commit -q --allow-empty -m first
git -C repo -c user.email=a@b -c user.name=n commit -q --allow-empty -m second
touch repo/.git/git-daemon-export-ok
gport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
git daemon --reuseaddr --listen=127.0.0.1 --port="$gport" --base-path="$work" "$work" \
  >/dev/null 2>&1 &
for _ in $(seq 100); do
  git ls-remote "git://127.0.0.1:$gport/repo" >/dev/null 2>&1 && break
  sleep 0.1
done
git clone -q "git://127.0.0.1:$gport/repo" clone
git -C clone log --format=%s
kill %1 2>/dev/null || true
wait 2>/dev/null || true

# ssh-agent on a unix socket, ssh-add asking it.
if command -v ssh-agent >/dev/null; then
  eval "$(ssh-agent -s -a "$work/agent.sock")" >/dev/null
  ssh-add -l || echo "ssh-add status $?"
  ssh-agent -k >/dev/null
fi

# socat: a TCP echo server (socat itself) behind a unix-socket-to-TCP relay (socat again);
# a client writes to the unix socket and reads the echo that came back over TCP.
if command -v socat >/dev/null; then
  sport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  socat TCP-LISTEN:"$sport",bind=127.0.0.1,reuseaddr,fork EXEC:'tr a-z A-Z' &
  socat UNIX-LISTEN:"$work/relay.sock",fork TCP:127.0.0.1:"$sport" &
  for _ in $(seq 100); do [ -S "$work/relay.sock" ] && break; sleep 0.05; done
  for word in one two; do
    echo "socat relay $word" | socat -t 2 - UNIX-CONNECT:"$work/relay.sock"
  done
  kill %1 %2 2>/dev/null || true
  wait 2>/dev/null || true
fi
