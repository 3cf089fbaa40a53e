"""What a command runs when its approval was bound to a script's content: a private copy of exactly
the bytes that were hashed, never the workspace path the agent can change after the check.

The rule (or the "always" answer) read the script once and hashed those bytes. ``ApprovedCopies.make``
writes them to a fresh folder of acp.nvim's own (mode 0700, under ``$XDG_RUNTIME_DIR`` or the system's
temporary folder, never inside a workspace root, never on a ``noexec`` mount), one file per script, mode
0500, under its own name (``build.sh``, ``x.py``: an interpreter that reads the extension sees it). The
command runs that file in place of the script's path; in the agent's box the folder is shown read-only
(``in_box``) and nothing else of acp.nvim's is. The folder is removed when the terminal ends or is
released. A copy is not bound over the script's path: a rename over that path in the agent's own mount
namespace would lift such a bind before the command opened it.
"""

from __future__ import annotations

import os
import shlex
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..box.command import with_binds
from .place import Place

PREFIX = "acp.nvim-approved-"
FOLDER_MODE = 0o700
COPY_MODE = 0o500
"""Read and run by the user only; nobody writes it (the folder is the user's: it is removed whole)."""


class CopyError(OSError):
    """No private copy of an approved script could be made: the command is not run."""


@dataclass(frozen=True, slots=True)
class Approved:
    """One script's approved bytes (None: it did not exist when approved) and the argv word it replaces."""

    index: int
    name: str
    data: bytes | None


@dataclass(slots=True)
class ApprovedCopies:
    """The private folder of one command's approved scripts; ``remove`` deletes it (idempotent)."""

    folder: str
    paths: dict[int, str] = field(default_factory=dict)
    """argv index -> the path the command runs instead of the word there."""

    @classmethod
    def make(cls, scripts: Sequence[Approved], avoid: Callable[[str], bool] = lambda path: False) -> ApprovedCopies:
        """Write each script's bytes to a new private folder (blocking). ``avoid``: folders a copy must
        not be under (the workspace roots: the agent writes there). CopyError when none can be made."""
        folder = tempfile.mkdtemp(prefix=PREFIX, dir=_root(avoid))
        copies = cls(folder)
        try:
            os.chmod(folder, FOLDER_MODE)
            for number, script in enumerate(scripts):
                place = os.path.join(folder, str(number))
                os.mkdir(place, FOLDER_MODE)
                path = os.path.join(place, _safe_name(script.name))
                copies.paths[script.index] = path
                if script.data is not None:  # approved while missing: the copy is missing too
                    _write(path, script.data)
        except OSError as exc:
            copies.remove()
            raise CopyError(f"cannot keep a private copy of the approved script: {exc}") from None
        return copies

    def argv(self, argv: Sequence[str]) -> list[str]:
        """``argv`` with each approved script's word replaced by its copy's path."""
        return [self.paths.get(index, word) for index, word in enumerate(argv)]

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


@dataclass(frozen=True, slots=True)
class Grant:
    """What the gate allows a terminal: the folder it runs in, and what runs when a script's content was
    approved (``argv``: the command's words with ``scripts`` to be replaced by their copies)."""

    place: Place
    scripts: tuple[Approved, ...] = ()
    words: tuple[str, ...] = ()
    """The command's words (``scripts`` index into them); () when no script's content is bound."""
    shell: tuple[str, ...] = ()
    """``sh -c`` / ``bash -lc`` when the agent ran the words as that shell's script."""

    def argv(self, copies: ApprovedCopies) -> list[str]:
        """What runs: the words with each approved script replaced by its copy (in the same shell)."""
        words = copies.argv(self.words)
        return [*self.shell, shlex.join(words)] if self.shell else words


def in_box(prefix: Sequence[str], folder: str) -> tuple[str, ...]:
    """A box prefix (``bwrap … --``) that also shows ``folder`` read-only; () stays () (unboxed)."""
    if not prefix:
        return ()
    try:
        return tuple(with_binds(prefix, ["--ro-bind", folder, folder]))
    except ValueError as exc:
        raise CopyError(f"{exc}: cannot show the approved copy in it") from exc


def _root(avoid: Callable[[str], bool]) -> str:
    """The first folder of the user's own, not inside a workspace, whose mount runs programs."""
    candidates = [os.environ.get("XDG_RUNTIME_DIR", ""), tempfile.gettempdir(),
                  os.path.join(os.path.expanduser("~"), ".cache")]
    for candidate in candidates:
        if not candidate or not os.path.isabs(candidate) or not os.path.isdir(candidate):
            continue
        real = os.path.realpath(candidate)
        if avoid(real) or _noexec(real):
            continue
        return real
    raise CopyError("no folder outside the workspace can hold a runnable private copy "
                    f"(tried {', '.join(c for c in candidates if c)})")


def _noexec(folder: str) -> bool:
    try:
        return bool(os.statvfs(folder).f_flag & getattr(os, "ST_NOEXEC", 8))
    except OSError:
        return True


def _safe_name(name: str) -> str:
    base = os.path.basename(name.rstrip("/"))
    return base if base not in ("", ".", "..") else "script"


def _write(path: str, data: bytes) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags, 0o600)
    try:
        with os.fdopen(fd, "wb", closefd=False) as file:
            file.write(data)
        os.fchmod(fd, COPY_MODE)
    finally:
        os.close(fd)
