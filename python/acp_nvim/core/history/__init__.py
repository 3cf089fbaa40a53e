"""Local session history: each session's record (id, title, times, first prompt, transcript)
kept on disk by cwd and agent (``store.py``), bounded by count and size, written atomically
with mode 0600 and redacted like the log; ``record.py`` is the record and its JSON form.
"""
