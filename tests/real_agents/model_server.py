"""The scripted model server: four streaming model APIs on 127.0.0.1, driven by ``script.py``.

Every agent under test is pointed here (see ``agents.py``). Requests are answered from the
conversation they carry, so the server keeps no per-agent state; it only records what it
was asked, for failure messages.
"""

from __future__ import annotations

import itertools
import json
import re
import sys
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from . import wire_anthropic, wire_chat, wire_gemini, wire_responses
from .script import Reply, Turn, find_scenario, reply_for
from .sink import Disconnected, Sink

GEMINI_PATH = re.compile(r"^/v1(?:beta|alpha)?/models/([^:/]+):(streamGenerateContent|generateContent|countTokens)")


@dataclass(slots=True)
class Seen:
    """One request, summarised for diagnostics."""

    api: str
    scenario: str
    step: int
    answer: str
    result: str = ""

    def __str__(self) -> str:
        seen = f" (after tool result {self.result[:160]!r})" if self.result else ""
        return f"{self.api} {self.scenario}#{self.step}{seen} -> {self.answer}"


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """An agent killed mid-request (a cancel, a restart, the test's end) resets its connection:
        normal here, not a traceback in the suite's output; anything else is still printed."""
        if not isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            super().handle_error(request, client_address)


class ModelServer:
    """Owns the HTTP server thread; ``url`` is its base address."""

    def __init__(self) -> None:
        self.seen: list[Seen] = []
        self.errors: list[str] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._asked = threading.Condition(self._lock)
        self.stopping = threading.Event()
        self.limited: set[str] = set()
        """``limit_once`` markers already answered with a 429 (the next request of each succeeds)."""
        self._httpd = _Server(("127.0.0.1", 0), _handler_for(self))
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="model-server", daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> ModelServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        with self._asked:
            self._asked.notify_all()
        self._httpd.shutdown()
        self._httpd.server_close()

    def next_id(self) -> str:
        return str(next(self._ids))

    def record(self, api: str, turn: Turn, reply: Reply) -> None:
        scenario = find_scenario(turn)
        answer = f"call {reply.call.name}" if reply.call else f"text {''.join(reply.chunks)[:40]!r}"
        with self._lock:
            if reply.error:
                self.errors.append(f"{api}: {reply.error}")
            self.seen.append(Seen(api, scenario.name if scenario else "-", scenario.step if scenario else 0,
                                  answer, scenario.last_result if scenario else ""))
            self._asked.notify_all()

    def wait_asked(self, scenario: str) -> None:
        """Return once a request of ``scenario`` has come (or the server stops)."""
        with self._asked:
            self._asked.wait_for(lambda: self.stopping.is_set() or any(s.scenario == scenario for s in self.seen))

    def summary(self, last: int = 12) -> str:
        """The last requests and any errors, for assertion messages."""
        with self._lock:
            lines = [str(s) for s in self.seen[-last:]] + [f"ERROR {e}" for e in self.errors[-5:]]
        return "\n".join(lines) or "(the model server saw no request)"


def _handler_for(server: ModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        model = server

    return Handler


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    model: ModelServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._json(200, {"object": "list", "data": [], "models": []})
        else:
            self._json(404, {"error": {"message": f"scripted model server: no GET {self.path}"}})

    def do_POST(self) -> None:
        body = self._body()
        try:
            self._route(body)
        except Disconnected:
            self.close_connection = True

    def _body(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b"{}"
        try:
            return json.loads(raw or b"{}")
        except json.JSONDecodeError:
            return {}

    def _route(self, body: dict[str, Any]) -> None:
        path = self.path.split("?", 1)[0]
        gemini = GEMINI_PATH.match(path)
        if path.endswith("/messages/count_tokens"):
            self._json(200, {"input_tokens": 100})
        elif path.endswith("/messages"):
            self._anthropic(body)
        elif path.endswith("/chat/completions"):
            self._answer("chat", body, wire_chat, stream=bool(body.get("stream")))
        elif path.endswith("/responses"):
            self._answer("responses", body, wire_responses, stream=True)
        elif gemini and gemini.group(2) == "countTokens":
            self._json(200, {"totalTokens": 100})
        elif gemini:
            self._gemini(body, stream=gemini.group(2) == "streamGenerateContent")
        else:
            self.model.errors.append(f"unknown POST {self.path}")
            self._json(404, {"error": {"message": f"scripted model server: no POST {self.path}"}})

    def _anthropic(self, body: dict[str, Any]) -> None:
        turn = wire_anthropic.parse(body)
        scenario = find_scenario(turn)
        if turn.tools and scenario is not None and scenario.name == "limit_once":
            key = scenario.params.get("id", "")
            with self.model._lock:
                first = key not in self.model.limited
                self.model.limited.add(key)
            if first:
                self._rate_limited()
                return
        self._answer("anthropic", body, wire_anthropic, stream=bool(body.get("stream")))

    def _rate_limited(self) -> None:
        """Anthropic's 429: a ``rate_limit_error`` body, ``retry-after`` and the rate-limit headers."""
        data = json.dumps({"type": "error", "error": {
            "type": "rate_limit_error",
            "message": "This request would exceed your organization's rate limit of 50 requests per minute."}}).encode()
        self.send_response(429)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("retry-after", "30")
        self.send_header("anthropic-ratelimit-requests-limit", "50")
        self.send_header("anthropic-ratelimit-requests-remaining", "0")
        self.send_header("anthropic-ratelimit-requests-reset", "2026-12-01T00:00:30Z")
        self.send_header("request-id", "req_scripted_429")
        self.end_headers()
        self.wfile.write(data)

    def _answer(self, api: str, body: dict[str, Any], wire: Any, stream: bool) -> None:
        turn = wire.parse(body)
        reply = reply_for(turn)
        self.model.record(api, turn, reply)
        step_id = self.model.next_id()
        if stream:
            self._stream(lambda sink: wire.stream(reply, sink, step_id), reply)
        else:
            self._json(200, wire.whole(reply, step_id))

    def _gemini(self, body: dict[str, Any], stream: bool) -> None:
        turn = wire_gemini.parse(body)
        reply = wire_gemini.json_reply(turn) if turn.wants_json is not None else reply_for(turn)
        self.model.record("gemini", turn, reply)
        step_id = self.model.next_id()
        if stream:
            self._stream(lambda sink: wire_gemini.stream(reply, sink, step_id), reply)
        else:
            self._json(200, wire_gemini.whole(reply))

    def _stream(self, write: Any, reply: Reply | None = None) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        hold = None
        if reply is not None and reply.hold is not None:
            after, scenario = reply.hold
            hold = (after, lambda: self.model.wait_asked(scenario))
        sink = Sink(self.wfile, self.model.stopping, hold)
        write(sink)
        sink.end()

    def _json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
