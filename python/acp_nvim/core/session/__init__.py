"""Sessions: one agent process and one ACP session each, their prompt turns and queue, the
ACP ``Client`` side that routes the agent's requests to them, authentication, re-attaching after
a restart, prompt attachments, and the manager that knows every session and the current one.
"""
