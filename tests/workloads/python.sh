# Workload: CPython doing real work -- an sqlite3 database of 10,000 rows on disk (journal file
# created and deleted, reopened and read back), aggregates and an index, a child process through
# subprocess.run (fork/exec, pipes, waitpid), a json round trip and sha256 digests.
# Only deterministic values are printed: no paths, times or pids.
set -eu
umask 022
work=$(mktemp -d /tmp/wl.XXXXXX)
trap 'cd / && rm -rf "$work"' EXIT  # on failure too; the rm at the end is part of the test
cd "$work"

cat >work.py <<'EOF'
import hashlib
import json
import os
import sqlite3
import subprocess
import sys

work = sys.argv[1]
db = os.path.join(work, "data.db")

rows = [(i, "name%05d" % i, i % 7, (i * 37 % 1000) / 10.0) for i in range(10000)]
con = sqlite3.connect(db)
con.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, grp INTEGER, val REAL)")
con.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", rows)
con.commit()
con.execute("CREATE INDEX t_val ON t (val)")
con.commit()
con.close()

# A fresh connection: everything below is read back from the file.
con = sqlite3.connect(db)
count, total, lo, hi = con.execute(
    "SELECT COUNT(*), ROUND(SUM(val), 1), MIN(val), MAX(val) FROM t").fetchone()
print("rows", count, "sum", total, "min", lo, "max", hi)
for grp, n, avg in con.execute(
        "SELECT grp, COUNT(*), ROUND(AVG(val), 3) FROM t GROUP BY grp ORDER BY grp"):
    print("group", grp, n, avg)
top = con.execute("SELECT name FROM t WHERE val >= 99.5 ORDER BY val DESC, id LIMIT 3").fetchall()
print("top", [name for (name,) in top])
plan = con.execute("EXPLAIN QUERY PLAN SELECT id FROM t WHERE val = 50.0").fetchall()
print("uses index", any("t_val" in row[-1] for row in plan))
con.execute("UPDATE t SET val = val + 1 WHERE grp = 3")
con.execute("DELETE FROM t WHERE id % 100 = 0")
con.commit()
print("after update", con.execute("SELECT COUNT(*), ROUND(SUM(val), 1) FROM t").fetchone())
print("integrity", con.execute("PRAGMA integrity_check").fetchone()[0])
digest = hashlib.sha256()
for row in con.execute("SELECT id, name, grp, val FROM t ORDER BY id"):
    digest.update(repr(row).encode())
print("table sha256", digest.hexdigest())
con.close()
print("files", sorted(os.listdir(work)))

result = subprocess.run(["/bin/echo", "hello", "from", "a", "child"], capture_output=True)
print("subprocess", result.returncode, repr(result.stdout), repr(result.stderr))
result = subprocess.run(["/bin/sh", "-c", "cat; echo to-stderr >&2; exit 3"], input=b"piped in\n",
                        capture_output=True)
print("subprocess", result.returncode, repr(result.stdout), repr(result.stderr))

data = {"rows": [list(r) for r in rows[:500]],
        "meta": {"count": len(rows), "unicode": "h\u00e9llo \u2603",
                 "nested": [{"k": i, "v": [None, True, 1.5]} for i in range(5)]}}
text = json.dumps(data, sort_keys=True, ensure_ascii=False)
back = json.loads(text)
print("json", len(text), back == data, back["meta"]["unicode"])
print("json sha256", hashlib.sha256(text.encode()).hexdigest())
print("data sha256", hashlib.sha256("\n".join(map(repr, rows)).encode()).hexdigest())
EOF

/usr/bin/python3 work.py "$work"
cd /
rm -rf "$work"
