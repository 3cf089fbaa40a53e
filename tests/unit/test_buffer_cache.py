"""The buffer cache's joined text (nvim/files/buffer_cache.py): one join per changedtick, counted in its bound."""

from __future__ import annotations

from acp_nvim.nvim.files.buffer_cache import BufferCache


def raw(lines: list[str], *, first: int = 0, tail: int = 0, count: int | None = None, tick: int = 1,
        version: int = 1, eol: bool = True) -> dict:
    return {"tracker": 1, "version": version, "first": first, "tail": tail, "lines": lines,
            "count": len(lines) if count is None else count, "newline": "\n", "eol": eol, "bom": False,
            "empty": False, "tick": tick, "modified": True, "disk": None, "source": None}


def test_an_unchanged_buffer_gives_the_same_text_object_and_a_change_a_new_one():
    cache = BufferCache()
    lines = [f"line {n}" for n in range(1000)]
    first = cache.apply("/f", raw(lines))
    again = cache.apply("/f", raw([], first=1000, count=1000, version=2))
    assert first is not None and again is not None
    assert again.text is first.text, "same tick, same lines: the text is not joined again"
    changed = cache.apply("/f", raw(["LINE 5"], first=5, tail=994, count=1000, tick=2, version=3))
    assert changed is not None and changed.text is not first.text
    assert changed.text.split("\n")[5] == "LINE 5"
    ticked = cache.apply("/f", raw([], first=1000, count=1000, tick=3, version=4, eol=False))
    assert ticked is not None and ticked.text == changed.text[:-1], "a new tick (an option) joins again"


def test_the_joined_text_counts_in_the_bound():
    lines = ["x" * 99] * 100  # 10,000 characters of lines, 9,999 of text
    cache = BufferCache(max_chars=25_000)
    cache.apply("/a", raw(lines))
    assert cache.sizes == (1, 10_000 + 9_999 + 1)
    cache.apply("/a", raw([], first=100, count=100, version=2))
    assert cache.sizes == (1, 20_000), "reading again adds nothing"
    cache.apply("/a", raw(["y"], first=3, tail=96, count=100, tick=2, version=3))
    copies, chars = cache.sizes
    assert copies == 1 and chars == 10_000 - 99 + 1 + len(cache.apply("/a", raw([], first=100, count=100, tick=2,
                                                                                 version=4)).text)
    cache.apply("/b", raw(lines))
    assert cache.sizes[0] == 1, "the bound drops the least recently read copy"
