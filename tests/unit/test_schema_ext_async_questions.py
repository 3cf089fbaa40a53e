"""A question that does not block the turn (codex-acp 2.6's async questions), decoded by hand
(schema_ext.py): the shape as codex-acp sends it (``AsyncQuestions.ask``), and what is not it."""

from __future__ import annotations

import pytest

from acp_nvim.core.conversation import schema_ext


def test_an_async_question_as_codex_sends_it() -> None:
    assert schema_ext.keeps_working({"codex": {"delivery": "async"}})


@pytest.mark.parametrize("meta", [None, {}, {"codex": None}, {"codex": {"delivery": "sync"}},
                                  {"codex": {"delivery": True}}, {"delivery": "async"}, "async"])
def test_anything_else_blocks(meta: object) -> None:
    assert not schema_ext.keeps_working(meta)
