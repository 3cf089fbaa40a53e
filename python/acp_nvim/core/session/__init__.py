"""Sessions: ``session.py`` composes one agent session from its parts (``connection/``,
``conversation/``, ``prompting/``, ``permissions/``) and runs its state and prompt queue;
``manager.py`` knows every session and the current one; ``recording.py`` keeps local history;
``notices.py`` words what the chat says when an agent fails or comes back.
"""
