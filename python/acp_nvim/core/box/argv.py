"""(argv, cwd, box) to the argv that runs it boxed: ``bwrap … -- argv``."""

from __future__ import annotations

import os
from collections.abc import Sequence

from .spec import SYSTEM, Box, Shown

NAMESPACES = ("--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try")
"""A fresh /proc of the box's own processes; the network is shared (the agent's model API)."""


def wrap(bwrap: str, argv: Sequence[str], cwd: str, box: Box) -> list[str]:
    """``argv`` run in ``cwd`` inside ``box``: only the box's environment, a private ``/tmp``, a fresh
    ``/proc`` and a minimal ``/dev``; the process dies with its parent."""
    out = [bwrap, "--die-with-parent", *NAMESPACES]
    for top in SYSTEM:
        if os.path.islink(top):
            out += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            out += ["--ro-bind", top, top]
    out += _resolver()
    out += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    if box.home and box.home != "/":
        out += ["--tmpfs", box.home]
    for item in sorted(box.visible(), key=lambda shown: shown.path.count("/")):
        out += _bind(item)
    out += ["--chdir", cwd, "--clearenv"]
    for name, value in box.env.items():
        out += ["--setenv", name, value]
    return [*out, "--", *argv]


def _bind(item: Shown) -> list[str]:
    """A folder or file at its own path; one that does not exist is left out (``-try``)."""
    if item.path in SYSTEM or item.path == "/":
        return []
    return ["--bind-try" if item.write else "--ro-bind-try", item.path, item.path]


def _resolver() -> list[str]:
    """``/etc/resolv.conf`` is often a symlink out of ``/etc`` (systemd-resolved): its folder, read-only."""
    if not os.path.islink("/etc/resolv.conf"):
        return []
    folder = os.path.dirname(os.path.realpath("/etc/resolv.conf"))
    return ["--ro-bind-try", folder, folder] if not folder.startswith("/etc") else []
