"""What a box shows: the workspace roots (read-write), the system's read-only folders, the program's
own install, the agent's state folders, the folders its config adds, an empty HOME; its environment
is only what the agent's config passes, over a minimal one."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")
"""Read-only in every box (a symlink there, such as ``/bin -> usr/bin``, stays a symlink)."""
MINIMAL_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "USER", "LOGNAME", "TZ")
"""The editor's variables every boxed process gets (when set); the agent's config adds the rest."""
DEFAULT_TERM = "xterm-256color"
_VAR = re.compile(r"\$(\w+)|\$\{(\w+)\}")


@dataclass(frozen=True, slots=True)
class Shown:
    """A folder (or file) of the user's shown in the box, at its own path."""

    path: str
    write: bool = False


@dataclass(frozen=True, slots=True)
class Box:
    """Everything one boxed process sees besides the system: ``argv.wrap`` turns it into bwrap's argv."""

    roots: tuple[str, ...]
    """Workspace roots, read-write."""
    shown: tuple[Shown, ...] = ()
    home: str = ""
    """The process's HOME: an empty folder of the box's own (the state folders are shown inside it)."""
    env: Mapping[str, str] = field(default_factory=dict)
    """The whole environment of the boxed process."""

    def visible(self) -> list[Shown]:
        """Every folder shown, the roots included, with a symlinked path shown at its real path too."""
        seen: dict[str, Shown] = {}
        for item in [*(Shown(root, True) for root in self.roots), *self.shown]:
            for path in dict.fromkeys([os.path.abspath(item.path), os.path.realpath(item.path)]):
                old = seen.get(path)
                seen[path] = Shown(path, item.write or (old is not None and old.write))
        return list(seen.values())


def environment(editor_env: Mapping[str, str], agent_env: Mapping[str, str],
                passed: Iterable[str] = ()) -> dict[str, str]:
    """The minimal variables of the editor, those ``passed`` by name, then the agent's config over them."""
    env = {name: editor_env[name] for name in [*MINIMAL_ENV, *passed] if name in editor_env}
    env.setdefault("PATH", os.defpath)
    env.setdefault("TERM", DEFAULT_TERM)
    env.update(agent_env)
    return env


def expand(path: str, env: Mapping[str, str]) -> str | None:
    """``~`` and ``$VAR`` of ``path`` read in the box's ``env``; None when a variable is unset or the
    result is not absolute."""
    missing = False

    def var(match: re.Match[str]) -> str:
        nonlocal missing
        name = match.group(1) or match.group(2)
        if name not in env:
            missing = True
            return ""
        return env[name]

    if path == "~" or path.startswith("~/"):
        if "HOME" not in env:
            return None
        path = env["HOME"] + path[1:]
    path = _VAR.sub(var, path)
    if missing or not os.path.isabs(path):
        return None
    return os.path.normpath(path)


def resolve_program(command: str, env: Mapping[str, str], cwd: str) -> str:
    """The program ``command`` names, looked up on the box's PATH (the command itself when not found)."""
    if "/" in command:
        return os.path.normpath(os.path.join(cwd, command))
    return shutil.which(command, path=env.get("PATH", os.defpath)) or command


def install_folders(program: str) -> list[str]:
    """The folders a program needs to run from: for its path and its real path, the folder that holds
    its ``node_modules``, or its virtual environment (and what that environment's ``.pth`` files add),
    else its own folder. Nothing for a program of the system's folders."""
    folders: list[str] = []
    for path in dict.fromkeys([program, os.path.realpath(program)]):
        if not os.path.isabs(path) or _in_system(path):
            continue
        folders.append(_install_root(Path(path)))
    for folder in list(folders):
        folders += _venv_paths(Path(folder))
    return list(dict.fromkeys(folders))


def named_files(args: Iterable[str]) -> list[str]:
    """The arguments that are absolute paths of existing files or folders (a script, a config); one that
    lies in a package install (``node_modules``, a virtual environment) brings that install, which its
    code loads its dependencies from (``node …/node_modules/pkg/dist/index.js``)."""
    found: list[str] = []
    for arg in args:
        if not os.path.isabs(arg) or not os.path.exists(arg) or _in_system(arg):
            continue
        found.append(arg)
        for path in dict.fromkeys([arg, os.path.realpath(arg)]):
            root = _package_root(Path(path))
            if root is not None:
                found += [root, *_venv_paths(Path(root))]
    return list(dict.fromkeys(found))


def _package_root(path: Path) -> str | None:
    """The folder holding the ``node_modules`` that ``path`` lies in, or its virtual environment; None."""
    for parent in path.parents:
        if parent.name == "node_modules":
            return str(parent.parent)
        if (parent / "pyvenv.cfg").is_file():
            return str(parent)
    return None


def _install_root(path: Path) -> str:
    root = _package_root(path)
    if root is not None:
        return root
    if path.parent.name == "bin" and (path.parent.parent / "lib").is_dir() and not _shared_prefix(path.parent.parent):
        return str(path.parent.parent)  # an installation prefix (its lib/ beside bin/)
    return str(path.parent)


def _shared_prefix(prefix: Path) -> bool:
    """A prefix many programs share, whose data folder is the user's (``~/.local``)."""
    return prefix == Path.home() / ".local" or prefix == Path.home()


def _venv_paths(folder: Path) -> list[str]:
    """Absolute folders named by the ``.pth`` files of a virtual environment (editable installs)."""
    if not (folder / "pyvenv.cfg").is_file():
        return []
    found: list[str] = []
    for pth in folder.glob("lib*/python*/site-packages/*.pth"):
        try:
            lines = pth.read_text(errors="replace").splitlines()
        except OSError:
            continue
        found += [line.strip() for line in lines
                  if line.strip().startswith("/") and os.path.isdir(line.strip())]
    return found


def _in_system(path: str) -> bool:
    return any(path == top or path.startswith(top + "/") for top in SYSTEM)
