"""The warm interpreter: a Python that has already imported the heavy packages and forks a child
for each program a test runs, instead of a cold interpreter importing them again.

Every test Neovim starts a Python host (pynvim, the ACP SDK's pydantic models: about a second of
CPU) and every session a demo agent (the SDK again, half a second); on the suite's 2 cores that
import work was most of the time. The host and the agents still run as programs of their own,
each in a process of its own with the pipes Neovim or the host gave it: ``launcher.py`` (what the
tests name as their Python) hands its standard descriptors, arguments, environment and folder to
this server, which forks; the child runs the program as ``python <args>`` would, and its exit
status goes back to the launcher, which exits with it. Signals sent to the launcher are passed on;
a launcher that dies (SIGKILL) takes its child with it.

Run: ``python -m warm.server SOCKET`` (the tests folder on ``sys.path``), by ``warm.start``.
"""

from __future__ import annotations

import array
import contextlib
import gc
import io
import json
import os
import selectors
import signal
import socket
import struct
import sys
from dataclasses import dataclass, field

HEAVY = (
    "asyncio", "concurrent.futures", "json", "logging", "subprocess", "typing", "dataclasses",
    "greenlet", "msgpack", "pynvim", "pynvim.api", "pynvim.msgpack_rpc", "pynvim.plugin",
    "pydantic", "acp", "acp.schema", "acp.client", "acp.agent", "acp.helpers", "acp.client.connection",
    "acp.agent.connection", "anyio", "orjson",
)
"""Imported once, before any fork: third-party and standard modules only. The plugin's own modules
are imported by each child, as a cold interpreter would: their import-time state is the child's."""

HEADER = struct.Struct("!I")
MAX_FDS = 3


@dataclass
class Child:
    """A forked program and the launcher it answers to."""

    pid: int
    pidfd: int
    conn: socket.socket
    pending: bytes = field(default=b"")


@dataclass
class Program:
    """What the child runs: ``python <argv…>`` in ``cwd`` with ``env`` on the given descriptors."""

    argv: list[str]
    env: dict[str, str]
    cwd: str
    launcher: str
    fds: dict[int, int]
    """Standard descriptor (0, 1, 2) -> the descriptor received for it."""


def preload() -> None:
    for name in HEAVY:
        with contextlib.suppress(ImportError):
            __import__(name)


def receive(conn: socket.socket) -> Program | None:
    """One launcher's request: a length-prefixed JSON header and its descriptors."""
    fds = array.array("i")
    head, ancillary, _flags, _addr = conn.recvmsg(HEADER.size, socket.CMSG_SPACE(MAX_FDS * fds.itemsize))
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[: len(data) - (len(data) % fds.itemsize)])
    if len(head) < HEADER.size:
        for fd in fds:
            os.close(fd)
        return None
    (size,) = HEADER.unpack(head)
    body = b""
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            return None
        body += chunk
    request = json.loads(body)
    return Program(request["argv"], request["env"], request["cwd"], request["launcher"],
                   dict(zip(request["targets"], fds, strict=False)))


