"""What a session shows besides its transcript: mode, title, config options, commands, tokens, counters.

Config options (``session/set_config_option``) carry the agent's models too: the option
whose category is ``model`` (or whose id is ``model``) is what ``:Ai model`` picks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from acp.schema import (
    AvailableCommand,
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionConfigSelectGroup,
    SessionConfigSelectOption,
    Usage,
    UsageUpdate,
)

from .limits import Limits

AgentOption = SessionConfigOptionSelect | SessionConfigOptionBoolean


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
    description: str = ""

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

    mode: str | None = None
    modes: list[tuple[str, str]] = field(default_factory=list)
    """(id, name) of every mode the agent offers."""
    mode_descriptions: dict[str, str] = field(default_factory=dict)
    """A mode's description by its id (what the mode picker shows beside its name)."""
    title: str | None = None
    usage: str | None = None
    """The last ``usage_update`` as shown in the statusline: '12/200 tokens · 0.1 USD'."""
    options: list[ConfigOption] = field(default_factory=list)
    commands: list[tuple[str, str]] = field(default_factory=list)
    command_hints: dict[str, str] = field(default_factory=dict)
    """A slash command's input hint (``input.hint``) by its name: what to type after it."""
    used: int | None = None
    size: int | None = None
    cost: str = ""
    tokens_in: int = 0
    tokens_out: int = 0
    turns: int = 0
    stop_reason: str = ""
    asked: int = 0
    limits: Limits = field(default_factory=Limits)
    """The usage limits the agent reports (``limits.py``)."""

    def set_options(self, options: Sequence[AgentOption] | None) -> None:
        if options is not None:
            self.options = [_option(o) for o in options]

    def option(self, category: str) -> ConfigOption | None:
        """The option of ``category`` ('model', 'mode', …), or the one with that id."""
        return find_option(self.options, category)

    def option_by_id(self, option_id: str) -> ConfigOption | None:
        return next((o for o in self.options if o.id == option_id), None)

    def set_commands(self, commands: list[AvailableCommand]) -> None:
        self.commands = [(c.name, c.description or "") for c in commands]
        self.command_hints = {c.name: hint for c in commands if c.input is not None
                              and isinstance(hint := getattr(c.input.root, "hint", None), str) and hint}

    def mode_option(self) -> ConfigOption | None:
        """The config option of category ``mode``, if the agent offers one. Where an agent offers both
        that option and ``modes``, the option wins: ACP says a client that supports config options
        uses them exclusively (the mode is read from it and set through it)."""
        option = self.option("mode")
        return option if option is not None and not option.is_boolean and option.category == "mode" else None

    def mode_values(self) -> set[str]:
        """The modes one can switch to: the mode option's values, else the ``modes``."""
        option = self.mode_option()
        return {v.value for v in option.values} if option is not None else {mid for mid, _ in self.modes}

    def mode_from_options(self) -> None:
        """The mode as the config options say (where the agent offers a mode option, it wins)."""
        option = self.mode_option()
        if option is not None:
            self.mode = str(option.current)

    def usage_update(self, update: UsageUpdate) -> None:
        self.used, self.size = update.used, update.size
        cost = update.cost
        self.cost = f"{cost.amount:g} {cost.currency}" if cost is not None else ""
        self.usage = f"{update.used}/{update.size} tokens" + (f" · {self.cost}" if self.cost else "")

    def turn_ended(self, stop_reason: str, usage: Usage | None = None) -> None:
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


def find_option(options: Sequence[ConfigOption], category: str) -> ConfigOption | None:
    """The option of ``category`` ('model', 'mode', …), or the one with that id."""
    return next((o for o in options if o.category == category), None) or \
        next((o for o in options if o.id == category), None)


def _option(raw: AgentOption) -> ConfigOption:
    values: list[OptionValue] = []
    items: Sequence[SessionConfigSelectOption | SessionConfigSelectGroup] = (
        raw.options if isinstance(raw, SessionConfigOptionSelect) else [])
    for item in items:
        for value in item.options if isinstance(item, SessionConfigSelectGroup) else [item]:
            values.append(OptionValue(value.value, value.name, value.description or ""))
    category = raw.category
    return ConfigOption(raw.id, raw.name, category if isinstance(category, str) else "",
                        raw.current_value, tuple(values), raw.description or "")


def _short(count: int) -> str:
    if count >= 1_000_000:
        return f"{count / 1_000_000:.1f}M"
    if count >= 1000:
        return f"{count / 1000:.1f}k".replace(".0k", "k")
    return str(count)
