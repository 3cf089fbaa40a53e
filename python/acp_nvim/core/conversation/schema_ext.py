"""Wire shapes newer than the pinned SDK (0.12.x, schema 1.19), decoded by hand in one place.

Each shape has its own section and functions, and a unit test (``tests/unit/test_schema_ext_*.py``).
A decoder takes the JSON as it came (``Mapping[str, object]`` or anything) and returns a typed
value, or None when the shape does not hold: the caller says why to the agent or the log.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# -- $/cancel_request (stable June 2026): {"requestId": <id>, "_meta"?} -------------------------

CANCEL_REQUEST = "$/cancel_request"


def cancel_request_id(params: object) -> int | str | None:
    """The id of the request a ``$/cancel_request`` withdraws (None: no valid ``requestId``).

    JSON-RPC ids are strings or integers (a number with a fraction, or a bool, is no id).
    """
    if not isinstance(params, Mapping):
        return None
    request_id = params.get("requestId")
    if isinstance(request_id, bool) or not isinstance(request_id, (int, str)):
        return None
    return request_id


def cancel_request(request_id: int | str) -> dict[str, object]:
    """The params of a ``$/cancel_request`` we send for our own abandoned request."""
    return {"requestId": request_id}


# -- steering (``_session/steering``, advertised in ``initialize``'s ``_meta.steering``) --------

STEER_METHOD = "session/steering"
"""The extension method without its ``_``: the SDK's ``ext_method`` adds it (``_session/steering``)."""
STEER_OUTCOMES = ("injected", "startedNewTurn", "promptRequired", "failed")
STEER_DELIVERED = ("injected", "startedNewTurn")
"""Outcomes after which the agent has the message: the queue lets it go."""


@dataclass(frozen=True, slots=True)
class SteerOutcome:
    """The agent's answer to a steering request: one of ``STEER_OUTCOMES`` and why, when it says."""

    outcome: str
    reason: str = ""

    @property
    def delivered(self) -> bool:
        return self.outcome in STEER_DELIVERED


def steering_supported(meta: Mapping[str, object] | None) -> bool:
    """``initialize`` result ``_meta.steering.supported`` is ``true`` (exactly a boolean true)."""
    steering = meta.get("steering") if isinstance(meta, Mapping) else None
    return isinstance(steering, Mapping) and steering.get("supported") is True


def steer_params(session_id: str, prompt: Sequence[Mapping[str, object]]) -> dict[str, object]:
    """The request: the prompt's content blocks, and ``idleBehavior: promptRequired`` so that an agent
    whose turn already ended hands the message back instead of starting a turn of its own."""
    return {"sessionId": session_id, "prompt": list(prompt),
            "_meta": {"steering": {"idleBehavior": "promptRequired"}}}


def steer_outcome(result: object) -> SteerOutcome:
    """Decode the response; anything but a known outcome is ``failed``, with what was wrong."""
    if not isinstance(result, Mapping):
        return SteerOutcome("failed", "the agent's answer is not an object")
    outcome = result.get("outcome")
    reason = _text(result.get("reason")) or _text(result.get("message"))
    if outcome not in STEER_OUTCOMES:
        return SteerOutcome("failed", f"unknown outcome {str(outcome)[:40]!r}")
    return SteerOutcome(str(outcome), reason)


# -- typed failures (``_meta.jetbrains.air.sessionFailure``) ------------------------------------


@dataclass(frozen=True, slots=True)
class SessionFailure:
    """An agent's own failure report (claude-agent-acp and codex-acp send it to AIR-capable clients,
    on the prompt's response ``_meta`` or in a session update)."""

    category: str
    """``limit``, ``access``, ``connection``, ``service``, ``request`` or ``unknown``."""
    title: str
    actions: tuple[str, ...] = ()
    """``retry``, ``login``, ``new_session``."""
    details: str = ""
    reason: str = ""


def session_failure(meta: object) -> SessionFailure | None:
    """``_meta.jetbrains.air.sessionFailure`` of a response or update, when well formed."""
    jetbrains = meta.get("jetbrains") if isinstance(meta, Mapping) else None
    air = jetbrains.get("air") if isinstance(jetbrains, Mapping) else None
    failure = air.get("sessionFailure") if isinstance(air, Mapping) else None
    if not isinstance(failure, Mapping):
        return None
    category, title = _text(failure.get("category")), _text(failure.get("title"))
    if not category:
        return None
    actions = failure.get("actions")
    listed = tuple(a for a in actions if isinstance(a, str)) if isinstance(actions, list) else ()
    return SessionFailure(category, title, listed, _text(failure.get("details")), _text(failure.get("reason")))


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""
