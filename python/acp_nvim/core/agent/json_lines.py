"""One line from the agent's stdout as JSON: fast when it is clean, careful when it is not.

The fast way is orjson when installed (about four times faster than ``json``); it refuses
what ``json`` accepts (lone surrogates, NaN, integers beyond 64 bits it reads as floats), so
a line it refuses, or a message whose ``id`` it read as a float, is read again the careful way.
The careful way decodes invalid UTF-8 with U+FFFD in its place, replaces lone surrogates, and
turns too deep a nesting into a reason instead of a RecursionError. Either way, what comes out
can be encoded as UTF-8 (for msgpack and Neovim).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from ..surrogates import clean

try:
    import orjson
except ImportError:  # optional speed-up (pip install orjson)
    orjson = None  # type: ignore[assignment]

NOT_JSON = object()
"""What ``loads_careful`` returns for a line that is no JSON at all."""
SURROGATE_HINTS = (b"\\ud", b"\\uD", b"\xed")
"""Only a line holding one of these can decode to a lone surrogate with ``json``."""


def _loads_orjson(line: bytes) -> object:
    value = orjson.loads(line)
    if type(value) is dict and type(value.get("id")) is float:
        raise ValueError("an id read as a float: read it again with json")  # a huge integer id stays exact
    return value


def _loads_json(line: bytes) -> object:
    value = json.loads(line)
    if any(hint in line for hint in SURROGATE_HINTS):
        value = clean(value)
    return value


loads_fast: Callable[[bytes], object] = _loads_orjson if orjson is not None else _loads_json
"""The line's JSON value; raises ValueError or RecursionError for anything unusual (then use
``loads_careful``)."""


def loads_careful(line: bytes) -> tuple[object, str | None]:
    """The line's JSON value (``NOT_JSON`` when it is none) and what had to be repaired or why it
    could not be read (None when nothing was wrong)."""
    try:
        return _repaired(json.loads(line), None)
    except RecursionError:
        return NOT_JSON, "nested too deeply to read"
    except UnicodeDecodeError:
        pass
    except ValueError:
        return NOT_JSON, None
    text = line.decode("utf-8", "replace")
    replaced = text.count("\ufffd") - line.count(b"\xef\xbf\xbd")
    note = f"{replaced} invalid UTF-8 byte sequence{'s' if replaced != 1 else ''} replaced with U+FFFD"
    try:
        return _repaired(json.loads(text), note)
    except RecursionError:
        return NOT_JSON, "nested too deeply to read"
    except ValueError:
        return NOT_JSON, None


def _repaired(value: object, note: str | None) -> tuple[object, str | None]:
    cleaned = clean(value)
    if cleaned is not value:
        note = f"{note}; " if note else ""
        note += "lone surrogates replaced with U+FFFD"
    return cleaned, note
