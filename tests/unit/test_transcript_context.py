"""Prompt context, session details and unknown updates (core, no Neovim)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from acp.schema import (
    Cost,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    Usage,
    UsageUpdate,
)
from fake_editor import FakeEditor

from acp_nvim.core.config import parse_settings
from acp_nvim.core.conversation.details import SessionDetails
from acp_nvim.core.prompting import attachments
from acp_nvim.core.session.manager import SessionManager

pytestmark = pytest.mark.timeout(30)


async def no_buffers(path: str) -> str | None:
    return None


def dumped(blocks: list) -> list[dict]:
    return [b.model_dump(mode="json", by_alias=True, exclude_none=True) for b in blocks]


async def test_range_is_embedded_when_allowed_and_linked_otherwise(tmp_path: Path):
    item = attachments.for_range(str(tmp_path / "a.py"), str(tmp_path), 2, 3, ["two", "three"])
    uri = f"{(tmp_path / 'a.py').as_uri()}#L2-L3"
    embedded = dumped(await attachments.to_blocks([item], True, no_buffers))
    assert embedded == [{"type": "resource", "resource": {"uri": uri, "text": "two\nthree\n",
                                                          "mimeType": "text/x-python"}}]
    linked = dumped(await attachments.to_blocks([item], False, no_buffers))
    assert linked == [{"type": "resource_link", "name": "a.py:2-3", "uri": uri, "mimeType": "text/x-python"}]


async def test_mentions_name_existing_files_read_from_buffers_first(tmp_path: Path):
    (tmp_path / "a.md").write_text("disk\n")
    (tmp_path / "sub").mkdir()
    found = attachments.mentions("see @a.md, @sub and @missing.txt and mail@example.com @a.md", str(tmp_path))
    assert [a.label for a in found] == ["a.md", "sub"]

    async def buffer(path: str) -> str | None:
        return "unsaved\n" if path.endswith("a.md") else None

    blocks = dumped(await attachments.to_blocks(found, True, attachments.file_reader(buffer)))
    assert blocks[0]["resource"]["text"] == "unsaved\n"
    assert blocks[1] == {"type": "resource_link", "name": "sub", "uri": (tmp_path / "sub").as_uri(),
                         "mimeType": "inode/directory"}
    from_disk = dumped(await attachments.to_blocks(found[:1], True, attachments.file_reader(no_buffers)))
    assert from_disk[0]["resource"]["text"] == "disk\n"


async def test_session_links_context_when_the_agent_lacks_embedded_context(tmp_path: Path):
    manager = SessionManager(FakeEditor(), parse_settings({}))
    session = manager.create(None, str(tmp_path))
    session.process.info = SimpleNamespace(agent_capabilities=SimpleNamespace(
        prompt_capabilities=SimpleNamespace(embedded_context=False)))
    assert session.link.embedded_context is False
    session.process.info.agent_capabilities.prompt_capabilities.embedded_context = True
    assert session.link.embedded_context is True


async def test_unknown_update_kinds_are_logged_and_skipped(tmp_path: Path):
    manager = SessionManager(FakeEditor(), parse_settings({}))
    session = manager.create(None, str(tmp_path))
    session.stream.route(SimpleNamespace(session_update="hologram_update", payload=1))
    assert session.transcript.blocks == []
    assert any("hologram_update" in entry.summary for entry in session.log.entries())


def test_details_tokens_options_and_counters():
    details = SessionDetails()
    assert details.tokens() == ""
    details.turn_ended("end_turn", Usage(input_tokens=1200, output_tokens=300, total_tokens=1500))
    assert details.tokens() == "1.5k tokens" and details.turns == 1
    details.usage_update(UsageUpdate(session_update="usage_update", used=12_345, size=200_000,
                                     cost=Cost(amount=0.25, currency="USD")))
    assert details.tokens() == "12.3k/200k tokens · 0.25 USD"
    details.set_options([SessionConfigOptionSelect(
        id="model", name="Model", category="model", type="select", current_value="b",
        options=[SessionConfigSelectOption(value="a", name="A"), SessionConfigSelectOption(value="b", name="B")])])
    model = details.option("model")
    assert model is not None and model.current_name() == "B" and [v.value for v in model.values] == ["a", "b"]


async def test_session_updates_for_replays_config_options_and_plan_updates(tmp_path: Path):
    from acp.helpers import plan_entry, update_user_message_text
    from acp.schema import (
        AgentPlanContentUpdate,
        AgentPlanRemovedUpdate,
        ConfigOptionUpdate,
        PlanUpdateItems,
        PlanUpdateMarkdown,
    )

    manager = SessionManager(FakeEditor(), parse_settings({}))
    session = manager.create(None, str(tmp_path))
    session.stream.route(update_user_message_text("replayed question"))
    mode = SessionConfigOptionSelect(id="mode", name="Mode", category="mode", type="select", current_value="plan",
                                     options=[SessionConfigSelectOption(value="plan", name="Plan")])
    session.stream.route(ConfigOptionUpdate(session_update="config_option_update", config_options=[mode]))
    assert session.view.mode == "plan" and session.details.option("mode") is not None
    items = PlanUpdateItems(type="items", plan_id="p1", entries=[plan_entry("step", status="completed")])
    session.stream.route(AgentPlanContentUpdate(session_update="plan_update", plan=items))
    session.stream.route(AgentPlanContentUpdate(session_update="plan_update", plan=PlanUpdateMarkdown(
        type="markdown", plan_id="p2", content="1. think")))
    session.stream.route(AgentPlanRemovedUpdate(session_update="plan_removed", plan_id="p1"))
    texts = [block.text() for block in session.transcript.blocks]
    assert texts[0] == "## You\nreplayed question"
    assert "Plan: (removed by the agent)" in texts and "Plan:\n1. think" in texts
