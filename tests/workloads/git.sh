# Workload: git on a 200-file repository -- init, config, add, commit (zlib-compressed objects,
# the index, lock files renamed into place, hooks looked up), log --stat, status (stat of every
# tracked file against the index), a second commit, diff and fsck.
# Commit hashes depend only on content, identity and dates, so fixed dates make them
# deterministic. The host's /etc/gitconfig and ~/.gitconfig are ignored: they could change
# defaults, colours or ask for signing.
set -eu
umask 022
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_PAGER=cat PAGER=cat
export GIT_AUTHOR_DATE='2024-01-02T03:04:05+0000' GIT_COMMITTER_DATE='2024-01-02T03:04:05+0000'
work=$(mktemp -d /tmp/wl.XXXXXX)
trap 'cd / && rm -rf "$work"' EXIT  # on failure too; the rm at the end is part of the test
cd "$work"

git init -q -b main repo
cd repo
git config user.name 'Workload Tester'
git config user.email 'workload@example.com'

for i in $(seq 1 200); do
  d=dir$((i % 10))
  mkdir -p "$d"
  printf 'file %d\nline two of %d\n' "$i" "$i" >"$d/file$i.txt"
done
git add .
git commit -q -m 'Add 200 files'
git log --stat
git status

# Change a few files, remove one, add one; show what git sees, then commit it.
for i in 5 50 150; do echo "changed $i" >>"dir$((i % 10))/file$i.txt"; done
git rm -q dir1/file1.txt
echo new >dir0/new.txt
git status
git status --short
git add -A
export GIT_AUTHOR_DATE='2024-01-03T00:00:00+0000' GIT_COMMITTER_DATE='2024-01-03T00:00:00+0000'
git commit -q -m 'Change three files, delete one, add one'
git log --oneline
git diff --stat HEAD~1 HEAD
git status
git ls-files | wc -l
git rev-parse 'HEAD^{tree}'
git fsck --no-progress --strict && echo "fsck ok"

cd /
rm -rf "$work"
