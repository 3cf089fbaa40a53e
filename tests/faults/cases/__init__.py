"""The cases of the fault matrix, one function each, registered with ``@case``.

A case body acts as the user (``ctx.start``, ``ctx.prompt``, ``ctx.command``), triggers the
fault, and records what it expects (``ctx.told``, ``ctx.check``, ``ctx.lose``). The runner
then checks that the chat is usable (unless the body did), counts lost prompts, and runs
the lifecycle (``:Ai restart``, ``:Ai new`` + ``:Ai close``, ``:qa!``) counting orphans.
Each body's docstring says what it checks.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..context import Ctx
from ..driver import Editor

Body = Callable[[Ctx], None]
Prepare = Callable[[Editor], None]


@dataclass(frozen=True)
class Case:
    name: str
    body: Body
    config: dict[str, Any] = field(default_factory=dict)
    """The agent's ``FAULT_CONFIG`` (see ``faults.agent.config.Config``)."""
    spec: dict[str, Any] = field(default_factory=dict)
    """Extra keys of the agent's spec in ``setup()`` (``mode``)."""
    host_file_limit: int | None = None
    """RLIMIT_FSIZE of the Python host, in bytes (the disk-full stand-in)."""
    lifecycle: bool = True
    """Run the standard lifecycle at the end (the body quits Neovim itself when False)."""
    prepare: Prepare | None = None
    """Heavy setup (big files) done before the probes start: the harness's own CPU must not show
    up as a stall."""

    @property
    def doc(self) -> str:
        return " ".join((self.body.__doc__ or "").split())


CASES: dict[str, Case] = {}
MODULES = ("handshake", "turns", "encoding", "permissions", "shutdown", "files")


def case(config: dict[str, Any] | None = None, spec: dict[str, Any] | None = None,
         host_file_limit: int | None = None, lifecycle: bool = True,
         prepare: Prepare | None = None) -> Callable[[Body], Body]:
    """Register the decorated function as case ``<function name>``."""

    def register(body: Body) -> Body:
        if body.__name__ in CASES:
            raise ValueError(f"two cases named {body.__name__}")
        CASES[body.__name__] = Case(body.__name__, body, config or {}, spec or {}, host_file_limit, lifecycle,
                                    prepare)
        return body

    return register


def load() -> dict[str, Case]:
    """Every case, in the order of ``MODULES`` and of definition."""
    for module in MODULES:
        importlib.import_module(f"{__name__}.{module}")
    return CASES
