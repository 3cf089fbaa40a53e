"""Paths as people read them: relative inside the workspace roots, ``~`` under the home folder.

The chat, prompt and review titles show paths this way (Zed's ``src/main.py``); the log, a block's
full text (``<CR>``) and everything sent to the agent keep them whole.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence


class PathView:
    """Shows paths below ``roots`` relative to the deepest root that holds them (the first root, the
    cwd, under any of its spellings: bare; a path below another root starts with that root's name),
    and paths below ``home`` with ``~``."""

    def __init__(self, roots: Sequence[str] = (), home: str | None = None) -> None:
        self._roots = [os.path.normpath(r) for r in dict.fromkeys(roots) if os.path.isabs(r)]
        self._home = os.path.normpath(home) if home and os.path.isabs(home) and home != "/" else None
        first = os.path.realpath(self._roots[0]) if self._roots else None
        prefixes = [(root, "" if os.path.realpath(root) == first else os.path.basename(root) + "/")
                    for root in self._roots]
        prefixes.sort(key=lambda pair: len(pair[0]), reverse=True)  # the deepest root wins
        if self._home is not None:
            prefixes.append((self._home, "~/"))
        self._prefixes = [(root.rstrip("/") + "/", label) for root, label in prefixes]
        self._pattern = (re.compile(r"(?<![\w./-])(" + "|".join(re.escape(p) for p, _ in self._prefixes) + ")")
                         if self._prefixes else None)
        self._labels = dict(self._prefixes)

    def show(self, path: str) -> str:
        """``path`` as shown: root-relative, ``~/…``, or whole (a relative path stays as it is)."""
        if not os.path.isabs(path):
            return path
        norm = os.path.normpath(path)
        for prefix, label in self._prefixes:
            if norm + "/" == prefix:
                return label.rstrip("/") or "."
            if norm.startswith(prefix):
                return label + norm[len(prefix):]
        return path

    def text(self, text: str) -> str:
        """``text`` (a tool call's title) with each absolute path in it shown as ``show`` does."""
        if self._pattern is None or "/" not in text:
            return text
        return self._pattern.sub(lambda m: self._labels[m.group(1)], text)


WHOLE = PathView()
"""Shows every path whole."""
