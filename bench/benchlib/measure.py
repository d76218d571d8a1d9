"""Running one benchmark once in one column, and the peak-memory measurement."""

import dataclasses
import os
import shutil
import signal
import subprocess
import tempfile
import time

from .columns import GUEST_ENV


@dataclasses.dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str
    wall_s: float


@dataclasses.dataclass
class Cell:
    """One benchmark, one column, one repetition: a value, or why there is none."""
    value: float = None
    wall_s: float = None
    error: str = None
    stdout: str = ""


def run_command(argv, cwd, timeout_s):
    """Runs argv in its own process group with the guest environment; kills the whole group
    if it outlives timeout_s. Returns a Result (returncode -9 after a timeout, 127 if argv
    cannot be started)."""
    start = time.perf_counter()
    try:
        proc = subprocess.Popen(argv, cwd=cwd, env=GUEST_ENV, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
    except OSError as e:
        return Result(127, "", f"cannot start {argv[0]}: {e}", 0.0)
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
    wall = time.perf_counter() - start
    return Result(proc.returncode, out.decode(errors="replace"), err.decode(errors="replace"),
                  wall)


def _last_line(text):
    lines = [line for line in text.strip().splitlines() if not line.startswith("timeit_ns ")]
    return lines[-1][:200] if lines else ""


def run_cell(bench, column, ctx, timeout_s):
    """Runs `bench` once under `column`, in a fresh directory if the benchmark asks for one."""
    workdir = ctx.tmp
    if bench.fresh_dir:
        workdir = tempfile.mkdtemp(prefix="run-", dir=ctx.tmp)
        if bench.populate:
            bench.populate(ctx, workdir)
    try:
        result = run_command(column.wrap(bench.command(ctx), workdir), workdir, timeout_s)
    finally:
        if bench.fresh_dir:
            shutil.rmtree(workdir, ignore_errors=True)
    cell = Cell(wall_s=result.wall_s, stdout=result.stdout)
    if result.returncode == -signal.SIGKILL and result.wall_s >= timeout_s:
        cell.error = f"timed out after {timeout_s} s"
    elif result.returncode != 0:
        cell.error = f"exit status {result.returncode}: {_last_line(result.stderr)}"
    else:
        try:
            cell.value = bench.value(ctx, result)
        except ValueError as e:
            cell.error = f"{e}: {_last_line(result.stderr)}"
    return cell


# Peak memory. sentry-run is the Sentry and, since the Sentry runs in namespaces of its own,
# also the supervisor that forked it and waits; the gofer is the Sentry's child (forked, and
# named sentry-gofer; an older build exec'd the `sentry` binary); the guest's processes are
# sentry-stub processes and are not counted. runsc do starts runsc-sandbox (`runsc boot`, the
# Sentry) and runsc-gofer; `runsc do` itself (a launcher that waits) and the ptrace stubs
# (processes that runsc-sandbox traces) are not counted. A process is known by its name (comm)
# or else its argv[0].
ROLES = {"sentry-gofer": "gofer", "sentry-run": "sentry", "sentry": "gofer",
         "runsc-sandbox": "sentry", "runsc-gofer": "gofer"}


def _descendants(root):
    """root and every process below it, from one scan of /proc."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def _role(pid):
    """Returns (role, VmHWM, Pss), both in KiB, if the process counts toward the sandbox's
    memory, else None (also once it is exiting). A traced process is a guest stub. Pss is None
    if smaps_rollup may not be read."""
    try:
        with open(f"/proc/{pid}/status") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv0 = os.path.basename(f.read().split(b"\0")[0].decode(errors="replace"))
    except OSError:
        return None  # gone
    name = fields.get("Name", "").strip()
    role = ROLES.get(name) or ROLES.get(argv0)
    if role is None or fields.get("TracerPid", "0").strip() != "0":
        return None
    hwm = int(fields.get("VmHWM", "0 kB").split()[0])
    pss = None
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    pss = int(line.split()[1])
                    break
    except PermissionError:
        return role, hwm, None  # the caller reports it
    except OSError:
        return None  # gone since its status was read
    if pss is None:
        return None  # exiting: no memory left to show
    return role, hwm, pss


def peak_memory_mib(column, timeout_s):
    """Runs `sleep 1` under `column` and returns (MiB, {process: {"hwm", "pss"} KiB}): the
    peak, over samples taken every 20 ms until the sandbox exits, of the sum of its own
    processes' proportional set sizes (Pss). Pss charges a page shared by n processes 1/n to
    each, so pages that a forked process shares with its parent count once in the sum, where
    a sum of peak RSS (VmHWM, kept per process in the detail with each one's peak Pss) counts
    them in each. The sum is taken per sample: a parent's Pss before its fork and its share
    after it are not added up."""
    try:
        proc = subprocess.Popen(column.wrap(["/bin/sleep", "1"], "/"), cwd="/", env=GUEST_ENV,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, start_new_session=True)
    except OSError as e:
        raise RuntimeError(f"cannot start: {e}") from e
    peaks, peak_sum, unreadable = {}, 0, False
    deadline = time.monotonic() + timeout_s
    while proc.poll() is None and time.monotonic() < deadline:
        total = 0
        for pid in _descendants(proc.pid):
            found = _role(pid)
            if found:
                role, hwm, pss = found
                key = f"{role} {pid}"
                seen = peaks.setdefault(key, {"hwm": 0, "pss": 0})
                seen["hwm"] = max(seen["hwm"], hwm)
                if pss is None:
                    unreadable = True
                else:
                    seen["pss"] = max(seen["pss"], pss)
                    total += pss
        peak_sum = max(peak_sum, total)
        time.sleep(0.02)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    err = proc.communicate()[1].decode(errors="replace")
    if proc.returncode != 0:
        raise RuntimeError(f"exit status {proc.returncode}: {_last_line(err)}")
    if not peaks:
        raise RuntimeError("found none of the sandbox's processes")
    if unreadable:
        raise RuntimeError("cannot read smaps_rollup of the sandbox's processes (not root?)")
    return peak_sum / 1024, peaks
