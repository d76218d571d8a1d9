#!/usr/bin/env python3
"""Start-up of `docker run --rm IMG true` under sentry, runc and runsc: one table.

    bench/docker_startup.py [--runs=N] [--sentry=PATH] [--json=FILE]

Starts a dockerd of its own (its own socket, data root and exec root under a temporary
directory, in a network namespace of its own, no bridge and no iptables: never a daemon it did
not start), registers sentry (seccomp platform) and runsc (ptrace platform, no network) as
runtimes next to runc, imports busybox-static as an image (never pulled), and times
`docker run --rm --network none --runtime=R IMG true` for each runtime in turns, N rounds
(default 10) after one warm-up round. In the same run it times what the runtime alone does for
one such container (bench/oci_startup.py: `run` + `delete -f` of a bundle), so the table shows
how much of a `docker run` is Docker's own work, which no runtime can make shorter.
Needs root, docker.io and busybox-static.
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

import oci_startup

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Dockerd:
    """A private dockerd, stopped (with its containers) on exit."""

    def __init__(self, work, runtimes):
        self.work = work
        self.env = dict(os.environ, DOCKER_HOST=f"unix://{work}/docker.sock")
        config = {"runtimes": {name: {"path": argv[0], "runtimeArgs": argv[1:]}
                               for name, argv in runtimes.items() if name != "runc"}}
        with open(os.path.join(work, "daemon.json"), "w") as f:
            json.dump(config, f)
        self.proc = None
        self.log = open(os.path.join(work, "dockerd.log"), "w")

    def start(self, driver):
        argv = ["unshare", "--net", "dockerd", "--host", self.env["DOCKER_HOST"],
                "--data-root", os.path.join(self.work, "data-" + driver),
                "--exec-root", os.path.join(self.work, "exec"),
                "--pidfile", os.path.join(self.work, "docker.pid"),
                "--config-file", os.path.join(self.work, "daemon.json"),
                "--iptables=false", "--ip6tables=false", "--ip-forward=false",
                "--ip-masq=false", "--storage-driver", driver]
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
        for _ in range(150):
            if self.docker(["version"]).returncode == 0:
                return True
            if self.proc.poll() is not None:
                break
            time.sleep(0.2)
        self.stop()
        return False

    def docker(self, args, **kw):
        return subprocess.run(["docker"] + args, env=self.env, capture_output=True, **kw)

    def stop(self):
        if self.proc is None:
            return
        ids = self.docker(["ps", "-aq"]).stdout.decode().split()
        if ids:
            self.docker(["rm", "-f"] + ids)
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None
        subprocess.run(["umount", "-R", self.work], capture_output=True)


def image(dockerd, work, busybox):
    root = os.path.join(work, "image")
    oci_startup.rootfs(root, busybox)
    tar = subprocess.run(["tar", "-C", root, "-c", "."], capture_output=True, check=True)
    name = "sentry-bench-busybox:latest"
    r = dockerd.docker(["import", "-", name], input=tar.stdout)
    if r.returncode != 0:
        raise RuntimeError(f"docker import: {r.stderr.decode(errors='replace').strip()}")
    return name


def docker_once(dockerd, runtime, img):
    start = time.perf_counter()
    r = dockerd.docker(["run", "--rm", "--network", "none", f"--runtime={runtime}", img, "true"],
                       stdin=subprocess.DEVNULL, timeout=120)
    ms = (time.perf_counter() - start) * 1000
    if r.returncode != 0:
        raise RuntimeError(f"docker run --runtime={runtime} exited {r.returncode}: "
                           f"{r.stderr.decode(errors='replace').strip()[-300:]}")
    return ms


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--sentry", default=os.path.join(REPO, "build", "bin", "sentry"))
    p.add_argument("--json", default=os.path.join(REPO, "bench", "results", "docker_startup.json"))
    args = p.parse_args()
    if os.geteuid() != 0:
        print("docker_startup.py: needs root (dockerd)", file=sys.stderr)
        return 2
    busybox = shutil.which("busybox")
    missing = [p for p in ("dockerd", "docker", "runc", "unshare") if shutil.which(p) is None]
    if busybox is None or missing:
        print(f"docker_startup.py: needs docker.io and busybox-static (missing: "
              f"{', '.join(missing) or 'busybox'})", file=sys.stderr)
        return 2
    rts = oci_startup.runtimes(os.path.abspath(args.sentry))
    work = tempfile.mkdtemp(prefix="dbench.", dir="/tmp")  # short: socket paths live here
    dockerd = Dockerd(work, rts)
    try:
        # overlay2 is what a Docker installation uses; vfs (a copy of the image per
        # container) only where overlay mounts are refused.
        driver = next((d for d in ("overlay2", "vfs") if dockerd.start(d)), None)
        if driver is None:
            print(f"docker_startup.py: the private dockerd did not start "
                  f"(see {work}/dockerd.log)", file=sys.stderr)
            work = None  # keep the log
            return 1
        img = image(dockerd, work, busybox)
        docker_times, docker_failed = oci_startup.rounds(
            list(rts), args.runs, lambda name, n: docker_once(dockerd, name, img))
        dockerd.stop()
        bundle_dir = os.path.join(work, "bundle")
        os.makedirs(bundle_dir)
        oci_startup.bundle(bundle_dir, busybox)

        alone_times, alone_failed = oci_startup.rounds(
            list(rts), args.runs, oci_startup.alone(rts, work, bundle_dir))
        med = {k: statistics.median(v) for k, v in docker_times.items() if v}
        alone = {k: statistics.median(v) for k, v in alone_times.items() if v}
        print(f"Start-up, median of {args.runs} rounds (ms); storage driver {driver}")
        print(f"  {'runtime':8s} {'docker run --rm':>16s} {'runtime alone':>14s} "
              f"{'Docker own':>11s}")
        for name in rts:
            d = f"{med[name]:16.1f}" if name in med else f"{'n/a':>16s}"
            a = f"{alone[name]:14.1f}" if name in alone else f"{'n/a':>14s}"
            own = f"{med[name] - alone[name]:11.1f}" if name in med and name in alone else ""
            print(f"  {name:8s} {d} {a} {own}")
        for name, why in list(docker_failed.items()) + list(alone_failed.items()):
            print(f"  {name}: {why}")
        for name in ("runc", "runsc"):
            if "sentry" in med and name in med:
                print(f"  docker run: sentry / {name} = {med['sentry'] / med[name]:.2f}x")
        if "runc" in med and "runc" in alone and "runsc" in med:
            floor = med["runc"] - alone["runc"]
            print(f"  Docker's own work (runc's docker run less runc alone): {floor:.0f} ms; "
                  f"half of runsc's docker run: {med['runsc'] / 2:.0f} ms")
        load = os.getloadavg()[0]
        print(f"  (load average {load:.1f} while measuring)")
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump({"driver": driver, "docker_run": docker_times, "runtime_alone": alone_times,
                       "failed": {"docker_run": docker_failed, "runtime_alone": alone_failed},
                       "load": load}, f, indent=1)
        return 0 if "sentry" in med else 1
    finally:
        dockerd.stop()
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
