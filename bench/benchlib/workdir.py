"""The temporary directory the workloads run in, on a private tmpfs when we can have one.

Both sandboxes put the guest's writes in memory (an in-memory layer over the host's root), so
a workload that writes (git, tar, sqlite3, make) would otherwise be compared against a native
run that pays for the host file system's journal. With a tmpfs under the work directory, every
column writes to memory and the ratio is the sandbox's own cost. The tmpfs is mounted in a
private mount namespace of this process (root only), so it is invisible to the rest of the
machine and vanishes with the process. runsc's gofer, started from here, sees it through the
host root it serves; sentry-run's gofer serves no tmpfs below the root it was given, so the
runner binds the directory for sentry-run when `mounted` (columns.SentryRun.binds).
"""

import ctypes
import os
import subprocess
import tempfile

CLONE_NEWNS = 0x00020000


def _private_tmpfs(path):
    """Mounts a tmpfs on path in a new private mount namespace; returns why not, or None."""
    if os.geteuid() != 0:
        return "not root"
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNS) != 0:
        return f"unshare: {os.strerror(ctypes.get_errno())}"
    for argv in (["mount", "--make-rprivate", "/"],
                 ["mount", "-t", "tmpfs", "-o", "mode=0755", "sentry-bench", path]):
        proc = subprocess.run(argv, capture_output=True, text=True)
        if proc.returncode != 0:
            return f"{' '.join(argv[:2])}: {proc.stderr.strip()}"
    return None


class WorkDir:
    """A context manager: a fresh temporary directory (on tmpfs if possible). `fs` says which."""

    def __enter__(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="sentry-bench-")
        self.path = self._tmp.name
        why_not = _private_tmpfs(self.path)
        self.mounted = why_not is None
        self.fs = "tmpfs (private mount namespace)" if why_not is None else \
            f"host file system ({why_not})"
        return self

    def __exit__(self, *exc):
        if self.mounted:
            subprocess.run(["umount", "--lazy", self.path], check=False)
        self._tmp.cleanup()
        return False
