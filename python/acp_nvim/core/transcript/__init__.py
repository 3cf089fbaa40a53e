"""The conversation as the user sees it: ``session/update`` turned into numbered blocks and
render operations (messages, thoughts, tool calls with live status, plans, usage), the merged
state of each tool call as it arrives in pieces, and bounded views of long blocks.
"""
