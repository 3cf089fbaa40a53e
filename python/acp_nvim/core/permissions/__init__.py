"""Permission requests: the policy (ask, auto-edit, trust) and remembered "always" rules that
answer automatically, the review model that turns diff-bearing requests into whole-file
proposals, the broker that asks the user and answers the agent exactly once (``broker.py``,
with ``answers.py``), and what happens after a review (``settle.py``: rejected copies kept,
accepted texts put in place, notes for the agent).
"""
