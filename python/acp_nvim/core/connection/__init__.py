"""The agent behind a session: the link that spawns, initializes and opens the ACP session
(``link.py``, with ``auth.py``), reattaching and reopening past sessions (``reattach.py``,
``reopen.py``, ``past.py``), what the agent offers (``capabilities.py``), reconnecting remote
agents (``reconnect.py``) and the mode policy that keeps the user's permission policy above the
agent's mode (``mode_policy.py``).
"""
