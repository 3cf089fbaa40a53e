"""A stdio MCP server, by hand (MCP 2025-06-18), whose one tool ``ask`` asks the user through MCP
elicitation (``elicitation/create`` to the agent's MCP client) and reports what came back.

The ``mcp`` SDK installed for the tests speaks the 2026 protocol, which forbids server-initiated
requests on a modern connection; an older server, as most deployed ones are, asks this way.
"""

from __future__ import annotations

import json
import sys

VERSION = "2025-06-18"
ASK_ID = "probe-ask-1"
SCHEMA = {"type": "object", "required": ["nickname"], "properties": {
    "nickname": {"type": "string", "title": "Nickname", "description": "what the probe should call you",
                 "minLength": 2}}}
TOOL = {"name": "ask", "description": "Ask the user for a nickname", "inputSchema": {"type": "object",
                                                                                    "properties": {}}}


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    waiting: object = None  # the id of the tools/call waiting for the user's answer
    for line in sys.stdin:
        message = json.loads(line)
        method, msg_id = message.get("method"), message.get("id")
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": msg_id, "result": {
                "protocolVersion": VERSION, "capabilities": {"tools": {}},
                "serverInfo": {"name": "probe-elicit", "version": "0"}}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": msg_id, "result": {"tools": [TOOL]}})
        elif method == "tools/call":
            waiting = msg_id
            send({"jsonrpc": "2.0", "id": ASK_ID, "method": "elicitation/create", "params": {
                "message": "The probe would like your nickname", "requestedSchema": SCHEMA}})
        elif msg_id == ASK_ID and method is None and waiting is not None:
            result = message.get("result") or {}
            action = result.get("action", "error")
            text = f"probe-asked accept {result.get('content', {}).get('nickname')}" if action == "accept" \
                else f"probe-asked {action}"
            send({"jsonrpc": "2.0", "id": waiting, "result": {"content": [{"type": "text", "text": text}]}})
            waiting = None
        elif msg_id is not None and method is not None:
            send({"jsonrpc": "2.0", "id": msg_id, "result": {}})


if __name__ == "__main__":
    main()
