"""An agent's question form (``elicitation/create``, form mode): its fields, and the user's answer checked.

The schema is the subset ACP allows: a flat object of strings (length, pattern, format), numbers
and integers (minimum, maximum), booleans, single-select enums (``enum`` or titled ``oneOf``) and
multi-selects (an array of an enum, ``minItems``/``maxItems``). The user answers in text, one line
per field; ``judge`` turns those texts into the content the agent gets, or says per field why not.
A property of a type ACP does not define is shown and never answered (a required one cannot be).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from urllib.parse import urlsplit

from acp.schema import (
    ElicitationBooleanPropertySchema,
    ElicitationIntegerPropertySchema,
    ElicitationMultiSelectPropertySchema,
    ElicitationNumberPropertySchema,
    ElicitationSchema,
    ElicitationStringPropertySchema,
    StringMultiSelectItems,
    TitledMultiSelectItems,
)

from ..port import FormField

MAX_FIELDS = 50
"""Fields a form may have; a longer one is refused (the agent hears why)."""
MAX_CHOICES = 200
MAX_PATTERN_INPUT = 10_000
"""Characters of a value checked against the agent's ``pattern`` (a longer value fails the check)."""
FORMATS = ("email", "uri", "date", "date-time")

Content = dict[str, object]


@dataclass(frozen=True, slots=True)
class Spec:
    """What a field accepts (kept beside the ``FormField`` the editor shows)."""

    field: FormField
    consts: tuple[str, ...] = ()
    """The value sent for each of ``field.choices`` (same order)."""
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    format: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    min_items: int | None = None
    max_items: int | None = None
    unknown: str = ""
    """The type of a property ACP does not define ('' for the known ones)."""


class FormError(ValueError):
    """The form cannot be shown (too many fields): the agent hears the reason."""


def specs_of(schema: ElicitationSchema) -> list[Spec]:
    """The form's fields in the agent's order, each with what it accepts."""
    properties = schema.properties or {}
    if len(properties) > MAX_FIELDS:
        raise FormError(f"the form has {len(properties)} fields; acp.nvim shows at most {MAX_FIELDS}")
    required = set(schema.required or [])
    return [_spec(key, prop, key in required) for key, prop in properties.items()]


def _spec(key: str, prop: object, required: bool) -> Spec:
    title = getattr(prop, "title", None) or key
    description = getattr(prop, "description", None) or ""
    if isinstance(prop, ElicitationStringPropertySchema):
        return _string(key, title, description, required, prop)
    if isinstance(prop, (ElicitationNumberPropertySchema, ElicitationIntegerPropertySchema)):
        kind = "integer" if isinstance(prop, ElicitationIntegerPropertySchema) else "number"
        hint = kind + _range(prop.minimum, prop.maximum)
        value = "" if prop.default is None else _number_text(prop.default)
        return Spec(FormField(key, title, kind, required, value, hint, description),
                    minimum=prop.minimum, maximum=prop.maximum)
    if isinstance(prop, ElicitationBooleanPropertySchema):
        value = "" if prop.default is None else ("true" if prop.default else "false")
        return Spec(FormField(key, title, "boolean", required, value, "true or false", description,
                              ("true", "false")), consts=("true", "false"))
    if isinstance(prop, ElicitationMultiSelectPropertySchema):
        return _multi(key, title, description, required, prop)
    kind = str(getattr(prop, "type", "?"))
    return Spec(FormField(key, title, "other", required, "", f"type {kind!r}: acp.nvim cannot answer it",
                          description), unknown=kind)


def _string(key: str, title: str, description: str, required: bool, prop: ElicitationStringPropertySchema) -> Spec:
    default = prop.default or ""
    if prop.one_of or prop.enum:
        consts, titles = _choices(prop.one_of, prop.enum)
        value = titles[consts.index(default)] if default in consts else ""
        return Spec(FormField(key, title, "enum", required, value, "one of: " + ", ".join(titles), description,
                              titles), consts=consts)
    limits = [f"{prop.min_length}–{prop.max_length if prop.max_length is not None else '…'} characters"
              if prop.min_length else f"at most {prop.max_length} characters" if prop.max_length is not None else ""]
    fmt = prop.format if prop.format in FORMATS else None
    hint = ", ".join(part for part in ["text", fmt or "", *limits, f"matching {prop.pattern}" if prop.pattern else ""]
                     if part)
    return Spec(FormField(key, title, "string", required, default, hint, description),
                min_length=prop.min_length, max_length=prop.max_length, pattern=prop.pattern, format=fmt)


def _multi(key: str, title: str, description: str, required: bool,
           prop: ElicitationMultiSelectPropertySchema) -> Spec:
    items = prop.items
    if isinstance(items, TitledMultiSelectItems):
        consts, titles = _choices(items.any_of, None)
    elif isinstance(items, StringMultiSelectItems):
        consts, titles = _choices(None, items.enum)
    else:
        kind = f"array of {getattr(items, 'type', '?')}"
        return Spec(FormField(key, title, "other", required, "", f"type {kind!r}: acp.nvim cannot answer it",
                              description), unknown=kind)
    picked = [titles[consts.index(c)] for c in prop.default or [] if c in consts]
    count = _count(prop.min_items, prop.max_items)
    hint = "any of: " + ", ".join(titles) + (f" ({count})" if count else "")
    return Spec(FormField(key, title, "multi", required, ", ".join(picked), hint, description, titles),
                consts=consts, min_items=prop.min_items, max_items=prop.max_items)


