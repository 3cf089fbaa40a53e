"""Secret redaction for everything the user sees: chat, notifications, log buffer, log export.

Two sources of secrets: the values of the agent's configured environment (and of
inherited variables whose names say they hold a secret; a path such as ``$PWD`` never is),
and strings shaped like credentials wherever they appear (``SHAPES``: API keys by their prefixes, bearer and
basic credentials, named fields such as ``"password": "…"``, passwords in URLs, private
key blocks, …). Users add their own patterns (``redaction.patterns`` in ``setup()``).

Replacements never contain quotes or backslashes, so redacting a JSON text leaves valid
JSON, and redacting twice changes nothing. A stream (the chat's streamed blocks) is
redacted as one text by :class:`StreamRedactor`, which holds back the tail of what it was
fed while that tail could still become a secret.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

MIN_ENV_VALUE = 4
"""Shorter env values ("1", "yes") are not secrets, and redacting them would wreck the log."""
MIN_INHERITED_VALUE = 8
NOT_SECRET = re.compile(r"(?i)^(?:true|false|yes|no|on|off|none|null|\d+)$")
SECRET_NAME = re.compile(r"(?i)(?:api[_-]?key|token|secret|passw(?:or)?d|pass(?:phrase)?(?:$|_)|pwd|credential"
                         r"|private[_-]?key|auth|(?:^|_)key(?:$|_))")
PLAIN_VALUE = re.compile(r"""(?xs)^(?:
    [A-Za-z0-9]{1,12}(?:[._-][A-Za-z0-9]{1,12})*   # a word, a mode, a model name, a version
  | [/~][^\s]*                                     # a path
  | [A-Za-z][A-Za-z0-9+.-]*://[^\s@/]+(?:/[^\s]*)?  # a URL without user or password
  | \{.*\} | \[.*\]                                # JSON
)$""")
PATHS = re.compile(r"^/[^\x00-\x1f:]*(?::/[^\x00-\x1f:]*)*$")
"""An absolute path, or a colon list of them (``PATH``): a shell's ``PWD`` or ``XAUTHORITY`` names
no secret, and redacting it would hide every workspace path."""
NOT_SECRET_NAMES = frozenset({"PWD", "OLDPWD"})
REDACTED = "[redacted]"

Check = Callable[[str, str], bool]
"""A shape's second opinion: (the part to redact, the kept prefix) -> really a secret?"""


@dataclass(frozen=True, slots=True)
class Shape:
    """One kind of secret. ``pattern`` may keep a prefix in a group named ``keep`` (the field
    name, the auth scheme); the rest of the match is replaced by ``label``. The pattern runs
    only when the lowercased text contains one of ``triggers`` (a cheap pre-check)."""

    name: str
    pattern: str
    triggers: tuple[str, ...]
    check: Check | None = None
    label: str = REDACTED
    hint: str = ""
    """For the pre-check when no fixed word announces the secret (a ``.pgpass`` line): a regular
    expression that matches at most ``HINT_SPAN`` characters, searched only in a text holding
    ``hint_gate`` (a substring: the hot path pays one ``in``, not one more regex)."""
    hint_gate: str = ""


# -- second opinions ---------------------------------------------------------------

PLACEHOLDER = re.compile(r"(?i)^(?:null|none|nil|true|false|undefined|\*+|x{3,}|\.{3}|…|changeme|redacted)$")
PLACEHOLDER_START = ("$", "{", "<", "%", "[", "(", "os.", "env", "process.", "ENV[", "getenv")


def _real_value(value: str, keep: str) -> bool:
    """Not a placeholder (``null``, ``$VAR``, ``<your-key>``, ``os.environ[…]``, ``[redacted]``)."""
    return not PLACEHOLDER.match(value) and not value.startswith(PLACEHOLDER_START)


IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z_.]*")


def _credential_like(value: str, keep: str) -> bool:
    """An unquoted value: not code (``api_key=api_key``, ``token = get()``); after ``name:``
    (YAML, prose) it must look like a credential, not like a word."""
    if not _real_value(value, keep) or "(" in value or IDENTIFIER.fullmatch(value):
        return False
    if "=" in keep or len(value) >= 24:
        return True
    return len(value) >= 6 and any(c.isdigit() or not c.isalnum() for c in value)


