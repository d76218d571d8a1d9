#!/bin/bash
# The reviewable workspace (docs/sentry-run.md, "Reviewing an agent's changes").
#
#   review.sh SENTRY_RUN PLATFORM
#
# An agent script edits, creates, deletes, renames and symlinks files in --workspace W:review
# and tries a protected file. Checked: nothing reaches W while it runs or after; --diff-out and
# `sentry-run diff` list exactly those changes (and the unified diff of the edit); `apply`
# makes W equal to what the agent saw (contents, modes, links); a second review whose files
# the host changed meanwhile, or where the host put a symlink on the way, is refused with
# nothing applied and nothing written outside W; bad arguments fail with one line.
# Exits 0 iff every check held.
set -u
if [ $# -ne 2 ]; then
  echo "usage: $0 SENTRY_RUN PLATFORM" >&2
  exit 2
fi
sentry_run=$(readlink -f "$1")
platform=$2
base=$(mktemp -d) || exit 2
trap 'rm -rf "$base"' EXIT
export XDG_STATE_HOME=$base/state
source "$(dirname "$0")/../lib/checks.sh"
has() { grep -qF -- "$2" <<<"$1"; }
# A listing of a tree: path, type, mode and content hash (or link target) of each entry.
snapshot() {
  (cd "$1" && find . -mindepth 1 ! -name '.*.sentry-apply-*' -printf '%p %y %m ' \
     \( -type f -exec sh -c 'md5sum < "$1" | cut -c1-32' _ {} \; -o -printf '%l\n' \) | sort)
}
run() { "$sentry_run" --platform="$platform" "$@"; }

ws=$base/ws
mkdir -p "$ws/src" "$ws/old" "$ws/.git/hooks"
printf 'one\ntwo\nthree\nfour\nfive\n' >"$ws/src/main.c"
echo "to delete" >"$ws/gone.txt"
echo "to rename" >"$ws/name1.txt"
echo "in old" >"$ws/old/x"
echo "export A=1" >"$ws/.bashrc"
echo "#!/bin/sh" >"$ws/.git/hooks/pre-commit"
before=$(snapshot "$ws")

# The agent: its own view at the end goes to stdout, after a marker.
agent='
printf "one\nTWO\nthree\nfour\nfive\nsix\n" > src/main.c
rm gone.txt
mv name1.txt name2.txt
echo created > new.txt
mkdir -p build/obj && echo obj > build/obj/a.o && chmod 755 build/obj/a.o
printf "\0\1\2" > blob.bin
rm -r old
ln -s src/main.c link
echo evil >> .bashrc 2>/dev/null; echo "bashrc=$?"
echo evil > .git/hooks/post-checkout 2>/dev/null; echo "hook=$?"
echo MARK
find . -mindepth 1 -printf "%p %y %m " \( -type f -exec sh -c "md5sum < \"\$1\" | cut -c1-32" _ {} \; -o -printf "%l\n" \) | sort
'
out=$(cd "$ws" && run --workspace "$ws:review" --diff-out "$base/out.diff" -- sh -c "$agent" 2>"$base/err")
rc=$?
check "the agent ran (exit 0)" test "$rc" -eq 0
check "a protected file stays read-only in review mode" has "$out" "bashrc=2"
check "a protected directory stays read-only in review mode" has "$out" "hook=2"
saw=$(sed -n '/^MARK$/,$p' <<<"$out" | tail -n +2)
check "nothing reached the workspace" test "$(snapshot "$ws")" == "$before"
check "exit message names the review" grep -q "changes to $ws kept for review" "$base/err"
review=$(ls "$XDG_STATE_HOME"/sentry/reviews/*.review 2>/dev/null | head -1)
check "a review file was written" test -f "$review"

diff_out=$(cd "$ws" && "$sentry_run" diff)
check "--diff-out equals sentry-run diff" test "$diff_out" == "$(cat "$base/out.diff")"
check "diff: the edit as a unified hunk" has "$diff_out" $'@@ -1,5 +1,6 @@\n one\n-two\n+TWO\n three\n four\n five\n+six'
for line in "modified:  src/main.c" "deleted:   gone.txt" "deleted:   name1.txt" \
            "created:   name2.txt" "created:   new.txt" "directory: build/" \
            "created:   build/obj/a.o" "created:   blob.bin (binary)" \
            "deleted:   old/ (and all in it)" "symlink:   link -> src/main.c (created)"; do
  check "diff lists '$line'" has "$diff_out" "$line"
done
check "diff lists nothing else" test "$(grep -cE '^(modified|deleted|created|directory|symlink|mode): ' <<<"$diff_out")" -eq 11
check "diff names no protected file" bash -c "! grep -qE 'bashrc|post-checkout' <<<\"\$1\"" _ "$diff_out"

(cd "$ws" && "$sentry_run" apply 2>"$base/apply.err")
check "apply succeeds" test $? -eq 0
check "after apply the workspace is what the agent saw" test "$(snapshot "$ws" | grep -vE '\./\.(bashrc|git)')" == "$(grep -vE '\./\.(bashrc|git)' <<<"$saw")"
check "the review is marked applied" test -f "$review.applied"
none=$(cd "$ws" && "$sentry_run" apply 2>&1)
check "apply with no review left fails" test $? -eq 1
check "apply with no review left says so" has "$none" "no review for $ws"

# A second run; the host then changes a file the agent also changed, and puts a symlink to a
# directory outside where the agent made a new directory.
outside=$base/outside
mkdir -p "$outside"
(cd "$ws" && run --workspace "$ws:review" -- sh -c 'echo agent >> new.txt; mkdir fresh; echo f > fresh/f' 2>/dev/null)
echo host >>"$ws/new.txt"
ln -s "$outside" "$ws/fresh"
snap=$(snapshot "$ws")
apply_err=$(cd "$ws" && "$sentry_run" apply 2>&1)
check "apply refuses on a conflicting host change" test $? -ne 0
check "apply names the conflicting file" has "$apply_err" "$ws/new.txt changed on the host"
check "apply names the planted symlink" has "$apply_err" "$ws/fresh changed on the host"
check "a refused apply changes nothing" test "$(snapshot "$ws")" == "$snap"
check "nothing was written outside the workspace" test -z "$(ls -A "$outside")"
check "diff marks the conflict" bash -c "cd '$ws' && '$sentry_run' diff | grep -qF 'new.txt [changed on the host since]'"

# The unified diff against GNU patch: 40 text files with random edits (lines changed, added,
# removed, a last line without newline); patch -p1 of our diff onto a copy of the originals
# must give the agent's files.
gen=$base/gen
mkdir -p "$gen/orig" "$gen/new"
/usr/bin/python3 - "$gen" <<'PY'
import random, sys, os
random.seed(7)
root = sys.argv[1]
for i in range(40):
    n = random.randint(0, 60)
    a = ["line %d %s" % (j, random.choice("abc")) for j in range(n)]
    b = list(a)
    for _ in range(random.randint(1, 8)):
        op = random.random()
        k = random.randint(0, len(b))
        if op < 0.4 and b and k < len(b):
            b[k] = "changed %d" % random.randint(0, 99)
        elif op < 0.7:
            b.insert(k, "added %d" % random.randint(0, 99))
        elif b and k < len(b):
            del b[k]
    def text(lines, nl):
        return "\n".join(lines) + ("\n" if lines and nl else "")
    open(os.path.join(root, "orig", "f%02d.txt" % i), "w").write(text(a, True))
    open(os.path.join(root, "new", "f%02d.txt" % i), "w").write(text(b, random.random() < 0.8))
PY
ws2=$base/ws2
cp -r "$gen/orig" "$ws2"
(cd "$ws2" && run --workspace "$ws2:review" --bind "$gen/new:/gen-new:ro" --diff-out "$base/gen.diff" \
   -- sh -c 'cp /gen-new/* .' 2>/dev/null)
cp -r "$gen/orig" "$gen/patched"
(cd "$gen/patched" && patch -s -p1 <"$base/gen.diff" >/dev/null 2>&1)
check "GNU patch of our diff gives the agent's 40 files" diff -r "$gen/patched" "$gen/new"

# No changes at all: a clear line, an empty review.
(cd "$ws" && run --workspace "$ws:review" -- true 2>"$base/err2")
check "no changes: says so" grep -q "no changes to $ws" "$base/err2"

# Bad arguments.
err=$(run --diff-out "$base/x.diff" -- true 2>&1)
check "--diff-out without a review workspace: one line, exit 2" bash -c "'$sentry_run' --diff-out /dev/null -- true 2>/dev/null; test \$? -eq 2"
check "--diff-out error names the flag" has "$err" "--diff-out needs a workspace under review"
check "diff of a missing file fails" bash -c "! '$sentry_run' diff '$base/nothing' 2>/dev/null"
echo garbage >"$base/bad.review"
check "diff of a corrupt review fails clearly" bash -c "'$sentry_run' diff '$base/bad.review' 2>&1 | grep -q 'not a complete review file'"
exit $fail
