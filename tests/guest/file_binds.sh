#!/bin/sh
# A host file bound with --bind FILE:GUEST[:ro] is the host's file itself, both ways, as a
# bind mount: the guest reads what the host has and what the host writes meanwhile, its
# writes (and truncation) reach the host file, a read-only one refuses writes (EROFS), and
# the file's neighbours on the host stay out of the guest's view.
#
#   file_binds.sh SENTRY_RUN PLATFORM
set -u
if [ $# -ne 2 ]; then
  echo "usage: $0 SENTRY_RUN PLATFORM" >&2
  exit 2
fi
sentry_run=$1
platform=$2
dir=$(mktemp -d) || exit 2
trap 'rm -rf "$dir"' EXIT
fail=0
check() {  # NAME GOT WANT
  if [ "$2" = "$3" ]; then
    echo "ok: $1"
  else
    echo "FAIL: $1: got '$2', want '$3'"
    fail=1
  fi
}

printf 'one\n' >"$dir/rw.txt"
printf 'fixed\n' >"$dir/ro.txt"
printf 'secret\n' >"$dir/neighbour"
# The guest waits for the host's change in between (a file in a bound directory says when).
mkdir "$dir/sync"
"$sentry_run" --platform="$platform" --bind "$dir/rw.txt:/data/rw.txt" \
  --bind "$dir/ro.txt:/etc/fixed.conf:ro" --bind "$dir/sync:/sync" -- /bin/sh -c '
  cat /data/rw.txt
  echo two >>/data/rw.txt
  touch /sync/ready
  i=0; while [ ! -e /sync/go ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done
  cat /data/rw.txt
  cat /etc/fixed.conf
  (echo x >/etc/fixed.conf) 2>&1 | sed "s/.*: //"
  ls /data
  ls /data/neighbour 2>&1 | sed "s/.*: //"
' >"$dir/out" 2>&1 &
pid=$!
i=0
while [ ! -e "$dir/sync/ready" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
check "the guest's append reached the host" "$(cat "$dir/rw.txt")" "$(printf 'one\ntwo')"
printf 'three\n' >"$dir/rw.txt"  # truncates and rewrites in place, as Docker does
touch "$dir/sync/go"
wait $pid
check "exit status" "$?" 0
check "guest view" "$(cat "$dir/out")" "$(printf 'one\nthree\nfixed\nRead-only file system\nrw.txt\nNo such file or directory')"
check "the read-only file is unchanged" "$(cat "$dir/ro.txt")" "fixed"
out=$("$sentry_run" --platform="$platform" --workspace "$dir/rw.txt" -- /bin/true 2>&1)
check "--workspace FILE is refused" "$out" "sentry-run: --workspace $dir/rw.txt: not a directory"
exit $fail
