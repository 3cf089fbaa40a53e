"""Fuzzing the real host and renderer (a bounded run; ``make fuzz`` runs ≥ 10,000 cases).

The property tests send batches of generated payloads and assert that nothing new goes wrong:
no host crash, no traceback in the host log, no error shown, every request answered once, the
chat still updating. Bugs known today (``findings.KNOWN``) are tolerated there, and each has a
strict-xfail test below with its minimal payload, so that fixing it flips the test.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from . import payloads
from .findings import KNOWN, Finding, new
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
    entry = next(k for k in KNOWN if k.test == test)
    return pytest.mark.xfail(strict=True, reason=entry.reason)


def replay(fuzzer: Fuzzer, line: bytes, request: bool) -> None:
    """The single payload on a fresh Neovim: nothing at all may go wrong (the first problem ends it)."""
    batch = [Payload(line, request, "minimal")]
    findings = fuzzer.run(batch, fresh=True, timeout=2.0, first=True)
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


def test_every_known_bug_has_its_test() -> None:
    names = {name for name in globals() if name.startswith("test_")}
    assert {k.test for k in KNOWN} <= names


def test_strategies_make_schema_valid_payloads() -> None:
    """The schema-valid strategies really make what the SDK's models accept (checked while drawing)."""
    drawn = []

    @settings(max_examples=30, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(st.one_of(payloads.valid_updates(), payloads.valid_permissions(), payloads.valid_fs()))
    def draw(payload: Payload) -> None:
        drawn.append(payload)

    draw()
    assert len(drawn) == 30 and all(p.line.startswith(b'{"jsonrpc":"2.0"') for p in drawn)
