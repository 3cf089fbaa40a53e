"""`:Ai paste` and image mentions end to end: a clipboard tool (a stand-in `wl-paste` on PATH), the
real host, the demo agent echoing the content blocks it got, real Neovim."""

from __future__ import annotations

import base64
import json
import os
import re
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from helpers import NOTIFY, buffer_text, notes, wait_for
from media_samples import png

pytestmark = pytest.mark.timeout(90)

CHAT = "acp://chat/demo/1"
PROMPT = "acp://prompt/demo/1"
SETUP = """
local python, capabilities, root, extra = ...
require('acp_nvim').setup(vim.tbl_extend('force', { agents = { demo = { command = python,
  args = { '-m', 'acp_nvim.demo_agent' }, env = { PYTHONPATH = root, ACP_DEMO_CAPABILITIES = capabilities } } } },
  extra))
""" + NOTIFY
FAKE_WL_PASTE = """#!{python}
import os, sys
content = os.environ.get("FAKE_CLIPBOARD", "")
if "--list-types" in sys.argv:
    print("image/png\\ntext/plain" if content.endswith(".png") else "text/plain")
elif content:
    sys.stdout.buffer.write(open(content, "rb").read())
"""


def tiny_png() -> bytes:
    return png(3, 2)


@pytest.fixture
def clipboard(tmp_path_factory, monkeypatch) -> Path:
    """A `wl-paste` stand-in, alone on PATH (so no real clipboard tool is found); requested before ``nvim``."""
    bin_dir = tmp_path_factory.mktemp("bin")
    tool = bin_dir / "wl-paste"
    tool.write_text(FAKE_WL_PASTE.format(python=sys.executable))
    tool.chmod(0o755)
    image = tmp_path_factory.mktemp("clip") / "clip.png"
    image.write_bytes(tiny_png())
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("FAKE_CLIPBOARD", str(image))
    return image


@pytest.fixture
def no_clipboard_tool(tmp_path_factory, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path_factory.mktemp("empty-bin")))


def start(nvim, capabilities: str = "image", extra: dict | None = None) -> None:
    nvim.exec_lua(SETUP, sys.executable, capabilities, str(ROOT / "python"), extra or {"editor_mcp": True})
    nvim.command("Ai")
    wait_for(lambda: nvim.exec_lua("return (require('acp_nvim.state').sessions['demo/1'] or {}).state") == "idle",
             timeout=30, what="the session to start")


def note(nvim, needle: str) -> str:
    return wait_for(lambda: next((n for n in notes(nvim) if needle in n), None), timeout=20, what=repr(needle))


def echoed(nvim, count: int = 1) -> list[dict]:
    text = wait_for(lambda: buffer_text(nvim, CHAT).count("── turn ended") >= count and buffer_text(nvim, CHAT),
                    timeout=30, what="the echo")
    return json.loads(re.findall(r"```json\n(.*?)\n```", text, re.S)[-1])


def test_paste_puts_a_mention_in_the_prompt_and_the_image_goes_with_it(clipboard, nvim):
    start(nvim)
    nvim.command("Ai paste")
    shown = note(nvim, "pasted image:")
    path = re.search(r"pasted image: (\S+\.png) \((\d+) B, from wl-paste\): it goes with your next prompt",
                     shown)
    assert path and int(path.group(2)) == len(tiny_png())
    saved = Path(path.group(1))
    assert saved.read_bytes() == tiny_png() and saved.parent.name == "pasted"
    prompt = nvim.funcs.bufnr(PROMPT)
    assert nvim.api.buf_get_lines(prompt, -2, -1, False) == [f"@{saved}"]
    nvim.api.set_current_win(nvim.funcs.bufwinid(PROMPT))
    nvim.api.set_current_line(f"echo @{saved}")
    nvim.api.input("<C-s>")
    blocks = echoed(nvim)
    assert blocks[1] == {"type": "image", "data": base64.b64encode(tiny_png()).decode(), "mimeType": "image/png",
                         "uri": saved.as_uri()}
    assert f"— attached: {saved} (image, {len(tiny_png())} B)" in buffer_text(nvim, CHAT)


def test_pasted_images_older_than_a_week_are_deleted_at_the_next_paste(clipboard, nvim):
    start(nvim)
    folder = Path(nvim.funcs.stdpath("state")) / "acp_nvim" / "pasted"
    folder.mkdir(parents=True, exist_ok=True)
    old, recent, other = folder / "paste-old.png", folder / "paste-recent.png", folder / "mine.png"
    for path in (old, recent, other):
        path.write_bytes(tiny_png())
    for path in (old, other):
        os.utime(path, (1_000_000_000, 1_000_000_000))  # 2001: long more than a week ago
    nvim.command("Ai paste")
    note(nvim, "pasted image:")
    assert not old.exists() and recent.exists() and other.exists(), "only old pastes go"


def test_paste_with_text_sends_at_once(clipboard, nvim):
    start(nvim)
    nvim.command("Ai paste echo")
    blocks = echoed(nvim)
    assert blocks[0] == {"type": "text", "text": "echo"}
    assert blocks[1]["type"] == "image" and base64.b64decode(blocks[1]["data"]) == tiny_png()


def test_an_agent_without_images_gets_a_link_and_the_chat_says_so(clipboard, nvim, workspace):
    start(nvim, capabilities="")
    shot = workspace / "shot.png"
    shot.write_bytes(tiny_png())
    nvim.command("Ai send echo @shot.png")
    blocks = echoed(nvim)
    assert blocks[1] == {"type": "resource_link", "name": f"shot.png (image, {len(tiny_png())} B)",
                         "uri": shot.as_uri(), "mimeType": "image/png"}
    assert "the agent takes no image in prompts (promptCapabilities.image): sent as a link" in buffer_text(nvim, CHAT)


def test_an_image_over_the_cap_is_linked_with_a_message(clipboard, nvim, workspace):
    start(nvim, extra={"media": {"max_bytes": 10}})
    (workspace / "shot.png").write_bytes(tiny_png())
    nvim.command("Ai send echo @shot.png")
    assert echoed(nvim)[1]["type"] == "resource_link"
    text = buffer_text(nvim, CHAT)
    assert f"{len(tiny_png())} B is more than media.max_bytes (10 B): sent as a link" in text
    assert '"type": "resource_link"' in text and '"type": "image"' not in text


def test_a_clipboard_without_an_image_says_so(clipboard, monkeypatch, nvim):
    nvim.exec_lua("vim.env.FAKE_CLIPBOARD = ''")
    monkeypatch.setenv("FAKE_CLIPBOARD", "")
    start(nvim)
    nvim.command("Ai paste")
    assert "wl-paste: it holds no image" in note(nvim, "no image in the clipboard")


def test_without_a_clipboard_tool_paste_says_what_to_install(no_clipboard_tool, nvim):
    start(nvim)
    nvim.command("Ai paste")
    assert "install wl-clipboard (Wayland), xclip (X11) or pngpaste (macOS)" in note(nvim, "no clipboard tool")
