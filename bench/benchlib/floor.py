"""The floor: the time an interception-based sandbox cannot beat on this machine.

    floor = native time + guest syscalls x one trip

The trip is the column's own `syscall getpid` cost (measured here once per column: a getpid
is all trip and almost no work); the workload's syscalls are counted by the Sentry
(`sentry-run --stats`) in one extra, untimed run. sentry/floor near 1.0 means the trips are
the cost and only a cheaper trip (another platform, a faster machine) helps; well above it,
the Sentry's own work per call is what to cut.
"""

import copy
import json
import os
import tempfile

from . import benchmarks, columns, measure, report


def _counted(column):
    """Whether the column gets a floor: this build's sentry columns (a baseline build may
    predate --stats)."""
    return isinstance(column, columns.SentryRun) and not column.is_baseline


def trips_ns(cols, ctx, timeout_s):
    """Per sentry column, the median of three getpid measurements in ns, or None."""
    bench = benchmarks.syscall_bench("getpid")
    trips = {}
    for column in cols:
        if not _counted(column) or column.unavailable:
            continue
        values = [measure.run_cell(bench, column, ctx, timeout_s).value for _ in range(3)]
        values = sorted(v for v in values if v is not None)
        trips[column.name] = values[len(values) // 2] if values else None
    return trips


def count_syscalls(bench, column, ctx, timeout_s):
    """The guest syscalls of one run of `bench` under sentry column `column`, or None."""
    fd, path = tempfile.mkstemp(prefix="bench-stats.", suffix=".json")
    os.close(fd)
    try:
        counted = copy.copy(column)
        counted.extra = column.extra + [f"--stats={path}"]
        cell = measure.run_cell(bench, counted, ctx, timeout_s)
        if cell.value is None:
            return None
        with open(path) as f:
            return json.load(f)["syscalls"]
    except (OSError, ValueError, KeyError):
        return None
    finally:
        os.unlink(path)


def add_floor(row, bench, cols, ctx, timeout_s, trips):
    """Adds "syscalls", "floor" (ms) and "floor_ratio" to each sentry column of a ms row."""
    native = row["columns"].get("native", {}).get("median")
    if native is None:
        return
    for column in cols:
        entry = row["columns"].get(column.name, {})
        trip = trips.get(column.name)
        if trip is None or entry.get("median") is None:
            continue
        calls = count_syscalls(bench, column, ctx, timeout_s)
        if calls is None:
            continue
        floor_ms = native + calls * trip / 1e6
        entry.update(syscalls=calls, trip_ns=trip, floor=floor_ms,
                     floor_ratio=entry["median"] / floor_ms)


def table(rows, cols):
    """Per row with a floor: syscalls, and per sentry column floor ms and sentry/floor."""
    names = [c.name for c in cols if _counted(c)]
    lines = [["benchmark", "syscalls"] + [f"{n}: floor ms, /floor" for n in names]]
    for row in rows:
        cells = [row["columns"].get(n, {}) for n in names]
        if not any("floor" in c for c in cells):
            continue
        calls = next(c["syscalls"] for c in cells if "floor" in c)
        lines.append([row["benchmark"], f"{calls:,}"] + [
            f"{c['floor']:,.1f}, {c['floor_ratio']:.2f}x" if "floor" in c else "n/a"
            for c in cells])
    if len(lines) == 1:
        return ""
    return report.aligned(lines)
