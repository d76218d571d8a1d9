"""The file-metadata rows (issue 13): where a sandbox's own file work, not the trip into it,
decides the time. Each walks many distinct files once, so no cache of a single file helps,
and each is timed inside the guest by bench_timeit.

Inputs are generated once per bench run in the work directory (a tmpfs when the runner is
root), which sentry-run sees as a read-write bind: the least cacheable kind of mount. The host
trees (/usr/share/man, /usr/bin, /usr/include/linux) are the read-only root's.
"""

import os
import subprocess

from . import inputs

# Per size: the generated tree (files, directories), the big directory's entries, the grep
# tree's files, the git repository's files.
SIZES = {
    "full": dict(tree_files=20000, tree_dirs=2000, ls_entries=5000, grep_files=2000,
                 git_files=5000, big_dir=50000, host_trees=True),
    "tiny": dict(tree_files=200, tree_dirs=20, ls_entries=50, grep_files=20,
                 git_files=50, big_dir=500, host_trees=False),
}


def _size(ctx):
    return SIZES[ctx.size["meta"]]


def _path(ctx, name):
    return os.path.join(ctx.tmp, "meta", name)


def _lines(i):
    return "".join(f"line {j} of file {i}: value {(i * 31 + j * 17) % 997}\n" for j in range(20))


def _tree(ctx):
    s = _size(ctx)
    root = _path(ctx, "tree")
    if os.path.isdir(root):
        return
    per_dir = s["tree_files"] // s["tree_dirs"]
    for d in range(s["tree_dirs"]):
        # Two levels: 1/10 of the directories at the top, the rest below them.
        sub = os.path.join(root, f"d{d % (s['tree_dirs'] // 10)}", f"e{d}")
        os.makedirs(sub, exist_ok=True)
        for f in range(per_dir):
            with open(os.path.join(sub, f"f{f}.txt"), "w") as out:
                out.write(_lines(d * per_dir + f)[: 64 + (f * 37) % 900])


def _flat_dir(path, entries):
    if os.path.isdir(path):
        return
    os.makedirs(path)
    for i in range(entries):
        with open(os.path.join(path, f"entry-{i:06d}"), "w") as out:
            out.write("x")


def _ls_dir(ctx):
    _flat_dir(_path(ctx, "ls"), _size(ctx)["ls_entries"])


def _big_dir(ctx):
    _flat_dir(_path(ctx, "big"), _size(ctx)["big_dir"])


def _grep_tree(ctx):
    root = _path(ctx, "grep")
    if os.path.isdir(root):
        return
    n = _size(ctx)["grep_files"]
    for i in range(n):
        sub = os.path.join(root, f"pkg{i % 40}")
        os.makedirs(sub, exist_ok=True)
        body = _lines(i) + ("#define NEEDLE %d\n" % i if i % 7 == 0 else "") + _lines(i + 1)
        inputs.write_file(os.path.join(sub, f"mod{i}.c"), body)


def _git_repo(ctx):
    root = _path(ctx, "git")
    if os.path.isdir(root):
        return
    inputs.git_repo(root, _size(ctx)["git_files"])
    env = dict(os.environ, GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@localhost",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@localhost")
    subprocess.run(["git", "-C", root, "add", "-A"], check=True, env=env)
    subprocess.run(["git", "-C", root, "commit", "-q", "-m", "bench"], check=True, env=env)
    # A few changes for status to find, and the index stat data refreshed natively once, so
    # that every column sees the same clean index.
    with open(os.path.join(root, "dir0", "file0.txt"), "a") as f:
        f.write("changed\n")
    inputs.write_file(os.path.join(root, "untracked.txt"), "new\n")
    subprocess.run(["git", "-C", root, "status", "--porcelain"], check=True, env=env,
                   stdout=subprocess.DEVNULL)


def _git_safe(ctx):
    # The repository belongs to the runner; the guest may run as another uid in some columns.
    return f"git -c safe.directory='*' -C {_path(ctx, 'git')}"


