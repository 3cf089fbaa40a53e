"""core/terminal: the output ring, the registry and its bad input (the editor is the recording fake)."""

from __future__ import annotations

import pytest
from acp import RequestError
from acp.schema import EnvVariable
from fake_editor import FakeEditor

from acp_nvim.core.files.paths import PathPolicy
from acp_nvim.core.log.ring import LogRing
from acp_nvim.core.questions import Withdrawn
from acp_nvim.core.terminal.approved import Grant
from acp_nvim.core.terminal.output import OutputRing
from acp_nvim.core.terminal.place import identify
from acp_nvim.core.terminal.service import TerminalService
from acp_nvim.core.terminal.settings import TerminalSettings

pytestmark = pytest.mark.timeout(30)


def test_ring_keeps_the_newest_bytes_and_cuts_at_a_character():
    ring = OutputRing(4)
    ring.write("aé€".encode())  # 1 + 2 + 3 bytes: "a" and the first byte of é drop
    assert ring.truncated
    assert ring.text() == "€"  # the orphan continuation byte of é is skipped
    assert len(ring.text().encode()) <= 4


def test_ring_under_the_limit_is_whole_and_not_truncated():
    ring = OutputRing(100)
    ring.write(b"line 1\r\nline 2\r\n")
    assert not ring.truncated and ring.text() == "line 1\nline 2\n"


def test_ring_with_invalid_bytes_never_exceeds_its_limit():
    ring = OutputRing(4)
    ring.write(b"\xff\xfe\xfd\xfc\xfb")
    assert len(ring.text().encode()) <= 4 and ring.truncated


def test_preview_strips_escape_sequences():
    ring = OutputRing(100)
    ring.write(b"\x1b[31mred\x1b[0m\r\nplain\r\n")
    assert ring.tail_lines(5) == ["red", "plain"]


def _service(tmp_path, editor, allow=True, withdrawn=False):
    async def gate(spec):
        if withdrawn:
            raise Withdrawn("cancelled")
        return Grant(identify(spec.cwd)) if allow else None

    refreshed: list[str] = []
    service = TerminalService("s1", editor, PathPolicy([str(tmp_path)]), str(tmp_path), TerminalSettings(),
                              allow=gate, refresh=refreshed.append, log=LogRing(100, 100000, "debug"))
    return service, refreshed


async def test_create_output_exit_release(tmp_path):
    editor = FakeEditor()
    service, _ = _service(tmp_path, editor)
    tid = await service.create("echo", ["hi"], [EnvVariable(name="A", value="1")], None, 4)
    spec, sink = editor.terminals[tid]
    assert spec.cwd == str(tmp_path) and spec.args == ("hi",) and spec.env == (("A", "1"),)
    assert spec.cwd_id == identify(str(tmp_path)).identity
    sink.output("héllo".encode())
    out = service.output(tid)
    assert out.truncated and out.output == "llo" and out.exit_status is None
    sink.exited(0)
    assert (await service.wait_for_exit(tid)).exit_code == 0
    assert service.output(tid).exit_status.exit_code == 0
    service.release(tid)
    with pytest.raises(RequestError, match="unknown terminal"):
        service.release(tid)  # release twice
    assert service.preview(tid)[0].startswith(f"  ▸ terminal {tid} · exited 0")


async def test_a_released_terminal_keeps_only_its_preview_and_exit_status(tmp_path):
    editor = FakeEditor()
    service, _ = _service(tmp_path, editor)
    tid = await service.create("cat", ["big"], [], None, 16 << 20)
    _, sink = editor.terminals[tid]
    sink.output(b"x" * (8 << 20) + b"\n" + b"".join(b"line %d\n" % i for i in range(50)))
    sink.exited(3)
    terminal = service.shown(tid)
    assert terminal.output.size > 8 << 20
    service.release(tid)
    assert terminal.output.size == 0, "the output is dropped at release"
    assert terminal.status.code == 3
    preview = service.preview(tid)
    assert preview[0].startswith(f"  ▸ terminal {tid} · exited 3")
    assert preview[-1] == "  │ line 49" and len(preview) == 1 + service.settings.preview_lines
    sink.output(b"late output\n")
    assert terminal.output.size == 0 and "late output" not in "\n".join(service.preview(tid))
    for late in (service.output, service.kill, service.release):
        with pytest.raises(RequestError, match="unknown terminal"):
            late(tid)
    with pytest.raises(RequestError, match="unknown terminal"):
        await service.wait_for_exit(tid)


async def test_kill_reports_the_signal(tmp_path):
    editor = FakeEditor()
    service, _ = _service(tmp_path, editor)
    tid = await service.create("sleep", ["100"], None, None, None)
    service.kill(tid)
    status = await service.wait_for_exit(tid)
    assert status.signal == "SIGTERM" and status.exit_code is None  # 128 + 15
    assert editor.killed == [tid]


