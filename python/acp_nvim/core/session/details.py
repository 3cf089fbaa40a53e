"""What a session shows besides its transcript: config options, commands, tokens, counters.

Config options (``session/set_config_option``) carry the agent's models too: the option
whose category is ``model`` (or whose id is ``model``) is what ``:Ai model`` picks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class OptionValue:
    value: str
    name: str
    description: str = ""


@dataclass(frozen=True, slots=True)
class ConfigOption:
    """One config option as offered: a select (values) or a boolean (no values)."""

    id: str
    name: str
    category: str
    current: str | bool
    values: tuple[OptionValue, ...] = ()

    @property
    def is_boolean(self) -> bool:
        return isinstance(self.current, bool)

    def current_name(self) -> str:
        if self.is_boolean:
            return "on" if self.current else "off"
        return next((v.name for v in self.values if v.value == self.current), str(self.current))


@dataclass(slots=True)
class SessionDetails:
    """Mutable details of one session, updated from ACP responses and notifications."""

    options: list[ConfigOption] = field(default_factory=list)
    commands: list[tuple[str, str]] = field(default_factory=list)
    used: int | None = None
    size: int | None = None
    cost: str = ""
    tokens_in: int = 0
    tokens_out: int = 0
    turns: int = 0
    stop_reason: str = ""
    asked: int = 0

    def set_options(self, options: list[Any] | None) -> None:
        if options is not None:
            self.options = [_option(o) for o in options]

    def option(self, category: str) -> ConfigOption | None:
        """The option of ``category`` ('model', 'mode', …), or the one with that id."""
        return next((o for o in self.options if o.category == category), None) or \
            next((o for o in self.options if o.id == category), None)

    def option_by_id(self, option_id: str) -> ConfigOption | None:
        return next((o for o in self.options if o.id == option_id), None)

    def set_commands(self, commands: list[Any]) -> None:
        self.commands = [(c.name, c.description or "") for c in commands]

    def usage_update(self, update: Any) -> None:
        self.used, self.size = update.used, update.size
        cost = getattr(update, "cost", None)
        self.cost = f"{cost.amount:g} {cost.currency}" if cost is not None else ""

    def turn_ended(self, stop_reason: str, usage: Any = None) -> None:
        self.turns += 1
        self.stop_reason = stop_reason
        if usage is not None:
            self.tokens_in += usage.input_tokens
            self.tokens_out += usage.output_tokens

    def tokens(self) -> str:
        """'12.3k/200k tokens · 0.12 USD' from usage_update, else the turns' totals."""
        if self.used is not None:
            text = f"{_short(self.used)}/{_short(self.size or 0)} tokens"
        elif self.tokens_in or self.tokens_out:
            text = f"{_short(self.tokens_in + self.tokens_out)} tokens"
        else:
            return ""
        return f"{text} · {self.cost}" if self.cost else text


def _option(raw: Any) -> ConfigOption:
    values: list[OptionValue] = []
    for item in getattr(raw, "options", None) or []:
        group = getattr(item, "options", None)
        for value in group if group is not None else [item]:
            values.append(OptionValue(value.value, value.name, value.description or ""))
    category = getattr(raw, "category", None)
    return ConfigOption(raw.id, raw.name, category if isinstance(category, str) else "",
                        raw.current_value, tuple(values))


def _short(count: int) -> str:
    if count >= 1_000_000:
        return f"{count / 1_000_000:.1f}M"
    if count >= 1000:
        return f"{count / 1000:.1f}k".replace(".0k", "k")
    return str(count)
