"""git as a subprocess: argument lists (never a shell), bounded in time, its words kept for the error."""

from __future__ import annotations

import asyncio
import contextlib
import os
from dataclasses import dataclass

from .names import WorktreeError

TIMEOUT = 30.0
"""Seconds one git command may take before it is killed."""
ENV = {"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0"}
"""No password prompt (nothing could answer it), messages in one language, no lock a status may leave."""
SAFE = ("-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null")
"""Before every command: a config the agent planted (``core.fsmonitor`` runs a command at each
``status``, a hook at each checkout) runs nothing through acp.nvim's own git calls. Git passes
``-c`` on to the git processes it starts itself (submodules). Diffs add ``--no-ext-diff
--no-textconv`` (``worktree.PLAIN_DIFF``)."""


@dataclass(frozen=True, slots=True)
class Result:
    code: int
    out: bytes
    err: str

    @property
    def text(self) -> str:
        return self.out.decode("utf-8", "surrogateescape")


async def run(cwd: str, *args: str, ok: tuple[int, ...] = (0,), stdin: bytes | None = None) -> Result:
    """``git <SAFE> -C cwd args…`` (the one way acp.nvim runs git); a WorktreeError naming the command
    and git's message when the exit code is not one of ``ok`` (or git is missing, or it takes longer
    than ``TIMEOUT``)."""
    try:
        process = await asyncio.create_subprocess_exec(
            "git", *SAFE, "-C", cwd, *args,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env={**os.environ, **ENV})
    except OSError as exc:
        raise WorktreeError(f"cannot run git: {exc.strerror or exc}") from None
    try:
        out, err = await asyncio.wait_for(process.communicate(stdin), TIMEOUT)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        raise WorktreeError(f"git {args[0]} took longer than {TIMEOUT:g} s: stopped") from None
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        raise
    result = Result(process.returncode if process.returncode is not None else -1, out,
                    err.decode("utf-8", "replace").strip())
    if result.code not in ok:
        said = result.err.splitlines()[-1] if result.err else f"exit code {result.code}"
        raise WorktreeError(f"git {' '.join(args[:2])} failed: {said}")
    return result
