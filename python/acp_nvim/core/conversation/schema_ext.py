"""Wire shapes newer than the pinned SDK (0.12.x, schema 1.19), decoded by hand in one place.

Each shape has its own section and functions, and a unit test (``tests/unit/test_schema_ext_*.py``).
A decoder takes the JSON as it came (``Mapping[str, object]`` or anything) and returns a typed
value, or None when the shape does not hold: the caller says why to the agent or the log.
"""

from __future__ import annotations

from collections.abc import Mapping

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
