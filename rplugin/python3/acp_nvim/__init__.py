"""acp.nvim as a Neovim remote plugin (pynvim): the plugin path ``lua/acp_nvim/host/init.lua`` starts
pynvim's host on.

The package is ``acp_nvim`` itself: its submodules are found in the checkout's ``python/acp_nvim``
(added to ``__path__`` here), so the host imports the code of this checkout, whatever else is
installed. Importing it loads only pynvim and the entry point table; the ACP SDK comes with the
first call.
"""

from pathlib import Path

__path__.append(str(Path(__file__).resolve().parents[3] / "python" / "acp_nvim"))

from acp_nvim.plugin import AcpNvimPlugin  # noqa: E402

__all__ = ["AcpNvimPlugin"]
