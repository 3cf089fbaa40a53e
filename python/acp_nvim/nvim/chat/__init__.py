"""The chat: its subcommands and keys, the prompt context, pasted images, and the render queue
that batches what streams into it."""
