"""Saving an image or audio the agent sent: under ``<state>/acp_nvim/media/``, a folder only the user
may enter (0700), each file 0600, its name made here (kind, time, random part) and its extension
from the allow-list of ``formats``."""

from __future__ import annotations

import os
import secrets
import stat
import time
from pathlib import Path

from ..errors import AcpNvimError
from ..private_files import write_private
from . import formats
from .items import MediaItem, check

FOLDER = ("acp_nvim", "media")


def folder(state_dir: str) -> Path:
    """The media folder, made 0700 when missing; a folder that is a symlink or another user's is refused."""
    if not state_dir:
        raise AcpNvimError("no state folder (stdpath('state')): media cannot be saved")
    path = Path(state_dir, *FOLDER)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        pass
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise AcpNvimError(f"{path} is not a folder of yours: media not saved")
    if stat.S_IMODE(info.st_mode) != 0o700:
        path.chmod(0o700)
    return path


def save(item: MediaItem, state_dir: str) -> str:
    """The saved file of ``item`` (saved now on the first call); an AcpNvimError says why it cannot be."""
    if item.saved and os.path.exists(item.saved):
        return item.saved
    check(item)
    if item.problem or item.data is None:
        raise AcpNvimError(f"{item.kind}: {item.problem or 'nothing to save'}")
    where = folder(state_dir)
    name = f"{item.kind}-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(4)}"
    target = where / (name + formats.SAVED_EXTENSIONS[item.mime])
    write_private(target, item.data, durable=False)
    item.saved, item.data = str(target), None
    return item.saved
