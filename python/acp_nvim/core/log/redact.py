"""Secret redaction for everything the session log keeps, shows and exports.

Two sources of secrets: the values of the agent's configured environment (and of
inherited variables whose names say they hold a secret), and strings shaped like
API keys or bearer tokens wherever they appear. Replacements never contain quotes
or backslashes, so redacting a JSON text leaves valid JSON.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping

MIN_ENV_VALUE = 4
"""Shorter env values ("1", "yes") are not secrets, and redacting them would wreck the log."""
MIN_INHERITED_VALUE = 8
NOT_SECRET = re.compile(r"(?i)^(?:true|false|yes|no|on|off|none|null|\d+)$")
SECRET_NAME = re.compile(r"(?i)(?:api[_-]?key|token|secret|passw(?:or)?d|credential|private[_-]?key)")

KEY_SHAPES = (
    r"\bsk-[A-Za-z0-9_-]{16,}",  # OpenAI / Anthropic (sk-ant-…, sk-proj-…)
    r"\bAIza[0-9A-Za-z_-]{30,}",  # Google
    r"\bgh[pousr]_[A-Za-z0-9]{30,}",  # GitHub tokens
    r"\bgithub_pat_[A-Za-z0-9_]{30,}",
    r"\bxox[abposr]-[A-Za-z0-9-]{10,}",  # Slack
    r"\bAKIA[0-9A-Z]{16}\b",  # AWS access key id
    r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",  # JWT
)
BEARER = r"(?i:\b(?P<bearer>bearer)\s+)(?P<bearer_value>[A-Za-z0-9._~+/=-]{12,})"
ASSIGNMENT = (
    r"(?i:\b(?P<name>api[_-]?key|x-api-key|access[_-]?token|auth[_-]?token|refresh[_-]?token"
    r"|client[_-]?secret|secret|password)(?P<sep>(?:\\*[\"'])?\s*[:=]\s*(?:\\*[\"'])?))"
    r"(?P<value>[^\s\"'\\,;&}]{6,})"
)
REDACTED = "[redacted]"


class Redactor:
    """Replaces secrets in text; build one per session with :meth:`for_env`."""

    def __init__(self, literals: Mapping[str, str] | None = None) -> None:
        self.literals = dict(literals or {})
        self._forms = tuple({form for value in self.literals for form in (value, _json_escaped(value))})
        self._pattern = re.compile("|".join(_alternatives(self.literals)))

    @classmethod
    def for_env(cls, env: Mapping[str, str], inherited: Mapping[str, str] | None = None) -> Redactor:
        """Secrets from the agent's configured ``env`` and secret-named ``inherited`` variables."""
        literals: dict[str, str] = {}
        source = os.environ if inherited is None else inherited
        for name, value in source.items():
            if SECRET_NAME.search(name) and len(value) >= MIN_INHERITED_VALUE:
                literals[value] = name
        for name, value in env.items():
            if len(value) >= MIN_ENV_VALUE and not NOT_SECRET.match(value):
                literals[value] = name
        return cls(literals)

    def __call__(self, text: str) -> str:
        """``text`` with every secret replaced."""
        if self._suspect(text):
            return self._pattern.sub(self._replace, text)
        return text

    def _suspect(self, text: str) -> bool:
        """A cheap pre-check: the full pattern costs tens of microseconds per message."""
        for form in self._forms:
            if form in text:
                return True
        low = text.lower()
        return ("sk-" in low or "key" in low or "token" in low or "secret" in low or "password" in low
                or "bearer" in low or "aiza" in low or "gh" in low or "xox" in low or "akia" in low
                or "eyj" in low)

    def _replace(self, match: re.Match[str]) -> str:
        groups = match.groupdict()
        if groups.get("value") is not None:
            return f"{groups['name']}{groups['sep']}{REDACTED}"
        if groups.get("bearer_value") is not None:
            return f"{match.group(0)[: match.start('bearer_value') - match.start()]}{REDACTED}"
        name = self.literals.get(match.group(0)) or self._escaped_name(match.group(0))
        return f"[redacted:${name}]" if name else REDACTED

    def _escaped_name(self, text: str) -> str | None:
        for value, name in self.literals.items():
            if _json_escaped(value) == text:
                return name
        return None


def _alternatives(literals: Mapping[str, str]) -> list[str]:
    """Literal values (also as they appear inside JSON strings), longest first, then the shapes."""
    forms = {form for value in literals for form in (value, _json_escaped(value))}
    escaped = [re.escape(form) for form in sorted(forms, key=len, reverse=True)]
    return [*escaped, ASSIGNMENT, BEARER, *KEY_SHAPES]


def _json_escaped(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)[1:-1]
