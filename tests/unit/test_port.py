"""The port is a contract: the Neovim editor and the test fake implement every method, as declared."""

from __future__ import annotations

import inspect

import pytest
from fake_editor import FakeEditor

from acp_nvim.core.port import EditorPort
from acp_nvim.nvim.files.editor import NvimEditor

PORT_METHODS = sorted(name for name, value in vars(EditorPort).items()
                      if inspect.isfunction(value) and not name.startswith("_"))


def test_the_port_declares_what_the_core_uses():
    assert PORT_METHODS == sorted([
        "buffer_text", "read_buffer", "apply_to_buffer", "finish_buffer_write", "reload_buffer", "sync_buffer",
        "loaded_files",
        "show_permission", "show_review", "show_three_way", "show_choice", "show_question", "mark_question",
        "dismiss",
        "state_dir", "render", "session_changed", "notify",
        "start_terminal", "kill_terminal", "release_terminal",
    ])


@pytest.mark.parametrize("implementation", [NvimEditor, FakeEditor])
@pytest.mark.parametrize("name", PORT_METHODS)
def test_every_port_method_is_implemented_with_the_ports_signature(implementation, name):
    declared = getattr(EditorPort, name)
    implemented = getattr(implementation, name, None)
    assert implemented is not None, f"{implementation.__name__} lacks {name}"
    assert inspect.signature(implemented) == inspect.signature(declared), f"{implementation.__name__}.{name}"
    assert inspect.iscoroutinefunction(implemented) == inspect.iscoroutinefunction(declared), name


def test_the_fake_answers_only_what_it_implements():
    """Core tests see the fake's own methods: no catch-all answers a port method it lacks (one that
    answers only the port's names passes a check of a made-up name) and no instance attribute hides one."""
    fake = FakeEditor()
    assert not hasattr(fake, "no_such_port_method")
    catch_alls = [f"{klass.__name__}.{hook}" for klass in type(fake).__mro__ if klass is not object
                  for hook in ("__getattr__", "__getattribute__") if hook in vars(klass)]
    assert catch_alls == []
    assert [name for name in PORT_METHODS if getattr(getattr(fake, name), "__func__", None) is not
            getattr(FakeEditor, name)] == []
