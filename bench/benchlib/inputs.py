"""Generated inputs for the real workloads. Nothing here is checked in: every input is written
into the run's temporary directory, deterministically, before any timing starts."""

import os
import subprocess
import textwrap

# A python3 workload: imports from the standard library (many stat/open calls), then pure
# computation and a little file I/O. Prints a digest so the sandboxes' output can be checked.
PYTHON_SCRIPT = textwrap.dedent("""\
    import collections, hashlib, json, re, sys

    rounds = int(sys.argv[1])
    words = [f"w{(i * 7919) % 1000}" for i in range(20000)]
    digest = hashlib.sha256()
    for r in range(rounds):
        counts = collections.Counter(words[r:] + words[:r])
        text = json.dumps(counts.most_common(200), sort_keys=True)
        found = re.findall(r"w(\\d+)7", text)
        with open(f"round{r}.json", "w") as f:
            f.write(text)
        with open(f"round{r}.json") as f:
            digest.update(f.read().encode())
        digest.update(str(len(found)).encode())
    print(digest.hexdigest())
    """)

# sqlite3 through python3's module: one INSERT per transaction (autocommit), so every insert
# is a journal open, write, unlink and database write. synchronous=OFF drops the fsyncs: the
# sandboxes' in-memory layer makes them free, natively they would measure the disk.
SQLITE_SCRIPT = textwrap.dedent("""\
    import sqlite3, sys

    count = int(sys.argv[1])
    db = sqlite3.connect("bench.db", isolation_level=None)
    db.execute("PRAGMA synchronous=OFF")
    db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, value REAL)")
    for i in range(count):
        db.execute("INSERT INTO t (name, value) VALUES (?, ?)", (f"row{i}", i * 0.5))
    print(db.execute("SELECT COUNT(*), SUM(value) FROM t").fetchone())
    """)


def c_source(functions, seed=0):
    """A C file of `functions` functions with loops, branches and a switch: something for the
    optimiser to chew on. Includes a few system headers, as real code does."""
    parts = ["#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"]
    for i in range(functions):
        k = i + seed
        parts.append(textwrap.dedent(f"""\
            long f{seed}_{i}(long n, const long* v) {{
              long acc = {k};
              for (long j = 0; j < n; j++) {{
                switch ((v[j] + {k}) % 5) {{
                  case 0: acc += v[j] * {k % 13 + 1}; break;
                  case 1: acc ^= v[j] << {k % 7}; break;
                  case 2: acc -= v[j] / {k % 11 + 1}; break;
                  case 3: acc = acc * 31 + j; break;
                  default: if (acc > v[j]) acc /= 2; else acc += {k};
                }}
              }}
              return acc;
            }}
            """))
    parts.append(f"long sum{seed}(long n, const long* v) {{\n  long s = 0;\n")
    parts.extend(f"  s += f{seed}_{i}(n, v);\n" for i in range(functions))
    parts.append("  return s;\n}\n")
    return "".join(parts)


def write_file(path, text):
    with open(path, "w") as f:
        f.write(text)


def make_project(directory, functions_per_file):
    """A small make project: four generated .c files, a main.c and a Makefile."""
    os.makedirs(directory, exist_ok=True)
    for seed in range(4):
        write_file(os.path.join(directory, f"part{seed}.c"), c_source(functions_per_file, seed))
    decls = "".join(f"long sum{seed}(long n, const long* v);\n" for seed in range(4))
    calls = " + ".join(f"sum{seed}(4, v)" for seed in range(4))
    write_file(os.path.join(directory, "main.c"),
               f'#include <stdio.h>\n{decls}int main(void) {{\n'
               f'  const long v[4] = {{1, 2, 3, 4}};\n  printf("%ld\\n", {calls});\n'
               f'  return 0;\n}}\n')
    objects = " ".join(f"part{seed}.o" for seed in range(4)) + " main.o"
    write_file(os.path.join(directory, "Makefile"),
               f"CFLAGS = -O2\nprog: {objects}\n\t$(CC) -o $@ $^\n"
               f"%.o: %.c\n\t$(CC) $(CFLAGS) -c -o $@ $<\n")


def git_repo(directory, files):
    """A fresh git repository with `files` new, untracked files in a few subdirectories."""
    os.makedirs(directory, exist_ok=True)
    subprocess.run(["git", "init", "-q", directory], check=True)
    for i in range(files):
        sub = os.path.join(directory, f"dir{i % 10}")
        os.makedirs(sub, exist_ok=True)
        lines = "".join(f"file {i} line {j}: {(i * 31 + j * 17) % 1000}\n" for j in range(40))
        write_file(os.path.join(sub, f"file{i}.txt"), lines)


def big_file(path, size_bytes):
    """A file of `size_bytes` bytes (a repeated pseudo-random MiB, so it is not sparse)."""
    block = bytes((i * 2654435761 >> 13) & 0xFF for i in range(1 << 20))
    with open(path, "wb") as f:
        left = size_bytes
        while left > 0:
            f.write(block[:left])
            left -= len(block)

# 200 HTTP GETs (one connection each) from urllib to python's http.server on loopback, both in
# one process: what a test runner or an agent fetching from a local dev server does.
HTTP_SCRIPT = textwrap.dedent("""\
    import http.server, os, sys, threading, urllib.request

    count = int(sys.argv[1])
    with open("page.html", "w") as f:
        f.write("x" * 4096)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = "http://127.0.0.1:%d/page.html" % server.server_address[1]
    total = 0
    for _ in range(count):
        with urllib.request.urlopen(url) as r:
            total += len(r.read())
    server.shutdown()
    print(total)
    """)
