"""The agent's fault configuration and its shared state folder."""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Config:
    """What this agent process does wrong (``FAULT_CONFIG``, JSON with these keys)."""

    hang: tuple[str, ...] = ()
    """Methods to hang in, each once per case (``initialize``, ``session/new``, ``session/load``,
    ``session/resume``, ``session/set_mode``): the first process to reach one hangs there."""
    load: bool = False
    """Advertise ``loadSession``."""
    resume: bool = False
    """Advertise ``sessionCapabilities.resume``."""
    modes: bool = False
    """Offer the modes ``ask`` and ``code``."""
    stubborn: bool = False
    """Ignore SIGTERM and the end of stdin (so does the child process)."""
    dir: Path = field(default_factory=lambda: Path("."))

    @classmethod
    def from_env(cls) -> Config:
        raw = json.loads(os.environ.get("FAULT_CONFIG") or "{}")
        return cls(hang=tuple(raw.get("hang", ())), load=bool(raw.get("load")), resume=bool(raw.get("resume")),
                   modes=bool(raw.get("modes")), stubborn=bool(raw.get("stubborn")),
                   dir=Path(os.environ.get("FAULT_DIR", ".")))

    def claim(self, name: str) -> bool:
        """True for the first process of the case to claim ``name`` (an O_EXCL marker file)."""
        try:
            os.close(os.open(self.dir / f"claimed-{name.replace('/', '_')}", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return False
        return True

    def should_hang(self, method: str) -> bool:
        return method in self.hang and self.claim(f"hang-{method}")

    async def gate(self, name: str, timeout: float = 60.0) -> bool:
        """Wait until the harness opens gate ``name``; False after ``timeout`` seconds."""
        path = self.dir / f"gate-{name}"
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not path.exists():
            if loop.time() > deadline:
                return False
            await asyncio.sleep(0.02)
        return True