async def test_bad_input_is_refused_with_a_clear_error(tmp_path):
    editor = FakeEditor()
    service, _ = _service(tmp_path, editor)
    with pytest.raises(RequestError, match="unknown terminal 'nope'"):
        service.output("nope")
    with pytest.raises(RequestError, match="outside the workspace roots"):
        await service.create("ls", None, None, "/", None)
    with pytest.raises(RequestError, match="must be an absolute path"):
        await service.create("ls", None, None, "sub", None)
    with pytest.raises(RequestError, match="empty or invalid command"):
        await service.create("", None, None, None, None)
    with pytest.raises(RequestError, match="invalid environment name"):
        await service.create("ls", None, [EnvVariable(name="A=B", value="1")], None, None)
    (tmp_path / "link").symlink_to("/")
    with pytest.raises(RequestError, match="outside the workspace roots"):
        await service.create("ls", None, None, str(tmp_path / "link"), None)
    assert editor.terminals == {}


async def test_refused_by_the_gate_never_starts(tmp_path):
    editor = FakeEditor()
    service, _ = _service(tmp_path, editor, allow=False)
    with pytest.raises(RequestError, match="did not allow") as refused:
        await service.create("rm", ["-rf", "x"], None, None, None)
    assert editor.terminals == {}
    # never -32000, which ACP defines as "authentication required"
    assert (refused.value.code, refused.value.data["reason"]) == (-32042, "permission denied")


async def test_a_question_closed_by_a_cancel_answers_request_cancelled(tmp_path):
    editor = FakeEditor()
    service, _ = _service(tmp_path, editor, withdrawn=True)
    with pytest.raises(RequestError) as cancelled:
        await service.create("ls", None, None, None, None)
    assert (cancelled.value.code, cancelled.value.data["reason"]) == (-32800, "cancelled")
    assert editor.terminals == {}


async def test_start_failure_is_an_error_and_nothing_is_registered(tmp_path):
    editor = FakeEditor()
    editor.start_error = OSError("nosuch: not executable")
    service, _ = _service(tmp_path, editor)
    with pytest.raises(RequestError, match="not executable") as failed:
        await service.create("nosuch", None, None, None, None)
    assert service.live == {}
    assert failed.value.code == -32603 and failed.value.data["reason"] == "failed to start: nosuch: not executable"


async def test_close_all_kills_and_releases_every_terminal(tmp_path):
    editor = FakeEditor()
    service, _ = _service(tmp_path, editor)
    ids = [await service.create("sleep", ["100"], None, None, None) for _ in range(3)]
    await service.close_all()
    assert sorted(editor.released) == sorted(ids) and service.live == {}
    with pytest.raises(RequestError, match="session has ended") as ended:
        await service.create("ls", None, None, None, None)
    assert (ended.value.code, ended.value.data["reason"]) == (-32800, "session closed")


async def test_agent_limit_is_bounded_by_the_setting(tmp_path):
    settings = TerminalSettings(max_output_limit=10)
    assert settings.limit(1_000_000) == 10 and settings.limit(None) == 10 and settings.limit(3) == 3


def test_preview_reads_only_the_tail_of_a_large_ring():
    ring = OutputRing(4 * 1024 * 1024)
    ring.write(b"old line\n" * 100_000 + b"\x1b[1mlast\x1b[0m\n")
    assert ring.tail_lines(2) == ["old line", "last"]


def test_a_covered_command_must_be_the_whole_argv_and_the_same_environment():
    from acp_nvim.core.permissions.exec_gate import covers
    from acp_nvim.core.port import TerminalSpec

    def spec(command, *args, env=()):
        return TerminalSpec("t", "s", command, args, env, "/")

    assert covers({"command": "ls -l"}, spec("sh", "-c", "ls -l"))
    assert covers({"command": "ls -l"}, spec("/bin/bash", "-lc", "ls -l"))
    assert covers({"command": "ls -l"}, spec("ls", "-l"))  # its exact shlex.split
    assert not covers({"command": "ls -l"}, spec("sh", "-c", "ls  -l")), "the exact string, not its words"
    assert not covers({"command": "ls"}, spec("sh", "-c", "rm -rf x; ls"))
    assert not covers({"command": "ls"}, spec("python", "-c", "ls"))
    assert not covers({"command": "ls"}, spec("/tmp/sh", "-c", "ls")), "only the system's sh or bash"
    assert not covers({"command": "ls"}, spec("sh", "-c", "ls", "x")), "no positional parameters"
    assert covers({"command": ["echo", "hello;", "touch", "x"]}, spec("echo", "hello;", "touch", "x"))
    assert not covers({"command": ["echo", "hello;", "touch", "x"]}, spec("sh", "-c", "echo hello; touch x"))
    assert not covers({"command": "git status"}, spec("git", "status", env=(("GIT_CONFIG_COUNT", "1"),)))
    assert covers({"command": "make", "env": {"A": "1"}}, spec("make", env=(("A", "1"),)))
    assert covers({"command": "make", "env": [{"name": "A", "value": "1"}]}, spec("make", env=(("A", "1"),)))
    assert not covers({"command": "make", "env": {"A": "1"}}, spec("make", env=(("A", "2"),)))
    assert not covers({"command": "make", "env": {"A": "1"}}, spec("make", env=(("A", "1"), ("A", "2"))))
