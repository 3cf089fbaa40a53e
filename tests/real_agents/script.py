"""What the scripted model says next: scenario markers in the prompt, steps by tool results seen.

The model is stateless: each request carries the whole conversation. The last user text that
holds a marker such as ``[scenario=edit file=/abs/path old=answer_41 new=answer_42]`` picks
the script; the number of tool results after it picks the step. Tool and argument names
come from the request's own tool list (see ``tools.py``), so one script serves every agent.
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

from acp_nvim.core.conversation.prompt import CONTEXT_INTRO, REWIND_INTRO

MARKER = re.compile(r"\[scenario=([a-z_-]+)((?:\s+[a-z_]+=[^\s\]]+)*)\]")
TEXT_DELAY = 0.01
SLOW_DELAY = 0.05
SLOW_CHUNKS = 600
HOLD_AFTER = 10


@dataclass(slots=True)
class Turn:
    """The conversation as the scripted model needs it, whatever API carried it."""

    items: list[tuple[str, str]] = field(default_factory=list)  # ("user"|"tool_result"|"assistant", text)
    tools: dict[str, ToolShape] = field(default_factory=dict)
    wants_json: dict[str, Any] | None = None
    images: list[MediaPart] = field(default_factory=list)
    """Image (and audio) parts of the conversation, as the API carried them."""
    searches: int = 0
    """Tool searches the agent answered (Codex's ``tool_search``: the tools it found are in ``tools``)."""

    def add(self, role: str, text: str) -> None:
        self.items.append((role, text))

    def add_media(self, api_shape: str, mime_type: str, data: str) -> None:
        self.images.append(MediaPart(api_shape, mime_type, data))


@dataclass(frozen=True, slots=True)
class MediaPart:
    """One image or audio part: the API's shape for it (``anthropic image``, ``image_url``, ...),
    its media type and its base64 data."""

    shape: str
    mime_type: str
    data: str

    def fingerprint(self) -> str:
        """'<shape> <mime> sha=<12 hex of the decoded bytes>': what the scripted model reports."""
        try:
            digest = hashlib.sha256(base64.b64decode(self.data, validate=True)).hexdigest()[:12]
        except ValueError:
            digest = "not-base64"
        return f"{self.shape.replace(' ', '_')} {self.mime_type} sha={digest}"


def data_url(url: str) -> tuple[str, str] | None:
    """(mime type, base64 data) of a ``data:<mime>;base64,<data>`` URL."""
    match = re.match(r"data:([^;,]+);base64,(.*)$", url, re.S)
    return (match.group(1), match.group(2)) if match else None


@dataclass(slots=True)
class ToolShape:
    """One tool the agent offered: its argument names, and whether it takes free-form text."""

    name: str
    params: set[str]
    freeform: bool = False


@dataclass(slots=True)
class ToolCall:
    """A tool call to emit: ``args`` is a JSON object, or ``text`` for a free-form tool."""

    name: str
    args: dict[str, Any] | None = None
    text: str | None = None


@dataclass(slots=True)
class Reply:
    """The next model message: streamed text chunks, then at most one tool call."""

    chunks: list[str] = field(default_factory=list)
    delay: float = TEXT_DELAY
    call: ToolCall | None = None
    usage: tuple[int, int] = (1200, 34)
    error: str | None = None  # the script could not bind a step to this request's tools
    hold: tuple[int, str] | None = None
    """(n, scenario): after n chunks the stream pauses until the model is asked for that scenario
    (``ModelServer.wait_asked``): a turn that must still be streaming when the test acts is, however
    slowly the machine runs."""


@dataclass(slots=True)
class Scenario:
    name: str
    params: dict[str, str]
    step: int
    last_result: str


CARRIED = tuple(intro.split(",")[0] for intro in (CONTEXT_INTRO, REWIND_INTRO))
"""How the conversation acp.nvim carries into a new session begins: its markers are history, not a request."""


def find_scenario(turn: Turn) -> Scenario | None:
    """The marker of the last user text that has one (not in a carried conversation), and how many
    tool results followed it."""
    for index in range(len(turn.items) - 1, -1, -1):
        role, text = turn.items[index]
        carried = any(start in text[:2000] for start in CARRIED) and not MARKER.match(text.lstrip())
        match = MARKER.search(text) if role == "user" and not carried else None
        if match:
            later = [t for r, t in turn.items[index + 1:] if r == "tool_result"]
            params = dict(p.split("=", 1) for p in match.group(2).split())
            return Scenario(match.group(1), params, len(later), later[-1] if later else "")
    return None


def reply_for(turn: Turn) -> Reply:
    """The whole decision: side requests get plain text, scenario steps get their script."""
    scenario = find_scenario(turn)
    if not turn.tools or scenario is None:
        return Reply(chunks=["Scripted title"])
    with_turn = SCRIPTS_WITH_TURN.get(scenario.name)
    script = SCRIPTS.get(scenario.name)
    if script is None and with_turn is None:
        return Reply(chunks=[f"unknown scenario {scenario.name!r}"], error=f"unknown scenario {scenario.name!r}")
    try:
        if with_turn is not None:
            return with_turn(scenario, turn.tools, turn)
        assert script is not None
        return script(scenario, turn.tools)
    except NoTool as exc:  # e.g. a side request that offers other tools: answer in words
        return Reply(chunks=[f"scripted model: {exc}"], error=str(exc))


# -- scripts -------------------------------------------------------------------------


def _words(text: str) -> list[str]:
    return [w + " " for w in text.split(" ")]


def script_text(sc: Scenario, tools: dict[str, ToolShape]) -> Reply:
    return Reply(chunks=_words("Streamed reply: alpha beta gamma delta epsilon, all done."))


def script_recall(sc: Scenario, tools: dict[str, ToolShape], turn: Turn) -> Reply:
    """What an earlier prompt of the conversation asked to remember (``remember=WORD``), if it is there."""
    words = [m for role, text in turn.items if role == "user" for m in re.findall(r"remember=([\w-]+)", text)]
    return Reply(chunks=_words(f"Recall: {words[0]} is in the conversation." if words else "Recall: nothing earlier."))


def script_recall_all(sc: Scenario, tools: dict[str, ToolShape], turn: Turn) -> Reply:
    """Every ``remember=WORD`` of the conversation, in order: what the model still sees of earlier turns."""
    words = [m for role, text in turn.items if role == "user" for m in re.findall(r"remember=([\w-]+)", text)]
    return Reply(chunks=_words("Recall-all: " + (" ".join(dict.fromkeys(words)) or "nothing") + " ."))


def script_slow(sc: Scenario, tools: dict[str, ToolShape]) -> Reply:
    """``chunks`` ticks, slowly; with ``until=SCENARIO`` the stream holds after ``HOLD_AFTER`` ticks until
    a request of that scenario comes (a steered prompt pre-empts the held stream)."""
    count = int(sc.params.get("chunks", SLOW_CHUNKS))
    until = sc.params.get("until")
    return Reply(chunks=[f"tick{i} " for i in range(count)], delay=SLOW_DELAY,
                 hold=(HOLD_AFTER, until) if until else None)


def script_read(sc: Scenario, tools: dict[str, ToolShape]) -> Reply:
    if sc.step == 0:
        return Reply(chunks=["Reading the file. "], call=read_call(tools, sc.params["file"]))
    expect = sc.params.get("expect", "")
    verdict = f"read-ok {expect}" if expect and expect in sc.last_result else f"read-missing {expect}"
    return Reply(chunks=_words(verdict))


def script_edit(sc: Scenario, tools: dict[str, ToolShape]) -> Reply:
    path, old, new = sc.params["file"], sc.params["old"], sc.params["new"]
    if sc.step == 0:
        return Reply(chunks=["Reading before the edit. "], call=read_call(tools, path))
    if sc.step == 1:
        return Reply(chunks=["Editing. "], call=edit_call(tools, path, old, new))
    return Reply(chunks=_words("edit-finished."))


def script_new_file(sc: Scenario, tools: dict[str, ToolShape]) -> Reply:
    if sc.step == 0:
        text = sc.params["text"].replace("+", " ") + "\n"
        return Reply(chunks=["Creating the file. "], call=write_call(tools, sc.params["file"], text))
    return Reply(chunks=_words("new-file-finished."))


def script_shell(sc: Scenario, tools: dict[str, ToolShape]) -> Reply:
    if sc.step == 0:
        return Reply(chunks=["Running a command. "], call=shell_call(tools, sc.params["cmd"].replace("+", " "),
                                                                   writes=True))
    return Reply(chunks=_words("shell-finished."))


PLAN = ["Write the scripted plan", "Check it"]


def script_plan(sc: Scenario, tools: dict[str, ToolShape]) -> Reply:
    if "TaskCreate" in tools and sc.step < len(PLAN):  # Claude Code's task tools: one entry per call
        return Reply(chunks=["Planning. "], call=ToolCall("TaskCreate", {
            "subject": PLAN[sc.step], "description": PLAN[sc.step], "activeForm": PLAN[sc.step]}))
    if "TaskCreate" not in tools and sc.step == 0:
        return Reply(chunks=["Planning. "], call=plan_call(tools, PLAN))
    return Reply(chunks=_words("plan-finished."))


def script_image(sc: Scenario, tools: dict[str, ToolShape], turn: Turn) -> Reply:
    """Report every image part the request carries (after the marker's message)."""
    seen = [part.fingerprint() for part in turn.images]
    return Reply(chunks=_words("image-seen " + " | ".join(seen) if seen else "image-missing"))


def script_editor_diagnostics(sc: Scenario, tools: dict[str, ToolShape], turn: Turn) -> Reply:
    """Call the editor's ``diagnostics`` tool (the MCP server ``nvim``) for ``file``, then report."""
    if sc.step == 0:
        search = search_call(tools, turn, "diagnostics")
        if search is not None:
            return Reply(chunks=["Looking for the editor's tools. "], call=search, delay=search_delay(turn))
        tool = editor_tool(tools, "diagnostics")
        return Reply(chunks=["Asking the editor. "], call=ToolCall(tool.name, {"path": sc.params["file"]}))
    expect = sc.params.get("expect", "").replace("+", " ")
    verdict = f"diagnostics-ok {expect}" if expect and expect in sc.last_result else "diagnostics-missing"
    return Reply(chunks=_words(verdict))


def script_mcp_probe(sc: Scenario, tools: dict[str, ToolShape], turn: Turn) -> Reply:
    """Call ``reveal`` of the configured stdio MCP server ``probe`` (tests/real_agents/probe_mcp.py)."""
    if sc.step == 0:
        search = search_call(tools, turn, "reveal", server="probe")
        if search is not None:
            return Reply(chunks=["Looking for the probe's tools. "], call=search, delay=search_delay(turn))
        tool = editor_tool(tools, "reveal", server="probe")
        return Reply(chunks=["Asking the probe. "], call=ToolCall(tool.name, {"what": "env"}))
    return Reply(chunks=_words("probe-ok" if "probe-env-ok" in sc.last_result else "probe-missing"))


ASK_QUESTION = {"question": "Which color should the button be?", "header": "Color", "multiSelect": False,
                "options": [{"label": "Red", "description": "warm"}, {"label": "Blue", "description": "cold"}]}


def script_ask(sc: Scenario, tools: dict[str, ToolShape]) -> Reply:
    """Call Claude Code's ``AskUserQuestion`` (claude-agent-acp turns it into a form elicitation),
    then say what the tool result carried: the user's pick, or that they declined."""
    if sc.step == 0:
        if "AskUserQuestion" not in tools:
            raise NoTool("AskUserQuestion is not offered (the client advertised no elicitation.form?)")
        return Reply(chunks=["Asking you. "], call=ToolCall("AskUserQuestion", {"questions": [ASK_QUESTION]}))
    picked = next((label for label in ("Blue", "Red") if f'="{label}"' in sc.last_result), None)
    return Reply(chunks=_words(f"ask-picked {picked}" if picked else "ask-unanswered"))


def script_mcp_ask(sc: Scenario, tools: dict[str, ToolShape], turn: Turn) -> Reply:
    """Call ``ask`` of the stdio MCP server ``probe``: its elicitation reaches the user."""
    if sc.step == 0:
        search = search_call(tools, turn, "ask", server="probe")
        if search is not None:
            return Reply(chunks=["Looking for the probe's tools. "], call=search, delay=search_delay(turn))
        tool = editor_tool(tools, "ask", server="probe")
        return Reply(chunks=["Asking through the probe. "], call=ToolCall(tool.name, {}))
    answer = re.search(r"probe-asked (accept \w+|decline|cancel)", sc.last_result)
    return Reply(chunks=_words(f"mcp-answer {answer.group(1)}" if answer else "mcp-answer-missing"))


def script_steered(sc: Scenario, tools: dict[str, ToolShape]) -> Reply:
    """The reply to a prompt steered into a running turn (its own marker is the last one)."""
    return Reply(chunks=_words(f"steered-reply {sc.params.get('word', '')} reached the model."))


SUBAGENT_TOOLS = ("Agent", "Task")
"""Claude Code's tool that runs a subagent (its name changed between releases)."""


def script_subagent(sc: Scenario, tools: dict[str, ToolShape]) -> Reply:
    """Run a subagent (Claude Code's Agent/Task tool) whose prompt carries its own marker
    (``sub_read``), then say what its result said."""
    if sc.step == 0:
        tool = _pick(tools, *SUBAGENT_TOOLS)
        if tool is None:
            raise NoTool(f"no subagent tool among {sorted(tools)}")
        args = {_param(tool, "description"): "Read the target",
                _param(tool, "prompt"): f"[scenario=sub_read file={sc.params['file']}] read it for me"}
        if "subagent_type" in tool.params:
            args["subagent_type"] = "general-purpose"
        if "run_in_background" in tool.params:  # wait for its result: the answer quotes it
            args["run_in_background"] = False
        return Reply(chunks=["Delegating. "], call=ToolCall(tool.name, args))
    verdict = "subagent-ok" if "sub-read-done" in sc.last_result else "subagent-missing"
    return Reply(chunks=_words(verdict))


def script_sub_read(sc: Scenario, tools: dict[str, ToolShape]) -> Reply:
    """The subagent's own conversation: read the file, then report."""
    if sc.step == 0:
        return Reply(chunks=["Subagent reading. "], call=read_call(tools, sc.params["file"]))
    return Reply(chunks=_words("sub-read-done: the subagent read the file."))


def script_limit_once(sc: Scenario, tools: dict[str, ToolShape]) -> Reply:
    """What the model says once the server stopped answering 429 (``ModelServer.limited``)."""
    return Reply(chunks=_words("limit-lifted-reply: the retried prompt reached the model."))


SCRIPTS_WITH_TURN = {"mcp_ask": script_mcp_ask, "image": script_image, "editor_diagnostics": script_editor_diagnostics,
                     "mcp_probe": script_mcp_probe, "recall": script_recall, "recall_all": script_recall_all}
"""Scripts that read more of the request than the tools (its images, the conversation)."""

SCRIPTS = {
    "text": script_text,
    "slow": script_slow,
    "read": script_read,
    "edit": script_edit,
    "shell": script_shell,
    "new_file": script_new_file,
    "plan": script_plan,
    "ask": script_ask,
    "steered": script_steered,
    "limit_once": script_limit_once,
    "subagent": script_subagent,
    "sub_read": script_sub_read,
}


# -- binding abstract actions to the tools this agent offers ---------------------------


TOOL_SEARCH = "tool_search"
"""The tool-search tool of the Responses API: its call is a ``tool_search_call`` item."""
SEARCHES = 12


def search_delay(turn: Turn) -> float:
    """How long to wait before searching again: a server that was not found may still be starting."""
    return 0.5 if turn.searches else TEXT_DELAY


class NoTool(LookupError):
    """The agent offered no tool for an action the script needs."""


def _pick(tools: dict[str, ToolShape], *names: str) -> ToolShape | None:
    for name in names:
        if name in tools:
            return tools[name]
    return None


def _param(tool: ToolShape, *names: str) -> str:
    for name in names:
        if name in tool.params:
            return name
    raise NoTool(f"tool {tool.name} has none of the arguments {names}; it has {sorted(tool.params)}")


def editor_tool(tools: dict[str, ToolShape], name: str, server: str = "nvim") -> ToolShape:
    """The tool ``name`` of MCP server ``server`` (the editor's by default) as this agent names it
    (``mcp__nvim__diagnostics``, ``nvim_diagnostics``, ``nvim__diagnostics``, or plain ``diagnostics``)."""
    for candidate in (f"mcp__{server}__{name}", f"{server}_{name}", f"{server}__{name}", f"{server}.{name}",
                      f"mcp_{server}_{name}", name):
        if candidate in tools:
            return tools[candidate]
    found = [t for t in tools if t.endswith(name) and server in t]
    if found:
        return tools[found[0]]
    raise NoTool(f"no editor tool {name!r} among {sorted(tools)}")


def search_call(tools: dict[str, ToolShape], turn: Turn, name: str, server: str = "nvim") -> ToolCall | None:
    """A ``tool_search`` for MCP tool ``name`` when the agent defers its MCP tools behind one (Codex
    0.166) and no search has found it yet; None when the tool is offered (or searches gave up).
    An MCP server still starting is not searched yet: the search is repeated, ``SEARCHES`` times."""
    if TOOL_SEARCH not in tools or turn.searches >= SEARCHES:
        return None
    try:
        editor_tool(tools, name, server)
    except NoTool:
        return ToolCall(TOOL_SEARCH, {"query": f"{server} {name}", "limit": 8})
    return None


def read_call(tools: dict[str, ToolShape], path: str) -> ToolCall:
    tool = _pick(tools, "Read", "read", "read_file")
    if tool is None:
        return shell_call(tools, f"cat {path}")
    return ToolCall(tool.name, {_param(tool, "file_path", "filePath", "absolute_path", "path"): path})


def edit_call(tools: dict[str, ToolShape], path: str, old: str, new: str) -> ToolCall:
    tool = _pick(tools, "Edit", "edit", "replace")
    if tool is not None:
        args = {_param(tool, "file_path", "filePath", "path"): path,
                _param(tool, "old_string", "oldString"): old,
                _param(tool, "new_string", "newString"): new}
        if "instruction" in tool.params:
            args["instruction"] = f"replace {old} with {new}"
        return ToolCall(tool.name, args)
    patch = _pick(tools, "apply_patch")
    if patch is None:
        raise NoTool(f"no edit tool among {sorted(tools)}")
    body = f"*** Begin Patch\n*** Update File: {path}\n@@\n-{old}\n+{new}\n*** End Patch\n"
    if patch.freeform:
        return ToolCall(patch.name, text=body)
    return ToolCall(patch.name, {_param(patch, "input", "patch"): body})


def write_call(tools: dict[str, ToolShape], path: str, text: str) -> ToolCall:
    tool = _pick(tools, "Write", "write", "write_file")
    if tool is not None:
        return ToolCall(tool.name, {_param(tool, "file_path", "filePath", "path"): path,
                                    _param(tool, "content"): text})
    patch = _pick(tools, "apply_patch")
    if patch is None:
        raise NoTool(f"no write tool among {sorted(tools)}")
    added = "".join(f"+{line}\n" for line in text.splitlines())
    body = f"*** Begin Patch\n*** Add File: {path}\n{added}*** End Patch\n"
    return ToolCall(patch.name, text=body) if patch.freeform else ToolCall(patch.name, {"input": body})


def shell_call(tools: dict[str, ToolShape], command: str, writes: bool = False) -> ToolCall:
    """A shell command; one that ``writes`` asks to leave a sandbox, as a real model would."""
    tool = _pick(tools, "Bash", "bash", "run_shell_command", "exec_command", "shell")
    if tool is None:
        raise NoTool(f"no shell tool among {sorted(tools)}")
    args: dict[str, Any] = {_param(tool, "command", "cmd"): command}
    if "description" in tool.params:
        args["description"] = "scripted command"
    if writes and "sandbox_permissions" in tool.params:  # Codex: the sandbox may be read-only
        args.update(sandbox_permissions="require_escalated", justification=f"run {command}?")
    return ToolCall(tool.name, args)


def plan_call(tools: dict[str, ToolShape], steps: list[str]) -> ToolCall:
    if "TodoWrite" in tools:
        todos = [{"content": s, "status": "pending", "activeForm": s} for s in steps]
        return ToolCall("TodoWrite", {"todos": todos})
    if "update_plan" in tools:
        return ToolCall("update_plan", {"plan": [{"step": s, "status": "pending"} for s in steps]})
    tool = _pick(tools, "todowrite", "write_todos")
    if tool is None:
        raise NoTool(f"no plan tool among {sorted(tools)}")
    if tool.name == "todowrite":
        todos = [{"content": s, "status": "pending", "priority": "medium"} for s in steps]
        return ToolCall(tool.name, {"todos": todos})
    return ToolCall(tool.name, {"todos": [{"description": s, "status": "pending"} for s in steps]})


# -- JSON answers (Gemini's side requests with a response schema) ------------------------


def json_for_schema(schema: dict[str, Any] | None) -> Any:
    """A minimal value that satisfies ``schema``: first enum value, empty lists, filled objects."""
    schema = schema or {}
    if schema.get("enum"):
        return schema["enum"][0]
    kind = str(schema.get("type", "object")).lower()
    if kind == "object":
        props = schema.get("properties") or {}
        return {name: json_for_schema(sub) for name, sub in props.items()}
    return {"string": "scripted", "number": 0, "integer": 0, "boolean": False, "array": []}.get(kind)
