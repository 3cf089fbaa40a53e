"""Session lifecycle commands: open/new/send/cancel/close/restart, resume/fork/delete, modes and
models, login."""
