"""The agent's questions (elicitation) and withdrawn requests ($/cancel_request), end to end: real
host, real demo agent, a real Neovim; the form is filled by keys as a user fills it."""

from __future__ import annotations

import json

import pytest

from helpers import NOTIFY, SELECT, answer_keys, chat, notes, wait_for

pytestmark = pytest.mark.timeout(90)


def session(nvim) -> dict:
    return nvim.exec_lua("return require('acp_nvim.state').sessions['demo/1'] or vim.empty_dict()")


def open_questions(nvim) -> list[int]:
    return nvim.exec_lua("return require('acp_nvim.question').list()")


def form_lines(nvim) -> list[str]:
    return nvim.exec_lua("""
        local q = require('acp_nvim.question')
        local id = q.order[1]
        if not id then return {} end
        return vim.api.nvim_buf_get_lines(q.open_questions[id].buf, 0, -1, false)""")


def problems(nvim) -> list[str]:
    return nvim.exec_lua("""
        local q = require('acp_nvim.question')
        local e = q.open_questions[q.order[1]]
        if not e then return {} end
        local ns = vim.api.nvim_get_namespaces()['acp_nvim_question_problems']
        local out = {}
        for _, m in ipairs(vim.api.nvim_buf_get_extmarks(e.buf, ns, 0, -1, { details = true })) do
          out[#out + 1] = m[4].virt_text[1][1]
        end
        return out""")


def started(nvim) -> None:
    nvim.exec_lua(NOTIFY + SELECT)
    nvim.command("Ai")
    wait_for(lambda: session(nvim).get("state") == "idle", timeout=30, what="an idle session")


def go_to_line(nvim, title: str) -> None:
    row = next(i for i, line in enumerate(form_lines(nvim)) if line.startswith(title + ": ")) + 1
    nvim.api.win_set_cursor(0, [row, 0])


def set_value(nvim, title: str, value: str) -> None:
    """Type ``value`` after ``<title>: `` on its line, as a user would (C, then the text)."""
    go_to_line(nvim, title)
    nvim.input(f"0f:lC {value}<Esc>")
    wait_for(lambda: f"{title}: {value}" in form_lines(nvim), timeout=5, what=f"{title} typed")


def test_a_form_is_filled_by_keys_validated_on_its_lines_and_its_answer_reaches_the_agent(nvim, workspace):
    started(nvim)
    nvim.command("Ai send ask tool")
    wait_for(lambda: open_questions(nvim), timeout=30, what="the question")
    name = nvim.exec_lua("local q = require('acp_nvim.question'); "
                         "return vim.api.nvim_buf_get_name(q.open_questions[q.order[1]].buf)")
    assert name.startswith("acp://question/demo/")
    nvim.command("Ai questions")  # one open question: it is opened
    wait_for(lambda: nvim.api.buf_get_name(0) == name, timeout=10, what=":Ai questions to open the form")
    lines = form_lines(nvim)
    assert "  Tell me about you" in lines and "  for the tool call: Ask the user about the project" in lines
    assert "Name: " in lines and "Color: Green" in lines and "Agree: false" in lines, "defaults filled in"
    hints = nvim.exec_lua("""
        local q = require('acp_nvim.question'); local e = q.open_questions[q.order[1]]
        local ns = vim.api.nvim_get_namespaces()['acp_nvim_question_fields']
        local out = {}
        for _, m in ipairs(vim.api.nvim_buf_get_extmarks(e.buf, ns, 0, -1, { details = true })) do
          out[#out + 1] = m[4].virt_text[1][1]
        end
        return out""")
    assert any("* required" in h and "integer, 0–150" in h for h in hints)
    assert any("one of: Red, Green, Blue" in h and "default: Green" in h for h in hints)
    assert nvim.api.buf_get_name(0) == name, \
        "idle in normal mode: the form is entered"
    assert session(nvim).get("state") == "waiting"

    set_value(nvim, "Name", "A")
    set_value(nvim, "Age", "200")
    set_value(nvim, "Email", "nobody")
    answer_keys(nvim, "<C-s>")
    wait_for(lambda: len(problems(nvim)) == 3, timeout=10, what="three fields marked")
    marked = problems(nvim)
    assert any("at least 2 characters" in p for p in marked) and any("at most 150" in p for p in marked)
    assert any("not a valid email" in p for p in marked)
    assert "answer:" not in chat(nvim), "nothing went to the agent"

    set_value(nvim, "Name", "Ada")
    set_value(nvim, "Age", "36")
    set_value(nvim, "Email", "ada@example.org")
    nvim.exec_lua("_G.choose = { 'Blue', 'Why' }")
    go_to_line(nvim, "Color")
    nvim.input("<CR>")
    wait_for(lambda: "Color: Blue" in form_lines(nvim), timeout=5, what="the pick")
    go_to_line(nvim, "Tags")
    nvim.input("<CR>")
    wait_for(lambda: "Tags: Why" in form_lines(nvim), timeout=5, what="the multi-select pick")
    nvim.input("<C-s>")
    text = wait_for(lambda: "answer: accept" in chat(nvim) and chat(nvim), timeout=20, what="the agent's echo")
    content = json.loads(text.split("answer: accept ", 1)[1].split("\n", 1)[0])
    assert content == {"name": "Ada", "age": 36, "color": "b", "tags": ["y"], "agree": False,
                       "email": "ada@example.org"}
    wait_for(lambda: not open_questions(nvim), timeout=10, what="the form closed")
    assert "you answered the agent's question" in chat(nvim) and "Ada" not in chat(nvim).split("answer:")[0]


