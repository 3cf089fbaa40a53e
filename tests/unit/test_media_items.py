"""What the agent sends besides text, in the core (``core/media``): the chat's line for each kind, the
checks of a blob, the saved file's folder, name and mode, and which lines the shelf answers for."""

from __future__ import annotations

import base64
import os
import stat
from pathlib import Path

import pytest
from acp.helpers import embedded_blob_resource, embedded_text_resource, image_block, resource_block, resource_link_block

from acp_nvim.core.errors import AcpNvimError
from acp_nvim.core.media import store
from acp_nvim.core.media.items import describe
from acp_nvim.core.media.shelf import MediaShelf
from media_samples import JPEG_HEAD, png, wav


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_each_kind_is_one_readable_line():
    link = describe(resource_link_block("spec.md", "file:///w/spec.md", mime_type="text/markdown", size=2048), 99)
    assert link.line == "▣ link spec.md (file:///w/spec.md) · text/markdown · 2.0 KB · gf opens"
    text = describe(resource_block(embedded_text_resource("file:///n/plan.md", "# x", mime_type="text/markdown")), 99)
    assert text.line == "▣ resource plan.md (file:///n/plan.md) · text/markdown · 3 B · gf opens"
    image = describe(image_block(b64(png()), "image/png"), 10_000, decode=True)
    assert image.line == f"▣ image · image/png · {len(png())} B · gx opens" and image.data == png()


@pytest.mark.parametrize(("data", "mime", "cap", "problem"), [
    ("not*base64!", "image/png", 10_000, "invalid base64: not saved"),
    (b64(png()), "image/png", 10, "larger than media.received_max_bytes (10 B): not saved"),
    (b64(wav()), "image/png", 10_000, "says image/png but the bytes are audio/wav: not saved"),
    (b64(JPEG_HEAD), "image/png", 10_000, "says image/png but the bytes are image/jpeg: not saved"),
    (b64(b"MZ\x90\x00"), "application/x-msdownload", 10_000, "media type 'application/x-msdownload' is not one"),
], ids=["bad-base64", "over-the-cap", "type-lies", "type-lies-jpeg", "type-not-allowed"])
def test_a_bad_blob_says_why_on_its_line(data: str, mime: str, cap: int, problem: str):
    item = describe(image_block(data, mime), cap, decode=True)
    assert item.problem is not None and item.problem.startswith(problem) and item.data is None
    assert item.line.endswith("· ✗ " + item.problem)


def test_a_saved_file_is_private_named_by_the_plugin(tmp_path: Path):
    item = describe(resource_block(embedded_blob_resource("file:///../../etc/evil.sh", b64(png()),
                                                          mime_type="image/png")), 10_000)
    path = Path(store.save(item, str(tmp_path)))
    folder = tmp_path / "acp_nvim" / "media"
    assert path.parent == folder and path.suffix == ".png" and path.name.startswith("image-")
    assert "evil" not in path.name
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700 and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_bytes() == png()
    assert store.save(item, str(tmp_path)) == str(path), "saved once"
    assert sorted(os.listdir(folder)) == [path.name]


def test_nothing_is_saved_of_a_bad_blob_or_through_a_symlinked_folder(tmp_path: Path):
    with pytest.raises(AcpNvimError, match="image: invalid base64"):
        store.save(describe(image_block("%%%", "image/png"), 10_000), str(tmp_path))
    assert not (tmp_path / "acp_nvim" / "media").exists() or not os.listdir(tmp_path / "acp_nvim" / "media")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    state = tmp_path / "state"
    (state / "acp_nvim").mkdir(parents=True)
    (state / "acp_nvim" / "media").symlink_to(elsewhere)
    with pytest.raises(AcpNvimError, match="is not a folder of yours"):
        store.save(describe(image_block(b64(png()), "image/png"), 10_000), str(state))
    assert os.listdir(elsewhere) == []


def test_the_shelf_answers_only_for_its_own_lines():
    shelf = MediaShelf(max_bytes=50)
    item = shelf.received(image_block(b64(png()), "image/png"))
    shelf.keep(7, item)
    assert shelf.find(7, "  " + item.line) is item
    assert shelf.find(8, item.line) is None and shelf.find(7, "▣ image · forged") is None
    contents = [image_block(b64(png(3, 3)), "image/png")]
    line = describe(contents[0], 1 << 62).line
    found = shelf.find(9, "  " + line, contents)
    assert found is not None and found.problem is not None and "received_max_bytes" in found.problem
