"""An earlier conversation put back (``:Ai resume``, local history): its blocks as they were saved,
a compaction folded again. A long record's blocks are kept as they are and redacted only when drawn
or read, so that reopening 10,000 turns costs what a page costs."""

from __future__ import annotations

import bisect

from ..render_ops import Meta
from .blocks import Block, Compaction, Restored
from .conversation import Conversation


def restore(conversation: Conversation, kind: str, text: str, message_id: str | None = None) -> None:
    """One block of an earlier conversation, drawn as it was."""
    if kind == "compaction":
        head, _, summary = text.partition("\n")
        conversation.show_compaction(Compaction(f"restored-{conversation.next_id + 1}", head, summary, restored=True))
    else:
        conversation.new_block(kind, text).message_id = message_id
    conversation.answering = False


def restore_many(conversation: Conversation, entries: list[Restored], older: int = 0) -> None:
    """Blocks of an earlier conversation, many at once (a long record). ``older`` more entries come
    before these later (``restore_older``): their ids are kept."""
    conversation.finish_last()
    if older and entries:
        conversation.older = (conversation.next_id + 1, older, conversation.next_id + older + 1)
        conversation.next_id += older
    for entry in entries:
        block = _block(conversation, conversation.take_id(), entry)
        conversation.blocks.append(block)
        conversation.by_id[block.id] = block
        conversation.events.added(block)
    conversation.last = conversation.blocks[-1] if entries else conversation.last
    conversation.answering = False


def restore_older(conversation: Conversation, entries: list[Restored]) -> None:
    """The entries ``restore_many`` said would come (the newest of them if more came), put in their
    place above the ones restored then: the chat gets a gap there to draw them from."""
    if conversation.older is None:
        return
    first, count, before = conversation.older
    conversation.older = None
    entries = entries[-count:] if count else []
    skip = count - len(entries)
    blocks = [_block(conversation, first + skip + n, entry) for n, entry in enumerate(entries)]
    index = bisect.bisect_left(conversation.blocks, before, key=lambda block: block.id)
    conversation.blocks[index:index] = blocks
    conversation.by_id.update((block.id, block) for block in blocks)
    if blocks:
        above = conversation.blocks[index - 1].id if index else None
        conversation.events.older_restored(before, above, len(blocks))


def _block(conversation: Conversation, block_id: int, entry: Restored) -> Block:
    """A block of a record, kept as it was saved (redacted when first drawn or read); a compaction
    folded again."""
    kind, text, message_id = entry
    meta: Meta | None = None
    if kind == "compaction":
        head, _, summary = text.partition("\n")
        compaction = Compaction(f"restored-{block_id}", head, summary, restored=True)
        conversation.keep_compaction(compaction, block_id)
        text, meta = compaction.render(False), {"status": compaction.status}
    return Block(block_id, kind, [text], meta=meta, unredacted=conversation.redactor is not None,
                 message_id=message_id)
