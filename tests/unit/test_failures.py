"""Typed failures: every row of the classification (core/conversation/failures.py), pure."""

from __future__ import annotations

from datetime import datetime

import pytest

from acp_nvim.core.conversation import failures
from acp_nvim.core.conversation.failures import AGENT, AUTH, CONNECTION, LIMIT, SERVICE, ErrorReport

NOW = datetime(2026, 12, 1, 14, 0, 0).timestamp()


def kind(report: ErrorReport) -> str:
    return failures.classify(report, NOW).kind


def air(category: str, actions: list[str] | None = None) -> dict[str, object]:
    return {"jetbrains": {"air": {"sessionFailure": {"category": category, "title": f"{category} title",
                                                      "actions": actions or []}}}}


def test_a_lost_connection_wins_over_everything() -> None:
    assert kind(ErrorReport("rate limit", code=-32000, connection_lost=True)) == CONNECTION


@pytest.mark.parametrize(("category", "expected"), [
    ("limit", LIMIT), ("access", AUTH), ("connection", CONNECTION), ("service", SERVICE), ("request", AGENT),
    ("unknown", AGENT), ("something new", AGENT)])
def test_the_agents_own_failure_report(category: str, expected: str) -> None:
    assert kind(ErrorReport("Internal error", -32603, meta=air(category))) == expected
    assert kind(ErrorReport("Internal error", -32603, data={"_meta": air(category)})) == expected


def test_the_failure_reports_title_is_the_detail_and_its_login_is_offered() -> None:
    failure = failures.classify(ErrorReport(meta=air("service", ["login"])), NOW)
    assert failure.detail == "service title"
    assert failure.actions[0] == failures.LOGIN


def test_auth_required_code() -> None:
    assert kind(ErrorReport("Authentication required", code=-32000)) == AUTH


@pytest.mark.parametrize(("data", "expected"), [
    ({"errorKind": "rate_limit"}, LIMIT), ({"errorKind": "billing_error"}, LIMIT),
    ({"errorKind": "authentication_failed"}, AUTH), ({"errorKind": "oauth_org_not_allowed"}, AUTH),
    ({"errorKind": "overloaded"}, SERVICE), ({"errorKind": "server_error"}, SERVICE),
    ({"errorKind": "transport_lost"}, CONNECTION), ({"errorKind": "worker_shutdown"}, CONNECTION),
    ({"errorKind": "no_result"}, AGENT), ({"errorKind": "model_not_found"}, AGENT),
    ({"codexErrorInfo": "usageLimitExceeded", "message": "You've hit your usage limit."}, LIMIT),
    ({"codexErrorInfo": "rateLimitExceeded"}, LIMIT), ({"codexErrorInfo": "unauthorized"}, AUTH),
    ({"codexErrorInfo": "serverOverloaded"}, SERVICE), ({"codexErrorInfo": "internalServerError"}, SERVICE),
    ({"codexErrorInfo": {"responseStreamDisconnected": {"httpStatusCode": None}}}, CONNECTION),
    ({"codexErrorInfo": {"httpConnectionFailed": {}}}, CONNECTION), ({"codexErrorInfo": "badRequest"}, AGENT),
])
def test_error_kinds_in_the_data(data: dict[str, object], expected: str) -> None:
    assert kind(ErrorReport("Internal error", -32603, data)) == expected


@pytest.mark.parametrize(("agent", "message", "expected"), [
    ("claude claude-agent-acp", "You've hit your limit · resets 3pm", LIMIT),
    ("claude", "Credit balance is too low", LIMIT),
    ("claude", "Invalid API key · Please run /login", AUTH),
    ("claude", "API Error: 529 overloaded_error", SERVICE),
    ("codex codex-acp", "You've hit your usage limit. Try again at 3:05 PM.", LIMIT),
    ("codex", "stream disconnected before completion", CONNECTION),
    ("codex", "unexpected status 401 Unauthorized", AUTH),
    ("gemini", "[API Error: RESOURCE_EXHAUSTED]", LIMIT),
    ("gemini", "You have exhausted your daily quota on this model.", LIMIT),
    ("gemini", "API key not valid. Please pass a valid API key.", AUTH),
    ("opencode", "insufficient_quota", LIMIT),
    ("opencode", "ProviderAuthError", AUTH),
])
def test_known_messages_per_agent(agent: str, message: str, expected: str) -> None:
    assert kind(ErrorReport(f"Internal error: {message}", -32603, agent=agent)) == expected


