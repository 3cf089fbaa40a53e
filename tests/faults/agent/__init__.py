"""A misbehaving ACP agent for the fault matrix, built on the ACP SDK's agent side.

It is configured by ``FAULT_CONFIG`` (JSON, see ``config.Config``) and ``FAULT_DIR`` (where it
appends ``events.jsonl``: its pid and children, every message it reads and sends, what its
scenarios do). The first word of a prompt picks a scenario (``scenarios.py``); anything else
is answered ``answer: <prompt>``. Faults that the harness must time, it waits for at a
*gate*: a file ``FAULT_DIR/gate-<name>`` the harness creates.
"""
