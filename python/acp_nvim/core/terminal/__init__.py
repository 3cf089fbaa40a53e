"""Terminals the agent runs through the editor (``terminal/*``): registry, output, exit."""
