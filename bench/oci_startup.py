#!/usr/bin/env python3
"""Start-up of an OCI container, sentry against runc and runsc: one table.

    bench/oci_startup.py [--runs=N] [--sentry=PATH] [--json=FILE]

Makes a bundle in a temporary directory (a busybox-static root, `true` as the process, new
pid/ipc/uts/mount/network namespaces, no terminal) and times `RUNTIME --root DIR run --bundle
B ID` followed by `RUNTIME --root DIR delete -f ID` (what one `docker run --rm` asks of a
runtime, without Docker's own work) for runc, sentry (seccomp platform) and runsc (ptrace
platform, no network), N rounds (default 20) taken in turns so that noise falls on all three.
Prints the medians and sentry's ratio to each; the rounds go to --json. Needs root.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def rootfs(root, busybox):
    """A minimal root file system at `root`: busybox as /bin/true and /bin/sh."""
    os.makedirs(os.path.join(root, "bin"))
    for d in ("proc", "dev", "sys", "tmp", "etc"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    shutil.copy(busybox, os.path.join(root, "bin", "busybox"))
    for name in ("true", "sh"):
        os.symlink("busybox", os.path.join(root, "bin", name))


def bundle(dir, busybox):
    rootfs(os.path.join(dir, "rootfs"), busybox)
    config = {
        "ociVersion": "1.0.2",
        "process": {"terminal": False, "user": {"uid": 0, "gid": 0}, "args": ["/bin/true"],
                    "env": ["PATH=/bin"], "cwd": "/"},
        "root": {"path": "rootfs", "readonly": True},
        "hostname": "bench",
        "mounts": [{"destination": "/proc", "type": "proc", "source": "proc"},
                   {"destination": "/dev", "type": "tmpfs", "source": "tmpfs",
                    "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]}],
        "linux": {"namespaces": [{"type": t} for t in ("pid", "ipc", "uts", "mount", "network")]},
    }
    with open(os.path.join(dir, "config.json"), "w") as f:
        json.dump(config, f)


def runtimes(sentry):
    out = {}
    if shutil.which("runc"):
        out["runc"] = ["runc"]
    out["sentry"] = [sentry, "--platform=seccomp"]
    if shutil.which("runsc"):
        out["runsc"] = ["runsc", "--platform=ptrace", "--network=none"]
    return out


def once(argv, state, bundle_dir, n):
    cid = f"bench-{os.getpid()}-{n}"
    start = time.perf_counter()
    run = subprocess.run(argv + ["--root", state, "run", "--bundle", bundle_dir, cid],
                         stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
    subprocess.run(argv + ["--root", state, "delete", "-f", cid], capture_output=True,
                   timeout=60)
    ms = (time.perf_counter() - start) * 1000
    if run.returncode != 0:
        raise RuntimeError(f"{argv[0]} run exited {run.returncode}: "
                           f"{run.stderr.decode(errors='replace').strip()[-300:]}")
    return ms


def alone(rts, work, bundle_dir):
    """A once() for rounds(): `run` + `delete -f` of the bundle by runtime `name` of `rts`,
    its state under `work`."""
    def run(name, n):
        state = os.path.join(work, "state-" + name)
        os.makedirs(state, exist_ok=True)
        return once(rts[name], state, bundle_dir, n)
    return run


def rounds(names, runs, once):
    """Times once(name, n) for every name in turns, runs + 1 rounds: round 0 warms caches and
    is not kept. Returns ({name: [ms, ...]}, {name: why}) for the ones that failed (a runtime
    is dropped at its first failure)."""
    times = {name: [] for name in names}
    failed = {}
    for n in range(runs + 1):
        for name in names:
            if name in failed:
                continue
            try:
                ms = once(name, n)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                failed[name] = str(e)
                continue
            if n > 0:
                times[name].append(ms)
    return times, failed


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--sentry", default=os.path.join(REPO, "build", "bin", "sentry"))
    p.add_argument("--json", default=os.path.join(REPO, "bench", "results", "oci_startup.json"))
    args = p.parse_args()
    if os.geteuid() != 0:
        print("oci_startup.py: needs root (runtimes make namespaces and cgroups)", file=sys.stderr)
        return 2
    busybox = shutil.which("busybox")
    if busybox is None:
        print("oci_startup.py: needs busybox (busybox-static)", file=sys.stderr)
        return 2
    work = tempfile.mkdtemp(prefix="oci-startup.")
    try:
        bundle(work, busybox)
        rts = runtimes(os.path.abspath(args.sentry))
        times, failed = rounds(list(rts), args.runs, alone(rts, work, work))
        med = {k: statistics.median(v) for k, v in times.items() if v}
        print(f"OCI start-up: run + delete of `true`, median of {args.runs} rounds (ms)")
        for name in rts:
            if name in failed:
                print(f"  {name:8s} n/a: {failed[name]}")
                continue
            line = f"  {name:8s} {med[name]:8.1f}"
            if name != "sentry" and "sentry" in med:
                line += f"   sentry / {name} = {med['sentry'] / med[name]:.2f}x"
            print(line)
        load = os.getloadavg()[0]
        print(f"  (load average {load:.1f} while measuring)")
        os.makedirs(os.path.dirname(args.json), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump({"rounds": times, "failed": failed, "load": load}, f, indent=1)
        return 0 if "sentry" in med else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
