"""A git worktree per session (``:Ai new {agent} --worktree``): made, listed, diffed, merged through a
review, and removed; git runs as a subprocess, never through a shell."""