class Server:
    """Accepts launchers, forks a child per request, reports exits, passes signals on."""

    def __init__(self, path: str) -> None:
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(64)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ, None)
        self.children: dict[int, Child] = {}

    def serve(self) -> Program:
        """Serve until a fork: in the child, return the program it is to run."""
        while True:
            for key, _events in self.selector.select():
                if key.data is None:
                    program = self._accept()
                    if program is not None:
                        return program
                elif isinstance(key.data, tuple) and key.data[0] == "exit":
                    self._reap(key.data[1])
                else:
                    self._from_launcher(key.data)

    def _accept(self) -> Program | None:
        conn, _ = self.listener.accept()
        try:
            program = receive(conn)
        except (OSError, ValueError):
            program = None
        if program is None:
            conn.close()
            return None
        pid = os.fork()
        if pid == 0:
            self._leave(conn)
            return program
        for fd in program.fds.values():
            os.close(fd)
        child = Child(pid, os.pidfd_open(pid), conn)
        self.children[pid] = child
        self.selector.register(child.pidfd, selectors.EVENT_READ, ("exit", pid))
        self.selector.register(conn, selectors.EVENT_READ, child)
        with contextlib.suppress(OSError):
            conn.sendall(f"P {pid}\n".encode())
        return None

    def _leave(self, conn: socket.socket) -> None:
        """In the child: nothing of the server stays open."""
        self.selector.close()
        self.listener.close()
        for child in self.children.values():
            os.close(child.pidfd)
            child.conn.close()
        conn.close()

    def _from_launcher(self, child: Child) -> None:
        try:
            data = child.conn.recv(256)
        except OSError:
            data = b""
        if not data:  # the launcher is gone (killed): its program goes too
            self._kill(child, signal.SIGKILL)
            self.selector.unregister(child.conn)
            return
        child.pending += data
        *lines, child.pending = child.pending.split(b"\n")
        for line in lines:
            if line.startswith(b"S "):
                self._kill(child, int(line[2:]))

    @staticmethod
    def _kill(child: Child, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(child.pid, signum)

    def _reap(self, pid: int) -> None:
        child = self.children.pop(pid)
        _, status = os.waitpid(pid, 0)
        self.selector.unregister(child.pidfd)
        os.close(child.pidfd)
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(child.conn)
        with contextlib.suppress(OSError):
            child.conn.sendall(f"X {status}\n".encode())
        child.conn.close()


def become(program: Program, base_path: list[str]) -> list[str]:
    """Turn this forked child into the program's process; the argv left for ``run``."""
    os.setsid()
    for target in (0, 1, 2):
        fd = program.fds.get(target)
        if fd is None:
            os.close(target) if _is_open(target) else None
        elif fd != target:
            os.dup2(fd, target)
            os.close(fd)
    for signum in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.chdir(program.cwd)
    os.environ.clear()
    os.environ.update(program.env)
    sys.executable = program.launcher
    extra = [p for p in program.env.get("PYTHONPATH", "").split(os.pathsep) if p]
    sys.path[:] = ["", *extra, *base_path]
    _fresh_stdio(program.env)
    return program.argv


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def _fresh_stdio(env: dict[str, str]) -> None:
    """Standard streams as a cold interpreter would open them on these descriptors."""
    unbuffered = bool(env.get("PYTHONUNBUFFERED"))
    for fd, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
        try:
            raw = io.FileIO(fd, mode, closefd=False)
        except OSError:
            setattr(sys, name, None)
            continue
        tty = raw.isatty()
        buffer = io.BufferedReader(raw) if mode == "r" else io.BufferedWriter(raw)
        stream = io.TextIOWrapper(buffer, encoding="utf-8", errors="backslashreplace" if fd == 2 else "strict",
                                  line_buffering=tty or fd == 2, write_through=unbuffered or fd == 2)
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def run(argv: list[str]) -> None:
    """``python <argv…>``: ``-c code``, ``-m module`` or a script."""
    import runpy

    if argv[:1] == ["-c"] and len(argv) > 1:
        sys.argv = ["-c", *argv[2:]]
        exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
    elif argv[:1] == ["-m"] and len(argv) > 1:
        sys.argv = [argv[1], *argv[2:]]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    elif argv:
        sys.argv = list(argv)
        sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
        runpy.run_path(argv[0], run_name="__main__")


def exit_code(exc: BaseException | None) -> int:
    """The status a cold interpreter exits with after the program ended this way."""
    if exc is None:
        return 0
    if isinstance(exc, SystemExit):
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    sys.excepthook(type(exc), exc, exc.__traceback__)
    return 1


def leave(code: int) -> None:
    """Exit as a cold interpreter does (threads joined, atexit run, files flushed) without its
    teardown of every module object, which costs the preloaded packages' size again."""
    import atexit
    import threading

    with contextlib.suppress(Exception):
        threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    for obj in gc.get_objects():
        if isinstance(obj, io.BufferedWriter | io.TextIOWrapper | io.BufferedRandom):
            with contextlib.suppress(Exception):
                obj.flush()
    os._exit(code)


def main() -> None:
    base_path = [p for p in sys.path[1:] if p]
    preload()
    gc.freeze()  # the preloaded objects are never collected: children do not copy their pages to scan them
    server = Server(sys.argv[1])
    print("ready", flush=True)
    program = server.serve()
    del server
    argv = become(program, base_path)
    try:
        run(argv)
    except BaseException as exc:
        leave(exit_code(exc))
    leave(0)


if __name__ == "__main__":
    main()
