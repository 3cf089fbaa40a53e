"""The port through which the core talks to an editor. Neovim implements it; tests fake it.

Every method is required (``tests/unit/test_port.py`` checks both implementations). Besides
the protocol, this module holds the data the two sides exchange: buffer states and writes,
permission questions, reviews and their verdicts, three-way views. Questions to the user are
shown with a ``Ticket`` of ``core/questions.py`` and answered through it, never by the return
value of a port method.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from .questions import Ticket
from .render_ops import RenderOp as RenderOp

Stamp = tuple[int, int, int, int]
"""A file's identity on disk: (inode, size, mtime seconds, mtime nanoseconds). Two stamps that
differ mean the file was replaced or written in between."""

FileId = tuple[int, int]
"""Which file on disk: (device, inode)."""

NEW_FILE: FileId = (0, 0)
"""The ``source`` of a buffer that was never read from a file (a new file, not written yet)."""


@dataclass(frozen=True, slots=True)
class PermissionChoice:
    """One option offered to the user, as the agent named it."""

    option_id: str
    name: str
    kind: str


@dataclass(frozen=True, slots=True, eq=False)
class PermissionQuestion:
    """What the user is asked: a tool call and the agent's options.

    ``rules`` maps an "always" option's kind (``allow_always``, ``reject_always``) to the rule that
    answer stores, in words, shown to the user before it is stored; an "always" option missing
    from it is not offered, and ``no_rule`` says why.
    """

    session_key: str
    title: str
    kind: str
    detail: str
    choices: tuple[PermissionChoice, ...]
    rules: Mapping[str, str] = field(default_factory=dict)
    no_rule: str = ""


@dataclass(frozen=True, slots=True)
class FormField:
    """One field of an agent's question form, as the user sees it.

    ``kind`` is ``string``, ``number``, ``integer``, ``boolean``, ``enum`` (one of ``choices``) or
    ``multi`` (any of ``choices``, written ``a, b``); ``value`` is the text the line starts with (the
    default); ``hint`` says what the value may be (type, choices, limits).
    """

    key: str
    title: str
    kind: str
    required: bool
    value: str
    hint: str
    description: str = ""
    choices: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, eq=False)
class QuestionForm:
    """What the agent asks the user (``elicitation/create``): a form, or (``url`` set) a URL to open.

    ``scope`` says what it belongs to: the session, a tool call (``tool`` its title) or a request.
    The editor answers the ticket with ``{"action": "accept", "values": {key: text}}``,
    ``{"action": "decline"}`` or ``{"action": "cancel"}`` (None: dismissed, the same as cancel).
    """

    session_key: str
    agent: str
    number: int
    message: str
    scope: str
    tool: str = ""
    fields: tuple[FormField, ...] = ()
    url: str = ""
    host: str = ""


@dataclass(frozen=True, slots=True)
class BufferState:
    """A loaded buffer's text as it would be written (line endings, final newline, BOM)."""

    path: str
    text: str
    tick: int
    """``b:changedtick``: any change to the buffer (and each save) increments it."""
    modified: bool
    disk: Stamp | None = None
    """The file on disk as the buffer knows it (read, written or synced); None: no file (or unknown)."""
    source: FileId | None = None
    """The file the buffer's text was last read from or written to (``NEW_FILE``: none, the buffer
    is a new file); None: unknown. The buffer is the view of the file at ``path`` only while that
    file is this one."""


@dataclass(frozen=True, slots=True)
class BufferWrite:
    """Outcome of ``apply_to_buffer``: ``applied``, ``not_loaded``, ``conflict``, ``disk_changed`` or
    ``error``. ``applied``: the text is in the buffer, not yet on disk: the caller writes the file
    and then calls ``finish_buffer_write``."""

    status: str
    tick: int = 0
    text: str = ""
    """On ``applied`` with ``with_before``: the text before; on ``conflict`` and ``disk_changed``: the
    buffer's text (the user's); on ``error``: the reason."""
    encoding: str = ""
    """On ``applied``: the buffer's 'fileencoding' (the file is written in it; '' is UTF-8)."""


@dataclass(frozen=True, slots=True)
class ThreeWay:
    """A three-way view: the user's buffer, the agent's text and the base they both come from.

    ``purpose`` is ``write`` (the agent's write waits for the decision) or ``disk`` (the agent
    already wrote the disk; the buffer has unsaved changes).
    """

    path: str
    base: str | None
    agent: str
    purpose: str
    title: str = ""
    base_title: str = ""
    """What the base is, when it is not the text both come from (``on disk now``)."""
    theirs: str = ""
    """What the other side is, when it is not the agent's text (``BEFORE turn 2``, a rewind's)."""
    load: bool = False
    """Load the file into a buffer first when none holds it (a rewind of a file the user saved since)."""


