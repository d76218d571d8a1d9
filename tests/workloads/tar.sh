# Workload: tar czf of /usr/share/doc/bash (installed with bash itself; on an image that strips
# docs it still holds the copyright file), tar xzf into another directory, diff -r against the
# original. tar runs gzip as a child through a pipe, restores modes and mtimes (utimensat).
# The archive listing is sorted: tar stores entries in readdir order, which no file system
# promises to keep. The archive's own bytes are not compared for the same reason.
set -u
umask 022
export TZ=UTC
work=$(mktemp -d /tmp/wl.XXXXXX) || exit 1
trap 'cd / && rm -rf "$work"' EXIT  # on failure too; the rm at the end is part of the test
cd "$work" || exit 1

status=0
tar czf "$work/doc.tar.gz" -C /usr/share/doc bash || status=$?
echo "tar czf: exit status $status"
echo "archive entries:"
tar tzf "$work/doc.tar.gz" | LC_ALL=C sort
mkdir "$work/out"
status=0
tar xzf "$work/doc.tar.gz" -C "$work/out" || status=$?
echo "tar xzf: exit status $status"
status=0
diff -r /usr/share/doc/bash "$work/out/bash" || status=$?
echo "diff -r: exit status $status"
echo "files: $(find "$work/out/bash" -type f | wc -l)"
# What tar restored besides the bytes: type, mode and mtime (whole seconds: the gnu format
# keeps no fractions) of every entry, the size of every file (a directory's st_size depends on
# the file system, not on tar), and the sha256 of every file.
(cd "$work/out/bash" && find . -type d -printf '%P/ %y %m %TY-%Tm-%Td %TT\n' | LC_ALL=C sort)
(cd "$work/out/bash" && find . ! -type d -printf '%P %y %m %s %TY-%Tm-%Td %TT\n' | LC_ALL=C sort)
(cd "$work/out/bash" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)

cd /
rm -rf "$work"
