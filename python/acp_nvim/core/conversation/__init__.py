"""The conversation with the agent: one prompt turn (``prompt.py``), ``session/update`` routed to
the transcript and the session's details (``updates.py``, ``details.py``), the turn's watchdog
(``watch.py``) and the ACP ``Client`` side that serves the agent's requests (``client.py``).
"""
