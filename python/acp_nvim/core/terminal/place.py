"""Where a terminal runs: a folder named by its real path and its identity, checked again at the start.

The identity (``st_dev``, ``st_ino``) is taken with a walk from ``/`` that follows no symlink
(``O_DIRECTORY|O_NOFOLLOW`` relative to the parent's descriptor), when the question about the
command is shown. The command starts through ``CHECK`` (``launch_argv``): a ``/bin/sh`` one-liner
that enters the folder, compares ``stat .`` with that identity and only then ``exec``s the argv;
on a mismatch it prints why and exits 126 without running anything. A folder swapped for a symlink
or another folder between the answer and the start is never run in.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

NOT_RUN = 126
CHECK = ('cd -P -- "$1" 2>/dev/null || { printf "acp.nvim: cannot enter %s: not run\\n" "$1" >&2; exit 126; }; '
         'id=$(command -p stat -L -c %d:%i . 2>/dev/null || command -p stat -L -f %d:%i . 2>/dev/null); '
         '[ "$id" = "$2" ] || { printf "acp.nvim: %s is not the folder that was approved (%s, not %s): '
         'not run\\n" "$1" "$id" "$2" >&2; exit 126; }; shift 2; exec "$@"')
"""``sh -c CHECK acp.nvim FOLDER DEV:INO ARGV…``: run ARGV in FOLDER only if FOLDER is still that folder."""


@dataclass(frozen=True, slots=True)
class Place:
    """A folder as it was when the question was shown: its real path and its identity."""

    path: str
    dev: int
    ino: int

    @property
    def identity(self) -> str:
        return f"{self.dev}:{self.ino}"


def identify(path: str) -> Place:
    """The real path of ``path`` and the identity of the folder there, found without following a symlink
    after ``realpath`` (OSError when a part of it is a symlink by then, or not a folder)."""
    real = os.path.realpath(path)
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fd = os.open("/", flags)
    try:
        for part in [p for p in real.split("/") if p]:
            child = os.open(part, flags, dir_fd=fd)
            os.close(fd)
            fd = child
        info = os.fstat(fd)
    finally:
        os.close(fd)
    return Place(real, info.st_dev, info.st_ino)


def launch_argv(command: str, args: tuple[str, ...], cwd: str, identity: str) -> list[str]:
    """The argv the editor starts: the command behind the check that ``cwd`` is the folder ``identity``
    (``dev:ino``); without an identity, the command alone."""
    if not identity:
        return [command, *args]
    return ["/bin/sh", "-c", CHECK, "acp.nvim", cwd, identity, command, *args]
