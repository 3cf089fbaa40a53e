"""Permission requests under stress: many at once, a cancel racing their preparation, and the
agent dying while a review is open."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .. import views
from ..agent.scenarios import CRASH_STDERR
from ..context import Ctx
from ..driver import Editor, wait_until
from . import case


def shown_request(ctx: Ctx, count: int) -> str | None:
    """The title ``perm NNN of count`` shown in a prompt (a window other than the chat), if any."""
    return views.shown_request(ctx.ed, f"perm %d%d%d of {count}")


def _titled(title: str) -> Callable[[dict[str, Any]], bool]:
    return lambda event: bool(event["title"] == title)


def _answer_shown(ctx: Ctx, count: int, how_many: int) -> list[str]:
    """Press ``a`` on the shown request ``how_many`` times; the titles answered, in order."""
    answered: list[str] = []
    for _ in range(how_many):
        shown = wait_until(lambda: shown_request(ctx, count), 10)
        if not shown:
            ctx.fail(f"no permission prompt shown after {len(answered)} answers")
            break
        if not views.answer(ctx.ed, "a"):
            ctx.fail(f"the keys of the prompt {shown!r} never counted")
            break
        if not ctx.diary.wait("answer", 10, _titled(shown)):
            ctx.fail(f"pressing a on {shown!r} did not answer it")
            break
        answered.append(shown)
    return answered


def _permissions(ctx: Ctx, count: int) -> None:
    ctx.start()
    ctx.prompt(f"perms {count}")
    sent = ctx.diary.wait("out", 20, lambda e: e.get("method") == "session/request_permission", count)
    if not ctx.check(len(sent) == count, f"the agent sent {len(sent)} of {count} requests"):
        return
    arrival = [e["title"] for e in sent]
    ctx.mark(f"answer {count // 2} of {count}")
    answered = _answer_shown(ctx, count, count // 2)
    misplaced = [(i, title) for i, title in enumerate(answered) if title != arrival[i]]
    if misplaced:
        i, title = misplaced[0]
        ctx.fail(f"{len(misplaced)} of {len(answered)} prompts shown out of arrival order; the first: "
                 f"{title!r} shown where {arrival[i]!r} arrived next")
    ctx.chat_command("Ai cancel")
    ctx.told(["turn ended: cancelled"], chat_only=True)
    _answered_once(ctx, sent, set(answered))


def _answered_once(ctx: Ctx, sent: list[dict[str, object]], allowed: set[str]) -> None:
    """Every request got exactly one response: ``yes`` for those answered, ``cancelled`` for the rest."""
    wrong: dict[str, list[str]] = {}
    for event in sent:
        responses = ctx.diary.responses_to(event["id"], int(str(event["pid"])))
        want = "yes" if event["title"] in allowed else "cancelled"
        if len(responses) != 1:
            problem = f"answered {len(responses)} times"
        elif want not in responses[0].get("result", ""):
            problem = f"answered {responses[0].get('result')} instead of {want}"
        else:
            continue
        wrong.setdefault(problem, []).append(str(event["title"]))
    for problem, titles in wrong.items():
        ctx.fail(f"{len(titles)} request(s) {problem}: {', '.join(titles[:3])}{' …' if len(titles) > 3 else ''}")


@case()
def permissions_20(ctx: Ctx) -> None:
    """20 permission requests at once: shown in arrival order (the first 10 answered with ``a``, each
    checked against the one shown), then ``:Ai cancel`` answers the other 10 ``cancelled``; every
    request is answered exactly once and the turn ends cancelled."""
    _permissions(ctx, 20)


@case()
def permissions_200(ctx: Ctx) -> None:
    """200 permission requests at once, as ``permissions_20``: 100 answered in order, 100 by the cancel."""
    _permissions(ctx, 200)


RULES = 300_000


def _big_rules_file(ed: Editor) -> None:
    """A large rules file (other agents' rules): reading it is part of preparing a request."""
    folder = ed.dir / "xdg" / "state" / "nvim" / "acp_nvim"
    folder.mkdir(parents=True, exist_ok=True)
    rules = [{"agent": "someone-else", "workspace": f"/nowhere/{i}", "kind": "execute", "decision": "allow"}
             for i in range(RULES)]
    (folder / "rules.json").write_text(json.dumps({"version": 1, "rules": rules}))


@case(prepare=_big_rules_file)
def cancel_during_permission_prep(ctx: Ctx) -> None:
    """``:Ai cancel`` right after a permission request arrives, while the plugin still prepares it
    (reading a large rules file). No prompt is shown after the cancel (a user would answer one: the
    harness presses ``a`` if it shows); the agent gets ``cancelled``, never ``allow`` after its cancel."""
    ctx.start()
    ctx.prompt("perms 1")
    ctx.check(ctx.diary.wait("out", 10, lambda e: e.get("method") == "session/request_permission"),
              "the agent sent no request")
    ctx.chat_command("Ai cancel")
    if wait_until(lambda: shown_request(ctx, 1), 10):
        ctx.fail("the permission prompt was shown after :Ai cancel")
        ctx.ed.keys("a")
    answers = ctx.diary.wait("answer", 10)
    outcome = answers[0]["outcome"] if answers else None
    ctx.check(outcome == "cancelled", f"the agent got {outcome!r} for a request of a cancelled turn")
    ctx.told(["turn ended: cancelled"], chat_only=True)


@case()
def exit_during_review(ctx: Ctx) -> None:
    """The agent asks to edit a file (a review opens) and exits while the review is open. The user sees
    the stderr tail within 15 s, the review closes (no review window left), the chat works again."""
    ctx.file("notes.txt", "first line\nsecond line\n")
    ctx.start()
    ctx.prompt("review notes.txt exit")
    if not ctx.check(wait_until(lambda: views.review_open(ctx.ed), 10),
                     "the review never opened"):
        return
    ctx.gate("exit")
    ctx.told([CRASH_STDERR[-1]])
    ctx.check(wait_until(lambda: not views.review_open(ctx.ed), 5), "the review is still open after the agent exited")

