"""Secret redaction: env values, key-shaped strings, bearer tokens; JSON stays valid."""

from __future__ import annotations

import json

import pytest

from acp_nvim.core.log.redact import Redactor

pytestmark = pytest.mark.timeout(10)

ENV = {"ANTHROPIC_API_KEY": "abc123-very-secret", "DISABLE_TELEMETRY": "1", "FLAG": "true",
       "ANTHROPIC_BASE_URL": "http://127.0.0.1:8123"}


@pytest.fixture
def redact() -> Redactor:
    return Redactor.for_env(ENV, inherited={"GITHUB_TOKEN": "inherited-token-value", "HOME": "/home/someone"})


def test_configured_env_values_are_replaced_by_their_name(redact):
    assert redact("key=abc123-very-secret;") == "key=[redacted:$ANTHROPIC_API_KEY];"
    assert redact("POST http://127.0.0.1:8123/v1/messages") == "POST [redacted:$ANTHROPIC_BASE_URL]/v1/messages"


def test_short_and_boolean_values_are_left_alone(redact):
    assert redact("exit 1, done: true") == "exit 1, done: true"


def test_inherited_variables_only_when_their_name_says_secret(redact):
    assert redact("gh says inherited-token-value") == "gh says [redacted:$GITHUB_TOKEN]"
    assert redact("cwd /home/someone") == "cwd /home/someone"


@pytest.mark.parametrize("secret", [
    "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx",
    "sk-proj-1234567890abcdefghij",
    "AIzaSyA1234567890abcdefghijklmnopqrstu",
    "ghp_" + "a1" * 18,
    "xoxb-1234567890-abcdef",
    "AKIAABCDEFGHIJKLMNOP",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTYifQ.c2lnbmF0dXJlLXZhbHVl",
])
def test_key_shaped_strings(secret):
    redacted = Redactor()(f"value: {secret} end")
    assert secret not in redacted and "[redacted]" in redacted and redacted.endswith(" end")


def test_bearer_tokens_keep_the_scheme():
    assert Redactor()("Authorization: Bearer abcdef0123456789xyz") == "Authorization: Bearer [redacted]"


def test_assignments_keep_the_name():
    text = 'curl "https://x.invalid/?api_key=Zq8xY7wV6u&x=1" --password=hunter2hunter2'
    assert Redactor()(text) == 'curl "https://x.invalid/?api_key=[redacted]&x=1" --password=[redacted]'


def test_ordinary_prose_is_untouched():
    text = "The token budget was exceeded; the secret sauce is a key insight. Tasks: task-1234567890abcdefghijkl"
    assert Redactor()(text) == text


def test_json_stays_valid_and_escaped_values_are_found(redact):
    message = {"params": {"env": {"k": "abc123-very-secret"}, "apiKey": "Zq8xY7wV6u5t",
                          "text": 'say "abc123-very-secret" and {"password": "hunter22"}'}}
    for raw in (json.dumps(message), json.dumps(json.dumps(message))):
        redacted = redact(raw)
        json.loads(redacted)
        assert "abc123-very-secret" not in redacted and "Zq8xY7wV6u5t" not in redacted
        assert "hunter22" not in redacted


def test_a_value_with_quotes_is_found_in_its_json_form():
    redact = Redactor.for_env({"PASS": 'pa"ss\\word'}, inherited={})
    raw = json.dumps({"x": 'pa"ss\\word'})
    assert json.loads(redact(raw)) == {"x": "[redacted:$PASS]"}
