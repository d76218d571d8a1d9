# Workload: everyday agent commands from the everyday-programs issue that the other scripts do
# not cover: `cp -a` of a host tree compared with diff, two sqlite writers on one WAL database,
# make -j$(nproc), `script -qc` (a pty), `top -bn1` and `keyctl`. Output that differs between runs
# (times, pids, load) is reduced to what must hold.
set -u
work=$(mktemp -d)
cd "$work" || exit 1

# cp -a of a host tree: same contents, modes and link structure.
cp -a /usr/share/doc/bash copy && diff -r /usr/share/doc/bash copy && echo "cp -a: identical"
cp -a /usr/share/doc/bash/. copy2 && find copy2 | wc -l

# Two sqlite writers at once on a WAL database, each inserting 200 rows in its own
# transactions; both must succeed and every row must be there.
sqlite3 db.sqlite 'PRAGMA journal_mode=WAL; CREATE TABLE t(w TEXT, n INT);' >/dev/null
writer() {
  for i in $(seq 1 20); do
    echo "BEGIN IMMEDIATE;"
    for j in $(seq 1 10); do echo "INSERT INTO t VALUES('$1', $((i * 10 + j)));"; done
    echo "COMMIT;"
  done | sqlite3 -cmd '.timeout 10000' db.sqlite
}
writer a & pa=$!
writer b & pb=$!
wait $pa; sa=$?
wait $pb; sb=$?
echo "writers: $sa $sb"
sqlite3 db.sqlite 'SELECT w, count(*), sum(n) FROM t GROUP BY w; PRAGMA journal_mode; PRAGMA integrity_check;'

# make -j$(nproc): as many jobs as the machine has CPUs, and all targets built.
mkdir mk && cd mk || exit 1
for i in 1 2 3 4 5 6; do printf 'int f%d(void) { return %d; }\n' $i $i > f$i.c; done
printf 'int main(void) { return 0; }\n' > main.c
cat > Makefile <<'MK'
OBJS = main.o f1.o f2.o f3.o f4.o f5.o f6.o
prog: $(OBJS)
	$(CC) -o $@ $(OBJS)
%.o: %.c
	$(CC) -c -o $@ $<
MK
[ "$(nproc)" = "$(getconf _NPROCESSORS_ONLN)" ] && echo "nproc agrees with getconf"
make -s -j"$(nproc)" && ./prog && echo "make -j: built and ran"
cd .. || exit 1

# script -qc: the command runs on a pty (a terminal for it), its output comes back.
script -qc 'tty | sed "s/[0-9]*$/N/"; stty size >/dev/null && echo "stty: ok"' /dev/null | tr -d '\r'
echo "script: $?"

# top -bn1: one batch frame; its header lines and this shell among the tasks.
top -bn1 > top.out
echo "top: $?"
grep -c '^Tasks:' top.out
grep -c '^MiB Mem' top.out
grep -q " top *$" top.out && echo "top lists itself"

# keyctl (keyutils): a session keyring of its own; a user key added, read, found, described
# and revoked, and what the session keyring then shows. Serial numbers vary (and so does
# the width `keyctl show` pads them to): shown as N, runs of blanks as one.
keyctl session - sh -c 'id=$(keyctl add user agent-token s3cret @s); keyctl print $id
  keyctl search @s user agent-token >/dev/null && echo "keyctl: found"
  keyctl rdescribe $id | cut -d";" -f1,4,5
  keyctl revoke $id; keyctl print $id; echo "keyctl print after revoke: $?"
  keyctl show @s | tail -n +2' 2>&1 | sed 's/[0-9][0-9]*/N/g; s/  */ /g; s/^ //'

cd / && rm -rf "$work"
