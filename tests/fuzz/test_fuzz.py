"""Fuzzing the real host and renderer (a bounded run; ``make fuzz`` runs ≥ 10,000 cases).

The property tests send batches of generated payloads and assert that nothing new goes wrong:
no host crash, no traceback in the host log, no error shown, every request answered once, the
chat still updating. Bugs known today (``findings.KNOWN``) are tolerated there, and each has a
strict-xfail test below with its minimal payload, so that fixing it flips the test.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from . import payloads
from .findings import KNOWN, Finding, Known, new
from .harness import Fuzzer
from .payloads import Payload

pytestmark = pytest.mark.timeout(180)

PERMISSION = (b'{"jsonrpc":"2.0","id":"@ID@","method":"session/request_permission","params":{"sessionId":"@SID@",'
              b'"toolCall":{"toolCallId":"t1","title":"%s"},"options":[{"optionId":"y","name":"%s",'
              b'"kind":"allow_once"}]}}')
BOUNDED = settings(max_examples=40, deadline=None, database=None, derandomize=True,
                   suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def fuzzer() -> Iterator[Fuzzer]:
    instance = Fuzzer()
    yield instance
    instance.close()


def describe(findings: list[Finding], batch: list[Payload]) -> str:
    lines = [f"{f.kind}: {f.signature}\n{f.detail[-1500:]}" for f in findings]
    return "\n\n".join([*lines, "batch:", *(p.show(300) for p in batch)])


def assert_nothing_new(fuzzer: Fuzzer, batch: list[Payload]) -> None:
    findings = new(fuzzer.run(batch))
    assert not findings, describe(findings, batch)


@BOUNDED
@given(payloads.batches(payloads.valid_updates(), payloads.valid_permissions(), payloads.valid_fs()))
def test_schema_valid_payloads(fuzzer: Fuzzer, batch: list[Payload]) -> None:
    assert_nothing_new(fuzzer, batch)


@settings(BOUNDED, max_examples=25)
@given(payloads.batches(payloads.invalid_updates(), payloads.invalid_permissions(), payloads.invalid_fs()))
def test_schema_invalid_payloads(fuzzer: Fuzzer, batch: list[Payload]) -> None:
    assert_nothing_new(fuzzer, batch)


@settings(BOUNDED, max_examples=20)
@given(payloads.batches(payloads.raw_lines(), payloads.deep_lines(), payloads.surrogate_updates(),
                        payloads.bad_utf8_requests()))
def test_raw_lines(fuzzer: Fuzzer, batch: list[Payload]) -> None:
    assert_nothing_new(fuzzer, batch)


# -- known today: each flips to a pass when its bug is fixed (then drop the marker and the KNOWN entry) ----

def known(test: str) -> pytest.MarkDecorator:
    return known_as(next(k for k in KNOWN if k.test == test))


def known_as(entry: Known) -> pytest.MarkDecorator:
    """The strict xfail that pins ``entry``: its test passes once the bug is fixed, and then fails."""
    return pytest.mark.xfail(strict=True, reason=entry.reason)


def replay(fuzzer: Fuzzer, line: bytes, request: bool) -> None:
    """The single payload on a fresh Neovim: nothing at all may go wrong (the first problem ends it)."""
    batch = [Payload(line, request, "minimal")]
    findings = fuzzer.run(batch, fresh=True, first=True)
    assert not findings, describe(findings, batch)


def test_lone_surrogate_in_a_message_chunk(fuzzer: Fuzzer) -> None:
    replay(fuzzer, b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"@SID@","update":'
                   b'{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"\\ud83d"}}}}',
           request=False)


def test_invalid_utf8_in_a_permission_request(fuzzer: Fuzzer) -> None:
    replay(fuzzer, PERMISSION % (b"caf\xe9", b"Allow"), request=True)


def test_schema_invalid_session_update(fuzzer: Fuzzer) -> None:
    replay(fuzzer, b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"@SID@",'
                   b'"update":{"sessionUpdate":"agent_message_chunk"}}}', request=False)


def test_session_update_for_another_session(fuzzer: Fuzzer) -> None:
    replay(fuzzer, b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"other",'
                   b'"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}}',
           request=False)


def test_notification_with_an_unknown_method(fuzzer: Fuzzer) -> None:
    replay(fuzzer, b'{"jsonrpc":"2.0","method":"x/unknown","params":{}}', request=False)


def test_deeply_nested_line(fuzzer: Fuzzer) -> None:
    replay(fuzzer, b'{"jsonrpc":"2.0","method":"session/update","params":' + b"[" * 2000 + b"]" * 2000 + b"}",
           request=False)


def test_response_with_a_list_id(fuzzer: Fuzzer) -> None:
    replay(fuzzer, b'{"jsonrpc":"2.0","id":[1],"result":{}}', request=False)


def test_session_update_kind_that_is_not_a_string(fuzzer: Fuzzer) -> None:
    replay(fuzzer, b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"@SID@",'
                   b'"update":{"sessionUpdate":{}}}}', request=False)


def test_newline_in_a_permission_prompt(fuzzer: Fuzzer) -> None:
    replay(fuzzer, PERMISSION % (b"two\\nlines", b"Allow"), request=True)


def test_nul_in_a_permission_option(fuzzer: Fuzzer) -> None:
    replay(fuzzer, PERMISSION % (b"title", b"a\\u0000b"), request=True)


def unpinned(known: list[Known], namespace: Mapping[str, object]) -> list[str]:
    """How ``known`` and the tests of ``namespace`` disagree: a known bug without its strict-xfail test,
    or an xfail test that no known bug names."""
    xfails = {name: [m.kwargs for m in getattr(value, "pytestmark", []) if m.name == "xfail"]
              for name, value in namespace.items() if name.startswith("test_")}
    wrong = [f"{k.test}: no such test" if k.test not in xfails else f"{k.test}: not strict-xfail for {k.reason!r}"
             for k in known if {"strict": True, "reason": k.reason} not in xfails.get(k.test, [])]
    named = {k.test for k in known}
    return wrong + [f"{name}: xfail but not a known bug" for name, marks in xfails.items()
                    if marks and name not in named]


def test_every_known_bug_has_its_test() -> None:
    assert unpinned(KNOWN, globals()) == []
    # KNOWN is empty today, so the line above alone could never fail: the check must see each way to go wrong
    bug = Known("x", "why", "test_nul_in_a_permission_option")
    assert unpinned([bug, Known("y", "why", "test_no_such_test")], globals()) == [
        "test_nul_in_a_permission_option: not strict-xfail for 'why'", "test_no_such_test: no such test"]

    @known_as(bug)
    def test_a() -> None: ...

    @pytest.mark.xfail(reason="other")
    def test_b() -> None: ...

    assert unpinned([Known("x", "why", "test_a")], {"test_a": test_a, "test_b": test_b}) == [
        "test_b: xfail but not a known bug"]


def test_strategies_make_schema_valid_payloads() -> None:
    """The schema-valid strategies really make what the SDK's models accept (checked while drawing)."""
    drawn = []

    @settings(max_examples=30, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(st.one_of(payloads.valid_updates(), payloads.valid_permissions(), payloads.valid_fs()))
    def draw(payload: Payload) -> None:
        drawn.append(payload)

    draw()
    assert len(drawn) == 30 and all(p.line.startswith(b'{"jsonrpc":"2.0"') for p in drawn)
