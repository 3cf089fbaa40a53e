"""The one place for agent-specific workarounds: which agent, which error."""

from __future__ import annotations

from acp import RequestError
from acp.schema import Implementation, InitializeResponse

from acp_nvim.core.agent import quirks


def info(name: str) -> InitializeResponse:
    return InitializeResponse(protocol_version=1, agent_info=Implementation(name=name, version="1"))


def test_gemini_reads_a_missing_file_as_empty() -> None:
    assert quirks.missing_file_reads_empty(info("gemini-cli"), RequestError.resource_not_found("/w/new.txt"))


def test_other_agents_get_the_not_found_error() -> None:
    missing = RequestError.resource_not_found("/w/new.txt")
    assert not quirks.missing_file_reads_empty(info("OpenCode"), missing)
    assert not quirks.missing_file_reads_empty(None, missing)


def test_other_errors_stay_errors_for_gemini() -> None:
    outside = RequestError.invalid_params({"path": "/etc/passwd", "reason": "outside the workspace roots"})
    assert not quirks.missing_file_reads_empty(info("gemini-cli"), outside)
