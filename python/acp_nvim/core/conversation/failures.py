"""Why a turn or a request failed, in five classes the user can act on.

``classify`` reads, in order: a lost connection; the agent's own failure report
(``_meta.jetbrains.air.sessionFailure``); the JSON-RPC code (``auth_required``); the agents'
error kinds in the error's data (claude-agent-acp's ``errorKind``, codex-acp's
``codexErrorInfo``); then the known messages of each pinned agent, then generic words. What
matches nothing is an agent bug. Pure: no clock, no I/O (``now`` is given).

Each class has its actions (``ACTIONS``): ``retry`` (the chat's ``R``), ``login`` (``L``, ``:Ai
login``), ``new_session`` (``N``) and, for a limit whose reset time is known, ``wait`` (``W``:
retry automatically then).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from acp import RequestError
from acp.schema import InitializeResponse

from . import schema_ext

LIMIT, AUTH, CONNECTION, SERVICE, AGENT = "limit", "auth", "connection", "service", "agent"
KINDS = (LIMIT, AUTH, CONNECTION, SERVICE, AGENT)
RETRY, LOGIN, NEW_SESSION, WAIT = "retry", "login", "new_session", "wait"
ACTIONS: dict[str, tuple[str, ...]] = {
    LIMIT: (RETRY, NEW_SESSION),
    AUTH: (LOGIN, RETRY),
    CONNECTION: (RETRY, NEW_SESSION),
    SERVICE: (RETRY, NEW_SESSION),
    AGENT: (RETRY, NEW_SESSION),
}
TITLES = {
    LIMIT: "usage limit", AUTH: "not logged in", CONNECTION: "connection lost", SERVICE: "service error",
    AGENT: "agent error",
}
AUTH_REQUIRED = -32000
MAX_WAIT = 24 * 3600.0
"""A reset time further away than this is shown but not waited for."""

AIR_CATEGORIES = {"limit": LIMIT, "access": AUTH, "connection": CONNECTION, "service": SERVICE,
                  "request": AGENT, "unknown": AGENT}
ERROR_KINDS = {
    # claude-agent-acp: data.errorKind, from Claude Code's assistant error (providerFailureCategory)
    "rate_limit": LIMIT, "billing_error": LIMIT, "account_on_hold": LIMIT,
    "authentication_failed": AUTH, "oauth_org_not_allowed": AUTH, "verification_required": AUTH,
    "cloud_credential_error": AUTH,
    "overloaded": SERVICE, "server_error": SERVICE,
    "transport_lost": CONNECTION, "worker_shutdown": CONNECTION,
    "invalid_request": AGENT, "model_not_found": AGENT, "max_output_tokens": AGENT, "no_result": AGENT,
    "incomplete_tool_call": AGENT,
    # codex-acp: data.codexErrorInfo (a string, or an object keyed by the structured kind)
    "usageLimitExceeded": LIMIT, "rateLimitExceeded": LIMIT, "sessionBudgetExceeded": LIMIT,
    "contextWindowExceeded": LIMIT,
    "unauthorized": AUTH,
    "serverOverloaded": SERVICE, "internalServerError": SERVICE, "flexUnavailable": SERVICE,
    "httpConnectionFailed": CONNECTION, "responseStreamConnectionFailed": CONNECTION,
    "responseStreamDisconnected": CONNECTION, "responseTooManyFailedAttempts": CONNECTION,
    "badRequest": AGENT, "sandboxError": AGENT,
}
KNOWN_MESSAGES: dict[str, list[tuple[str, str]]] = {
    "claude": [
        (r"you've hit your .*limit|usage limit|credit balance is too low|spend limit", LIMIT),
        (r"please run /login|invalid api key|oauth token has expired|not logged in", AUTH),
        (r"overloaded", SERVICE),
    ],
    "codex": [
        (r"you've hit your usage limit|rate limit reached|quota exceeded", LIMIT),
        (r"401 unauthorized|refresh token|not logged in|please log ?in", AUTH),
        (r"stream disconnected before completion|error sending request", CONNECTION),
    ],
    "gemini": [
        (r"resource_exhausted|you have exhausted your|usage limit reached|quota exceeded", LIMIT),
        (r"api key not valid|unauthenticated|please set an auth method|login required", AUTH),
    ],
    "opencode": [
        (r"insufficient_quota|rate limit|too many requests", LIMIT),
        (r"providerautherror|unauthorized|api key", AUTH),
    ],
}
"""Per pinned agent (by the agent's configured name, or the name it gives in ``initialize``)."""
GENERIC: list[tuple[str, str]] = [
    (r"\b429\b|rate.?limit|quota|usage limit|too many requests", LIMIT),
    (r"\b401\b|\b403\b|unauthori[sz]ed|authenticat|credentials|api key|log ?in\b", AUTH),
    (r"econnrefused|econnreset|etimedout|enotfound|network|fetch failed|socket hang up"
     r"|connection (?:reset|refused|closed|lost)", CONNECTION),
    (r"\b50[0-4]\b|overloaded|service unavailable|server error|bad gateway|internal server", SERVICE),
]


@dataclass(frozen=True, slots=True)
class ErrorReport:
    """What is known of a failure: the JSON-RPC error (code, message, data), the response's
    ``_meta`` (a turn that ends with a failure report), whether the connection was lost."""

    message: str = ""
    code: int | None = None
    data: object = None
    meta: object = None
    connection_lost: bool = False
    agent: str = ""
    """The agent's configured name and ``initialize`` name, space-separated (picks the message table)."""


@dataclass(frozen=True, slots=True)
class Failure:
    """A classified failure: its class, what the chat says, when a limit resets, what the user can do."""

    kind: str
    detail: str
    resets_at: float | None = None
    """Epoch seconds (None: unknown)."""
    actions: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        return TITLES[self.kind]


def classify(report: ErrorReport, now: float) -> Failure:
    """The class of ``report`` (see the module's docstring for the order), its actions and reset time."""
    air = schema_ext.session_failure(report.meta) or schema_ext.session_failure(_data_meta(report.data))
    detail = _detail(report, air)
    kind = _kind(report, air, detail)
    resets = _resets_at(report.data, detail, now) if kind == LIMIT else None
    actions: tuple[str, ...] = ACTIONS[kind]
    if air is not None and "login" in air.actions and LOGIN not in actions:
        actions = (LOGIN, *actions)
    if resets is not None and resets - now <= MAX_WAIT:
        actions = (*actions, WAIT)
    return Failure(kind, detail, resets, actions)


def _kind(report: ErrorReport, air: schema_ext.SessionFailure | None, detail: str) -> str:
    if report.connection_lost:
        return CONNECTION
    if air is not None:
        return AIR_CATEGORIES.get(air.category, AGENT)
    if report.code == AUTH_REQUIRED:
        return AUTH
    for name in _error_kinds(report.data):
        if name in ERROR_KINDS:
            return ERROR_KINDS[name]
    return _by_message(f"{report.message} {detail}", report.agent)


def _error_kinds(data: object) -> list[str]:
    if not isinstance(data, Mapping):
        return []
    found: list[str] = []
    for key in ("errorKind", "codexErrorInfo", "kind", "type"):
        value = data.get(key)
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, Mapping):
            found.extend(k for k in value if isinstance(k, str))
    return found


