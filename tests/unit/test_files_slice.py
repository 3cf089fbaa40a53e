"""``line`` / ``limit`` of fs/read_text_file, exactly per the ACP schema (1-based line, line count)."""

from __future__ import annotations

import pytest

from acp_nvim.core.files.text_slice import line_count, slice_lines

THREE = "one\ntwo\nthree\n"
NO_EOL = "one\ntwo\nthree"
CRLF = "one\r\ntwo\r\nthree\r\n"

CASES = [
    # (text, line, limit, expected)
    (THREE, None, None, THREE),
    (THREE, 1, None, THREE),
    (THREE, 2, None, "two\nthree\n"),
    (THREE, 3, None, "three\n"),
    (THREE, 4, None, ""),  # line just past the end
    (THREE, 99, None, ""),  # far past the end
    (THREE, 99, 5, ""),
    (THREE, None, 0, ""),  # limit 0
    (THREE, 2, 0, ""),
    (THREE, None, 1, "one\n"),  # only limit: from line 1
    (THREE, None, 2, "one\ntwo\n"),
    (THREE, None, 99, THREE),  # limit past the end
    (THREE, 2, 1, "two\n"),
    (THREE, 2, 5, "two\nthree\n"),
    (THREE, 0, None, THREE),  # line 0 is read as line 1
    (THREE, 0, 1, "one\n"),
    (NO_EOL, 3, None, "three"),  # last line without newline
    (NO_EOL, 3, 1, "three"),
    (NO_EOL, 2, 1, "two\n"),
    (NO_EOL, 2, None, "two\nthree"),
    (NO_EOL, 4, None, ""),
    (CRLF, 2, 1, "two\r\n"),  # CRLF endings kept
    (CRLF, 3, None, "three\r\n"),
    (CRLF, None, 2, "one\r\ntwo\r\n"),
    ("a\rb\nc\n", 2, None, "c\n"),  # a lone CR does not end a line
    ("a\x0cb\u2028c\nd\n", 2, 1, "d\n"),  # nor do form feeds or U+2028
    ("", None, None, ""),
    ("", 1, None, ""),
    ("", 1, 1, ""),
    ("", None, 0, ""),
    ("\n", 1, None, "\n"),
    ("\n", 2, None, ""),
    ("\n\n\n", 2, 1, "\n"),
    ("x", 1, 1, "x"),
]


@pytest.mark.parametrize(("text", "line", "limit", "expected"), CASES)
def test_slice(text, line, limit, expected):
    assert slice_lines(text, line, limit) == expected


@pytest.mark.parametrize(("text", "count"), [("", 0), ("a", 1), ("a\n", 1), ("a\nb", 2), ("\n\n", 2), (CRLF, 3)])
def test_line_count(text, count):
    assert line_count(text) == count


def test_slices_reassemble_the_text():
    text = "".join(f"line {n}\r\n" if n % 3 else f"line {n}\n" for n in range(1, 50)) + "tail"
    pieces = [slice_lines(text, start, 7) for start in range(1, line_count(text) + 1, 7)]
    assert "".join(pieces) == text
