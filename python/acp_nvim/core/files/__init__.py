"""The agent's access to files: ``fs/read_text_file`` and ``fs/write_text_file`` through
unsaved buffers or the disk (``service.py``), the workspace path policy, disk snapshots,
reconciling buffers with files the agent wrote on its own (``reconcile.py``), the one ledger
of file state both share (``ledger.py``), how they talk with the user (``voice.py``), the
per-turn changeset behind ``:Ai changes``, and ``side.py``, which composes them for a session.
"""