@dataclass(slots=True)
class FileReview:
    """One file of a review: the text now, the agent's whole-file proposal, how it was found."""

    path: str
    current: str | None
    loaded: bool
    agent_text: str
    located: str
    note: str = ""
    snippet_old: str = ""
    target: str = ""
    """The file a write lands in when ``path`` leads elsewhere (a link on the way); "" when it is ``path``."""
    runs_code: bool = False
    """The file written configures code execution (``permissions/exec_files.py``)."""

    @property
    def snippet_only(self) -> bool:
        """The edit could not be placed in the file: the review shows the diff as sent."""
        return self.located == "not-found"

    @property
    def base(self) -> str:
        """The left side of the review."""
        if self.snippet_only:
            return self.snippet_old
        return self.current or ""


@dataclass(slots=True)
class Review:
    """Every file of one permission request (built by ``core/permissions/review.py``)."""

    session_key: str
    number: int
    title: str
    kind: str
    files: list[FileReview] = field(default_factory=list)


MAX_COMMENTS = 50
"""Review comments kept per file (more are dropped: the agent reads them in a prompt)."""
MAX_COMMENT_CHARS = 2000
"""Characters kept of one comment, and of the lines it quotes."""
COMMENT_SIDES = ("proposal", "current")


@dataclass(frozen=True, slots=True)
class ReviewComment:
    """A comment the user wrote on lines ``first``..``last`` (1-based) of one side of a review:
    ``proposal`` (the agent's text as the user left it) or ``current`` (the file before the edit)."""

    path: str
    first: int
    last: int
    side: str
    text: str
    quote: str = ""
    """The commented lines as they read when the verdict was given."""

    @staticmethod
    def from_editor(path: str, data: object) -> ReviewComment | None:
        """One comment of the editor's verdict, or None when it is not one (no text, no line)."""
        if not isinstance(data, dict):
            return None
        text, first, last = data.get("text"), data.get("first"), data.get("last", data.get("first"))
        if not isinstance(text, str) or not text.strip() or not isinstance(first, int) or not isinstance(last, int):
            return None
        first, last = sorted((max(first, 1), max(last, 1)))
        side = data.get("side") if data.get("side") in COMMENT_SIDES else "proposal"
        quote = data.get("quote")
        return ReviewComment(path, first, last, str(side), text.strip()[:MAX_COMMENT_CHARS],
                             quote[:MAX_COMMENT_CHARS] if isinstance(quote, str) else "")

    @property
    def lines(self) -> str:
        """``line 3`` or ``lines 3-5``."""
        return f"line {self.first}" if self.first == self.last else f"lines {self.first}-{self.last}"


@dataclass(frozen=True, slots=True)
class FileVerdict:
    """The user's decision on one file: ``text`` is what they accepted (None: file rejected)."""

    path: str
    text: str | None
    comments: tuple[ReviewComment, ...] = ()


@dataclass(frozen=True, slots=True)
class ReviewVerdict:
    """The user's decision on a whole review: the answer of a review's ticket."""

    files: tuple[FileVerdict, ...]
    error: str = ""
    """Set when the editor could not show the review (the request is then asked plainly)."""

    @property
    def accepted(self) -> bool:
        return any(f.text is not None for f in self.files)

    @property
    def comments(self) -> list[ReviewComment]:
        """Every file's comments, in file order."""
        return [comment for file in self.files for comment in file.comments]

    @staticmethod
    def from_editor(data: object) -> ReviewVerdict:
        """Parse the editor's answer: ``{"files": [{"path": ..., "text": ... or None, "comments": [...]}],
        "error": ...}``.

        Entries without a path are skipped; a file whose text is not a string counts as rejected;
        a comment that is not one (``ReviewComment.from_editor``) is skipped.
        """
        raw = data if isinstance(data, dict) else {}
        files = raw.get("files")
        verdicts = []
        for item in files if isinstance(files, list) else []:
            if isinstance(item, dict) and item.get("path") is not None:
                text, path = item.get("text"), str(item["path"])
                raw_comments = item.get("comments")
                comments = [ReviewComment.from_editor(path, c)
                            for c in (raw_comments if isinstance(raw_comments, list) else [])[:MAX_COMMENTS]]
                verdicts.append(FileVerdict(path, text if isinstance(text, str) else None,
                                            tuple(c for c in comments if c is not None)))
        return ReviewVerdict(tuple(verdicts), str(raw.get("error") or ""))


# -- terminals (core/terminal) ----------------------------------------------------------

@dataclass(frozen=True, slots=True)
class TerminalSpec:
    """A command the agent asked to run (``terminal/create``), already checked and confined.

    ``cwd`` is a real path; ``cwd_id`` the folder's identity (``dev:ino``) when the command was
    approved: the editor starts the command only if the folder there is still that one.
    """

    terminal_id: str
    session_key: str
    command: str
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    cwd: str
    cwd_id: str = ""
    box: tuple[str, ...] = ()
    """The agent's box around the command (``bwrap … --``), or () where the agent is unboxed."""