@pytest.mark.parametrize(("message", "expected"), [
    ("429 Too Many Requests", LIMIT), ("rate-limited", LIMIT), ("401 from the provider", AUTH),
    ("connect ECONNREFUSED 127.0.0.1:443", CONNECTION), ("fetch failed", CONNECTION),
    ("503 Service Unavailable", SERVICE), ("bad gateway", SERVICE),
    ("Internal error", AGENT), ("Invalid params: prompt", AGENT), ("", AGENT),
])
def test_generic_words_then_agent_bug(message: str, expected: str) -> None:
    assert kind(ErrorReport(message, -32603, agent="some-other-agent")) == expected


def test_the_detail_is_the_datas_message_when_there_is_one() -> None:
    report = ErrorReport("Internal error", -32603, {"codexErrorInfo": "usageLimitExceeded", "message": "hit it"})
    assert failures.classify(report, NOW).detail == "hit it"
    assert failures.classify(ErrorReport("Internal error: boom", -32603), NOW).detail == "Internal error: boom"


@pytest.mark.parametrize(("data", "message", "wait"), [
    ({"resetsAt": NOW + 90}, "", 90), ({"retryAfter": 30}, "", 30), ({"retry_after": 5}, "", 5),
    (None, "rate limited, please retry in 41.1s", 41.1), (None, "try again in 5 minutes", 300),
    (None, "resets in 2 hours", 7200),
    (None, "You've hit your limit · resets 3pm", 3600), (None, "Try again at 3:05 PM.", 3900),
    (None, "try again at 14:30", 1800), (None, "resets 1pm", 23 * 3600),
])
def test_when_a_limit_resets(data: object, message: str, wait: float) -> None:
    failure = failures.classify(ErrorReport(f"429 {message}", -32603, data), NOW)
    assert failure.kind == LIMIT
    assert failure.resets_at is not None and failure.resets_at - NOW == pytest.approx(wait)
    assert failure.actions[-1] == failures.WAIT


def test_no_reset_time_no_wait() -> None:
    failure = failures.classify(ErrorReport("429 rate limited", -32603), NOW)
    assert failure.resets_at is None and failures.WAIT not in failure.actions
    assert failures.classify(ErrorReport("429", -32603, {"resetsAt": True}), NOW).resets_at is None
    assert failures.classify(ErrorReport("429 resets 5", -32603), NOW).resets_at is None


def test_a_reset_too_far_away_is_shown_not_waited_for() -> None:
    failure = failures.classify(ErrorReport("429", -32603, {"resetsAt": NOW + 3 * 86400}), NOW)
    assert failure.resets_at is not None and failures.WAIT not in failure.actions


def test_only_a_limit_has_a_reset_time() -> None:
    assert failures.classify(ErrorReport("503 retry in 5s", -32603), NOW).resets_at is None


@pytest.mark.parametrize(("kind_", "first"), [
    (LIMIT, failures.RETRY), (AUTH, failures.LOGIN), (CONNECTION, failures.RETRY), (SERVICE, failures.RETRY),
    (AGENT, failures.RETRY)])
def test_each_class_offers_its_actions(kind_: str, first: str) -> None:
    assert failures.ACTIONS[kind_][0] == first
    assert failures.TITLES[kind_]


def test_the_offer_names_the_keys_and_the_reset_time() -> None:
    failure = failures.classify(ErrorReport("429", -32603, {"retryAfter": 30}), NOW)
    keys = {"retry": "R", "login": "L", "new_session": "N", "wait": "W"}
    line = failures.offer(failure, keys, NOW)
    assert line.startswith("R retries · N starts a new session · W retries when the limit resets")
    assert "resets at 14:00 (in 30 s)" in line
    assert "R" not in failures.offer(failure, {**keys, "retry": ""}, NOW).split(" · ")[0]


def test_report_of_an_exception() -> None:
    from acp import RequestError

    report = failures.report_of(RequestError(-32000, "Authentication required", {"authMethods": []}), "claude")
    assert (report.code, report.data, report.agent) == (-32000, {"authMethods": []}, "claude")
    assert failures.report_of(ConnectionError("gone")).connection_lost
    assert not failures.report_of(ValueError("bad")).connection_lost


@pytest.mark.parametrize(("report", "words"), [
    (ErrorReport("Authentication required", -32000), ":Ai login logs in"),
    (ErrorReport("429", -32603, {"retryAfter": 30}), "usage limit"),
    (ErrorReport(connection_lost=True), "connection"),
    (ErrorReport("503 Service Unavailable"), "try again later"),
])
def test_a_failed_start_says_its_class(report: ErrorReport, words: str) -> None:
    assert words in failures.start_hint(failures.classify(report, NOW), NOW)


def test_a_failed_start_by_an_agent_bug_adds_nothing() -> None:
    assert failures.start_hint(failures.classify(ErrorReport("Internal error"), NOW), NOW) == ""
    assert "(resets at 14:00 (in 30 s))" in failures.start_hint(
        failures.classify(ErrorReport("429", data={"retryAfter": 30}), NOW), NOW)