def _not_a_word(value: str, keep: str) -> bool:
    """'Bearer instrument' is prose; 'Bearer abc123…' is a token."""
    return not value.isalpha() and _real_value(value, keep)


def _user_and_password(value: str, keep: str) -> bool:
    """A Basic credential is base64 of 'user:password'."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return False
    return ":" in decoded and decoded.isprintable()


def _not_an_option(value: str, keep: str) -> bool:
    """``mysql -p`` asks for the password; ``-p--verbose`` is no password either."""
    return not value.startswith("-") and _real_value(value, keep)


def _not_numbers(value: str, keep: str) -> bool:
    """``00:11:22:33:44:55`` and ``2001:4860:0:0:0:0:8888`` are addresses, not ``.pgpass`` lines."""
    return re.fullmatch(r"[0-9A-Fa-f:.]+", keep + value) is None


def _random_body(value: str, keep: str) -> bool:
    """``sk-…`` keys are long random strings, unlike 'sk-learn-compatible-estimators'."""
    body = value.split("-", 1)[1] if "-" in value else value
    return any(c.isdigit() for c in body) and max(len(part) for part in re.split(r"[-_]", body)) >= 12


# -- the table -----------------------------------------------------------------------

_NAMES = (r"(?i:passw(?:or)?d|passphrase|secret|token|api[_-]?key|access[_-]?key|private[_-]?key"
          r"|account[_-]?key|(?<![A-Za-z0-9_])auth)")
_NAME_TRIGGERS = ("passw", "passphrase", "secret", "token", "apikey", "api_key", "api-key", "accesskey",
                  "access_key", "access-key", "privatekey", "private_key", "private-key", "accountkey",
                  "account_key", "account-key", "auth")
_QUOTE = r"\\*[\"']"
_WORDS = r"(?:[ \t]+[^\s;&|]+)*?"
"""The words of one shell command before an option (no line break, no ``;``, ``&&`` or ``|``)."""
_NEWLINE = r"(?:\r?\n|(?:\\+r)?\\+n)"
"""A line break, raw or escaped in JSON."""
_SPACES = r"(?:\s|\\+[nrt])+"
"""Blanks and line breaks, raw or escaped in JSON."""
_TOKEN = r"[^\s\"'\\]+"
_B = r"(?:\b|(?<=\\[nrt]))"
"""A word's start, also right after a line break or tab escaped in JSON (``\\nmachine``)."""
HINT_SPAN = 140
_COOKIE_VALUE = r"""(?:\\*["'])?[ \t]*:[ \t]*(?:\\*["'])?)[^\s=;,"'\\]{1,256}=[^\r\n"'\\]*"""
"""After the header's name: the colon, then every cookie to the end of the line."""

