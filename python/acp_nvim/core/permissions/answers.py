"""The answers a permission request gets, and what its prompt shows: everything, uncut and visible."""

from __future__ import annotations

import json
import os
import re
import shlex
import unicodedata

from acp.schema import AllowedOutcome, DeniedOutcome, PermissionOption, RequestPermissionResponse

from ..port import PermissionChoice, PermissionQuestion
from ..transcript.tool_calls import ToolCallState
from .command import env_pairs, from_input, path_problems
from .exec_tables import changes_what_runs
from .rules import RuleOffer

RUN_LENGTH = 8
"""A run of this many equal spaces or invisible characters is shown as one count."""
HIDDEN = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
COMMAND_KEYS = ("command", "cmd")


def question_for(session_key: str, state: ToolCallState, options: list[PermissionOption],
                 offers: dict[str, RuleOffer] | None = None, workspace: str | None = None) -> PermissionQuestion:
    """The question the user is asked about a tool call and the agent's options.

    ``offers`` holds, per "always" kind, the rule that answer would store (or why none);
    ``workspace`` the folder a command's path words are checked against (links, paths outside).
    """
    choices = tuple(PermissionChoice(o.option_id, o.name, o.kind) for o in options)
    offered = {c.kind for c in choices}
    rules, reasons = {}, []
    for kind, offer in (offers or {}).items():
        if kind not in offered:
            continue
        if offer.rule is not None:
            rules[kind] = offer.rule.describe()
        elif offer.reason:
            reasons.append(offer.reason)
    title = f"{state.shown_title()} — asked by {state.asker}" if state.asker else state.shown_title()
    return PermissionQuestion(session_key=session_key, title=visible(title), kind=state.kind,
                              detail=describe_request(state, workspace), choices=choices, rules=rules,
                              no_rule=reasons[0] if reasons else "")


def describe_request(state: ToolCallState, workspace: str | None = None) -> str:
    """What the prompt shows, in full: an execute request's command (argv or shell lines), folder,
    environment and the words that name a link or a path outside ``workspace``, or any other raw
    input as indented JSON; then the locations. Every character that does not print as itself is
    shown escaped (``visible``)."""
    raw = state.raw_input
    if isinstance(raw, dict) and any(isinstance(raw.get(k), (str, list)) and raw.get(k) for k in COMMAND_KEYS):
        lines = _execute_lines(raw)
        command = from_input(raw) if workspace else None
        if command is not None and workspace:
            lines += [visible(f"⚠ {problem}") for problem in path_problems(command, workspace)]
    elif raw not in (None, {}):
        lines = [visible(line) for line in json.dumps(raw, indent=2, ensure_ascii=False, default=str).split("\n")]
    else:
        lines = []
    lines += [f"→ {visible(path)}{f':{line}' if line else ''}" for path, line in state.locations]
    return "\n".join(lines)


def _execute_lines(raw: dict[str, object]) -> list[str]:
    key = next(k for k in COMMAND_KEYS if isinstance(raw.get(k), (str, list)) and raw.get(k))
    command = raw[key]
    lines: list[str] = []
    if isinstance(command, str):
        first, *more = command.split("\n")
        lines = [f"$ {visible(first)}", *(f"  {visible(line)}" for line in more)]
        if more:
            lines.append(f"  ({len(more) + 1} lines: each one is a command)")
    elif isinstance(command, list):
        words = [w if isinstance(w, str) else json.dumps(w, default=str) for w in command]
        lines = [f"$ {visible(shlex.join(words))}", f"  (argv: {len(words)} words, run without a shell)"]
    lines.append(_cwd_line(raw.get("cwd")))
    lines += _env_lines(raw.get("env"))
    for name, value in raw.items():
        if name not in (key, "cwd", "env"):
            lines.append(visible(f"{name}: {json.dumps(value, ensure_ascii=False, default=str)}"))
    return lines


def _cwd_line(cwd: object) -> str:
    if cwd is None:
        return "in: the session's folder (the request names none)"
    if not isinstance(cwd, str):
        return visible(f"in: {json.dumps(cwd, default=str)} (not a path)")
    real = os.path.realpath(cwd) if os.path.isabs(cwd) and "\0" not in cwd else cwd
    return visible(f"in: {cwd}" + (f" (real path {real})" if real != cwd else ""))


def _env_lines(env: object) -> list[str]:
    pairs = env_pairs(env)
    if pairs is None:
        return [visible(f"env (not names and values): {json.dumps(env, ensure_ascii=False, default=str)}")]
    return [visible(f"env: {name}={value}") + ("  ⚠ changes what runs" if changes_what_runs(name) else "")
            for name, value in pairs]


def visible(text: str) -> str:
    """``text`` with every character that does not print as itself escaped (``\\x1b``, ``\\n``,
    ``<U+202E>``: controls, bidi and zero-width characters, odd spaces) and runs of
    ``RUN_LENGTH`` or more equal spaces or escaped characters compressed with a count."""
    out = []
    for match in re.finditer(r"(.)\1*", text, re.S):
        run, char = match.group(), match.group(1)
        shown = _escape(char)
        if len(run) >= RUN_LENGTH and (char == " " or shown != char):
            out.append(f"⟨{len(run)} × {'space' if char == ' ' else shown}⟩")
        else:
            out.append(shown * len(run))
    return "".join(out)


def _escape(char: str) -> str:
    if char == " ":
        return char
    category = unicodedata.category(char)
    if category == "Cc":
        return {"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(char, f"\\x{ord(char):02x}")
    if category in HIDDEN or category == "Zs":
        return f"<U+{ord(char):04X}>"
    return char


def selected(choice: PermissionChoice) -> RequestPermissionResponse:
    return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=choice.option_id))


def selected_or_cancelled(choice: PermissionChoice | None) -> RequestPermissionResponse:
    return selected(choice) if choice is not None else cancelled()


def cancelled() -> RequestPermissionResponse:
    return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
