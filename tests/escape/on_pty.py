#!/usr/bin/env python3
"""Runs a command on a fresh pty, as its controlling terminal, the way a user's shell would.

  on_pty.py COMMAND [ARGS...]

Prints what the command wrote to the terminal. Once the command has exited, prints
`pending input: N`, the bytes left in the terminal's input queue (what TIOCSTI or a paste
would have pushed for the user's shell to read next), and exits with the command's status
(128+N for a signal).
"""
import fcntl
import os
import select
import struct
import sys
import termios


def main():
    if len(sys.argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    master, slave = os.openpty()
    pid = os.fork()
    if pid == 0:
        os.close(master)
        os.setsid()
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
        for fd in (0, 1, 2):
            os.dup2(slave, fd)
        if slave > 2:
            os.close(slave)
        os.execvp(sys.argv[1], sys.argv[1:])
    out = b""
    status = None
    while status is None:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                out += os.read(master, 65536)
            except OSError:
                pass
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            status = st
    while select.select([master], [], [], 0.2)[0]:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    pending = struct.unpack("i", fcntl.ioctl(slave, termios.FIONREAD, b"\0\0\0\0"))[0]
    sys.stdout.write(out.decode(errors="replace").replace("\r\n", "\n"))
    print("pending input: %d" % pending)
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


if __name__ == "__main__":
    sys.exit(main())
