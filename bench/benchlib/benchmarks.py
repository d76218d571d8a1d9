"""The benchmarks: what each runs in the guest, its inputs, and how its value is read.

Every benchmark but `startup` is timed inside the guest (by the program itself or by
bench_timeit around a shell command), so the sandbox's start-up and tear-down are not part of
its number; `startup` is the wall time of the whole `sentry-run -- true` / `runsc do true`.
"""

import dataclasses
import os
import re
import shutil
from typing import Callable, Optional

from . import inputs, metadata

MIB = 1 << 20

# Sizes for a real run, and tiny ones for the CTest smoke run and for trying the harness.
SIZES = {
    "full": dict(syscalls=50000, pingpongs=20000, loopback_mib=1024, forks=200, pipe_mib=512, file_mib=1024, python_rounds=100,
                 gcc_functions=100, make_functions=25, git_files=200, tar_dir="linux",
                 find_dir="/usr/include", sqlite_rows=10000, http_gets=200, meta="full"),
    "tiny": dict(syscalls=1000, pingpongs=100, loopback_mib=1, forks=5, pipe_mib=1, file_mib=1, python_rounds=1,
                 gcc_functions=2, make_functions=1, git_files=5, tar_dir="linux/netfilter",
                 find_dir="/usr/include/linux/netfilter", sqlite_rows=100, http_gets=5, meta="tiny"),
}


@dataclasses.dataclass
class Context:
    """What a benchmark's functions are given: the bench programs, the temporary directory
    (shared inputs live at its top), and the chosen sizes."""
    programs: str
    tmp: str
    size: dict

    def program(self, name):
        return os.path.join(self.programs, f"bench_{name}")


@dataclasses.dataclass
class Benchmark:
    name: str
    unit: str
    # Context -> guest argv.
    command: Callable
    # (Context, exit-0 result) -> value; raises ValueError if the output has no value.
    value: Callable
    higher_is_better: bool = False
    # Context -> None: writes shared inputs into ctx.tmp once, before any run; untimed.
    prepare: Optional[Callable] = None
    # Each single run (each column, each repetition) starts in a fresh empty directory, so
    # what one run writes natively cannot change the next; without it runs start in ctx.tmp.
    fresh_dir: bool = False
    # (Context, directory) -> None: fills that fresh directory before the run; untimed.
    populate: Optional[Callable] = None
    # The sandboxes' stdout must equal native's (workloads that print a result).
    same_output: bool = False
    # One of the real workloads, whose ratios are summed up by a geometric mean.
    real_workload: bool = False
    # One of the file-metadata rows (metadata.py).
    metadata: bool = False


def _field(text, key):
    match = re.search(rf"^{key} ([0-9.]+)$", text, re.MULTILINE)
    if not match:
        raise ValueError(f"no '{key}' line in the output")
    return float(match.group(1))


def ns_per_op(ctx, result):
    return _field(result.stdout, "ns_per_op")


def timeit_ms(ctx, result):
    return _field(result.stderr, "timeit_ns") / 1e6


def wall_ms(ctx, result):
    return result.wall_s * 1e3


def total_ms(ctx, result):
    return _field(result.stdout, "total_ns") / 1e6


def file_read_mibs(ctx, result):
    seconds = _field(result.stdout, "total_ns") / 1e9
    return _field(result.stdout, "bytes") / MIB / seconds


def pipe_mibs(ctx, result):
    return ctx.size["pipe_mib"] / (_field(result.stderr, "timeit_ns") / 1e9)


def timed(ctx, *argv):
    """Guest argv: argv run and timed by bench_timeit inside the guest."""
    return [ctx.program("timeit")] + list(argv)


def shell(ctx, script):
    return timed(ctx, "/bin/sh", "-c", script)


def syscall_bench(op):
    return Benchmark(f"syscall {op}", "ns/op", value=ns_per_op,
                     command=lambda ctx: [ctx.program("syscall_loop"), op,
                                          str(ctx.size["syscalls"]), "/etc/passwd"])


# The guest commands. Each takes the Context and returns an argv.
PYTHON = "/usr/bin/python3"


def fork_exec(ctx):
    return [ctx.program("fork_exec"), str(ctx.size["forks"]), "/bin/true"]


def loopback(mode, size_key):
    return lambda ctx: [ctx.program("loopback"), mode, str(ctx.size[size_key])]


def pipe(ctx):
    blocks = ctx.size["pipe_mib"] * 16
    return shell(ctx, f"dd if=/dev/zero bs=64k count={blocks} status=none | cat >/dev/null")


def file_read(ctx):
    return [ctx.program("file_read"), os.path.join(ctx.tmp, "big.bin"), str(64 * 1024)]