def test_q_declines_and_cancelling_the_turn_answers_cancel(nvim, workspace):
    started(nvim)
    nvim.command("Ai send ask")
    wait_for(lambda: open_questions(nvim), timeout=30, what="the question")
    assert "  for the session" in form_lines(nvim)
    answer_keys(nvim, "q")
    wait_for(lambda: "answer: decline null" in chat(nvim), timeout=20, what="the decline")
    assert not open_questions(nvim)
    wait_for(lambda: session(nvim).get("state") == "idle", timeout=20)

    nvim.command("Ai send ask")
    wait_for(lambda: open_questions(nvim), timeout=30, what="the second question")
    nvim.command("Ai cancel")
    wait_for(lambda: "answer: cancel null" in chat(nvim) or not open_questions(nvim), timeout=20)
    wait_for(lambda: not open_questions(nvim), timeout=10, what="the form closed by the cancel")
    assert any("closed (the turn was cancelled" in n for n in notes(nvim))


def test_a_link_opens_only_after_yes_and_shows_its_host(nvim, workspace):
    started(nvim)
    nvim.exec_lua("_G.opened = {}; vim.ui.open = function(url) table.insert(_G.opened, url); return {}, nil end")
    nvim.command("Ai send ask-url https://login.example.com/device?code=42")
    wait_for(lambda: open_questions(nvim), timeout=30, what="the link question")
    lines = form_lines(nvim)
    assert "    https://login.example.com/device?code=42" in lines and "  host: login.example.com" in lines
    assert nvim.exec_lua("return _G.opened") == [], "nothing opened before the yes"
    answer_keys(nvim, "y")
    wait_for(lambda: "answer: accept" in chat(nvim), timeout=20, what="the accept")
    assert nvim.exec_lua("return _G.opened") == ["https://login.example.com/device?code=42"]


def test_a_non_web_link_is_declined_without_asking(nvim, workspace):
    started(nvim)
    nvim.command("Ai send ask-url file:///etc/passwd")
    wait_for(lambda: "answer: decline" in chat(nvim), timeout=30, what="the decline")
    assert not open_questions(nvim) and "opens only http and https" in chat(nvim)


def test_elicitation_complete_closes_the_link_question(nvim, workspace):
    started(nvim)
    nvim.command("Ai send ask-url https://example.com/sso complete")
    wait_for(lambda: "answer: accept" in chat(nvim), timeout=30, what="the completed step")
    assert not open_questions(nvim)
    assert "the step in your browser is done" in chat(nvim)


def test_the_agent_withdrawing_its_request_closes_the_shown_prompt(nvim, workspace):
    started(nvim)
    nvim.command("Ai send withdraw 3")
    wait_for(lambda: nvim.exec_lua("return #require('acp_nvim.question.permission').pending()") == 1, timeout=30,
             what="the prompt shown")
    text = wait_for(lambda: "the client answered" in chat(nvim) and chat(nvim), timeout=30, what="the withdrawal")
    assert "the client answered: cancelled" in text and "the agent withdrew its permission request" in text
    assert nvim.exec_lua("return #require('acp_nvim.question.permission').pending()") == 0, "the prompt is gone"
    assert any("withdrew its permission request" in n for n in notes(nvim))
    wait_for(lambda: session(nvim).get("pending") == 0, timeout=10)


def test_a_question_the_turn_does_not_wait_for_is_said_so_and_its_answer_reaches_the_running_turn(nvim, workspace):
    started(nvim)
    nvim.command("Ai send ask async")
    wait_for(lambda: open_questions(nvim), timeout=30, what="the question")
    text = chat(nvim)
    assert "the agent keeps working while you answer its question: your answer goes into its running turn" in text
    assert "Asked; still working." in text and "── turn ended" not in text, "the turn runs on while it is asked"
    answer_keys(nvim, "q")
    wait_for(lambda: "steered into the turn: decline" in chat(nvim), timeout=20, what="the answer in the turn")
    wait_for(lambda: "── turn ended: end_turn" in chat(nvim), timeout=20, what="the end of the turn")
