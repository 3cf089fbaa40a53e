"""Past sessions: the agents' lists merged with the local records, and the picker's labels."""

from __future__ import annotations

from acp.schema import SessionInfo

from acp_nvim.core.connection.past import Listing, labels, mark_read_only, merge
from acp_nvim.core.history.record import Entry, SessionRecord


def _record(agent: str, session_id: str, updated: float, prompt: str = "fix the bug") -> SessionRecord:
    return SessionRecord(agent=agent, cwd="/p", session_id=session_id, created=1.0, updated=updated,
                         title="", first_prompt=prompt)


def test_local_and_listed_sessions_merge_by_agent_and_id_most_recent_first() -> None:
    listed = {"claude": [SessionInfo(session_id="a", cwd="/p", title="Bug hunt", updated_at="2026-01-02T00:00:00Z"),
                         SessionInfo(session_id="b", cwd="/p", updated_at="not a time")]}
    items = merge([_record("claude", "a", 10.0), _record("codex", "a", 5.0)], listed)
    assert [(i.agent, i.session_id, i.listed, i.record is not None) for i in items] == [
        ("claude", "a", True, True), ("codex", "a", False, True), ("claude", "b", True, False)]
    assert items[0].title == "Bug hunt" and items[0].first_prompt == "fix the bug"
    assert items[0].label().startswith("claude · 2026-01-02") and items[0].label().endswith(" — fix the bug")
    assert items[2].label() == "claude · ? · (untitled)"


def test_a_long_first_prompt_is_cut_on_one_line() -> None:
    label = merge([_record("demo", "x", 0.0, "line one\nline two " + "x" * 100)], {})[0].label()
    assert "\n" not in label and label.endswith("…") and "line one line two" in label


def test_rows_that_would_read_the_same_name_their_session() -> None:
    items = merge([_record("demo", "s-1", 10.0), _record("demo", "s-2", 10.0), _record("demo", "s-3", 20.0, "other")],
                  {})
    rows = labels(items)
    assert len(set(rows)) == 3 and rows[0] == items[0].label()
    assert rows[1].endswith(f"· session {items[1].session_id}") and rows[2].endswith(f"· session {items[2].session_id}")


def test_rows_count_the_turns_of_the_local_record() -> None:
    record = _record("demo", "s-1", 10.0)
    record.entries = [Entry("user", "one"), Entry("agent", "a"), Entry("user", "two"), Entry("agent", "b")]
    assert " · 2 turns · " in merge([record], {})[0].label()
    record.entries = record.entries[:2]
    assert " · 1 turn · " in merge([record], {})[0].label()
    record.older = 5
    assert " · 1+ turns · " in merge([record], {})[0].label()
    listed_only = merge([], {"demo": [SessionInfo(session_id="x", cwd="/p")]})[0]
    assert "turn" not in listed_only.label()


def test_a_row_the_agent_cannot_continue_says_so_before_it_is_picked() -> None:
    records = [_record("demo", "kept", 30.0), _record("demo", "forgotten", 20.0), _record("old", "any", 10.0)]
    listings = {"demo": Listing([SessionInfo(session_id="kept", cwd="/p")], continues=True, lists=True),
                "old": Listing([], continues=False, lists=False)}
    items = merge(records, {name: listing.sessions for name, listing in listings.items()})
    mark_read_only(items, listings)
    rows = dict(zip([item.session_id for item in items], labels(items), strict=True))
    assert "read-only" not in rows["kept"]
    assert rows["forgotten"].endswith("· read-only: the agent no longer lists it")
    assert rows["any"].endswith("· read-only: the agent cannot load or resume a session")


def test_an_agent_without_a_list_or_whose_listing_failed_is_not_judged() -> None:
    items = merge([_record("demo", "s", 1.0), _record("gone", "t", 2.0)], {})
    mark_read_only(items, {"demo": Listing([], continues=True, lists=False)})
    assert all(item.read_only == "" for item in items)
