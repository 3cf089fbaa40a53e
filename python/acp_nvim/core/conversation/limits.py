"""The usage limits a session's agent reports (``schema_ext.usage_limits``): the latest of each window,
the meter the statusline and the board show, and the reset a failed turn waits for."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from .schema_ext import LIMIT_OK, LIMIT_REACHED, LIMIT_WARNING, UsageLimit

BAR_CELLS = 5
_RANK = {LIMIT_REACHED: 2, LIMIT_WARNING: 1, LIMIT_OK: 0}


@dataclass(slots=True)
class Limits:
    """The newest report of each usage window."""

    windows: dict[str, UsageLimit] = field(default_factory=dict)

    def update(self, limits: list[UsageLimit]) -> bool:
        """Take the windows of one update; True when what is shown changed."""
        changed = False
        for limit in limits:
            if self.windows.get(limit.window) != limit:
                self.windows[limit.window] = limit
                changed = True
        return changed

    def worst(self) -> UsageLimit | None:
        """The window nearest its limit: a reached one first, then a warning, then the most used."""
        if not self.windows:
            return None
        return max(self.windows.values(), key=lambda w: (_RANK[w.status], w.used or 0.0))

    def reset_of_reached(self) -> float | None:
        """When the last reached window resets (epoch seconds; None: none reached, or no time said)."""
        times = [w.resets_at for w in self.windows.values() if w.status == LIMIT_REACHED and w.resets_at]
        return max(times) if times else None

    def meter(self) -> str:
        """``5h ▰▰▰▱▱ 62% · resets 14:05`` for the window nearest its limit ('' when none is reported)."""
        limit = self.worst()
        if limit is None:
            return ""
        if limit.status == LIMIT_REACHED:
            level = "limit reached"
        elif limit.used is not None:
            filled = round(limit.used * BAR_CELLS)
            level = "▰" * filled + "▱" * (BAR_CELLS - filled) + f" {limit.used:.0%}"
        else:
            level = "near its limit" if limit.status == LIMIT_WARNING else "ok"
        resets = f" · resets {clock(limit.resets_at)}" if limit.resets_at else ""
        return f"{limit.window} {level}{resets}"


def clock(epoch: float, now: float | None = None) -> str:
    """A reset time as the user reads it: ``14:05`` today, ``Mon 14:05`` within a week, else a date."""
    now = time.time() if now is None else now
    local, today = time.localtime(epoch), time.localtime(now)
    if (local.tm_year, local.tm_yday) == (today.tm_year, today.tm_yday):
        return time.strftime("%H:%M:%S" if epoch - now < 120 else "%H:%M", local)
    if 0 < epoch - now < 7 * 86400:
        return time.strftime("%a %H:%M", local)
    return time.strftime("%Y-%m-%d %H:%M", local)
