"""Sessions: one agent process and one ACP session each (``session.py`` composes the parts and runs
the state and the prompt queue), the link to the agent that opens and reopens the ACP session
(``link.py``, with ``auth.py`` and ``reattach.py``), one prompt turn (``prompt.py``), the routing
of ``session/update`` (``updates.py``), the ACP ``Client`` side that serves the agent's requests
(``client.py``), prompt attachments, details shown in the statusline, and the manager that knows
every session and the current one.
"""
