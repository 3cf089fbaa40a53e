"""Session logs: :Ai log and its buffer."""