def _by_message(text: str, agent: str) -> str:
    lowered = text.lower()
    tables = [rows for name, rows in KNOWN_MESSAGES.items() if name in agent.lower()]
    for rows in [*tables, GENERIC]:
        for pattern, kind in rows:
            if re.search(pattern, lowered):
                return kind
    return AGENT


def _detail(report: ErrorReport, air: schema_ext.SessionFailure | None) -> str:
    """The agent's own words: its failure title, else the error's data message, else the message."""
    if air is not None and air.title:
        return air.title
    data = report.data
    if isinstance(data, Mapping):
        for key in ("message", "details", "additionalDetails"):
            value = data.get(key)
            if isinstance(value, str) and value:
                return value
    return report.message


def _data_meta(data: object) -> object:
    return data.get("_meta") if isinstance(data, Mapping) else None


# -- when a limit resets ----------------------------------------------------------------------

_IN = re.compile(r"(?:retry|try again|resets?) in (\d+(?:\.\d+)?)\s*(s|sec|seconds?|m|min|minutes?|h|hours?)\b", re.I)
_AT = re.compile(r"(?:try again at|resets?(?: at)?)\s+(\d{1,2})(?::(\d{2}))?\s*([ap]\.?m\.?)?", re.I)
_UNITS = {"s": 1, "m": 60, "h": 3600}


