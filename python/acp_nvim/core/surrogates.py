"""Lone surrogates: text Python can hold but UTF-8 (and so msgpack, and Neovim) cannot.

JSON may escape a lone UTF-16 surrogate (``"\\ud83d"``), and Python's ``json`` decodes it into a
``str`` that no UTF-8 encoder accepts. Such text is repaired where it enters (the wire) and,
as a last line of defence, where it leaves for Neovim (the bridge): each lone surrogate becomes
U+FFFD, a proper pair becomes its character.
"""

from __future__ import annotations

from typing import TypeVar, cast

T = TypeVar("T")
REPLACEMENT = "\ufffd"


def clean_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (the same object when it has none)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def clean(value: T) -> T:
    """``value`` (JSON-like: dicts, lists, tuples, strings, scalars) with every string cleaned;
    containers are rebuilt only where something changed."""
    return cast(T, _clean(value))


def _clean(value: object) -> object:
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        cleaned = {_clean(key): _clean(item) for key, item in value.items()}
        return cleaned if _changed_dict(value, cleaned) else value
    if isinstance(value, (list, tuple)):
        items = [_clean(item) for item in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return items if isinstance(value, list) else tuple(items)
    return value


def _changed_dict(before: dict[object, object], after: dict[object, object]) -> bool:
    if len(before) != len(after):
        return True
    return any(a is not b or x is not y
               for (a, x), (b, y) in zip(before.items(), after.items(), strict=True))
