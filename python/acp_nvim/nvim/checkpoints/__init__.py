"""Checkpoints in Neovim: :Ai checkpoints (the list and a turn's diff), :Ai rewind and its undo, and
a past prompt edited and sent again."""
