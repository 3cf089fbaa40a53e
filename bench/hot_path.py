"""The host's hot path on a fixed workload, in one process: CPU per streamed chunk without the noise.

The demo agent's ``load`` lines (``acp_nvim.demo_agent.load``: 24-byte chunks, every fourth ending a
line) are fed from memory to the real wire transport (``WireTransport`` under the SDK's
``ClientSideConnection``), whose tap is a real ``AgentProcess`` (the session log), and whose inbound
side is the real ``SessionClient`` of a real ``Session``: router, transcript, redaction, and the
render queue of the Neovim layer with a flush that Neovim would apply (nothing is sent). No pipe,
no Neovim, no other process: what is left is the host's own work per chunk, which the flood
(bench_chat ``host_cpu_us_per_chunk``) measures with the pipe and msgpack around it.

    .venv/bin/python bench/hot_path.py [CHUNKS]              # CPU µs per chunk (process time)
    .venv/bin/python bench/hot_path.py [CHUNKS] --profile    # and the top of a cProfile
    valgrind --tool=callgrind .venv/bin/python bench/hot_path.py 20000   # instruction counts

The agent here is not timed: every line is made before the clock starts.
"""

from __future__ import annotations

import asyncio
import cProfile
import io
import pstats
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT / "python"), str(ROOT / "tests" / "unit")]

from acp import connect_to_agent  # noqa: E402
from fake_editor import FakeEditor  # noqa: E402

from acp_nvim.core.agent.process import AgentProcess  # noqa: E402
from acp_nvim.core.config import parse_settings  # noqa: E402
from acp_nvim.core.conversation.client import SessionClient  # noqa: E402
from acp_nvim.core.session.manager import SessionManager  # noqa: E402
from acp_nvim.demo_agent.load import _Lines, chunk_text  # noqa: E402
from acp_nvim.nvim.chat.render_queue import RenderQueue  # noqa: E402

SESSION = "hot-path-session"
END = b'{"jsonrpc":"2.0","method":"_bench/end","params":{}}\n'


class _Writer:
    def write(self, data: bytes) -> None:
        return None

    async def drain(self) -> None:
        return None


class _Editor(FakeEditor):
    """The fake editor with the Neovim layer's render queue in front of a flush that sends nothing."""

    def __init__(self) -> None:
        super().__init__()
        self.flushed = 0

        def post(code: str, *args: Any) -> None:
            if args and isinstance(args[0], dict):
                self.flushed += sum(len(v) for v in args[0].values())

        async def barrier() -> None:
            return None

        self.queue = RenderQueue(post, barrier, lambda key: {})

    def render(self, session_key: str, ops: list[Any]) -> None:
        self.queue.push(session_key, ops)


def lines(chunks: int) -> list[bytes]:
    """The agent's lines, made from one template (json.dumps per line would dwarf what is measured in
    an instruction count of the whole process)."""
    template = _Lines(SESSION).chunk("@TEXT@")
    head, tail = template.split(b"@TEXT@")
    return [head + chunk_text(index, 24).replace("\n", "\\n").encode() + tail for index in range(chunks)]


async def feed(data: list[bytes], profile: cProfile.Profile | None) -> tuple[float, int]:
    """CPU seconds to take every line through the host, and the render operations flushed."""
    with tempfile.TemporaryDirectory() as cwd:
        editor = _Editor()
        manager = SessionManager(editor, parse_settings({}))
        session = manager.create(None, cwd)
        client = SessionClient(session)
        process = AgentProcess("demo", session.spec, client, session.log, cwd)
        reader = asyncio.StreamReader(limit=1 << 24)
        done = asyncio.Event()

        class Ext:
            async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
                done.set()

        client.ext_notification = Ext().ext_notification  # type: ignore[attr-defined]
        from acp_nvim.core.agent.wire import WireTransport

        wire = WireTransport(reader, _Writer(), process, client)  # type: ignore[arg-type]
        conn = connect_to_agent(client, wire, use_unstable_protocol=True)
        blob = b"".join(data)
        start = time.process_time()
        if profile is not None:
            profile.enable()
        for offset in range(0, len(blob), 1 << 16):  # as a pipe delivers it
            reader.feed_data(blob[offset:offset + (1 << 16)])
            await asyncio.sleep(0)
        reader.feed_data(END)
        await done.wait()
        await editor.queue.drain()
        if profile is not None:
            profile.disable()
        spent = time.process_time() - start
        await conn.close()
        return spent, editor.flushed


def main(argv: list[str]) -> None:
    chunks = int(argv[0]) if argv and argv[0].isdigit() else 100_000
    profile = cProfile.Profile() if "--profile" in argv else None
    data = lines(chunks)
    asyncio.run(feed(data[:2000], None))  # warm: imports, first allocations
    spent, flushed = asyncio.run(feed(data, profile))
    print(f"hot_path_cpu_us_per_chunk: {spent / chunks * 1e6:.3f} us ({chunks} chunks, {flushed} ops flushed)")
    if profile is not None:
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(25)
        print(out.getvalue())


if __name__ == "__main__":
    main(sys.argv[1:])
