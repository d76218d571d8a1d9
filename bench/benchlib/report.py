"""Medians, ratios, the printed table and the JSON file.

A ratio is "how many times native's cost": sandbox time / native time, or native rate /
sandbox rate for throughputs, so 1.0 is native speed and larger is slower. It is computed pair
by pair (repetition i of a column against repetition i of native, run back to back) and the
median of those pairs is reported, so a slow moment of the machine hits both sides of a pair.
"""

import json
import math
import statistics


def ratio(bench, native, sandbox):
    if bench.higher_is_better:
        return native / sandbox
    return sandbox / native


def summarize(bench, columns, cells):
    """cells[column name] is the list of Cells of the repetitions. Returns one JSON-ready row:
    per column, the values, their median, the paired ratios and their median, the errors."""
    row = {"benchmark": bench.name, "unit": bench.unit,
           "higher_is_better": bench.higher_is_better, "real_workload": bench.real_workload,
           "columns": {}}
    native = cells.get("native", [])
    for column in columns:
        runs = cells.get(column.name)
        if column.unavailable or runs is None:
            row["columns"][column.name] = {"unavailable": column.unavailable or "not run"}
            continue
        values = [c.value for c in runs if c.value is not None]
        entry = {"values": values, "median": statistics.median(values) if values else None,
                 "errors": [c.error for c in runs if c.error]}
        if column.name != "native":
            pairs = [ratio(bench, n.value, c.value) for n, c in zip(native, runs)
                     if n.value and c.value]
            entry["ratios"] = pairs
            entry["median_ratio"] = statistics.median(pairs) if pairs else None
        row["columns"][column.name] = entry
    return row


def workload_geomeans(rows, columns):
    """Per sandbox column, the geometric mean of the real workloads' median ratios, or None
    when one of them has no ratio (it failed, or the column is n/a)."""
    means = {}
    for column in columns:
        if column.name == "native":
            continue
        ratios = [row["columns"][column.name].get("median_ratio") for row in rows
                  if row.get("real_workload")]
        if ratios and all(ratios):
            means[column.name] = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        else:
            means[column.name] = None
    return means


def geomean_line(means):
    parts = [f"{name} {_number(m)}x" if m else f"{name} n/a" for name, m in means.items()]
    return "real workloads, geometric mean of the ratios: " + ", ".join(parts)


def _number(x):
    if x >= 100:
        return f"{x:,.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def cell_text(entry):
    if "unavailable" in entry:
        return "n/a"
    if entry["median"] is None:
        return "fail"
    text = _number(entry["median"])
    if entry.get("median_ratio") is not None:
        text += f" ({_number(entry['median_ratio'])}x)"
    if entry["errors"]:
        text += " !"  # some repetitions failed; see the notes under the table
    return text


def table(rows, columns):
    """The table as text: one line per benchmark, value (ratio to native) per column."""
    header = ["benchmark", "unit"] + [c.name for c in columns]
    lines = [header]
    for row in rows:
        lines.append([row["benchmark"], row["unit"]] +
                     [cell_text(row["columns"][c.name]) for c in columns])
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = []
    for n, line in enumerate(lines):
        cells = [line[0].ljust(widths[0]), line[1].ljust(widths[1])]
        cells += [text.rjust(width) for text, width in zip(line[2:], widths[2:])]
        out.append("  ".join(cells).rstrip())
        if n == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def aligned(lines):
    """Lines of cells as a text table: the first cell left-aligned, the others right-aligned,
    a rule under the first line (the header)."""
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    out = ["  ".join([line[0].ljust(widths[0])] +
                     [t.rjust(w) for t, w in zip(line[1:], widths[1:])]).rstrip()
           for line in lines]
    out.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(out)


def notes(rows, columns):
    """Why columns are n/a and why cells failed, one line each."""
    out = [f"n/a {c.name}: {c.unavailable}" for c in columns if c.unavailable]
    for row in rows:
        for name, entry in row["columns"].items():
            for error in sorted(set(entry.get("errors", []))):
                out.append(f"{row['benchmark']} / {name}: {error}")
    return "\n".join(out)


def write_json(path, meta, rows, summary):
    with open(path, "w") as f:
        json.dump({"meta": meta, "results": rows, "summary": summary}, f, indent=1)
        f.write("\n")
