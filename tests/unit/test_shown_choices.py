"""What the agent says about its choices, as kept and worded for the editor: a plan entry's line,
a slash command's input hint, the descriptions of a config option and its values."""

from __future__ import annotations

from acp.schema import AvailableCommand, PlanEntry, SessionConfigOptionSelect

from acp_nvim.core.conversation.details import SessionDetails
from acp_nvim.core.transcript.plan_view import plan_line
from acp_nvim.nvim.sessions.option_commands import ABOUT_CHARS, _about


def test_a_plan_line_marks_high_and_low_priority_and_leaves_medium_bare():
    def line(priority: str, status: str = "pending") -> str:
        return plan_line(PlanEntry(content="do it", priority=priority, status=status))  # type: ignore[arg-type]
    assert line("high", "in_progress") == "- [~] ! do it"
    assert line("medium", "completed") == "- [x] do it"
    assert line("low") == "- [ ] ↓ do it"


def test_commands_keep_their_input_hints_and_options_their_descriptions():
    details = SessionDetails()
    details.set_commands([AvailableCommand.model_validate({"name": "review", "description": "Review",
                                                           "input": {"hint": "<file>"}}),
                          AvailableCommand(name="plain", description="No input")])
    assert details.command_hints == {"review": "<file>"}
    details.set_options([SessionConfigOptionSelect.model_validate({
        "id": "model", "name": "Model", "description": "Which model", "type": "select", "currentValue": "a",
        "options": [{"value": "a", "name": "A", "description": "fast"}, {"value": "b", "name": "B"}]})])
    option = details.options[0]
    assert option.description == "Which model" and [v.description for v in option.values] == ["fast", ""]


def test_a_long_description_is_cut_to_its_first_line_and_the_pickers_width():
    assert _about("first line\nsecond line") == "first line"
    long = _about("x" * 200)
    assert len(long) == ABOUT_CHARS and long.endswith("…")
    assert _about("") == ""
