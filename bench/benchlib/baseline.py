"""--baseline-build: this build's sentry-run against another build's, row by row.

Each sentry platform column gets a twin column that runs the baseline build's sentry-run right
after it in every round (columns.all_columns), on the same bench programs and inputs. A row's
verdict is the median of the paired ratios current / baseline, cost-wise like the ratios to
native (time ratio, or baseline rate / current rate for throughputs): 1.0 is "as fast as the
baseline", 1.07 is "7% slower". Pairing by round cancels most of a noisy machine's swings,
which move both runs of a pair; the medians alone would not.
"""

import math
import os
import statistics
import subprocess

from . import report

THRESHOLD = 1.05  # "slower" means a median paired ratio above this


def pairs(higher_is_better, baseline, current):
    """Paired cost ratios current/baseline of two per-round value lists (None = failed)."""
    out = []
    for b, c in zip(baseline, current):
        if b and c:
            out.append(b / c if higher_is_better else c / b)
    return out


def add_ratios(row, cols, values):
    """values[column name] is the per-round list of values (None where a round failed).
    Adds "vs_baseline" {ratios, median_ratio} to each current column that has a twin."""
    for column in cols:
        twin = getattr(column, "twin", None)
        entry = row["columns"].get(column.name, {})
        if twin is None or "unavailable" in entry or twin.name not in values:
            continue
        ratios = pairs(row["higher_is_better"], values[twin.name], values[column.name])
        entry["vs_baseline"] = {"baseline": twin.name, "ratios": ratios,
                                "median_ratio": statistics.median(ratios) if ratios else None}


def describe(build_dir):
    """The baseline build for the JSON: its directory, source tree and commit."""
    source = None
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith("CMAKE_HOME_DIRECTORY:"):
                    source = line.split("=", 1)[1].strip()
    except OSError:
        pass
    commit = None
    if source:
        proc = subprocess.run(["git", "-C", source, "rev-parse", "HEAD"], capture_output=True,
                              text=True)
        commit = proc.stdout.strip() or None
    return {"build_dir": build_dir, "source": source, "commit": commit}


def _twinned(cols):
    return [c for c in cols if getattr(c, "twin", None) is not None and not c.unavailable
            and not c.twin.unavailable]


def summary(rows, cols, build_dir):
    """The JSON summary: the baseline build, the threshold, every (row, column) slower than
    the baseline by more than the threshold, and per column the geometric mean of the rows'
    median ratios."""
    slower, logs = [], {}
    for row in rows:
        for column in _twinned(cols):
            ratio = row["columns"].get(column.name, {}).get("vs_baseline", {}).get(
                "median_ratio")
            if ratio is None:
                continue
            logs.setdefault(column.name, []).append(math.log(ratio))
            if ratio > THRESHOLD:
                slower.append({"benchmark": row["benchmark"], "column": column.name,
                               "median_ratio": ratio})
    geomeans = {name: math.exp(sum(v) / len(v)) for name, v in logs.items()}
    return dict(describe(build_dir), threshold=THRESHOLD, slower=slower,
                geomean_ratio=geomeans)


def table(rows, cols):
    """Per row, per current column: the median paired ratio current/baseline and the range of
    the pairs; a row above the threshold is marked."""
    twinned = _twinned(cols)
    if not twinned:
        return ""
    lines = [["benchmark"] + [f"{c.name} / {c.twin.name}" for c in twinned]]
    for row in rows:
        cells = []
        for column in twinned:
            vs = row["columns"].get(column.name, {}).get("vs_baseline")
            if not vs or vs["median_ratio"] is None:
                cells.append("n/a")
                continue
            text = f"{vs['median_ratio']:.3f} [{min(vs['ratios']):.2f}-{max(vs['ratios']):.2f}]"
            cells.append(text + (" SLOWER" if vs["median_ratio"] > THRESHOLD else ""))
        lines.append([row["benchmark"]] + cells)
    return report.aligned(lines)


def summary_line(info):
    means = ", ".join(f"{name} {m:.3f}" for name, m in info["geomean_ratio"].items())
    head = (f"against the baseline ({info['commit'] or info['build_dir']}): geometric mean "
            f"current/baseline {means or 'n/a'}; ")
    if not info["slower"]:
        return head + f"no row slower by more than {100 * (THRESHOLD - 1):.0f}%"
    rows = ", ".join(f"{s['benchmark']} [{s['column']}] {s['median_ratio']:.3f}"
                     for s in info["slower"])
    return head + f"slower by more than {100 * (THRESHOLD - 1):.0f}%: {rows}"
