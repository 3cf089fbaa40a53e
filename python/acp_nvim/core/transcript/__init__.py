"""The conversation as the user sees it. ``conversation.Conversation`` keeps what was said
(``session/update`` turned into numbered blocks: messages, thoughts, plans, notices, compactions;
the tool-call tree of ``tool_tree.py`` with each call merged as it arrives in pieces) and publishes
each change; ``projection.ChatProjection`` turns the changes into render operations, with bounded
views of long blocks, pages and gaps; ``restore.py`` and ``export.py`` are functions over a
conversation.
"""
