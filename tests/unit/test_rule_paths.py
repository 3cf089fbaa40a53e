"""A rule's path words, checked without following links (G2): what ``path_problem`` admits."""

from __future__ import annotations

import os
from pathlib import Path

from acp_nvim.core.permissions.command import parse, path_problem, path_problems


def test_links_hard_links_and_paths_outside_are_named(tmp_path: Path):
    real, ws, outside = tmp_path / "real", tmp_path / "ws", tmp_path / "outside"
    real.mkdir()
    outside.mkdir()
    ws.symlink_to(real)  # the user's layout above the root may be a link
    (real / "README.md").write_text("x")
    (outside / "key").write_text("secret")
    (real / "env.txt").symlink_to("/proc/self/environ")
    (real / "linked").symlink_to(outside)
    os.link(outside / "key", real / "hard")
    for cwd in (None, str(real), str(ws)):
        assert path_problem("README.md", cwd, str(ws)) is None
        assert path_problem("missing/../x", cwd, str(ws)) is None  # names nothing: nothing to read
        assert "is a link (env.txt → /proc/self/environ)" in (path_problem("env.txt", cwd, str(ws)) or "")
        assert f"is a link (linked → {outside})" in (path_problem("linked/key", cwd, str(ws)) or "")
        assert "has 2 names" in (path_problem("hard", cwd, str(ws)) or "")
        assert "leads outside" in (path_problem(str(outside / "key"), cwd, str(ws)) or "")
        assert "leads outside" in (path_problem("../outside/key", cwd, str(ws)) or "")
    assert path_problems(parse(["cat", "--file=env.txt", "-n", "README.md"]), str(real)) == [
        "`env.txt` is a link (env.txt → /proc/self/environ)"]
    assert path_problems(parse(["cat", *["a"] * 300]), str(real))  # too many to check one by one