def _choices(titled: object, plain: list[str] | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    options = [(o.const, o.title or o.const) for o in titled] if isinstance(titled, list) else \
        [(value, value) for value in plain or []]
    options = options[:MAX_CHOICES]
    return tuple(c for c, _ in options), tuple(t for _, t in options)


def _range(low: float | None, high: float | None) -> str:
    if low is None and high is None:
        return ""
    if high is None:
        return f", at least {_number_text(low or 0)}"
    if low is None:
        return f", at most {_number_text(high)}"
    return f", {_number_text(low)}–{_number_text(high)}"


def _count(low: int | None, high: int | None) -> str:
    if low and high is not None:
        return f"{low}–{high} picks"
    if low:
        return f"at least {low}"
    return f"at most {high}" if high is not None else ""


def _number_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


# -- the user's answer ------------------------------------------------------------------------

def judge(specs: list[Spec], texts: Mapping[str, object]) -> tuple[Content, dict[str, str]]:
    """The content for the agent from the user's texts (key → text), and why each field that does
    not validate does not (key → reason; empty when the answer may go)."""
    content: Content = {}
    problems: dict[str, str] = {}
    for spec in specs:
        raw = texts.get(spec.field.key, "")
        text = raw.strip() if isinstance(raw, str) else ""
        if spec.unknown:
            if spec.field.required:
                problems[spec.field.key] = f"required, but acp.nvim cannot answer a field of type {spec.unknown!r}"
            continue
        if not text:
            if spec.field.required:
                problems[spec.field.key] = "required"
            continue
        value, problem = _value(spec, text)
        if problem:
            problems[spec.field.key] = problem
        else:
            content[spec.field.key] = value
    return content, problems


def _value(spec: Spec, text: str) -> tuple[object, str]:
    kind = spec.field.kind
    if kind == "string":
        return text, _string_problem(spec, text)
    if kind in ("number", "integer"):
        return _number(spec, text)
    if kind == "boolean":
        lowered = text.lower()
        if lowered in ("true", "yes", "y", "1"):
            return True, ""
        if lowered in ("false", "no", "n", "0"):
            return False, ""
        return None, "true or false"
    if kind == "enum":
        const = _const(spec, text)
        return (const, "") if const is not None else (None, "not one of the choices (<CR> picks)")
    return _picks(spec, text)


def _string_problem(spec: Spec, text: str) -> str:
    if spec.min_length is not None and len(text) < spec.min_length:
        return f"at least {spec.min_length} characters (has {len(text)})"
    if spec.max_length is not None and len(text) > spec.max_length:
        return f"at most {spec.max_length} characters (has {len(text)})"
    if spec.format is not None and not _formatted(spec.format, text):
        return f"not a valid {spec.format}"
    if spec.pattern:
        try:
            matches = len(text) <= MAX_PATTERN_INPUT and re.search(spec.pattern, text) is not None
        except re.error:
            return ""  # a pattern Python cannot read is not the user's fault: not checked
        if not matches:
            return f"does not match {spec.pattern}"
    return ""


def _formatted(fmt: str, text: str) -> bool:
    try:
        if fmt == "email":
            local, _, domain = text.partition("@")
            return bool(local) and "." in domain and " " not in text
        if fmt == "uri":
            parts = urlsplit(text)
            return bool(parts.scheme) and bool(parts.netloc or parts.path)
        if fmt == "date":
            date.fromisoformat(text)
        else:
            datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def _number(spec: Spec, text: str) -> tuple[object, str]:
    integer = spec.field.kind == "integer"
    try:
        value: float = int(text) if integer else float(text)
    except ValueError:
        return None, "a whole number" if integer else "a number"
    if not math.isfinite(value):
        return None, "a finite number"
    if spec.minimum is not None and value < spec.minimum:
        return None, f"at least {_number_text(spec.minimum)}"
    if spec.maximum is not None and value > spec.maximum:
        return None, f"at most {_number_text(spec.maximum)}"
    return value, ""


def _const(spec: Spec, text: str) -> str | None:
    titles = spec.field.choices
    if text in titles:
        return spec.consts[titles.index(text)]
    return text if text in spec.consts else None


def _picks(spec: Spec, text: str) -> tuple[object, str]:
    whole = _const(spec, text)
    parts = [whole] if whole is not None else [part.strip() for part in text.split(",") if part.strip()]
    picks: list[str] = []
    for part in parts:
        const = _const(spec, part)
        if const is None:
            return None, f"{part!r} is not one of the choices (<CR> picks)"
        if const not in picks:
            picks.append(const)
    if spec.min_items is not None and len(picks) < spec.min_items:
        return None, f"pick at least {spec.min_items}"
    if spec.max_items is not None and len(picks) > spec.max_items:
        return None, f"pick at most {spec.max_items}"
    return picks, ""