def _resets_at(data: object, text: str, now: float) -> float | None:
    """Epoch seconds when the limit resets: from the data (``resetsAt``, ``retryAfter``), else
    "retry in 12s" / "try again in 5 minutes", else "resets 3pm" / "try again at 3:05 PM" (local time)."""
    if isinstance(data, Mapping):
        for key in ("resetsAt", "resets_at"):
            value = data.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
                return float(value)
        for key in ("retryAfter", "retry_after"):
            value = data.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
                return now + float(value)
    found = _IN.search(text)
    if found:
        return now + float(found.group(1)) * _UNITS[found.group(2)[0].lower()]
    return _clock_time(_AT.search(text), now)


def _clock_time(found: re.Match[str] | None, now: float) -> float | None:
    if found is None:
        return None
    hour, minute, half = int(found.group(1)), int(found.group(2) or 0), (found.group(3) or "").lower()
    if half.startswith("p") and hour < 12:
        hour += 12
    elif half.startswith("a") and hour == 12:
        hour = 0
    if hour > 23 or minute > 59 or (not half and found.group(2) is None):
        return None  # "resets 5" is no time of day
    today = datetime.fromtimestamp(now)
    at = today.replace(hour=hour, minute=minute, second=0, microsecond=0)
    if at.timestamp() <= now:
        at += timedelta(days=1)
    return at.timestamp()


def agent_names(configured: str, info: InitializeResponse | None) -> str:
    """The agent's configured name and the name it gives itself (which failure table applies)."""
    given = info.agent_info.name if info is not None and info.agent_info is not None else ""
    return f"{configured} {given}"


def report_of(exc: BaseException, agent: str = "") -> ErrorReport:
    """What an exception of a request says: a JSON-RPC error's code and data, a lost connection."""
    if isinstance(exc, RequestError):
        return ErrorReport(str(exc), exc.code, exc.data, agent=agent)
    return ErrorReport(str(exc), connection_lost=isinstance(exc, (ConnectionError, EOFError)), agent=agent)


START_HINTS = {
    LIMIT: "this is a usage limit: the agent cannot start a session until it resets",
    AUTH: "the agent is not logged in: :Ai login logs in",
    CONNECTION: "the connection to the agent failed: check its address or the network",
    SERVICE: "the agent's service failed: try again later",
}


def start_hint(failure: Failure, now: float) -> str:
    """What a failed start, restart or reconnect adds to its notice ('' for an agent bug)."""
    hint = START_HINTS.get(failure.kind, "")
    if hint and failure.resets_at is not None:
        hint += f" (resets {_when(failure.resets_at, now)})"
    return hint


def offer(failure: Failure, keys: Mapping[str, str], now: float) -> str:
    """The chat's line of actions: ``R retries · L logs in (:Ai login) · …``, and the reset time."""
    words = {RETRY: "retries", LOGIN: "logs in (:Ai login)", NEW_SESSION: "starts a new session",
             WAIT: "retries when the limit resets"}
    parts = [f"{keys[action]} {words[action]}" for action in failure.actions if keys.get(action)]
    if failure.resets_at is not None:
        parts.append(f"resets {_when(failure.resets_at, now)}")
    return " · ".join(parts)


def _when(at: float, now: float) -> str:
    wait = max(0.0, at - now)
    clock = datetime.fromtimestamp(at).strftime("%H:%M")
    if wait < 120:
        return f"at {clock} (in {wait:.0f} s)"
    if wait < 7200:
        return f"at {clock} (in {wait / 60:.0f} min)"
    return f"at {clock} (in {wait / 3600:.1f} h)"
