"""Permission requests: the policy (ask, auto-edit, trust) and remembered "always" rules that
answer automatically, the review model that turns diff-bearing requests into whole-file
proposals, and the broker that asks the user and answers the agent exactly once.
"""
