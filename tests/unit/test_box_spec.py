"""core/box/spec.py: what a box shows for the files an agent's arguments name."""

from __future__ import annotations

from acp_nvim.core.box.spec import named_files


def test_a_script_in_node_modules_brings_its_install(tmp_path):
    script = tmp_path / "agents" / "node_modules" / "@scope" / "pkg" / "dist" / "index.js"
    script.parent.mkdir(parents=True)
    script.write_text("")
    assert named_files([str(script)]) == [str(script), str(tmp_path / "agents")], "its dependencies load from there"


def test_a_script_in_a_virtual_environment_brings_the_environment(tmp_path):
    venv = tmp_path / "venv"
    (venv / "lib").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    script = venv / "lib" / "server.py"
    script.write_text("")
    assert named_files([str(script)]) == [str(script), str(venv)]


def test_a_plain_file_is_shown_alone_and_other_words_not_at_all(tmp_path):
    config = tmp_path / "server.json"
    config.write_text("{}")
    assert named_files([str(config), "--flag", "relative.js", str(tmp_path / "missing"), "/usr/bin/env"]) == [
        str(config)]
