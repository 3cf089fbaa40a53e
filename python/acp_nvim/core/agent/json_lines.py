"""One line from the agent's stdout as JSON: fast when it is clean, careful when it is not.

The fast way is orjson when installed (about four times faster than ``json``); it refuses
what ``json`` accepts (lone surrogates, NaN, integers beyond 64 bits it reads as floats), so
a line it refuses, or a message whose ``id`` it read as a float, is read again the careful way.
The careful way decodes invalid UTF-8 with U+FFFD in its place, replaces lone surrogates, and
turns too deep a nesting into a reason instead of a RecursionError. Either way, what comes out
can be encoded as UTF-8 (for msgpack and Neovim).

Before either, :func:`too_many_items` bounds what a line may cost once parsed: an 8 MiB line of
``[0,0,…]`` or ``{"a":[{},{},…]}`` is four million objects, 30 times its size in memory. A line
shorter than ``MAX_ITEMS`` bytes cannot hold more items and is not looked at; a longer one is
counted at C speed (its ``,``, ``[`` and ``{``, strings included: an overestimate), and only
when that count is over the bound are its strings taken out and the count made exact.

:func:`too_deep` bounds its nesting the same way, before it is parsed: a value nested deeper than
``MAX_DEPTH`` would be read, then fail deep inside the SDK's validation as an internal error.
"""

from __future__ import annotations

import json
import re
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
MAX_ITEMS = 500_000
"""The most values (array items, object members, containers) one line may hold: at most about
40 MB once parsed, and far beyond any ACP message (a long text is one string)."""
STRING = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"')
"""A JSON string (the unrolled loop: runs of plain bytes at C speed)."""
MAX_DEPTH = 64
"""The deepest nesting of arrays and objects a message may have: far beyond any ACP message (a
tool's raw input included), far below what a recursive reader or validator can take."""
NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
INNERMOST = re.compile(rb"\[\]|\{\}")
"""An empty array or object once all else is taken out: one pass removes one level."""


def too_many_items(line: bytes | str) -> int | None:
    """How many values ``line`` holds when that is more than ``MAX_ITEMS`` (None: it is not)."""
    if len(line) <= MAX_ITEMS:
        return None
    if isinstance(line, str):  # a WebSocket text frame
        line = line.encode("utf-8", "surrogatepass")
    if line.count(b",") + line.count(b"[") + line.count(b"{") <= MAX_ITEMS:
        return None
    bare = STRING.sub(b'""', line)
    count = bare.count(b",") + bare.count(b"[") + bare.count(b"{")
    return count if count > MAX_ITEMS else None


def too_deep(line: bytes | str) -> bool:
    """Whether ``line`` nests arrays and objects deeper than ``MAX_DEPTH`` (strings not counted).
    A line with no more brackets than that cannot, and is not looked at further; otherwise its
    strings are taken out, then its innermost pairs, one level per pass, all at C speed."""
    if isinstance(line, str):  # a WebSocket text frame
        line = line.encode("utf-8", "surrogatepass")
    if line.count(b"[") + line.count(b"{") <= MAX_DEPTH:
        return False
    brackets = STRING.sub(b"", line).translate(None, NOT_BRACKETS)
    for _ in range(MAX_DEPTH):
        fewer = INNERMOST.sub(b"", brackets)
        if not fewer or fewer == brackets:  # all gone, or not JSON (its parser says so)
            return False
        brackets = fewer
    return True


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


def loads_string(data: bytes) -> object:
    """One JSON value that must be a string (the caller checks its type); ValueError for anything
    unusual, a lone surrogate included (orjson refuses it; ``json`` is not asked)."""
    if orjson is not None:
        return orjson.loads(data)
    if data.startswith(b'"') and not any(hint in data for hint in SURROGATE_HINTS):
        return json.loads(data)
    raise ValueError("not a plain JSON string")


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
