#!/usr/bin/env python3
"""Types ^C into a command's terminal once the command has printed "ready".

  interrupt_on_pty.py COMMAND [ARGS...]

Runs COMMAND on a fresh pty (its controlling terminal, as a user's shell would), writes the
interrupt character once "ready" appears in its output, and prints everything it wrote
(without carriage returns) and then `rc=N`, its exit status. Gives up after 40 s.
"""
import os
import pty
import select
import sys
import time


def main():
    if len(sys.argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    pid, master = pty.fork()
    if pid == 0:
        os.execvp(sys.argv[1], sys.argv[1:])
    out = b""
    sent = False
    deadline = time.monotonic() + 40
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                data = os.read(master, 4096)
            except OSError:  # EIO: the terminal's last user is gone
                break
            if not data:
                break
            out += data
        if not sent and b"ready" in out:
            time.sleep(0.3)  # the guest is in its wait, not between echo and wait
            os.write(master, b"\x03")
            sent = True
    if time.monotonic() >= deadline:
        os.kill(pid, 9)
    _, status = os.waitpid(pid, 0)
    sys.stdout.write(out.decode(errors="replace").replace("\r", ""))
    print(f"rc={os.waitstatus_to_exitcode(status)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
