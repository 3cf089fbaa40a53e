"""The table ``require('acp_nvim.review').open`` receives for a core ``Review``."""

from __future__ import annotations

from typing import Any

from ...core.permissions.review import FileReview, Review


def review_table(review: Review) -> dict[str, Any]:
    """Session, number and title of the request, and every file's two sides as lines."""
    return {
        "session": review.session_key,
        "number": review.number,
        "title": review.title,
        "kind": review.kind,
        "files": [_file_table(file) for file in review.files],
    }


def _file_table(file: FileReview) -> dict[str, Any]:
    agent = file.agent_text
    return {
        "path": file.path,
        "loaded": file.loaded,
        "left": split_lines(file.base),
        "agent": split_lines(agent),
        "located": file.located,
        "note": file.note,
        "target": file.target,
        "runs_code": file.runs_code,
        "newline": "\r\n" if "\r\n" in agent else "\n",
        "eol": agent.endswith("\n"),
    }


def split_lines(text: str) -> list[str]:
    """Buffer lines of ``text``: no final empty line, no carriage returns of CRLF endings."""
    if text == "":
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]
