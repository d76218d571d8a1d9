# Workload: everyday coreutils on files we make -- touch -d, chmod, ln -s, ln, cp -a, mv,
# readlink -f, ls -l, stat, du, sort (with spill files).
# What is printed is what Linux defines, not what one file system happens to choose:
#  - times are set with touch -d and shown in UTC; owners numerically (-n);
#  - the "total" line of ls -l (allocated blocks) is dropped, and a directory's size is never
#    shown: both are file-system specific (ext4 says 4096, tmpfs counts entries, an overlay
#    upper may say anything) and the two runs need not use the same file system;
#  - du: plain `du -s` reports allocated blocks, which depend on how the file system allocates
#    (tmpfs pages, sparse files, preallocation), so it is used as `du -b` (apparent size, i.e.
#    st_size summed) over regular files only, and as `du -s --inodes`, which counts what du
#    walked and must agree exactly;
#  - the temp directory's name is replaced by TMPDIR in paths.
set -eu
umask 022
export TZ=UTC
work=$(mktemp -d /tmp/wl.XXXXXX)
trap 'cd / && rm -rf "$work"' EXIT  # on failure too; the rm at the end is part of the test
cd "$work"
hide() { sed "s|$work|TMPDIR|g"; }

mkdir -p tree/sub/deeper
printf 'alpha\n' >tree/a.txt
printf 'bravo bravo\n' >tree/b.txt
head -c 10000 /dev/zero | tr '\0' 'x' >tree/sub/big.txt
printf '#!/bin/sh\necho run\n' >tree/sub/run.sh
: >tree/sub/deeper/empty
ln -s a.txt tree/link-a
ln -s sub/deeper tree/link-dir
ln -s missing tree/dangling
ln tree/b.txt tree/sub/b-hard

chmod 640 tree/a.txt
chmod u+x,g+x tree/sub/run.sh
chmod 4755 tree/sub/deeper/empty
chmod o-rx,g+w tree/sub/deeper
touch -d '2001-02-03 04:05:06' tree/a.txt tree/b.txt
touch -d '2010-10-10 10:10:10.5' tree/sub/big.txt tree/sub/run.sh tree/sub/deeper/empty
touch -h -d '2005-05-05 05:05:05' tree/link-a tree/link-dir tree/dangling
touch -d '1999-12-31 23:59:59' tree/sub/deeper tree/sub tree

echo "== ls -l"
# Fields are re-joined with single spaces: ls pads columns to the widest entry, directory
# sizes included.
ls -ln --time-style=+%Y-%m-%dT%H:%M:%S tree tree/sub tree/sub/deeper | sed '/^total /d' |
  awk '$1 ~ /^d/ { $5 = "-" } { $1 = $1; print }'
echo "== stat"
find tree -printf '%p\n' | LC_ALL=C sort | while read -r f; do
  if [ -d "$f" ] && [ ! -L "$f" ]; then
    stat -c '%n %a %F %h' "$f"
  else
    stat -c '%n %s %a %F %h %Y' "$f"
  fi
done
echo "== readlink"
readlink tree/link-a tree/link-dir
readlink -f tree/link-a tree/link-dir tree/sub/../link-dir/../run.sh | hide
readlink -f tree/dangling | hide
readlink -e tree/dangling || echo "readlink -e dangling: exit status $?"
echo "== du"
find tree -type f -print0 | LC_ALL=C sort -z | du -cb --files0-from=-
du -s --inodes tree
du -s --inodes tree/sub

echo "== cp -a"
cp -a tree copy
# Same names, types, modes, sizes, mtimes and symlink targets; the hard link stays one.
snapshot() {
  (cd "$1" && find . -printf '%P %y %m %TY-%Tm-%Td %TT %l\n' | LC_ALL=C sort)
}
if diff <(snapshot tree) <(snapshot copy); then echo "cp -a: metadata preserved"; fi
diff -r --no-dereference tree copy && echo "cp -a: contents equal"
stat -c '%h' copy/b.txt copy/sub/b-hard
[ "$(stat -c %i copy/b.txt)" = "$(stat -c %i copy/sub/b-hard)" ] && echo "cp -a: hard link kept"

echo "== mv"
mv copy/a.txt copy/renamed.txt
mv copy/sub copy/moved
mv copy/moved/big.txt .
ls copy copy/moved
cat copy/link-a 2>/dev/null || echo "link-a now dangles"
stat -c '%n %s %Y' big.txt
mv -T copy/moved/deeper copy/deeper2
ls -a copy/deeper2

echo "== sort"
# 100,000 numbers in a scrambled order; a 64 KiB buffer makes sort spill sorted runs to
# temporary files in the working directory and merge them.
seq 100000 | rev >numbers
sort -n -S 64K -T "$work" numbers >sorted
head -n 3 sorted
tail -n 2 sorted
wc -l <sorted
sort -n numbers | cmp - sorted && echo "sort: spilled and in-memory sorts agree"
sort -u -S 64K -T "$work" numbers | wc -l
printf 'b,2\na,10\nc,1\na,2\n' | sort -t, -k2,2n -k1,1
printf 'Banana\napple\ncherry\nApple\n' | LC_ALL=C sort
sha256sum <sorted

cd /
rm -rf "$work"
