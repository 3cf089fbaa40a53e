"""A UI that attaches to Neovim and throws every redraw away (run as a subprocess by bench_chat).

It connects to ``--listen`` socket ``argv[1]``, calls ``nvim_ui_attach`` (so Neovim renders
the grid and sends ``redraw`` batches, as it would to a real terminal UI), then reads
and discards bytes without decoding them: the cost that counts is Neovim's, not ours.
"""

from __future__ import annotations

import socket
import sys

import msgpack

WIDTH, HEIGHT = 160, 48


def main(address: str) -> None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(address)
    options = {"ext_linegrid": True, "rgb": True}
    sock.sendall(msgpack.packb([0, 1, "nvim_ui_attach", [WIDTH, HEIGHT, options]]))
    sys.stdout.write("attached\n")
    sys.stdout.flush()
    while sock.recv(1 << 20):
        pass


if __name__ == "__main__":
    main(sys.argv[1])
