"""The steering and failure-report shapes newer than the SDK, decoded by hand (schema_ext.py)."""

from __future__ import annotations

from acp_nvim.core.conversation import schema_ext
from acp_nvim.core.conversation.schema_ext import SteerOutcome


def test_steering_is_supported_only_by_an_exact_true() -> None:
    assert schema_ext.steering_supported({"steering": {"supported": True}})
    assert not schema_ext.steering_supported({"steering": {"supported": "true"}})
    assert not schema_ext.steering_supported({"steering": {"supported": 1}})
    assert not schema_ext.steering_supported({"steering": True})
    assert not schema_ext.steering_supported({})
    assert not schema_ext.steering_supported(None)


def test_the_request_asks_for_prompt_required_when_no_turn_runs() -> None:
    params = schema_ext.steer_params("s-1", [{"type": "text", "text": "also this"}])
    assert params == {"sessionId": "s-1", "prompt": [{"type": "text", "text": "also this"}],
                      "_meta": {"steering": {"idleBehavior": "promptRequired"}}}
    assert schema_ext.STEER_METHOD == "session/steering"  # the SDK's ext_method adds the "_"


def test_each_outcome_of_the_wire_protocol() -> None:
    assert schema_ext.steer_outcome({"outcome": "injected"}) == SteerOutcome("injected")
    assert schema_ext.steer_outcome({"outcome": "startedNewTurn"}).delivered
    required = schema_ext.steer_outcome({"outcome": "promptRequired", "reason": "noRunningTurn"})
    assert required == SteerOutcome("promptRequired", "noRunningTurn") and not required.delivered
    failed = schema_ext.steer_outcome({"outcome": "failed", "message": "busy"})
    assert failed == SteerOutcome("failed", "busy") and not failed.delivered


def test_a_malformed_answer_is_a_failed_outcome_that_says_why() -> None:
    assert schema_ext.steer_outcome(None).outcome == "failed"
    assert schema_ext.steer_outcome(["injected"]).reason == "the agent's answer is not an object"
    unknown = schema_ext.steer_outcome({"outcome": "queuedByAgent"})
    assert unknown.outcome == "failed" and "queuedByAgent" in unknown.reason
    assert schema_ext.steer_outcome({"outcome": "injected", "reason": 5}) == SteerOutcome("injected")


def test_air_session_failure_report() -> None:
    meta = {"jetbrains": {"air": {"version": 1, "sessionFailure": {
        "id": "f1", "revision": 1, "category": "limit", "severity": "error",
        "title": "Claude is temporarily rate limited.", "actions": ["retry", 7], "reason": "rate_limited"}}}}
    failure = schema_ext.session_failure(meta)
    assert failure == schema_ext.SessionFailure("limit", "Claude is temporarily rate limited.", ("retry",), "",
                                                "rate_limited")


def test_a_malformed_failure_report_reads_as_none() -> None:
    assert schema_ext.session_failure(None) is None
    assert schema_ext.session_failure({"jetbrains": {"air": {"sessionFailure": "limit"}}}) is None
    assert schema_ext.session_failure({"jetbrains": {"air": {"sessionFailure": {"title": "no category"}}}}) is None
    assert schema_ext.session_failure({"jetbrains": []}) is None
