"""The editor-agnostic core: asyncio, the ACP SDK, and no pynvim import, ever.

It reaches the editor only through ``port.EditorPort``. Its subpackages, from the bottom up:
``log`` and ``transcript`` (what is recorded and shown), ``files`` (the agent's file access),
``permissions`` (policy, rules, review, the broker), ``agent`` (the process and its wire) and
``session`` (turns, queue, the ACP client side, the manager). ``errors``, ``tasks``, ``port``
and ``config`` are shared by all of them.
"""
