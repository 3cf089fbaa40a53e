"""The :Ai subcommand registry, what is generated from it, and the context a handler gets."""
