"""Local session history on disk: records, bounds, mode 0600, redaction, bad files."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from types import SimpleNamespace

import pytest
from fake_editor import FakeEditor

from acp_nvim.core.config import parse_settings
from acp_nvim.core.history.record import ENTRY_KINDS, Entry, HistorySettings, SessionRecord
from acp_nvim.core.history.store import HistoryStore
from acp_nvim.core.log.redact import Redactor
from acp_nvim.core.session.recording import Recorder, _Watched, first_prompt
from acp_nvim.core.transcript.blocks import Block
from acp_nvim.core.transcript.conversation import Conversation
from acp_nvim.core.transcript.restore import restore_many, restore_older

CWD = "/home/u/project"


def _record(session_id: str = "s-1", updated: float = 1.0, text: str = "hello") -> SessionRecord:
    return SessionRecord(agent="demo", cwd=CWD, session_id=session_id, created=1.0, updated=updated,
                         title="t", first_prompt=text, entries=[Entry("user", f"## You\n{text}"), Entry("agent", "hi")])


def test_a_record_round_trips_with_mode_0600(tmp_path: Path) -> None:
    store = HistoryStore(str(tmp_path), HistorySettings())
    store.save(_record(), lambda text: text)
    path = store.path(CWD, "demo", "s-1")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    loaded = store.load(CWD, "demo", "s-1")
    assert loaded == _record()
    assert [r.session_id for r in store.records(CWD)] == ["s-1"]
    assert not list(path.parent.glob(".tmp-*"))


def test_secrets_are_redacted_on_disk(tmp_path: Path) -> None:
    store = HistoryStore(str(tmp_path), HistorySettings())
    secret = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx"  # random-looking: the redactor leaves "xxx…" alone
    store.save(_record(text=f"my key is {secret}"), Redactor.for_env({}, {}))
    raw = store.path(CWD, "demo", "s-1").read_text()
    assert secret not in raw and "[redacted]" in raw


def test_a_record_is_cut_to_max_bytes_from_the_oldest_entries(tmp_path: Path) -> None:
    store = HistoryStore(str(tmp_path), HistorySettings(max_bytes=2048))
    record = _record()
    record.entries = [Entry("agent", f"{n:04d}" + "x" * 100) for n in range(100)]
    store.save(record, lambda text: text)
    path = store.path(CWD, "demo", "s-1")
    loaded = store.load(CWD, "demo", "s-1")
    assert loaded is not None and path.stat().st_size <= 2048
    assert loaded.entries[-1].text.startswith("0099") and loaded.dropped == 100 - len(loaded.entries)


def test_only_max_sessions_records_are_kept_per_cwd(tmp_path: Path) -> None:
    store = HistoryStore(str(tmp_path), HistorySettings(max_sessions=2))
    for n in range(4):
        store.save(_record(f"s-{n}", updated=float(n)), lambda text: text)
        os.utime(store.path(CWD, "demo", f"s-{n}"), (n + 10, n + 10))
    assert [r.session_id for r in store.records(CWD)] == ["s-3", "s-2"]
    assert store.delete(CWD, "demo", "s-3") and not store.delete(CWD, "demo", "s-3")


def test_bad_files_and_hostile_ids_are_harmless(tmp_path: Path) -> None:
    store = HistoryStore(str(tmp_path), HistorySettings())
    store.save(_record("../../etc/passwd"), lambda text: text)
    assert store.path(CWD, "demo", "../../etc/passwd").is_relative_to(tmp_path)
    folder = store.path(CWD, "demo", "x").parent
    (folder / "junk.json").write_text("{not json")
    (folder / "wrong.json").write_text('{"format": 1, "entries": [["rm -rf", "x"]]}')
    assert [r.session_id for r in store.records(CWD)] == ["../../etc/passwd"]
    assert store.records("/elsewhere") == []


def test_find_reads_the_records_of_one_session_alone(tmp_path: Path) -> None:
    store = HistoryStore(str(tmp_path), HistorySettings())
    for session_id in ("s-1", "s-2"):
        store.save(_record(session_id), lambda text: text)
    store.save(SessionRecord(agent="other", cwd=CWD, session_id="s-1", created=1.0, updated=5.0), lambda text: text)
    other_cwd = _record("s-1")
    other_cwd.cwd = "/elsewhere"
    store.save(other_cwd, lambda text: text)
    assert [r.agent for r in store.find(CWD, "s-1")] == ["other", "demo"], "every agent's, newest first"
    assert store.find(CWD, "s-9") == [] and store.find("/nowhere", "s-1") == []
    store.path(CWD, "demo", "s-2").write_bytes(b'{"format": 1, "entries": [["agent", "caf\xe9"]]}')
    assert store.find(CWD, "s-2") == [], "a record that is no UTF-8 is skipped"


@pytest.mark.parametrize("entries", [
    '[["agent", "a"], ["rm -rf", "x"]]', '[["agent", "a", "b"]]', '[["agent", 3]]', '[["agent"]]', '["agent"]',
    '[{"kind": "agent"}]'])
def test_an_entry_that_is_not_kind_and_text_makes_no_record(entries: str) -> None:
    with pytest.raises(ValueError):
        SessionRecord.from_json(f'{{"format": 1, "entries": {entries}}}')


def test_a_record_reads_from_its_bytes_as_from_its_text() -> None:
    record = _record(text="naïve ✓")
    assert SessionRecord.from_json(record.to_json().encode()) == SessionRecord.from_json(record.to_json()) == record


def test_history_setting_accepts_false_and_bounds() -> None:
    assert parse_settings({"history": False}).history.enabled is False
    assert parse_settings({"history": {"max_sessions": 3, "max_bytes": 4096}}).history.max_sessions == 3
    with pytest.raises(Exception, match="history"):
        parse_settings({"history": {"max_sessions": 0}})


def test_first_prompt_drops_the_heading() -> None:
    assert first_prompt([Entry("heading", "## demo"), Entry("user", "## You\nfix it")]) == "fix it"
    assert first_prompt([]) == ""



def _long_session(blocks: int, max_bytes: int):
    """A recorder and a session stand-in (what it reads) with a real transcript of ``blocks`` answers."""
    transcript = Conversation()
    transcript.user_message("the very first prompt")
    for n in range(blocks):
        transcript.agent_chunk(f"{n:05d} " + "answer text " * 40)
        transcript.notice("a notice between answers")
    session = SimpleNamespace(agent_name="demo", cwd=CWD, session_id="s-1", details=SimpleNamespace(title=""),
                              transcript=transcript)
    settings = HistorySettings(max_bytes=max_bytes)
    return Recorder(FakeEditor(), lambda: settings, lambda *args: None), session


def test_a_long_session_reads_only_the_newest_entries_that_can_fit(tmp_path: Path, monkeypatch) -> None:
    recorder, session = _long_session(2000, max_bytes=4096)
    read: list[int] = []
    whole = Block.text
    monkeypatch.setattr(Block, "text", lambda block: read.append(block.id) or whole(block))
    record = recorder.record_of(session, _Watched(created=1.0))
    monkeypatch.undo()
    assert len(read) < 40, "a 2000-answer session reads a few blocks, not all of them"
    kept = [b for b in session.transcript.blocks[:-1] if b.kind in ENTRY_KINDS]  # the trailing notice is not saved
    assert [e.text for e in record.entries] == [b.text() for b in kept[-len(record.entries):]]
    assert record.entries[-1].text.startswith("01999 ")
    assert record.first_prompt == "the very first prompt"
    assert record.dropped == len(kept) - len(record.entries)
    store = HistoryStore(str(tmp_path), HistorySettings(max_bytes=4096))
    store.save(record, lambda text: text)
    loaded = store.load(CWD, "demo", "s-1")
    assert loaded is not None and loaded.entries[-1].text.startswith("01999 ")
    assert loaded.dropped == len(kept) - len(loaded.entries)
    assert store.path(CWD, "demo", "s-1").stat().st_size <= 4096


def test_a_short_session_is_recorded_whole() -> None:
    recorder, session = _long_session(3, max_bytes=1 << 20)
    record = recorder.record_of(session, _Watched(created=1.0, prefix=[Entry("user", "## You\nearlier")]))
    kept = [b.text() for b in session.transcript.blocks[:-1] if b.kind in ENTRY_KINDS]
    assert [e.text for e in record.entries] == ["## You\nearlier", *kept] and record.dropped == 0
    assert record.first_prompt == "earlier"


def test_a_record_is_json_lines_and_a_format_1_record_still_reads(tmp_path: Path) -> None:
    record = _record(text="multi\nline ✓")
    text = record.to_json()
    lines = text.splitlines()
    assert len(lines) == 1 + len(record.entries) and '"format": 2' in lines[0] and '"count": 2' in lines[0]
    old = ('{"format": 1, "agent": "demo", "cwd": "/home/u/project", "session_id": "s-1", "created": 1.0, '
           '"updated": 1.0, "title": "t", "first_prompt": "multi\\nline ✓", "dropped": 0, "entries": '
           '[["user", "## You\\nmulti\\nline ✓"], ["agent", "hi"]]}')
    assert SessionRecord.from_json(old) == SessionRecord.from_json(text) == record
    with pytest.raises(ValueError):
        SessionRecord.from_json(old + '\n["agent", "more"]')  # format 1 is one object, nothing after


@pytest.mark.parametrize("count", [1, 3, 50, 1000])
def test_the_newest_entries_of_a_record_are_read_from_the_end_of_its_file(tmp_path: Path, count: int) -> None:
    from acp_nvim.core.history import store as store_module

    store = HistoryStore(str(tmp_path), HistorySettings(max_bytes=1 << 30))
    record = _record()
    record.entries = [Entry("agent", f"{n:04d} " + "x" * (n % 300)) for n in range(600)]
    store.save(record, lambda text: text)
    store_module.TAIL_BLOCK, old_block = 1000, store_module.TAIL_BLOCK  # many small reads from the end
    try:
        (newest,) = store.find_newest(CWD, "s-1", count)
    finally:
        store_module.TAIL_BLOCK = old_block
    kept = min(count, 600)
    assert newest.entries == record.entries[600 - kept:] and newest.older == 600 - kept
    assert newest.title == record.title and newest.cwd == CWD
    assert store.find_newest(CWD, "s-2", count) == [] and store.find_newest("/elsewhere", "s-1", count) == []


def test_a_format_1_record_is_read_whole_when_its_newest_entries_are_asked(tmp_path: Path) -> None:
    store = HistoryStore(str(tmp_path), HistorySettings())
    path = store.path(CWD, "demo", "s-1")
    path.parent.mkdir(parents=True)
    path.write_text('{"format": 1, "agent": "demo", "cwd": "/home/u/project", "session_id": "s-1", "created": 1.0, '
                    '"updated": 1.0, "entries": [["agent", "a"], ["agent", "b"]]}')
    (found,) = store.find_newest(CWD, "s-1", 1)
    assert [e.text for e in found.entries] == ["a", "b"] and found.older == 0


def test_a_header_that_counts_fewer_entries_than_the_file_holds_makes_no_record(tmp_path: Path) -> None:
    store = HistoryStore(str(tmp_path), HistorySettings())
    store.save(_record(), lambda text: text)
    path = store.path(CWD, "demo", "s-1")
    path.write_text(path.read_text().replace('"count": 2', '"count": 1'))
    assert store.find_newest(CWD, "s-1", 5) == []


async def test_a_reopened_records_older_entries_go_in_place_and_saving_waits_for_them() -> None:
    from helpers import async_wait_for

    transcript = Conversation()
    session = SimpleNamespace(agent_name="demo", cwd=CWD, session_id="s-1", details=SimpleNamespace(title=""),
                              transcript=transcript, state="idle", watchers=[], key="demo/1")
    newest = [Entry("user", "## You\nq 3"), Entry("agent", "a 3")]
    older = [Entry("user", "## You\nq 1"), Entry("agent", "a 1"), Entry("user", "## You\nq 2"), Entry("agent", "a 2")]
    transcript.notice("── earlier ──", "info")
    restore_many(transcript, [(e.kind, e.text, e.message_id) for e in newest], older=len(older))
    saved: list = []
    recorder = Recorder(FakeEditor(), HistorySettings, lambda *args: None)
    async def save(s, w) -> None:
        saved.append(recorder.record_of(s, w))

    recorder._save = save  # type: ignore[method-assign]
    recorder.watch(session, prefix=newest, loading=True)
    transcript.user_message("a new prompt")
    recorder._changed(session)
    assert saved == [], "nothing is saved while the older entries are read"
    restore_older(transcript, [(e.kind, e.text, e.message_id) for e in older])
    assert [b.text() for b in transcript.blocks] == ["── earlier ──", *[e.text for e in older + newest],
                                                     "## You\na new prompt"]
    assert [b.id for b in transcript.blocks] == sorted(b.id for b in transcript.blocks)
    recorder.prefix_loaded(session, older)
    await async_wait_for(lambda: saved)
    assert [e.text for e in saved[0].entries] == [*[e.text for e in older + newest], "## You\na new prompt"]
