#!/bin/bash
# sentry-run's audit trail (docs/audit.md): a scripted session in a workspace writes the
# events expected of it, every line validates against docs/audit.schema.json, the summary
# shows on stderr, and --audit's three destinations and its errors behave.
#
#   audit.sh SENTRY_RUN PLATFORM
set -u
if [ $# -ne 2 ]; then
  echo "usage: $0 SENTRY_RUN PLATFORM" >&2
  exit 2
fi
sentry_run=$(realpath "$1") || exit 2
platform=$2
here=$(cd "$(dirname "$0")" && pwd)
schema=$here/../../docs/audit.schema.json
parent=/var/tmp
# The guest's /tmp and /var/tmp are layers of its own: a workspace there would be a bind of
# a directory the guest also sees under its scratch layer (as policy.sh, keep out of them).
parent=/var/lib/sentry-tests
mkdir -p "$parent" || exit 2
base=$(mktemp -d "$parent/sentry-audit-XXXXXX") || exit 2
trap '[ -n "${KEEP:-}" ] || rm -rf "$base"' EXIT
ws=$base/ws
mkdir "$ws"
fail=0
check() {  # check DESCRIPTION COMMAND...
  if "${@:2}"; then
    echo "ok: $1"
  else
    echo "FAIL: $1"
    fail=1
  fi
}
sr() { "$sentry_run" --platform="$platform" --tty=never "$@" </dev/null; }

(cd "$ws" && sr --workspace "$ws" --audit "$base/trail.jsonl" --audit-summary -- sh -c '
  echo hi > a.txt
  echo more >> a.txt
  mkdir d
  mv a.txt d/b.txt
  ln -s d/b.txt l
  chmod 600 d/b.txt
  cp d/b.txt c.txt
  rm c.txt
  echo x > /etc/sentry-audit-probe
  /usr/bin/python3 -c "
import socket
s = socket.socket(); s.bind((\"127.0.0.1\", 0)); s.listen(); port = s.getsockname()[1]
socket.create_connection((\"127.0.0.1\", port)).close()
"
  exit 3') 2>"$base/stderr"
status=$?
check "the session's own status comes back (3)" [ "$status" = 3 ]
check "the summary is on stderr" grep -q "^sentry-run: audit: .* programs run .*; 5 files changed; 1 connection; 1 denial" "$base/stderr"
check "the summary lists a changed file" grep -q "^sentry-run: audit:   changed $ws/d/b.txt" "$base/stderr"

/usr/bin/python3 - "$schema" "$base/trail.jsonl" "$ws" <<'PY' || fail=1
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
ws = sys.argv[3]
events = []
bad = 0
for n, line in enumerate(open(sys.argv[2]), 1):
    try:
        e = json.loads(line)
        jsonschema.validate(e, schema)
    except Exception as ex:  # noqa: BLE001 - any failure is the test's
        print(f"FAIL: line {n} does not validate: {ex}: {line!r}")
        bad += 1
        continue
    events.append(e)
print(("ok" if bad == 0 else "FAIL") + f": {len(events)} lines validate against the schema")

def has(desc, **want):
    for e in events:
        if all(e.get(k) == v for k, v in want.items()):
            print(f"ok: {desc}")
            return True
    print(f"FAIL: {desc}: no event with {want}")
    return False

ok = bad == 0
ok &= has("exec of mv with its argv and cwd", event="exec", path="/usr/bin/mv",
          argv=["mv", "a.txt", "d/b.txt"], cwd=ws)
ok &= has("a.txt created", event="file", op="create", path=f"{ws}/a.txt")
ok &= has("3 bytes written to a.txt by the first open", event="file", op="write",
          path=f"{ws}/a.txt", bytes=3)
ok &= has("5 bytes appended by the second", event="file", op="write", path=f"{ws}/a.txt", bytes=5)
ok &= has("mkdir d", event="file", op="mkdir", path=f"{ws}/d")
ok &= has("the rename", event="file", op="rename", path=f"{ws}/a.txt", to=f"{ws}/d/b.txt")
ok &= has("the symlink", event="file", op="symlink", path=f"{ws}/l", target="d/b.txt")
ok &= has("the chmod", event="file", op="chmod", path=f"{ws}/d/b.txt", mode="0600")
ok &= has("cp's copy: created", event="file", op="create", path=f"{ws}/c.txt", comm="cp")
ok &= has("cp's copy: 8 bytes", event="file", op="write", path=f"{ws}/c.txt", bytes=8)
ok &= has("rm", event="file", op="delete", path=f"{ws}/c.txt", comm="rm")
ok &= has("the write to /etc denied", event="deny", op="open", path="/etc/sentry-audit-probe")
ok &= has("bind", event="net", op="bind", addr="127.0.0.1:0", result="ok")
ok &= has("listen, with the bound address", event="net", op="listen", result="ok")
ok &= has("the session's end", event="exit", pid=2, comm="sh", status=3)
listen = [e for e in events if e.get("op") == "listen"]
conn = [e for e in events if e.get("op") == "connect" and e.get("addr", "").startswith("127.")]
if listen and conn and listen[0]["addr"] == conn[0]["addr"] and conn[0]["result"] == "ok":
    print("ok: connect to the listening address")
else:
    print(f"FAIL: connect to the listening address: {listen} {conn}")
    ok = False
times = [e["time"] for e in events]
if times == sorted(times):
    print("ok: times never go back")
else:
    print("FAIL: times go back")
    ok = False
nul = [e for e in events if e.get("path", "").startswith("/dev/")]
if nul:
    print(f"FAIL: writes to devices count as file changes: {nul[0]}")
    ok = False
sys.exit(0 if ok else 1)
PY

# The egress policy's refusals are denials too (no packet leaves: the address is private).
sr --net=host --audit "$base/net.jsonl" -- /usr/bin/python3 -c '
import socket
try:
    socket.create_connection(("10.255.255.1", 9), timeout=2)
except OSError as e:
    print("refused", e.errno)
' >/dev/null 2>&1
check "an egress refusal is a deny event with the address" \
  grep -q '"event":"deny","op":"connect","addr":"10.255.255.1:9","rule":' "$base/net.jsonl"

# Destinations: stderr, an fd, and errors (one line, exit 2, nothing run).
out=$(sr --audit - -- true 2>&1 >/dev/null)
check "--audit - writes to stderr" grep -q '"event":"exit","status":0' <<<"$out"
sr --audit fd:7 -- true 7>"$base/fd.jsonl"
check "--audit fd:7 writes to fd 7" grep -q '"event":"exit"' "$base/fd.jsonl"
err=$(sr --audit "$base/no/such/dir/x" -- touch "$ws/ran" 2>&1)
status=$?
check "--audit into a missing directory: exit 2" [ "$status" = 2 ]
check "... with one line naming it" [ "$(grep -c "audit $base/no/such/dir/x" <<<"$err")" = 1 ]
check "... and nothing ran" [ ! -e "$ws/ran" ]
sr --audit fd:x -- true 2>/dev/null
check "--audit fd:x: exit 2" [ "$?" = 2 ]
exit $fail
