"""Images and audio in prompts: kinds, content checks, the size cap, and the blocks per capabilities."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from acp_nvim.core.prompting import attachments, media
from acp_nvim.core.prompting.attachments import Accepts, Packer
from media_samples import JPEG_HEAD, png, wav

pytestmark = pytest.mark.timeout(30)


WAV = wav()
JPEG = JPEG_HEAD


@pytest.mark.parametrize(("head", "mime"), [
    (png(), "image/png"), (JPEG, "image/jpeg"), (b"GIF89a" + bytes(10), "image/gif"),
    (b"RIFF\x00\x00\x00\x00WEBPVP8 ", "image/webp"), (WAV, "audio/wav"), (b"ID3\x04" + bytes(12), "audio/mpeg"),
    (b"\xff\xfb\x90\x00" + bytes(12), "audio/mpeg"), (b"OggS" + bytes(12), "audio/ogg"),
    (b"fLaC" + bytes(12), "audio/flac"), (b"\x00\x00\x00\x20ftypM4A ", "audio/mp4"), (b"hello world", None),
])
def test_sniffing(head, mime):
    assert media.sniff(head[:16]) == mime


def test_kinds_by_name():
    assert [media.kind_of(n) for n in ("a.PNG", "b.jpeg", "c.webp", "d.mp3", "e.wav", "f.txt", "g")] == [
        "image", "image", "image", "audio", "audio", "", ""]


def test_read_checks_size_kind_and_content(tmp_path: Path):
    shot = tmp_path / "shot.png"
    shot.write_bytes(png())
    found = media.read(str(shot), 1024)
    assert (found.mime_type, base64.b64decode(found.data), found.size) == ("image/png", png(), len(png()))
    with pytest.raises(media.MediaError, match=r"is more than media.max_bytes \(10 B\)"):
        media.read(str(shot), 10)
    renamed = tmp_path / "really-a-jpeg.png"
    renamed.write_bytes(JPEG)
    assert media.read(str(renamed), 1024).mime_type == "image/jpeg"
    fake = tmp_path / "notes.png"
    fake.write_text("just text")
    with pytest.raises(media.MediaError, match="its content is not image/png"):
        media.read(str(fake), 1024)
    wav_named_png = tmp_path / "sound.png"
    wav_named_png.write_bytes(WAV)
    with pytest.raises(media.MediaError, match=r"not image/png \(it looks like audio/wav\)"):
        media.read(str(wav_named_png), 1024)
    fifo = tmp_path / "pipe.png"
    os.mkfifo(fifo)
    with pytest.raises(media.MediaError, match="not a regular file"):
        media.read(str(fifo), 1024)
    with pytest.raises(media.MediaError, match="cannot read it"):
        media.read(str(tmp_path / "gone.png"), 1024)


def test_mentions_label_media_with_kind_and_size(tmp_path: Path):
    (tmp_path / "shot.png").write_bytes(png())
    (tmp_path / "memo.wav").write_bytes(WAV)
    found = attachments.mentions("look at @shot.png and listen to @memo.wav.", str(tmp_path))
    assert [(a.label, a.media, a.mime_type) for a in found] == [
        (f"shot.png (image, {len(png())} B)", "image", "image/png"),
        (f"memo.wav (audio, {len(WAV)} B)", "audio", "audio/wav")]


async def no_buffer(path: str) -> str | None:
    return None


def dumped(blocks: list) -> list[dict]:
    return [b.model_dump(mode="json", by_alias=True, exclude_none=True) for b in blocks]


async def test_blocks_per_capabilities_and_cap(tmp_path: Path):
    (tmp_path / "shot.png").write_bytes(png())
    (tmp_path / "memo.wav").write_bytes(WAV)
    (tmp_path / "a.txt").write_text("text\n")
    items = attachments.mentions("@shot.png @memo.wav @a.txt", str(tmp_path))
    notes: list[tuple[str, str]] = []
    packer = Packer(no_buffer, 1024, lambda text, kind: notes.append((text, kind)))
    every = dumped(await packer.blocks(items, Accepts(embedded=True, image=True, audio=True)))
    assert every[0] == {"type": "image", "data": base64.b64encode(png()).decode(), "mimeType": "image/png",
                        "uri": (tmp_path / "shot.png").as_uri()}
    assert every[1] == {"type": "audio", "data": base64.b64encode(WAV).decode(), "mimeType": "audio/wav"}
    assert every[2]["type"] == "resource" and notes == []
    linked = dumped(await packer.blocks(items, Accepts(embedded=True)))
    assert [b["type"] for b in linked] == ["resource_link", "resource_link", "resource"]
    assert linked[0]["uri"] == (tmp_path / "shot.png").as_uri() and linked[0]["mimeType"] == "image/png"
    assert [kind for _, kind in notes] == ["info", "info"]
    assert "the agent takes no image in prompts (promptCapabilities.image): sent as a link" in notes[0][0]
    notes.clear()
    small = Packer(no_buffer, 16, lambda text, kind: notes.append((text, kind)))
    capped = dumped(await small.blocks(items[:1], Accepts(image=True)))
    assert capped[0]["type"] == "resource_link"
    assert notes == [(f"shot.png (image, {len(png())} B): {len(png())} B is more than media.max_bytes (16 B): "
                      "sent as a link", "error")]
