#!/usr/bin/env python3
"""Benchmarks sentry-run against native and gVisor's runsc: one command, one table.

    bench/run.py [--runs=N] [--quick] [--only=NAME,...] [--build-dir=DIR] [--json=FILE]
                 [--baseline-build=DIR]

Builds the `bench` target (sentry-run, the gofer, the stub and bench/programs) in --build-dir
(default: build), generates the workloads' inputs in a temporary directory, runs every
benchmark N times (default 5; --quick: once) in each column -- native, sentry ptrace, sentry
seccomp, runsc ptrace -- and prints the medians with their ratio to native. A column that is
absent or fails to run `true` prints "n/a"; a benchmark that fails prints "fail". The results,
every repetition included, go to --json (default bench/results/latest.json).

--baseline-build=DIR adds a column per platform for another build's sentry-run (say, the commit
before a change), run right after the current one in every round, and prints per row the median
of the paired ratios current/baseline, naming every row slower than the baseline by more than 5%
(bench/benchlib/baseline.py). DIR must be configured and built (its `bench` target) already.

--smoke is the CTest smoke test: --tiny inputs, one run, no runsc; exit status 1 if a benchmark
fails natively or under sentry-run. Without --smoke only a native failure gives status 1.
"""

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import baseline, benchmarks, columns, floor, measure, report, workdir  # noqa: E402

MEMORY_ROW = "peak PSS (sleep 1)"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=5, help="repetitions per cell (default 5)")
    p.add_argument("--quick", action="store_true", help="one repetition (same as --runs=1)")
    p.add_argument("--tiny", action="store_true", help="tiny inputs (to try the harness)")
    p.add_argument("--smoke", action="store_true",
                   help="CTest smoke test: --tiny, one run, no runsc, strict exit status")
    p.add_argument("--only", help="comma-separated benchmark names or prefixes to run")
    p.add_argument("--no-runsc", action="store_true", help="leave out the runsc column")
    p.add_argument("--no-floor", action="store_true",
                   help="leave out the floor (an extra counted run per workload and column)")
    p.add_argument("--audit", action="store_true",
                   help="add a column: sentry seccomp with a policy file and --audit on")
    p.add_argument("--gofer-column", action="store_true",
                   help="add a column: sentry seccomp with --file-access=gofer")
    p.add_argument("--build-dir", default=os.path.join(REPO, "build"))
    p.add_argument("--baseline-build", metavar="DIR",
                   help="another build dir: its sentry-run gets a column per platform, and "
                        "each row the paired ratio current/baseline")
    p.add_argument("--no-build", action="store_true", help="use --build-dir as it is")
    p.add_argument("--json", default=os.path.join(REPO, "bench", "results", "latest.json"))
    p.add_argument("--timeout", type=float, default=None,
                   help="seconds before one run is killed (default 300, smoke 30)")
    args = p.parse_args()
    args.build_dir = os.path.abspath(args.build_dir)
    if args.baseline_build:
        args.baseline_build = os.path.abspath(args.baseline_build)
    if args.quick or args.smoke:
        args.runs = 1
    if args.timeout is None:
        args.timeout = 30 if args.smoke else 300
    return args


def build(build_dir):
    if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
        subprocess.run(["cmake", "-S", REPO, "-B", build_dir, "-G", "Ninja"], check=True)
    subprocess.run(["cmake", "--build", build_dir, "--target", "bench", "-j2"], check=True)


def wanted(name, only):
    """Whether --only (comma-separated names or prefixes) selects the benchmark `name`."""
    return not only or any(name.startswith(w.strip()) for w in only.split(","))


def check_output(bench, cells):
    """Marks a sandbox repetition as failed when its stdout differs from native's."""
    native = cells["native"]
    for name, runs in cells.items():
        for n, c in zip(native, runs):
            if name != "native" and c.value is not None and n.value is not None \
                    and c.stdout != n.stdout:
                c.value = None
                c.error = f"stdout {c.stdout.strip()[:60]!r} != native {n.stdout.strip()[:60]!r}"


def run_benchmark(bench, cols, ctx, args):
    """All repetitions of one benchmark; each repetition runs every column back to back."""
    if bench.prepare:
        bench.prepare(ctx)
    cells = {c.name: [] for c in cols if not c.unavailable}
    for rep in range(args.runs):
        for column in columns.round_order(cols, rep):
            if column.unavailable:
                continue
            cell = measure.run_cell(bench, column, ctx, args.timeout)
            cells[column.name].append(cell)
            shown = f"{cell.value:.4g} {bench.unit}" if cell.value is not None else cell.error
            print(f"  {bench.name} [{column.name}] #{rep + 1}: {shown}", file=sys.stderr)
    if bench.same_output:
        check_output(bench, cells)
    row = report.summarize(bench, cols, cells)
    baseline.add_ratios(row, cols, {name: [c.value for c in runs]
                                    for name, runs in cells.items()})
    return row


