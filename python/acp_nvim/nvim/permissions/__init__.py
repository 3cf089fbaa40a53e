"""Permissions in Neovim: :Ai rules and policy, the review spec Lua opens, the not-reviewed flag keys."""
