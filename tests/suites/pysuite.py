#!/usr/bin/env python3
"""Runs one module of CPython's own regression tests natively and under sentry-run, and compares.

    pysuite.py SENTRY_RUN PLATFORM MODULE EXPECTATIONS_FILE

The tests come from Debian's libpython3.11-testsuite and run with /usr/bin/python3 (the
interpreter that package belongs to), `python3 -m test -v MODULE`, once natively and once as
`SENTRY_RUN --platform=PLATFORM -- /usr/bin/python3 -m test -v MODULE`. Every test case that
passes natively must pass in the sandbox, unless EXPECTATIONS_FILE lists it:

    MODULE  TEST_ID  reason

A listed case that passes is reported (the line should go). Prints the cases compared and the
number of expected failures listed for the module. Exit status 0 iff nothing unexpected
failed; 77 (skip) if the test suite is not installed.
"""

import os
import re
import subprocess
import sys
import tempfile
import threading
import time

PYTHON = "/usr/bin/python3"
# Extra regrtest arguments, for both runs. test_socketserver asks for the `network` resource
# although it only uses loopback. test_socket's AF_VSOCK cases talk to the host's vsock device
# (the sandbox has no AF_VSOCK, so they skip there): natively on this VM they error or hang in
# accept() until the run's timeout, which once cost CI 25 minutes.
RESOURCES = {"test_socketserver": ["-u", "network"], "test_socket": ["-i", "*VSOCK*"]}
TIMEOUT_S = 1500  # the slowest suite (test_concurrent_futures) takes ~11 min under load
# "test_x (test.test_mod.Class.test_x) ... ok", also with a docstring line between.
CASE = re.compile(r"^(test\w*) \(([\w.]+)\)(?:\n.*?)?\s\.\.\.\s(.*)$", re.M)


EXIT_GRACE_S = 120  # after regrtest printed its result, how long the process may take to exit


def run(argv, cwd):
    """Runs argv; returns (output, status). A run that printed regrtest's final result line
    but does not exit within EXIT_GRACE_S is killed and noted, with the host's sentry
    processes, so that a hang at exit shows in the log instead of costing the whole timeout."""
    env = {"PATH": "/usr/bin:/bin", "HOME": cwd, "LANG": "C.UTF-8", "TERM": "dumb"}
    p = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    chunks = []
    finished = threading.Event()

    def reader():
        for line in iter(p.stdout.readline, b""):
            chunks.append(line)
            if line.startswith(b"Tests result:"):
                finished.set()
        finished.set()

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    deadline = time.monotonic() + TIMEOUT_S
    note = ""
    while p.poll() is None:
        if finished.is_set():
            try:
                p.wait(timeout=EXIT_GRACE_S)
            except subprocess.TimeoutExpired:
                ps = subprocess.run(["ps", "-eLo", "pid,tid,stat,wchan:32,comm"],
                                    stdout=subprocess.PIPE).stdout.decode("utf-8", "replace")
                ps = "\n".join(l for l in ps.splitlines() if "sentry" in l or "PID" in l)
                note = ("\n[pysuite: HANG AT EXIT: no exit %d s after the tests finished; "
                        "killed]\n%s\n" % (EXIT_GRACE_S, ps))
            break
        if time.monotonic() > deadline:
            note = "\n[pysuite: timed out after %d s]\n" % TIMEOUT_S
            break
        finished.wait(timeout=1)
    if p.poll() is None:
        p.kill()
    p.wait()
    t.join(timeout=10)
    out = b"".join(chunks).decode("utf-8", "replace") + note
    return out, (p.returncode if not note else -1)


VERDICT = re.compile(r"^(ok|FAIL|ERROR|expected failure|unexpected success|skipped\b.*)$")


def outcomes(text):
    """TEST_ID -> 'pass' | 'fail' | 'skip' for every case in a verbose run."""
    res = {}
    matches = list(CASE.finditer(text))
    for i, m in enumerate(matches):
        name, where, verdict = m.group(1), m.group(2), m.group(3).strip()
        tid = where if where.endswith("." + name) else where + "." + name
        if not VERDICT.match(verdict):
            # Something the test printed (a warning on stderr) came before the verdict: it
            # is the first verdict-shaped line before the next case.
            end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
            for line in text[m.end():end].splitlines():
                if VERDICT.match(line.strip()):
                    verdict = line.strip()
                    break
        if verdict == "ok" or verdict == "expected failure":
            res[tid] = "pass"
        elif verdict.startswith("skipped"):
            res[tid] = "skip"
        else:
            res[tid] = "fail"
    return res


def expectations(path, module):
    listed = {}
    if not os.path.exists(path):
        return listed
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split(None, 2)
            if len(parts) >= 2 and parts[0] == module:
                listed[parts[1]] = parts[2] if len(parts) > 2 else ""
    return listed


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    sentry_run, platform, module, exp_path = sys.argv[1:]
    sentry_run = os.path.abspath(sentry_run)
    # A module may be a package's submodule: test_asyncio.test_streams.
    path = "/usr/lib/python3.11/test/" + module.replace(".", "/")
    if not os.path.exists(path + ".py") and not os.path.isdir(path):
        print("pysuite: %s is not installed (Debian package libpython3.11-testsuite)" % module)
        return 77
    with tempfile.TemporaryDirectory(prefix="pysuite-") as cwd:
        args = ["-m", "test", "-v"] + RESOURCES.get(module, []) + [module]
        native_out, _ = run([PYTHON] + args, cwd)
        sandbox_out, status = run([sentry_run, "--platform=" + platform, "--workspace", cwd, "--",
                                   PYTHON] + args, cwd)
    native, sandbox = outcomes(native_out), outcomes(sandbox_out)
    listed = expectations(exp_path, module)
    unexpected, fixed, compared = [], [], 0
    for tid, verdict in sorted(native.items()):
        if verdict != "pass":
            continue
        compared += 1
        got = sandbox.get(tid, "missing")
        if got == "fail" or got == "missing":
            if tid not in listed:
                unexpected.append((tid, got))
        elif tid in listed and got == "pass":
            fixed.append(tid)
    if "HANG AT EXIT" in sandbox_out:
        print(sandbox_out[sandbox_out.index("[pysuite: HANG AT EXIT"):])
    print("pysuite %s [%s]: %d cases pass natively; %d fail or are missing in the sandbox "
          "unexpectedly; %d expected failures listed" % (module, platform, compared,
                                                         len(unexpected), len(listed)))
    for tid, got in unexpected:
        print("UNEXPECTED %s: %s" % (got, tid))
    for tid in fixed:
        print("NOW PASSES (remove from %s): %s" % (os.path.basename(exp_path), tid))
    if compared == 0:
        print("pysuite: no case of %s passes natively here (it may need a terminal or a "
              "network): nothing to compare" % module)
        return 77
    if unexpected:
        print("--- sandbox output (exit status %d, last 60 lines) ---" % status)
        print("\n".join(sandbox_out.splitlines()[-60:]))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
