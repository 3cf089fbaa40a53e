"""The scripted model server on its own: each API's request shape in, its stream shape out."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from helpers import WAIT_FLOOR

from . import wire_responses
from .model_server import ModelServer
from .script import HOLD_AFTER, SEARCHES, ToolShape, Turn, edit_call, find_scenario, json_for_schema, reply_for

MARK = "[scenario=edit file=/w/a.txt old=answer_41 new=answer_42] go"


def post(server: ModelServer, path: str, body: dict[str, Any]) -> str:
    request = urllib.request.Request(server.url + path, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.read().decode()


def sse_data(text: str) -> list[Any]:
    return [json.loads(line[6:]) for line in text.splitlines()
            if line.startswith("data: ") and line != "data: [DONE]"]


def test_steps_follow_tool_results_after_the_marker() -> None:
    turn = Turn(tools={"Read": ToolShape("Read", {"file_path"}), "Edit": ToolShape(
        "Edit", {"file_path", "old_string", "new_string"})})
    turn.add("user", "[scenario=text] an older turn")
    turn.add("tool_result", "from the older turn")
    turn.add("user", MARK)
    assert reply_for(turn).call.name == "Read"
    turn.add("tool_result", "first line\nanswer_41\n")
    assert reply_for(turn).call.args == {"file_path": "/w/a.txt", "old_string": "answer_41", "new_string": "answer_42"}
    turn.add("tool_result", "ok")
    assert reply_for(turn).call is None
    assert find_scenario(turn).step == 2


def test_side_requests_without_tools_get_plain_text() -> None:
    turn = Turn()
    turn.add("user", MARK)
    reply = reply_for(turn)
    assert reply.call is None and reply.chunks == ["Scripted title"]


def test_codex_edits_through_a_freeform_patch() -> None:
    call = edit_call({"apply_patch": ToolShape("apply_patch", set(), freeform=True)}, "/w/a.txt", "x", "y")
    assert call.text == "*** Begin Patch\n*** Update File: /w/a.txt\n@@\n-x\n+y\n*** End Patch\n"


def test_codex_mcp_tools_behind_a_tool_search_are_searched_first() -> None:
    body: dict[str, Any] = {"tools": [{"type": "function", "name": "exec_command"}, {"type": "tool_search"}],
                            "input": [{"type": "message", "role": "user", "content": [
                                {"type": "input_text", "text": "[scenario=mcp_probe] ask"}]}]}
    search = wire_responses._call_item(reply_for(wire_responses.parse(body)), "1")
    assert search["type"] == "tool_search_call" and search["execution"] == "client"
    assert search["arguments"]["query"] == "probe reveal"
    body["input"] += [search, {"type": "tool_search_output", "call_id": search["call_id"], "tools": []}]
    again = reply_for(wire_responses.parse(body))
    assert again.call is not None and again.call.name == "tool_search" and again.delay > 0.1
    body["input"][-1]["tools"] = [{"type": "namespace", "name": "mcp__probe", "tools": [
        {"type": "function", "name": "reveal", "parameters": {"properties": {"what": {}}}}]}]
    call = wire_responses._call_item(reply_for(wire_responses.parse(body)), "2")
    assert (call["type"], call["namespace"], call["name"]) == ("function_call", "mcp__probe", "reveal")
    assert find_scenario(wire_responses.parse(body)).step == 0
    body["input"] = body["input"][:1] + [{"type": "tool_search_output", "tools": []}] * SEARCHES
    assert "no editor tool 'reveal'" in reply_for(wire_responses.parse(body)).chunks[0]


def test_json_side_requests_get_a_value_of_their_schema() -> None:
    schema = {"type": "object", "properties": {"next_speaker": {"type": "string", "enum": ["user", "model"]},
                                               "reasoning": {"type": "string"}}}
    assert json_for_schema(schema) == {"next_speaker": "user", "reasoning": "scripted"}


def test_four_apis_stream_their_own_shapes() -> None:
    model_server = ModelServer().start()
    try:
        _stream_each_api(model_server)
    finally:
        model_server.stop()


def _stream_each_api(model_server: ModelServer) -> None:
    anthropic = sse_data(post(model_server, "/v1/messages", {
        "stream": True, "messages": [{"role": "user", "content": "[scenario=text] hi"}],
        "tools": [{"name": "Read", "input_schema": {"properties": {"file_path": {}}}}]}))
    assert [e["type"] for e in anthropic][:2] == ["message_start", "content_block_start"]
    assert anthropic[-1]["type"] == "message_stop"
    chat = sse_data(post(model_server, "/v1/chat/completions", {
        "stream": True, "messages": [{"role": "user", "content": "[scenario=text] hi"}],
        "tools": [{"type": "function", "function": {"name": "read", "parameters": {"properties": {}}}}]}))
    assert "".join(c["choices"][0]["delta"].get("content", "") for c in chat if c["choices"]).startswith(
        "Streamed reply:")
    assert chat[-1]["usage"]["prompt_tokens"] == 1200
    responses = sse_data(post(model_server, "/v1/responses", {
        "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "[scenario=text]"}]}],
        "tools": [{"type": "function", "name": "exec_command", "parameters": {"properties": {"cmd": {}}}}]}))
    assert responses[0]["type"] == "response.created" and responses[-1]["type"] == "response.completed"
    gemini = sse_data(post(model_server, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", {
        "contents": [{"role": "user", "parts": [{"text": "[scenario=text] hi"}]}],
        "tools": [{"functionDeclarations": [{"name": "read_file", "parameters": {"properties": {}}}]}]}))
    assert gemini[-1]["candidates"][0]["finishReason"] == "STOP"
    assert not model_server.errors


PNG_B64 = "iVBORw0KGgo="  # the PNG signature, base64


def test_image_parts_are_recorded_in_each_apis_shape() -> None:
    from . import wire_anthropic, wire_chat, wire_gemini, wire_responses

    mark = "[scenario=image] what is it"
    anthropic = wire_anthropic.parse({"tools": [{"name": "Read"}], "messages": [{"role": "user", "content": [
        {"type": "text", "text": mark},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64}}]}]})
    chat = wire_chat.parse({"tools": [{"function": {"name": "read"}}], "messages": [{"role": "user", "content": [
        {"type": "text", "text": mark},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_B64}"}}]}]})
    responses = wire_responses.parse({"tools": [{"name": "exec_command"}], "input": [{"type": "message",
        "role": "user", "content": [{"type": "input_text", "text": mark},
                                    {"type": "input_image", "image_url": f"data:image/png;base64,{PNG_B64}"}]}]})
    gemini = wire_gemini.parse({"tools": [{"functionDeclarations": [{"name": "read_file"}]}], "contents": [
        {"role": "user", "parts": [{"text": mark}, {"inlineData": {"mimeType": "image/png", "data": PNG_B64}}]}]})
    seen = [reply_for(turn).chunks for turn in (anthropic, chat, responses, gemini)]
    shapes = ["anthropic_image", "image_url", "input_image", "inlineData"]
    for chunks, shape in zip(seen, shapes, strict=True):
        assert "".join(chunks).strip() == f"image-seen {shape} image/png sha=4c4b6a3be131", chunks


def test_the_editor_tool_is_found_by_each_agents_naming() -> None:
    from .script import editor_tool

    for name in ("mcp__nvim__diagnostics", "nvim_diagnostics", "nvim__diagnostics", "diagnostics"):
        assert editor_tool({name: ToolShape(name, {"path"})}, "diagnostics").name == name


TOOLS = [{"name": "Read", "input_schema": {"properties": {"file_path": {}}}}]


def test_a_held_stream_waits_for_the_scenario_it_names() -> None:
    """``[scenario=slow until=X]`` streams ``HOLD_AFTER`` ticks, then nothing until a request of X comes."""
    model_server = ModelServer().start()
    try:
        request = urllib.request.Request(model_server.url + "/v1/messages", data=json.dumps({
            "stream": True, "messages": [{"role": "user", "content": "[scenario=slow chunks=30 until=steered] go"}],
            "tools": TOOLS}).encode(), headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=WAIT_FLOOR) as response:
            text = ""
            while text.count('"text_delta"') < HOLD_AFTER:
                data = response.read1()
                assert data, "the stream ended before its hold"
                text += data.decode()
            assert "tick9 " in text and "tick10 " not in text
            assert [s.scenario for s in model_server.seen] == ["slow"], "no steered request yet: the stream holds"
            post(model_server, "/v1/messages", {"stream": False, "tools": TOOLS, "messages": [
                {"role": "user", "content": "[scenario=steered word=w] more"}]})
            text += response.read().decode()
        assert "tick29 " in text, "the stream goes on once the scenario it waits for was asked"
    finally:
        model_server.stop()
