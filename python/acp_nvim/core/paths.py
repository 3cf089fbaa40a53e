"""Workspace confinement: which paths an agent may read or write."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from acp import RequestError


class PathPolicy:
    """Allows absolute paths that resolve (symlinks included) inside one of the roots."""

    def __init__(self, roots: list[str]) -> None:
        self.roots = [Path(os.path.realpath(r)) for r in roots]

    def check(self, path: str) -> Path:
        """Return the resolved path, or raise a JSON-RPC error saying why it is refused."""
        if not os.path.isabs(path):
            raise RequestError.invalid_params({"path": path, "reason": "path must be absolute"})
        resolved = Path(os.path.realpath(path))
        if not any(resolved == root or root in resolved.parents for root in self.roots):
            roots = ", ".join(str(r) for r in self.roots)
            raise RequestError.invalid_params(
                {"path": path, "reason": f"outside the workspace roots ({roots})"}
            )
        if resolved.exists() and not (resolved.is_file() or resolved.is_dir()):
            raise RequestError.invalid_params({"path": path, "reason": "not a regular file"})
        if resolved.exists() and stat.S_ISDIR(resolved.stat().st_mode):
            raise RequestError.invalid_params({"path": path, "reason": "is a directory"})
        return resolved