SHAPES: tuple[Shape, ...] = (
    Shape("private key block",
          r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----(?:[^\"\\]|\\+[nr/])*?"
          r"(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|(?=\\*\")|\Z)",
          ("private key",), label="[redacted private key]"),
    Shape("PuTTY private key",
          rf"(?P<keep>{_B}Private-Lines:[ \t]*\d+{_NEWLINE})[A-Za-z0-9+/=]{{4,}}(?![A-Za-z0-9+/=:-])"
          rf"(?:{_NEWLINE}[A-Za-z0-9+/=]{{4,}}(?![A-Za-z0-9+/=:-]))*",
          ("private-lines",), label="[redacted private key]"),
    Shape("Authorization header",
          r"(?P<keep>(?i:\b(?:proxy-)?authorization)(?:\\*[\"'])?\s*[:=]\s*(?:\\*[\"'])?"
          r"(?:[A-Za-z][A-Za-z0-9-]*\s+)?)[^\s\"'\\,;]{6,}",
          ("authorization",), _not_a_word),
    Shape("named field, quoted value",
          rf"(?P<keep>{_NAMES}(?:{_QUOTE})?\s*[:=]\s*{_QUOTE})[^\"'\\\n]{{3,}}",
          _NAME_TRIGGERS, _real_value),
    Shape("named field, bare value",
          rf"(?P<keep>{_NAMES}(?:{_QUOTE})?\s*[:=]\s*)(?!\\*[\"'])[^\s\"'\\,;&}}<>)\]]{{4,}}",
          _NAME_TRIGGERS, _credential_like),
    Shape("command-line option",
          r"(?P<keep>--(?:[a-z0-9]+-)*(?:passw(?:or)?d|passphrase|secret|token|api-?key|access-key|private-key)"
          r"\s+)(?!-)[^\s\"']{4,}",
          ("--",), _real_value),
    Shape("Basic credentials", r"(?P<keep>(?i:\bbasic)\s+)[A-Za-z0-9+/]{6,}={0,2}(?![A-Za-z0-9+/=])",
          ("basic",), _user_and_password),
    Shape("Bearer token", r"(?P<keep>(?i:\bbearer)\s+)[A-Za-z0-9._~+/-]{12,}=*", ("bearer",), _not_a_word),
    Shape("Sentry DSN key", r"(?P<keep>\bhttps?://)[0-9a-f]{32}(?::[0-9a-f]{32})?(?=@)", ("://",)),
    Shape("password in a URL",
          r"(?P<keep>\b[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s:/?#@\"'<>\\]*:)[^\s/?#@\"'<>\\]+(?=@)",
          ("://",)),
    Shape("signature in a URL (Azure SAS)", r"(?P<keep>[?&]sig=)[A-Za-z0-9%+/=]{16,}", ("sig=",)),
    Shape("Slack webhook", r"(?P<keep>\bhttps://hooks\.slack\.com/services/)[A-Za-z0-9/_-]{20,}", ("hooks.slack",)),
    Shape("AWS access key id (and the secret key next to it)",
          r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b(?:[\s,;:'\"|=]{1,6}[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=]))?",
          ("akia", "asia", "abia", "acca")),
    Shape("OpenAI / Anthropic / OpenRouter key", r"\bsk-[A-Za-z0-9_-]{20,}", ("sk-",), _random_body),
    Shape("Stripe key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}", ("k_live_", "k_test_")),
    Shape("Stripe webhook secret", r"\bwhsec_[A-Za-z0-9+/=]{24,}", ("whsec_",)),
    Shape("GitHub token", r"\bgh[pousr]_[A-Za-z0-9]{30,}", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
    Shape("GitHub fine-grained token", r"\bgithub_pat_[A-Za-z0-9_]{30,}", ("github_pat_",)),
    Shape("GitLab token", r"\bgl(?:pat|dt|rt|ptt|cbt|oas|soat|ft|imt|agent)-[A-Za-z0-9_-]{20,}",
          tuple(f"gl{kind}-" for kind in ("pat", "dt", "rt", "ptt", "cbt", "oas", "soat", "ft", "imt", "agent"))),
    Shape("Hugging Face token", r"\bhf_[A-Za-z0-9]{30,}", ("hf_",)),
    Shape("Slack token", r"\bxox[abposre]-[A-Za-z0-9-]{10,}|\bxapp-[0-9]-[A-Za-z0-9-]{10,}", ("xox", "xapp-")),
    Shape("Google API key", r"\bAIza[0-9A-Za-z_-]{30,}", ("aiza",)),
    Shape("Google OAuth access token", r"\bya29\.[0-9A-Za-z_-]{20,}", ("ya29.",)),
    Shape("Google OAuth refresh token", r"(?<![A-Za-z0-9/])1//0[0-9A-Za-z_-]{30,}", ("1//0",)),
    Shape("Google OAuth client secret", r"\bGOCSPX-[0-9A-Za-z_-]{20,}", ("gocspx-",)),
    Shape("JSON Web Token", r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*", ("eyj",)),
    Shape("npm token", r"\bnpm_[A-Za-z0-9]{36}\b", ("npm_",)),
    Shape("PyPI token", r"\bpypi-AgE[A-Za-z0-9_-]{50,}", ("pypi-",)),
    Shape("SendGrid key", r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}", ("sg.",)),
    Shape("DigitalOcean token", r"\bdo[opr]_v1_[a-f0-9]{64}\b", ("_v1_",)),
    Shape("Shopify token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b", ("shpat_", "shpca_", "shppa_", "shpss_")),
    Shape("Linear key", r"\blin_(?:api|oauth)_[A-Za-z0-9]{32,}", ("lin_",)),
    Shape("Telegram bot token", r"\b[0-9]{8,10}:AA[0-9A-Za-z_-]{30,}", (":aa",)),
    Shape("Mailgun key", r"\bkey-[0-9a-f]{32}\b", ("key-",)),
    Shape("Databricks token", r"\bdapi[0-9a-f]{32}\b", ("dapi",)),
    Shape("password glued to mysql -p",
          rf"(?P<keep>{_B}(?:mysql\w*|mariadb[\w-]*){_WORDS}[ \t]+-p(?:\\*[\"'])?)[^\s\"'\\;&|]+",
          ("mysql", "mariadb"), _not_an_option),
    Shape("curl -u user:password",
          rf"(?P<keep>{_B}curl{_WORDS}[ \t]+(?:-u[ \t]*|--user[ \t=]+)(?:\\*[\"'])?[^\s:\"'\\]*:)[^\s\"'\\]+",
          ("curl",)),
    Shape("sshpass -p password",
          rf"(?P<keep>{_B}sshpass(?:[ \t]+-[fdP][ \t]*\S+|[ \t]+-[ve])*[ \t]+-p[ \t]*(?:\\*[\"'])?)[^\s\"'\\]+",
          ("sshpass",), _not_an_option),
    Shape("password in a *_PWD variable (MYSQL_PWD)",
          rf"(?P<keep>{_B}[A-Z][A-Z0-9]*_PWD(?:\\*[\"'])?[ \t]*[:=][ \t]*(?:\\*[\"'])?)[^\s\"'\\;&]{{3,}}",
          ("_pwd",), _real_value),
    Shape(".netrc password",
          rf"(?P<keep>{_B}machine{_SPACES}{_TOKEN}(?:{_SPACES}(?:login|account|port){_SPACES}{_TOKEN})+"
          rf"{_SPACES}password{_SPACES})(?:\\*[\"'])?{_TOKEN}",
          ("machine",), _real_value),
    Shape(".pgpass line",
          r"(?:(?<![^\s\"'>])|(?<=\\n))(?P<keep>[A-Za-z0-9.*_-]{1,253}:(?:\d{1,5}|\*):[^\s:\"'\\]{1,64}"
          r":[^\s:\"'\\]{1,64}:)[^\s\"'\\]+",
          (), _not_numbers, hint=r":(?:\d{1,5}|\*):[^\s:\"'\\]{1,64}:[^\s:\"'\\]{1,64}:", hint_gate=":"),
    Shape("kubeconfig client key",
          rf"(?P<keep>{_B}client-key-data(?:\\*[\"'])?[ \t]*:[ \t]*(?:\\*[\"'])?)[A-Za-z0-9+/=]{{16,}}",
          ("client-key-data",)),
    Shape("age secret key", rf"{_B}AGE-SECRET-KEY-1[0-9A-Z]{{50,}}", ("age-secret-key-1",)),
    Shape("Vault token", rf"{_B}hv[sbr]\.[A-Za-z0-9_-]{{24,}}", ("hvs.", "hvb.", "hvr.")),
    Shape("Cookie header", rf"(?P<keep>(?:(?<![-\w])|(?<=\\[nrt]))(?i:cookie){_COOKIE_VALUE}", ("cookie",)),
    Shape("Set-Cookie header", rf"(?P<keep>{_B}(?i:set-cookie){_COOKIE_VALUE}", ("set-cookie",)),
    Shape("Twilio API key", r"\bSK[0-9a-f]{32}\b", (), hint=r"\bSK[0-9a-f]{32}", hint_gate="SK"),
)

HINTS = tuple((shape.hint_gate, re.compile(shape.hint)) for shape in SHAPES if shape.hint)
KEEP_GROUPS = tuple(f"k{index}" if "(?P<keep>" in shape.pattern else "" for index, shape in enumerate(SHAPES))
ALTERNATIVES = tuple(f"(?P<s{index}>{shape.pattern.replace('(?P<keep>', f'(?P<k{index}>')})"
                     for index, shape in enumerate(SHAPES))
"""Each shape in a group ``s<index>``, its kept prefix in ``k<index>``."""
_TRIGGERS = sorted({t for shape in SHAPES for t in shape.triggers})
ANNOUNCED = {trigger: frozenset(index for index, shape in enumerate(SHAPES)
                                if any(longer.startswith(trigger) for longer in shape.triggers))
             for trigger in _TRIGGERS}
"""The shapes each trigger announces: those of every trigger it begins (the trie finds the shortest)."""
HINTED = tuple((index, shape.hint_gate, re.compile(shape.hint)) for index, shape in enumerate(SHAPES) if shape.hint)
NEVER = "(?!)"

# -- what may still become a secret at the end of a stream -----------------------------

CONTEXT_TAIL = re.compile(
    rf"(?:{_NAMES}(?:{_QUOTE})?\s*(?:[:=]\s*(?:{_QUOTE}[^\"'\\\n]*)?)?"
    r"|(?i:\b(?:proxy-)?authorization)(?:\\*[\"'])?\s*(?:[:=]\s*(?:\\*[\"'])?(?:[A-Za-z][A-Za-z0-9-]*\s+)?)?"
    r"|(?i:\b(?:bearer|basic))\s*"
    r"|--(?:[a-z0-9]+-)*(?:passw(?:or)?d|passphrase|secret|token|api-?key|access-key|private-key)\s*"
    r"|\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}[\s,;:'\"|=]*"
    r"|\b(?:mysql\w*|mariadb[\w-]*|curl|sshpass)(?:[ \t]+[^\s;&|]+)*[ \t]*"
    r"|\b[A-Z][A-Z0-9]*_PWD(?:\\*[\"'])?[ \t]*(?:[:=][ \t]*(?:\\*[\"'])?)?"
    rf"|\bmachine(?:{_SPACES}{_TOKEN}(?:{_SPACES}(?:login|account|port){_SPACES}{_TOKEN})*"
    rf"(?:{_SPACES}(?:login|account|port|password))?)?(?:{_SPACES})?"
    r"|\bclient-key-data(?:\\*[\"'])?[ \t]*(?::[ \t]*(?:\\*[\"'])?)?"
    r"|(?i:\b(?:set-)?cookie)(?:\\*[\"'])?[ \t]*(?::[ \t]*(?:\\*[\"'])?[^\r\n\"'\\]*)?"
    r"|-----BEGIN[ A-Z0-9]*)\Z")
CONTEXT_TRIGGERS = (*_NAME_TRIGGERS, "authorization", "bearer", "basic", "--", "akia", "asia", "abia", "acca",
                    "-----begin", "mysql", "mariadb", "curl", "sshpass", "_pwd", "machine", "client-key-data",
                    "cookie")
CONTEXT_WINDOW = 256
"""How far back a context (``password = "``) may start before the end of the text."""
HOLD_LIMIT = 4096
"""A stream holds back at most this much; beyond it, all but ``HOLD_KEEP`` is let through."""
HOLD_KEEP = 1024
PEM_BEGIN = "-----BEGIN"
PEM_END = re.compile(r"-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----")
PUTTY_BEGIN = "Private-Lines:"
PUTTY_BLOCK = re.compile(rf"Private-Lines:[ \t]*\d*(?:{_NEWLINE}[A-Za-z0-9+/=]*)*")
SCOPABLE_FLAGS = re.compile(r"^\(\?([imsx]+)\)")


class Redactor:
    """Replaces secrets in text; build one per session with :meth:`for_env`."""

    def __init__(self, literals: Mapping[str, str] | None = None, patterns: Sequence[str] = ()) -> None:
        self.literals = dict(literals or {})
        self._forms = tuple({form for value in self.literals for form in (value, _json_escaped(value))})
        self._spaced_forms = tuple(form for form in self._forms if any(c.isspace() for c in form))
        self._custom = bool(patterns)
        escaped = [re.escape(form) for form in sorted(self._forms, key=len, reverse=True)]
        self._literal = re.compile("|".join(escaped)) if escaped else None
        """Configured values, replaced first: no shape may swallow part of one."""
        self._shapes = re.compile("|".join(_alternatives(patterns)))
        triggers = {t for shape in SHAPES for t in shape.triggers} | {form.lower() for form in self._forms}
        self._prefilter = re.compile(_trie(triggers))
        self.overlap = max(*map(len, triggers), HINT_SPAN if HINTS else 0) - 1
        """How far back a trigger that ends in new text may start."""

    @classmethod
    def for_env(cls, env: Mapping[str, str], inherited: Mapping[str, str] | None = None,
                patterns: Sequence[str] = ()) -> Redactor:
        """Secrets from the agent's configured ``env`` and secret-named ``inherited`` variables."""
        return cls.for_envs([env], inherited, patterns)

    @classmethod
    def for_envs(cls, envs: Iterable[Mapping[str, str]], inherited: Mapping[str, str] | None = None,
                 patterns: Sequence[str] = ()) -> Redactor:
        """One redactor for several agents' environments (what every notification is cleaned with)."""
        literals: dict[str, str] = {}
        source = os.environ if inherited is None else inherited
        for name, value in source.items():
            if SECRET_NAME.search(name) and len(value) >= MIN_INHERITED_VALUE and not _names_a_path(name, value):
                literals[value] = name
        for env in envs:
            for name, value in env.items():
                if secret_env_value(name, value):
                    literals[value] = name
        return _cached(tuple(sorted(literals.items())), tuple(patterns))

    def __call__(self, text: str) -> str:
        """``text`` with every secret replaced."""
        if not self.suspect(text):
            return text
        if self._literal is not None:
            text = self._literal.sub(self._replace_literal, text)
        return self._shapes_in(text).sub(self._replace, text)

    def _shapes_in(self, text: str) -> re.Pattern[str]:
        """One pattern of the shapes that may match in ``text``: those whose trigger (or hint) it
        holds. A shape matches nothing without one (the pre-check's premise), so the leftmost
        match of the rest is the same, and Python tries every alternative of one pattern at every
        character: all the shapes cost 0.14 ms on a 50-character line that says "tokens" or
        "--", the shapes such a line announces 0.02 ms."""
        if self._custom:
            return self._shapes
        chosen: set[int] = set()
        for trigger in TRIGGERS_AT.findall(text.lower()):
            chosen |= ANNOUNCED[trigger]
        chosen.update(index for index, gate, hint in HINTED if gate in text and hint.search(text) is not None)
        return _shapes_pattern(tuple(sorted(chosen)))

    def _replace_literal(self, match: re.Match[str]) -> str:
        name = self.literals.get(match.group(0)) or self._escaped_name(match.group(0))
        return f"[redacted:${name}]" if name else REDACTED

    def suspect(self, text: str) -> bool:
        """A cheap pre-check (the full pattern costs tens of microseconds per message): False
        when ``text`` holds no secret, and no context or configured value that starts one."""
        if self._custom or self._prefilter.search(text.lower()) is not None:
            return True
        for gate, hint in HINTS:
            if gate in text and hint.search(text) is not None:
                return True
        return False

    def _replace(self, match: re.Match[str]) -> str:
        group = match.lastgroup or ""
        if group.startswith("s"):
            index = int(group[1:])
            keep = match.group(KEEP_GROUPS[index]) or "" if KEEP_GROUPS[index] else ""
            value = match.group(0)[len(keep):]
            shape = SHAPES[index]
            if shape.check is not None and not shape.check(value, keep):
                whole = match.group(0)  # not this secret; another may start inside it
                return whole[0] + self._shapes.sub(self._replace, whole[1:])
            return keep + shape.label
        return REDACTED  # the user's own patterns

    def _escaped_name(self, text: str) -> str | None:
        for value, name in self.literals.items():
            if _json_escaped(value) == text:
                return name
        return None

    # -- streams -------------------------------------------------------------------

    @property
    def spaced(self) -> bool:
        """Whether a configured value holds whitespace (a stream must then look further back)."""
        return bool(self._spaced_forms)

    def safe_cut(self, text: str) -> int:
        """How much of ``text`` (the stream so far, not yet shown) can be redacted and shown now.

        The rest could still grow into a secret: the word being streamed (secrets hold no
        whitespace), a context such as ``password = "`` or ``Bearer``, an open private key
        block, the start of a configured value that holds spaces.
        """
        cut = _after_last_space(text)
        if self.suspect(text):
            cut = self._settled(text, cut)
        if cut and self._spaced_forms:
            cut = _before_literal(text, cut, self._spaced_forms)
        if len(text) - cut > HOLD_LIMIT:
            return self._forced_cut(text)
        return cut

    def _settled(self, text: str, cut: int) -> int:
        """``cut`` moved back until it splits no match and leaves no context at the end of what is shown."""
        while cut:
            moved = self._before_context(text, cut)
            if PEM_BEGIN in text:
                moved = _before_private_key(text, moved)
            if PUTTY_BEGIN in text:
                moved = _before_putty_key(text, moved)
            moved = self._before_match(text, moved)
            if moved == cut:
                return cut
            cut = moved
        return cut

    def _before_match(self, text: str, cut: int) -> int:
        """``cut`` moved to the start of a match (of a configured value, or a shape) it would split."""
        for pattern in (self._literal, self._shapes_in(text)):
            for match in pattern.finditer(text) if pattern is not None else ():
                if match.start() >= cut:
                    break
                if match.end() > cut:
                    cut = match.start()
                    break
        return cut

    def _before_context(self, text: str, cut: int) -> int:
        start = max(0, cut - CONTEXT_WINDOW)
        window = text[start:cut].lower()
        if not any(trigger in window for trigger in CONTEXT_TRIGGERS):
            return cut
        match = CONTEXT_TAIL.search(text, start, cut)
        return match.start() if match else cut

    def _forced_cut(self, text: str) -> int:
        """Too much held back: let all but the last HOLD_KEEP characters through, never cutting a match."""
        return self._before_match(text, len(text) - HOLD_KEEP)


class StreamRedactor:
    """Redacts chunks of one stream as if the whole text were redacted at once.

    ``feed`` returns what can be shown now (redacted); a tail that may still become a secret
    is held back until more text arrives or ``flush`` ends the stream. The fast path (no
    trigger word in sight) looks only at the new chunk and the end of the held tail, so a
    long word streamed in tiny chunks costs no more per chunk than a short one.
    """

    __slots__ = ("_clean", "_held", "_redactor")

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._held = ""
        self._clean = True
        """The held tail holds no trigger (the fast path need not look at it again)."""

    def feed(self, chunk: str) -> str:
        held, redactor = self._held, self._redactor
        text = held + chunk if held else chunk
        seen = max(0, len(held) - redactor.overlap) if self._clean else 0
        if redactor.suspect(text[seen:] if seen else text):
            return self._slow(text)
        last = max(chunk.rfind(" "), chunk.rfind("\n"))
        cut = len(held) + last + 1 if last >= 0 else 0
        if redactor.spaced:
            cut = redactor.safe_cut(text)
        elif len(text) - cut > HOLD_LIMIT:
            cut = len(text) - HOLD_KEEP
        self._held = text[cut:]
        return text[:cut]

    def _slow(self, text: str) -> str:
        redactor = self._redactor
        cut = redactor.safe_cut(text)
        self._held, self._clean = text[cut:], False
        return redactor(text[:cut]) if cut else ""

    def flush(self) -> str:
        """The held-back tail, redacted (the stream ended)."""
        held, self._held, self._clean = self._held, "", True
        return self._redactor(held) if held else ""

    @property
    def holding(self) -> int:
        """How many characters are held back."""
        return len(self._held)


def secret_env_value(name: str, value: str) -> bool:
    """Whether a configured env value is a secret: always when its name says so (``…_API_KEY``,
    ``…TOKEN``, ``…PASSWORD``), else unless it is plainly not one (a word, a path, a URL
    without credentials, JSON): redacting ``auto`` or a folder everywhere would hide the chat."""
    if len(value) < MIN_ENV_VALUE or NOT_SECRET.match(value) or _names_a_path(name, value):
        return False
    return bool(SECRET_NAME.search(name)) or not PLAIN_VALUE.match(value)


def _names_a_path(name: str, value: str) -> bool:
    """``PWD``, ``OLDPWD``, and any value that is an absolute path or a colon list of them."""
    return name in NOT_SECRET_NAMES or PATHS.match(value) is not None


def check_pattern(pattern: str) -> str:
    """``pattern`` if it is a valid regular expression that cannot match the empty string."""
    try:
        compiled = re.compile(_scoped(pattern))
    except re.error as exc:
        raise ValueError(f"not a regular expression ({exc}): {pattern!r}") from None
    if compiled.match(""):
        raise ValueError(f"matches the empty string: {pattern!r}")
    return pattern


def warm(*texts: str) -> None:
    """Compile now what the first redactions would: the whole table (the first Redactor) and the
    shapes each of ``texts`` announces (about 1 ms a new set)."""
    redactor = Redactor()
    for text in texts:
        redactor._shapes_in(text)


@functools.lru_cache(maxsize=16)
def _cached(literals: tuple[tuple[str, str], ...], patterns: tuple[str, ...]) -> Redactor:
    return Redactor(dict(literals), patterns)


@functools.lru_cache(maxsize=256)
def _shapes_pattern(indices: tuple[int, ...]) -> re.Pattern[str]:
    """The shapes ``indices`` (in the table's order) as one pattern; none: a pattern that never matches."""
    return re.compile("|".join(ALTERNATIVES[index] for index in indices) or NEVER)


def _alternatives(patterns: Sequence[str]) -> list[str]:
    """The shapes, each in a group ``s<index>`` (its kept prefix in ``k<index>``), then the user's patterns."""
    alternatives = list(ALTERNATIVES)
    if patterns:
        alternatives.append(f"(?P<custom>{'|'.join(f'(?:{_scoped(p)})' for p in patterns)})")
    return alternatives


def _trie(words: Iterable[str]) -> str:
    """One pattern that finds any of ``words``, as a trie: several times faster than an alternation."""
    tree: dict[str, dict[str, object]] = {}
    for word in words:
        node = tree
        for char in word:
            node = node.setdefault(char, {})  # type: ignore[assignment]
        node[""] = {}
    return _trie_node(tree)


def _trie_node(node: Mapping[str, object]) -> str:
    if "" in node:
        return ""  # a word ends here: any longer one contains it
    parts = [re.escape(char) + _trie_node(sub) for char, sub in sorted(node.items())
             if isinstance(sub, dict)]
    return parts[0] if len(parts) == 1 else f"(?:{'|'.join(parts)})"


def _scoped(pattern: str) -> str:
    """A user's ``(?i)pattern`` as ``(?i:pattern)``: global flags cannot stand inside an alternation."""
    return SCOPABLE_FLAGS.sub(lambda m: f"(?{m.group(1)}:", pattern) + ")" if SCOPABLE_FLAGS.match(pattern) \
        else pattern


def _json_escaped(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)[1:-1]


def _after_last_space(text: str) -> int:
    """Where the word being streamed starts (secrets hold no spaces or newlines)."""
    return max(text.rfind(" "), text.rfind("\n")) + 1


def _before_literal(text: str, cut: int, forms: Iterable[str]) -> int:
    """``cut`` moved before any of ``forms`` (values holding whitespace) that it would split, or
    whose beginning ends ``text``."""
    for form in forms:
        index = text.find(form, max(0, cut - len(form) + 1))
        if index != -1 and index < cut:
            cut = index
        index = text.find(form[0], max(0, len(text) - len(form) + 1))
        while index != -1 and index < cut:
            if form.startswith(text[index:]):
                cut = index
                break
            index = text.find(form[0], index + 1)
    return cut


def _before_private_key(text: str, cut: int) -> int:
    """``cut`` moved to the start of a private key block it would split (or that has not ended)."""
    begin = text.rfind(PEM_BEGIN, 0, cut)
    if begin == -1:
        return cut
    header_end = text.find("-----", begin + len(PEM_BEGIN))
    if header_end != -1 and "PRIVATE KEY" not in text[begin:header_end]:
        return cut  # a certificate, a public key: nothing secret
    end = PEM_END.search(text, begin)
    return begin if end is None or end.end() > cut else cut


def _before_putty_key(text: str, cut: int) -> int:
    """``cut`` moved to the start of a PuTTY key's private lines when they may not have ended."""
    begin = text.rfind(PUTTY_BEGIN, 0, cut)
    if begin == -1:
        return cut
    block = PUTTY_BLOCK.match(text, begin)
    rest = text[block.end():] if block else ""
    return begin if not rest.strip("\\\r") else cut


TRIGGERS_AT = re.compile(f"(?=({_trie(_TRIGGERS)}))")
"""Every trigger of a shape in a text, overlapping ones too (the shortest at each position)."""
