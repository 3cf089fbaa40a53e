"""Replay an exported session log as an ACP agent: ``python -m acp_nvim.replay FILE``."""
