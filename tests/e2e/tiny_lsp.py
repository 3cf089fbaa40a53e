"""A tiny real LSP server over stdio for the editor-tools tests: symbols, definition, references.

It knows only what the editor opened (``didOpen``/``didChange`` with full text). Symbols are the
``def <name>`` and ``class <name>`` lines; a name's definition is its ``def``/``class`` line in
any open document; references are every whole-word occurrence in every open document.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

DOCS: dict[str, list[str]] = {}
DEFINES = re.compile(r"^\s*(def|class)\s+(\w+)")


def read() -> dict[str, Any] | None:
    length = 0
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(sys.stdin.buffer.read(length))


def write(message: dict[str, Any]) -> None:
    body = json.dumps(message).encode()
    sys.stdout.buffer.write(f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
    sys.stdout.buffer.flush()


def word_at(uri: str, line: int, character: int) -> str:
    text = DOCS.get(uri, [""])[line] if line < len(DOCS.get(uri, [])) else ""
    for match in re.finditer(r"\w+", text):
        if match.start() <= character <= match.end():
            return match.group(0)
    return ""


def span(uri: str, line: int, start: int, end: int) -> dict[str, Any]:
    return {"uri": uri, "range": {"start": {"line": line, "character": start}, "end": {"line": line, "character": end}}}


def definitions(name: str) -> list[dict[str, Any]]:
    found = []
    for uri, lines in DOCS.items():
        for number, text in enumerate(lines):
            match = DEFINES.match(text)
            if match and match.group(2) == name:
                found.append(span(uri, number, match.start(2), match.end(2)))
    return found


def references(name: str) -> list[dict[str, Any]]:
    return [span(uri, number, m.start(), m.end()) for uri, lines in DOCS.items()
            for number, text in enumerate(lines) for m in re.finditer(rf"\b{re.escape(name)}\b", text)]


def symbols(uri: str) -> list[dict[str, Any]]:
    out = []
    for number, text in enumerate(DOCS.get(uri, [])):
        match = DEFINES.match(text)
        if match:
            kind = 12 if match.group(1) == "def" else 5
            location = span(uri, number, match.start(2), match.end(2))
            out.append({"name": match.group(2), "kind": kind, "location": location})
    return out


def answer(method: str, params: dict[str, Any]) -> Any:
    if method == "initialize":
        return {"capabilities": {"textDocumentSync": 1, "documentSymbolProvider": True, "definitionProvider": True,
                                 "referencesProvider": True, "workspaceSymbolProvider": True},
                "serverInfo": {"name": "tiny-lsp"}}
    if method == "textDocument/documentSymbol":
        return symbols(params["textDocument"]["uri"])
    if method in ("textDocument/definition", "textDocument/references"):
        pos = params["position"]
        name = word_at(params["textDocument"]["uri"], pos["line"], pos["character"])
        return definitions(name) if method.endswith("definition") else references(name)
    if method == "workspace/symbol":
        return [s for uri in DOCS for s in symbols(uri) if params.get("query", "") in s["name"]]
    return None


def notified(method: str, params: dict[str, Any]) -> None:
    if method == "textDocument/didOpen":
        DOCS[params["textDocument"]["uri"]] = params["textDocument"]["text"].split("\n")
    elif method == "textDocument/didChange":
        DOCS[params["textDocument"]["uri"]] = params["contentChanges"][-1]["text"].split("\n")
    elif method == "textDocument/didClose":
        DOCS.pop(params["textDocument"]["uri"], None)


def main() -> None:
    while (message := read()) is not None:
        method, params = message.get("method", ""), message.get("params") or {}
        if method == "exit":
            return
        if "id" in message and method:
            write({"jsonrpc": "2.0", "id": message["id"], "result": answer(method, params)})
        elif method:
            notified(method, params)


if __name__ == "__main__":
    main()
