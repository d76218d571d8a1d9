#!/usr/bin/env python3
"""sentry-run on a terminal: an interactive bash driven through a real pty, natively and
under sentry-run; the bytes that come back must be the same. Covers the terminal the guest
gets (tty, ps's TTY column, stty size, window size changes with SIGWINCH), ^C reaching the
foreground job and not the sandbox, ^Z and job control (jobs, fg), line editing (backspace), and the exit status.

    terminal.py SENTRY_RUN [PLATFORM]
"""
import os
import pty
import re
import select
import struct
import sys
import time
import fcntl
import termios

# What is typed, in order: bytes, a pause in seconds, or ("resize", rows, cols). A line that
# is not followed by a pause is followed by the shell's next prompt before anything else is
# typed (else, on a loaded machine, the next line is echoed before the command's output).
SESSION = [
    b"stty size; tty\r",
    b"ps -o tty= -p $$\r",
    ("resize", 40, 120),
    b"stty size\r",
    b"sleep 30\r", 1.0, b"\x03", 0.5,
    b"echo after-ctrl-c $?\r",
    b"sleep 30\r", 1.0, b"\x1a", 0.5,
    b"jobs\r",
    b"fg\r", 1.0, b"\x03", 0.5,
    b"echo after-fg $?\r",
    b"echo typo\x7f\x7f\x7fpo-fixed\r",
    b"exit 3\r",
]


# bash's prompt (root's or a user's) at the end of what came back: the shell waits for a line.
PROMPT = re.compile(rb"[#$] $")


def run(argv):
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["TERM"] = "dumb"
        os.execvp(argv[0], argv)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    out = b""
    pending = list(SESSION)
    next_at = time.time() + 1.0
    prompt_after = None  # wait for a prompt in out[prompt_after:] before the next item
    deadline = time.time() + 60
    while time.time() < deadline:
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                data = os.read(fd, 4096)
            except OSError:
                break
            if not data:
                break
            out += data
        if prompt_after is not None:
            if PROMPT.search(out[prompt_after:]) is None and time.time() < next_at + 15:
                continue
            prompt_after = None
        if pending and time.time() >= next_at:
            item = pending.pop(0)
            if isinstance(item, float):
                next_at = time.time() + item
                continue
            if isinstance(item, tuple):
                fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", item[1], item[2], 0, 0))
            else:
                os.write(fd, item)
                if item.endswith(b"\r") and pending and not isinstance(pending[0], float):
                    prompt_after = len(out)
            next_at = time.time() + 0.4
    else:
        os.kill(pid, 9)
        out += b"\n[TIMEOUT]"
    _, status = os.waitpid(pid, 0)
    text = out.decode(errors="replace")
    # The pty's number differs between the two runs; so may the job's pid.
    text = re.sub(r"pts/\d+", "pts/N", text)
    return text, os.waitstatus_to_exitcode(status)


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    sentry_run = sys.argv[1]
    platform = sys.argv[2] if len(sys.argv) == 3 else "seccomp"
    bash = ["bash", "--norc", "--noprofile", "-i"]
    native = run(bash)
    sandboxed = run([sentry_run, f"--platform={platform}", "--"] + bash)
    print("native:   ", repr(native))
    print("sandboxed:", repr(sandboxed))
    if native != sandboxed:
        print("FAIL: the terminal session differs from native")
        return 1
    if native[1] != 3 or "40 120" not in native[0]:
        print("FAIL: the native session did not go as planned; cannot compare")
        return 77
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