def python_script(ctx):
    return timed(ctx, PYTHON, os.path.join(ctx.tmp, "work.py"), str(ctx.size["python_rounds"]))


def gcc(ctx):
    return timed(ctx, "gcc", "-O2", "-c", os.path.join(ctx.tmp, "mid.c"), "-o", "mid.o")


def make(ctx):
    return shell(ctx, "make -s -j2 && ./prog")


def git_commit(ctx):
    return shell(ctx, "git add -A && git -c user.name=bench -c user.email=bench@localhost "
                      "commit -q -m bench && git ls-files | wc -l")


def tar(ctx):
    return shell(ctx, f"tar czf t.tgz -C /usr/include {ctx.size['tar_dir']} && mkdir x && "
                      f"tar xzf t.tgz -C x && find x -type f | wc -l")


def find_grep(ctx):
    return shell(ctx, f"find {ctx.size['find_dir']} -name '*.h' | xargs grep -l define | wc -l")


def http_gets(ctx):
    return timed(ctx, PYTHON, os.path.join(ctx.tmp, "http_gets.py"), str(ctx.size["http_gets"]))


def sqlite(ctx):
    return timed(ctx, PYTHON, os.path.join(ctx.tmp, "sqlite_inserts.py"),
                 str(ctx.size["sqlite_rows"]))


# Untimed preparation.
def _write_scripts(ctx):
    inputs.write_file(os.path.join(ctx.tmp, "work.py"), inputs.PYTHON_SCRIPT)
    inputs.write_file(os.path.join(ctx.tmp, "sqlite_inserts.py"), inputs.SQLITE_SCRIPT)
    inputs.write_file(os.path.join(ctx.tmp, "http_gets.py"), inputs.HTTP_SCRIPT)


def _write_c_file(ctx):
    inputs.write_file(os.path.join(ctx.tmp, "mid.c"), inputs.c_source(ctx.size["gcc_functions"]))


def _write_big_file(ctx):
    inputs.big_file(os.path.join(ctx.tmp, "big.bin"), ctx.size["file_mib"] * MIB)


def _make_template(ctx):
    inputs.make_project(os.path.join(ctx.tmp, "make-template"), ctx.size["make_functions"])


def _copy_make_template(ctx, directory):
    shutil.copytree(os.path.join(ctx.tmp, "make-template"), directory, dirs_exist_ok=True)


def _git_repo(ctx, directory):
    inputs.git_repo(directory, ctx.size["git_files"])


def all_benchmarks():
    """In table order. The workloads that print a result must print the same as native."""
    workload = dict(unit="ms", value=timeit_ms, same_output=True, fresh_dir=True,
                    real_workload=True)
    return [
        syscall_bench("getpid"),
        syscall_bench("read_zero"),
        syscall_bench("stat"),
        syscall_bench("open_close"),
        Benchmark("startup (true)", "ms", value=wall_ms, command=lambda ctx: ["/bin/true"]),
        Benchmark("fork+exec /bin/true", "ms", value=total_ms, command=fork_exec),
        Benchmark("pipe dd|cat", "MiB/s", value=pipe_mibs, higher_is_better=True, command=pipe),
        Benchmark("loopback TCP ping-pong", "ns/op", value=ns_per_op,
                  command=loopback("tcp_pingpong", "pingpongs")),
        Benchmark("loopback TCP stream", "MiB/s", value=file_read_mibs, higher_is_better=True,
                  command=loopback("tcp_stream", "loopback_mib")),
        Benchmark("unix socket stream", "MiB/s", value=file_read_mibs, higher_is_better=True,
                  command=loopback("unix_stream", "loopback_mib")),
        Benchmark("file read 64 KiB", "MiB/s", value=file_read_mibs, higher_is_better=True,
                  prepare=_write_big_file, command=file_read),
        Benchmark("python3 script", command=python_script, prepare=_write_scripts, **workload),
        Benchmark("gcc -O2 mid.c", command=gcc, prepare=_write_c_file, **workload),
        Benchmark("make -j2", command=make, prepare=_make_template,
                  populate=_copy_make_template, **workload),
        Benchmark("git add+commit", command=git_commit, populate=_git_repo, **workload),
        Benchmark("tar czf+xzf", command=tar, **workload),
        Benchmark("find+grep", command=find_grep, **workload),
        Benchmark("sqlite3 inserts", command=sqlite, prepare=_write_scripts, **workload),
        Benchmark("http.server 200 GETs", command=http_gets, prepare=_write_scripts, **workload),
    ] + metadata.rows(Benchmark, shell, timeit_ms)
