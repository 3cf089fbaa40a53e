"""Hypothesis strategies from the JSON schema of the ACP SDK's pydantic models.

Covers what the ACP schema uses: ``$ref``, ``anyOf``/``oneOf``, ``const``, ``enum``, ``type``
(also lists of types), ``properties``/``required``, ``additionalProperties``, ``items`` and
``minimum``. Optional properties are included or left out at random. ``overrides`` give
chosen property names (``path``, ``toolCallId``, ``sessionId``) a strategy of their own, so
generated updates hit real files and earlier tool calls instead of random strings only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from hypothesis import strategies as st

Strategy = st.SearchStrategy[Any]
JSON_SCALARS: Strategy = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=20)


def any_json(leaves: Strategy = JSON_SCALARS, max_leaves: int = 8) -> Strategy:
    """Arbitrary JSON values (``{}`` in a schema)."""
    return st.recursive(leaves, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.text(max_size=8), inner, max_size=3), max_leaves=max_leaves)


class SchemaStrategies:
    """Builds strategies for one schema document (its ``$defs`` resolve ``$ref``)."""

    def __init__(self, document: Mapping[str, Any], text: Strategy, overrides: Mapping[str, Strategy]) -> None:
        self._defs = document.get("$defs", {})
        self._text = text
        self._overrides = overrides
        self._cache: dict[str, Strategy] = {}

    def build(self, schema: Mapping[str, Any]) -> Strategy:
        """The strategy for ``schema`` (a node of the document)."""
        if "$ref" in schema:
            return self._ref(schema["$ref"])
        for key, make in self._combinators().items():
            if key in schema:
                return make(schema)
        kind = schema.get("type")
        if isinstance(kind, list):
            return st.one_of([self.build({**schema, "type": each}) for each in kind])
        if kind is None:
            return any_json()
        return self._typed()[kind](schema)

    def _combinators(self) -> dict[str, Callable[[Mapping[str, Any]], Strategy]]:
        return {
            "const": lambda s: st.just(s["const"]),
            "enum": lambda s: st.sampled_from(s["enum"]),
            "anyOf": lambda s: st.one_of([self.build(option) for option in s["anyOf"]]),
            "oneOf": lambda s: st.one_of([self.build(option) for option in s["oneOf"]]),
        }

    def _typed(self) -> dict[str, Callable[[Mapping[str, Any]], Strategy]]:
        return {
            "string": lambda s: self._text,
            "integer": lambda s: st.integers(min_value=s.get("minimum", -(2**31)), max_value=2**31),
            "number": lambda s: st.floats(min_value=s.get("minimum"), allow_nan=False, allow_infinity=False),
            "boolean": lambda s: st.booleans(),
            "null": lambda s: st.none(),
            "array": lambda s: st.lists(self.build(s.get("items", {})), max_size=4),
            "object": self._object,
        }

    def _ref(self, ref: str) -> Strategy:
        name = ref.rsplit("/", 1)[-1]
        if name not in self._cache:
            self._cache[name] = st.deferred(lambda: self.build(self._defs[name]))
        return self._cache[name]

    def _object(self, schema: Mapping[str, Any]) -> Strategy:
        properties: Mapping[str, Any] = schema.get("properties", {})
        if not properties:
            return st.dictionaries(st.text(max_size=8), any_json(), max_size=3)
        required = set(schema.get("required", ()))
        fields = {name: self._overrides[name] if name in self._overrides else self.build(sub)
                  for name, sub in properties.items()}
        mandatory = {name: fields[name] for name in fields if name in required}
        optional = {name: fields[name] for name in fields if name not in required}
        return st.fixed_dictionaries(mandatory, optional=optional)
