#!/usr/bin/env bash
# Runs the same probes under sentry-run, srt (sandbox-runtime), bwrap and `runsc do`, each in
# the configuration an agent developer would use, and prints one markdown table: what happened
# in each. Sandboxes that are not installed show "not installed". Run as root from the
# repository's top directory after building (docs/sentry-run.md quotes its output).
#
#   tools/compare-sandboxes.sh [--sentry-run PATH]
set -u
sentry_run=$PWD/build/bin/sentry-run
[ "${1:-}" = "--sentry-run" ] && sentry_run=$2

work=$(mktemp -d /var/tmp/sbcmp.XXXXXX)
trap 'rm -rf "$work"' EXIT
ws=$work/ws                     # the agent's workspace
home=$work/home                 # a home with a secret in it
mkdir -p "$ws" "$home/.ssh"
echo "PRIVATE KEY" > "$home/.ssh/id_probe"
chmod 600 "$home/.ssh/id_probe"
cat > "$work/srt.json" <<EOF
{"filesystem": {"denyRead": ["$home/.ssh"], "allowWrite": ["$ws"], "denyWrite": []},
 "network": {"allowedDomains": [], "deniedDomains": []}}
EOF

# run SANDBOX CMD: runs `sh -c CMD` in SANDBOX with the workspace as cwd and HOME=$home;
# sets $rc to its exit status and $res to what its output ends with.
run() {
  local sb=$1 cmd=$2 out
  case $sb in
    sentry) out=$(cd "$ws" && HOME=$home timeout 20 "$sentry_run" --workspace "$ws" \
                  -- sh -c "$cmd" 2>&1 </dev/null) ;;
    srt) out=$(cd "$ws" && HOME=$home timeout 20 srt --settings "$work/srt.json" -c "$cmd" \
               2>&1 </dev/null) ;;
    bwrap) out=$(cd "$ws" && HOME=$home timeout 20 bwrap --ro-bind / / --bind "$ws" "$ws" \
                 --tmpfs "$home/.ssh" --dev /dev --proc /proc --tmpfs /tmp --unshare-all \
                 --die-with-parent --chdir "$ws" sh -c "$cmd" 2>&1 </dev/null) ;;
    runsc) out=$(cd "$ws" && HOME=$home timeout 30 runsc --platform=ptrace --network=none \
                 do sh -c "$cmd" 2>&1 </dev/null) ;;
  esac
  rc=$?
  # The last line, and of an error message only its end ("...: Read-only file system").
  res=$(printf '%s' "$out" | grep -v -e '^Running:' -e '^$' | tail -1 | sed 's/.*: //' |
        cut -c1-60 | tr '|' '/')
}

installed() {
  case $1 in
    sentry) [ -x "$sentry_run" ] ;;
    *) command -v "$1" >/dev/null ;;
  esac
}

startup_ms() {
  local sb=$1 i t0 t1 all=()
  for i in 1 2 3 4 5; do
    t0=$(date +%s%N); run "$sb" true; t1=$(date +%s%N)
    all+=($(((t1 - t0) / 1000000)))
  done
  printf '%s\n' "${all[@]}" | sort -n | sed -n 3p
}

probe() {
  local sb=$1 what=$2
  case $what in
    startup) echo "$(startup_ms "$sb") ms" ;;
    secret) run "$sb" "cat $home/.ssh/id_probe"; echo "rc $rc: $res" ;;
    write_outside) run "$sb" "echo x > /etc/sb-probe && echo written"; echo "rc $rc: $res"
                   rm -f /etc/sb-probe ;;
    write_ws) run "$sb" "echo x > $ws/kept"
              [ -f "$ws/kept" ] && echo "kept on the host" || echo "lost (rc $rc)"
              rm -f "$ws/kept" ;;
    kill_self) run "$sb" 'kill -9 $$; echo survived'; echo "exit $rc" ;;
    pids) run "$sb" 'ls /proc | grep -c "^[0-9]"'; echo "$res" ;;
    loopback) run "$sb" "python3 -c 'import socket
s=socket.socket(); s.bind((\"127.0.0.1\",0)); s.listen(); c=socket.create_connection(s.getsockname()); a,_=s.accept(); c.send(b\"hi\"); print(a.recv(2).decode())'"
              echo "rc $rc: $res" ;;
    egress) local t0 t1; t0=$(date +%s%N)
            run "$sb" "curl -fsS -m 5 http://192.0.2.1/ -o /dev/null"
            t1=$(date +%s%N); echo "rc $rc after $(((t1 - t0) / 1000000)) ms: $res" ;;
    udp) run "$sb" "python3 -c 'import socket; s=socket.socket(type=socket.SOCK_DGRAM); s.sendto(b\"x\", (\"192.0.2.1\", 53)); print(\"sent\")'"
         echo "rc $rc: $res" ;;
  esac
}

rows="startup secret write_outside write_ws kill_self pids loopback egress udp"
declare -A title=(
  [startup]="\`true\` start-up (median of 5)"
  [secret]="\`cat ~/.ssh/id_probe\` (a secret in HOME)"
  [write_outside]="\`echo x > /etc/sb-probe\`"
  [write_ws]="a write in the workspace"
  [kill_self]="\`sh -c 'kill -9 \$\$; echo survived'\`"
  [pids]="processes the sandbox sees in /proc"
  [loopback]="TCP server and client on 127.0.0.1 inside"
  [egress]="\`curl http://192.0.2.1/\` (default network)"
  [udp]="UDP datagram to 192.0.2.1:53 (default network)"
)
sandboxes="sentry srt bwrap runsc"
echo "| probe | sentry-run | srt | bwrap | runsc do |"
echo "|---|---|---|---|---|"
for r in $rows; do
  line="| ${title[$r]} |"
  for sb in $sandboxes; do
    if installed "$sb"; then line+=" $(probe "$sb" "$r") |"; else line+=" not installed |"; fi
  done
  echo "$line"
done
