#!/bin/sh
# Changes the host makes under a read-write bind while the sandbox runs appear in the guest:
# a file replaced by rename (an editor's atomic save), a new file, a new directory, a file
# grown in place, and a removed file gone from the listing. Then the cache's coherence rule
# for read-write binds (vfs/gofer_fs.cc): once the guest's cached attributes are older than
# the revalidation interval (1 s), a path stat of a file the host appended to (and the guest
# stat'ed, never opened) shows its new size, and the
# removed file, which the guest had looked up, no longer exists (`[ -e ]`, `stat`). With a
# cache that never revalidates, both answer from before the host's change.
#
#   host_changes.sh SENTRY_RUN FILE_ACCESS
#
# FILE_ACCESS is sentry-run's --file-access (direct or gofer). The guest reads the workspace
# once (so that the old files are looked up and cached), says so with a marker file, waits for
# the host's changes and reads again; the second reading must show every change.
set -u
sentry_run=$1
file_access=$2
ws=$(mktemp -d) || exit 2
out=$(mktemp) || exit 2
trap 'rm -rf "$ws" "$out"' EXIT
echo old >"$ws/saved"
echo gone >"$ws/removed"
echo short >"$ws/grown"
echo short >"$ws/statted"
"$sentry_run" --file-access="$file_access" --workspace "$ws" --tty=never -- /bin/sh -c '
  cd "$1" || exit 3
  cat saved removed grown >/dev/null
  stat -c %s statted >/dev/null
  ls >/dev/null
  : >seen
  i=0
  while [ ! -e ready ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
  cat saved
  cat new
  ls -d newdir
  wc -c <grown
  ls | sort | tr "\n" " "; echo
  sleep 1.5
  stat -c %s statted
  [ -e removed ] && echo "removed still exists"
  stat removed >/dev/null 2>&1 && echo "removed still stats"
  echo end' sh "$ws" </dev/null >"$out" 2>&1 &
run=$!
i=0
while [ ! -e "$ws/seen" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
echo newer >"$ws/saved.tmp" && mv "$ws/saved.tmp" "$ws/saved"
echo hello >"$ws/new"
mkdir "$ws/newdir"
rm "$ws/removed"
echo "much longer now" >>"$ws/grown"
echo "much longer now" >>"$ws/statted"
touch "$ws/ready"
wait "$run"
status=$?
want="newer
hello
newdir
22
grown new newdir ready saved seen statted 
22
end"
if [ "$status" -ne 0 ] || [ "$(cat "$out")" != "$want" ]; then
  echo "FAIL ($file_access): status $status; the guest saw:"
  cat "$out"
  echo "--- want:"
  echo "$want"
  exit 1
fi
echo "host_changes.sh ($file_access): PASS"
