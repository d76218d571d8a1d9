"""The columns of the benchmark table: where a command runs.

A column wraps a guest command (an argv and a working directory) into the host command that
runs it: as is (native), under `sentry-run --platform=P`, or under `runsc do`. Each column is
probed once with `true` before the benchmarks; a column whose probe fails, or whose tool is
absent, is reported as "n/a" with the reason and is not run.

Every column gives the command the same clean environment (the one sentry-run gives its
guest), stdin from /dev/null, and the same working directory. Both sandboxes see the host's
root read-only under an in-memory layer that takes the guest's writes (sentry-run's default
root; `runsc do` always does this), so a sandboxed workload's writes never reach the host.
One exception: sentry-run's gofer never serves a tmpfs mounted below the root, so when the
work directory is the runner's private tmpfs (workdir.py), sentry-run gets it as a read-write
bind (`binds`) and the guest's writes there go through the gofer to that tmpfs.
"""

import json
import os
import shutil
import subprocess
import tempfile

# What sentry-run gives its guest (README, "sentry-run"); the native runs get the same.
GUEST_ENV = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "HOME": "/root",
    "LANG": "C.UTF-8",
}

PROBE_TIMEOUT_S = 60


class Column:
    """Runs guest commands one way. Subclasses define `name` and `wrap`."""

    name = ""
    # Why the column cannot run here, or None. Set by probe().
    unavailable = None

    def wrap(self, argv, cwd):
        """Returns the host argv that runs guest `argv` with working directory `cwd`."""
        raise NotImplementedError

    def missing(self):
        """Returns why the column's tool is absent, or None."""
        return None

    def probe(self):
        """Runs `true` once; records in self.unavailable why the column cannot be used."""
        self.unavailable = self.missing()
        if self.unavailable:
            return
        try:
            proc = subprocess.run(self.wrap(["/bin/true"], "/"), cwd="/", env=GUEST_ENV,
                                  stdin=subprocess.DEVNULL, capture_output=True,
                                  timeout=PROBE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.unavailable = f"`true` did not finish in {PROBE_TIMEOUT_S} s"
            return
        except OSError as e:
            self.unavailable = f"cannot start: {e}"
            return
        if proc.returncode != 0:
            last = proc.stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
            self.unavailable = f"`true` exited {proc.returncode}: {last[0]}"


class Native(Column):
    name = "native"

    def wrap(self, argv, cwd):
        return list(argv)


class SentryRun(Column):
    def __init__(self, sentry_run, platform, audited=False, file_access=None, baseline=False):
        self.sentry_run = sentry_run
        self.platform = platform
        self.name = f"sentry {platform}" + (" +policy+audit" if audited else "")
        if file_access:
            self.name += f" {file_access}"
        # A column of the --baseline-build: another build's sentry-run, run with the same
        # bench programs and inputs. `twin` is set on the current column it is compared with.
        self.is_baseline = baseline
        self.twin = None
        if baseline:
            self.name = f"baseline {platform}"
        self.binds = []  # host directories bound read-write at the same path
        # The agent set-up of issue 12: a policy file (read, validated, globs expanded at
        # start-up) and the audit trail on (its JSON lines written, here to /dev/null).
        self.extra = []
        if audited:
            fd, policy = tempfile.mkstemp(prefix="bench-policy.", suffix=".json")
            with os.fdopen(fd, "w") as f:
                json.dump({"filesystem": {"denyRead": ["~/.ssh", "~/.aws", "/etc/shadow"],
                                          "denyWrite": [".git/hooks"]},
                           "limits": {"pids": 4096}}, f)
            self.extra = [f"--policy={policy}", "--audit=/dev/null"]
        # --file-access=gofer: every file operation a request to the gofer (the default is
        # direct), to measure what direct file access saves.
        if file_access:
            self.extra.append(f"--file-access={file_access}")

    def missing(self):
        if not os.access(self.sentry_run, os.X_OK):
            return f"{self.sentry_run} is not built"
        return None

    def wrap(self, argv, cwd):
        binds = [f"--bind={d}:{d}" for d in self.binds]
        return ([self.sentry_run, f"--platform={self.platform}"] + self.extra + binds +
                ["--cwd", cwd, "--"] + list(argv))


class Runsc(Column):
    """gVisor's `runsc do`, ptrace platform, no network. Needs root. Starts in the caller's
    working directory, so the runner sets cwd instead of passing a flag."""

    name = "runsc ptrace"

    def __init__(self):
        self.runsc = shutil.which("runsc") or shutil.which("runsc", path="/usr/sbin:/usr/bin")

    def missing(self):
        if self.runsc is None:
            return "runsc is not installed (apt-get install runsc)"
        if os.geteuid() != 0:
            return "runsc do needs root"
        return None

    def wrap(self, argv, cwd):
        return [self.runsc, "--platform=ptrace", "--network=none", "do"] + list(argv)


def all_columns(sentry_run, with_runsc=True, with_audit=False, with_gofer=False,
                baseline_run=None):
    """The columns in the order each round runs them. With baseline_run (another build's
    sentry-run), each platform's baseline column runs right after the current one, so the two
    of a pair share the same moment of the machine."""
    columns = [Native()]
    for platform in ("ptrace", "seccomp"):
        current = SentryRun(sentry_run, platform)
        columns.append(current)
        if baseline_run:
            current.twin = SentryRun(baseline_run, platform, baseline=True)
            columns.append(current.twin)
    if with_audit:
        columns.append(SentryRun(sentry_run, "seccomp", audited=True))
    if with_gofer:
        columns.append(SentryRun(sentry_run, "seccomp", file_access="gofer"))
    if with_runsc:
        columns.append(Runsc())
    return columns


def round_order(cols, rep):
    """The columns in the order round `rep` runs them: as listed, except that every other
    round runs a baseline column before its twin, so neither side of a pair always comes
    first (after native, or after the other build)."""
    order = list(cols)
    if rep % 2:
        for i in range(len(order) - 1):
            if getattr(order[i], "twin", None) is order[i + 1]:
                order[i], order[i + 1] = order[i + 1], order[i]
    return order