def memory_row(cols, args):
    """Peak memory (Pss) of the sandbox's own processes (supervisor, Sentry, gofer) for a
    `sleep 1` guest."""
    row = {"benchmark": MEMORY_ROW, "unit": "MiB", "higher_is_better": False,
           "columns": {}}
    rounds = {}  # per column, per repetition: MiB or None, for the baseline's pairs
    for column in cols:
        if column.name == "native" or column.unavailable:
            row["columns"][column.name] = {"unavailable": column.unavailable or "no sandbox"}
            continue
        values, errors, detail = [], [], []
        rounds[column.name] = []
        for _ in range(args.runs):
            try:
                mib, per_process = measure.peak_memory_mib(column, args.timeout)
                values.append(mib)
                detail.append(per_process)
                rounds[column.name].append(mib)
            except RuntimeError as e:
                errors.append(str(e))
                rounds[column.name].append(None)
        median = statistics.median(values) if values else None
        row["columns"][column.name] = {"values": values, "median": median, "errors": errors,
                                       "per_process_kib": detail}
        print(f"  peak PSS [{column.name}]: {values} MiB {errors or ''}", file=sys.stderr)
    baseline.add_ratios(row, cols, rounds)
    return row


def machine():
    with open("/proc/cpuinfo") as f:
        model = next((line.split(":", 1)[1].strip() for line in f
                      if line.startswith("model name")), "?")
    try:
        distro = platform.freedesktop_os_release().get("PRETTY_NAME", "?")
    except (AttributeError, OSError):
        distro = "?"
    return {"cpus": os.cpu_count(), "cpu_model": model, "kernel": platform.release(),
            "os": distro, "load_average_at_start": os.getloadavg()}


def main():
    args = parse_args()
    host = machine()
    if not args.no_build:
        build(args.build_dir)
    sentry_run = os.path.join(args.build_dir, "bin", "sentry-run")
    baseline_run = (os.path.join(args.baseline_build, "bin", "sentry-run")
                    if args.baseline_build else None)
    cols = columns.all_columns(sentry_run, with_runsc=not (args.no_runsc or args.smoke),
                               with_audit=args.audit, with_gofer=args.gofer_column,
                               baseline_run=baseline_run)
    for column in cols:
        column.probe()
        print(f"column {column.name}: {column.unavailable or 'ok'}", file=sys.stderr)
    size = "tiny" if args.tiny or args.smoke else "full"
    rows = []
    with workdir.WorkDir() as work:
        print(f"work directory: {work.path} on {work.fs}", file=sys.stderr)
        if work.mounted:
            for column in cols:
                if isinstance(column, columns.SentryRun):
                    column.binds.append(work.path)
        ctx = benchmarks.Context(programs=os.path.join(args.build_dir, "bench"), tmp=work.path,
                                 size=benchmarks.SIZES[size])
        with_floor = not (args.no_floor or args.smoke)
        trips = floor.trips_ns(cols, ctx, args.timeout) if with_floor else {}
        for bench in benchmarks.all_benchmarks():
            if not wanted(bench.name, args.only):
                continue
            row = run_benchmark(bench, cols, ctx, args)
            if with_floor and (bench.real_workload or bench.metadata):
                floor.add_floor(row, bench, cols, ctx, args.timeout, trips)
            rows.append(row)
    for column in cols:
        if isinstance(column, columns.SentryRun):
            column.binds.clear()  # the work directory is gone
    if wanted(MEMORY_ROW, args.only):
        rows.append(memory_row(cols, args))

    meta = {"date": datetime.datetime.now().isoformat(timespec="seconds"),
            "runs": args.runs, "sizes": size, "machine": host, "work_directory": work.fs,
            "load_average_at_end": os.getloadavg(),
            "columns": {c.name: c.unavailable or "ok" for c in cols}}
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    geomeans = report.workload_geomeans(rows, cols)
    summary = {"real_workload_geomean_ratio": geomeans}
    if args.baseline_build:
        summary["baseline"] = baseline.summary(rows, cols, args.baseline_build)
    report.write_json(args.json, meta, rows, summary)
    print(report.table(rows, cols))
    if any(row.get("real_workload") for row in rows):
        print(report.geomean_line(geomeans))
    floors = floor.table(rows, cols)
    if floors:
        print("\nfloor = native + syscalls x the column's getpid trip (bench/benchlib/floor.py)")
        print(floors)
    if args.baseline_build:
        print("\nmedian of the paired ratios current/baseline, cost-wise (> 1 is slower than "
              "the baseline) [lowest-highest pair]")
        print(baseline.table(rows, cols))
        print(baseline.summary_line(summary["baseline"]))
    notes = report.notes(rows, cols)
    if notes:
        print("\n" + notes)
    print(f"\n{args.runs} run(s) per cell, median; (Nx) = median of paired ratios to native, "
          f"cost-wise (higher is slower). JSON: {args.json}")
    return exit_status(rows, args.smoke)


def exit_status(rows, strict):
    """1 if a benchmark failed natively (the harness or the host is broken), or, when strict,
    under sentry-run; runsc's failures are runsc's."""
    for row in rows:
        for name, entry in row["columns"].items():
            if "unavailable" in entry:
                continue
            failed = entry["errors"] or entry["median"] is None
            if failed and (name == "native" or (strict and name.startswith("sentry"))):
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