class TerminalSink(Protocol):
    """Where the editor sends a running terminal's output and its exit."""

    def output(self, data: bytes) -> None:
        """More output, as the command wrote it (any bytes, not cut at characters)."""

    def exited(self, code: int | None) -> None:
        """The command ended; ``code`` as the editor reports it (128 + n after signal n)."""


class EditorPort(Protocol):
    """What the core needs from the editor. Every method is safe to call from the event loop."""

    # -- buffers -------------------------------------------------------------------

    async def buffer_text(self, path: str) -> str | None:
        """The text of the loaded buffer for ``path`` (unsaved edits included), or None."""

    async def read_buffer(self, path: str) -> BufferState | None:
        """The loaded buffer of ``path`` (unsaved edits included) with its changedtick, or None."""

    async def apply_to_buffer(self, path: str, content: str, expected_tick: int | None,
                              with_before: bool = False, disk: Stamp | None = None) -> BufferWrite:
        """Put ``content`` into the loaded buffer as one undo step (not saved: see ``BufferWrite``).

        Refused (``conflict``) when the buffer has unsaved changes and its changedtick is not
        ``expected_tick`` (the tick the agent last read); refused (``disk_changed``) when ``disk``,
        the file's stamp now, is not the one the buffer knows (someone changed the file behind
        it). ``not_loaded``: no buffer holds it. ``with_before``: ``text`` is the text before.
        """

    async def finish_buffer_write(self, path: str, tick: int, stamp: Stamp | None) -> str:
        """After ``applied`` (the buffer at ``tick``): ``stamp`` is the file just written with the
        buffer's text: the buffer is saved and knows it; None: the write failed and the edit is
        taken back. Returns ``saved``, ``undone``, or ``kept`` when the user typed meanwhile
        (their text stays, unsaved), or ``not_loaded``."""

    async def reload_buffer(self, path: str, content: str, stamp: Stamp | None = None) -> str:
        """Bring a clean buffer up to date with the disk's ``content`` (``stamp``), keeping the view.

        Returns ``reloaded``, ``modified`` (unsaved changes: untouched) or ``not_loaded``.
        """

    async def sync_buffer(self, path: str, stamp: Stamp | None = None) -> None:
        """Tell the editor the buffer knows the file on disk as it is now (``stamp``; None: stat it):
        no reload prompt, and later writes compare against it."""

    async def loaded_files(self) -> list[tuple[str, bool, int]]:
        """(resolved path, modified, changedtick) of every loaded file buffer."""

    # -- questions: shown here, answered through the ticket -----------------------------

    def show_permission(self, ticket: Ticket, question: PermissionQuestion) -> None:
        """Ask the user; answer ``ticket`` with the chosen option id, or None when dismissed."""

    def show_review(self, ticket: Ticket, question: PermissionQuestion, review: Review) -> None:
        """Show the review (or queue it behind the open one); answer ``ticket`` with a ``ReviewVerdict``."""

    def show_three_way(self, ticket: Ticket, request: ThreeWay) -> None:
        """Show the user's text, the agent's and the base; answer ``agent``, ``mine`` or ``gone``."""

    def show_choice(self, ticket: Ticket, prompt: str, items: list[str]) -> None:
        """Let the user pick one of ``items``; answer its index (as text), or None when dismissed."""

    def show_question(self, ticket: Ticket, form: QuestionForm) -> None:
        """Show the agent's question (a form buffer, or a URL to open after a yes); answer ``ticket``
        as ``QuestionForm`` says."""

    def mark_question(self, ticket: Ticket, problems: Mapping[str, str]) -> None:
        """The answer did not validate: mark each field's line with its reason (key → reason) and
        let the user answer ``ticket`` again."""

    def dismiss(self, ticket: Ticket) -> None:
        """Close the view of ``ticket``, already answered (the turn was cancelled, the agent withdrew it)."""

    # -- terminals: pty jobs shown in editor terminal buffers ---------------------------

    async def start_terminal(self, spec: TerminalSpec, sink: TerminalSink) -> int:
        """Run ``spec`` as a pty job in a terminal buffer; its pid. OSError when it cannot start."""

    def kill_terminal(self, terminal_id: str) -> None:
        """Stop the job (its exit is still reported through the sink)."""

    def release_terminal(self, terminal_id: str) -> None:
        """Stop the job if it runs and forget it; its buffer is wiped unless a window shows it."""

    # -- the rest ------------------------------------------------------------------

    async def state_dir(self) -> str:
        """A folder where the plugin may keep files (remembered rules, rejected proposals); '' for none."""

    def render(self, session_key: str, ops: list[RenderOp]) -> None:
        """Apply transcript render operations to the session's chat view (fire-and-forget)."""

    def session_changed(self, session_key: str) -> None:
        """Session state (running, mode, usage, ...) changed: refresh status displays."""

    def notify(self, message: str, level: str = "info") -> None:
        """Tell the user something (prefixed by the editor layer)."""
