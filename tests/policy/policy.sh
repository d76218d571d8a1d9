#!/bin/bash
# sentry-run's file-system mode and policy file (docs/sentry-run.md).
#
#   policy.sh SENTRY_RUN PLATFORM
#
# Read-only root: writes outside the workspace fail with EROFS and reach nothing; the scratch
# directories (/tmp, /var/tmp, /run, /dev/shm) and /dev/null are writable, /tmp shows the
# host's files but the guest's writes there stay in the sandbox, /run starts empty;
# a guest bind of / is read-only too (as root); --fs=scratch and filesystem.readOnly
# "scratch" keep the in-memory layer. Protected files in the workspace (.bashrc, .git/hooks,
# ...) stay read-only. Every policy key: filesystem.readOnly, allowWrite, denyWrite, denyRead,
# allowRead, network.mode and its rules, limits.pids and tmpSize, env.inherit and env.set; the
# caller's ~/.config/sentry/policy.json (under a temporary HOME) and --policy over it; flags over the
# file. Bad policy files give one line on stderr naming the key and exit status 2.
# --print-policy prints the effective policy. The caller's defaults: the guest starts in the
# caller's cwd when it can see it (else the workspace, else /), with the caller's HOME and
# PATH, and argv[0] is looked up in that PATH. Exits 0 iff every check held.
#
# The test's files live under the working directory (CTest's: the build tree; below
# /var/lib/sentry-tests when that is under /tmp or /var/tmp), which the
# guest sees read-only; in /tmp and /var/tmp the guest's writes would not reach them.
set -u
if [ $# -ne 2 ]; then
  echo "usage: $0 SENTRY_RUN PLATFORM" >&2
  exit 2
fi
sentry_run=$1
platform=$2
# Not under /tmp or /var/tmp (a build tree in a clone there): the guest may write those.
parent=$PWD
case "$parent/" in
  /tmp/* | /var/tmp/*) parent=/var/lib/sentry-tests && mkdir -p "$parent" || exit 2 ;;
esac
base=$(mktemp -d "$parent/sentry-policy-XXXXXX") || exit 2
probe=/etc/sentry-policy-probe-$$
marker=/tmp/sentry-policy-marker-$$
run_marker=/run/sentry-policy-marker-$$
trap 'rm -rf "$base"; rm -f "$probe" "$marker" "$marker.guest" "$run_marker"' EXIT
ws=$base/ws
other=$base/other
home=$base/home
mkdir -p "$ws" "$other" "$home/.config/sentry" || exit 2
: >"$marker"
: >"$run_marker"
export HOME=$home  # no policy file of the caller's own unless a check writes one
source "$(dirname "$0")/../lib/checks.sh"

has() { grep -qx -- "$2" <<<"$1"; }
lacks() { ! grep -qx -- "$2" <<<"$1"; }

# run [FLAGS...] -- SCRIPT: the guest's stdout and stderr, then "status N".
run() {
  local flags=()
  while [ "$1" != -- ]; do flags+=("$1"); shift; done
  shift
  "$sentry_run" --platform="$platform" "${flags[@]}" -- /bin/sh -c "$1" </dev/null 2>&1
  echo "status $?"
}

# --- The read-only root (the default).
out=$(run --workspace "$ws" -- "
  echo y > $probe; echo \"etc=\$?\"
  mkdir /opt/sentry-policy-dir 2>&1 | grep -q 'Read-only file system' && echo mkdir=erofs
  touch /usr/sentry-policy-file 2>&1 | grep -q 'Read-only file system' && echo touch=erofs
  echo ws > $ws/f; echo \"ws=\$?\"
  for d in /tmp /var/tmp /run /dev/shm; do echo s > \$d/f && echo \"scratch \$d\"; done
  echo n > /dev/null && echo devnull
  [ -e $marker ] && echo tmp-host
  echo g > $marker.guest && echo tmp-write
  [ -e $run_marker ] || echo run-fresh
  pwd")
check "echo > /etc/...: fails" has "$out" "etc=[1-9][0-9]*"
check "echo > /etc/...: EROFS" grep -q "$probe: Read-only file system" <<<"$out"
check "mkdir /opt/...: EROFS" has "$out" "mkdir=erofs"
check "touch /usr/...: EROFS" has "$out" "touch=erofs"
check "the probe did not reach the host" test ! -e "$probe"
check "workspace write: status 0" has "$out" "ws=0"
check "workspace write reached the host" test "$(cat "$ws/f" 2>/dev/null)" = ws
scratch_dirs="/tmp /var/tmp /dev/shm"
[ "$(id -u)" = 0 ] && scratch_dirs="$scratch_dirs /run"  # /run is root's, as on the host
for d in $scratch_dirs; do
  check "scratch directory $d is writable" has "$out" "scratch $d"
done
check "/dev/null is writable" has "$out" "devnull"
check "/tmp shows the host's files ($marker)" has "$out" "tmp-host"
check "a write in /tmp succeeds in the guest" has "$out" "tmp-write"
check "a write in /tmp does not reach the host's /tmp" test ! -e "$marker.guest"
check "/run starts empty (the host's $run_marker is not there)" has "$out" "run-fresh"
check "the workspace is the working directory" has "$out" "$ws"
check "read-only root: exit status 0" has "$out" "status 0"

if [ "$(id -u)" = 0 ]; then
  out=$(run -- "mkdir /run/x && mount --bind / /run/x && echo bound
    echo y > /run/x/etc/sentry-policy-bound 2>&1; echo \"bound-write=\$?\"")
  check "a guest bind of / is made" has "$out" "bound"
  check "a guest bind of / stays read-only: the write fails" has "$out" "bound-write=[1-9][0-9]*"
  check "a guest bind of / stays read-only: EROFS" \
    grep -q "/run/x/etc/sentry-policy-bound: Read-only file system" <<<"$out"
fi

# --- --fs=scratch and filesystem.readOnly "scratch": today's in-memory layer.
scratch_script="echo y > $probe; echo \"etc=\$?\"; cat $probe"
out=$(run --fs=scratch -- "$scratch_script")
check "--fs=scratch: the write succeeds" has "$out" "etc=0"
check "--fs=scratch: the guest reads it back" has "$out" "y"
check "--fs=scratch: the probe did not reach the host" test ! -e "$probe"
echo '{"filesystem": {"readOnly": "scratch"}}' >"$base/scratch.json"
out=$(run --policy "$base/scratch.json" -- "$scratch_script")
check "readOnly \"scratch\": the write succeeds" has "$out" "etc=0"
out=$(run --policy "$base/scratch.json" --fs=readonly -- "$scratch_script")
check "--fs=readonly overrides readOnly \"scratch\"" has "$out" "etc=[1-9][0-9]*"
echo '{"filesystem": {"readOnly": false}}' >"$base/false.json"
out=$(run --policy "$base/false.json" -- "$scratch_script")
check "readOnly false: the write succeeds" has "$out" "etc=0"

# --- filesystem.allowWrite.
printf '{"filesystem": {"allowWrite": ["%s"]}}\n' "$other" >"$base/allow.json"
out=$(run --policy "$base/allow.json" -- "echo a > $other/a; echo \"other=\$?\"")
check "allowWrite: the write succeeds" has "$out" "other=0"
check "allowWrite: it reached the host" test "$(cat "$other/a" 2>/dev/null)" = a
out=$(run -- "echo b > $other/b; echo \"other=\$?\"")
check "without allowWrite the write fails" has "$out" "other=[1-9][0-9]*"
check "without allowWrite the directory is read-only" \
  grep -q "$other/b: Read-only file system" <<<"$out"
check "without allowWrite nothing reached the host" test ! -e "$other/b"

# --- env.set, env.inherit, and the caller's own policy file under HOME.
export SENTRY_POLICY_A=from-caller SENTRY_POLICY_B=also-caller
echo '{"env": {"set": {"POLICY_SET": "v1"}, "inherit": ["SENTRY_POLICY_A"]}}' \
  >"$home/.config/sentry/policy.json"
out=$(run -- 'echo "set=$POLICY_SET a=${SENTRY_POLICY_A-} b=${SENTRY_POLICY_B-}"')
check "~/.config/sentry/policy.json: env.set and env.inherit" has "$out" \
  "set=v1 a=from-caller b="
out=$(run --env POLICY_SET=v2 -- 'echo "set=$POLICY_SET"')
check "--env overrides env.set" has "$out" "set=v2"
echo '{"env": {"inherit": "*"}}' >"$base/all.json"
out=$(run --policy "$base/all.json" -- 'echo "set=${POLICY_SET-} b=${SENTRY_POLICY_B-}"')
check "--policy replaces the caller's file; inherit \"*\"" has "$out" "set= b=also-caller"
rm "$home/.config/sentry/policy.json"
out=$(run -- 'echo "a=${SENTRY_POLICY_A-}"')
check "no policy: nothing inherited" has "$out" "a="

# --- limits.
echo '{"limits": {"tmpSize": "1m"}}' >"$base/tmp.json"
out=$(run --policy "$base/tmp.json" -- \
  'dd if=/dev/zero of=/tmp/big bs=1k count=2048 2>&1 | grep -q "No space" && echo enospc')
check "limits.tmpSize 1m: a 2 MiB write fails with ENOSPC" has "$out" "enospc"
out=$(run -- 'dd if=/dev/zero of=/tmp/big bs=1k count=2048 2>/dev/null && echo written')
check "without limits.tmpSize the 2 MiB write succeeds" has "$out" "written"
# The forks happen in a subshell whose failure ends only it; its message is read back with
# builtins only. (A pipeline into grep raced: the loop's sleeps could take the last slots
# before the shell had forked grep, and the shell itself then died of "Cannot fork".)
pids_script='(for i in 1 2 3 4 5 6; do sleep 2 & done) 2>/tmp/pids-err
  while read -r line; do
    case $line in *[Cc]annot\ fork*|*emporarily*) echo eagain; break;; esac
  done </tmp/pids-err'
echo '{"limits": {"pids": 4}}' >"$base/pids.json"
out=$(run --policy "$base/pids.json" -- "$pids_script")
check "limits.pids 4: the sixth sleep cannot start" has "$out" "eagain"
out=$(run -- "$pids_script")
check "without limits.pids six sleeps start" lacks "$out" "eagain"

# --- network: the rules become --allow-net/--deny-net; they need mode "host".
echo '{"network": {"mode": "host", "allowedDomains": ["example.com", "10.0.0.0/8:443"],
  "deniedDomains": ["*.bad.example"]}}' >"$base/net.json"
out=$("$sentry_run" --policy "$base/net.json" --allow-net=extra.example --print-policy 2>&1)
check "--print-policy: exit status 0" test $? -eq 0
check "--print-policy: valid JSON" python3 -c 'import json,sys; json.loads(sys.argv[1])' "$out"
net=$(python3 -c 'import json,sys; n=json.loads(sys.argv[1])["network"]
print(n["mode"], ",".join(n["allowedDomains"]), ",".join(n["deniedDomains"]))' "$out" 2>&1)
check "--print-policy: the network rules, --allow-net added to the file's" test "$net" = \
  "host example.com,10.0.0.0/8:443,extra.example *.bad.example"
# network.publish: ports or "HOSTPORT:GUESTPORT"; --publish adds to the file's list.
echo '{"network": {"mode": "host", "publish": [8080, "9090:90"]}}' >"$base/pub.json"
out=$("$sentry_run" --policy "$base/pub.json" --publish=7070 --print-policy 2>&1)
pub=$(python3 -c 'import json,sys; print(",".join(json.loads(sys.argv[1])["network"]["publish"]))' \
  "$out" 2>&1)
check "--print-policy: network.publish, --publish added (got $pub)" test "$pub" = \
  "8080,9090:90,7070"
echo '{"network": {"allowedDomains": ["example.com"]}}' >"$base/netnone.json"
out=$(run --policy "$base/netnone.json" -- true)
check "allowedDomains without mode host: refused" has "$out" "status 2"
connect_script="python3 -c '
import errno, socket
s = socket.socket()
s.settimeout(5)
try:
    s.connect((\"192.0.2.1\", 80))
    print(\"connect ok\")
except OSError as e:
    print(\"connect\", errno.errorcode.get(e.errno, e))
'"
out=$(run -- "$connect_script")
check "network.mode none (the default): ENETUNREACH" has "$out" "connect ENETUNREACH"
echo '{"network": {"mode": "host", "allowedDomains": ["198.51.100.0/24"]}}' >"$base/allow-net.json"
out=$(run --policy "$base/allow-net.json" -- "$connect_script")
check "allowedDomains: an address outside them is refused" has "$out" "connect ECONNREFUSED"
check "allowedDomains: the refusal is reported" grep -q "denied connect to 192.0.2.1:80" <<<"$out"
echo '{"network": {"mode": "host", "deniedDomains": ["192.0.2.0/24"]}}' >"$base/deny-net.json"
out=$(run --policy "$base/deny-net.json" -- "$connect_script")
check "deniedDomains: a denied address is refused" has "$out" "connect ECONNREFUSED"
check "deniedDomains: the refusal is reported" grep -q "denied connect to 192.0.2.1:80" <<<"$out"

# --- --print-policy reflects the file and the flags.
out=$("$sentry_run" --policy "$base/scratch.json" --pids 7 --tmpfs-size 3m --print-policy)
got=$(python3 -c 'import json,sys; p=json.loads(sys.argv[1])
print(p["filesystem"]["readOnly"], p["limits"]["pids"], p["limits"]["tmpSize"])' "$out" 2>&1)
check "--print-policy: file and flags ($got)" test "$got" = "scratch 7 3m"
got=$("$sentry_run" --print-policy | python3 -c 'import json,sys
print(json.load(sys.stdin)["filesystem"]["readOnly"])' 2>&1)
check "--print-policy: readOnly defaults to true ($got)" test "$got" = True

# --- filesystem.denyRead and allowRead: hidden files are absent, by every route.
token=secret-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
mkdir -p "$home/.ssh" "$home/.aws" || exit 2
echo "$token" >"$home/.ssh/id_ed25519"
echo "known-$token" >"$home/.ssh/known_hosts"
echo "$token" >"$home/.aws/credentials"
echo "$token" >"$home/.netrc"
echo visible >"$home/visible.txt"
echo "$token" >"$other/secret.txt"
ln -s "$home/.ssh/id_ed25519" "$ws/key-link"
deny_script="cd \$HOME
  cat .ssh/id_ed25519 2>&1; cat .aws/credentials .netrc 2>&1
  cat /proc/self/root$home/.ssh/id_ed25519 2>&1; cat $ws/key-link 2>&1
  cat $home/visible.txt/../.ssh/id_ed25519 2>&1; cat .ssh/../.ssh/known_hosts 2>&1
  echo \"listing: \$(ls -A | tr '\\n' ' ')\""
out=$(run --workspace "$ws" -- "$deny_script")
check "denyRead defaults: no secret is read" eval '! grep -q "$token" <<<"$out"'
check "denyRead defaults: ~/.ssh/id_ed25519 is absent" \
  grep -q ".ssh/id_ed25519: No such file or directory" <<<"$out"
check "denyRead defaults: through /proc/self/root too" \
  grep -q "/proc/self/root$home/.ssh/id_ed25519: No such file or directory" <<<"$out"
check "denyRead defaults: through a symlink in the workspace too" \
  grep -q "$ws/key-link: No such file or directory" <<<"$out"
check "denyRead defaults: ~ lists neither .ssh, .aws nor .netrc" has "$out" \
  "listing: .config visible.txt "
check "the visible file stays readable" \
  eval '[ "$(run -- "cat $home/visible.txt")" = "$(printf "visible\nstatus 0")" ]'
out=$(run --fs=scratch -- "$deny_script")
check "denyRead defaults under --fs=scratch: no secret is read" eval '! grep -q "$token" <<<"$out"'
if [ -r /etc/shadow ]; then
  out=$(run -- 'cat /etc/shadow 2>&1; ls /etc | grep -c "^shadow$"')
  check "denyRead defaults: /etc/shadow is absent" \
    grep -q "/etc/shadow: No such file or directory" <<<"$out"
  check "denyRead defaults: /etc lists no shadow" has "$out" "0"
fi
printf '{"filesystem": {"allowRead": ["~/.ssh/known_hosts"], "denyRead": ["%s"]}}\n' \
  "$other/secret.txt" >"$base/allow-read.json"
out=$(run --policy "$base/allow-read.json" -- "cat ~/.ssh/known_hosts; cat ~/.ssh/id_ed25519 2>&1
  echo \"ssh: \$(ls -A ~/.ssh | tr '\\n' ' ')\"; cat $other/secret.txt 2>&1")
check "allowRead re-opens ~/.ssh/known_hosts" has "$out" "known-$token"
check "allowRead: the rest of ~/.ssh stays hidden" eval '! grep -qx "$token" <<<"$out"'
check "allowRead: ~/.ssh lists known_hosts only" has "$out" "ssh: known_hosts "
check "denyRead from the file: $other/secret.txt is absent" \
  grep -q "$other/secret.txt: No such file or directory" <<<"$out"
printf '{"filesystem": {"allowRead": ["~/.ssh"]}}\n' >"$base/allow-ssh.json"
out=$(run --policy "$base/allow-ssh.json" -- "cat ~/.ssh/id_ed25519")
check "allowRead of a whole default entry re-opens it" has "$out" "$token"
# Globs: `*` also matches a leading dot, `**` any depth; expanded at start-up.
mkdir -p "$other/keys/sub/deep" || exit 2
echo "pem-$token" >"$other/keys/a.pem"
echo "pem-$token" >"$other/keys/sub/deep/.b.pem"
echo plain >"$other/keys/sub/c.txt"
printf '{"filesystem": {"denyRead": ["%s/keys/**/*.pem"]}}\n' "$other" >"$base/glob-read.json"
out=$(run --policy "$base/glob-read.json" -- "cat $other/keys/a.pem $other/keys/sub/deep/.b.pem \
  $other/keys/sub/c.txt 2>&1; ls -A $other/keys/sub/deep | wc -l")
check "denyRead glob: no .pem file is read, at any depth" eval '! grep -q "pem-$token" <<<"$out"'
check "denyRead glob: a matching dot file is absent" \
  grep -q "deep/.b.pem: No such file or directory" <<<"$out"
check "denyRead glob: what it does not match stays readable" has "$out" "plain"
check "denyRead glob: the listing leaves the match out" has "$out" "0"
out=$("$sentry_run" --print-policy)
check "--print-policy lists the default denyRead" \
  python3 -c 'import json,sys; d=json.loads(sys.argv[1])["filesystem"]["denyRead"]
sys.exit(0 if "~/.ssh" in d and "/etc/shadow" in d else 1)' "$out"

# --- Protected files in the workspace (filesystem.denyWrite; a relative allowWrite unprotects).
pws=$base/pws
mkdir -p "$pws/.git/hooks" "$pws/.vscode" "$pws/src" || exit 2
echo orig >"$pws/.bashrc"
echo orig >"$pws/.git/config"
echo orig >"$pws/.git/hooks/pre-commit"
echo orig >"$pws/.vscode/settings.json"
echo orig >"$pws/.envrc"
protect_script="cd $pws
  echo evil >> .bashrc; echo \"bashrc=\$?\"
  echo evil > .git/config; echo \"gitconfig=\$?\"
  echo evil > .git/hooks/pre-commit; echo \"hook=\$?\"
  echo evil > .git/hooks/post-checkout; echo \"newhook=\$?\"
  echo evil > .vscode/tasks.json; echo \"vscode=\$?\"
  echo evil > .zshrc; echo \"zshrc=\$?\"
  rm -f .bashrc; echo \"rm=\$?\"
  mv .git .git-moved; echo \"mvgit=\$?\"
  chmod 777 .bashrc; echo \"chmod=\$?\"
  echo fine > src/main.c; echo \"src=\$?\"
  echo evil > .envrc; echo \"envrc=\$?\""
out=$(run --workspace "$pws" -- "$protect_script")
for k in bashrc gitconfig hook newhook vscode zshrc rm mvgit chmod; do
  check "protected by default: $k refused" has "$out" "$k=[1-9][0-9]*"
done
check "protected files: EROFS" grep -q ".bashrc: Read-only file system" <<<"$out"
check "an ordinary workspace file stays writable" has "$out" "src=0"
check "an unlisted dot file stays writable" has "$out" "envrc=0"
for f in .bashrc .git/config .git/hooks/pre-commit .vscode/settings.json; do
  check "protected $f unchanged on the host" test "$(cat "$pws/$f" 2>/dev/null)" = orig
done
check "no new hook, .zshrc or .vscode file on the host" \
  test ! -e "$pws/.git/hooks/post-checkout" -a ! -e "$pws/.zshrc" -a ! -e "$pws/.vscode/tasks.json"
check "src/main.c reached the host" test "$(cat "$pws/src/main.c" 2>/dev/null)" = fine
echo orig >"$pws/.envrc"
printf '{"filesystem": {"denyWrite": [".envrc"], "allowWrite": [".vscode"]}}\n' \
  >"$base/deny-write.json"
out=$(run --policy "$base/deny-write.json" --workspace "$pws" -- "$protect_script")
check "denyWrite adds .envrc" has "$out" "envrc=[1-9][0-9]*"
check "a relative allowWrite unprotects .vscode" has "$out" "vscode=0"
check "the defaults still hold with a policy file" has "$out" "bashrc=[1-9][0-9]*"
check ".envrc unchanged on the host" test "$(cat "$pws/.envrc")" = orig
out=$(run --fs=scratch --workspace "$pws" -- "$protect_script")
check "protected under --fs=scratch too" has "$out" "gitconfig=[1-9][0-9]*"
mkdir -p "$pws/app/deep" && echo orig >"$pws/.env.local" && echo orig >"$pws/app/deep/.env.prod"
echo orig >"$pws/app/deep/config"
printf '{"filesystem": {"denyWrite": ["**/.env*"]}}\n' >"$base/glob-write.json"
out=$(run --policy "$base/glob-write.json" --workspace "$pws" -- "cd $pws
  echo x >> .env.local; echo \"top=\$?\"; echo x >> app/deep/.env.prod; echo \"deep=\$?\"
  echo x >> app/deep/config; echo \"other=\$?\"")
check "denyWrite glob **/.env*: at the top refused" has "$out" "top=[1-9][0-9]*"
check "denyWrite glob **/.env*: deeper refused too" has "$out" "deep=[1-9][0-9]*"
check "denyWrite glob: other files stay writable" has "$out" "other=0"
check "denyWrite glob: the protected files are unchanged on the host" \
  test "$(cat "$pws/.env.local" "$pws/app/deep/.env.prod")" = "$(printf 'orig\norig')"
rm -rf "$base/gitinit" && mkdir "$base/gitinit"
out=$(run --workspace "$base/gitinit" -- "cd $base/gitinit && git init -q . && echo init-ok")
check "git init in an empty workspace works (.git/config is protected only if it exists)" \
  has "$out" "init-ok"

# --- The caller's defaults: cwd, HOME, PATH.
mkdir -p "$other/sub" "$ws/sub" "$other/bin" || exit 2
printf '#!/bin/sh\necho hello-from-path\n' >"$other/bin/sentry-policy-hello"
chmod +x "$other/bin/sentry-policy-hello"
out=$(cd "$other/sub" && run -- pwd)
check "cwd: the caller's, when the guest sees it" has "$out" "$other/sub"
hidden=$(mktemp -d /run/sentry-policy-hidden-XXXXXX) || exit 2
out=$(cd "$hidden" && run -- pwd)
check "cwd: / when the caller's is hidden (under the guest's own /run)" has "$out" "/"
out=$(cd "$hidden" && run --workspace "$ws" -- pwd)
rmdir "$hidden"
check "cwd: the workspace when the caller's is hidden" has "$out" "$ws"
out=$(cd "$ws/sub" && run --workspace "$ws" -- pwd)
check "cwd: the caller's inside the workspace" has "$out" "$ws/sub"
out=$(cd "$other" && run --workspace "$ws" -- pwd)
check "cwd: the workspace when the caller's is outside it" has "$out" "$ws"
out=$(HOME=$other run -- 'echo "home=$HOME"')
check "HOME: the caller's" has "$out" "home=$other"
out=$(PATH=$other/bin:$PATH run -- 'echo "path=$PATH"; sentry-policy-hello')
check "PATH: the caller's" has "$out" "path=$other/bin:$PATH"
check "PATH: the guest finds programs in it" has "$out" "hello-from-path"
out=$(PATH=$other/bin:$PATH "$sentry_run" --platform="$platform" -- sentry-policy-hello 2>&1)
check "PATH: argv[0] is looked up in the caller's PATH" test "$out" = hello-from-path
"$sentry_run" --platform="$platform" -- sentry-policy-hello >/dev/null 2>&1
status=$?
check "PATH: not found elsewhere (exit status $status)" test "$status" -eq 127

# --- Bad policy files: one line on stderr naming the key, exit status 2, nothing run.
bad() {  # bad NAME JSON EXPECTED-STDERR-LINE
  printf '%s\n' "$2" >"$base/bad-$1.json"
  local err status
  err=$("$sentry_run" --policy "$base/bad-$1.json" -- /bin/sh -c 'echo ran' 2>&1 >/dev/null)
  status=$?
  check "bad policy $1: exit status 2 (got $status)" test "$status" -eq 2
  check "bad policy $1: one line: $3 (got: $err)" test "$err" = \
    "sentry-run: policy $base/bad-$1.json: $3"
}
bad wrong-type '{"filesystem": {"allowWrite": ["/tmp", 3]}}' \
  "filesystem.allowWrite[1]: expected a string"
bad unknown-key '{"filesystem": {"readOnly": true, "writeEverything": true}}' \
  "filesystem.writeEverything: unknown key"
bad unknown-section '{"sandbox": {}}' "sandbox: unknown key"
bad glob '{"filesystem": {"allowWrite": ["/tmp/*.log"]}}' \
  "filesystem.allowWrite[0]: globs are not supported here"
bad read-only '{"filesystem": {"readOnly": "yes"}}' \
  "filesystem.readOnly: expected true, false or \"scratch\""
bad net-rule '{"network": {"mode": "host", "deniedDomains": ["10.0.0.0/99"]}}' \
  "network.deniedDomains[0]: bad prefix length \"99\""
bad publish '{"network": {"mode": "host", "publish": ["8080:0"]}}' \
  'network.publish[0]: "0" is not a port (1-65535)'
bad pids '{"limits": {"pids": -1}}' "limits.pids: expected a positive integer"
bad cpus '{"limits": {"cpus": 2}}' "limits.cpus: not supported yet"
bad deny-write '{"filesystem": {"denyWrite": ["../.bashrc"]}}' \
  "filesystem.denyWrite[0]: expected a path, without \"..\""
bad deny-read-glob '{"filesystem": {"denyRead": ["~/.ssh", "~/[ab.pem"]}}' \
  "filesystem.denyRead[1]: bad glob: unbalanced '['"
bad deny-read-starstar '{"filesystem": {"denyRead": ["/srv/a**"]}}' \
  "filesystem.denyRead[0]: bad glob: '**' must be a whole path component"
bad allow-read-relative '{"filesystem": {"allowRead": ["secrets"]}}' \
  "filesystem.allowRead[0]: expected an absolute path or ~/..."
bad env-set '{"env": {"set": {"A": 1}}}' "env.set.A: expected a string"
bad json '{"filesystem": ' "not valid JSON"
printf '{"filesystem": {"allowWrite": 5}}\n' >"$home/.config/sentry/policy.json"
err=$("$sentry_run" -- /bin/true 2>&1)
status=$?
check "a bad ~/.config/sentry/policy.json: exit status 2" test "$status" -eq 2
check "a bad ~/.config/sentry/policy.json: named ($err)" test "$err" = \
  "sentry-run: policy $home/.config/sentry/policy.json: filesystem.allowWrite: expected an array of strings"
rm -f "$home/.config/sentry/policy.json"

[ "$fail" -eq 0 ] && echo "policy.sh ($platform): PASS"
exit "$fail"
