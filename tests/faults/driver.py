"""One fresh Neovim per case: listening on a socket, a UI attached, the plugin configured
with the misbehaving agent, and helpers to act as the user and to look at what they see.

Neovim runs as root without CAP_DAC_OVERRIDE/CAP_FOWNER (``setpriv``), so file modes
apply as they would for an ordinary user (a read-only file is read-only).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from shell_env import shell_env

from .rpc import Rpc, RpcError

ROOT = Path(__file__).resolve().parents[2]
NVIM = str(Path(sys.executable).parent / "nvim")
INIT = str(ROOT / "tests" / "minimal_init.vim")
TESTS = str(ROOT / "tests")
HOST_WRAPPER = str(Path(__file__).with_name("host_limits.sh"))
DROP_CAPS = "-dac_override,-dac_read_search,-fowner"
T = TypeVar("T")

SETUP_LUA = """
local agent = ...
-- quiet_ms = 0: the typed-key probe types every 10 ms, so a quiet moment never comes; a prompt's keys
-- still wait arm_ms (the harness waits for them: views.answer)
require('acp_nvim').setup({ agents = { fault = agent }, default_agent = 'fault',
  permissions = { quiet_ms = 0, arm_ms = 200 } })
-- what the user is told is read where Neovim echoes it (vim.notify stays Neovim's own, so the
-- plugin takes the path it takes for most users); an echo with the error flag is kept apart: its
-- next mode message makes Neovim wait a second (:help acp_nvim-faults)
_G.__fault_notes, _G.__fault_flagged = {}, {}
local echo = vim.api.nvim_echo
vim.api.nvim_echo = function(chunks, history, opts)
  local parts = {}
  for _, chunk in ipairs(chunks) do
    parts[#parts + 1] = tostring(chunk[1])
  end
  local text = table.concat(parts)
  table.insert(_G.__fault_notes, text)
  if opts and opts.err then
    table.insert(_G.__fault_flagged, text)
  end
  return echo(chunks, history, opts)
end
"""

FIND_LUA = """
local needles, chat, chat_only, ignore = ...
local skip = {}
for _, line in ipairs(ignore) do skip[line] = true end
local function scan(lines, where)
  for _, line in ipairs(lines) do
    local low = line:lower()
    for _, needle in ipairs(needles) do
      if not skip[line] and low:find(needle, 1, true) then return where .. ': ' .. line end
    end
  end
end
local function buffer(buf, where)
  return scan(vim.api.nvim_buf_get_lines(buf, 0, -1, false), where)
end
local chat_buf = vim.fn.bufnr(chat)
local hit = chat_buf ~= -1 and buffer(chat_buf, 'chat')
if hit or chat_only then return hit end
for _, win in ipairs(vim.api.nvim_list_wins()) do
  local buf = vim.api.nvim_win_get_buf(win)
  if buf ~= chat_buf then
    hit = buffer(buf, 'window ' .. vim.api.nvim_buf_get_name(buf))
    if hit then return hit end
  end
end
hit = scan(_G.__fault_notes or {}, 'notify')
if hit then return hit end
local messages = vim.api.nvim_exec2('messages', { output = true }).output
return scan(vim.split(messages, '\\n', { plain = true }), 'messages')
"""


def wait_until(probe: Callable[[], T], timeout: float, interval: float = 0.05) -> T | None:
    """``probe()`` until it is truthy (returned) or ``timeout`` seconds pass (None)."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() >= deadline:
            return None
        time.sleep(interval)


class Environment:
    """What every case shares: isolated XDG folders and rplugin manifest (the plugin starts its own host)."""

    def __init__(self) -> None:
        self.base = Path(tempfile.mkdtemp(prefix="acp-faults-"))
        self.manifest = str(self.base / "rplugin.vim")

    @staticmethod
    def _xdg(base: Path) -> dict[str, str]:
        return {f"XDG_{name}_HOME": str(base / name.lower()) for name in ("CONFIG", "DATA", "STATE", "CACHE")}

    def case_dir(self, name: str) -> Path:
        path = self.base / name
        path.mkdir()
        return path

    def cleanup(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)


class Editor:
    """A Neovim for one case: the driver's connection and what the user can see."""

    CHAT = "acp://chat/fault/1"

    def __init__(self, env: Environment, case_dir: Path, agent: dict[str, Any],
                 host_file_limit: int | None = None) -> None:
        self.dir = case_dir
        self.workspace = case_dir / "workspace"
        self.workspace.mkdir()
        self.agent_dir = case_dir / "agent"
        self.agent_dir.mkdir()
        self.address = str(case_dir / "nvim.sock")
        self.proc = self._spawn(env, host_file_limit)
        self.rpc = self._connect()
        spec = {"command": sys.executable, "args": ["-m", "faults.agent"], **agent,
                "env": {"FAULT_DIR": str(self.agent_dir), "PYTHONPATH": TESTS, **agent.get("env", {})}}
        self.rpc.lua(SETUP_LUA, spec)

    def _spawn(self, env: Environment, host_file_limit: int | None) -> subprocess.Popen[bytes]:
        variables = {**os.environ, **shell_env(self.workspace), **Environment._xdg(self.dir / "xdg"),
                     "NVIM_RPLUGIN_MANIFEST": env.manifest,
                     "ACP_NVIM_TEST_PYTHON": sys.executable, "NVIM_PYTHON_LOG_FILE": str(self.dir / "pylog"),
                     "NVIM_PYTHON_LOG_LEVEL": "WARNING"}
        if host_file_limit is not None:  # the Python host runs through a wrapper that sets RLIMIT_FSIZE
            variables["ACP_NVIM_TEST_PYTHON"] = HOST_WRAPPER
            variables["FAULT_HOST_PYTHON"] = sys.executable
            variables["FAULT_HOST_FSIZE"] = str(host_file_limit)
        argv = ["setpriv", "--bounding-set", DROP_CAPS, "--inh-caps", DROP_CAPS,
                NVIM, "-u", INIT, "--headless", "--listen", self.address]
        return subprocess.Popen(argv, env=variables, cwd=self.workspace, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=open(self.dir / "nvim.stderr", "wb"),
                                start_new_session=True)

    def _connect(self) -> Rpc:
        # the socket's file appears when Neovim binds it, a moment before it listens: connect until it does
        connected: list[Rpc] = []

        def attempt() -> bool:
            try:
                connected.append(Rpc(self.address, timeout=30))
            except (FileNotFoundError, ConnectionRefusedError):
                return False
            return True

        if not wait_until(attempt, 10):
            raise RuntimeError("Neovim did not listen on its socket")
        return connected[0]

    # -- acting as the user --------------------------------------------------------------

    def command(self, cmd: str) -> str | None:
        """Run an Ex command; the error text when it fails (None when it worked)."""
        try:
            self.rpc.request("nvim_command", cmd)
        except RpcError as exc:
            return str(exc)
        return None

    def lua(self, code: str, *args: Any) -> Any:
        return self.rpc.lua(code, *args)

    def mode(self) -> str:
        """Neovim's mode (``nvim_get_mode``: answered even while it waits)."""
        return str(self.rpc.request("nvim_get_mode")["mode"])

    def keys(self, keys: str) -> None:
        """Type ``keys`` (Neovim key notation), as the user would."""
        self.rpc.request("nvim_input", keys)

    def focus_chat(self, chat: str = CHAT) -> bool:
        """Make the chat's window current (a tab of its own if it is hidden); False without a chat."""
        return bool(self.lua("""
            local buf = vim.fn.bufnr(...)
            if buf == -1 then return false end
            local win = vim.fn.bufwinid(buf)
            if win == -1 then
              vim.cmd('tab sbuffer ' .. buf)
              win = vim.api.nvim_get_current_win()
            end
            vim.api.nvim_set_current_win(win)
            vim.cmd('stopinsert')
            return true""", chat))

    def type_prompt(self, text: str, chat: str = CHAT) -> bool:
        """Type ``text`` into the chat's prompt and press <C-s>; False without a chat window."""
        if not self.focus_chat(chat):
            return False
        ok = self.lua("""
            local name, text = ...
            local chat = require('acp_nvim.chat').of_buffer(vim.fn.bufnr(name))
            local win = chat and vim.fn.bufwinid(chat.prompt_buf) or -1
            if win == -1 then return false end
            vim.api.nvim_buf_set_lines(chat.prompt_buf, 0, -1, false, { text })
            vim.api.nvim_set_current_win(win)
            vim.api.nvim_win_set_cursor(win, { 1, 0 })
            return true""", chat, text)
        if ok:
            self.keys("<C-s>")
        return bool(ok)

    # -- what the user sees -------------------------------------------------------------

    def find(self, needles: list[str], chat_only: bool = False, ignore: list[str] | None = None) -> str | None:
        """The first line holding any of ``needles`` (case-insensitive): in the chat, then (unless
        ``chat_only``) in any window, the notifications and :messages. Lines equal to one of
        ``ignore`` (the user's own prompts) do not count."""
        result = self.lua(FIND_LUA, [n.lower() for n in needles], self.CHAT, chat_only, ignore or [])
        return str(result) if result else None

    def wait_for_text(self, needles: list[str], timeout: float, chat_only: bool = False,
                      ignore: list[str] | None = None) -> str | None:
        found = wait_until(lambda: self.find(needles, chat_only, ignore), timeout, interval=0.1)
        return found or None

    def buffer_lines(self, name: str = CHAT) -> list[str]:
        return list(self.lua("""
            local buf = vim.fn.bufnr(...)
            return buf == -1 and {} or vim.api.nvim_buf_get_lines(buf, 0, -1, false)""", name))

    def session(self, key: str = "fault/1") -> dict[str, Any]:
        """The session's state as Lua keeps it (empty when none)."""
        return dict(self.lua("return require('acp_nvim.state').sessions[...] or vim.empty_dict()", key))

    def session_keys(self) -> list[str]:
        return sorted(self.lua("return vim.tbl_keys(require('acp_nvim.state').sessions)"))

    def wait_state(self, states: tuple[str, ...], timeout: float, key: str = "fault/1") -> str | None:
        """Wait until session ``key`` is in one of ``states``; that state (None after ``timeout``)."""

        def state() -> str | None:
            current = self.session(key).get("state")
            return str(current) if current in states else None

        return wait_until(state, timeout)

    def messages(self) -> str:
        notes = self.lua("return _G.__fault_notes or {}")
        return "\n".join([*notes, self.rpc.request("nvim_exec2", "messages", {"output": True})["output"]])

    # -- the end --------------------------------------------------------------------------

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def quit(self, timeout: float = 10) -> bool:
        """``:qa!`` as the user would type it; True when Neovim exited within ``timeout``."""
        with contextlib.suppress(OSError, ConnectionError, RpcError):
            self.rpc.notify("nvim_input", "<Esc><Esc>:qa!<CR>")
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        return True

    def kill(self) -> None:
        """Make sure this Neovim is gone (its whole process group)."""
        self.rpc.close()
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


@contextlib.contextmanager
def editor(env: Environment, name: str, agent: dict[str, Any],
           host_file_limit: int | None = None) -> Iterator[Editor]:
    """A fresh Neovim for case ``name``; ``agent`` adds to the agent's spec (``env``, ``mode``)."""
    instance = Editor(env, env.case_dir(name), agent, host_file_limit)
    try:
        yield instance
    finally:
        instance.kill()
