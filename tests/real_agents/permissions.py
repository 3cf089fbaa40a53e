"""The ONE place where tests see and answer permission requests in Neovim, as a user would.

Two views hold requests: diff-bearing ones open in the review (``acp_nvim.review``: accept or
reject every file with ``decide_all``), the others wait in the permission float's queue
(``acp_nvim.question.permission``: pick an option with ``choose(id, option_id)``). If either API
changes, change ``PENDING_LUA`` / ``ANSWER_LUA`` here and nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

PENDING_LUA = """
local out = {}
local ok, review = pcall(require, 'acp_nvim.review')
for _, r in ipairs(ok and review.pending() or {}) do
  out[#out + 1] = { view = 'review', id = r.id, title = r.spec.title, kind = r.spec.kind or 'edit',
    options = {} }
end
for _, entry in ipairs(require('acp_nvim.question.permission').pending()) do
  out[#out + 1] = { view = 'permission', id = entry.id, title = entry.q.title, kind = entry.q.kind,
    options = entry.q.options }
end
return out
"""

ANSWER_LUA = """
local view, id, verdict, option_id = ...
if view == 'review' then
  require('acp_nvim.review').decide_all(id, verdict == 'accept' and 'accepted' or 'rejected')
else
  require('acp_nvim.question.permission').choose(id, option_id)
end
"""

VERDICT_KINDS = {"accept": ("allow_once", "allow_always"), "reject": ("reject_once", "reject_always")}


@dataclass(frozen=True, slots=True)
class Request:
    """A pending permission request as the user sees it."""

    view: str  # "review" (vimdiff) or "permission" (float)
    id: int
    title: str
    kind: str
    options: tuple[tuple[str, str], ...]  # (option id, option kind); empty for a review

    def option_for(self, verdict: str) -> str:
        """The option id the user picks for ``verdict`` — chosen by kind, never by id."""
        if self.view == "review":
            return ""
        for kind in VERDICT_KINDS[verdict]:
            for option_id, option_kind in self.options:
                if option_kind == kind:
                    return option_id
        raise AssertionError(f"request {self.title!r} offers no option for {verdict!r}: {self.options}")


def pending(nvim: Any) -> list[Request]:
    """Every permission request waiting for the user (reviews first), oldest first."""
    return [Request(r["view"], int(r["id"]), r["title"], r["kind"],
                    tuple((o["id"], o["kind"]) for o in r["options"]))
            for r in nvim.exec_lua(PENDING_LUA)]


def answer(nvim: Any, request: Request, verdict: str) -> None:
    """Answer ``request`` as the user would: ``verdict`` is "accept" or "reject"."""
    nvim.exec_lua(ANSWER_LUA, request.view, request.id, verdict, request.option_for(verdict))