# An agent's turn: the one-liners an AI coding agent runs to look around a project, in one
# shell (ls, cat, grep -rn, sed, sort|uniq, head, wc, find, git log/diff/status, python -c).
def _agent_script(ctx):
    g, t, git = _path(ctx, "grep"), _path(ctx, "tree"), _git_safe(ctx)
    steps = [
        f"ls {g}", f"ls -la {g}/pkg1", f"cat {g}/pkg1/mod1.c", f"head -n 5 {g}/pkg2/mod2.c",
        f"wc -l {g}/pkg3/*.c", f"grep -rn NEEDLE {g}", f"grep -rl 'value 1' {g}/pkg4",
        f"grep -c line {g}/pkg5/mod5.c", f"sed -n '2,4p' {g}/pkg6/mod6.c",
        f"sed 's/line/LINE/' {g}/pkg7/mod7.c", f"sort {g}/pkg8/mod8.c | uniq -c",
        f"cut -d: -f2 {g}/pkg9/mod9.c | sort | uniq | head", f"find {g} -name '*.c' | wc -l",
        f"find {t} -maxdepth 2 -type d | head", f"find {g} -newer {g}/pkg1/mod1.c | wc -l",
        f"du -sh {g}", f"stat {g}/pkg1/mod1.c", f"file {g}/pkg1/mod1.c",
        f"{git} status --short", f"{git} log --oneline -3", f"{git} diff --stat",
        f"{git} ls-files | wc -l", f"{git} log -1 --format=%an",
        "python3 -c 'import json,sys; print(json.dumps({\"ok\": 1}))'",
        "python3 -c 'import os; print(len(os.listdir(\".\")))'", f"tail -n 3 {g}/pkg10/mod10.c",
        f"awk 'NR==3' {g}/pkg11/mod11.c", f"tr a-z A-Z < {g}/pkg12/mod12.c | head -2",
        f"diff {g}/pkg1/mod1.c {g}/pkg2/mod2.c | head -3", "echo done",
    ]
    return " ; ".join(f"{s} >/dev/null 2>&1" for s in steps[:-1]) + " ; " + steps[-1]


def prepare_all(ctx):
    os.makedirs(_path(ctx, ""), exist_ok=True)
    _tree(ctx)
    _ls_dir(ctx)
    _big_dir(ctx)
    _grep_tree(ctx)
    _git_repo(ctx)


def rows(Benchmark, shell, timeit_ms):
    """The rows, in table order. Their stdout must equal native's (counts, sizes)."""
    common = dict(unit="ms", value=timeit_ms, same_output=True, prepare=prepare_all,
                  metadata=True)

    def host(cmd):
        # The named host trees only at full size (they are the reference commands).
        return lambda ctx: shell(ctx, cmd if _size(ctx)["host_trees"] else "true")

    return [
        Benchmark("du -s tree (20k files)", **common,
                  command=lambda ctx: shell(ctx, f"du -s {_path(ctx, 'tree')} | cut -f1")),
        Benchmark("find -type f tree", **common,
                  command=lambda ctx: shell(ctx, f"find {_path(ctx, 'tree')} -type f | wc -l")),
        Benchmark("ls -la 5k dir", **common,
                  command=lambda ctx: shell(ctx, f"ls -la {_path(ctx, 'ls')} | wc -l")),
        Benchmark("grep -rn 2k files", **common,
                  command=lambda ctx: shell(ctx, f"grep -rn NEEDLE {_path(ctx, 'grep')} | wc -l")),
        Benchmark("git status 5k files", **common,
                  command=lambda ctx: shell(ctx, f"{_git_safe(ctx)} status --porcelain | wc -l")),
        Benchmark("ls 50k dir + missing lookups", **common,
                  command=lambda ctx: shell(
                      ctx, f"ls {_path(ctx, 'big')} | wc -l; for i in 1 2 3 4 5 6 7 8 9 10; "
                           f"do test -e {_path(ctx, 'big')}/missing-$i || echo -n .; done")),
        Benchmark("agent session (30 one-liners)", **common,
                  command=lambda ctx: shell(ctx, _agent_script(ctx))),
        Benchmark("du -s /usr/share/man", **common, command=host("du -s /usr/share/man | cut -f1")),
        Benchmark("ls -la /usr/bin", **common, command=host("ls -la /usr/bin | wc -l")),
        Benchmark("grep -rn define /usr/include/linux", **common,
                  command=host("grep -rn define /usr/include/linux | wc -l")),
    ]
