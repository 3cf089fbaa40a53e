"""What tests name as their Python: hands this process's program to the warm server (``server.py``)
and exits as that program exits. Standard library only, started with ``-SE``: it must cost a few
milliseconds. When no server answers, it runs the program in the real interpreter instead.

``warm.start`` writes a copy of this file with ``SOCKET``, ``REAL`` and ``SELF`` filled in.
"""

import array
import json
import os
import signal
import socket
import struct
import sys

SOCKET = "{socket}"
REAL = "{real}"
SELF = "{self}"
PASSED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)


def cold() -> None:
    os.execv(REAL, [REAL, *sys.argv[1:]])


def main() -> None:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(SOCKET)
    except OSError:
        cold()
    fds = [fd for fd in (0, 1, 2) if _open(fd)]
    body = json.dumps({"argv": sys.argv[1:], "env": dict(os.environ), "cwd": os.getcwd(), "launcher": SELF,
                       "targets": fds}).encode()
    conn.sendmsg([struct.pack("!I", len(body))], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
    conn.sendall(body)
    for signum in PASSED:
        signal.signal(signum, lambda signum, _frame: conn.sendall(f"S {signum}\n".encode()))
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in fds:  # the child holds them now: their end-of-file is the child's alone
        os.dup2(devnull, fd)
    status = _wait(conn)
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


def _open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def _wait(conn: socket.socket) -> int:
    """The child's wait status, from the server's ``X <status>`` line."""
    pending = b""
    while True:
        try:
            data = conn.recv(256)
        except InterruptedError:
            continue
        if not data:
            return 1 << 8  # the server is gone: the program's fate is unknown
        pending += data
        for line in pending.split(b"\n"):
            if line.startswith(b"X "):
                return int(line[2:])


if __name__ == "__main__":
    main()
