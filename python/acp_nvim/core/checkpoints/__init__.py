"""Checkpoints: the files of each turn kept before the agent changed them, and the rewind to them."""
