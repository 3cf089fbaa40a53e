"""The agent's access to files: ``fs/read_text_file`` and ``fs/write_text_file`` through
unsaved buffers or the disk, the workspace path policy, disk snapshots, reconciling buffers with
files the agent wrote on its own, and the per-turn changeset behind ``:Ai changes``.
"""
